/* Strict number and boolean parsing (common/parse.h). */
#include "common/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

int parse_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
