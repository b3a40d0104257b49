/* scsi/scsi_lunmap.c: a nexus's LUN map changed live.  An added LUN and a removed one give
 * REPORTED LUNS DATA HAS CHANGED on the LUs the nexus keeps (and nothing to another nexus);
 * the removed LUN answers LOGICAL UNIT NOT SUPPORTED, never another LU's data; a command in
 * flight on the old map completes with its own data, and the grace period that lets the old
 * table go waits for it; the LU that left drops the nexus's PREVENT and the session count. */
#include <criterion/criterion.h>

#include "gate_store.h"
#include "scsi_harness.h"

#include "scsi/scsi_srcu.h"

static struct scsi_dev *d0, *d1;
static struct th_nexus a, b;

static void setup(void)
{
	struct scsi_dev *devs[2];

	d0 = th_make_dev("ramdisk", "lm0", 1 << 20, 512);
	d1 = th_make_dev("ramdisk", "lm1", 1 << 20, 512);
	devs[0] = d0;
	devs[1] = d1;
	th_nexus_init(&a, "iqn.2026-12.org.utgt:a", 1, devs, 2);
	th_nexus_init(&b, "iqn.2026-12.org.utgt:b", 1, devs, 2);
	for (int lun = 0; lun < 2; lun++) {
		th_clear_ua(&a, lun);
		th_clear_ua(&b, lun);
	}
}

static void teardown(void)
{
	scsi_nexus_unregister(&a.nx);
	scsi_nexus_unregister(&b.nx);
	scsi_dev_destroy(d0);
	scsi_dev_destroy(d1);
	scsi_core_shutdown();
}

static struct th_result tur(struct th_nexus *n, uint64_t lun)
{
	return th_exec(n, lun, (uint8_t[6]){0}, 6, SCSI_DIR_NONE, NULL, 0);
}

static unsigned report_luns(struct th_nexus *n, uint64_t *out, unsigned max)
{
	uint8_t b[64];
	struct th_result r = th_exec(n, 0, (uint8_t[12]){0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0},
				     12, SCSI_DIR_READ, b, sizeof(b));
	unsigned cnt;

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cnt = get_be32(b) / 8;
	for (unsigned i = 0; i < cnt && i < max; i++)
		out[i] = scsi_lun_decode(b + 8 + 8 * i);
	return cnt;
}

Test(lunmap, same_map_in_a_new_table_is_quiet, .init = setup, .fini = teardown)
{
	struct scsi_lun_entry e[2] = {{.lun = 0, .dev = d0}, {.lun = 1, .dev = d1}};
	struct scsi_lun_table t = {2, e};

	cr_assert_not(scsi_nexus_set_luns(&a.nx, &t));
	cr_assert_eq(a.nx.luns, &t, "the new table is published all the same");
	cr_assert_eq(tur(&a, 0).status, SAM_STAT_GOOD, "no UNIT ATTENTION");
	cr_assert_eq(tur(&a, 1).status, SAM_STAT_GOOD);
	cr_assert_eq(d0->stats.nexuses, 2);
	scsi_nexus_set_luns(&a.nx, &a.table); /* t is on this stack: not for teardown */
}

Test(lunmap, removed_lun_reports_change_then_lu_not_supported, .init = setup, .fini = teardown)
{
	struct scsi_lun_entry e[1] = {{.lun = 0, .dev = d0}};
	struct scsi_lun_table t = {1, e};
	uint64_t luns[4];
	struct th_result r;

	/* a keeps a PREVENT on LU 1, which it is about to lose */
	d1->p.removable = true;
	r = th_exec(&a, 1, (uint8_t[6]){0x1e, 0, 0, 0, 1, 0}, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(d1->prevent, 1);
	cr_assert_eq(d1->stats.nexuses, 2);

	cr_assert(scsi_nexus_set_luns(&a.nx, &t));
	r = tur(&a, 1);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x25, 0x00);
	r = tur(&a, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x3f, 0x0e);
	cr_assert_eq(tur(&a, 0).status, SAM_STAT_GOOD, "reported once");
	cr_assert_eq(report_luns(&a, luns, 4), 1);
	cr_assert_eq(luns[0], 0);
	/* a read of the old LUN never reaches another LU */
	{
		uint8_t buf[512];
		r = th_exec(&a, 1, (uint8_t[10]){0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0}, 10,
			    SCSI_DIR_READ, buf, sizeof(buf));
		th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x25, 0x00);
		cr_assert_eq(r.data_len, 0);
	}
	cr_assert_eq(d1->prevent, 0, "the lost LU forgets a's PREVENT");
	cr_assert_eq(d1->stats.nexuses, 1);
	cr_assert_eq(d0->stats.nexuses, 2);
	/* b is untouched */
	cr_assert_eq(tur(&b, 0).status, SAM_STAT_GOOD);
	cr_assert_eq(tur(&b, 1).status, SAM_STAT_GOOD);
	cr_assert_eq(report_luns(&b, luns, 4), 2);
	scsi_nexus_set_luns(&a.nx, &a.table); /* back to the fixture's table for teardown */
}

