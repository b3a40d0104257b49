/* libFuzzer: the admin socket protocol (target/admin_req.c, admin_show.c, admin_verbs.c and
 * the diff/apply engine behind the verbs), from request lines to JSON answers, against an
 * in-memory daemon state: a configuration with a nullio and a ramdisk DEVICE, one iSCSI
 * TARGET with a GROUP, and transports that only record what they are asked.
 *
 * The input is up to 4 request lines (split at '\n', each framed as the socket's server
 * frames it: a NUL or more than ADMIN_LINE_MAX-1 bytes is refused before parsing), run in
 * order on one state, so sequences such as add-then-remove are reached.  Invariant: every
 * answer is one JSON object with a boolean "ok".
 *
 * Nothing may leave the process: every transport is replaced by a recording fake (through
 * -Wl,--wrap=tgt_transport_find, see the Makefile), a value naming a file (filename=, and
 * the FILE of reload / write-config) is pointed at this run's scratch directory, and logs go
 * to syslog. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ut_log.h"
#include "target/admin.h"
#include "target/tgt_jread.h"

#define MAX_LINES 4

static char scratch[64], conf_path[96], file_path[96];

static const char base_conf[] =
    "HANDLER vdisk_nullio {\n DEVICE n0 {\n  size_mb 8\n }\n}\n"
    "HANDLER ramdisk {\n DEVICE r0 {\n  size_mb 1\n }\n}\n"
    "TARGET_DRIVER iscsi {\n TARGET iqn.2026-12.org.utgt:fuzz {\n  enabled 1\n  LUN 0 n0\n"
    "  GROUP g {\n   INITIATOR iqn.2026-12.org.utgt:*\n   LUN 0 n0\n   LUN 1 r0\n  }\n }\n}\n";

/* ---- recording transports: the real ones' attribute lists and checks, no sockets ---- */
const struct tgt_transport *__real_tgt_transport_find(const char *driver);

/* start and update: taken, nothing to do */
static int fake_take(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
		     size_t errlen)
{
	(void)cfg;
	(void)drv;
	(void)err;
	(void)errlen;
	return 0;
}

static void fake_stop(void)
{
}

static int fake_close(uint64_t id, char *err, size_t errlen)
{
	if (id % 2) {
		snprintf(err, errlen, "no session %llu", (unsigned long long)id);
		return -1;
	}
	return 0;
}

static const char *const known[] = {"iscsi", "ib_srpt", "copy_manager", "tcmu"};
static struct tgt_transport fakes[sizeof(known) / sizeof(known[0])];

const struct tgt_transport *__wrap_tgt_transport_find(const char *driver);
const struct tgt_transport *__wrap_tgt_transport_find(const char *driver)
{
	for (size_t i = 0; driver && i < sizeof(known) / sizeof(known[0]); i++) {
		const struct tgt_transport *real;

		if (strcmp(driver, known[i]))
			continue;
		real = __real_tgt_transport_find(driver);
		if (!real)
			return NULL; /* not in this build */
		fakes[i] = (struct tgt_transport){.driver = real->driver,
						  .driver_attrs = real->driver_attrs,
						  .target_attrs = real->target_attrs,
						  .validate = real->validate,
						  .start = fake_take,
						  .stop = fake_stop,
						  .update = fake_take,
						  .close_session = fake_close};
		return &fakes[i];
	}
	return NULL;
}

/* ---- the state every input starts from ---- */
static void remove_scratch(void)
{
	char tmp[128];

	snprintf(tmp, sizeof(tmp), "%s.tmp", file_path);
	unlink(tmp);
	unlink(file_path);
	unlink(conf_path);
	rmdir(scratch);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *f;

	(void)argc;
	(void)argv;
	ut_log_to_syslog("fuzz_admin");
	atexit(remove_scratch);
	snprintf(scratch, sizeof(scratch), "/tmp/utgt-fuzz-admin.%d", (int)getpid());
	if (mkdir(scratch, 0700) != 0)
		abort();
	snprintf(conf_path, sizeof(conf_path), "%s/scst.conf", scratch);
	snprintf(file_path, sizeof(file_path), "%s/file", scratch);
	f = fopen(conf_path, "w");
	if (!f || fputs(base_conf, f) < 0 || fclose(f) != 0)
		abort();
	return 0;
}

static void quiet(struct diag *d, bool error, int line, const char *msg)
{
	(void)d;
	(void)error;
	(void)line;
	(void)msg;
}

static bool start(struct tgt_run *run)
{
	struct diag d = {.file = "fuzz", .emit = quiet};
	struct tgt_config *cfg = tgt_config_load(conf_path, &d);

	if (!cfg || tgt_config_open_devices(cfg, &d) != 0)
		abort(); /* the base configuration is fixed: it must load */
	tgt_run_init(run, cfg, conf_path, "");
	if (tgt_run_start(run) != 0)
		abort();
	return true;
}

/* Point whatever could name a file at the scratch directory. */
static void contain(struct admin_req *req)
{
	if (req->cmd == ADMIN_RELOAD && req->arg)
		req->arg = conf_path;
	if (req->cmd == ADMIN_WRITE_CONFIG && req->arg)
		req->arg = file_path;
	if (req->cmd != ADMIN_EDIT)
		return;
	for (unsigned i = 0; i < req->edit.nopts; i++)
		if (strstr(req->opts[i].key, "file") || strchr(req->opts[i].value, '/'))
			req->opts[i].value = file_path;
}

static void answer_one(const struct admin_info *ai, const char *line, size_t len)
{
	static struct admin_req req;
	char text[ADMIN_LINE_MAX], err[256];
	struct ut_json j;
	struct tgt_jv *v;
	size_t off = 0;

	ut_json_init(&j);
	if (len > ADMIN_LINE_MAX - 1 || memchr(line, '\0', len)) {
		admin_error(&j, "refused before parsing");
	} else {
		memcpy(text, line, len);
		text[len] = '\0';
		if (admin_req_parse(text, &req, err, sizeof(err)) != 0) {
			admin_error(&j, err);
		} else {
			contain(&req);
			admin_answer(ai, &req, &j);
		}
	}
	if (j.oom)
		abort();
	v = tgt_jread(j.buf, &off);
	if (!v || tgt_jv_bool(v, "ok", true) != tgt_jv_bool(v, "ok", false))
		abort(); /* not JSON, or no boolean "ok" */
	tgt_jv_free(v);
	ut_json_free(&j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tgt_run run;
	struct admin_info ai;
	const char *p = (const char *)data, *end = p + size;

	start(&run);
	ai = (struct admin_info){.run = &run, .version = "fuzz", .started = 1};
	for (int n = 0; n < MAX_LINES && p < end; n++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		answer_one(&ai, p, len);
		p += len + (nl ? 1 : 0);
	}
	tgt_run_stop(&run);
	tgt_config_free(run.cfg);
	unlink(file_path);
	return 0;
}
