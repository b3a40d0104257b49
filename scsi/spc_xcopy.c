/* EXTENDED COPY(LID1): the copy manager's state per LU and the copy itself.
 *
 * The handler reads the parameter list, then moves to a core worker (scsi_run_blocking): it
 * resolves the CSCD descriptors (spc_xcopy_parse.c), checks every segment against the LUs it
 * names (range, write protection, reservations, ALUA, not ready) before moving a byte, then
 * copies each segment in XC_CHUNK pieces with bs_submit_sync(), each read and each write under
 * the LBA range lock a READ or WRITE of those blocks would hold.  Progress is recorded for
 * RECEIVE COPY RESULTS under the (nexus, LIST ID) pair; a second copy with a LIST ID still
 * running for the same nexus is refused with OPERATION IN PROGRESS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scsi/scsi_core.h"
#include "scsi/spc_pr.h"
#include "scsi/spc_xcopy.h"

/* room for any list the parser should see and judge (too many descriptors, etc.) */
#define XC_PARAM_MAX (64u * 1024)

struct scsi_xcopy *scsi_xcopy_create(struct scsi_dev *dev)
{
	struct scsi_xcopy *xc = calloc(1, sizeof(*xc));

	if (!xc)
		return NULL;
	xc->dev = dev;
	pthread_mutex_init(&xc->mu, NULL);
	return xc;
}

void scsi_xcopy_destroy(struct scsi_xcopy *xc)
{
	if (!xc)
		return;
	pthread_mutex_destroy(&xc->mu);
	free(xc);
}

struct xc_op *xc_op_find(struct scsi_xcopy *xc, const struct scsi_nexus *nx, uint8_t list_id)
{
	for (unsigned i = 0; i < XC_MAX_TRACKED; i++) {
		struct xc_op *op = &xc->ops[i];
		if (op->state != XC_FREE && op->list_id == list_id && op->rtpi == nx->rel_tgt_id &&
		    !strcmp(op->port, nx->initiator_port))
			return op;
	}
	return NULL;
}

/* Register a starting copy.  Returns the slot, or NULL with *sr set. */
static struct xc_op *op_start(struct scsi_xcopy *xc, const struct scsi_nexus *nx,
			      const struct xc_list *l, enum scsi_sr *sr)
{
	struct xc_op *op, *victim = NULL;
	unsigned running = 0;

	pthread_mutex_lock(&xc->mu);
	op = xc_op_find(xc, nx, l->list_id);
	if (op && op->state == XC_RUNNING) {
		*sr = SR_OPERATION_IN_PROGRESS;
		op = NULL;
		goto out;
	}
	for (unsigned i = 0; i < XC_MAX_TRACKED; i++) {
		struct xc_op *o = &xc->ops[i];
		if (o->state == XC_RUNNING)
			running++;
		else if (!op && (!victim || o->state == XC_FREE ||
				 (victim->state != XC_FREE && o->seq < victim->seq)))
			victim = o;
	}
	if (running >= XC_MAX_CONCURRENT) {
		*sr = SR_BUSY;
		op = NULL;
		goto out;
	}
	if (!op)
		op = victim; /* never NULL: fewer running than slots */
	memset(op, 0, sizeof(*op));
	op->state = XC_RUNNING;
	snprintf(op->port, sizeof(op->port), "%s", nx->initiator_port);
	op->rtpi = nx->rel_tgt_id;
	op->list_id = l->list_id;
	op->hold = l->list_id_usage == XC_LID_HOLD;
	op->seq = ++xc->seq;
out:
	pthread_mutex_unlock(&xc->mu);
	return op;
}

static void op_progress(struct scsi_xcopy *xc, struct xc_op *op, uint16_t segs, uint64_t bytes)
{
	if (!op)
		return;
	pthread_mutex_lock(&xc->mu);
	op->segs_done = segs;
	op->bytes_done = bytes;
	pthread_mutex_unlock(&xc->mu);
}

