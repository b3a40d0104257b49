/* GET LBA STATUS: which blocks from the starting LBA on are mapped and which deallocated, as
 * the backstore knows it (fileio: SEEK_DATA/SEEK_HOLE, vdisk_rbd: the objects that exist; see
 * backstore_ops.lba_status).  A store without that verb, and any LU that is not thin
 * provisioned (sbc_thin: no LBPME), is reported mapped throughout. */
#include <stdlib.h>

#include "scsi/sbc.h"

/* Descriptors per response: enough for any sane allocation length while bounding the
 * number of backstore queries one command makes. */
#define MAX_DESCRIPTORS 128

enum { LBA_MAPPED = 0, LBA_DEALLOCATED = 1 };

static void put_desc(uint8_t *d, uint64_t lba, uint32_t n, uint8_t status)
{
	put_be64(d, lba);
	put_be32(d + 8, n);
	d[12] = status;
}

static uint32_t ndesc_for(uint32_t alloc)
{
	uint32_t n = alloc > 8 ? (alloc - 8) / 16 : 0;

	return n < 1 ? 1 : (n > MAX_DESCRIPTORS ? MAX_DESCRIPTORS : n);
}

static enum scsi_sr lba_status_work(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	struct backstore *bs = dev->bs;
	uint32_t bsz = dev->block_size;
	uint64_t lba = get_be64(t->cdb + 2);
	uint32_t alloc = get_be32(t->cdb + 10);
	uint32_t max = ndesc_for(alloc), n = 0;
	uint8_t *buf = calloc(1, 8 + (size_t)max * 16);

	if (!buf)
		return SR_NO_MEMORY;
	while (n < max && lba < dev->nr_blocks) {
		uint64_t left = dev->nr_blocks - lba, run = 0;
		bool mapped = true;
		enum bs_status st;

		if (left > UINT32_MAX)
			left = UINT32_MAX; /* one descriptor's NUMBER OF LOGICAL BLOCKS field */
		st = bs->ops->lba_status(bs, lba * bsz, left * bsz, &mapped, &run);
		if (st == BS_ENOTSUP) { /* e.g. a file system without SEEK_DATA */
			mapped = true;
			run = left * bsz;
			st = BS_OK;
		}
		if (st != BS_OK) {
			free(buf);
			return scsi_sr_from_bs(st, false);
		}
		run /= bsz;
		if (run == 0 || run > left)
			run = left; /* a store answering nonsense must not loop us forever */
		put_desc(buf + 8 + n * 16, lba, (uint32_t)run, mapped ? LBA_MAPPED : LBA_DEALLOCATED);
		n++;
		lba += run;
	}
	put_be32(buf, 4 + n * 16); /* PARAMETER DATA LENGTH: what follows this field */
	scsi_data_in(t, buf, 8 + n * 16 < alloc ? 8 + n * 16 : alloc);
	free(buf);
	return SR_OK;
}

enum scsi_sr sbc_get_lba_status(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint64_t lba = get_be64(t->cdb + 2);
	uint32_t alloc = get_be32(t->cdb + 10);
	enum scsi_sr sr;

	if (lba >= dev->nr_blocks)
		return SR_LBA_OUT_OF_RANGE;
	sr = sbc_check_medium(t);
	if (sr != SR_OK || alloc == 0)
		return sr;
	/* a fully provisioned LU (no LBPME in READ CAPACITY(16), no VPD B2 bits) is mapped
	 * throughout, whatever its medium's holes say */
	if (!dev->bs->ops->lba_status || !sbc_thin(dev)) {
		uint8_t b[24] = {0};
		uint64_t left = dev->nr_blocks - lba;

		put_be32(b, 4 + 16);
		put_desc(b + 8, lba, left > UINT32_MAX ? UINT32_MAX : (uint32_t)left, LBA_MAPPED);
		scsi_data_in(t, b, alloc < sizeof(b) ? alloc : sizeof(b));
		return SR_OK;
	}
	return scsi_run_blocking(t, lba_status_work);
}
