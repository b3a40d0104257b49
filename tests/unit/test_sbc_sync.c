/* SYNCHRONIZE CACHE (10) and (16): a real flush of the store (seen by a recording store),
 * none with nv_cache, IMMED, range checks, flush errors as MEDIUM ERROR. */
#include "tests/unit/sbc_test.h"

SBC_TEST(sync, flushes_and_checks_the_range)
{
	uint8_t c[16];
	struct th_result r;

	fx_fill(fx, 0, 8, 0x11);
	cdb10(c, 0x35, 0, 0, 0); /* whole medium */
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
	cdb16(c, 0x91, 0, 10, 20);
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
	cdb16(c, 0x91, 0, FX_BLOCKS - 1, 2);
	r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	cdb10(c, 0x35, 0, FX_BLOCKS + 1, 0);
	r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	fx_expect(fx, 0, 8, 0x11);
}

static bool flushed_twice(void *arg)
{
	(void)arg;
	return atomic_load(&spy.flushes) >= 2;
}

Test(sync, flush_reaches_the_store_unless_nv_cache)
{
	struct sbc_fx fx;
	uint8_t c[16];

	fx_init_ops(&fx, &spy_ops);
	cdb10(c, 0x35, 0, 0, 0);
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
	cr_assert_eq(atomic_load(&spy.flushes), 1);
	cdb16(c, 0x91, 0x02, 0, 0); /* IMMED: the flush may finish after the status */
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
	cr_assert(fx_poll(flushed_twice, NULL, 5));
	fx.dev->bs->nv_cache = true;
	cdb10(c, 0x35, 0, 0, 0);
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
	cr_assert_eq(atomic_load(&spy.flushes), 2);
	fx_fini(&fx);
}

Test(sync, failing_flush_is_medium_error)
{
	struct sbc_fx fx;
	uint8_t c[16];
	struct th_result r;

	fx_init_ops(&fx, &failing_ops);
	cdb10(c, 0x35, 0, 0, 0);
	r = fx_exec(&fx, c, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x0c, 0x00);
	cdb10(c, 0x35, 0x02, 0, 0); /* IMMED: GOOD, the failure is only logged */
	r = fx_exec(&fx, c, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	fx_fini(&fx);
}
