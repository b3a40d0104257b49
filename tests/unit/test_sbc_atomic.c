/* WRITE ATOMIC(16) on ramdisk and fileio: data, limits from Block Limits, range, protection,
 * FUA, and exclusion of other commands on its range. */
#include "tests/unit/sbc_test.h"

static void wa_cdb(uint8_t *c, uint64_t lba, uint16_t n, uint8_t b1)
{
	memset(c, 0, 16);
	c[0] = 0x9c;
	c[1] = b1;
	put_be64(c + 2, lba);
	put_be16(c + 12, n);
}

SBC_TEST(atomic, writes_like_write)
{
	uint8_t c[16], *b = malloc(256 * 512);
	struct th_result r;

	memset(b, 0xa6, 256 * 512);
	for (uint16_t n = 1; n <= 256; n *= 2) {
		wa_cdb(c, FX_BLOCKS - n, n, 0);
		r = fx_exec(fx, c, SCSI_DIR_WRITE, b, n * 512u);
		cr_assert_eq(r.status, SAM_STAT_GOOD, "%u blocks", n);
		fx_expect(fx, FX_BLOCKS - n, n, 0xa6);
	}
	wa_cdb(c, 0, 0, 0);
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
	free(b);
}

SBC_TEST(atomic, limits_and_checks)
{
	struct sbc_limits lim;
	uint8_t c[16], b[1024] = {0};
	struct th_result r;

	sbc_get_limits(fx->dev, &lim);
	wa_cdb(c, 0, (uint16_t)(lim.max_atomic_blocks + 1), 0);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 12, -1);
	wa_cdb(c, FX_BLOCKS - 1, 2, 0);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 1024);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	/* off the end and too long: the range is reported (libiscsi BeyondEol) */
	wa_cdb(c, FX_BLOCKS - 10, (uint16_t)(lim.max_atomic_blocks + 1), 0);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	wa_cdb(c, 0x8000000000000000ull, 1, 0);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 512);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	wa_cdb(c, 0, 2, 0x20); /* WRPROTECT */
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 1024);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 1, 7);
}

Test(atomic, fua_and_exclusion)
{
	struct sbc_fx fx;
	struct fx_job wr, wa;
	uint8_t wc[16], ac[16], wb[512], ab[1024];

	fx_init_ops(&fx, &gate_ops);
	memset(wb, 'w', sizeof(wb));
	memset(ab, 'A', sizeof(ab));
	cdb10(wc, 0x2a, 0, 11, 1);
	gate_arm(BS_WRITE);
	fx_job_start(&wr, &fx, wc, SCSI_DIR_WRITE, wb, 512);
	cr_assert(gate_wait_parked(5));
	wa_cdb(ac, 10, 2, 0x08); /* FUA, overlapping the parked WRITE */
	fx_job_start(&wa, &fx, ac, SCSI_DIR_WRITE, ab, 1024);
	for (double end = fx_now() + 5; sbc_rangelock_waiters(fx.dev) == 0 && fx_now() < end;)
		usleep(1000);
	cr_assert_eq(sbc_rangelock_waiters(fx.dev), 1, "WRITE ATOMIC did not wait");
	gate_release();
	cr_assert_eq(fx_job_join(&wr).status, SAM_STAT_GOOD);
	cr_assert_eq(fx_job_join(&wa).status, SAM_STAT_GOOD);
	cr_assert_eq(atomic_load(&gate.nlog), 2);
	cr_assert_eq(gate.log[1].first, 'A', "the atomic write came second");
	fx_expect(&fx, 10, 2, 'A');
	fx_fini(&fx);
}
