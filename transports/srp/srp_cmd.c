/* SRP_CMD: a parsed command becomes a scsi_task.  Data-out arrives as immediate data (the
 * task reads it straight from the receive buffer) or is fetched by RDMA READ into data pool
 * chunks first; data-in lands in pool chunks and goes out by RDMA WRITE chained with the
 * SRP_RSP, which carries status, sense, residuals and the earned credits.  Responses of
 * task management functions go through here as well (srpt_req_respond). */
#include <errno.h>
#include <string.h>

#include "scsi/scsi_lun.h"
#include "scsi/scsi_sense.h"
#include "common/ut_log.h"
#include "transports/srp/srp_int.h"
#include "transports/srp/srp_iu.h"

static void exec(struct srpt_req *r);

static enum scsi_task_attr map_attr(uint8_t a)
{
	switch (a) {
	case 1:
		return SCSI_ATTR_HEAD_OF_QUEUE;
	case 2:
		return SCSI_ATTR_ORDERED;
	case 4:
		return SCSI_ATTR_ACA;
	default:
		return SCSI_ATTR_SIMPLE;
	}
}

/* The initiator's descriptors of this command, from the receive buffer. */
static unsigned remote_segs(const struct srpt_req *r, struct rdma_rseg *rem)
{
	for (unsigned i = 0; i < r->cmd.ndesc; i++) {
		struct srp_desc d = srp_cmd_desc(r->iu->data, &r->cmd, i);
		rem[i] = (struct rdma_rseg){.addr = d.va, .rkey = d.key, .len = d.len};
	}
	return r->cmd.ndesc;
}

/* ---- completion from the core (any thread) ---- */

static void done_fn(struct ut_msg *m)
{
	struct srpt_req *r = (struct srpt_req *)((char *)m - offsetof(struct srpt_req, msg));
	struct srpt_ch *ch = r->ch;

	if (ch->state == SRPT_CH_DOWN || (!r->is_tmf && r->st.aborted)) {
		/* nobody to answer, or aborted by a TMF: SAM sends no response; the credit
		 * comes back with the next response or an SRP_CRED_REQ */
		srpt_ch_req_free(ch, r);
		return;
	}
	srpt_req_respond(r);
}

static void task_done(struct scsi_task *st)
{
	struct srpt_req *r = (struct srpt_req *)st;

	r->msg.fn = done_fn;
	srpt_io->call(r->ch->conn, &r->msg);
}

static void exec(struct srpt_req *r)
{
	r->state = REQ_EXEC;
	scsi_task_execute(&r->st);
}

/* ---- response ---- */

static void rsp_done(struct rdma_conn *c, struct rdma_op *op, bool ok)
{
	struct srpt_req *r = (struct srpt_req *)((char *)op - offsetof(struct srpt_req, op));

	(void)c;
	(void)ok;
	srpt_ch_req_free(r->ch, r);
}

static uint8_t tmf_code(const struct srpt_req *r)
{
	return r->tmf_code;
}

