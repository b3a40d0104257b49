/* RECONFIG_DEVICE on the DEVICE behind an LIO user backstore (tcmu_reconfig.c), through the
 * real core: a new dev_size resizes the LU and every nexus sees CAPACITY DATA HAS CHANGED, the
 * same size changes nothing, a ramdisk refuses; emulate_write_cache moves the caching page's
 * WCE (MODE PARAMETERS CHANGED); the same dev_config is accepted, another refused. */
#include <criterion/criterion.h>
#include <errno.h>

#include "scsi_harness.h"

#include "transports/tcmu/tcmu_nl.h"
#include "transports/tcmu/tcmu_reconfig.h"
#include "transports/tcmu/tcmu_uapi.h"

static struct scsi_dev *dev;
static struct th_nexus a;

static void setup_on(const char *handler)
{
	dev = th_make_dev(handler, "rc0", 4 << 20, 512);
	th_nexus_init(&a, "lio-tcmu,lio0", 1, &dev, 1);
	th_clear_ua(&a, 0);
}

static void setup(void)
{
	setup_on("vdisk_nullio");
}

static void setup_ramdisk(void)
{
	setup_on("ramdisk");
}

static void teardown(void)
{
	scsi_nexus_unregister(&a.nx);
	scsi_dev_destroy(dev);
	scsi_core_shutdown();
}

static struct th_result r;

static struct th_result tur(void)
{
	return th_exec(&a, 0, (uint8_t[6]){0}, 6, SCSI_DIR_NONE, NULL, 0);
}

static uint64_t capacity(void)
{
	uint8_t b[8];
	struct th_result r = th_exec(&a, 0, (uint8_t[10]){0x25}, 10, SCSI_DIR_READ, b, 8);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	return ((uint64_t)get_be32(b) + 1) * get_be32(b + 4);
}

static bool wce(void)
{
	uint8_t b[64];
	/* MODE SENSE(6), DBD, caching page */
	struct th_result r =
	    th_exec(&a, 0, (uint8_t[6]){0x1a, 0x08, 0x08, 0, 64, 0}, 6, SCSI_DIR_READ, b, 64);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[4] & 0x3f, 0x08);
	return b[4 + 2] & 0x04;
}

Test(tcmu_reconfig, dev_size, .init = setup, .fini = teardown)
{
	struct tcmu_nl_event ev = {.cmd = TCMU_CMD_RECONFIG_DEVICE, .has_size = true};
	char msg[256];

	ev.size = 4 << 20;
	cr_assert_eq(tcmu_reconfig(dev, "rc0", &ev, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_eq(tur().status, SAM_STAT_GOOD, "the same size: no UNIT ATTENTION");
	ev.size = 8 << 20;
	cr_assert_eq(tcmu_reconfig(dev, "rc0", &ev, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_str_eq(msg, "dev_size: DEVICE resized from 4194304 to 8388608 bytes");
	r = tur();
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x09);
	cr_assert_eq(capacity(), 8 << 20);
	ev.size = (8 << 20) + 100;
	cr_assert_eq(tcmu_reconfig(dev, "rc0", &ev, msg, sizeof(msg)), -EINVAL);
	cr_assert_eq(capacity(), 8 << 20, "refused: unchanged");
}

Test(tcmu_reconfig, ramdisk_refuses_a_new_size, .init = setup_ramdisk, .fini = teardown)
{
	struct tcmu_nl_event ev = {.has_size = true, .size = 8 << 20};
	char msg[256];

	cr_assert_eq(tcmu_reconfig(dev, "rc0", &ev, msg, sizeof(msg)), -EOPNOTSUPP);
	cr_assert(strstr(msg, "refused"), "%s", msg);
	cr_assert_eq(tur().status, SAM_STAT_GOOD);
	cr_assert_eq(capacity(), 4 << 20);
}

Test(tcmu_reconfig, write_cache, .init = setup, .fini = teardown)
{
	struct tcmu_nl_event ev = {.has_wce = true, .wce = 0};
	char msg[256];

	cr_assert(wce(), "write cache on by default (no write_through)");
	cr_assert_eq(tcmu_reconfig(dev, "rc0", &ev, msg, sizeof(msg)), 0);
	cr_assert_str_eq(msg, "emulate_write_cache 0: WCE changed");
	r = tur();
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x01);
	cr_assert_not(wce());
	cr_assert_eq(tcmu_reconfig(dev, "rc0", &ev, msg, sizeof(msg)), 0);
	cr_assert_eq(tur().status, SAM_STAT_GOOD, "unchanged: no UNIT ATTENTION");
	ev.wce = 1;
	cr_assert_eq(tcmu_reconfig(dev, "rc0", &ev, msg, sizeof(msg)), 0);
	r = tur();
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x01);
	cr_assert(wce());
}

Test(tcmu_reconfig, dev_config, .init = setup, .fini = teardown)
{
	struct tcmu_nl_event ev = {.has_cfg = true};
	char msg[256];

	snprintf(ev.cfg, sizeof(ev.cfg), "utgt/rc0\n");
	cr_assert_eq(tcmu_reconfig(dev, "rc0", &ev, msg, sizeof(msg)), 0, "%s", msg);
	snprintf(ev.cfg, sizeof(ev.cfg), "utgt/rc0;hang_lba=5");
	cr_assert_eq(tcmu_reconfig(dev, "rc0;hang_lba=5", &ev, msg, sizeof(msg)), 0, "%s", msg);
	snprintf(ev.cfg, sizeof(ev.cfg), "utgt/other");
	cr_assert_eq(tcmu_reconfig(dev, "rc0", &ev, msg, sizeof(msg)), -EOPNOTSUPP);
	cr_assert(strstr(msg, "keeps utgt/rc0"), "%s", msg);
	snprintf(ev.cfg, sizeof(ev.cfg), "file//tmp/x");
	cr_assert_eq(tcmu_reconfig(dev, "rc0", &ev, msg, sizeof(msg)), -EOPNOTSUPP);
	ev.has_cfg = false;
	cr_assert_eq(tcmu_reconfig(dev, "rc0", &ev, msg, sizeof(msg)), -EOPNOTSUPP,
		     "nothing named");
	cr_assert_eq(tur().status, SAM_STAT_GOOD);
}
