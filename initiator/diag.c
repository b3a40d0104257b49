/* Diagnostics for the command line and job files. */
#include "initiator/diag.h"

#include <stdarg.h>
#include <stdio.h>

static void vemit(struct ub_diag *d, bool error, int line, const char *fmt, va_list ap)
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
		fprintf(stderr, "%s:%d: %s: %s\n", d->file ? d->file : "<job>", line,
			error ? "error" : "warning", msg);
	else
		fprintf(stderr, "%s: %s: %s\n", d->file ? d->file : "<job>",
			error ? "error" : "warning", msg);
}

void ub_diag_error(struct ub_diag *d, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vemit(d, true, line, fmt, ap);
	va_end(ap);
}

void ub_diag_warn(struct ub_diag *d, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vemit(d, false, line, fmt, ap);
	va_end(ap);
}
