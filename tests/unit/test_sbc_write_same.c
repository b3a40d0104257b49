/* WRITE SAME (10) and (16) on ramdisk and fileio: replication, "to the end", limits, ANCHOR,
 * NDOB, Data-Out size, the UNMAP bit (holes really punched in the thin fileio: st_blocks),
 * long ranges in chunks, MEDIUM ERROR. */
#include "tests/unit/sbc_test.h"

static struct th_result ws(struct sbc_fx *fx, uint8_t op, uint8_t b1, uint64_t lba, uint32_t n,
			   const uint8_t *blk, uint32_t len)
{
	uint8_t c[16];

	if (op == 0x41)
		cdb10(c, op, b1, (uint32_t)lba, (uint16_t)n);
	else
		cdb16(c, op, b1, lba, n);
	return fx_exec(fx, c, len ? SCSI_DIR_WRITE : SCSI_DIR_NONE, (void *)blk, len);
}

static uint64_t file_blocks(const struct sbc_fx *fx)
{
	struct stat st;

	cr_assert_eq(stat(fx->file, &st), 0);
	return (uint64_t)st.st_blocks;
}

SBC_TEST(write_same, replicates_one_block)
{
	uint8_t blk[512];

	for (int i = 0; i < 512; i++)
		blk[i] = 0x60;
	cr_assert_eq(ws(fx, 0x41, 0, 10, 20, blk, 512).status, SAM_STAT_GOOD);
	fx_expect(fx, 10, 20, 0x60);
	fx_expect(fx, 9, 1, 0);
	fx_expect(fx, 30, 1, 0);
	memset(blk, 0x61, 512);
	cr_assert_eq(ws(fx, 0x93, 0, FX_BLOCKS - 256, 256, blk, 512).status, SAM_STAT_GOOD);
	fx_expect(fx, FX_BLOCKS - 256, 256, 0x61);
	/* a block that is not uniform is copied as it is */
	for (int i = 0; i < 512; i++)
		blk[i] = (uint8_t)i;
	cr_assert_eq(ws(fx, 0x93, 0, 100, 3, blk, 512).status, SAM_STAT_GOOD);
	for (int k = 0; k < 3; k++) {
		uint8_t rd[512];

		cr_assert_eq(fx_read(fx, 100 + k, 1, rd).status, SAM_STAT_GOOD);
		cr_assert(!memcmp(rd, blk, 512));
	}
}

SBC_TEST(write_same, zero_blocks_means_to_the_end)
{
	uint8_t blk[512];
	struct th_result r;

	memset(blk, 0x7e, 512);
	cr_assert_eq(ws(fx, 0x41, 0, FX_BLOCKS - 40, 0, blk, 512).status, SAM_STAT_GOOD);
	fx_expect(fx, FX_BLOCKS - 40, 40, 0x7e);
	fx_expect(fx, FX_BLOCKS - 41, 1, 0);
	r = ws(fx, 0x41, 0, FX_BLOCKS + 1, 0, blk, 512);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	r = ws(fx, 0x93, 0, UINT64_MAX, 0, blk, 512);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	r = ws(fx, 0x93, 0, FX_BLOCKS - 1, 2, blk, 512);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
}

SBC_TEST(write_same, refusals)
{
	uint8_t blk[1024] = {0};
	struct th_result r;

	r = ws(fx, 0x93, 0x10, 0, 1, blk, 512); /* ANCHOR */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 1, 4);
	r = ws(fx, 0x41, 0x04, 0, 1, blk, 512); /* PBDATA */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 1, 2);
	r = ws(fx, 0x41, 0x02, 0, 1, blk, 512); /* LBDATA */
	th_assert_field(r, true, 1, 1);
	r = ws(fx, 0x93, 0x60, 0, 1, blk, 512); /* WRPROTECT */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 1, 7);
	/* libiscsi InvalidDataOutSize: half a block, two blocks; nothing written */
	memset(blk, 0x55, sizeof(blk));
	r = ws(fx, 0x41, 0, 0, 4, blk, 256);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	r = ws(fx, 0x41, 0x08, 0, 4, blk, 1024);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_expect(fx, 0, 4, 0);
}

Test(write_same, above_maximum_length)
{
	struct sbc_fx fx;
	struct sbc_limits lim;
	uint8_t blk[512] = {0};
	uint64_t blocks;
	struct th_result r;

	/* a nullio LU larger than MAXIMUM WRITE SAME LENGTH */
	fx_init_bs(&fx, "vdisk_nullio", 512, 4ull << 21);
	sbc_get_limits(fx.dev, &lim);
	blocks = fx.dev->nr_blocks;
	cr_assert_gt(blocks, lim.max_write_same_blocks);
	r = ws(&fx, 0x93, 0, 0, (uint32_t)lim.max_write_same_blocks + 1, blk, 512);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 10, -1);
	r = ws(&fx, 0x93, 0, 0, 0, blk, 512); /* "to the end" is too long as well */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 10, -1);
	fx_fini(&fx);
}

