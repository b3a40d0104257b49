/* Block Limits: sane values for both block sizes, the max_xfer_blocks override, UNMAP fields
 * only on thin LUs, the physical block lb_per_pb_exp reports, and agreement with what INQUIRY
 * VPD B0/B2 and READ CAPACITY(16) report. */
#include "tests/unit/sbc_test.h"

SBC_TEST(limits, values)
{
	struct sbc_limits l;

	sbc_get_limits(fx->dev, &l);
	cr_assert_eq(l.max_xfer_blocks, (32u << 20) / 512);
	cr_assert(l.opt_xfer_blocks && l.opt_xfer_blocks <= l.max_xfer_blocks);
	cr_assert_eq(l.max_write_same_blocks, (1ull << 30) / 512);
	cr_assert(l.max_compare_write_blocks >= 1 && l.max_compare_write_blocks <= 255);
	cr_assert(l.max_atomic_blocks >= 256 && l.max_atomic_blocks <= l.max_xfer_blocks);
	cr_assert_eq(l.atomic_alignment, 0);
	cr_assert_eq(l.atomic_granularity, 0);
	cr_assert_not(l.wsnz);
	fx_thin(fx);
	sbc_get_limits(fx->dev, &l);
	cr_assert_eq(l.max_unmap_lba_count, 1u << 20, "512 MiB: capped at 1M blocks");
	cr_assert_eq(l.max_unmap_descriptors, 256);
	cr_assert_eq(l.unmap_granularity, 8);
	cr_assert_eq(l.opt_xfer_granularity, 8, "4 KiB in 512-byte blocks");
	fx->dev->bs->thin_provisioned = false;
	sbc_get_limits(fx->dev, &l);
	cr_assert_eq(l.max_unmap_lba_count, 0);
	cr_assert_eq(l.max_unmap_descriptors, 0);
	fx->dev->p.max_xfer_blocks = 64;
	sbc_get_limits(fx->dev, &l);
	cr_assert_eq(l.max_xfer_blocks, 64);
	cr_assert(l.opt_xfer_blocks <= 64 && l.max_atomic_blocks <= 64);
	cr_assert(2 * l.max_compare_write_blocks <= 64);
}

Test(limits, block_size_4096)
{
	struct sbc_fx fx;
	struct sbc_limits l;

	fx_init_bs(&fx, "vdisk_fileio", 4096, 256);
	sbc_get_limits(fx.dev, &l);
	cr_assert_eq(l.max_xfer_blocks, (32u << 20) / 4096);
	cr_assert_eq(l.max_unmap_lba_count, 1u << 20);
	cr_assert_eq(l.unmap_granularity, 1);
	cr_assert_eq(l.opt_xfer_granularity, 1);
	cr_assert_eq(l.max_atomic_blocks, 256);
	fx_fini(&fx);
}

/* lb_per_pb_exp off (utgt's default): one logical block per physical block, whatever the
 * store knows.  On: the store's physical block (blockio: the device's), else 4096 bytes. */
SBC_TEST(limits, physical_block)
{
	struct sbc_limits l;

	fx->dev->bs->phys_block_size = 16384;
	cr_assert_eq(sbc_phys_block_bytes(fx->dev), 512);
	cr_assert_eq(sbc_lbppbe(fx->dev), 0);
	fx->dev->p.lb_per_pb_exp = true;
	fx->dev->bs->phys_block_size = 0;
	cr_assert_eq(sbc_phys_block_bytes(fx->dev), 4096);
	cr_assert_eq(sbc_lbppbe(fx->dev), 3, "8 logical blocks of 512 per 4096-byte block");
	fx_thin(fx);
	sbc_get_limits(fx->dev, &l);
	cr_assert_eq(l.unmap_granularity, 8);
	cr_assert_eq(l.opt_xfer_granularity, 8);
	/* a device with 16 KiB physical blocks: the granularities follow it */
	fx->dev->bs->phys_block_size = 16384;
	cr_assert_eq(sbc_lbppbe(fx->dev), 5);
	sbc_get_limits(fx->dev, &l);
	cr_assert_eq(l.unmap_granularity, 32);
	cr_assert_eq(l.opt_xfer_granularity, 32);
	/* one smaller than the logical block (a 512-byte device under a 4096-byte LU... or a
	 * device that reports 512): never a negative exponent */
	fx->dev->bs->phys_block_size = 512;
	cr_assert_eq(sbc_lbppbe(fx->dev), 0);
	cr_assert_eq(sbc_phys_block_bytes(fx->dev), 512);
	sbc_get_limits(fx->dev, &l);
	cr_assert_eq(l.unmap_granularity, 8, "still the 4 KiB the store deallocates in");
}

Test(limits, physical_block_4096_lu)
{
	struct sbc_fx fx;

	fx_init_bs(&fx, "vdisk_fileio", 4096, 256);
	fx.dev->p.lb_per_pb_exp = true;
	cr_assert_eq(sbc_phys_block_bytes(fx.dev), 4096);
	cr_assert_eq(sbc_lbppbe(fx.dev), 0, "a 4096-byte LU is its own physical block");
	fx.dev->bs->phys_block_size = 1u << 20;
	cr_assert_eq(sbc_lbppbe(fx.dev), 8);
	fx.dev->bs->phys_block_size = 1u << 31; /* 2^19 logical blocks: the field has 4 bits */
	cr_assert_eq(sbc_lbppbe(fx.dev), 15);
	fx_fini(&fx);
}

