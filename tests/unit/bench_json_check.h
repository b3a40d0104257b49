/* A strict JSON syntax checker (RFC 8259 grammar, no extensions) for utgt-bench tests. */
#ifndef BENCH_JSON_CHECK_H
#define BENCH_JSON_CHECK_H

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

static const char *jc_value(const char *p);

static const char *jc_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *jc_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p && *p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)p[i]))
						return NULL;
				p += 4;
			} else if (!strchr("\"\\/bfnrt", *p) || !*p) {
				return NULL;
			}
		}
		p++;
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *jc_number(const char *p)
{
	if (*p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return NULL;
	if (*p == '0')
		p++;
	else
		while (isdigit((unsigned char)*p))
			p++;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return p;
}

static const char *jc_value(const char *p)
{
	p = jc_ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		bool obj = *p == '{';
		p = jc_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				p = jc_string(jc_ws(p));
				if (!p)
					return NULL;
				p = jc_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = jc_value(p);
			if (!p)
				return NULL;
			p = jc_ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '"')
		return jc_string(p);
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (!strncmp(p, "null", 4))
		return p + 4;
	return jc_number(p);
}

static bool json_valid(const char *s)
{
	const char *p = jc_value(s);
	return p && !*jc_ws(p);
}

#endif
