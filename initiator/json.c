/* Streaming JSON writer. */
#include "initiator/json.h"

#include <math.h>
#include <string.h>

void ub_json_init(struct ub_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

void ub_json_escape(const char *s, char *out, size_t outlen)
{
	size_t w = 0;

	if (outlen < 3)
		return;
	out[w++] = '"';
	for (; *s && w + 8 < outlen; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out[w++] = '\\';
			out[w++] = (char)c;
		} else if (c == '\n') {
			out[w++] = '\\';
			out[w++] = 'n';
		} else if (c == '\t') {
			out[w++] = '\\';
			out[w++] = 't';
		} else if (c < 0x20) {
			w += (size_t)snprintf(out + w, outlen - w, "\\u%04x", c);
		} else {
			out[w++] = (char)c;
		}
	}
	out[w++] = '"';
	out[w] = '\0';
}

static void indent(struct ub_json *j)
{
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

static void key(struct ub_json *j, const char *k)
{
	char esc[512];

	if (!j->first[j->depth])
		fputc(',', j->f);
	if (j->depth)
		fputc('\n', j->f);
	j->first[j->depth] = false;
	indent(j);
	if (k) {
		ub_json_escape(k, esc, sizeof(esc));
		fprintf(j->f, "%s : ", esc);
	}
}

static void open_(struct ub_json *j, const char *k, char c)
{
	key(j, k);
	fputc(c, j->f);
	if (j->depth + 1 < UB_JSON_MAXDEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_(struct ub_json *j, char c)
{
	bool empty = j->first[j->depth];

	if (j->depth)
		j->depth--;
	if (!empty) {
		fputc('\n', j->f);
		indent(j);
	}
	fputc(c, j->f);
	if (!j->depth)
		fputc('\n', j->f);
}

void ub_json_obj(struct ub_json *j, const char *k)
{
	open_(j, k, '{');
}

void ub_json_arr(struct ub_json *j, const char *k)
{
	open_(j, k, '[');
}

void ub_json_end_obj(struct ub_json *j)
{
	close_(j, '}');
}

void ub_json_end_arr(struct ub_json *j)
{
	close_(j, ']');
}

void ub_json_str(struct ub_json *j, const char *k, const char *v)
{
	char esc[2048];

	key(j, k);
	ub_json_escape(v ? v : "", esc, sizeof(esc));
	fputs(esc, j->f);
}

void ub_json_u64(struct ub_json *j, const char *k, uint64_t v)
{
	key(j, k);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void ub_json_i64(struct ub_json *j, const char *k, int64_t v)
{
	key(j, k);
	fprintf(j->f, "%lld", (long long)v);
}

void ub_json_dbl(struct ub_json *j, const char *k, double v)
{
	key(j, k);
	if (isfinite(v))
		fprintf(j->f, "%.6f", v);
	else
		fputs("0", j->f);
}

void ub_json_bool(struct ub_json *j, const char *k, bool v)
{
	key(j, k);
	fputs(v ? "true" : "false", j->f);
}
