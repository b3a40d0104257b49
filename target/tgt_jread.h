/* A small JSON reader (RFC 8259, into a tree) for utgtadm, which prints the daemon's answers
 * as tables.  Numbers are kept as text and read with tgt_jv_u64. */
#ifndef UTGT_TGT_JREAD_H
#define UTGT_TGT_JREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tgt_jv_type { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ };

struct tgt_jv {
	enum tgt_jv_type type;
	bool b;
	char *s;	     /* JV_STR (unescaped), JV_NUM (as written) */
	struct tgt_jv *kids; /* JV_ARR elements, JV_OBJ member values */
	char **keys;	     /* JV_OBJ member names */
	unsigned n;
};

/* Parse text (the whole of it, surrounding blanks allowed).  NULL on a syntax error, with
 * the byte offset in *erroff when not NULL. */
struct tgt_jv *tgt_jread(const char *text, size_t *erroff);
void tgt_jv_free(struct tgt_jv *v);
/* Member key of an object, or NULL (also when v is NULL or not an object). */
const struct tgt_jv *tgt_jv_get(const struct tgt_jv *v, const char *key);
/* Convenience readers with a default when the value is missing or of another type. */
const char *tgt_jv_str(const struct tgt_jv *v, const char *key, const char *dflt);
uint64_t tgt_jv_u64(const struct tgt_jv *v, const char *key, uint64_t dflt);
bool tgt_jv_bool(const struct tgt_jv *v, const char *key, bool dflt);

#endif