void srpt_req_respond(struct srpt_req *r)
{
	struct srpt_ch *ch = r->ch;
	struct rdma_rseg rem[256];
	struct srp_rsp_info info = {.resp_code = -1};
	unsigned nrem = 0;
	uint64_t bytes = 0;
	struct rdma_buf *b;
	size_t len;
	bool sol;
	int rc;

	if (ch->state == SRPT_CH_DOWN) {
		srpt_ch_req_free(ch, r);
		return;
	}
	b = srpt_ch_send_buf(ch);
	if (!b) {
		r->state = REQ_WAIT_SQ;
		srpt_ch_sq_wait(ch, r);
		return;
	}
	if (!r->is_tmf && r->cmd.dir == SRP_DIR_IN && r->nsegs > 0 && r->st.data_len) {
		nrem = remote_segs(r, rem); /* before the receive buffer goes back */
		bytes = r->st.data_len < r->cmd.xfer_len ? r->st.data_len : r->cmd.xfer_len;
	}
	srpt_ch_return_iu(ch, r);
	info.req_lim_delta = srp_credit_grant(&ch->cred);
	if (r->is_tmf) {
		info.tag = r->cmd.tag;
		info.resp_code = tmf_code(r);
		sol = srp_rsp_solicited(r->cmd.sol_not, info.resp_code ? 2 : 0);
	} else {
		info.tag = r->cmd.tag;
		info.status = r->st.status;
		if (r->st.sense_len) {
			info.sense = r->st.sense;
			info.sense_len = r->st.sense_len;
		}
		srp_rsp_set_resid(&info, r->cmd.dir, (int)r->st.resid_kind, r->st.resid);
		sol = srp_rsp_solicited(r->cmd.sol_not, r->st.status);
	}
	len = srp_build_rsp(b->data, ch->ti_iu_len, &info);
	r->op.done = rsp_done;
	r->state = REQ_RESPONDED;
	if (bytes)
		rc = srpt_io->write_send(ch->conn, rem, nrem, r->segs, (unsigned)r->nsegs, bytes, b,
					 (uint32_t)len, sol, &r->op);
	else
		rc = srpt_io->send(ch->conn, b, (uint32_t)len, sol, &r->op);
	if (!rc) {
		if (bytes)
			ch->bytes_in += bytes;
		return;
	}
	srpt_io->put_send_buf(ch->conn, b);
	srp_credit_ungrant(&ch->cred, info.req_lim_delta);
	if (rc == -EAGAIN) {
		r->state = REQ_WAIT_SQ;
		srpt_ch_sq_wait(ch, r);
		return;
	}
	if (rc == -EINVAL && bytes) {
		/* the data cannot be described to the device (too many pieces): fail it */
		ut_log(LOG_WARNING,
			"ib_srpt: %s: data-in of %llu bytes in %u descriptors cannot "
			"be posted",
			ch->iname, (unsigned long long)bytes, nrem);
		memset(&r->st.core, 0, sizeof(r->st.core));
		scsi_task_set_result(&r->st, SR_INVALID_FIELD_IN_IU, false);
		r->st.data_len = 0;
		r->st.resid_kind = SCSI_RESID_UNDER;
		r->st.resid = r->cmd.xfer_len;
		rdma_pool_put(srpt_io->pool(ch->conn), r->segs, (unsigned)r->nsegs);
		r->nsegs = 0;
		srpt_req_respond(r);
		return;
	}
	srpt_ch_req_free(ch, r); /* the connection is going down */
}

/* ---- immediate failures ---- */

void srpt_cmd_fail(struct srpt_ch *ch, struct srpt_req *r, int sr)
{
	(void)ch;
	memset(&r->st, 0, sizeof(r->st));
	scsi_task_set_result(&r->st, (enum scsi_sr)sr, false);
	if (r->cmd.xfer_len) {
		r->st.resid_kind = SCSI_RESID_UNDER;
		r->st.resid = r->cmd.xfer_len;
	}
	srpt_req_respond(r);
}

void srpt_cmd_busy(struct srpt_ch *ch, struct srpt_req *r)
{
	enum srp_dir bad;

	if (r->iu->data[0] == SRP_OP_CMD)
		srp_parse_cmd(r->iu->data, r->iu_len, &ch->lim, &r->cmd, &bad);
	else
		memcpy(r->cmd.tag.b, r->iu->data + SRP_TAG_OFF, 8);
	if (r->iu->data[0] == SRP_OP_TSK_MGMT) {
		r->is_tmf = true;
		r->tmf_code = SRP_RSP_CODE_FAILED;
		srpt_req_respond(r);
		return;
	}
	memset(&r->st, 0, sizeof(r->st));
	r->st.status = SAM_STAT_BUSY;
	if (r->cmd.xfer_len) {
		r->st.resid_kind = SCSI_RESID_UNDER;
		r->st.resid = r->cmd.xfer_len;
	}
	srpt_req_respond(r);
}

/* ---- data-out by RDMA READ ---- */

static void read_done(struct rdma_conn *c, struct rdma_op *op, bool ok)
{
	struct srpt_req *r = (struct srpt_req *)((char *)op - offsetof(struct srpt_req, op));

	(void)c;
	if (!ok || r->ch->state == SRPT_CH_DOWN || r->aborted) {
		srpt_ch_req_free(r->ch, r);
		return;
	}
	r->ch->bytes_out += r->cmd.xfer_len;
	exec(r);
}

static void start_read(struct srpt_req *r)
{
	struct srpt_ch *ch = r->ch;
	struct rdma_rseg rem[256];
	unsigned nrem = remote_segs(r, rem);
	int rc;

	r->state = REQ_READ;
	r->op.done = read_done;
	rc = srpt_io->read(ch->conn, rem, nrem, r->segs, (unsigned)r->nsegs, r->cmd.xfer_len,
			   &r->op);
	if (!rc)
		return;
	if (rc == -EAGAIN) {
		/* srpt_req_retry posts it when the send queue has room */
		r->state = REQ_WAIT_SQ;
		r->is_read_wait = true;
		srpt_ch_sq_wait(ch, r);
		return;
	}
	if (rc == -EINVAL) {
		rdma_pool_put(srpt_io->pool(ch->conn), r->segs, (unsigned)r->nsegs);
		r->nsegs = 0;
		srpt_cmd_fail(ch, r, SR_INVALID_FIELD_IN_IU);
		return;
	}
	srpt_ch_req_free(ch, r);
}

