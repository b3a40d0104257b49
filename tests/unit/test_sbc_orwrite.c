/* ORWRITE(16) on ramdisk and fileio: medium OR data-out, limits, atomicity against WRITEs. */
#include "tests/unit/sbc_test.h"

SBC_TEST(orwrite, ors_data_into_the_medium)
{
	uint8_t w[3 * 512], rd[3 * 512], c[16];
	struct th_result r;

	fx_fill(fx, 50, 3, 0x0f);
	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (uint8_t)(i & 0xf0);
	cdb16(c, 0x8b, 0, 50, 3);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, w, sizeof(w));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(fx_read(fx, 50, 3, rd).status, SAM_STAT_GOOD);
	for (size_t i = 0; i < sizeof(w); i++)
		cr_assert_eq(rd[i], (uint8_t)((i & 0xf0) | 0x0f), "byte %zu", i);
	fx_expect(fx, 49, 1, 0);
	fx_expect(fx, 53, 1, 0);
}

SBC_TEST(orwrite, checks)
{
	uint8_t w[2 * 512] = {0}, c[16];
	struct sbc_limits lim;
	struct th_result r;

	cdb16(c, 0x8b, 0, FX_BLOCKS - 1, 2);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, w, sizeof(w));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	cdb16(c, 0x8b, 0xe0, 0, 2); /* ORPROTECT */
	r = fx_exec(fx, c, SCSI_DIR_WRITE, w, sizeof(w));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 1, 7);
	sbc_get_limits(fx->dev, &lim);
	cdb16(c, 0x8b, 0, 0, lim.max_xfer_blocks + 1);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 10, -1);
	cdb16(c, 0x8b, 0, 0, 0);
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
}

Test(orwrite, failing_store_is_medium_error)
{
	struct sbc_fx fx;
	uint8_t c[16], b[512] = {0};

	fx_init_ops(&fx, &failing_ops);
	cdb16(c, 0x8b, 0, 0, 1);
	struct th_result r = fx_exec(&fx, c, SCSI_DIR_WRITE, b, 512);
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x11, 0x00); /* the read half fails first */
	fx_fini(&fx);
}

/* The read-OR-write happens under an exclusive lock: a WRITE parked in the store keeps the
 * ORWRITE from reading, so the OR applies to the WRITE's data. */
Test(orwrite, waits_for_write_in_flight)
{
	struct sbc_fx fx;
	struct fx_job wr, orw;
	uint8_t wc[16], oc[16], wb[512], ob[512];

	fx_init_ops(&fx, &gate_ops);
	memset(wb, 0xa0, sizeof(wb));
	memset(ob, 0x05, sizeof(ob));
	cdb10(wc, 0x2a, 0, 4, 1);
	gate_arm(BS_WRITE);
	fx_job_start(&wr, &fx, wc, SCSI_DIR_WRITE, wb, 512);
	cr_assert(gate_wait_parked(5));
	cdb16(oc, 0x8b, 0, 4, 1);
	fx_job_start(&orw, &fx, oc, SCSI_DIR_WRITE, ob, 512);
	for (double end = fx_now() + 5; sbc_rangelock_waiters(fx.dev) == 0 && fx_now() < end;)
		usleep(1000);
	cr_assert_eq(sbc_rangelock_waiters(fx.dev), 1);
	gate_release();
	cr_assert_eq(fx_job_join(&wr).status, SAM_STAT_GOOD);
	cr_assert_eq(fx_job_join(&orw).status, SAM_STAT_GOOD);
	fx_expect(&fx, 4, 1, 0xa5);
	fx_fini(&fx);
}
