/* A minimal streaming JSON writer (objects, arrays, strings, numbers) for --output-format=json. */
#ifndef UB_JSON_H
#define UB_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define UB_JSON_MAXDEPTH 32

struct ub_json {
	FILE *f;
	int depth;
	bool first[UB_JSON_MAXDEPTH];
};

void ub_json_init(struct ub_json *j, FILE *f);
/* key is NULL inside arrays and for the top-level value. */
void ub_json_obj(struct ub_json *j, const char *key);
void ub_json_arr(struct ub_json *j, const char *key);
void ub_json_end_obj(struct ub_json *j);
void ub_json_end_arr(struct ub_json *j);
void ub_json_str(struct ub_json *j, const char *key, const char *v);
void ub_json_u64(struct ub_json *j, const char *key, uint64_t v);
void ub_json_i64(struct ub_json *j, const char *key, int64_t v);
void ub_json_dbl(struct ub_json *j, const char *key, double v);
void ub_json_bool(struct ub_json *j, const char *key, bool v);
/* The JSON string form of s (quotes and escapes), into out. */
void ub_json_escape(const char *s, char *out, size_t outlen);

#endif
