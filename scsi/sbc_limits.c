/* The Block Limits the SBC commands enforce and VPD B0 announces, and the logical block
 * provisioning answer READ CAPACITY(16), VPD B2, UNMAP and WRITE SAME share.  One source of
 * truth, so what an initiator reads is what the LU does. */
#include <string.h>

#include "scsi/sbc.h"

/* Sizes in bytes, turned into blocks of the LU's size below. */
/* One READ/WRITE: 32 MiB.  libiscsi's WriteSame16.Unmap moves 65536 512-byte blocks in one
 * command without reading Block Limits; the iSCSI transport takes up to 128 MiB. */
#define MAX_XFER_BYTES        (32u << 20)
#define OPT_XFER_BYTES        (1u << 20)  /* Linux sizes its requests from this */
#define MAX_UNMAP_BYTES       (4ull << 30) /* one UNMAP: 4 GiB worth of blocks... */
#define MAX_UNMAP_BLOCKS      (1u << 20)   /* ...but at most 1M blocks: libiscsi's Inquiry
					    * BlockLimits test calls more "insanely big" */
#define MAX_UNMAP_DESCRIPTORS 256
#define MAX_WRITE_SAME_BYTES  (1ull << 30)
#define MAX_ATOMIC_BYTES      (1u << 20)
/* COMPARE AND WRITE buffers 2n blocks on a worker; 128 keeps that at most 1 MiB. */
#define MAX_CAW_BLOCKS        128
/* Holes are punched (fileio) and pages dropped (ramdisk) in 4 KiB units. */
#define UNMAP_GRANULE_BYTES   4096u
/* The physical block lb_per_pb_exp reports when the store does not know its own: SCST's
 * figure for every vdisk handler but blockio, and the unit utgt's stores work in above. */
#define DEFAULT_PHYS_BYTES    4096u

bool sbc_thin(const struct scsi_dev *dev)
{
	return dev->bs && dev->bs->thin_provisioned && dev->bs->can_unmap;
}

bool sbc_lbprz(const struct scsi_dev *dev)
{
	return sbc_thin(dev) && dev->bs->unmap_zeroes;
}

uint32_t sbc_phys_block_bytes(const struct scsi_dev *dev)
{
	uint32_t bsz = dev->block_size ? dev->block_size : 512, pbs;

	if (!dev->p.lb_per_pb_exp)
		return bsz;
	pbs = dev->bs && dev->bs->phys_block_size ? dev->bs->phys_block_size : DEFAULT_PHYS_BYTES;
	return pbs > bsz ? pbs : bsz;
}

uint8_t sbc_lbppbe(const struct scsi_dev *dev)
{
	uint32_t bsz = dev->block_size ? dev->block_size : 512;
	uint32_t n = sbc_phys_block_bytes(dev) / bsz;
	uint8_t e = 0;

	/* a 4-bit field; block sizes are powers of two, so n is too */
	while (n > 1 && e < 15) {
		n >>= 1;
		e++;
	}
	return e;
}

static uint32_t blocks(uint64_t bytes, uint32_t bsz)
{
	uint64_t n = bytes / bsz;

	return n ? (n > UINT32_MAX ? UINT32_MAX : (uint32_t)n) : 1;
}

uint32_t sbc_max_xfer_blocks(const struct scsi_dev *dev, const struct scsi_nexus *nx)
{
	uint32_t bsz = dev->block_size ? dev->block_size : 512;
	uint32_t max_xfer = blocks(MAX_XFER_BYTES, bsz);

	if (dev->p.max_xfer_blocks && dev->p.max_xfer_blocks < max_xfer)
		max_xfer = dev->p.max_xfer_blocks;
	/* A transport that cannot carry more per command (SRP's RDMA pool) lowers what the LU
	 * announces on that nexus, so an initiator reading VPD B0 never sends what fails. */
	if (nx && nx->max_xfer_bytes && blocks(nx->max_xfer_bytes, bsz) < max_xfer)
		max_xfer = blocks(nx->max_xfer_bytes, bsz);
	return max_xfer;
}

void sbc_get_limits(const struct scsi_dev *dev, struct sbc_limits *out)
{
	sbc_get_limits_nx(dev, NULL, out);
}

void sbc_task_limits(const struct scsi_task *t, struct sbc_limits *out)
{
	sbc_get_limits_nx(t->core.dev, t->nexus, out);
}

void sbc_get_limits_nx(const struct scsi_dev *dev, const struct scsi_nexus *nx,
		       struct sbc_limits *out)
{
	uint32_t bsz = dev->block_size ? dev->block_size : 512;
	uint32_t max_xfer = sbc_max_xfer_blocks(dev, nx);
	uint32_t phys = sbc_phys_block_bytes(dev);

	memset(out, 0, sizeof(*out));
	out->max_xfer_blocks = max_xfer;
	out->opt_xfer_blocks = blocks(OPT_XFER_BYTES, bsz);
	if (out->opt_xfer_blocks > max_xfer)
		out->opt_xfer_blocks = max_xfer;
	if (sbc_thin(dev)) {
		out->max_unmap_lba_count = blocks(MAX_UNMAP_BYTES, bsz);
		if (out->max_unmap_lba_count > MAX_UNMAP_BLOCKS)
			out->max_unmap_lba_count = MAX_UNMAP_BLOCKS;
		out->max_unmap_descriptors = MAX_UNMAP_DESCRIPTORS;
		out->unmap_granularity =
		    blocks(UNMAP_GRANULE_BYTES > phys ? UNMAP_GRANULE_BYTES : phys, bsz);
	}
	/* transfers in whole 4 KiB units (whole physical blocks when larger) avoid a partial
	 * page or block in the store */
	out->opt_xfer_granularity =
	    blocks(DEFAULT_PHYS_BYTES > phys ? DEFAULT_PHYS_BYTES : phys, bsz);
	out->max_write_same_blocks = blocks(MAX_WRITE_SAME_BYTES, bsz);
	out->wsnz = false; /* NUMBER OF LOGICAL BLOCKS 0 means "to the last LBA" */
	out->max_compare_write_blocks = MAX_CAW_BLOCKS;
	if (out->max_compare_write_blocks > max_xfer / 2)
		out->max_compare_write_blocks = max_xfer / 2 ? max_xfer / 2 : 1;
	/* A store that compares and writes atomically itself (vdisk_rbd: across gateways) is
	 * offered no longer COMPARE AND WRITE than it can do so. */
	if (dev->bs && dev->bs->compare_write_max >= bsz &&
	    out->max_compare_write_blocks > dev->bs->compare_write_max / bsz)
		out->max_compare_write_blocks = dev->bs->compare_write_max / bsz;
	/* WRITE ATOMIC is atomic through the LU's range lock, whatever the alignment: no
	 * alignment or granularity requirement (0 in VPD B0). */
	out->max_atomic_blocks = blocks(MAX_ATOMIC_BYTES, bsz);
	if (out->max_atomic_blocks > max_xfer)
		out->max_atomic_blocks = max_xfer;
	out->atomic_alignment = 0;
	out->atomic_granularity = 0;
}
