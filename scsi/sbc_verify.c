/* VERIFY (10/12/16) and WRITE AND VERIFY (10/12/16).
 *
 * VERIFY BYTCHK 00b: medium verification, i.e. every block of the range is read (and thrown
 *   away); an unreadable block is a MEDIUM ERROR.
 * VERIFY BYTCHK 01b: the Data-Out buffer (one block per block of the range) is compared with
 *   the medium; the first difference ends the command with MISCOMPARE 1D/00 and INFORMATION set
 *   to the offset of the differing byte from the start of the Data-Out buffer.
 * VERIFY BYTCHK 11b: one block of Data-Out is compared with every block of the range;
 *   INFORMATION is the offset the differing byte would have if that block were repeated over
 *   the range (block index * block size + byte), which tells the initiator which LBA differs.
 * WRITE AND VERIFY: the data is written durably (unless the cache is non-volatile), read back,
 *   and with BYTCHK=1 compared with the Data-Out buffer.  The range is locked exclusively so
 *   the read-back sees this command's data and not a concurrent writer's.
 *
 * When the initiator sends fewer bytes than the CDB asks for (residual overflow), only the
 * whole blocks it sent are compared or written, as for WRITE; VERIFY still reads the rest of
 * the range as a medium verification. */
#include <stdlib.h>

#include "scsi/sbc.h"

enum { BYTCHK_NONE = 0, BYTCHK_COMPARE = 1, BYTCHK_RESERVED = 2, BYTCHK_ONE_BLOCK = 3 };

/* Whole blocks of data-out the command may use. */
static uint64_t usable_blocks(const struct scsi_task *t)
{
	if (t->dir != SCSI_DIR_WRITE)
		return 0;
	return scsi_xfer_len(t) / t->core.dev->block_size;
}

/* Read [lba, lba+n) in chunks.  mode: what to do with each chunk:
 *   BYTCHK_NONE: nothing (medium verification);
 *   BYTCHK_COMPARE: compare with the data-out (whose first byte belongs to lba);
 *   BYTCHK_ONE_BLOCK: compare every block with `pattern`. */
static enum scsi_sr read_and_check(struct scsi_task *t, uint64_t lba, uint64_t n, int mode,
				   const uint8_t *pattern)
{
	struct scsi_dev *dev = t->core.dev;
	uint32_t bsz = dev->block_size;
	uint64_t per = SBC_CHUNK_BYTES / bsz, done = 0;
	enum scsi_sr sr = SR_OK;
	uint8_t *buf;

	if (!n)
		return SR_OK;
	buf = malloc((n < per ? n : per) * bsz);
	if (!buf)
		return SR_NO_MEMORY;
	while (done < n && sr == SR_OK) {
		uint64_t k = n - done < per ? n - done : per;
		size_t len = k * bsz, at;
		enum bs_status st = sbc_io_sync(dev, BS_READ, lba + done, k, buf, false);

		if (st != BS_OK) {
			sr = scsi_sr_from_bs(st, false);
			break;
		}
		if (mode == BYTCHK_COMPARE) {
			at = sbc_iov_cmp(t, done * bsz, buf, len);
			if (at < len)
				sr = scsi_set_info(t, SR_MISCOMPARE, done * bsz + at);
		} else if (mode == BYTCHK_ONE_BLOCK) {
			for (uint64_t b = 0; b < k && sr == SR_OK; b++) {
				const uint8_t *blk = buf + b * bsz;

				if (!memcmp(blk, pattern, bsz))
					continue;
				for (at = 0; blk[at] == pattern[at]; at++)
					;
				sr = scsi_set_info(t, SR_MISCOMPARE, (done + b) * bsz + at);
			}
		}
		done += k;
	}
	free(buf);
	return sr;
}

