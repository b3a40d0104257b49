/* utgtadm's command line as an admin socket request (adm_cli.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/adm_cli.h"

struct line {
	char *buf;
	size_t len, off;
	bool overflow;
};

/* One word as the daemon's request parser reads it back: quoted when it must be. */
static void put_word(struct line *l, const char *w)
{
	bool quote = !*w || strpbrk(w, " \t\"\\") != NULL;
	char tmp[1100];
	size_t n = 0;

	if (l->off)
		tmp[n++] = ' ';
	if (quote)
		tmp[n++] = '"';
	for (; *w && n < sizeof(tmp) - 4; w++) {
		if (*w == '"' || *w == '\\')
			tmp[n++] = '\\';
		tmp[n++] = *w;
	}
	if (*w)
		l->overflow = true;
	if (quote)
		tmp[n++] = '"';
	if (l->off + n + 2 > l->len) {
		l->overflow = true;
		return;
	}
	memcpy(l->buf + l->off, tmp, n);
	l->off += n;
	l->buf[l->off] = '\0';
}

static void put_kv(struct line *l, const char *k, const char *v)
{
	char w[1100];

	snprintf(w, sizeof(w), "%s=%s", k, v);
	put_word(l, w);
}

/* ---- scstadmin's form ---- */

struct scst_args {
	const char *verb, *name; /* "-add_lun", its argument (may be NULL) */
	const char *driver, *target, *group, *device, *handler, *dev_group, *attributes;
};

static const char *const modifiers[] = {"-noprompt", "-force",	"-nonkey", "-cont_on_err",
					"-debug",    "-no_lip", NULL};
static const char *const valued[] = {"-driver",	 "-target",    "-group",      "-device",
				     "-handler", "-dev_group", "-attributes", NULL};

static bool in(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (!strcmp(*l, s))
			return true;
	return false;
}

static int scst_parse(int argc, char **argv, struct scst_args *a, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	for (int i = 0; i < argc; i++) {
		const char *w = argv[i];

		if (in(modifiers, w))
			continue;
		if (in(valued, w)) {
			const char **slot = !strcmp(w, "-driver")      ? &a->driver
					    : !strcmp(w, "-target")    ? &a->target
					    : !strcmp(w, "-group")     ? &a->group
					    : !strcmp(w, "-device")    ? &a->device
					    : !strcmp(w, "-handler")   ? &a->handler
					    : !strcmp(w, "-dev_group") ? &a->dev_group
								       : &a->attributes;
			if (i + 1 >= argc) {
				snprintf(err, errlen, "%s needs a value", w);
				return -1;
			}
			*slot = argv[++i];
			continue;
		}
		if (w[0] == '-' && !a->verb) {
			a->verb = w;
			if (i + 1 < argc && argv[i + 1][0] != '-')
				a->name = argv[++i];
			continue;
		}
		snprintf(err, errlen, "unexpected '%s'", w);
		return -1;
	}
	if (!a->verb) {
		snprintf(err, errlen, "no scstadmin command given");
		return -1;
	}
	return 0;
}

/* -attributes a=v,b=w as KEY=VALUE words. */
static void put_attributes(struct line *l, const char *attrs)
{
	char buf[1024], *save = NULL;

	if (!attrs)
		return;
	snprintf(buf, sizeof(buf), "%s", attrs);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		put_word(l, t);
}

static const char *absolute(const char *path, char *out, size_t len)
{
	char cwd[PATH_MAX];

	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return path;
	snprintf(out, len, "%s/%s", cwd, path);
	return out;
}

static bool need(const struct scst_args *a, const char *what, const char *v, char *err,
		 size_t errlen)
{
	if (!v)
		snprintf(err, errlen, "%s needs %s", a->verb, what);
	return v != NULL;
}

/* A placement option as KEY=VALUE, when given. */
static void put_opt(struct line *l, const char *k, const char *v)
{
	if (v)
		put_kv(l, k, v);
}

