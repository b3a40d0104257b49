/* Per-nexus and per-LU counters (scsi_stats.c), through the real core with a ramdisk LU. */
#include <criterion/criterion.h>

#include "tests/unit/scsi_harness.h"

static const uint8_t tur[6] = {0};

static void rw10(uint8_t *cdb, uint8_t op, uint32_t lba, uint16_t blocks)
{
	memset(cdb, 0, 10);
	cdb[0] = op;
	cdb[2] = (uint8_t)(lba >> 24);
	cdb[3] = (uint8_t)(lba >> 16);
	cdb[4] = (uint8_t)(lba >> 8);
	cdb[5] = (uint8_t)lba;
	cdb[7] = (uint8_t)(blocks >> 8);
	cdb[8] = (uint8_t)blocks;
}

static struct scsi_io_stats snap(const struct scsi_io_stats *live)
{
	struct scsi_io_stats s;
	scsi_io_stats_read(live, &s);
	return s;
}

Test(scsi_stats, nexus_and_lu_count_commands_bytes_and_errors)
{
	struct scsi_dev *dev = th_make_dev("ramdisk", "st0", 1 << 20, 512);
	struct th_nexus n;
	uint8_t cdb[10], buf[8192] = {0}, inq[6] = {0x12, 0, 0, 0, 96, 0};
	struct scsi_io_stats ns, ds;

	th_nexus_init(&n, "iqn.2026-12.org.utgt:stats", 1, &dev, 1);
	cr_assert_eq(snap(&dev->stats).nexuses, 1, "the LU counts the registered nexus");
	th_clear_ua(&n, 0);
	struct scsi_io_stats base_n = snap(&n.nx.stats), base_d = snap(&dev->stats);

	rw10(cdb, 0x2a, 0, 16); /* WRITE(10) 8 KiB */
	cr_assert_eq(th_exec(&n, 0, cdb, 10, SCSI_DIR_WRITE, buf, 8192).status, 0);
	rw10(cdb, 0x28, 0, 8); /* READ(10) 4 KiB */
	cr_assert_eq(th_exec(&n, 0, cdb, 10, SCSI_DIR_READ, buf, 4096).status, 0);
	rw10(cdb, 0x28, 4096, 1); /* past the end: CHECK CONDITION, nothing moves */
	cr_assert_eq(th_exec(&n, 0, cdb, 10, SCSI_DIR_READ, buf, 512).status,
		     SAM_STAT_CHECK_CONDITION);
	/* INQUIRY: data-in for the nexus, not a medium read for the LU */
	cr_assert_eq(th_exec(&n, 0, inq, 6, SCSI_DIR_READ, buf, 96).status, 0);
	cr_assert_eq(th_exec(&n, 0, tur, 6, SCSI_DIR_NONE, NULL, 0).status, 0);

	ns = snap(&n.nx.stats);
	ds = snap(&dev->stats);
	cr_assert_eq(ns.cmds - base_n.cmds, 5);
	cr_assert_eq(ns.write_cmds - base_n.write_cmds, 1);
	cr_assert_eq(ns.write_bytes - base_n.write_bytes, 8192);
	cr_assert_eq(ns.read_cmds - base_n.read_cmds, 3);
	cr_assert_eq(ns.read_bytes - base_n.read_bytes, 4096 + 96);
	cr_assert_eq(ns.errors - base_n.errors, 1);
	cr_assert_eq(ds.cmds - base_d.cmds, 5);
	cr_assert_eq(ds.read_cmds - base_d.read_cmds, 2, "READ(10) twice, not INQUIRY");
	cr_assert_eq(ds.read_bytes - base_d.read_bytes, 4096);
	cr_assert_eq(ds.write_cmds - base_d.write_cmds, 1);
	cr_assert_eq(ds.write_bytes - base_d.write_bytes, 8192);
	cr_assert_eq(ds.errors - base_d.errors, 1);

	scsi_nexus_count_tmf(&n.nx);
	cr_assert_eq(snap(&n.nx.stats).tmfs, 1);
	scsi_nexus_unregister(&n.nx);
	cr_assert_eq(snap(&dev->stats).nexuses, 0, "unregistering gives the count back");
	scsi_dev_destroy(dev);
}

Test(scsi_stats, an_lu_at_two_luns_counts_one_nexus)
{
	struct scsi_dev *dev = th_make_dev("ramdisk", "st1", 1 << 20, 512);
	struct scsi_dev *devs[2] = {dev, dev};
	struct th_nexus a, b;

	th_nexus_init(&a, "iqn.2026-12.org.utgt:a", 1, devs, 2);
	th_nexus_init(&b, "iqn.2026-12.org.utgt:b", 1, devs, 1);
	cr_assert_eq(snap(&dev->stats).nexuses, 2);
	scsi_nexus_unregister(&a.nx);
	scsi_nexus_unregister(&b.nx);
	cr_assert_eq(snap(&dev->stats).nexuses, 0);
	scsi_dev_destroy(dev);
}

Test(scsi_stats, sum_adds_every_field)
{
	struct scsi_io_stats acc = {1, 2, 3, 4, 5, 6, 7, 8};
	const struct scsi_io_stats add = {10, 20, 30, 40, 50, 60, 70, 80};

	scsi_io_stats_sum(&acc, &add);
	cr_assert_eq(acc.cmds, 11);
	cr_assert_eq(acc.read_cmds, 22);
	cr_assert_eq(acc.write_cmds, 33);
	cr_assert_eq(acc.read_bytes, 44);
	cr_assert_eq(acc.write_bytes, 55);
	cr_assert_eq(acc.errors, 66);
	cr_assert_eq(acc.tmfs, 77);
	cr_assert_eq(acc.nexuses, 88);
}

/* Writers on several threads, a reader at the same time: no count is lost. */
static struct scsi_dev *cdev;
static struct th_nexus cn;

static void *writer(void *arg)
{
	uint8_t cdb[10], buf[512] = {0};
	(void)arg;
	for (int i = 0; i < 200; i++) {
		rw10(cdb, 0x2a, (uint32_t)i, 1);
		cr_assert_eq(th_exec(&cn, 0, cdb, 10, SCSI_DIR_WRITE, buf, 512).status, 0);
	}
	return NULL;
}

Test(scsi_stats, concurrent_completions_are_all_counted)
{
	pthread_t t[4];
	struct scsi_io_stats before;

	cdev = th_make_dev("ramdisk", "st2", 1 << 20, 512);
	th_nexus_init(&cn, "iqn.2026-12.org.utgt:conc", 1, &cdev, 1);
	th_clear_ua(&cn, 0);
	before = snap(&cn.nx.stats);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, writer, NULL);
	for (int k = 0; k < 100; k++) { /* a reader never sees a count go down */
		struct scsi_io_stats a = snap(&cn.nx.stats), b = snap(&cn.nx.stats);
		cr_assert_geq(b.write_bytes, a.write_bytes);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	struct scsi_io_stats after = snap(&cn.nx.stats);
	cr_assert_eq(after.write_cmds - before.write_cmds, 800);
	cr_assert_eq(after.write_bytes - before.write_bytes, 800 * 512);
	cr_assert_eq(snap(&cdev->stats).write_bytes, 800 * 512);
	scsi_nexus_unregister(&cn.nx);
	scsi_dev_destroy(cdev);
}
