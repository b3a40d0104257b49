/* The admin socket's request line: a few words, case-sensitive, separated by blanks. */
#include <stdio.h>
#include <string.h>

#include "target/admin.h"

#define MAX_WORDS 4

static const struct {
	const char *w1, *w2;
	enum admin_cmd cmd;
} cmds[] = {
    {"show", "targets", ADMIN_SHOW_TARGETS},
    {"show", "sessions", ADMIN_SHOW_SESSIONS},
    {"show", "devices", ADMIN_SHOW_DEVICES},
    {"version", NULL, ADMIN_VERSION},
    {"help", NULL, ADMIN_HELP},
};

int admin_req_parse(const char *line, enum admin_cmd *cmd, char *err, size_t errlen)
{
	char buf[ADMIN_LINE_MAX], *w[MAX_WORDS + 1], *save = NULL;
	unsigned n = 0;
	size_t len = strlen(line);

	if (len >= sizeof(buf)) {
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
	memcpy(buf, line, len + 1);
	for (char *t = strtok_r(buf, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
		if (n == MAX_WORDS) {
			snprintf(err, errlen, "too many words in request");
			return -1;
		}
		w[n++] = t;
	}
	if (n == 0) {
		snprintf(err, errlen, "empty request (try: help)");
		return -1;
	}
	if (!strcmp(w[0], "show") && n == 1) {
		snprintf(err, errlen, "show what? targets, sessions or devices");
		return -1;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		unsigned want = cmds[i].w2 ? 2 : 1;
		if (strcmp(w[0], cmds[i].w1) || (cmds[i].w2 && strcmp(w[1], cmds[i].w2)))
			continue;
		if (n > want) {
			snprintf(err, errlen, "unexpected '%.64s' after '%s%s%s'", w[want], w[0],
				 cmds[i].w2 ? " " : "", cmds[i].w2 ? cmds[i].w2 : "");
			return -1;
		}
		*cmd = cmds[i].cmd;
		return 0;
	}
	if (!strcmp(w[0], "show"))
		snprintf(err, errlen, "unknown object 'show %.64s' (targets, sessions, devices)",
			 w[1]);
	else
		snprintf(err, errlen, "unknown command '%.64s' (try: help)", w[0]);
	return -1;
}