SBC_TEST(write_same, ndob_writes_zeros)
{
	struct th_result r;

	fx_fill(fx, 0, 16, 0x99);
	r = ws(fx, 0x93, 0x01, 4, 8, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_NONE);
	fx_expect(fx, 4, 8, 0);
	fx_expect(fx, 0, 4, 0x99);
	fx_expect(fx, 12, 4, 0x99);
	{
		uint8_t blk[512] = {0};

		r = ws(fx, 0x93, 0x01, 4, 8, blk, 512); /* NDOB with data */
		th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	}
}

/* 1 MiB written, then WRITE SAME UNMAP of zeros: the blocks read zeros and, on the thin
 * fileio LU, the file's allocation shrinks by (nearly) the whole MiB. */
SBC_TEST(write_same, unmap_bit_deallocates_zero_blocks)
{
	uint8_t zero[512] = {0};
	uint64_t before = 0, after;

	fx_thin(fx);
	fx_fill(fx, 2048, 2048, 0x44);
	if (fx_fileio(fx))
		before = file_blocks(fx);
	cr_assert_eq(ws(fx, 0x93, 0x08, 2048, 2048, zero, 512).status, SAM_STAT_GOOD);
	fx_expect(fx, 2048, 2048, 0);
	if (fx_fileio(fx)) {
		after = file_blocks(fx);
		cr_assert_geq(before - after, 2048 - 16, "st_blocks %llu -> %llu: no hole punched",
			      (unsigned long long)before, (unsigned long long)after);
	}
	fx_fill(fx, 0, 64, 0x44);
	cr_assert_eq(ws(fx, 0x41, 0x08, 0, 64, zero, 512).status, SAM_STAT_GOOD); /* (10) too */
	fx_expect(fx, 0, 64, 0);
}

Test(write_same, unmap_bit_deallocates_whatever_the_data_refused_when_thick)
{
	struct sbc_fx fx;
	uint8_t blk[512];

	fx_init_ops(&fx, &spy_ops);
	fx_fill(&fx, 0, 32, 0x3c);
	memset(blk, 0xff, 512); /* libiscsi's UnmapUntilEnd sends 0xff with UNMAP */
	cr_assert_eq(ws(&fx, 0x93, 0x08, 0, 32, blk, 512).status, SAM_STAT_GOOD);
	cr_assert_eq(atomic_load(&spy.unmaps), 1);
	cr_assert_eq(atomic_load(&spy.write_sames), 0);
	fx_expect(&fx, 0, 32, 0); /* LBPRZ */
	/* fully provisioned (LBPWS/LBPWS10 0): the UNMAP bit is refused, nothing is touched */
	fx.dev->bs->thin_provisioned = false;
	fx_fill(&fx, 0, 32, 0x3c);
	for (int i = 0; i < 2; i++) {
		struct th_result r = ws(&fx, i ? 0x41 : 0x93, 0x08, 0, 32, blk, 512);

		th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
		cr_assert_eq(r.sense[15], 0x80 | 0x40 | 0x08 | 3, "field pointer on UNMAP");
		cr_assert_eq(get_be16(r.sense + 16), 1);
	}
	cr_assert_eq(atomic_load(&spy.unmaps), 1);
	cr_assert_eq(atomic_load(&spy.write_sames), 0);
	fx_expect(&fx, 0, 32, 0x3c);
	/* without the bit the block is written */
	cr_assert_eq(ws(&fx, 0x93, 0, 0, 32, blk, 512).status, SAM_STAT_GOOD);
	cr_assert_eq(atomic_load(&spy.write_sames), 1);
	fx_expect(&fx, 0, 32, 0xff);
	fx_fini(&fx);
}

Test(write_same, long_range_in_chunks)
{
	struct sbc_fx fx;
	uint8_t blk[512];
	uint64_t n = (80ull << 20) / 512; /* 80 MiB: three 32 MiB chunks */

	fx_init_bs(&fx, "vdisk_fileio", 512, (96ull << 20) / 512);
	memset(blk, 0xc3, 512);
	cr_assert_eq(ws(&fx, 0x93, 0, 100, (uint32_t)n, blk, 512).status, SAM_STAT_GOOD);
	fx_expect(&fx, 99, 1, 0);
	fx_expect(&fx, 100, 8, 0xc3);
	fx_expect(&fx, 100 + (32ull << 20) / 512 - 4, 8, 0xc3); /* across the first chunk edge */
	fx_expect(&fx, 100 + n - 8, 8, 0xc3);
	fx_expect(&fx, 100 + n, 1, 0);
	fx_fini(&fx);
}

Test(write_same, failing_store_is_medium_error)
{
	struct sbc_fx fx;
	uint8_t blk[512] = {1};
	struct th_result r;

	fx_init_ops(&fx, &failing_ops);
	r = ws(&fx, 0x93, 0, 0, 8, blk, 512);
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x0c, 0x00);
	fx_fini(&fx);
}
