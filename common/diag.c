/* Diagnostics: "FILE:LINE: error: ..." lines from whatever reads a file (scst.conf, a job
 * file), to stderr or to a callback. */
#include "common/diag.h"

#include <stdarg.h>
#include <stdio.h>

static void diag_vemit(struct diag *d, bool error, int line, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (error)
		d->errors++;
	else
		d->warnings++;
	if (d->emit) {
		d->emit(d, error, line, msg);
		return;
	}
	if (line > 0)
		fprintf(stderr, "%s:%d: %s: %s\n", d->file ? d->file : "<input>", line,
			error ? "error" : "warning", msg);
	else
		fprintf(stderr, "%s: %s: %s\n", d->file ? d->file : "<input>",
			error ? "error" : "warning", msg);
}

void diag_error(struct diag *d, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vemit(d, true, line, fmt, ap);
	va_end(ap);
}

void diag_warn(struct diag *d, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vemit(d, false, line, fmt, ap);
	va_end(ap);
}
