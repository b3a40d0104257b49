/* READ and WRITE (6/10/12/16): the hot path.  One backstore I/O straight over the task's own
 * iovecs (no data copy), submitted from the handler, completed from the backstore's callback;
 * a READ longer than the room its transport gave it goes in pieces (sbc_stream.c), and one
 * whose store is memory may be answered with the store's own bytes (sbc_lend.c).
 *
 * How much moves follows the residual rule of scsi/scsi_data.c: min(CDB length, expected
 * transfer length).  A WRITE whose expected length is shorter than its CDB writes only the
 * whole blocks that length covers, and one whose expected length ends inside a block is
 * refused before anything is written; a READ sends exactly the expected length, reading the
 * last, partial block's remainder into a scratch tail. */
#include <stdlib.h>

#include "scsi/backstore/bs_util.h"
#include "scsi/sbc.h"

static void rw_done(struct bs_io *io, enum bs_status st)
{
	struct sbc_cmd *c = io->priv;
	struct scsi_task *t = c->t;
	bool write = io->op == BS_WRITE;

	sbc_cmd_free(c);
	scsi_task_complete(t, st == BS_OK ? SR_OK : scsi_sr_from_bs(st, write));
}

static void rw_submit(struct sbc_cmd *c)
{
	/* lent: c keeps the range until the transport releases the data (sbc_lend.c) */
	if (c->lend_ok && sbc_lend(c, c->io.off, c->io.len)) {
		scsi_task_complete(c->t, SR_OK);
		return;
	}
	c->dev->bs->ops->submit(c->dev->bs, &c->io);
}

/* Point c->io at the first `bytes` of the task's buffer, followed by `extra` scratch bytes. */
static enum scsi_sr build_iov(struct sbc_cmd *c, size_t bytes, size_t extra)
{
	struct scsi_task *t = c->t;
	int need = 0, n;
	size_t left = bytes;

	if (!extra && bs_iov_total(t->iov, t->iovcnt) == bytes) {
		c->io.iov = t->iov;
		c->io.iovcnt = t->iovcnt;
		return SR_OK;
	}
	for (int i = 0; i < t->iovcnt && left; i++) {
		need++;
		left -= t->iov[i].iov_len < left ? t->iov[i].iov_len : left;
	}
	if (left)
		return SR_INTERNAL_ERROR; /* the transport gave less room than it announced */
	need += extra ? 1 : 0;
	if (need <= (int)(sizeof(c->iov_small) / sizeof(c->iov_small[0]))) {
		c->iov = c->iov_small;
	} else {
		c->iov = calloc((size_t)need, sizeof(*c->iov));
		if (!c->iov)
			return SR_NO_MEMORY;
	}
	n = sbc_iov_slice(t, 0, bytes, c->iov, need);
	if (extra) {
		c->tail = malloc(extra);
		if (!c->tail)
			return SR_NO_MEMORY;
		c->iov[n].iov_base = c->tail;
		c->iov[n].iov_len = extra;
		n++;
	}
	c->io.iov = c->iov;
	c->io.iovcnt = n;
	return SR_OK;
}

enum scsi_sr sbc_rw_start(struct scsi_task *t, const struct sbc_cdb *cdb, bool write, bool excl)
{
	struct scsi_dev *dev = t->core.dev;
	uint32_t bsz = dev->block_size;
	uint64_t bytes, io_len;
	struct sbc_cmd *c;
	enum scsi_sr sr;

	if (write) {
		sr = scsi_xfer_blocks_out(t, cdb->nblocks, bsz);
		if (sr != SR_OK)
			return sr;
	} else {
		scsi_xfer_wanted(t, (uint64_t)cdb->nblocks * bsz);
	}
	bytes = scsi_xfer_len(t);
	if (t->dir != (write ? SCSI_DIR_WRITE : SCSI_DIR_READ))
		bytes = 0; /* no buffer in the direction this command moves data */
	io_len = (bytes + bsz - 1) / bsz * bsz; /* a WRITE's bytes are whole blocks (above) */
	if (!io_len)
		return SR_OK;
	if (!write && t->din_ready && bs_iov_total(t->iov, t->iovcnt) < bytes)
		return sbc_read_stream(t, cdb, (uint32_t)bytes, bs_iov_total(t->iov, t->iovcnt));

	c = sbc_cmd_new(t);
	if (!c)
		return SR_NO_MEMORY;
	c->io.op = write ? BS_WRITE : BS_READ;
	c->io.off = cdb->lba * bsz;
	c->io.len = io_len;
	c->io.fua = write && sbc_write_durable(dev, cdb->fua);
	c->io.inline_ok = t->inline_io;
	c->io.inline_wait_ok = t->inline_wait;
	c->io.inline_large_ok = t->inline_large;
	c->io.cb = rw_done;
	c->lend_ok = !write && t->din_lend && dev->lend;
	sr = build_iov(c, bytes, io_len - bytes);
	if (sr != SR_OK) {
		sbc_cmd_free(c);
		return sr;
	}
	if (sbc_range_lock(c, cdb->lba, io_len / bsz, excl, rw_submit))
		rw_submit(c);
	/* c and t may be gone already: the I/O can complete before submit returns */
	return SR_ASYNC;
}

static enum scsi_sr rw_cmd(struct scsi_task *t, bool write)
{
	struct sbc_cdb c;
	enum scsi_sr sr;

	sbc_decode(t, &c);
	sr = sbc_check_xfer(t, &c);
	if (sr != SR_OK)
		return sr;
	return sbc_rw_start(t, &c, write, false);
}

enum scsi_sr sbc_read(struct scsi_task *t)
{
	return rw_cmd(t, false);
}

enum scsi_sr sbc_write(struct scsi_task *t)
{
	return rw_cmd(t, true);
}
