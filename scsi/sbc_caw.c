/* COMPARE AND WRITE: the Data-Out buffer holds 2n blocks, the verify data then the write data.
 * With the n blocks locked exclusively (no other command reads or writes them meanwhile) the
 * medium is read and compared with the verify data; on a difference the command ends with
 * MISCOMPARE 1D/00, INFORMATION = offset of the first differing byte, and nothing is written;
 * otherwise the write data goes to the medium straight from the task's iovecs.  A store that
 * compares and writes itself (compare_write_max) gets the whole buffer in one verb instead.
 *
 * NUMBER OF LOGICAL BLOCKS 0 transfers and does nothing (SBC); above the Block Limits MAXIMUM
 * COMPARE AND WRITE LENGTH it is INVALID FIELD IN CDB.  The Data-Out buffer must be exactly
 * 2n blocks: anything else is INVALID FIELD IN CDB pointing at the length, as libiscsi's
 * InvalidDataOutSize test expects. */
#include <stdlib.h>

#include "scsi/sbc.h"

/* A store that compares and writes atomically itself (vdisk_rbd: atomic in the cluster, so
 * across every gateway serving the image) gets the whole Data-Out buffer in one verb. */
static enum scsi_sr caw_in_store(struct scsi_task *t, const struct sbc_cdb *c)
{
	struct scsi_dev *dev = t->core.dev;
	struct bs_io io = {
	    .op = BS_COMPARE_WRITE,
	    .off = c->lba * dev->block_size,
	    .len = (uint64_t)c->nblocks * dev->block_size,
	    .iov = t->iov,
	    .iovcnt = t->iovcnt,
	    .fua = sbc_write_durable(dev, c->fua),
	};
	enum bs_status st = bs_submit_sync(dev->bs, &io);

	if (st == BS_MISCOMPARE)
		return scsi_set_info(t, SR_MISCOMPARE, io.miscompare_at);
	return scsi_sr_from_bs(st, true);
}

static enum scsi_sr caw_work(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint32_t bsz = dev->block_size;
	struct sbc_cdb c;
	struct iovec *iov = NULL;
	uint8_t *buf;
	size_t len, at;
	enum bs_status st;
	enum scsi_sr sr;
	int n;

	sbc_decode(t, &c);
	if ((uint64_t)c.nblocks * bsz <= dev->bs->compare_write_max)
		return caw_in_store(t, &c);
	len = (size_t)c.nblocks * bsz;
	buf = malloc(len);
	if (!buf)
		return SR_NO_MEMORY;
	st = sbc_io_sync(dev, BS_READ, c.lba, c.nblocks, buf, false);
	if (st != BS_OK) {
		free(buf);
		return scsi_sr_from_bs(st, false);
	}
	at = sbc_iov_cmp(t, 0, buf, len);
	free(buf);
	if (at < len)
		return scsi_set_info(t, SR_MISCOMPARE, at);

	iov = calloc((size_t)t->iovcnt, sizeof(*iov));
	if (!iov)
		return SR_NO_MEMORY;
	n = sbc_iov_slice(t, len, len, iov, t->iovcnt);
	if (n < 0)
		sr = SR_INTERNAL_ERROR;
	else {
		st = sbc_iov_sync(dev, BS_WRITE, c.lba, c.nblocks, iov, n,
				  sbc_write_durable(dev, c.fua));
		sr = st == BS_OK ? SR_OK : scsi_sr_from_bs(st, true);
	}
	free(iov);
	return sr;
}

enum scsi_sr sbc_compare_and_write(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	struct sbc_limits lim;
	struct sbc_cdb c;
	uint64_t want;
	enum scsi_sr sr;

	sbc_decode(t, &c);
	sbc_task_limits(t, &lim);
	sr = sbc_check_xfer_max(t, &c, lim.max_compare_write_blocks);
	if (sr != SR_OK)
		return sr;
	want = 2ull * c.nblocks * dev->block_size;
	scsi_xfer_wanted(t, want);
	if (t->exp_xfer_len != want || (want && t->dir != SCSI_DIR_WRITE))
		return scsi_invalid_cdb(t, c.len_byte, -1);
	if (!c.nblocks)
		return SR_OK;
	return sbc_locked_work(t, c.lba, c.nblocks, true, caw_work);
}
