/* scsi/scsi_dev_live.c: SCST's writable device attributes on an LU in use.  Identity: INQUIRY
 * and VPD answer the new values and every nexus gets INQUIRY DATA HAS CHANGED once (nothing
 * when the values are the same).  ALUA: a new state is reported by REPORT TARGET PORT GROUPS,
 * enforced, and announced with ASYMMETRIC ACCESS STATE CHANGED.  Size: READ CAPACITY follows
 * and CAPACITY DATA HAS CHANGED is raised; a store that cannot resize says so. */
#include <criterion/criterion.h>
#include <pthread.h>

#include "scsi_harness.h"

#include "scsi/scsi_srcu.h"

static struct scsi_dev *dev;
static struct th_nexus a, b;

static void setup_on(const char *handler)
{
	dev = th_make_dev(handler, "live0", 4 << 20, 512);
	th_nexus_init(&a, "iqn.2026-12.org.utgt:a", 1, &dev, 1);
	th_nexus_init(&b, "iqn.2026-12.org.utgt:b", 2, &dev, 1);
	th_clear_ua(&a, 0);
	th_clear_ua(&b, 0);
}

static void setup(void)
{
	setup_on("vdisk_nullio");
}

static void setup_ramdisk(void)
{
	setup_on("ramdisk");
}

static void setup_fileio(void)
{
	setup_on("vdisk_fileio");
}

static void teardown(void)
{
	scsi_nexus_unregister(&a.nx);
	scsi_nexus_unregister(&b.nx);
	unlink(dev->bs->filename);
	scsi_dev_destroy(dev);
	scsi_core_shutdown();
}

static struct th_result tur(struct th_nexus *n)
{
	return th_exec(n, 0, (uint8_t[6]){0}, 6, SCSI_DIR_NONE, NULL, 0);
}

static struct th_result inquiry(struct th_nexus *n, uint8_t evpd, uint8_t page, uint8_t *buf)
{
	return th_exec(n, 0, (uint8_t[6]){0x12, evpd, page, 0, 255, 0}, 6, SCSI_DIR_READ, buf, 255);
}

static uint64_t capacity_blocks(struct th_nexus *n)
{
	uint8_t b[32];
	struct th_result r =
	    th_exec(n, 0, (uint8_t[16]){0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32}, 16,
		    SCSI_DIR_READ, b, 32);

	cr_assert_eq(r.status, SAM_STAT_GOOD, "asc %#x", th_asc(&r));
	return get_be64(b) + 1;
}

Test(dev_live, identity_change_is_reported_once_per_nexus, .init = setup, .fini = teardown)
{
	struct scsi_dev_params p = dev->p;
	uint8_t buf[255];
	struct th_result r;

	cr_assert(scsi_dev_identity_equal(dev, &p));
	cr_assert_not(scsi_dev_set_identity(dev, &p), "the same identity changes nothing");
	cr_assert_eq(tur(&a).status, SAM_STAT_GOOD);

	snprintf(p.vendor, sizeof(p.vendor), "NEWVEND");
	snprintf(p.usn, sizeof(p.usn), "serial-2");
	p.rotational = !p.rotational; /* not identity: ignored */
	cr_assert_not(scsi_dev_identity_equal(dev, &p));
	cr_assert(scsi_dev_set_identity(dev, &p));
	cr_assert_neq(dev->p.rotational, p.rotational, "only the identity fields are taken");
	r = tur(&a);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x3f, 0x03);
	r = tur(&b);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x3f, 0x03);
	cr_assert_eq(tur(&a).status, SAM_STAT_GOOD);
	r = inquiry(&a, 0, 0, buf);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(memcmp(buf + 8, "NEWVEND ", 8), 0);
	r = inquiry(&a, 1, 0x80, buf);
	cr_assert_eq(get_be16(buf + 2), 8);
	cr_assert_eq(memcmp(buf + 4, "serial-2", 8), 0);
}