Test(lunmap, added_lun_appears_with_its_unit_attentions, .init = setup, .fini = teardown)
{
	struct scsi_dev *d2 = th_make_dev("ramdisk", "lm2", 2 << 20, 512);
	struct scsi_lun_entry e[3] = {
	    {.lun = 0, .dev = d0}, {.lun = 1, .dev = d1}, {.lun = 5, .dev = d2, .read_only = true}};
	struct scsi_lun_table t = {3, e};
	uint64_t luns[4];
	struct th_result r;

	cr_assert(scsi_nexus_set_luns(&a.nx, &t));
	r = tur(&a, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x3f, 0x0e);
	r = tur(&a, 1);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x3f, 0x0e);
	/* the new LU: first its power-on condition, then the map change */
	r = tur(&a, 5);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x00);
	r = tur(&a, 5);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x3f, 0x0e);
	cr_assert_eq(tur(&a, 5).status, SAM_STAT_GOOD);
	r = th_exec(&a, 5, (uint8_t[10]){0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0}, 10, SCSI_DIR_WRITE,
		    (uint8_t[512]){0}, 512);
	th_assert_sense(r, SK_DATA_PROTECT, 0x27, 0x00);
	cr_assert_eq(report_luns(&a, luns, 4), 3);
	cr_assert_eq(luns[2], 5);
	cr_assert_eq(d2->stats.nexuses, 1);
	cr_assert_eq(tur(&b, 0).status, SAM_STAT_GOOD, "b saw no change");
	scsi_nexus_set_luns(&a.nx, &a.table);
	cr_assert_eq(d2->stats.nexuses, 0);
	scsi_dev_destroy(d2);
}

struct sync_thr {
	pthread_t t;
	bool done;
};

static void *sync_main(void *p)
{
	struct sync_thr *s = p;

	scsi_srcu_synchronize();
	__atomic_store_n(&s->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* A READ in flight on LU 1 when LU 1 leaves the map: it completes with LU 1's data, and the
 * grace period after which the old table (and LU 1) may go ends only after it. */
Test(lunmap, in_flight_command_finishes_on_its_lu_before_the_grace_period_ends, .init = setup,
     .fini = teardown)
{
	struct scsi_dev *gd = gate_make_dev("gated", 1 << 20), *devs[2] = {d0, gd};
	struct scsi_lun_entry e[1] = {{.lun = 0, .dev = d0}};
	struct scsi_lun_table t = {1, e};
	struct th_nexus n;
	struct async_task *rd;
	struct sync_thr s = {0};
	struct th_result r;

	memset(g.mem, 0x5a, 512);
	th_nexus_init(&n, "iqn.2026-12.org.utgt:n", 2, devs, 2);
	th_clear_ua(&n, 0);
	th_clear_ua(&n, 1);
	rd = async_task_new(&n, 1, (uint8_t[10]){0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0}, 10,
			    SCSI_DIR_READ, NULL, 512, 7);
	async_task_start(rd);
	gate_wait_reads(1);
	cr_assert(scsi_nexus_set_luns(&n.nx, &t));
	cr_assert_eq(pthread_create(&s.t, NULL, sync_main, &s), 0);
	cr_assert_not(__atomic_load_n(&s.done, __ATOMIC_ACQUIRE),
		      "the grace period waits for the READ on the old map");
	gate_set(true);
	async_task_wait(rd);
	pthread_join(s.t, NULL);
	cr_assert(s.done);
	cr_assert_eq(rd->t.status, SAM_STAT_GOOD);
	cr_assert_eq(rd->buf[0], 0x5a, "LU 1's data");
	cr_assert_eq(rd->buf[511], 0x5a);
	free(rd);
	r = tur(&n, 1);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x25, 0x00);
	scsi_nexus_unregister(&n.nx);
	scsi_dev_destroy(gd);
}

Test(lunmap, tables_equal)
{
	struct scsi_dev x, y;
	struct scsi_lun_entry e1[2] = {{0, &x, false}, {1, &y, false}};
	struct scsi_lun_entry e2[2] = {{0, &x, false}, {1, &y, false}};
	struct scsi_lun_table t1 = {2, e1}, t2 = {2, e2}, empty = {0, NULL};

	cr_assert(scsi_lun_tables_equal(&t1, &t2));
	cr_assert(scsi_lun_tables_equal(NULL, &empty));
	e2[1].read_only = true;
	cr_assert_not(scsi_lun_tables_equal(&t1, &t2));
	e2[1].read_only = false;
	e2[1].dev = &x;
	cr_assert_not(scsi_lun_tables_equal(&t1, &t2));
	e2[1].dev = &y;
	e2[1].lun = 2;
	cr_assert_not(scsi_lun_tables_equal(&t1, &t2));
	t2.n = 1;
	cr_assert_not(scsi_lun_tables_equal(&t1, &t2));
}
