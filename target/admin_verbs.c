/* The admin socket's answers that change the running daemon (docs/admin.md, "Live
 * administration").  Each runs with run->mu held: a verb is an edit of the running
 * configuration (tgt_edit.c) applied by the diff/apply engine (tgt_apply.c), as a reload is;
 * resync and close session act on one device or session directly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/admin.h"
#include "target/tgt_apply.h"
#include "common/ut_log.h"

static const char *const verb_names[] = {
    [EDIT_ADD] = "add",	      [EDIT_REMOVE] = "remove",	  [EDIT_SET] = "set",
    [EDIT_ENABLE] = "enable", [EDIT_DISABLE] = "disable",
};
static const char *const obj_names[] = {
    [OBJ_DEVICE] = "device", [OBJ_TARGET] = "target", [OBJ_DRIVER] = "driver",
    [OBJ_GROUP] = "group",   [OBJ_LUN] = "lun",	      [OBJ_INITIATOR] = "initiator",
    [OBJ_TGROUP] = "tgroup",
};

static void ok_changed(struct ut_json *j, const char *what)
{
	ut_json_obj(j, NULL);
	ut_json_bool(j, "ok", true);
	ut_json_str(j, "changed", what);
	ut_json_end_obj(j);
}

/* The engine's reasons, without line numbers: a verb's lines are those of the printed
 * running configuration, which the administrator never saw. */
struct first_error {
	char msg[400];
	bool have;
};

static void keep_first(struct diag *d, bool error, int line, const char *msg)
{
	struct first_error *f = d->priv;

	(void)line;
	if (error && !f->have) {
		snprintf(f->msg, sizeof(f->msg), "%s", msg);
		f->have = true;
	}
}

static void edit(const struct admin_info *ai, const struct admin_req *req, struct ut_json *j)
{
	struct first_error fe = {.have = false};
	struct diag d = {.file = "request", .emit = keep_first, .priv = &fe};
	const struct tgt_edit *e = &req->edit;
	char err[512] = "", msg[1024];
	struct tgt_config *next = tgt_edit_config(ai->run->cfg, e, err, sizeof(err));

	if (!next) {
		admin_error(j, err);
		return;
	}
	if (tgt_apply(ai->run, next, &d, msg, sizeof(msg)) != 0) {
		admin_error(j, fe.have ? fe.msg : "refused");
		return;
	}
	ut_log(LOG_NOTICE, "admin: %s %s %s: %s", verb_names[e->verb], obj_names[e->obj], e->name,
		msg);
	ok_changed(j, msg);
}

static void resync(const struct admin_info *ai, const char *name, struct ut_json *j)
{
	const struct tgt_device *td = tgt_config_device(ai->run->cfg, name);
	char err[256], msg[320];
	uint64_t before;

	if (!td || !td->dev) {
		snprintf(err, sizeof(err), "no DEVICE '%s'", name);
		admin_error(j, err);
		return;
	}
	before = td->dev->nr_blocks * td->dev->block_size;
	if (scsi_dev_set_size(td->dev, 0, err, sizeof(err)) != 0) {
		admin_error(j, err);
		return;
	}
	snprintf(msg, sizeof(msg), "DEVICE %s: %llu -> %llu bytes", name,
		 (unsigned long long)before,
		 (unsigned long long)(td->dev->nr_blocks * td->dev->block_size));
	ut_log(LOG_NOTICE, "admin: resync device %s: %s", name, msg);
	ok_changed(j, msg);
}

static void close_session(const struct admin_info *ai, const char *id, struct ut_json *j)
{
	char err[256] = "", msg[64];
	uint64_t nexus;

	if (!parse_u64(id, &nexus)) {
		snprintf(err, sizeof(err), "'%.64s' is not a nexus id (show sessions: nexus_id)",
			 id);
		admin_error(j, err);
		return;
	}
	for (unsigned i = 0; i < ai->run->ndrivers; i++) {
		const struct tgt_transport *tp = ai->run->drivers[i].tp;
		if (tp->close_session && tp->close_session(nexus, err, sizeof(err)) == 0) {
			snprintf(msg, sizeof(msg), "session %llu closing",
				 (unsigned long long)nexus);
			ut_log(LOG_NOTICE, "admin: close session %llu", (unsigned long long)nexus);
			ok_changed(j, msg);
			return;
		}
	}
	snprintf(err, sizeof(err), "no session with nexus id %llu", (unsigned long long)nexus);
	admin_error(j, err);
}

static void reload(const struct admin_info *ai, const char *path, struct ut_json *j)
{
	char msg[1024];

	if (tgt_run_reload(ai->run, path, msg, sizeof(msg)) != 0) {
		admin_error(j, msg);
		return;
	}
	ok_changed(j, msg);
}

/* To FILE through FILE.tmp and a rename, so a reader never sees half a file. */
static void write_config(const struct admin_info *ai, const char *path, struct ut_json *j)
{
	char tmp[4200], err[4400];
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!path) {
		f = open_memstream(&text, &len);
		if (f) {
			tgt_run_write_config(ai->run, f);
			fclose(f);
		}
		if (!f || !text) {
			free(text);
			admin_error(j, "out of memory");
			return;
		}
		ut_json_obj(j, NULL);
		ut_json_bool(j, "ok", true);
		ut_json_str(j, "config", text);
		ut_json_end_obj(j);
		free(text);
		return;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		admin_error(j, "path too long");
		return;
	}
	f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, sizeof(err), "%s: %s", tmp, strerror(errno));
		admin_error(j, err);
		return;
	}
	tgt_run_write_config(ai->run, f);
	bool good = fflush(f) == 0 && fsync(fileno(f)) == 0;
	good = fclose(f) == 0 && good;
	if (good && rename(tmp, path) == 0) {
		ut_json_obj(j, NULL);
		ut_json_bool(j, "ok", true);
		ut_json_str(j, "file", path);
		ut_json_end_obj(j);
		ut_log(LOG_NOTICE, "admin: write-config %s", path);
		return;
	}
	snprintf(err, sizeof(err), "%s: %s", path, strerror(errno));
	unlink(tmp);
	admin_error(j, err);
}

void admin_verb(const struct admin_info *ai, const struct admin_req *req, struct ut_json *j)
{
	switch (req->cmd) {
	case ADMIN_EDIT:
		edit(ai, req, j);
		break;
	case ADMIN_RESYNC:
		resync(ai, req->arg, j);
		break;
	case ADMIN_CLOSE_SESSION:
		close_session(ai, req->arg, j);
		break;
	case ADMIN_RELOAD:
		reload(ai, req->arg, j);
		break;
	case ADMIN_WRITE_CONFIG:
		write_config(ai, req->arg, j);
		break;
	default:
		admin_error(j, "not a command that changes anything");
		break;
	}
}
