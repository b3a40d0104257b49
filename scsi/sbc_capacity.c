/* READ CAPACITY (10) and (16). */
#include "scsi/sbc.h"

enum scsi_sr sbc_read_capacity10(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint64_t last = dev->nr_blocks - 1;
	uint8_t b[8];

	/* The LOGICAL BLOCK ADDRESS field only means something with PMI=1 (obsolete in SBC-4);
	 * without PMI it must be zero. */
	if (!(t->cdb[8] & 0x01) && get_be32(t->cdb + 2))
		return scsi_invalid_cdb(t, 2, -1);
	/* PMI=1 asks for the last LBA before a substantial delay: there is none, so the answer is
	 * the last LBA of the medium either way. */
	put_be32(b, last > 0xfffffffeull ? 0xffffffffu : (uint32_t)last); /* too big: use (16) */
	put_be32(b + 4, dev->block_size);
	scsi_data_in(t, b, sizeof(b));
	return SR_OK;
}

enum scsi_sr sbc_read_capacity16(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint32_t alloc = get_be32(t->cdb + 10);
	uint8_t b[32] = {0};

	if (!(t->cdb[14] & 0x01) && get_be64(t->cdb + 2))
		return scsi_invalid_cdb(t, 2, -1);
	put_be64(b, dev->nr_blocks - 1);
	put_be32(b + 8, dev->block_size);
	/* b[12]: no protection information (P_TYPE, PROT_EN 0).
	 * b[13]: LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT: 0 unless the LU's lb_per_pb_exp asks
	 * for the physical block to be reported.
	 * b[14..15]: LOWEST ALIGNED LOGICAL BLOCK ADDRESS 0: LBA 0 starts a physical block. */
	b[13] = sbc_lbppbe(dev);
	if (sbc_thin(dev))
		b[14] |= 0x80; /* LBPME */
	if (sbc_lbprz(dev))
		b[14] |= 0x40; /* LBPRZ */
	scsi_data_in(t, b, alloc < sizeof(b) ? alloc : sizeof(b));
	return SR_OK;
}
