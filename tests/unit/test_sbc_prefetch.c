/* PRE-FETCH (10) and (16): GOOD for any range on the medium (no cache of our own, see
 * scsi/sbc_prefetch.c), LBA OUT OF RANGE otherwise, length 0 = to the end. */
#include "tests/unit/sbc_test.h"

SBC_TEST(prefetch, in_range_is_good)
{
	uint8_t c[16];
	struct th_result r;

	for (uint32_t n = 1; n <= 256; n *= 4) {
		cdb10(c, 0x34, 0, 0, (uint16_t)n);
		r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
		cr_assert_eq(r.status, SAM_STAT_GOOD, "PRE-FETCH(10) of %u blocks", n);
		cdb16(c, 0x90, 0x02, FX_BLOCKS - n, n); /* IMMED */
		r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
		cr_assert_eq(r.status, SAM_STAT_GOOD, "PRE-FETCH(16) of %u blocks", n);
	}
	cdb10(c, 0x34, 0, 100, 0); /* to the end */
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
	cdb16(c, 0x90, 0, FX_BLOCKS, 0); /* at the end, nothing */
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
}

SBC_TEST(prefetch, beyond_the_end_is_lba_out_of_range)
{
	uint8_t c[16];
	struct th_result r;

	cdb10(c, 0x34, 0, FX_BLOCKS - 1, 2);
	r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	cdb16(c, 0x90, 0, FX_BLOCKS + 1, 0);
	r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	cdb16(c, 0x90, 0, UINT64_MAX, 1);
	r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
}