Test(dev_live, alua_state_change, .init = setup, .fini = teardown)
{
	uint16_t ports1[] = {1}, ports2[] = {2};
	struct scsi_tpg t1[2] = {
	    {.group_id = 10, .state = ALUA_ACTIVE_OPTIMIZED, .nports = 1, .rel_tgt_ids = ports1},
	    {.group_id = 20,
	     .state = ALUA_ACTIVE_NONOPTIMIZED,
	     .nports = 1,
	     .rel_tgt_ids = ports2}};
	struct scsi_tpg t2[2] = {t1[0], t1[1]};
	struct scsi_alua_group g1 = {.ntpgs = 2, .tpgs = t1}, g2 = {.ntpgs = 2, .tpgs = t2};
	uint8_t buf[64];
	struct th_result r;

	cr_assert(scsi_dev_set_alua(dev, &g1), "from symmetric access to two groups");
	r = tur(&a);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x06);
	r = tur(&b);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x06);
	t2[0].state = ALUA_STANDBY;
	cr_assert(scsi_dev_set_alua(dev, &g2));
	scsi_srcu_synchronize(); /* g1 could be freed now */
	r = tur(&a);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x06);
	/* a zero-length READ: medium access all the same */
	r = th_exec(&a, 0, (uint8_t[10]){0x28, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 10, SCSI_DIR_NONE, NULL,
		    0);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x0b); /* standby */
	r = th_exec(&a, 0, (uint8_t[12]){0xa3, 0x0a, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0}, 12,
		    SCSI_DIR_READ, buf, 64);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(buf[4] & 0x0f, ALUA_STANDBY, "RTPG: group 10 standby");
	cr_assert_eq(get_be16(buf + 6), 10);
	/* b is on port 2, group 20: its reads go on */
	th_clear_ua(&b, 0);
	r = th_exec(&b, 0, (uint8_t[10]){0x28, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 10, SCSI_DIR_NONE, NULL,
		    0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_not(scsi_dev_set_alua(dev, &g2), "the same states: no condition");
	cr_assert_eq(tur(&b).status, SAM_STAT_GOOD);
	cr_assert(scsi_dev_set_alua(dev, NULL));
	scsi_srcu_synchronize();
}

Test(dev_live, resize_reports_capacity_change, .init = setup, .fini = teardown)
{
	char err[256] = "";
	struct th_result r;

	cr_assert_eq(capacity_blocks(&a), 8192);
	cr_assert_eq(scsi_dev_set_size(dev, 16 << 20, err, sizeof(err)), 0, "%s", err);
	r = tur(&a);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x09);
	r = tur(&b);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x09);
	cr_assert_eq(capacity_blocks(&a), 32768);
	cr_assert_eq(scsi_dev_set_size(dev, 16 << 20, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(tur(&a).status, SAM_STAT_GOOD, "the same size: no condition");
	cr_assert_eq(scsi_dev_set_size(dev, 100, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "live0: a size smaller than one 512-byte block");
	cr_assert_eq(capacity_blocks(&a), 32768);
}

Test(dev_live, fileio_grows_and_resyncs, .init = setup_fileio, .fini = teardown)
{
	char err[256] = "";
	struct th_result r;

	cr_assert_eq(scsi_dev_set_size(dev, 8 << 20, err, sizeof(err)), 0, "%s", err);
	r = tur(&a);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x09);
	r = tur(&b);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x09);
	cr_assert_eq(capacity_blocks(&b) * 512, 8 << 20);
	/* the file grows behind the LU's back; resync takes it, up to the configured size */
	cr_assert_eq(truncate(dev->bs->filename, 12 << 20), 0);
	cr_assert_eq(scsi_dev_set_size(dev, 0, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(capacity_blocks(&a) * 512, 8 << 20, "8 MiB configured");
	dev->size_cfg = 0;
	cr_assert_eq(scsi_dev_set_size(dev, 0, err, sizeof(err)), 0, "%s", err);
	r = tur(&a);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x09);
	cr_assert_eq(capacity_blocks(&a) * 512, 12 << 20);
}

struct resizer {
	uint64_t sizes[2];
	int fails;
};

static void *resize_loop(void *arg)
{
	struct resizer *r = arg;
	char err[256];

	for (int i = 0; i < 2000; i++)
		if (scsi_dev_set_size(dev, r->sizes[i & 1], err, sizeof(err)) != 0)
			r->fails++;
	return NULL;
}

/* The admin socket and LIO's RECONFIG_DEVICE resize from different threads: whichever
 * finishes last, the configured size and the block count are the store's size, never the
 * other resize's. */
Test(dev_live, concurrent_resizes_leave_size_and_blocks_agreeing, .init = setup_fileio,
     .fini = teardown)
{
	struct resizer r1 = {{8 << 20, 12 << 20}, 0}, r2 = {{16 << 20, 20 << 20}, 0};
	pthread_t t1, t2;

	cr_assert_eq(pthread_create(&t1, NULL, resize_loop, &r1), 0);
	cr_assert_eq(pthread_create(&t2, NULL, resize_loop, &r2), 0);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	cr_assert_eq(r1.fails + r2.fails, 0);
	/* the configured size (what a resync keeps and a reload compares) is the one in force */
	cr_assert_eq(dev->size_cfg, dev->bs->size, "configured %llu, store %llu",
		     (unsigned long long)dev->size_cfg, (unsigned long long)dev->bs->size);
	cr_assert_eq(dev->nr_blocks, dev->bs->size >> dev->block_shift,
		     "%llu blocks for a %llu-byte store", (unsigned long long)dev->nr_blocks,
		     (unsigned long long)dev->bs->size);
	th_clear_ua(&a, 0); /* CAPACITY DATA HAS CHANGED */
	cr_assert_eq(capacity_blocks(&a) * 512, dev->bs->size);
}

Test(dev_live, ramdisk_cannot_resize, .init = setup_ramdisk, .fini = teardown)
{
	char err[256] = "";

	cr_assert_eq(scsi_dev_set_size(dev, 8 << 20, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "live0: the size of a ramdisk device cannot change while it is open "
			      "(remove the device and add it again)");
	cr_assert_eq(capacity_blocks(&a), 8192);
	cr_assert_eq(tur(&a).status, SAM_STAT_GOOD);
}

/* What SCST fixes at creation, compared between an LU and a freshly configured one: the first
 * attribute that differs by its SCST name; identity, size and a CD's image are not compared. */
Test(dev_live, setup_differs_names_the_attribute)
{
	struct diag d = {0};
	struct utgt_attr base[] = {{"size_mb", "4", 1}, {"t10_vend_id", "A", 2}};
	struct utgt_attr other_id[] = {{"size_mb", "8", 1}, {"t10_vend_id", "B", 2}};
	struct utgt_attr bsz[] = {{"size_mb", "4", 1}, {"blocksize", "4096", 2}};
	struct utgt_attr bsz512[] = {{"size_mb", "4", 1}, {"blocksize", "512", 2}};
	struct utgt_attr ro[] = {{"size_mb", "4", 1}, {"read_only", "1", 2}};
	struct utgt_attr rot[] = {{"size_mb", "4", 1}, {"rotational", "1", 2}};
	struct utgt_attr pbe[] = {{"size_mb", "4", 1}, {"lb_per_pb_exp", "1", 2}};
	struct scsi_dev *live = scsi_dev_configure("ramdisk", "x", base, 2, &d), *f;
	char err[128];

	cr_assert_eq(scsi_dev_open(live, err, sizeof(err)), 0, "%s", err);
	f = scsi_dev_configure("ramdisk", "x", other_id, 2, &d);
	cr_assert_null(scsi_dev_setup_differs(live, f), "identity and size change live");
	scsi_dev_destroy(f);
	f = scsi_dev_configure("ramdisk", "x", bsz512, 2, &d);
	cr_assert_null(scsi_dev_setup_differs(live, f), "blocksize 512 is the default");
	scsi_dev_destroy(f);
	f = scsi_dev_configure("ramdisk", "x", bsz, 2, &d);
	cr_assert_str_eq(scsi_dev_setup_differs(live, f), "blocksize");
	scsi_dev_destroy(f);
	f = scsi_dev_configure("ramdisk", "x", ro, 2, &d);
	cr_assert_str_eq(scsi_dev_setup_differs(live, f), "read_only");
	scsi_dev_destroy(f);
	f = scsi_dev_configure("ramdisk", "x", rot, 2, &d);
	cr_assert_str_eq(scsi_dev_setup_differs(live, f), "rotational");
	scsi_dev_destroy(f);
	f = scsi_dev_configure("ramdisk", "x", pbe, 2, &d);
	cr_assert_str_eq(scsi_dev_setup_differs(live, f), "lb_per_pb_exp");
	scsi_dev_destroy(f);
	f = scsi_dev_configure("vdisk_nullio", "x", base, 2, &d);
	cr_assert_str_eq(scsi_dev_setup_differs(live, f), "handler");
	scsi_dev_destroy(f);
	scsi_dev_destroy(live);
}

/* vdisk_rbd's several-gateway attributes start the lock thread at open: not changed live. */
Test(dev_live, setup_differs_names_the_rbd_gateway_attributes)
{
	struct diag d = {0};
	struct utgt_attr one[] = {{"pool", "p", 1}, {"image", "i", 2}};
	struct utgt_attr follow[] = {{"pool", "p", 1}, {"image", "i", 2}, {"alua_follow_lock", "1", 3}};
	struct utgt_attr standby[] = {{"pool", "p", 1}, {"image", "i", 2}, {"alua_follow_lock", "1", 3},
				      {"alua_nonowner_state", "standby", 4}};
	struct utgt_attr grace[] = {{"pool", "p", 1}, {"image", "i", 2}, {"alua_follow_lock", "1", 3},
				    {"alua_lock_grace", "30", 4}};
	struct utgt_attr expl[] = {{"pool", "p", 1}, {"image", "i", 2}, {"alua_follow_lock", "1", 3},
				   {"alua_explicit", "1", 4}};
	struct scsi_dev *a = scsi_dev_configure("vdisk_rbd", "r", one, 2, &d);
	struct scsi_dev *b = scsi_dev_configure("vdisk_rbd", "r", follow, 3, &d);
	struct scsi_dev *c = scsi_dev_configure("vdisk_rbd", "r", standby, 4, &d);
	struct scsi_dev *e = scsi_dev_configure("vdisk_rbd", "r", grace, 4, &d);
	struct scsi_dev *x = scsi_dev_configure("vdisk_rbd", "r", expl, 4, &d);

	cr_assert_str_eq(scsi_dev_setup_differs(a, b), "alua_follow_lock");
	cr_assert_str_eq(scsi_dev_setup_differs(b, c), "alua_nonowner_state");
	cr_assert_str_eq(scsi_dev_setup_differs(b, e), "alua_lock_grace");
	cr_assert_str_eq(scsi_dev_setup_differs(b, x), "alua_explicit");
	cr_assert_null(scsi_dev_setup_differs(b, b));
	scsi_dev_destroy(a);
	scsi_dev_destroy(b);
	scsi_dev_destroy(c);
	scsi_dev_destroy(e);
	scsi_dev_destroy(x);
}

/* WCE set from outside (a TCMU device's emulate_write_cache): the caching page says it, every
 * nexus gets MODE PARAMETERS CHANGED once, the same value again raises nothing. */
Test(dev_live, write_cache_from_outside, .init = setup, .fini = teardown)
{
	uint8_t m[64];
	struct th_result r;

	cr_assert(scsi_dev_set_wce(dev, false));
	r = tur(&a);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x01);
	r = tur(&b);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x01);
	r = th_exec(&a, 0, (uint8_t[6]){0x1a, 0x08, 0x08, 0, 64, 0}, 6, SCSI_DIR_READ, m, 64);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(m[4 + 2] & 0x04, 0, "WCE 0 in the caching page");
	cr_assert_not(scsi_dev_set_wce(dev, false));
	cr_assert_eq(tur(&a).status, SAM_STAT_GOOD);
	cr_assert(scsi_dev_set_wce(dev, true));
	r = th_exec(&b, 0, (uint8_t[6]){0x1a, 0x08, 0x08, 0, 64, 0}, 6, SCSI_DIR_READ, m, 64);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x01);
}