SBC_TEST(limits, vpd_and_read_capacity_agree)
{
	uint8_t c[16] = {0x12, 0x01, 0xb0}, b0[64], b2[64], rc[32];
	struct sbc_limits l;
	struct th_result r;

	fx_thin(fx);
	sbc_get_limits(fx->dev, &l);
	put_be16(c + 3, sizeof(b0));
	r = fx_exec(fx, c, SCSI_DIR_READ, b0, sizeof(b0));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b0[1], 0xb0);
	cr_assert_eq(b0[5], l.max_compare_write_blocks);
	cr_assert_eq(get_be32(b0 + 8), l.max_xfer_blocks);
	cr_assert_eq(get_be32(b0 + 12), l.opt_xfer_blocks);
	cr_assert_eq(get_be32(b0 + 20), l.max_unmap_lba_count);
	cr_assert_eq(get_be32(b0 + 24), l.max_unmap_descriptors);
	cr_assert_eq(get_be64(b0 + 36), l.max_write_same_blocks);
	cr_assert_eq(get_be32(b0 + 44), l.max_atomic_blocks);
	cr_assert_eq(get_be32(b0 + 48), l.atomic_alignment);
	cr_assert_eq(get_be32(b0 + 52), l.atomic_granularity);

	c[2] = 0xb2;
	r = fx_exec(fx, c, SCSI_DIR_READ, b2, sizeof(b2));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	memset(c, 0, 16);
	c[0] = 0x9e;
	c[1] = 0x10;
	put_be32(c + 10, 32);
	r = fx_exec(fx, c, SCSI_DIR_READ, rc, 32);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(!!(b2[5] & 0x80), !!(rc[14] & 0x80), "VPD B2 LBPU vs LBPME");
	cr_assert_eq(!!(b2[5] & 0x04), !!(rc[14] & 0x40), "VPD B2 LBPRZ vs READ CAPACITY");
	cr_assert_eq(get_be16(b0 + 6), l.opt_xfer_granularity);
	cr_assert_eq(get_be32(b0 + 28), l.unmap_granularity);
	cr_assert_eq(rc[13], sbc_lbppbe(fx->dev));
	/* with the physical block reported, the granularities are whole physical blocks */
	fx->dev->p.lb_per_pb_exp = true;
	sbc_get_limits(fx->dev, &l);
	c[0] = 0x12;
	c[1] = 0x01;
	c[2] = 0xb0;
	put_be16(c + 3, sizeof(b0));
	r = fx_exec(fx, c, SCSI_DIR_READ, b0, sizeof(b0));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	memset(c, 0, 16);
	c[0] = 0x9e;
	c[1] = 0x10;
	put_be32(c + 10, 32);
	r = fx_exec(fx, c, SCSI_DIR_READ, rc, 32);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(rc[13], 3);
	cr_assert_eq(get_be16(b0 + 6) % (1u << rc[13]), 0, "OTLG in whole physical blocks");
	cr_assert_eq(get_be32(b0 + 28) % (1u << rc[13]), 0, "unmap granularity likewise");
}

/* A nexus whose transport carries at most 1 MiB per command (SRP sets 8 MiB): VPD B0 announces
 * that on this nexus, a READ of one block more is refused by the core, and the LU's own limits
 * (another nexus) are unchanged. */
SBC_TEST(limits, nexus_caps_max_transfer)
{
	uint8_t c[16] = {0x12, 0x01, 0xb0}, b0[64];
	uint32_t cap = (1u << 20) / 512;
	struct sbc_limits l;
	struct th_result r;
	uint8_t *buf = malloc((size_t)(cap + 1) * 512);

	cr_assert(buf);
	fx->n.nx.max_xfer_bytes = 1u << 20;
	sbc_get_limits_nx(fx->dev, &fx->n.nx, &l);
	cr_assert_eq(l.max_xfer_blocks, cap);
	cr_assert(l.opt_xfer_blocks <= cap && l.max_atomic_blocks <= cap);
	put_be16(c + 3, sizeof(b0));
	r = fx_exec(fx, c, SCSI_DIR_READ, b0, sizeof(b0));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b0 + 8), cap, "VPD B0 MAXIMUM TRANSFER LENGTH follows the nexus");

	memset(c, 0, sizeof(c));
	c[0] = 0x88; /* READ(16) */
	put_be32(c + 10, cap);
	r = fx_exec(fx, c, SCSI_DIR_READ, buf, (size_t)cap * 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	put_be32(c + 10, cap + 1);
	r = fx_exec(fx, c, SCSI_DIR_READ, buf, (size_t)(cap + 1) * 512);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);

	sbc_get_limits(fx->dev, &l);
	cr_assert_eq(l.max_xfer_blocks, (32u << 20) / 512, "the LU itself keeps 32 MiB");
	fx->n.nx.max_xfer_bytes = 0;
	free(buf);
}
