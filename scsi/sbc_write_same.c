/* WRITE SAME (10) and (16).
 *
 * The one block of Data-Out (zeros with NDOB) is replicated over the range.  With the UNMAP
 * bit on a thin LU the range is deallocated instead (punched holes, dropped pages) whatever
 * the block holds: the SBC-3 reading that Linux, LIO, SCST and libiscsi's UnmapUntilEnd test
 * (which sends 0xff with UNMAP and expects zeros back under LBPRZ) all share.  On a fully
 * provisioned LU (VPD B2 LBPWS/LBPWS10 0) the UNMAP bit is INVALID FIELD IN CDB, as SCST
 * answers and libiscsi's UnmapVPD tests require (a GOOD there would claim LBPME), and REPORT
 * SUPPORTED OPERATION CODES does not show the bit.  ANCHOR is refused (ANC_SUP=0).
 *
 * NUMBER OF LOGICAL BLOCKS 0 means "to the last LBA" (WSNZ=0); either way the count must not
 * exceed the Block Limits MAXIMUM WRITE SAME LENGTH.  The Data-Out buffer must be exactly one
 * block (none with NDOB): anything else is INVALID FIELD IN CDB, as libiscsi's
 * InvalidDataOutSize tests expect.  Long ranges are written in chunks on a core worker under a
 * shared range lock. */
#include <stdlib.h>

#include "scsi/sbc.h"

static bool ndob(const struct scsi_task *t)
{
	return t->cdb[0] == 0x93 && (t->cdb[1] & 0x01);
}

static uint64_t ws_count(const struct scsi_task *t, const struct sbc_cdb *c)
{
	uint64_t nr = t->core.dev->nr_blocks;

	if (c->nblocks)
		return c->nblocks;
	return c->lba <= nr ? nr - c->lba : 1; /* past the end: caught by the range check */
}

static enum scsi_sr write_same_work(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	struct sbc_cdb c;
	uint8_t *block;
	uint64_t n;
	enum bs_status st;

	sbc_decode(t, &c);
	n = ws_count(t, &c);
	block = calloc(1, dev->block_size);
	if (!block)
		return SR_NO_MEMORY;
	if (!ndob(t) && scsi_data_out(t, block, dev->block_size) != dev->block_size) {
		free(block);
		return SR_INTERNAL_ERROR; /* the size was checked before: a transport bug */
	}
	if (t->cdb[1] & 0x08) /* thin: checked by sbc_write_same() */
		st = sbc_unmap_sync(dev, c.lba, n);
	else
		st = sbc_fill_sync(dev, c.lba, n, block, sbc_write_durable(dev, false));
	free(block);
	return st == BS_OK ? SR_OK : scsi_sr_from_bs(st, true);
}

enum scsi_sr sbc_write_same(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint32_t want = ndob(t) ? 0 : dev->block_size;
	struct sbc_limits lim;
	struct sbc_cdb c;
	uint64_t n;
	enum scsi_sr sr;

	sbc_decode(t, &c);
	sr = sbc_check_protect(t, &c);
	if (sr != SR_OK)
		return sr;
	if (t->cdb[1] & 0x10) /* ANCHOR */
		return scsi_invalid_cdb(t, 1, 4);
	if ((t->cdb[1] & 0x08) && !sbc_thin(dev)) /* UNMAP without provisioning management */
		return scsi_invalid_cdb(t, 1, 3);
	if (t->cdb[0] == 0x41 && (t->cdb[1] & 0x06)) /* PBDATA / LBDATA (obsolete) */
		return scsi_invalid_cdb(t, 1, (t->cdb[1] & 0x04) ? 2 : 1);
	sbc_task_limits(t, &lim);
	if (!c.nblocks && lim.wsnz)
		return scsi_invalid_cdb(t, c.len_byte, -1);
	n = ws_count(t, &c);
	if (n > lim.max_write_same_blocks)
		return scsi_invalid_cdb(t, c.len_byte, -1);
	sr = sbc_check_range(t, c.lba, n);
	if (sr == SR_OK)
		sr = sbc_check_medium(t);
	if (sr != SR_OK)
		return sr;
	scsi_xfer_wanted(t, want);
	if (t->exp_xfer_len != want || (want && t->dir != SCSI_DIR_WRITE))
		return SR_INVALID_FIELD_IN_CDB;
	if (!n)
		return SR_OK; /* LBA at the end of the medium with "to the end": nothing to do */
	return sbc_locked_work(t, c.lba, n, false, write_same_work);
}
