/* Header-only helpers for the config loader's tests: capture diagnostics through struct diag's
 * emit hook, load a config from a string, and check "line N: message" exactly. */
#ifndef UTGT_TEST_CONF_UTIL_H
#define UTGT_TEST_CONF_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/tgt_config.h"

#define CAP_MAX 64

struct captured {
	unsigned n;
	struct {
		bool error;
		int line;
		char msg[512];
	} m[CAP_MAX];
};

static inline void cap_emit(struct diag *d, bool error, int line, const char *msg)
{
	struct captured *c = d->priv;
	if (c->n < CAP_MAX) {
		c->m[c->n].error = error;
		c->m[c->n].line = line;
		snprintf(c->m[c->n].msg, sizeof(c->m[c->n].msg), "%s", msg);
	}
	c->n++;
}

static inline struct diag cap_diag(struct captured *c)
{
	memset(c, 0, sizeof(*c));
	return (struct diag){.file = "t.conf", .emit = cap_emit, .priv = c};
}

/* Everything captured, one "E|W line: msg" per line, for assertion messages. */
static inline const char *cap_dump(const struct captured *c)
{
	static char buf[8192];
	size_t off = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < c->n && i < CAP_MAX && off < sizeof(buf) - 1; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s %d: %s\n",
					c->m[i].error ? "E" : "W", c->m[i].line, c->m[i].msg);
	return buf;
}

/* The first error, or NULL. */
static inline const char *cap_first_error(const struct captured *c, int *line)
{
	for (unsigned i = 0; i < c->n && i < CAP_MAX; i++)
		if (c->m[i].error) {
			if (line)
				*line = c->m[i].line;
			return c->m[i].msg;
		}
	return NULL;
}

static inline bool cap_has(const struct captured *c, bool error, int line, const char *msg)
{
	for (unsigned i = 0; i < c->n && i < CAP_MAX; i++)
		if (c->m[i].error == error && c->m[i].line == line && !strcmp(c->m[i].msg, msg))
			return true;
	return false;
}

static inline unsigned cap_count(const struct captured *c, bool error)
{
	unsigned k = 0;
	for (unsigned i = 0; i < c->n && i < CAP_MAX; i++)
		k += c->m[i].error == error;
	return k;
}

static inline struct tgt_config *load_str(const char *text, struct captured *c, struct diag *d)
{
	*d = cap_diag(c);
	return tgt_config_parse(text, strlen(text), "t.conf", d);
}

/* A config that must load: no error, the given number of warnings. */
#define assert_loads(cfg, cap, nwarn)                                                              \
	do {                                                                                       \
		cr_assert_not_null((cfg), "did not load:\n%s", cap_dump(&(cap)));                  \
		cr_assert_eq(cap_count(&(cap), true), 0, "errors:\n%s", cap_dump(&(cap)));         \
		cr_assert_eq(cap_count(&(cap), false), (unsigned)(nwarn), "warnings:\n%s",         \
			     cap_dump(&(cap)));                                                    \
	} while (0)

/* A config that must fail, with this exact first error. */
#define assert_fails_with(text, eline, emsg)                                                       \
	do {                                                                                       \
		struct captured c_;                                                                \
		struct diag d_;                                                                    \
		struct tgt_config *cfg_ = load_str((text), &c_, &d_);                              \
		int line_ = -1;                                                                    \
		const char *msg_ = cap_first_error(&c_, &line_);                                   \
		cr_assert_null(cfg_, "loaded although it should fail");                            \
		cr_assert_not_null(msg_, "no error reported");                                     \
		cr_assert_str_eq(msg_, (emsg), "all messages:\n%s", cap_dump(&c_));                \
		cr_assert_eq(line_, (eline), "line %d, expected %d: %s", line_, (eline), msg_);    \
		tgt_config_free(cfg_);                                                             \
	} while (0)

/* One ramdisk device named d0, for configs that need a device. */
#define RAM_D0 "HANDLER ramdisk {\n\tDEVICE d0 {\n\t\tsize_mb 1\n\t}\n}\n"

#endif
