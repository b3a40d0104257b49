/* fio job-file syntax: [global] and [job] sections of key=value lines; ';' and '#' start a
 * comment (at the start of a line, or after a blank within one); ${VAR} is replaced by the
 * environment's value; "include FILE" reads another file (relative to this one); "\:" is a
 * colon in a value (fio's escape in file names).  Every rejected line is reported as
 * "file:line: reason" and parsing goes on, so one run shows every problem of a file. */
#include "common/diag.h"
#include "initiator/job.h"

#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INCLUDE_DEPTH 8
#define MAX_WARNED	  64

struct pstate {
	const char *name;
	struct ub_job *global;
	struct ub_job *cur;
	bool cur_is_global;
	struct ub_joblist *out;
	struct diag *d;
	int depth;
	/* an ignored option is worth one warning per file, not one per section */
	char warned[MAX_WARNED][48];
	unsigned nwarned;
};

static bool load(const char *path, struct pstate *ps, int lineno);

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Cut a trailing comment: ';' or '#' at the start or after a blank. */
static void strip_comment(char *s)
{
	for (char *p = s; *p; p++)
		if ((*p == ';' || *p == '#') && (p == s || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			return;
		}
}

/* ${VAR} from the environment into out; false (with the name) when one is not set. */
static bool expand_env(const char *in, char *out, size_t outlen, char *missing, size_t mlen)
{
	size_t w = 0;

	while (*in) {
		const char *end;
		if (in[0] == '$' && in[1] == '{' && (end = strchr(in + 2, '}'))) {
			char var[128];
			size_t n = (size_t)(end - in - 2);
			const char *val;
			if (n >= sizeof(var))
				n = sizeof(var) - 1;
			memcpy(var, in + 2, n);
			var[n] = '\0';
			val = getenv(var);
			if (!val) {
				snprintf(missing, mlen, "%s", var);
				return false;
			}
			while (*val && w + 1 < outlen)
				out[w++] = *val++;
			in = end + 1;
			continue;
		}
		if (w + 1 < outlen)
			out[w++] = *in;
		in++;
	}
	out[w] = '\0';
	return true;
}

/* "\:" -> ":" (fio separates several files with ':'; the escape keeps a colon). */
static void unescape_colons(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] == ':')
			r++;
		*w++ = *r;
	}
	*w = '\0';
}

static bool url_like(const char *v)
{
	return !strncmp(v, "iscsi:", 6) || !strncmp(v, "iser:", 5) || !strncmp(v, "srp:", 4);
}

/* A file name with an unescaped ':' names several files, which one job cannot take. */
static bool several_files(const char *v)
{
	if (url_like(v))
		return false;
	for (const char *p = v; *p; p++) {
		if (p[0] == '\\' && p[1] == ':') {
			p++;
			continue;
		}
		if (*p == ':')
			return true;
	}
	return false;
}

static void warn_once(struct pstate *ps, int lineno, const char *key, const char *msg)
{
	for (unsigned i = 0; i < ps->nwarned; i++)
		if (!strcmp(ps->warned[i], key))
			return;
	if (ps->nwarned < MAX_WARNED)
		snprintf(ps->warned[ps->nwarned++], sizeof(ps->warned[0]), "%s", key);
	diag_warn(ps->d, lineno, "%s", msg);
}

static bool section(struct pstate *ps, char *s, int lineno)
{
	char *rb = strchr(s, ']'), *key;

	if (!rb) {
		diag_error(ps->d, lineno, "unterminated section header '%s'", s);
		return false;
	}
	if (*trim(rb + 1)) {
		diag_error(ps->d, lineno, "text after section header '%s'", s);
		return false;
	}
	*rb = '\0';
	key = trim(s + 1);
	if (!*key) {
		diag_error(ps->d, lineno, "empty section name");
		return false;
	}
	if (!strcmp(key, "global")) {
		ps->cur = ps->global;
		ps->cur_is_global = true;
		return true;
	}
	if (strlen(key) >= sizeof(ps->global->name)) {
		diag_error(ps->d, lineno, "section name too long");
		return false;
	}
	ps->cur = ub_joblist_add(ps->out, ps->global);
	ps->cur_is_global = false;
	if (!ps->cur) {
		diag_error(ps->d, lineno, "out of memory");
		return false;
	}
	strcpy(ps->cur->name, key);
	snprintf(ps->cur->origin, sizeof(ps->cur->origin), "%s", ps->name);
	ps->cur->line = lineno;
	return true;
}

static bool include(struct pstate *ps, const char *arg, int lineno)
{
	char path[1024], dir[1024];

	if (!*arg) {
		diag_error(ps->d, lineno, "include needs a file name");
		return false;
	}
	if (ps->depth >= MAX_INCLUDE_DEPTH) {
		diag_error(ps->d, lineno, "include nested more than %d deep", MAX_INCLUDE_DEPTH);
		return false;
	}
	snprintf(dir, sizeof(dir), "%s", ps->name);
	if (arg[0] == '/' || !strchr(ps->name, '/'))
		snprintf(path, sizeof(path), "%s", arg);
	else
		snprintf(path, sizeof(path), "%s/%s", dirname(dir), arg);
	return load(path, ps, lineno);
}

