/* The admin socket's request line: words separated by blanks, case-sensitive.  A word may be
 * quoted ("...") and a backslash makes the next character literal, as in scst.conf, so
 * attribute values with blanks (IncomingUser "joe secret") travel intact.
 *
 *   show targets|sessions|devices | version | help
 *   add|remove|set|enable|disable OBJECT NAME [KEY=VALUE]...
 *   resize device NAME size=SIZE | resync device NAME
 *   close session NEXUS_ID | reload [FILE] | write-config [FILE] */
#include <stdio.h>
#include <string.h>

#include "target/admin.h"

#define MAX_WORDS (3 + ADMIN_MAX_OPTS)

static const struct {
	const char *w1, *w2;
	enum admin_cmd cmd;
} shows[] = {
    {"show", "targets", ADMIN_SHOW_TARGETS},
    {"show", "sessions", ADMIN_SHOW_SESSIONS},
    {"show", "devices", ADMIN_SHOW_DEVICES},
    {"version", NULL, ADMIN_VERSION},
    {"help", NULL, ADMIN_HELP},
};

static const struct {
	const char *name;
	enum tgt_edit_verb verb;
} verbs[] = {
    {"add", EDIT_ADD},	     {"remove", EDIT_REMOVE},	{"set", EDIT_SET},
    {"enable", EDIT_ENABLE}, {"disable", EDIT_DISABLE},
};

static const struct {
	const char *name;
	enum tgt_edit_obj obj;
} objects[] = {
    {"device", OBJ_DEVICE}, {"target", OBJ_TARGET}, {"driver", OBJ_DRIVER},
    {"group", OBJ_GROUP},   {"lun", OBJ_LUN},	    {"initiator", OBJ_INITIATOR},
    {"tgroup", OBJ_TGROUP},
};

/* Split buf into words in place (quotes and backslashes resolved).  -1 with err. */
static int split(char *buf, char **w, unsigned *n, char *err, size_t errlen)
{
	char *in = buf, *out = buf;

	*n = 0;
	for (;;) {
		bool quoted = false;

		while (*in == ' ' || *in == '\t' || *in == '\r')
			in++;
		if (!*in)
			return 0;
		if (*n == MAX_WORDS) {
			snprintf(err, errlen, "too many words in request (at most %d)", MAX_WORDS);
			return -1;
		}
		w[(*n)++] = out;
		while (*in && (quoted || (*in != ' ' && *in != '\t' && *in != '\r'))) {
			if (*in == '"') {
				quoted = !quoted;
				in++;
				continue;
			}
			if (*in == '\\') {
				if (!in[1]) {
					snprintf(err, errlen,
						 "backslash at the end of the request");
					return -1;
				}
				in++;
			}
			*out++ = *in++;
		}
		if (quoted) {
			snprintf(err, errlen, "unterminated quote in request");
			return -1;
		}
		if (*in)
			in++;
		*out++ = '\0';
	}
}

static int parse_show(char **w, unsigned n, struct admin_req *req, char *err, size_t errlen)
{
	if (!strcmp(w[0], "show") && n == 1) {
		snprintf(err, errlen, "show what? targets, sessions or devices");
		return -1;
	}
	for (size_t i = 0; i < sizeof(shows) / sizeof(shows[0]); i++) {
		unsigned want = shows[i].w2 ? 2 : 1;
		if (strcmp(w[0], shows[i].w1) || (shows[i].w2 && strcmp(w[1], shows[i].w2)))
			continue;
		if (n > want) {
			snprintf(err, errlen, "unexpected '%.64s' after '%s%s%s'", w[want], w[0],
				 shows[i].w2 ? " " : "", shows[i].w2 ? shows[i].w2 : "");
			return -1;
		}
		req->cmd = shows[i].cmd;
		return 0;
	}
	snprintf(err, errlen, "unknown object 'show %.64s' (targets, sessions, devices)", w[1]);
	return -1;
}

/* KEY=VALUE words after the object's name. */
static int parse_opts(char **w, unsigned n, struct admin_req *req, char *err, size_t errlen)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		char *eq = strchr(w[i], '=');

		if (!eq || eq == w[i]) {
			snprintf(err, errlen, "expected KEY=VALUE, got '%.64s'", w[i]);
			return -1;
		}
		for (const char *c = w[i]; c < eq; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			      (*c >= '0' && *c <= '9') || *c == '_')) {
				snprintf(err, errlen, "'%.*s' is not an attribute name",
					 (int)(eq - w[i] > 64 ? 64 : eq - w[i]), w[i]);
				return -1;
			}
		*eq = '\0';
		req->opts[k].key = w[i];
		req->opts[k++].value = eq + 1;
	}
	req->edit.opts = req->opts;
	req->edit.nopts = k;
	return 0;
}

