/* The apply half of the engine (tgt_apply.c) on a running state with a stand-in transport
 * whose "sessions" are real nexuses of the core: a LUN added reaches a session with its UNIT
 * ATTENTION, running LUs stay the same objects (their state and data kept), identity changes
 * live, a removed device is closed, an unchanged file changes nothing, a change that cannot
 * open its new device is refused whole, drivers start and stop. */
#include <criterion/criterion.h>

#include "scsi_harness.h"

#include "target/tgt_apply.h"
#include "tests/unit/conf_test_util.h"

#define T "iqn.2026-12.org.utgt:apply"

static const char *FMT =
    "HANDLER ramdisk {\n DEVICE d0 {\n  size_mb 1\n%s }\n"
    " DEVICE d1 {\n  size_mb 1\n }\n%s}\n"
    "TARGET_DRIVER iscsi {\n TARGET " T " {\n  enabled 1\n  LUN 0 d0\n%s }\n}\n%s";

static struct tgt_run run;
static struct th_nexus sess; /* the stand-in transport's one session, initiator "i" */
static unsigned updates;

/* What a transport's update does: its session takes the table its ACL resolves to. */
static int fake_update(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
		       size_t errlen)
{
	const struct tgt_target *t = tgt_driver_target(drv, T);

	(void)cfg;
	(void)err;
	(void)errlen;
	updates++;
	scsi_nexus_set_luns(&sess.nx, t ? tgt_acl_resolve(t, sess.nx.initiator_name) : NULL);
	return 0;
}

static void fake_stop(void)
{
}

static const struct tgt_transport fake = {
    .driver = "iscsi", .stop = fake_stop, .update = fake_update};

static struct tgt_config *make(const char *d0, const char *more_devs, const char *tgt,
			       const char *tail)
{
	char text[4096];
	struct captured c;
	struct diag d;
	struct tgt_config *cfg;

	snprintf(text, sizeof(text), FMT, d0, more_devs, tgt, tail);
	cfg = load_str(text, &c, &d);
	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	return cfg;
}

static void setup(void)
{
	struct scsi_dev *none = NULL;
	struct diag d = {0};
	struct tgt_config *cfg = make("", "", "", "");

	cr_assert_eq(tgt_config_open_devices(cfg, &d), 0);
	tgt_run_init(&run, cfg, "/etc/utgt/scst.conf", "");
	snprintf(run.drivers[0].name, sizeof(run.drivers[0].name), "iscsi");
	run.drivers[0].tp = &fake;
	run.ndrivers = 1;
	th_nexus_init(&sess, "i", 1, &none, 0);
	scsi_nexus_set_luns(&sess.nx,
			    &tgt_driver_target(tgt_config_driver(cfg, "iscsi"), T)->table);
	th_clear_ua(&sess, 0);
	updates = 0;
}

static void teardown(void)
{
	scsi_nexus_unregister(&sess.nx);
	tgt_run_stop(&run);
	tgt_config_free(run.cfg);
	scsi_core_shutdown();
}

TestSuite(tgt_apply, .init = setup, .fini = teardown);

static int apply(struct tgt_config *next, char *msg, struct captured *c)
{
	struct diag d = cap_diag(c);

	return tgt_apply(&run, next, &d, msg, 1024);
}

static struct th_result tur(uint64_t lun)
{
	return th_exec(&sess, lun, (uint8_t[6]){0}, 6, SCSI_DIR_NONE, NULL, 0);
}

Test(tgt_apply, lun_added_reaches_the_session_and_the_lu_stays)
{
	struct scsi_dev *d0 = tgt_config_device(run.cfg, "d0")->dev;
	struct tgt_config *before = run.cfg;
	uint8_t blk[512], back[512];
	struct captured c;
	struct th_result r;
	char msg[1024];

	memset(blk, 0xab, sizeof(blk));
	r = th_exec(&sess, 0, (uint8_t[10]){0x2a, 0, 0, 0, 0, 5, 0, 0, 1, 0}, 10, SCSI_DIR_WRITE,
		    blk, 512);
	cr_assert_eq(r.status, 0);
	cr_assert_eq(apply(make("", "", "  LUN 1 d1\n", ""), msg, &c), 0, "%s", cap_dump(&c));
	cr_assert_str_eq(msg, "TARGET " T ": LUNs");
	cr_assert_neq(run.cfg, before);
	cr_assert_eq(run.changes, 1);
	cr_assert_eq(updates, 1);
	cr_assert_eq(tgt_config_device(run.cfg, "d0")->dev, d0, "the running LU itself");
	cr_assert_eq(sess.nx.luns->n, 2);
	r = tur(0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x3f, 0x0e);
	r = th_exec(&sess, 0, (uint8_t[10]){0x28, 0, 0, 0, 0, 5, 0, 0, 1, 0}, 10, SCSI_DIR_READ,
		    back, 512);
	cr_assert_eq(r.status, 0);
	cr_assert_arr_eq(back, blk, 512, "its data is still there");
	r = tur(1);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x00);
}

