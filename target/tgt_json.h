/* A small JSON writer into a growing memory buffer, for utgtd's admin socket answers.  Keys
 * are NULL inside arrays.  Out of memory is sticky (oom) and checked once at the end. */
#ifndef UTGT_TGT_JSON_H
#define UTGT_TGT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TGT_JSON_MAXDEPTH 16

struct tgt_json {
	char *buf;
	size_t len, cap;
	bool oom;
	int depth;
	bool first[TGT_JSON_MAXDEPTH];
};

void tgt_json_init(struct tgt_json *j);
void tgt_json_free(struct tgt_json *j);
void tgt_json_obj(struct tgt_json *j, const char *key);
void tgt_json_end_obj(struct tgt_json *j);
void tgt_json_arr(struct tgt_json *j, const char *key);
void tgt_json_end_arr(struct tgt_json *j);
void tgt_json_str(struct tgt_json *j, const char *key, const char *v); /* NULL: null */
void tgt_json_u64(struct tgt_json *j, const char *key, uint64_t v);
void tgt_json_bool(struct tgt_json *j, const char *key, bool v);
/* Append s as a JSON string (quotes, escapes; bytes >= 0x80 pass through, control bytes as
 * \u00XX) with no key or comma handling. */
void tgt_json_quote(struct tgt_json *j, const char *s);
/* Append s verbatim (the answer's closing newline). */
void tgt_json_raw(struct tgt_json *j, const char *s);

#endif
