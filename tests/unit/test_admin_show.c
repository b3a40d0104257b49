/* The admin socket's answers (admin_show.c): targets and devices from a loaded configuration,
 * sessions from a transport's show_sessions op, totals summed over them. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/admin.h"
#include "target/tgt_jread.h"
#include "tests/unit/conf_test_util.h"

static const char conf[] = "HANDLER ramdisk {\n"
			   "	DEVICE rd0 {\n"
			   "		size_mb 4\n"
			   "	}\n"
			   "	DEVICE rd1 {\n"
			   "		size_mb 1\n"
			   "	}\n"
			   "}\n"
			   "TARGET_DRIVER iscsi {\n"
			   "	listen 127.0.0.1:3260\n"
			   "	listen 127.0.0.2:3260\n"
			   "	TARGET iqn.2026-12.org.utgt:show {\n"
			   "		enabled 1\n"
			   "		allowed_portal 127.0.0.1\n"
			   "		LUN 0 rd0\n"
			   "		GROUP g {\n"
			   "			INITIATOR iqn.2026-12.org.utgt:*\n"
			   "			LUN 0 rd0\n"
			   "			LUN 3 rd1 {\n"
			   "				read_only 1\n"
			   "			}\n"
			   "		}\n"
			   "	}\n"
			   "}\n";

static struct tgt_config *cfg;
static struct captured cap;

static void setup(void)
{
	struct diag d;
	cfg = load_str(conf, &cap, &d);
	assert_loads(cfg, cap, 0);
	cr_assert_eq(tgt_config_open_devices(cfg, &d), 0, "%s", cap_dump(&cap));
}

static struct tgt_run run;

static void teardown(void)
{
	tgt_config_free(cfg);
}

/* The running state of a daemon that started these drivers (fake transports allowed). */
static struct tgt_run *running(const struct tgt_driver *const *drv, unsigned n)
{
	tgt_run_init(&run, cfg, "/etc/utgt/scst.conf", "");
	for (unsigned i = 0; i < n; i++) {
		snprintf(run.drivers[i].name, sizeof(run.drivers[i].name), "%s", drv[i]->name);
		run.drivers[i].tp = drv[i]->transport;
	}
	run.ndrivers = n;
	return &run;
}

static struct tgt_jv *answer(const struct admin_info *ai, enum admin_cmd cmd)
{
	struct admin_req req = {.cmd = cmd};
	struct ut_json j;
	size_t off = 0;

	ut_json_init(&j);
	admin_answer(ai, &req, &j);
	cr_assert_not(j.oom);
	struct tgt_jv *v = tgt_jread(j.buf, &off);
	cr_assert_not_null(v, "not JSON at %zu: %s", off, j.buf);
	ut_json_free(&j);
	cr_assert(tgt_jv_bool(v, "ok", false));
	return v;
}

TestSuite(admin_show, .init = setup, .fini = teardown);

Test(admin_show, targets_drivers_portals_luns_groups)
{
	static const struct tgt_transport fake = {.driver = "iscsi"};
	struct tgt_driver drv = cfg->drivers[0];
	const struct tgt_driver *dp = &drv;
	struct admin_info ai;
	struct tgt_jv *v;

	drv.transport = &fake;
	ai = (struct admin_info){.run = running(&dp, 1), .version = "9.9"};
	v = answer(&ai, ADMIN_SHOW_TARGETS);
	const struct tgt_jv *d = &tgt_jv_get(v, "drivers")->kids[0];
	const struct tgt_jv *t = &tgt_jv_get(d, "targets")->kids[0];
	const struct tgt_jv *g = &tgt_jv_get(t, "groups")->kids[0];

	cr_assert_str_eq(tgt_jv_str(d, "name", ""), "iscsi");
	cr_assert(tgt_jv_bool(d, "running", false));
	cr_assert_eq(tgt_jv_get(d, "portals")->n, 2);
	cr_assert_str_eq(tgt_jv_get(d, "portals")->kids[1].s, "127.0.0.2:3260");
	cr_assert_str_eq(tgt_jv_str(t, "name", ""), "iqn.2026-12.org.utgt:show");
	cr_assert_str_eq(tgt_jv_get(t, "allowed_portals")->kids[0].s, "127.0.0.1");
	cr_assert_str_eq(tgt_jv_str(&tgt_jv_get(t, "luns")->kids[0], "device", ""), "rd0");
	cr_assert_str_eq(tgt_jv_str(g, "name", ""), "g");
	cr_assert_str_eq(tgt_jv_get(g, "initiators")->kids[0].s, "iqn.2026-12.org.utgt:*");
	cr_assert_eq(tgt_jv_u64(&tgt_jv_get(g, "luns")->kids[1], "lun", 0), 3);
	cr_assert_str_eq(tgt_jv_str(&tgt_jv_get(g, "luns")->kids[1], "device", ""), "rd1");
	cr_assert(tgt_jv_bool(&tgt_jv_get(g, "luns")->kids[1], "read_only", false));
	cr_assert_not(tgt_jv_bool(&tgt_jv_get(g, "luns")->kids[0], "read_only", true));
	tgt_jv_free(v);

	run.ndrivers = 0; /* not started */
	v = answer(&ai, ADMIN_SHOW_TARGETS);
	cr_assert_not(tgt_jv_bool(&tgt_jv_get(v, "drivers")->kids[0], "running", true));
	tgt_jv_free(v);
}

