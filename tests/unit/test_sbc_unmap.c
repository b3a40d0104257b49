/* UNMAP on ramdisk and fileio: deallocation (zeros read back, holes in the thin fileio file),
 * parameter list validation before anything is touched, limits, ANCHOR, fully provisioned
 * LUs, MEDIUM ERROR. */
#include "tests/unit/sbc_test.h"

/* Build an UNMAP parameter list of n descriptors (lba[i], cnt[i]) into b; returns its length. */
static uint16_t list(uint8_t *b, unsigned n, const uint64_t *lba, const uint32_t *cnt)
{
	uint16_t len = (uint16_t)(8 + 16 * n);

	memset(b, 0, len);
	put_be16(b, len - 2);
	put_be16(b + 2, (uint16_t)(16 * n));
	for (unsigned i = 0; i < n; i++) {
		put_be64(b + 8 + 16 * i, lba[i]);
		put_be32(b + 8 + 16 * i + 8, cnt[i]);
	}
	return len;
}

static struct th_result unmap(struct sbc_fx *fx, uint8_t b1, const uint8_t *plist, uint16_t plen,
			      uint32_t exp)
{
	uint8_t c[16] = {0x42, b1};

	put_be16(c + 7, plen);
	return fx_exec(fx, c, exp ? SCSI_DIR_WRITE : SCSI_DIR_NONE, (void *)plist, exp);
}

SBC_TEST(unmap, deallocates_ranges)
{
	uint64_t lba[3] = {0, 1000, FX_BLOCKS - 8};
	uint32_t cnt[3] = {256, 24, 8};
	uint8_t b[8 + 16 * 3];
	struct stat st0, st1;
	uint16_t len;

	fx_thin(fx);
	fx_fill(fx, 0, 256, 'a');
	fx_fill(fx, 992, 40, 'a');
	fx_fill(fx, FX_BLOCKS - 16, 16, 'a');
	if (fx_fileio(fx))
		cr_assert_eq(stat(fx->file, &st0), 0);
	len = list(b, 3, lba, cnt);
	cr_assert_eq(unmap(fx, 0, b, len, len).status, SAM_STAT_GOOD);
	fx_expect(fx, 0, 256, 0);
	fx_expect(fx, 992, 8, 'a');
	fx_expect(fx, 1000, 24, 0);
	fx_expect(fx, 1024, 8, 'a');
	fx_expect(fx, FX_BLOCKS - 16, 8, 'a');
	fx_expect(fx, FX_BLOCKS - 8, 8, 0);
	if (fx_fileio(fx)) {
		cr_assert_eq(stat(fx->file, &st1), 0);
		cr_assert_geq(st0.st_blocks - st1.st_blocks, 256 + 24 + 8 - 16,
			      "st_blocks %lld -> %lld", (long long)st0.st_blocks,
			      (long long)st1.st_blocks);
	}
}

SBC_TEST(unmap, empty_and_zero_length_lists)
{
	uint8_t b[8 + 16];
	uint64_t lba = 5;
	uint32_t cnt = 0;
	uint16_t len;

	fx_thin(fx);
	cr_assert_eq(unmap(fx, 0, NULL, 0, 0).status, SAM_STAT_GOOD);
	len = list(b, 0, NULL, NULL);
	cr_assert_eq(unmap(fx, 0, b, len, len).status, SAM_STAT_GOOD);
	fx_fill(fx, 5, 1, 'z');
	len = list(b, 1, &lba, &cnt); /* a descriptor of 0 blocks */
	cr_assert_eq(unmap(fx, 0, b, len, len).status, SAM_STAT_GOOD);
	fx_expect(fx, 5, 1, 'z');
}

SBC_TEST(unmap, bad_lists_change_nothing)
{
	uint64_t lba[2] = {0, FX_BLOCKS - 1};
	uint32_t cnt[2] = {8, 2};
	uint8_t b[8 + 16 * 300];
	struct th_result r;
	uint16_t len;

	fx_thin(fx);
	fx_fill(fx, 0, 8, 'k');
	len = list(b, 2, lba, cnt); /* second descriptor runs off the end */
	r = unmap(fx, 0, b, len, len);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	fx_expect(fx, 0, 8, 'k');

	r = unmap(fx, 0, b, 4, 4); /* shorter than the header */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	cnt[1] = 1;
	len = list(b, 2, lba, cnt);
	put_be16(b + 2, 48); /* claims three descriptors */
	r = unmap(fx, 0, b, len, len);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	r = unmap(fx, 0, b, len, 20); /* the initiator sent less than the CDB says */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	fx_expect(fx, 0, 8, 'k');

	{
		uint64_t l[257];
		uint32_t n[257];

		for (int i = 0; i < 257; i++) {
			l[i] = (uint64_t)i;
			n[i] = 1;
		}
		len = list(b, 257, l, n);
		r = unmap(fx, 0, b, len, len);
		th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
		th_assert_field(r, false, 2, -1);
		len = list(b, 256, l, n); /* the maximum is fine */
		cr_assert_eq(unmap(fx, 0, b, len, len).status, SAM_STAT_GOOD);
		fx_expect(fx, 0, 8, 0);
	}

	r = unmap(fx, 0x01, b, 24, 24); /* ANCHOR */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 1, 0);
}

SBC_TEST(unmap, trailing_partial_descriptor_is_ignored)
{
	uint64_t lba[2] = {0, 8};
	uint32_t cnt[2] = {8, 8};
	uint8_t b[8 + 32];
	uint16_t len;

	fx_thin(fx);
	fx_fill(fx, 0, 16, 'q');
	len = list(b, 2, lba, cnt);
	put_be16(b + 2, 16 + 8); /* the second descriptor is cut in half */
	cr_assert_eq(unmap(fx, 0, b, len, len).status, SAM_STAT_GOOD);
	fx_expect(fx, 0, 8, 0);
	fx_expect(fx, 8, 8, 'q');
}

SBC_TEST(unmap, fully_provisioned_lu_has_no_unmap)
{
	uint64_t lba = 0;
	uint32_t cnt = 1;
	uint8_t b[24];
	struct th_result r;
	uint16_t len = list(b, 1, &lba, &cnt);

	fx->dev->bs->thin_provisioned = false;
	fx_fill(fx, 0, 1, 'f');
	r = unmap(fx, 0, b, len, len);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x20, 0x00);
	fx_expect(fx, 0, 1, 'f');
}

Test(unmap, total_above_maximum_lba_count)
{
	struct sbc_fx fx;
	struct sbc_limits lim;
	uint64_t lba[2] = {0, 0};
	uint32_t cnt[2];
	uint8_t b[40];
	struct th_result r;
	uint16_t len;

	fx_init_bs(&fx, "ramdisk", 512, 2ull << 20); /* 1 GiB, nothing touched */
	fx_thin(&fx);
	sbc_get_limits(fx.dev, &lim);
	cnt[0] = lim.max_unmap_lba_count / 2 + 1;
	cnt[1] = lim.max_unmap_lba_count / 2 + 1;
	len = list(b, 2, lba, cnt);
	r = unmap(&fx, 0, b, len, len);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	th_assert_field(r, false, 8 + 16 + 8, -1);
	fx_fini(&fx);
}

Test(unmap, failing_store_is_medium_error)
{
	struct sbc_fx fx;
	uint64_t lba = 0;
	uint32_t cnt = 4;
	uint8_t b[24];
	struct th_result r;
	uint16_t len;

	fx_init_ops(&fx, &failing_ops);
	len = list(b, 1, &lba, &cnt);
	r = unmap(&fx, 0, b, len, len);
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x0c, 0x00);
	fx_fini(&fx);
}