static enum scsi_sr verify_work(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	int bytchk = (t->cdb[1] >> 1) & 3;
	uint64_t have = usable_blocks(t);
	struct sbc_cdb c;
	uint8_t *pattern;
	enum scsi_sr sr;

	sbc_decode(t, &c);
	if (bytchk == BYTCHK_COMPARE) {
		uint64_t m = have < c.nblocks ? have : c.nblocks;

		sr = read_and_check(t, c.lba, m, BYTCHK_COMPARE, NULL);
		if (sr == SR_OK)
			sr = read_and_check(t, c.lba + m, c.nblocks - m, BYTCHK_NONE, NULL);
		return sr;
	}
	if (bytchk == BYTCHK_ONE_BLOCK && have) {
		pattern = malloc(dev->block_size);
		if (!pattern)
			return SR_NO_MEMORY;
		scsi_data_out(t, pattern, dev->block_size);
		sr = read_and_check(t, c.lba, c.nblocks, BYTCHK_ONE_BLOCK, pattern);
		free(pattern);
		return sr;
	}
	return read_and_check(t, c.lba, c.nblocks, BYTCHK_NONE, NULL);
}

enum scsi_sr sbc_verify(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	int bytchk = (t->cdb[1] >> 1) & 3;
	struct sbc_limits lim;
	struct sbc_cdb c;
	enum scsi_sr sr;

	sbc_decode(t, &c);
	sr = sbc_check_protect(t, &c);
	if (sr != SR_OK)
		return sr;
	if (bytchk == BYTCHK_RESERVED)
		return scsi_invalid_cdb(t, 1, 2);
	if (bytchk == BYTCHK_COMPARE) {
		/* only then does the length size the Data-Out buffer */
		sbc_task_limits(t, &lim);
		sr = sbc_check_len(t, &c, lim.max_xfer_blocks);
		if (sr != SR_OK)
			return sr;
	}
	sr = sbc_check_range(t, c.lba, c.nblocks);
	if (sr == SR_OK)
		sr = sbc_check_medium(t);
	if (sr != SR_OK)
		return sr;
	if (bytchk == BYTCHK_COMPARE)
		scsi_xfer_wanted(t, (uint64_t)c.nblocks * dev->block_size);
	else if (bytchk == BYTCHK_ONE_BLOCK)
		scsi_xfer_wanted(t, c.nblocks ? dev->block_size : 0);
	else
		scsi_xfer_wanted(t, 0);
	if (!c.nblocks)
		return SR_OK; /* no blocks: nothing verified, not an error */
	return sbc_locked_work(t, c.lba, c.nblocks, false, verify_work);
}

static enum scsi_sr write_verify_work(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	bool compare = t->cdb[1] & 0x02;
	uint64_t have = usable_blocks(t), m;
	struct iovec *iov;
	struct sbc_cdb c;
	enum bs_status st;
	int n;

	sbc_decode(t, &c);
	m = have < c.nblocks ? have : c.nblocks;
	if (!m)
		return SR_OK;
	iov = calloc((size_t)t->iovcnt, sizeof(*iov));
	if (!iov)
		return SR_NO_MEMORY;
	n = sbc_iov_slice(t, 0, m * dev->block_size, iov, t->iovcnt);
	st = n < 0 ? BS_ERANGE
		   : sbc_iov_sync(dev, BS_WRITE, c.lba, m, iov, n, sbc_write_durable(dev, true));
	free(iov);
	if (st != BS_OK)
		return n < 0 ? SR_INTERNAL_ERROR : scsi_sr_from_bs(st, true);
	return read_and_check(t, c.lba, m, compare ? BYTCHK_COMPARE : BYTCHK_NONE, NULL);
}

enum scsi_sr sbc_write_verify(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	struct sbc_cdb c;
	enum scsi_sr sr;

	sbc_decode(t, &c);
	if (t->cdb[1] & 0x04) /* SBC-4's second BYTCHK bit: 10b/11b are reserved here */
		return scsi_invalid_cdb(t, 1, 2);
	sr = sbc_check_xfer(t, &c);
	if (sr == SR_OK)
		sr = scsi_xfer_blocks_out(t, c.nblocks, dev->block_size);
	if (sr != SR_OK)
		return sr;
	if (!c.nblocks)
		return SR_OK;
	return sbc_locked_work(t, c.lba, c.nblocks, true, write_verify_work);
}
