/* JSON writer for the admin socket (common/ut_json.h). */
#include "common/ut_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ut_json_init(struct ut_json *j)
{
	memset(j, 0, sizeof(*j));
	j->first[0] = true;
}

void ut_json_free(struct ut_json *j)
{
	free(j->buf);
	j->buf = NULL;
	j->len = j->cap = 0;
}

static void put(struct ut_json *j, const char *s, size_t n)
{
	if (j->oom)
		return;
	if (j->len + n + 1 > j->cap) {
		size_t cap = j->cap ? j->cap : 1024;
		while (cap < j->len + n + 1)
			cap *= 2;
		char *p = realloc(j->buf, cap);
		if (!p) {
			j->oom = true;
			return;
		}
		j->buf = p;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void puts_(struct ut_json *j, const char *s)
{
	put(j, s, strlen(s));
}

void ut_json_quote(struct ut_json *j, const char *s)
{
	put(j, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[8];
		if (*p == '"' || *p == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*p;
			put(j, esc, 2);
		} else if (*p == '\n') {
			puts_(j, "\\n");
		} else if (*p < 0x20 || *p == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", *p);
			puts_(j, esc);
		} else {
			put(j, (const char *)p, 1);
		}
	}
	put(j, "\"", 1);
}

/* The comma before a member and its key. */
static void member(struct ut_json *j, const char *key)
{
	if (!j->first[j->depth])
		put(j, ",", 1);
	j->first[j->depth] = false;
	if (key) {
		ut_json_quote(j, key);
		put(j, ":", 1);
	}
}

static void open_(struct ut_json *j, const char *key, const char *c)
{
	member(j, key);
	puts_(j, c);
	if (j->depth + 1 < UT_JSON_MAXDEPTH)
		j->depth++;
	else
		j->oom = true; /* nesting this deep is a bug of ours: fail the answer */
	j->first[j->depth] = true;
}

static void close_(struct ut_json *j, const char *c)
{
	puts_(j, c);
	if (j->depth > 0)
		j->depth--;
}

void ut_json_obj(struct ut_json *j, const char *key)
{
	open_(j, key, "{");
}

void ut_json_end_obj(struct ut_json *j)
{
	close_(j, "}");
}

void ut_json_arr(struct ut_json *j, const char *key)
{
	open_(j, key, "[");
}

void ut_json_end_arr(struct ut_json *j)
{
	close_(j, "]");
}

void ut_json_str(struct ut_json *j, const char *key, const char *v)
{
	member(j, key);
	if (v)
		ut_json_quote(j, v);
	else
		puts_(j, "null");
}

void ut_json_u64(struct ut_json *j, const char *key, uint64_t v)
{
	char b[24];

	member(j, key);
	snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
	puts_(j, b);
}

void ut_json_bool(struct ut_json *j, const char *key, bool v)
{
	member(j, key);
	puts_(j, v ? "true" : "false");
}

void ut_json_raw(struct ut_json *j, const char *s)
{
	puts_(j, s);
}