static void op_finish(struct scsi_xcopy *xc, struct xc_op *op, enum scsi_sr sr)
{
	const struct scsi_sr_info *i = scsi_sr_info(sr);

	if (!op)
		return;
	pthread_mutex_lock(&xc->mu);
	if (!op->hold) {
		op->state = XC_FREE;
	} else {
		op->state = sr == SR_OK ? XC_DONE_OK : XC_DONE_ERROR;
		op->sense_key = i ? i->key : SK_ABORTED_COMMAND;
		op->asc = i ? i->asc : 0;
		op->ascq = i ? i->ascq : 0;
		op->seq = ++xc->seq;
	}
	pthread_mutex_unlock(&xc->mu);
}

/* May the requesting nexus read (write) this LU right now?  The same rules its own READ
 * (WRITE) would meet at admission. */
static enum scsi_sr access_check(struct scsi_task *t, const struct xc_target *tg, bool write)
{
	struct scsi_dev *dev = tg->dev;
	const struct scsi_tpg *tpg = scsi_dev_tpg(dev, t->nexus->rel_tgt_id);
	enum scsi_sr sr = tpg ? scsi_alua_access(scsi_tpg_state(dev, tpg)) : SR_OK;

	if (sr != SR_OK)
		return sr;
	if (scsi_pr_conflicts(dev, t->nexus, write ? PRC_WRITE : PRC_READ))
		return SR_RESERVATION_CONFLICT;
	if (write && scsi_dev_write_protected(dev, tg->ent))
		return SR_WRITE_PROTECTED;
	return scsi_dev_readiness(dev);
}

/* Bytes a segment moves; 0 with *sr set when the block sizes do not divide it. */
static uint64_t seg_bytes(struct scsi_task *t, const struct xc_list *l, const struct xc_segment *s,
			  enum scsi_sr *sr)
{
	uint32_t sbs = l->tgt[s->src].dev->block_size, dbs = l->tgt[s->dst].dev->block_size;
	uint64_t bytes = (uint64_t)s->nblocks * (s->dc ? dbs : sbs);

	*sr = SR_OK;
	if (bytes % sbs || bytes % dbs)
		*sr = scsi_invalid_param(t, (uint16_t)(s->desc_off + 10), -1);
	return bytes;
}

static enum scsi_sr check_segments(struct scsi_task *t, const struct xc_list *l)
{
	for (unsigned i = 0; i < l->nsegs; i++) {
		const struct xc_segment *s = &l->seg[i];
		const struct xc_target *src = &l->tgt[s->src], *dst = &l->tgt[s->dst];
		enum scsi_sr sr;
		uint64_t bytes = seg_bytes(t, l, s, &sr);

		if (sr != SR_OK)
			return sr;
		/* a segment the LUs cannot hold ends the copy: COPY ABORTED with the segment
		 * pointer on the LBA that does not fit */
		if (s->src_lba > src->dev->nr_blocks ||
		    bytes / src->dev->block_size > src->dev->nr_blocks - s->src_lba) {
			(void)scsi_invalid_param(t, (uint16_t)(s->desc_off + 12), -1);
			return SR_COPY_ABORTED;
		}
		if (s->dst_lba > dst->dev->nr_blocks ||
		    bytes / dst->dev->block_size > dst->dev->nr_blocks - s->dst_lba) {
			(void)scsi_invalid_param(t, (uint16_t)(s->desc_off + 20), -1);
			return SR_COPY_ABORTED;
		}
		if ((sr = access_check(t, src, false)) != SR_OK)
			return sr;
		if ((sr = access_check(t, dst, true)) != SR_OK)
			return sr;
	}
	return SR_OK;
}

/* One backstore I/O under the LBA range lock a READ (WRITE) of those blocks would take, so
 * COMPARE AND WRITE, WRITE ATOMIC and the other exclusive commands stay atomic against the
 * copy.  One range at a time: holding the source's while waiting for the destination's could
 * deadlock against exclusive waiters queued on both. */
