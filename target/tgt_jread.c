/* JSON reader for utgtadm (target/tgt_jread.h).  Recursive descent with a depth limit. */
#include "target/tgt_jread.h"
#include "common/parse.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32

struct rd {
	const char *p, *start;
	bool fail;
};

static void ws(struct rd *r)
{
	while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')
		r->p++;
}

/* A string at r->p (the opening quote); returns the unescaped copy. */
static char *string(struct rd *r)
{
	const char *q = r->p + 1;
	size_t cap = 16, n = 0;
	char *out = malloc(cap);

	if (!out || *r->p != '"')
		goto bad;
	for (;;) {
		unsigned char c = (unsigned char)*q++;
		if (n + 4 >= cap) {
			char *o = realloc(out, cap *= 2);
			if (!o)
				goto bad;
			out = o;
		}
		if (c == '"')
			break;
		if (c < 0x20)
			goto bad;
		if (c != '\\') {
			out[n++] = (char)c;
			continue;
		}
		c = (unsigned char)*q++;
		switch (c) {
		case '"':
		case '\\':
		case '/':
			out[n++] = (char)c;
			break;
		case 'b':
			out[n++] = '\b';
			break;
		case 'f':
			out[n++] = '\f';
			break;
		case 'n':
			out[n++] = '\n';
			break;
		case 'r':
			out[n++] = '\r';
			break;
		case 't':
			out[n++] = '\t';
			break;
		case 'u': {
			unsigned u = 0;
			for (int i = 0; i < 4; i++) {
				int h = parse_hex_digit((unsigned char)q[i]);
				if (h < 0)
					goto bad;
				u = u * 16 + (unsigned)h;
			}
			q += 4;
			/* UTF-8 of the BMP code point; surrogate halves are kept as they are */
			if (u < 0x80) {
				out[n++] = (char)u;
			} else if (u < 0x800) {
				out[n++] = (char)(0xc0 | (u >> 6));
				out[n++] = (char)(0x80 | (u & 0x3f));
			} else {
				out[n++] = (char)(0xe0 | (u >> 12));
				out[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
				out[n++] = (char)(0x80 | (u & 0x3f));
			}
			break;
		}
		default:
			goto bad;
		}
	}
	out[n] = '\0';
	r->p = q;
	return out;
bad:
	free(out);
	r->fail = true;
	return NULL;
}

static bool value(struct rd *r, struct tgt_jv *v, int depth);

static bool push(struct tgt_jv *v, unsigned *cap)
{
	if (v->n < *cap)
		return true;
	unsigned nc = *cap ? *cap * 2 : 4;
	struct tgt_jv *k = realloc(v->kids, nc * sizeof(*k));
	if (!k)
		return false;
	v->kids = k;
	if (v->type == JV_OBJ) {
		char **ks = realloc(v->keys, nc * sizeof(*ks));
		if (!ks)
			return false;
		v->keys = ks;
	}
	*cap = nc;
	return true;
}

static bool container(struct rd *r, struct tgt_jv *v, int depth, char close)
{
	unsigned cap = 0;

	r->p++;
	ws(r);
	if (*r->p == close) {
		r->p++;
		return true;
	}
	for (;;) {
		char *key = NULL;
		ws(r);
		if (v->type == JV_OBJ) {
			key = string(r);
			if (!key)
				return false;
			ws(r);
			if (*r->p != ':') {
				free(key);
				return false;
			}
			r->p++;
		}
		if (!push(v, &cap)) {
			free(key);
			return false;
		}
		if (v->type == JV_OBJ)
			v->keys[v->n] = key;
		memset(&v->kids[v->n], 0, sizeof(v->kids[0]));
		v->n++; /* counted before parsing, so a failure frees what was built */
		if (!value(r, &v->kids[v->n - 1], depth + 1))
			return false;
		ws(r);
		if (*r->p == ',') {
			r->p++;
			continue;
		}
		if (*r->p == close) {
			r->p++;
			return true;
		}
		return false;
	}
}

static bool number(struct rd *r, struct tgt_jv *v)
{
	const char *q = r->p;

	if (*q == '-')
		q++;
	if (*q == '0')
		q++;
	else if (*q >= '1' && *q <= '9')
		while (*q >= '0' && *q <= '9')
			q++;
	else
		return false;
	if (*q == '.') {
		if (*++q < '0' || *q > '9')
			return false;
		while (*q >= '0' && *q <= '9')
			q++;
	}
	if (*q == 'e' || *q == 'E') {
		q++;
		if (*q == '+' || *q == '-')
			q++;
		if (*q < '0' || *q > '9')
			return false;
		while (*q >= '0' && *q <= '9')
			q++;
	}
	v->type = JV_NUM;
	v->s = strndup(r->p, (size_t)(q - r->p));
	r->p = q;
	return v->s != NULL;
}

static bool lit(struct rd *r, const char *w)
{
	size_t n = strlen(w);
	if (strncmp(r->p, w, n))
		return false;
	r->p += n;
	return true;
}

static bool value(struct rd *r, struct tgt_jv *v, int depth)
{
	if (depth > MAX_DEPTH)
		return false;
	ws(r);
	switch (*r->p) {
	case '{':
		v->type = JV_OBJ;
		return container(r, v, depth, '}');
	case '[':
		v->type = JV_ARR;
		return container(r, v, depth, ']');
	case '"':
		v->type = JV_STR;
		return (v->s = string(r)) != NULL;
	case 't':
		v->type = JV_BOOL;
		v->b = true;
		return lit(r, "true");
	case 'f':
		v->type = JV_BOOL;
		return lit(r, "false");
	case 'n':
		v->type = JV_NULL;
		return lit(r, "null");
	default:
		return number(r, v);
	}
}

static void jv_clear(struct tgt_jv *v)
{
	for (unsigned i = 0; i < v->n; i++) {
		jv_clear(&v->kids[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->kids);
	free(v->keys);
	free(v->s);
}

void tgt_jv_free(struct tgt_jv *v)
{
	if (!v)
		return;
	jv_clear(v);
	free(v);
}

struct tgt_jv *tgt_jread(const char *text, size_t *erroff)
{
	struct rd r = {.p = text, .start = text};
	struct tgt_jv *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	if (value(&r, v, 0)) {
		ws(&r);
		if (!*r.p)
			return v;
	}
	if (erroff)
		*erroff = (size_t)(r.p - r.start);
	tgt_jv_free(v);
	return NULL;
}

const struct tgt_jv *tgt_jv_get(const struct tgt_jv *v, const char *key)
{
	if (!v || v->type != JV_OBJ)
		return NULL;
	for (unsigned i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return &v->kids[i];
	return NULL;
}

const char *tgt_jv_str(const struct tgt_jv *v, const char *key, const char *dflt)
{
	const struct tgt_jv *m = tgt_jv_get(v, key);
	return m && m->type == JV_STR ? m->s : dflt;
}

uint64_t tgt_jv_u64(const struct tgt_jv *v, const char *key, uint64_t dflt)
{
	const struct tgt_jv *m = tgt_jv_get(v, key);
	if (!m || m->type != JV_NUM || m->s[0] == '-')
		return dflt;
	return strtoull(m->s, NULL, 10);
}

bool tgt_jv_bool(const struct tgt_jv *v, const char *key, bool dflt)
{
	const struct tgt_jv *m = tgt_jv_get(v, key);
	return m && m->type == JV_BOOL ? m->b : dflt;
}
