/* ORWRITE(16): each block of the range becomes (medium OR data-out) — read, OR, write — with
 * the range locked exclusively, so no other command's write can fall between the read and
 * the write.  Long ranges are processed in chunks under that one lock. */
#include <stdlib.h>

#include "scsi/sbc.h"

/* OR the data-out bytes [skip, skip+len) into buf. */
static void or_data_out(const struct scsi_task *t, size_t skip, uint8_t *buf, size_t len)
{
	size_t done = 0;

	for (int i = 0; i < t->iovcnt && done < len; i++) {
		const uint8_t *seg = t->iov[i].iov_base;
		size_t l = t->iov[i].iov_len, n;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		n = l - skip < len - done ? l - skip : len - done;
		for (size_t j = 0; j < n; j++)
			buf[done + j] |= seg[skip + j];
		done += n;
		skip = 0;
	}
}

static enum scsi_sr orwrite_work(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint32_t bsz = dev->block_size;
	uint64_t per = SBC_CHUNK_BYTES / bsz, n, done = 0;
	struct sbc_cdb c;
	enum bs_status st = BS_OK;
	bool write = false;
	uint8_t *buf;

	sbc_decode(t, &c);
	/* the whole blocks the initiator sent (see sbc_rw.c) */
	n = t->dir == SCSI_DIR_WRITE ? scsi_xfer_len(t) / bsz : 0;
	if (n > c.nblocks)
		n = c.nblocks;
	if (!n)
		return SR_OK;
	buf = malloc((n < per ? n : per) * bsz);
	if (!buf)
		return SR_NO_MEMORY;
	while (done < n) {
		uint64_t k = n - done < per ? n - done : per;

		write = false;
		st = sbc_io_sync(dev, BS_READ, c.lba + done, k, buf, false);
		if (st != BS_OK)
			break;
		or_data_out(t, done * bsz, buf, k * bsz);
		write = true;
		st = sbc_io_sync(dev, BS_WRITE, c.lba + done, k, buf, sbc_write_durable(dev, c.fua));
		if (st != BS_OK)
			break;
		done += k;
	}
	free(buf);
	return st == BS_OK ? SR_OK : scsi_sr_from_bs(st, write);
}

enum scsi_sr sbc_orwrite(struct scsi_task *t)
{
	struct sbc_cdb c;
	enum scsi_sr sr;

	sbc_decode(t, &c);
	sr = sbc_check_xfer(t, &c);
	if (sr == SR_OK)
		sr = scsi_xfer_blocks_out(t, c.nblocks, t->core.dev->block_size);
	if (sr != SR_OK)
		return sr;
	if (!c.nblocks)
		return SR_OK;
	return sbc_locked_work(t, c.lba, c.nblocks, true, orwrite_work);
}