static enum bs_status locked_io(struct scsi_dev *dev, struct bs_io *io)
{
	struct scsi_range_hold *h;
	enum bs_status st;

	h = scsi_range_lock_blocking(dev, io->off >> dev->block_shift, io->len >> dev->block_shift,
				     false);
	if (!h)
		return BS_ENOMEM;
	st = bs_submit_sync(dev->bs, io);
	scsi_range_unlock_blocking(h);
	return st;
}

static enum scsi_sr copy_segment(struct scsi_task *t, const struct xc_list *l,
				 const struct xc_segment *s, uint8_t *buf, uint64_t *moved)
{
	struct scsi_dev *src = l->tgt[s->src].dev, *dst = l->tgt[s->dst].dev;
	uint64_t soff = s->src_lba << src->block_shift, doff = s->dst_lba << dst->block_shift;
	enum scsi_sr sr;
	uint64_t bytes = seg_bytes(t, l, s, &sr);

	for (uint64_t done = 0; done < bytes;) {
		uint64_t n = bytes - done < XC_CHUNK ? bytes - done : XC_CHUNK;
		struct iovec iov = {buf, (size_t)n};
		struct bs_io rd = {
		    .op = BS_READ, .off = soff + done, .len = n, .iov = &iov, .iovcnt = 1};
		struct bs_io wr = {
		    .op = BS_WRITE, .off = doff + done, .len = n, .iov = &iov, .iovcnt = 1};
		enum bs_status st;

		if (t->core.dev && scsi_ts_aborted(t->core.dev->ts, t))
			return SR_ABORTED;
		if ((st = locked_io(src, &rd)) != BS_OK)
			return st == BS_ENOMEM ? SR_NO_MEMORY : SR_COPY_ABORTED_IO;
		if ((st = locked_io(dst, &wr)) != BS_OK)
			return st == BS_ENOMEM ? SR_NO_MEMORY : SR_COPY_ABORTED_IO;
		done += n;
		*moved += n;
	}
	return SR_OK;
}

static enum scsi_sr xcopy_work(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint32_t len = get_be32(t->cdb + 10);
	struct xc_list *l = NULL;
	struct xc_op *op = NULL;
	uint8_t *param = NULL, *buf = NULL;
	uint64_t moved = 0;
	enum scsi_sr sr;

	param = malloc(len);
	l = malloc(sizeof(*l));
	if (!param || !l) {
		sr = SR_NO_MEMORY;
		goto out;
	}
	if (scsi_data_out(t, param, len) < len) {
		sr = SR_PARAM_LIST_LENGTH_ERROR;
		goto out;
	}
	if ((sr = xc_parse(t, param, len, l)) != SR_OK)
		goto out;
	if (l->list_id_usage != XC_LID_NONE && !(op = op_start(dev->xc, t->nexus, l, &sr)))
		goto out;
	if ((sr = check_segments(t, l)) != SR_OK)
		goto done;
	if (l->nsegs && !(buf = aligned_alloc(4096, XC_CHUNK))) {
		sr = SR_NO_MEMORY;
		goto done;
	}
	for (unsigned i = 0; i < l->nsegs; i++) {
		if ((sr = copy_segment(t, l, &l->seg[i], buf, &moved)) != SR_OK)
			break;
		op_progress(dev->xc, op, (uint16_t)(i + 1), moved);
	}
done:
	op_finish(dev->xc, op, sr);
out:
	free(buf);
	free(param);
	free(l);
	return sr;
}

enum scsi_sr spc_extended_copy(struct scsi_task *t)
{
	uint32_t len = get_be32(t->cdb + 10);

	if (!t->core.dev || !t->core.dev->xc || !t->nexus)
		return SR_INTERNAL_ERROR;
	if (len == 0)
		return SR_OK; /* SPC-4: a zero-length parameter list is not an error */
	if (len > XC_PARAM_MAX)
		return SR_PARAM_LIST_LENGTH_ERROR;
	return scsi_run_blocking(t, xcopy_work);
}
