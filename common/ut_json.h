/* A small JSON writer into a growing memory buffer, for utgtd's admin socket answers.  Keys
 * are NULL inside arrays.  Out of memory is sticky (oom) and checked once at the end. */
#ifndef UTGT_COMMON_UT_JSON_H
#define UTGT_COMMON_UT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UT_JSON_MAXDEPTH 16

struct ut_json {
	char *buf;
	size_t len, cap;
	bool oom;
	int depth;
	bool first[UT_JSON_MAXDEPTH];
};

void ut_json_init(struct ut_json *j);
void ut_json_free(struct ut_json *j);
void ut_json_obj(struct ut_json *j, const char *key);
void ut_json_end_obj(struct ut_json *j);
void ut_json_arr(struct ut_json *j, const char *key);
void ut_json_end_arr(struct ut_json *j);
void ut_json_str(struct ut_json *j, const char *key, const char *v); /* NULL: null */
void ut_json_u64(struct ut_json *j, const char *key, uint64_t v);
void ut_json_bool(struct ut_json *j, const char *key, bool v);
/* Append s as a JSON string (quotes, escapes; bytes >= 0x80 pass through, control bytes as
 * \u00XX) with no key or comma handling. */
void ut_json_quote(struct ut_json *j, const char *s);
/* Append s verbatim (the answer's closing newline). */
void ut_json_raw(struct ut_json *j, const char *s);

#endif