static int parse_edit(char **w, unsigned n, enum tgt_edit_verb verb, struct admin_req *req,
		      char *err, size_t errlen)
{
	size_t i;

	if (n < 2) {
		snprintf(err, errlen,
			 "%s what? device, target, driver, group, lun, initiator or "
			 "tgroup",
			 w[0]);
		return -1;
	}
	for (i = 0; i < sizeof(objects) / sizeof(objects[0]); i++)
		if (!strcmp(w[1], objects[i].name))
			break;
	if (i == sizeof(objects) / sizeof(objects[0])) {
		snprintf(
		    err, errlen,
		    "unknown object '%s %.64s' (device, target, driver, group, lun, initiator, "
		    "tgroup)",
		    w[0], w[1]);
		return -1;
	}
	if (n < 3) {
		snprintf(err, errlen, "%s %s: which one?", w[0], w[1]);
		return -1;
	}
	req->cmd = ADMIN_EDIT;
	req->edit.verb = verb;
	req->edit.obj = objects[i].obj;
	req->edit.name = w[2];
	req->arg = w[2];
	return parse_opts(w + 3, n - 3, req, err, errlen);
}

/* resize device NAME size=S is `set device NAME size=S`, nothing else. */
static int parse_resize(char **w, unsigned n, struct admin_req *req, char *err, size_t errlen)
{
	if (n != 4 || strcmp(w[1], "device") || strncmp(w[3], "size=", 5) || !w[3][5]) {
		snprintf(err, errlen, "usage: resize device NAME size=BYTES[K|M|G|T]");
		return -1;
	}
	return parse_edit(w, n, EDIT_SET, req, err, errlen);
}

/* COMMAND [ARG] */
static int parse_optional_arg(char **w, unsigned n, const char *usage, struct admin_req *req,
			      char *err, size_t errlen)
{
	if (n > 2) {
		snprintf(err, errlen, "usage: %s", usage);
		return -1;
	}
	req->arg = n == 2 ? w[1] : NULL;
	return 0;
}

/* COMMAND OBJECT ARG */
static int parse_named(char **w, unsigned n, const char *obj, const char *usage,
		       struct admin_req *req, char *err, size_t errlen)
{
	if (n != 3 || strcmp(w[1], obj)) {
		snprintf(err, errlen, "usage: %s", usage);
		return -1;
	}
	req->arg = w[2];
	return 0;
}

int admin_req_parse(const char *line, struct admin_req *req, char *err, size_t errlen)
{
	char *w[MAX_WORDS];
	unsigned n = 0;
	size_t len = strlen(line);

	memset(req, 0, sizeof(*req) - sizeof(req->buf));
	if (len >= sizeof(req->buf)) {
		snprintf(err, errlen, "request longer than %d bytes", ADMIN_LINE_MAX - 1);
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
			snprintf(err, errlen, "control byte 0x%02x in request", c);
			return -1;
		}
	}
	memcpy(req->buf, line, len + 1);
	if (split(req->buf, w, &n, err, errlen) != 0)
		return -1;
	if (n == 0) {
		snprintf(err, errlen, "empty request (try: help)");
		return -1;
	}
	if (!strcmp(w[0], "show") || !strcmp(w[0], "version") || !strcmp(w[0], "help"))
		return parse_show(w, n, req, err, errlen);
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(w[0], verbs[i].name))
			return parse_edit(w, n, verbs[i].verb, req, err, errlen);
	if (!strcmp(w[0], "resize"))
		return parse_resize(w, n, req, err, errlen);
	if (!strcmp(w[0], "resync")) {
		req->cmd = ADMIN_RESYNC;
		return parse_named(w, n, "device", "resync device NAME", req, err, errlen);
	}
	if (!strcmp(w[0], "close")) {
		req->cmd = ADMIN_CLOSE_SESSION;
		return parse_named(w, n, "session", "close session NEXUS_ID (see show sessions)",
				   req, err, errlen);
	}
	if (!strcmp(w[0], "reload")) {
		req->cmd = ADMIN_RELOAD;
		return parse_optional_arg(w, n, "reload [FILE]", req, err, errlen);
	}
	if (!strcmp(w[0], "write-config")) {
		req->cmd = ADMIN_WRITE_CONFIG;
		return parse_optional_arg(w, n, "write-config [FILE]", req, err, errlen);
	}
	snprintf(err, errlen, "unknown command '%.64s' (try: help)", w[0]);
	return -1;
}
