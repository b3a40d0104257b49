/* The admin socket's changing answers (admin_verbs.c), request line to JSON: verbs through
 * the engine with their refusals, resync, close session through the transports, reload (and
 * its FILE:LINE refusal), write-config inline and to a file. */
#include <criterion/criterion.h>
#include <unistd.h>

#include "target/admin.h"
#include "target/tgt_jread.h"
#include "tests/unit/conf_test_util.h"

static struct tgt_run run;
static struct admin_info ai;
static char path[64];
static uint64_t closed_nexus;

static int fake_close(uint64_t id, char *err, size_t errlen)
{
	if (id != 42) {
		snprintf(err, errlen, "no session %llu", (unsigned long long)id);
		return -1;
	}
	closed_nexus = id;
	return 0;
}

static int fake_update(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
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

static const struct tgt_transport fake = {
    .driver = "iscsi", .stop = fake_stop, .update = fake_update, .close_session = fake_close};

static void setup(void)
{
	static const char *conf =
	    "HANDLER vdisk_nullio {\n DEVICE n0 {\n  size_mb 8\n }\n}\n"
	    "HANDLER ramdisk {\n DEVICE r0 {\n  size_mb 1\n }\n}\n"
	    "TARGET_DRIVER iscsi {\n TARGET t {\n  enabled 1\n  LUN 0 n0\n }\n}\n";
	struct diag d = {0};
	struct tgt_config *cfg;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/utgt-verbs-%d.conf", (int)getpid());
	f = fopen(path, "w");
	fputs(conf, f);
	fclose(f);
	cfg = tgt_config_load(path, &d);
	cr_assert_not_null(cfg);
	cr_assert_eq(tgt_config_open_devices(cfg, &d), 0);
	tgt_run_init(&run, cfg, path, "");
	snprintf(run.drivers[0].name, sizeof(run.drivers[0].name), "iscsi");
	run.drivers[0].tp = &fake;
	run.ndrivers = 1;
	ai = (struct admin_info){.run = &run, .version = "t"};
	closed_nexus = 0;
}

static void teardown(void)
{
	tgt_config_free(run.cfg);
	unlink(path);
	scsi_core_shutdown();
}

TestSuite(admin_verbs, .init = setup, .fini = teardown);

static struct tgt_jv *ask(const char *line)
{
	static struct admin_req req;
	struct ut_json j;
	struct tgt_jv *v;
	char err[256];

	cr_assert_eq(admin_req_parse(line, &req, err, sizeof(err)), 0, "%s: %s", line, err);
	ut_json_init(&j);
	admin_answer(&ai, &req, &j);
	cr_assert_not(j.oom);
	v = tgt_jread(j.buf, NULL);
	cr_assert_not_null(v, "%s", j.buf);
	ut_json_free(&j);
	return v;
}

static void expect_ok(const char *line, const char *changed)
{
	struct tgt_jv *v = ask(line);

	cr_assert(tgt_jv_bool(v, "ok", false), "%s: %s", line, tgt_jv_str(v, "error", ""));
	if (changed)
		cr_assert_str_eq(tgt_jv_str(v, "changed", ""), changed, "%s", line);
	tgt_jv_free(v);
}

static void expect_error(const char *line, const char *msg)
{
	struct tgt_jv *v = ask(line);

	cr_assert_not(tgt_jv_bool(v, "ok", true), "accepted: %s", line);
	cr_assert_str_eq(tgt_jv_str(v, "error", ""), msg, "%s: %s", line,
			 tgt_jv_str(v, "error", ""));
	tgt_jv_free(v);
}

Test(admin_verbs, verbs_change_the_running_state)
{
	expect_ok("add device n1 handler=vdisk_nullio size=16M", "DEVICE n1 added");
	expect_ok("add lun 1 driver=iscsi target=t device=n1 read_only=1", "TARGET t: LUNs");
	expect_error("remove device n1",
		     "DEVICE n1 is used by LUN 1 of TARGET t (driver iscsi); remove the LUN first");
	expect_ok("resize device n1 size=32M", "DEVICE n1: size");
	cr_assert_eq(tgt_config_device(run.cfg, "n1")->dev->nr_blocks * 512, 32 << 20);
	/* a ramdisk cannot resize live; unused, it is made anew (its data goes) */
	expect_ok("resize device r0 size=2M", "DEVICE r0 re-created");
	cr_assert_eq(tgt_config_device(run.cfg, "r0")->dev->nr_blocks * 512, 2 << 20);
	expect_ok("set device n0 t10_vend_id=ACME \"prod_id=P Q\"", "DEVICE n0: identity");
	cr_assert_str_eq(tgt_config_device(run.cfg, "n0")->dev->p.product, "P Q");
	expect_ok("disable target t driver=iscsi", "TARGET t: disabled");
	expect_ok("remove lun 1 driver=iscsi target=t", "TARGET t: LUNs");
	expect_ok("remove device n1", "DEVICE n1 removed");
	expect_error("remove device n1", "no DEVICE 'n1'");
	cr_assert_eq(run.changes, 8);
	/* refusals change nothing */
	expect_error("add lun 0 driver=iscsi target=t device=n0",
		     "LUN 0 already exists in TARGET t (DEVICE n0)");
	expect_error("set driver iscsi listen=127.0.0.1:1",
		     "TARGET_DRIVER iscsi: 'listen' cannot change while the driver runs; disable "
		     "the driver first (enabled 0), or restart utgtd");
	cr_assert_eq(run.changes, 8);
}

Test(admin_verbs, resync_and_close_session)
{
	struct tgt_jv *v;

	expect_ok("resync device n0", "DEVICE n0: 8388608 -> 8388608 bytes");
	expect_error("resync device r0", "r0: the size of a ramdisk device cannot change while it "
					 "is open (remove the device and add it again)");
	expect_error("resync device zz", "no DEVICE 'zz'");
	expect_ok("close session 42", "session 42 closing");
	cr_assert_eq(closed_nexus, 42);
	expect_error("close session 7", "no session with nexus id 7");
	expect_error("close session x", "'x' is not a nexus id (show sessions: nexus_id)");
	v = ask("version");
	cr_assert_eq(tgt_jv_u64(v, "changes", 9), 0, "neither is a configuration change");
	tgt_jv_free(v);
}

Test(admin_verbs, reload_and_write_config)
{
	char wpath[80], want[700];
	struct tgt_jv *v;
	FILE *f;

	expect_ok("reload", "no change");
	f = fopen(path, "a");
	fputs("HANDLER ramdisk {\n DEVICE r1\n}\n", f);
	fclose(f);
	snprintf(want, sizeof(want),
		 "%s:18: DEVICE r1: ramdisk needs size or size_mb (1 error(s); the running "
		 "configuration is unchanged)",
		 path);
	expect_error("reload", want);

	v = ask("write-config");
	cr_assert(tgt_jv_bool(v, "ok", false));
	cr_assert(strstr(tgt_jv_str(v, "config", ""), "\t\t# Non-key attributes\n"), "%s",
		  tgt_jv_str(v, "config", ""));
	tgt_jv_free(v);
	snprintf(wpath, sizeof(wpath), "%s.w", path);
	snprintf(want, sizeof(want), "write-config %s", wpath);
	v = ask(want);
	cr_assert_str_eq(tgt_jv_str(v, "file", ""), wpath);
	tgt_jv_free(v);
	snprintf(want, sizeof(want), "reload %s", wpath);
	expect_ok(want, "no change to devices, targets or drivers (attributes written out or kept "
			"for SCST only)");
	expect_error("write-config /nonexistent-dir/x.conf",
		     "/nonexistent-dir/x.conf.tmp: No such file or directory");
	unlink(wpath);
}
