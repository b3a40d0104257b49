/* fio-compatible parsing and printing of sizes, times and rates. */
#include "initiator/units.h"
#include "common/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The same strict integer as the target's configuration: decimal, 0x hex or 0 octal, no sign,
 * no blanks, no suffix. */
bool ub_parse_uint(const char *s, uint64_t *out)
{
	return parse_u64(s, out);
}

/* Split "123suffix" into a number and a suffix; the number may be hex (0x...). */
static bool split_num(const char *s, uint64_t *num, const char **suffix)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		v = strtoull(s, &end, 16);
	else
		v = strtoull(s, &end, 10);
	if (errno)
		return false;
	*num = v;
	*suffix = end;
	return true;
}

static bool mul_ok(uint64_t v, uint64_t mul, uint64_t *out)
{
	if (mul && v > UINT64_MAX / mul)
		return false;
	*out = v * mul;
	return true;
}

bool ub_parse_size(const char *s, uint64_t *out)
{
	static const char prefixes[] = "kmgtp";
	uint64_t v, mul = 1;
	const char *suf;
	const char *p;

	if (!split_num(s, &v, &suf))
		return false;
	if (*suf) {
		p = strchr(prefixes, tolower((unsigned char)*suf));
		if (p) {
			for (int i = 0; i <= p - prefixes; i++)
				mul <<= 10;
			suf++;
			/* "k", "kb", "kib" all mean 1024 (fio's default kb_base) */
			if (tolower((unsigned char)*suf) == 'i')
				suf++;
			if (tolower((unsigned char)*suf) == 'b')
				suf++;
		} else if (tolower((unsigned char)*suf) == 'b') {
			suf++;
		}
		if (*suf)
			return false;
	}
	return mul_ok(v, mul, out);
}

bool ub_parse_time(const char *s, uint64_t default_unit_ns, uint64_t *out_ns)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {
	    {"ns", 1},
	    {"us", UB_NSEC_PER_USEC},
	    {"usec", UB_NSEC_PER_USEC},
	    {"ms", UB_NSEC_PER_MSEC},
	    {"msec", UB_NSEC_PER_MSEC},
	    {"s", UB_NSEC_PER_SEC},
	    {"sec", UB_NSEC_PER_SEC},
	    {"m", 60 * UB_NSEC_PER_SEC},
	    {"min", 60 * UB_NSEC_PER_SEC},
	    {"h", 3600 * UB_NSEC_PER_SEC},
	    {"d", 86400 * UB_NSEC_PER_SEC},
	};
	uint64_t v;
	const char *suf;

	if (!split_num(s, &v, &suf))
		return false;
	if (!*suf)
		return mul_ok(v, default_unit_ns, out_ns);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcasecmp(suf, units[i].suffix))
			return mul_ok(v, units[i].ns, out_ns);
	return false;
}

/* The target's spelling of a boolean (0/1, yes/no, true/false, on/off, y/n), so a job file and
 * an scst.conf accept the same words. */
bool ub_parse_bool(const char *s, bool *out)
{
	return parse_bool(s, out);
}

static int ndigits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

void ub_num2str(char *buf, size_t len, uint64_t num, int maxlen, bool iec, enum ub_unit unit)
{
	static const char *const si[] = {"", "k", "M", "G", "T", "P", "E"};
	static const char *const iecp[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	static const char *const ustr[] = {
	    [UB_U_NONE] = "", [UB_U_BYTE] = "B", [UB_U_BYTEPERSEC] = "B/s"};
	const uint64_t k = iec ? 1024 : 1000;
	const char *const *pfx = iec ? iecp : si;
	uint64_t rem = 0;
	bool divided = false;
	int idx = 0;

	while (ndigits(num) > maxlen && idx < 6) {
		rem = num % k;
		num /= k;
		divided = true;
		idx++;
	}
	int room = maxlen - ndigits(num) - 1; /* digits left for decimals */

	if (room > 9)
		room = 9;
	if (!divided || room < 1) {
		if (divided && rem >= k / 2)
			num++;
		snprintf(buf, len, "%llu%s%s", (unsigned long long)num, pfx[idx], ustr[unit]);
		return;
	}
	/* Truncate, as fio does, rather than round: 63.76 MiB/s prints as 63.7. */
	uint64_t scale = 1;
	for (int i = 0; i < room; i++)
		scale *= 10;
	uint64_t frac = rem * scale / k;
	snprintf(buf, len, "%llu.%0*llu%s%s", (unsigned long long)num, room,
		 (unsigned long long)frac, pfx[idx], ustr[unit]);
}

void ub_bw2str(char *buf, size_t len, uint64_t bps)
{
	char a[32], b[32];

	ub_num2str(a, sizeof(a), bps, 4, true, UB_U_BYTEPERSEC);
	ub_num2str(b, sizeof(b), bps, 4, false, UB_U_BYTEPERSEC);
	snprintf(buf, len, "%s (%s)", a, b);
}

void ub_eta2str(char *buf, size_t len, uint64_t secs)
{
	uint64_t d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;

	if (d)
		snprintf(buf, len, "%llud:%02lluh:%02llum:%02llus", (unsigned long long)d,
			 (unsigned long long)h, (unsigned long long)m, (unsigned long long)s);
	else if (h)
		snprintf(buf, len, "%lluh:%02llum:%02llus", (unsigned long long)h,
			 (unsigned long long)m, (unsigned long long)s);
	else
		snprintf(buf, len, "%02llum:%02llus", (unsigned long long)m, (unsigned long long)s);
}
