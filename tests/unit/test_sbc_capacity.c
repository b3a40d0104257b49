/* READ CAPACITY (10) and (16) on ramdisk and fileio, and on an LU too big for (10); the
 * physical block exponent lb_per_pb_exp asks for. */
#include "tests/unit/sbc_test.h"

SBC_TEST(capacity, read_capacity10)
{
	uint8_t c[16] = {0x25}, b[8];
	struct th_result r;

	r = fx_exec(fx, c, SCSI_DIR_READ, b, 8);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 8);
	cr_assert_eq(get_be32(b), FX_BLOCKS - 1);
	cr_assert_eq(get_be32(b + 4), 512);
	put_be32(c + 2, 5); /* an LBA without PMI */
	r = fx_exec(fx, c, SCSI_DIR_READ, b, 8);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 2, -1);
	c[8] = 0x01; /* PMI: the answer is still the last LBA */
	r = fx_exec(fx, c, SCSI_DIR_READ, b, 8);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b), FX_BLOCKS - 1);
}

SBC_TEST(capacity, read_capacity16_and_provisioning_bits)
{
	uint8_t c[16] = {0x9e, 0x10}, b[64];
	struct th_result r;

	put_be32(c + 10, sizeof(b));
	memset(b, 0xff, sizeof(b));
	r = fx_exec(fx, c, SCSI_DIR_READ, b, sizeof(b));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 32);
	cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(get_be64(b), FX_BLOCKS - 1);
	cr_assert_eq(get_be32(b + 8), 512);
	cr_assert_eq(b[12], 0, "no protection");
	cr_assert_eq(b[13], 0, "one logical block per physical block (lb_per_pb_exp 0)");
	cr_assert_eq(b[14] & 0x3f, 0);
	cr_assert_eq(b[15], 0);
	cr_assert_eq(!!(b[14] & 0x80), sbc_thin(fx->dev), "LBPME");
	cr_assert_eq(!!(b[14] & 0x40), sbc_lbprz(fx->dev), "LBPRZ");
	if (fx_fileio(fx))
		cr_assert(b[14] & 0xc0, "the test fileio LU is thin and punches zeros");
	else
		cr_assert_eq(b[14] & 0xc0, 0, "ramdisk LUs are fully provisioned by default");
	fx->dev->bs->thin_provisioned = true;
	r = fx_exec(fx, c, SCSI_DIR_READ, b, sizeof(b));
	cr_assert_eq(b[14] & 0xc0, 0xc0);
	fx->dev->bs->thin_provisioned = false;
	r = fx_exec(fx, c, SCSI_DIR_READ, b, sizeof(b));
	cr_assert_eq(b[14] & 0xc0, 0);

	put_be32(c + 10, 12); /* allocation length cuts the data */
	memset(b, 0xee, sizeof(b));
	r = fx_exec(fx, c, SCSI_DIR_READ, b, sizeof(b));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 12);
	cr_assert_eq(b[12], 0xee);
	put_be32(c + 10, 0);
	r = fx_exec(fx, c, SCSI_DIR_READ, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 0);
	put_be32(c + 10, 32);
	put_be64(c + 2, 1); /* LBA without PMI */
	r = fx_exec(fx, c, SCSI_DIR_READ, b, 32);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
}

Test(capacity, too_big_for_read_capacity10)
{
	struct sbc_fx fx;
	uint8_t c[16] = {0x25}, b[32];
	uint64_t blocks = (1ull << 32) + 8;

	fx_init_bs(&fx, "vdisk_nullio", 512, blocks);
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_READ, b, 8).status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b), 0xffffffffu);
	memset(c, 0, 16);
	c[0] = 0x9e;
	c[1] = 0x10;
	put_be32(c + 10, 32);
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_READ, b, 32).status, SAM_STAT_GOOD);
	cr_assert_eq(get_be64(b), blocks - 1);
	fx_fini(&fx);

	fx_init_bs(&fx, "vdisk_nullio", 512, 0xffffffffull); /* last LBA 0xfffffffe still fits */
	memset(c, 0, 16);
	c[0] = 0x25;
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_READ, b, 8).status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b), 0xfffffffeu);
	fx_fini(&fx);
}

Test(capacity, block_size_4096)
{
	struct sbc_fx fx;
	uint8_t c[16] = {0x25}, b[8];

	fx_init_bs(&fx, "ramdisk", 4096, 300);
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_READ, b, 8).status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b), 299);
	cr_assert_eq(get_be32(b + 4), 4096);
	fx_fini(&fx);
}

/* lb_per_pb_exp 1: LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT 3 for 512-byte blocks in a
 * 4096-byte physical block, LOWEST ALIGNED LBA 0, the rest of the answer unchanged. */
SBC_TEST(capacity, physical_block_exponent)
{
	uint8_t c[16] = {0x9e, 0x10}, off[32], on[32];

	put_be32(c + 10, 32);
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_READ, off, 32).status, SAM_STAT_GOOD);
	fx->dev->p.lb_per_pb_exp = true;
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_READ, on, 32).status, SAM_STAT_GOOD);
	cr_assert_eq(on[13], 3);
	cr_assert_eq(on[14] & 0x3f, 0, "lowest aligned LBA 0");
	cr_assert_eq(on[15], 0);
	off[13] = 3;
	cr_assert_arr_eq(on, off, 32, "only the exponent changed");
	fx->dev->bs->phys_block_size = 65536; /* what a block device may report */
	cr_assert_eq(fx_exec(fx, c, SCSI_DIR_READ, on, 32).status, SAM_STAT_GOOD);
	cr_assert_eq(on[13], 7);
}

Test(capacity, physical_block_exponent_4096)
{
	struct sbc_fx fx;
	uint8_t c[16] = {0x9e, 0x10}, b[32];

	fx_init_bs(&fx, "ramdisk", 4096, 300);
	fx.dev->p.lb_per_pb_exp = true;
	put_be32(c + 10, 32);
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_READ, b, 32).status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b + 8), 4096);
	cr_assert_eq(b[13], 0, "4096-byte logical blocks are whole physical blocks");
	fx_fini(&fx);
}