Test(admin_show, devices_with_counters_and_totals)
{
	struct admin_info ai = {.run = running(NULL, 0), .version = "9.9"};
	struct scsi_dev *d0 = cfg->devices[0].dev, *d1 = cfg->devices[1].dev;

	d0->stats = (struct scsi_io_stats){.cmds = 10,
					   .read_cmds = 4,
					   .read_bytes = 4096,
					   .write_cmds = 5,
					   .write_bytes = 8192,
					   .errors = 1,
					   .nexuses = 2};
	d1->stats = (struct scsi_io_stats){.cmds = 3, .write_cmds = 3, .write_bytes = 1536};
	struct tgt_jv *v = answer(&ai, ADMIN_SHOW_DEVICES);
	const struct tgt_jv *ds = tgt_jv_get(v, "devices"), *k, *tot;

	cr_assert_eq(ds->n, 2);
	cr_assert_str_eq(tgt_jv_str(&ds->kids[0], "handler", ""), "ramdisk");
	cr_assert_eq(tgt_jv_u64(&ds->kids[0], "size", 0), 4 << 20);
	cr_assert_eq(tgt_jv_u64(&ds->kids[0], "block_size", 0), 512);
	cr_assert_eq(tgt_jv_u64(&ds->kids[0], "sessions", 0), 2);
	k = tgt_jv_get(&ds->kids[0], "counters");
	cr_assert_eq(tgt_jv_u64(k, "read_commands", 0), 4);
	cr_assert_eq(tgt_jv_u64(k, "bytes_written", 0), 8192);
	cr_assert_eq(tgt_jv_u64(k, "errors", 0), 1);
	cr_assert_null(tgt_jv_get(k, "task_mgmt"), "an LU has no TMF counter");
	tot = tgt_jv_get(v, "totals");
	cr_assert_eq(tgt_jv_u64(tot, "commands", 0), 13);
	cr_assert_eq(tgt_jv_u64(tot, "write_commands", 0), 8);
	cr_assert_eq(tgt_jv_u64(tot, "bytes_written", 0), 8192 + 1536);
	tgt_jv_free(v);
}

/* A transport that lists two nexuses. */
static struct scsi_nexus fake_nx[2];

static void fake_show(const struct tgt_driver *drv, struct ut_json *j, struct scsi_io_stats *total)
{
	for (int i = 0; i < 2; i++) {
		ut_json_obj(j, NULL);
		ut_json_str(j, "driver", drv->name);
		scsi_nexus_json(j, &fake_nx[i], total);
		ut_json_end_obj(j);
	}
}

Test(admin_show, sessions_come_from_the_transport_op)
{
	static const struct tgt_transport fake = {.driver = "iscsi", .show_sessions = fake_show};
	static const struct tgt_transport quiet = {.driver = "iscsi"};
	struct tgt_driver drv = cfg->drivers[0];
	const struct tgt_driver *dp = &drv;
	struct admin_info ai;

	drv.transport = &fake;
	ai = (struct admin_info){.run = running(&dp, 1), .version = "9.9"};
	for (int i = 0; i < 2; i++) {
		snprintf(fake_nx[i].initiator_name, sizeof(fake_nx[i].initiator_name),
			 "iqn.2026-12.org.utgt:i%d", i);
		snprintf(fake_nx[i].initiator_port, sizeof(fake_nx[i].initiator_port),
			 "iqn.2026-12.org.utgt:i%d,i,0x0%d", i, i);
		fake_nx[i].stats = (struct scsi_io_stats){.cmds = 100u * (i + 1),
							  .read_bytes = 1000u * (i + 1),
							  .write_bytes = 7,
							  .errors = (uint64_t)i,
							  .tmfs = 2};
	}
	struct tgt_jv *v = answer(&ai, ADMIN_SHOW_SESSIONS);
	const struct tgt_jv *ss = tgt_jv_get(v, "sessions"), *tot = tgt_jv_get(v, "totals");

	cr_assert_eq(ss->n, 2);
	cr_assert_str_eq(tgt_jv_str(&ss->kids[1], "initiator", ""), "iqn.2026-12.org.utgt:i1");
	cr_assert_str_eq(tgt_jv_str(&ss->kids[1], "initiator_port", ""),
			 "iqn.2026-12.org.utgt:i1,i,0x01");
	cr_assert_eq(tgt_jv_u64(tgt_jv_get(&ss->kids[1], "counters"), "bytes_read", 0), 2000);
	cr_assert_eq(tgt_jv_u64(tot, "commands", 0), 300);
	cr_assert_eq(tgt_jv_u64(tot, "bytes_read", 0), 3000);
	cr_assert_eq(tgt_jv_u64(tot, "bytes_written", 0), 14);
	cr_assert_eq(tgt_jv_u64(tot, "errors", 0), 1);
	cr_assert_eq(tgt_jv_u64(tot, "task_mgmt", 0), 4);
	tgt_jv_free(v);

	run.drivers[0].tp = &quiet; /* a driver without the op lists nothing */
	v = answer(&ai, ADMIN_SHOW_SESSIONS);
	cr_assert_eq(tgt_jv_get(v, "sessions")->n, 0);
	tgt_jv_free(v);
}

