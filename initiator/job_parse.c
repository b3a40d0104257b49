/* fio job-file syntax: [global] and [job] sections of key=value lines; ';' and '#' start
 * comment lines.  Every rejected line is reported as "file:line: reason". */
#include "initiator/job.h"
#include "scsi/attr.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static bool parse_line(char *s, int lineno, const char *name, struct ub_job *global,
		       struct ub_job **cur, struct ub_joblist *out, struct diag *d)
{
	char err[256];
	char *eq, *key, *val;

	if (*s == '[') {
		char *rb = strchr(s, ']');
		if (!rb) {
			diag_error(d, lineno, "unterminated section header '%s'", s);
			return false;
		}
		if (*trim(rb + 1)) {
			diag_error(d, lineno, "text after section header '%s'", s);
			return false;
		}
		*rb = '\0';
		key = trim(s + 1);
		if (!*key) {
			diag_error(d, lineno, "empty section name");
			return false;
		}
		if (!strcmp(key, "global")) {
			*cur = global;
			return true;
		}
		if (strlen(key) >= sizeof(global->name)) {
			diag_error(d, lineno, "section name too long");
			return false;
		}
		*cur = ub_joblist_add(out, global);
		if (!*cur) {
			diag_error(d, lineno, "out of memory");
			return false;
		}
		strcpy((*cur)->name, key);
		snprintf((*cur)->origin, sizeof((*cur)->origin), "%s", name);
		(*cur)->line = lineno;
		return true;
	}
	if (!*cur) {
		diag_error(d, lineno, "option '%s' outside of any [section]", s);
		return false;
	}
	eq = strchr(s, '=');
	if (eq) {
		*eq = '\0';
		key = trim(s);
		val = trim(eq + 1);
	} else {
		key = s;
		val = NULL;
	}
	if (!*key) {
		diag_error(d, lineno, "missing option name before '='");
		return false;
	}
	for (char *p = key; *p; p++)
		if (isspace((unsigned char)*p)) {
			diag_error(d, lineno, "malformed line '%s' (expected key=value)", key);
			return false;
		}
	switch (ub_job_set(*cur, key, val, err, sizeof(err))) {
	case UB_OPT_OK:
		return true;
	case UB_OPT_IGNORED:
		diag_warn(d, lineno, "%s", err);
		return true;
	default:
		diag_error(d, lineno, "%s", err);
		return false;
	}
}

bool ub_jobfile_parse(const char *text, const char *name, struct ub_job *global,
		      struct ub_joblist *out, struct diag *d)
{
	struct ub_job *cur = NULL;
	const char *p = text;
	int lineno = 0;
	bool ok = true;
	const char *saved_file = d->file;

	d->file = name;
	while (ok && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = malloc(n + 1), *s;

		if (!line) {
			diag_error(d, lineno, "out of memory");
			ok = false;
			break;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		lineno++;
		s = trim(line);
		if (*s && *s != ';' && *s != '#')
			ok = parse_line(s, lineno, name, global, &cur, out, d);
		free(line);
		p = nl ? nl + 1 : p + n;
	}
	d->file = saved_file;
	return ok;
}

bool ub_jobfile_load(const char *path, struct ub_job *global, struct ub_joblist *out,
		     struct diag *d)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	char buf[4096];
	bool ok;

	if (!f) {
		const char *saved = d->file;
		d->file = path;
		diag_error(d, 0, "cannot open job file: %s", strerror(errno));
		d->file = saved;
		return false;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			char *nt = realloc(text, cap);
			if (!nt) {
				free(text);
				fclose(f);
				return false;
			}
			text = nt;
		}
		memcpy(text + len, buf, n);
		len += n;
	}
	fclose(f);
	if (!text)
		text = calloc(1, 1);
	else
		text[len] = '\0';
	if (!text)
		return false;
	if (memchr(text, '\0', len)) {
		const char *saved = d->file;
		d->file = path;
		diag_error(d, 0, "binary data in job file");
		d->file = saved;
		free(text);
		return false;
	}
	ok = ub_jobfile_parse(text, path, global, out, d);
	free(text);
	return ok;
}
