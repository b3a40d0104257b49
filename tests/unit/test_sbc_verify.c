/* VERIFY 10/12/16 (BYTCHK 0, 1, 3) and WRITE AND VERIFY 10/12/16 on ramdisk and fileio. */
#include "tests/unit/sbc_test.h"

static void mixed(uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(i * 31 + 7);
}

SBC_TEST(verify, bytchk0_is_a_medium_check)
{
	uint8_t c[16];
	struct th_result r;

	cdb10(c, 0x2f, 0, 0, 100);
	r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_NONE);
	cdb16(c, 0x8f, 0, 0, FX_BLOCKS); /* the whole LU, beyond any transfer limit: fine */
	r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cdb12(c, 0xaf, 0, FX_BLOCKS - 1, 2);
	r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	cdb10(c, 0x2f, 0, 0, 0); /* zero blocks */
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
}

SBC_TEST(verify, bytchk1_compares_and_reports_the_offset)
{
	uint8_t w[8 * 512], c[16];
	uint64_t info;
	struct th_result r;

	mixed(w, sizeof(w));
	cr_assert_eq(fx_write(fx, 200, 8, w).status, SAM_STAT_GOOD);
	cdb10(c, 0x2f, 0x02, 200, 8);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, w, sizeof(w));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_NONE);
	for (size_t off = 0; off < sizeof(w); off += 1111) {
		w[off] ^= 'X';
		cdb16(c, 0x8f, 0x02, 200, 8);
		r = fx_exec(fx, c, SCSI_DIR_WRITE, w, sizeof(w));
		th_assert_sense(r, SK_MISCOMPARE, 0x1d, 0x00);
		cr_assert(th_info(&r, &info));
		cr_assert_eq(info, off, "offset %zu reported as %llu", off, (unsigned long long)info);
		w[off] ^= 'X';
	}
	/* VERIFY(12) as well, with the difference in the last byte */
	w[sizeof(w) - 1] ^= 1;
	cdb12(c, 0xaf, 0x02, 200, 8);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, w, sizeof(w));
	th_assert_sense(r, SK_MISCOMPARE, 0x1d, 0x00);
	cr_assert(th_info(&r, &info));
	cr_assert_eq(info, sizeof(w) - 1);
}

SBC_TEST(verify, bytchk3_compares_one_block_with_every_block)
{
	uint8_t blk[512], c[16];
	uint64_t info;
	struct th_result r;

	fx_fill(fx, 10, 20, 0x77);
	memset(blk, 0x77, sizeof(blk));
	cdb10(c, 0x2f, 0x06, 10, 20);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, blk, 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_NONE);
	fx_fill(fx, 25, 1, 0x78);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, blk, 512);
	th_assert_sense(r, SK_MISCOMPARE, 0x1d, 0x00);
	cr_assert(th_info(&r, &info));
	cr_assert_eq(info, 15 * 512, "block 15 of the range differs from byte 0");
}

SBC_TEST(verify, reserved_bytchk_and_protection_are_refused)
{
	uint8_t c[16], b[512] = {0};
	struct th_result r;

	cdb10(c, 0x2f, 0x04, 0, 1); /* BYTCHK 10b */
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 512);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 1, 2);
	cdb10(c, 0x2f, 0x20, 0, 1); /* VRPROTECT */
	r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 1, 7);
}

SBC_TEST(verify, bytchk1_with_short_data_compares_what_was_sent)
{
	uint8_t w[4 * 512], c[16];
	struct th_result r;

	mixed(w, sizeof(w));
	cr_assert_eq(fx_write(fx, 0, 4, w).status, SAM_STAT_GOOD);
	cdb10(c, 0x2f, 0x02, 0, 4);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, w, 2 * 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 2 * 512);
	w[100] ^= 1;
	r = fx_exec(fx, c, SCSI_DIR_WRITE, w, 2 * 512);
	th_assert_sense(r, SK_MISCOMPARE, 0x1d, 0x00);
}

Test(verify, failing_store_is_medium_error)
{
	struct sbc_fx fx;
	uint8_t c[16], b[512] = {0};
	struct th_result r;

	fx_init_ops(&fx, &failing_ops);
	cdb10(c, 0x2f, 0, 0, 1);
	r = fx_exec(&fx, c, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x11, 0x00);
	cdb10(c, 0x2e, 0x02, 0, 1);
	r = fx_exec(&fx, c, SCSI_DIR_WRITE, b, 512);
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x0c, 0x00);
	fx_fini(&fx);
}

/* ---- WRITE AND VERIFY ---- */

SBC_TEST(write_verify, writes_then_verifies)
{
	uint8_t w[5 * 512], rd[5 * 512], c[16];
	struct th_result r;

	mixed(w, sizeof(w));
	cdb10(c, 0x2e, 0x02, 300, 5); /* BYTCHK 1 */
	r = fx_exec(fx, c, SCSI_DIR_WRITE, w, sizeof(w));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(fx_read(fx, 300, 5, rd).status, SAM_STAT_GOOD);
	cr_assert(!memcmp(w, rd, sizeof(w)));

	memset(w, 0x42, sizeof(w));
	cdb12(c, 0xae, 0, 300, 5); /* BYTCHK 0 */
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_WRITE, w, sizeof(w)).status, SAM_STAT_GOOD);
	fx_expect(fx, 300, 5, 0x42);

	memset(w, 0x43, sizeof(w));
	cdb16(c, 0x8e, 0x02, FX_BLOCKS - 5, 5);
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_WRITE, w, sizeof(w)).status, SAM_STAT_GOOD);
	fx_expect(fx, FX_BLOCKS - 5, 5, 0x43);
}

SBC_TEST(write_verify, checks)
{
	uint8_t w[2 * 512] = {0}, c[16];
	struct th_result r;

	cdb16(c, 0x8e, 0, FX_BLOCKS - 1, 2);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, w, sizeof(w));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	cdb10(c, 0x2e, 0x40, 0, 2); /* WRPROTECT */
	r = fx_exec(fx, c, SCSI_DIR_WRITE, w, sizeof(w));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 1, 7);
	cdb10(c, 0x2e, 0x04, 0, 2); /* reserved BYTCHK bit */
	r = fx_exec(fx, c, SCSI_DIR_WRITE, w, sizeof(w));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 1, 2);
	cdb10(c, 0x2e, 0, 0, 0);
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
	/* short data: whole blocks sent are written, overflow reported */
	fx_fill(fx, 0, 2, 'a');
	memset(w, 'b', sizeof(w));
	cdb10(c, 0x2e, 0x02, 0, 2);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, w, 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 512);
	fx_expect(fx, 0, 1, 'b');
	fx_expect(fx, 1, 1, 'a');
}

Test(write_verify, write_is_durable)
{
	struct sbc_fx fx;
	uint8_t c[16], b[512] = {0};

	fx_init_ops(&fx, &spy_ops);
	cdb10(c, 0x2e, 0, 0, 1);
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_WRITE, b, 512).status, SAM_STAT_GOOD);
	cr_assert(atomic_load(&spy.last_fua), "verify must read back what reached the medium");
	fx_fini(&fx);
}