Test(admin_show, version_and_errors)
{
	struct admin_info ai = {.run = running(NULL, 0), .version = "9.9", .started = time(NULL) - 5};
	struct tgt_jv *v = answer(&ai, ADMIN_VERSION);
	struct ut_json j;

	cr_assert_str_eq(tgt_jv_str(v, "version", ""), "9.9");
	cr_assert_eq(tgt_jv_u64(v, "pid", 0), (uint64_t)getpid());
	cr_assert_geq(tgt_jv_u64(v, "uptime_s", 0), 5);
	cr_assert_str_eq(tgt_jv_str(v, "config", ""), "/etc/utgt/scst.conf");
	cr_assert_eq(tgt_jv_u64(v, "changes", 9), 0);
	tgt_jv_free(v);
	ut_json_init(&j);
	admin_error(&j, "bad \"thing\"");
	cr_assert_str_eq(j.buf, "{\"ok\":false,\"error\":\"bad \\\"thing\\\"\"}");
	ut_json_free(&j);
}

/* A file-backed device also says how its I/O engine ran; a ramdisk has no engine. */
Test(admin_show_engine, a_file_device_shows_its_io_engine)
{
	char path[] = "/tmp/utgt-show-XXXXXX", text[512];
	int fd = mkstemp(path);
	struct captured c;
	struct diag d;
	uint8_t buf[4096];
	struct iovec iov = {buf, sizeof(buf)};

	cr_assert(fd >= 0);
	cr_assert_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	snprintf(text, sizeof(text),
		 "HANDLER vdisk_fileio {\n\tDEVICE f0 {\n\t\tfilename %s\n\t}\n}\n"
		 "HANDLER ramdisk {\n\tDEVICE r0 {\n\t\tsize_mb 1\n\t}\n}\n",
		 path);
	cfg = load_str(text, &c, &d);
	assert_loads(cfg, c, 0);
	cr_assert_eq(tgt_config_open_devices(cfg, &d), 0, "%s", cap_dump(&c));
	unlink(path);

	struct backstore *bs = cfg->devices[0].dev->bs;
	for (int i = 0; i < 3; i++) {
		struct bs_io io = {.op = BS_READ, .off = (uint64_t)i * 4096, .len = 4096,
				   .iov = &iov, .iovcnt = 1};
		cr_assert_eq(bs_submit_sync(bs, &io), BS_OK);
	}
	struct bs_io fl = {.op = BS_FLUSH};
	cr_assert_eq(bs_submit_sync(bs, &fl), BS_OK);

	struct admin_info ai = {.run = running(NULL, 0), .version = "9.9"};
	struct tgt_jv *v = answer(&ai, ADMIN_SHOW_DEVICES);
	const struct tgt_jv *ds = tgt_jv_get(v, "devices");
	const struct tgt_jv *e = tgt_jv_get(&ds->kids[0], "io_engine");

	cr_assert_str_eq(tgt_jv_str(&ds->kids[0], "name", ""), "f0");
	cr_assert_not_null(e, "no io_engine for a vdisk_fileio device");
	const char *mode = tgt_jv_str(e, "mode", "");
	cr_assert(!strcmp(mode, "io_uring") || !strcmp(mode, "threads"), "mode %s", mode);
	cr_assert_eq(tgt_jv_u64(e, "submitted", 0), 4);
	cr_assert_eq(tgt_jv_u64(e, "completed", 0), 4);
	cr_assert_eq(tgt_jv_u64(e, "in_flight", 9), 0);
	cr_assert_eq(tgt_jv_u64(e, "flushes", 0), 1);
	cr_assert_null(tgt_jv_get(&ds->kids[1], "io_engine"), "a ramdisk has no I/O engine");
	tgt_jv_free(v);
	tgt_config_free(cfg);
}
