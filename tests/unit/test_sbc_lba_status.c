/* GET LBA STATUS on ramdisk and fileio: descriptors follow what was written and what was
 * deallocated (in 4 KiB units, the store's granule), allocation length, range check. */
#include "tests/unit/sbc_test.h"

struct desc {
	uint64_t lba;
	uint32_t n;
	uint8_t status;
};

static unsigned lba_status(struct sbc_fx *fx, uint64_t lba, struct desc *d, unsigned max)
{
	uint8_t c[16] = {0x9e, 0x12}, b[8 + 16 * 32];
	struct th_result r;
	unsigned n;

	put_be64(c + 2, lba);
	put_be32(c + 10, sizeof(b));
	r = fx_exec(fx, c, SCSI_DIR_READ, b, sizeof(b));
	cr_assert_eq(r.status, SAM_STAT_GOOD, "key %#x asc %#x", th_sense_key(&r), th_asc(&r));
	n = (get_be32(b) - 4) / 16;
	cr_assert_eq(r.data_len, 8 + 16 * n);
	for (unsigned i = 0; i < n && i < max; i++) {
		d[i].lba = get_be64(b + 8 + 16 * i);
		d[i].n = get_be32(b + 8 + 16 * i + 8);
		d[i].status = b[8 + 16 * i + 12] & 0x0f;
	}
	return n;
}

SBC_TEST(lba_status, follows_writes_and_unmaps)
{
	struct desc d[32];
	uint8_t c[16], list[24] = {0};
	unsigned n;

	fx_thin(fx);
	n = lba_status(fx, 0, d, 32);
	cr_assert_eq(n, 1);
	cr_assert_eq(d[0].lba, 0);
	cr_assert_eq(d[0].n, FX_BLOCKS);
	cr_assert_eq(d[0].status, 1, "a fresh thin LU is deallocated");

	fx_fill(fx, 96, 16, 0x33);
	n = lba_status(fx, 0, d, 32);
	cr_assert_eq(n, 3);
	cr_assert(d[0].lba == 0 && d[0].n == 96 && d[0].status == 1);
	cr_assert(d[1].lba == 96 && d[1].n == 16 && d[1].status == 0);
	cr_assert(d[2].lba == 112 && d[2].n == FX_BLOCKS - 112 && d[2].status == 1);

	/* UNMAP the first 8 of them */
	put_be16(list, 22);
	put_be16(list + 2, 16);
	put_be64(list + 8, 96);
	put_be32(list + 16, 8);
	memset(c, 0, 16);
	c[0] = 0x42;
	put_be16(c + 7, sizeof(list));
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_WRITE, list, sizeof(list)).status, SAM_STAT_GOOD);
	n = lba_status(fx, 90, d, 32);
	cr_assert_eq(n, 3);
	cr_assert(d[0].lba == 90 && d[0].n == 14 && d[0].status == 1);
	cr_assert(d[1].lba == 104 && d[1].n == 8 && d[1].status == 0);
	cr_assert(d[2].lba == 112 && d[2].status == 1);
	fx_expect(fx, 96, 8, 0);
	fx_expect(fx, 104, 8, 0x33);
}

SBC_TEST(lba_status, range_and_allocation_length)
{
	uint8_t c[16] = {0x9e, 0x12}, b[64];
	struct th_result r;

	put_be64(c + 2, FX_BLOCKS);
	put_be32(c + 10, sizeof(b));
	r = fx_exec(fx, c, SCSI_DIR_READ, b, sizeof(b));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	put_be64(c + 2, FX_BLOCKS - 1); /* the last block */
	r = fx_exec(fx, c, SCSI_DIR_READ, b, sizeof(b));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be64(b + 8), FX_BLOCKS - 1);
	cr_assert_eq(get_be32(b + 16), 1);
	put_be32(c + 10, 0);
	r = fx_exec(fx, c, SCSI_DIR_READ, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 0);
	put_be32(c + 10, 12);
	memset(b, 0xee, sizeof(b));
	r = fx_exec(fx, c, SCSI_DIR_READ, b, sizeof(b));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 12);
	cr_assert_eq(get_be32(b), 20, "PARAMETER DATA LENGTH counts the descriptor");
	cr_assert_eq(b[12], 0xee);
}

Test(lba_status, store_without_the_verb_reports_mapped)
{
	struct sbc_fx fx;
	uint8_t c[16] = {0x9e, 0x12}, b[64];
	struct th_result r;

	fx_init_ops(&fx, &spy_ops); /* spy_ops has no lba_status */
	put_be64(c + 2, 10);
	put_be32(c + 10, sizeof(b));
	r = fx_exec(&fx, c, SCSI_DIR_READ, b, sizeof(b));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 24);
	cr_assert_eq(get_be64(b + 8), 10);
	cr_assert_eq(get_be32(b + 16), FX_BLOCKS - 10);
	cr_assert_eq(b[20], 0);
	fx_fini(&fx);
}

/* READ CAPACITY(16) without LBPME, VPD B2 without LBPU: GET LBA STATUS must not report
 * the medium's holes (a sparse file, pages never written) as deallocated blocks. */
SBC_TEST(lba_status, fully_provisioned_lu_is_mapped_throughout)
{
	uint8_t c[16] = {0x9e, 0x10}, b[32];
	struct desc d[4];

	fx->dev->bs->thin_provisioned = false;
	put_be32(c + 10, sizeof(b));
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_READ, b, sizeof(b)).status, SAM_STAT_GOOD);
	cr_assert_eq(b[14] & 0x80, 0, "no LBPME");
	cr_assert_eq(lba_status(fx, 0, d, 4), 1);
	cr_assert(d[0].lba == 0 && d[0].n == FX_BLOCKS && d[0].status == 0);
}
