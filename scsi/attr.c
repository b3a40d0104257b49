/* Diagnostics sink and strict number parsing shared by every configuration reader. */
#include "scsi/attr.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
		fprintf(stderr, "%s:%d: %s: %s\n", d->file ? d->file : "<config>", line,
			error ? "error" : "warning", msg);
	else
		fprintf(stderr, "%s: %s: %s\n", d->file ? d->file : "<config>",
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

bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

bool parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"1", "yes", "true", "on", "y"};
	static const char *const no[] = {"0", "no", "false", "off", "n"};
	if (!s)
		return false;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return true;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return true;
		}
	}
	return false;
}

bool parse_size(const char *s, uint64_t *out)
{
	char num[32];
	size_t n;
	uint64_t v, mul = 1;

	if (!s || !*s)
		return false;
	n = strlen(s);
	if (n >= sizeof(num))
		return false;
	memcpy(num, s, n + 1);
	switch (toupper((unsigned char)num[n - 1])) {
	case 'K': mul = 1ull << 10; break;
	case 'M': mul = 1ull << 20; break;
	case 'G': mul = 1ull << 30; break;
	case 'T': mul = 1ull << 40; break;
	default: break;
	}
	if (mul != 1)
		num[--n] = '\0';
	if (!parse_u64(num, &v))
		return false;
	if (v > UINT64_MAX / mul)
		return false;
	*out = v * mul;
	return true;
}