void srpt_req_retry(struct srpt_req *r)
{
	if (r->is_read_wait) {
		r->is_read_wait = false;
		start_read(r);
	} else {
		srpt_req_respond(r);
	}
}

/* ---- data buffers ---- */

static void bufs_ready(struct rdma_pool_waiter *w, int n)
{
	struct srpt_req *r = (struct srpt_req *)((char *)w - offsetof(struct srpt_req, pw));

	if (n < 0) {
		srpt_cmd_fail(r->ch, r, SR_NO_MEMORY);
		return;
	}
	r->nsegs = n;
	for (int i = 0; i < n; i++) {
		r->iov[i].iov_base = r->segs[i].addr;
		r->iov[i].iov_len = r->segs[i].len;
	}
	r->st.iov = r->iov;
	r->st.iovcnt = n;
	if (r->cmd.dir == SRP_DIR_OUT)
		start_read(r);
	else
		exec(r);
}

void srpt_req_abandon(struct srpt_req *r)
{
	struct srpt_ch *ch = r->ch;

	if (r->state == REQ_WAIT_BUF)
		rdma_pool_cancel(srpt_io->pool(ch->conn), &r->pw);
	srpt_ch_req_free(ch, r);
}

/* ---- SRP_CMD ---- */

void srpt_cmd_start(struct srpt_ch *ch, struct srpt_req *r)
{
	struct scsi_task *st = &r->st;
	enum srp_dir bad;
	enum srp_iu_err e;
	uint32_t reason;
	int n;

	e = srp_parse_cmd(r->iu->data, r->iu_len, &ch->lim, &r->cmd, &bad);
	if (e) {
		if (srp_iu_err_action(e, bad, &reason)) {
			ut_log(LOG_WARNING, "ib_srpt: %s: SRP_CMD refused: %s", ch->iname,
				srp_iu_err_str(e));
			srpt_ch_req_free(ch, r);
			srpt_ch_logout(ch, reason);
			return;
		}
		ut_log(LOG_WARNING, "ib_srpt: %s: SRP_CMD failed: %s", ch->iname,
			srp_iu_err_str(e));
		r->cmd.xfer_len = 0;
		srpt_cmd_fail(ch, r, SR_INVALID_FIELD_IN_IU);
		return;
	}
	ch->ncmds++;
	memset(st, 0, sizeof(*st));
	memcpy(st->cdb, r->cmd.cdb, r->cmd.cdb_len);
	st->cdb_len = r->cmd.cdb_len;
	st->lun = scsi_lun_decode(r->cmd.lun);
	st->nexus = &ch->nexus->nx;
	st->attr = map_attr(r->cmd.task_attr);
	st->tag = srp_tag_u64(r->cmd.tag);
	st->dir = r->cmd.dir == SRP_DIR_IN    ? SCSI_DIR_READ
		  : r->cmd.dir == SRP_DIR_OUT ? SCSI_DIR_WRITE
					      : SCSI_DIR_NONE;
	st->exp_xfer_len = r->cmd.xfer_len;
	st->done = task_done;
	st->priv = r;
	/* a READ the page cache answers (of any size: RWF_NOWAIT) and a small WRITE are done
	 * right here, in this round; a larger WRITE (it may wait for dirty throttling) and a
	 * READ the cache cannot answer go to this thread's own io_uring and complete on it as
	 * well (docs/srp.md, "Figures": under emulation every thread wake-up costs more than
	 * the copy; a 1 MiB READ answered in the round it arrived leaves with that round's
	 * doorbell instead of waiting for the ring's completion) */
	st->inline_io = true;
	st->inline_large = true;
	if (r->cmd.xfer_len > SRPT_MAX_XFER) {
		srpt_cmd_fail(ch, r, SR_INVALID_FIELD_IN_CDB);
		return;
	}
	if (r->cmd.dir == SRP_DIR_NONE || !r->cmd.xfer_len) {
		exec(r);
		return;
	}
	if (r->cmd.fmt == SRP_FMT_IMM) {
		r->iov[0].iov_base = r->iu->data + r->cmd.imm_off;
		r->iov[0].iov_len = r->cmd.xfer_len;
		st->iov = r->iov;
		st->iovcnt = 1;
		ch->bytes_out += r->cmd.xfer_len;
		exec(r);
		return;
	}
	r->state = REQ_WAIT_BUF;
	r->pw.ready = bufs_ready;
	n = rdma_pool_get(srpt_io->pool(ch->conn), r->cmd.xfer_len, r->segs, SRPT_MAX_SEGS, &r->pw);
	if (n == -EAGAIN)
		return; /* bufs_ready when chunks come back */
	bufs_ready(&r->pw, n);
}
