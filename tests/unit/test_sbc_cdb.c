/* CDB decoding for every layout the SBC commands use, and the shared checks. */
#include "tests/unit/sbc_test.h"

static struct scsi_task *task(struct sbc_fx *fx, const uint8_t *cdb)
{
	struct scsi_task *t = calloc(1, sizeof(*t));

	memcpy(t->cdb, cdb, 16);
	t->core.dev = fx->dev;
	t->core.sks_bit = -1;
	return t;
}

static struct sbc_cdb dec(struct sbc_fx *fx, const uint8_t *cdb)
{
	struct scsi_task *t = task(fx, cdb);
	struct sbc_cdb c;

	sbc_decode(t, &c);
	free(t);
	return c;
}

Test(cdb, six_byte)
{
	struct sbc_fx fx;
	uint8_t c[16] = {0x08, 0xff, 0x12, 0x34, 0x00, 0x00};
	struct sbc_cdb d;

	fx_init(&fx, "ramdisk");
	d = dec(&fx, c);
	cr_assert_eq(d.lba, 0x1f1234, "21-bit LBA, the top 3 bits of byte 1 are not LBA");
	cr_assert_eq(d.nblocks, 256, "TRANSFER LENGTH 0 means 256");
	cr_assert_eq(d.protect, 0);
	cr_assert_eq(d.len_byte, 4);
	c[0] = 0x0a;
	c[4] = 9;
	d = dec(&fx, c);
	cr_assert_eq(d.nblocks, 9);
	fx_fini(&fx);
}

Test(cdb, ten_twelve_sixteen)
{
	struct sbc_fx fx;
	uint8_t c[16];
	struct sbc_cdb d;

	fx_init(&fx, "ramdisk");
	cdb10(c, 0x28, 0xb8, 0xdeadbeef, 0x1234); /* RDPROTECT 5, DPO, FUA */
	d = dec(&fx, c);
	cr_assert(d.lba == 0xdeadbeef && d.nblocks == 0x1234 && d.len_byte == 7);
	cr_assert(d.protect == 5 && d.dpo && d.fua);
	cdb12(c, 0xaa, 0x08, 7, 0x10000);
	d = dec(&fx, c);
	cr_assert(d.lba == 7 && d.nblocks == 0x10000 && d.len_byte == 6 && d.fua && !d.dpo);
	cdb16(c, 0x88, 0x10, 0x0102030405060708ull, 0xa0b0c0d0);
	d = dec(&fx, c);
	cr_assert(d.lba == 0x0102030405060708ull && d.nblocks == 0xa0b0c0d0 && d.len_byte == 10);
	cr_assert(d.dpo && !d.fua);
	fx_fini(&fx);
}

Test(cdb, byte1_meaning_depends_on_the_command)
{
	struct sbc_fx fx;
	uint8_t c[16];
	struct sbc_cdb d;

	fx_init(&fx, "ramdisk");
	cdb10(c, 0x2f, 0x0a, 1, 1); /* VERIFY: bit 1 is BYTCHK, not FUA */
	cr_assert_not(dec(&fx, c).fua);
	cdb16(c, 0x93, 0x08, 1, 1); /* WRITE SAME: bit 3 is UNMAP */
	cr_assert_not(dec(&fx, c).fua);
	cdb10(c, 0x35, 0xe2, 1, 1); /* SYNCHRONIZE CACHE: no protection field */
	d = dec(&fx, c);
	cr_assert_eq(d.protect, 0);
	cdb16(c, 0x90, 0xe2, 1, 1); /* PRE-FETCH(16) */
	cr_assert_eq(dec(&fx, c).protect, 0);
	cdb16(c, 0x8b, 0xe8, 1, 1); /* ORWRITE: ORPROTECT and FUA */
	d = dec(&fx, c);
	cr_assert(d.protect == 7 && d.fua);
	fx_fini(&fx);
}

Test(cdb, compare_and_write_and_write_atomic)
{
	struct sbc_fx fx;
	uint8_t c[16] = {0x89, 0x08};
	struct sbc_cdb d;

	fx_init(&fx, "ramdisk");
	put_be64(c + 2, 77);
	c[10] = c[11] = c[12] = 0xff; /* reserved, not part of the length */
	c[13] = 5;
	d = dec(&fx, c);
	cr_assert(d.lba == 77 && d.nblocks == 5 && d.len_byte == 13 && d.fua);
	memset(c, 0, 16);
	c[0] = 0x9c;
	put_be64(c + 2, 9);
	c[10] = c[11] = 0xff;
	put_be16(c + 12, 300);
	d = dec(&fx, c);
	cr_assert(d.lba == 9 && d.nblocks == 300 && d.len_byte == 12);
	memset(c, 0, 16);
	c[0] = 0x12; /* not a block command: nothing decoded */
	c[4] = 0xff;
	d = dec(&fx, c);
	cr_assert(d.lba == 0 && d.nblocks == 0);
	fx_fini(&fx);
}

Test(cdb, range_check_edges)
{
	struct sbc_fx fx;
	uint8_t c[16] = {0};
	struct scsi_task *t;

	fx_init(&fx, "ramdisk");
	t = task(&fx, c);
	cr_assert_eq(sbc_check_range(t, 0, FX_BLOCKS), SR_OK);
	cr_assert_eq(sbc_check_range(t, FX_BLOCKS, 0), SR_OK);
	cr_assert_eq(sbc_check_range(t, FX_BLOCKS - 1, 1), SR_OK);
	cr_assert_eq(sbc_check_range(t, 0, FX_BLOCKS + 1), SR_LBA_OUT_OF_RANGE);
	cr_assert_eq(sbc_check_range(t, FX_BLOCKS + 1, 0), SR_LBA_OUT_OF_RANGE);
	cr_assert_eq(sbc_check_range(t, FX_BLOCKS - 1, 2), SR_LBA_OUT_OF_RANGE);
	cr_assert_eq(sbc_check_range(t, UINT64_MAX, 1), SR_LBA_OUT_OF_RANGE);
	cr_assert_eq(sbc_check_range(t, 1, UINT64_MAX), SR_LBA_OUT_OF_RANGE);
	free(t);
	fx_fini(&fx);
}

Test(cdb, durable_writes)
{
	struct sbc_fx fx;

	fx_init(&fx, "ramdisk");
	fx.dev->mode.wce = true;
	cr_assert_not(sbc_write_durable(fx.dev, false));
	cr_assert(sbc_write_durable(fx.dev, true));
	fx.dev->mode.wce = false;
	cr_assert(sbc_write_durable(fx.dev, false));
	fx.dev->mode.wce = true;
	fx.dev->bs->write_through = true;
	cr_assert(sbc_write_durable(fx.dev, false));
	fx.dev->bs->nv_cache = true;
	cr_assert_not(sbc_write_durable(fx.dev, true));
	fx.dev->bs->write_through = false;
	fx.dev->bs->nv_cache = false;
	fx_fini(&fx);
}