static bool option(struct pstate *ps, char *s, int lineno)
{
	char err[400], val_buf[2048], missing[128];
	char *eq = strchr(s, '='), *key, *val;
	const char *cur_file = ps->d->file;

	if (eq) {
		*eq = '\0';
		key = trim(s);
		val = trim(eq + 1);
	} else {
		key = s;
		val = NULL;
	}
	if (!*key) {
		diag_error(ps->d, lineno, "missing option name before '='");
		return false;
	}
	for (char *p = key; *p; p++)
		if (isspace((unsigned char)*p)) {
			diag_error(ps->d, lineno, "malformed line '%s' (expected key=value)", key);
			return false;
		}
	if (val) {
		if (!expand_env(val, val_buf, sizeof(val_buf), missing, sizeof(missing))) {
			diag_error(ps->d, lineno, "%s: environment variable %s is not set", key,
				      missing);
			return false;
		}
		if (!strcmp(key, "filename") && several_files(val_buf)) {
			diag_error(ps->d, lineno,
				      "filename: '%s' names several files (':' separates them; "
				      "write '\\:' for a colon); a job takes one LU",
				      val_buf);
			return false;
		}
		unescape_colons(val_buf);
		val = val_buf;
	}
	switch (ub_job_set(ps->cur, key, val, err, sizeof(err))) {
	case UB_OPT_OK:
		return true;
	case UB_OPT_IGNORED:
		warn_once(ps, lineno, key, err);
		return true;
	default:
		ps->d->file = cur_file;
		diag_error(ps->d, lineno, "%s", err);
		return false;
	}
}

static bool parse_line(struct pstate *ps, char *s, int lineno)
{
	if (*s == '[')
		return section(ps, s, lineno);
	if (!strncmp(s, "include", 7) && isspace((unsigned char)s[7]))
		return include(ps, trim(s + 7), lineno);
	if (!ps->cur) {
		diag_error(ps->d, lineno, "option '%s' outside of any [section]", s);
		return false;
	}
	return option(ps, s, lineno);
}

static bool parse_text(const char *text, struct pstate *ps)
{
	const char *p = text;
	int lineno = 0;
	bool ok = true;
	const char *saved_file = ps->d->file;

	ps->d->file = ps->name;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = malloc(n + 1), *s;

		if (!line) {
			diag_error(ps->d, lineno, "out of memory");
			ok = false;
			break;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		lineno++;
		strip_comment(line);
		s = trim(line);
		if (*s && !parse_line(ps, s, lineno))
			ok = false;
		ps->d->file = ps->name;
		free(line);
		p = nl ? nl + 1 : p + n;
	}
	ps->d->file = saved_file;
	return ok;
}

bool ub_jobfile_parse(const char *text, const char *name, struct ub_job *global,
		      struct ub_joblist *out, struct diag *d)
{
	struct pstate ps = {.name = name, .global = global, .out = out, .d = d};

	return parse_text(text, &ps);
}

static char *read_all(const char *path, struct diag *d, int lineno, const char *from)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	char buf[4096];

	if (!f) {
		const char *saved = d->file;
		d->file = from ? from : path;
		if (from)
			diag_error(d, lineno, "cannot open included file %s: %s", path,
				      strerror(errno));
		else
			diag_error(d, 0, "cannot open job file: %s", strerror(errno));
		d->file = saved;
		return NULL;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (len + n + 1 > cap) {
			char *nt;
			cap = (len + n + 1) * 2;
			nt = realloc(text, cap);
			if (!nt) {
				free(text);
				fclose(f);
				return NULL;
			}
			text = nt;
		}
		memcpy(text + len, buf, n);
		len += n;
	}
	fclose(f);
	if (!text)
		return calloc(1, 1);
	text[len] = '\0';
	if (memchr(text, '\0', len)) {
		const char *saved = d->file;
		d->file = path;
		diag_error(d, 0, "binary data in job file");
		d->file = saved;
		free(text);
		return NULL;
	}
	return text;
}

static bool load(const char *path, struct pstate *ps, int lineno)
{
	char *text = read_all(path, ps->d, lineno, lineno ? ps->name : NULL);
	struct pstate sub;
	bool ok;

	if (!text)
		return false;
	if (!ps->depth && !lineno) {
		ok = parse_text(text, ps);
		free(text);
		return ok;
	}
	/* An included file continues the current section, with its own name in messages. */
	sub = *ps;
	sub.name = path;
	sub.depth = ps->depth + 1;
	ok = parse_text(text, &sub);
	ps->cur = sub.cur;
	ps->cur_is_global = sub.cur_is_global;
	memcpy(ps->warned, sub.warned, sizeof(ps->warned));
	ps->nwarned = sub.nwarned;
	free(text);
	return ok;
}

bool ub_jobfile_load(const char *path, struct ub_job *global, struct ub_joblist *out,
		     struct diag *d)
{
	struct pstate ps = {.name = path, .global = global, .out = out, .d = d};

	return load(path, &ps, 0);
}