Test(tgt_apply, identity_live_and_no_change)
{
	struct captured c;
	struct th_result r;
	char msg[1024];

	cr_assert_eq(apply(make("  t10_vend_id NEWV\n", "", "", ""), msg, &c), 0, "%s",
		     cap_dump(&c));
	cr_assert_str_eq(msg, "DEVICE d0: identity");
	r = tur(0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x3f, 0x03);
	cr_assert_str_eq(tgt_config_device(run.cfg, "d0")->dev->p.vendor, "NEWV");
	/* the same again: nothing at all */
	struct tgt_config *cur = run.cfg;
	cr_assert_eq(apply(make("  t10_vend_id NEWV\n", "", "", ""), msg, &c), 0);
	cr_assert_str_eq(msg, "no change");
	cr_assert_eq(run.cfg, cur);
	cr_assert_eq(run.changes, 1);
	cr_assert_eq(tur(0).status, 0);
}

Test(tgt_apply, devices_added_and_removed)
{
	struct captured c;
	char msg[1024];

	cr_assert_eq(
	    apply(make("", " DEVICE d2 {\n  size_mb 2\n }\n", "  LUN 2 d2\n", ""), msg, &c), 0,
	    "%s", cap_dump(&c));
	cr_assert_str_eq(msg, "DEVICE d2 added; TARGET " T ": LUNs");
	cr_assert(tgt_config_device(run.cfg, "d2")->dev->open);
	cr_assert_eq(sess.nx.luns->n, 2);
	cr_assert_eq(apply(make("", "", "", ""), msg, &c), 0, "%s", cap_dump(&c));
	cr_assert_str_eq(msg, "DEVICE d2 removed; TARGET " T ": LUNs");
	cr_assert_null(tgt_config_device(run.cfg, "d2"));
	cr_assert_eq(sess.nx.luns->n, 1);
}

Test(tgt_apply, a_device_that_cannot_open_refuses_the_whole_change)
{
	struct tgt_config *before = run.cfg;
	struct captured c;
	int line = -1;
	char msg[1024];

	cr_assert_eq(
	    apply(make("",
		       " DEVICE f {\n  size_mb 1\n }\n}\nHANDLER vdisk_fileio {\n"
		       " DEVICE bad {\n  filename /nonexistent-dir/x.img\n  size_mb 1\n }\n",
		       "  LUN 1 d1\n", ""),
		  msg, &c),
	    -1);
	cr_assert_str_eq(cap_first_error(&c, &line),
			 "DEVICE bad: bad: cannot create /nonexistent-dir/x.img: No such file or "
			 "directory");
	cr_assert_eq(line, 14, "the filename line, not %d", line);
	cr_assert_eq(run.cfg, before, "the running state is untouched");
	cr_assert_eq(updates, 0);
	cr_assert_eq(sess.nx.luns->n, 1);
	cr_assert_eq(tur(0).status, 0, "no UNIT ATTENTION either");
}

Test(tgt_apply, drivers_start_and_stop)
{
	struct captured c;
	char msg[1024];

	cr_assert_eq(
	    apply(make("", "", "", "TARGET_DRIVER copy_manager {\n TARGET cm {\n }\n}\n"), msg, &c),
	    0, "%s", cap_dump(&c));
	cr_assert_str_eq(msg, "driver copy_manager started; TARGET cm added");
	cr_assert_not_null(tgt_run_transport(&run, "copy_manager"));
	cr_assert_eq(apply(make("", "", "", ""), msg, &c), 0, "%s", cap_dump(&c));
	cr_assert_str_eq(msg, "driver copy_manager stopped; TARGET cm removed");
	cr_assert_null(tgt_run_transport(&run, "copy_manager"));
	cr_assert_not_null(tgt_run_transport(&run, "iscsi"));
}