static int scst_request(int argc, char **argv, struct adm_cmd *cmd, struct line *l, char *err,
			size_t errlen)
{
	static char path[PATH_MAX + 8];
	struct scst_args a;
	const char *v;

	if (scst_parse(argc, argv, &a, err, errlen) != 0)
		return -1;
	v = a.verb;
	cmd->changes = true;
	if (!strcmp(v, "-config") || !strcmp(v, "-write_config")) {
		if (!need(&a, "a FILE", a.name, err, errlen))
			return -1;
		put_word(l, !strcmp(v, "-config") ? "reload" : "write-config");
		put_word(l, absolute(a.name, path, sizeof(path)));
		return 0;
	}
	if (!strncmp(v, "-list_", 6)) {
		cmd->changes = false;
		cmd->filter = a.name;
		cmd->driver = a.driver;
		cmd->target = a.target;
		if (!strcmp(v, "-list_target") || !strcmp(v, "-list_group")) {
			cmd->render =
			    v[6] == 't' ? ADM_RENDER_SCST_TARGETS : ADM_RENDER_SCST_GROUPS;
			put_word(l, "show");
			put_word(l, "targets");
			return 0;
		}
		if (!strcmp(v, "-list_device")) {
			cmd->render = ADM_RENDER_SCST_DEVICES;
			put_word(l, "show");
			put_word(l, "devices");
			return 0;
		}
		if (!strcmp(v, "-list_sessions")) {
			cmd->render = ADM_RENDER_SCST_SESSIONS;
			put_word(l, "show");
			put_word(l, "sessions");
			return 0;
		}
	}
	if (!strcmp(v, "-resync_dev")) {
		if (!need(&a, "a DEVICE", a.name, err, errlen))
			return -1;
		put_word(l, "resync");
		put_word(l, "device");
		put_word(l, a.name);
		return 0;
	}
	static const struct {
		const char *verb, *req, *obj;
		bool driver, target, group;
	} map[] = {
	    {"-set_dev_attr", "set", "device", false, false, false},
	    {"-open_dev", "add", "device", false, false, false},
	    {"-close_dev", "remove", "device", false, false, false},
	    {"-set_drv_attr", "set", "driver", false, false, false},
	    {"-set_tgt_attr", "set", "target", true, false, false},
	    {"-add_target", "add", "target", true, false, false},
	    {"-rem_target", "remove", "target", true, false, false},
	    {"-enable_target", "enable", "target", true, false, false},
	    {"-disable_target", "disable", "target", true, false, false},
	    {"-add_group", "add", "group", true, true, false},
	    {"-rem_group", "remove", "group", true, true, false},
	    {"-set_grp_attr", "set", "group", true, true, false},
	    {"-add_lun", "add", "lun", true, true, false},
	    {"-rem_lun", "remove", "lun", true, true, false},
	    {"-add_init", "add", "initiator", true, true, true},
	    {"-rem_init", "remove", "initiator", true, true, true},
	    {"-set_tgrp_attr", "set", "tgroup", false, false, false},
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (strcmp(v, map[i].verb))
			continue;
		if (!need(&a, "a name", a.name, err, errlen) ||
		    (map[i].driver && !need(&a, "-driver", a.driver, err, errlen)) ||
		    (map[i].target && !need(&a, "-target", a.target, err, errlen)) ||
		    (map[i].group && !need(&a, "-group", a.group, err, errlen)))
			return -1;
		put_word(l, map[i].req);
		put_word(l, map[i].obj);
		put_word(l, a.name);
		put_opt(l, "driver", a.driver);
		put_opt(l, "target", a.target);
		put_opt(l, "group", a.group);
		put_opt(l, "device", a.device);
		if (!strcmp(v, "-open_dev"))
			put_opt(l, "handler", a.handler);
		put_opt(l, "dgroup", a.dev_group);
		put_attributes(l, a.attributes);
		return 0;
	}
	snprintf(err, errlen, "scstadmin command %s is not offered by utgtadm (see utgtadm --help)",
		 v);
	return -1;
}

int adm_cli_request(int argc, char **argv, struct adm_cmd *cmd, char *err, size_t errlen)
{
	struct line l = {cmd->req, sizeof(cmd->req) - 1, 0, false};
	static char path[PATH_MAX + 8];

	memset(cmd, 0, sizeof(*cmd));
	if (argc < 1) {
		snprintf(err, errlen, "no command given");
		return -1;
	}
	if (argv[0][0] == '-') {
		if (scst_request(argc, argv, cmd, &l, err, errlen) != 0)
			return -1;
	} else {
		cmd->changes = strcmp(argv[0], "show") && strcmp(argv[0], "version") &&
			       strcmp(argv[0], "help");
		for (int i = 0; i < argc; i++) {
			/* the file of reload / write-config is the daemon's to open: absolute */
			bool file = i == 1 && (!strcmp(argv[0], "reload") ||
					       !strcmp(argv[0], "write-config"));
			put_word(&l, file ? absolute(argv[i], path, sizeof(path)) : argv[i]);
		}
	}
	if (l.overflow) {
		snprintf(err, errlen, "request too long (at most %zu bytes)", sizeof(cmd->req) - 2);
		return -1;
	}
	l.buf[l.off++] = '\n';
	l.buf[l.off] = '\0';
	return 0;
}
