/* iSER as one of the iSCSI target's connection transports (struct iscsit_xport), the peer of
 * TCP: every iSER connection carries one iscsit_conn that lives on the same worker thread as
 * its RDMA connection (the verbs layer runs on the iSCSI workers, rdma_srv_cfg.run_on), so a
 * received SEND is fed to the iSCSI handlers and the answer posted with no hand-off.
 *
 *   received SEND   -> iscsit_conn_feed (the iSER header of a SCSI Command kept for task_init)
 *   Data-In         -> one RDMA WRITE chained to the SCSI Response SEND (no phase collapse)
 *   write data      -> immediate and unsolicited data arrive in SENDs; the rest is one RDMA
 *                      READ from the Write STag (solicit), never an R2T
 *   task buffers    -> chunks of the device's registered pool, handed to the core as iovecs
 *   login           -> the iSER keys answered here (iser_keys.c), the rest by the engine
 *
 * Lifetime: the iSCSI connection closes -> the RDMA connection is disconnected; the RDMA
 * connection goes down -> the iSCSI connection closes.  Either way the iser_conn is released
 * only when the iSCSI connection is freed, after every task (and its pool chunks and RDMA
 * operations) is gone. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "common/ut_json.h"
#include "transports/iser/iser_iscsi.h"
#include "transports/iser/iser_login.h"
#include "transports/rdma/rdma_pool.h"

static struct iser_conn *ic_of(const struct iscsit_conn *c)
{
	return c->xp_priv;
}

static struct iscsit_task *task_of(struct iser_task *it)
{
	return (struct iscsit_task *)it - 1;
}

/* ---------------------------------------------------------------- input */

/* Feed one checked SEND to the iSCSI handlers; the buffer goes back right after (the
 * handlers copy what they keep).  The caller holds a reference on the connection: a PDU that
 * closes it must not free it (and ic with it) before the buffer is back. */
static void feed(struct iser_conn *ic, const struct iser_held *hp)
{
	const uint8_t *bhs = hp->b->data + hp->bhs_off;
	size_t len = hp->data_off - hp->bhs_off + hp->dsl;

	ic->cur = hp->h;
	iscsit_conn_feed(ic->conn, bhs, len);
	iser_conn_repost(ic, hp->b);
}

static bool hold(struct iser_conn *ic, const struct iser_held *hp)
{
	if (ic->nheld == ic->held_cap)
		return false;
	ic->held[(ic->held_first + ic->nheld) % ic->held_cap] = *hp;
	ic->nheld++;
	return true;
}

static void up_pdu(struct iser_conn *ic, const struct iser_hdr *h, const uint8_t *bhs,
		   const uint8_t *data, uint32_t dsl, struct rdma_buf *b)
{
	struct iscsit_conn *c = ic->conn;
	struct iser_held hp = {.b = b,
			       .h = *h,
			       .bhs_off = (uint32_t)(bhs - b->data),
			       .dsl = dsl,
			       .data_off = (uint32_t)(data - b->data)};

	if (!c || c->state == CONN_CLOSING) {
		iser_conn_repost(ic, b);
		return;
	}
	/* while input is paused (a login waiting for reinstatement, a logout), or PDUs are
	 * already held, this one waits its turn: order is the protocol's */
	if (c->rx_paused || ic->nheld) {
		if (!hold(ic, &hp)) {
			iser_conn_repost(ic, b);
			iscsit_conn_close(c, "more PDUs than receive buffers while paused");
		}
		return;
	}
	atomic_fetch_add(&c->refs, 1);
	feed(ic, &hp);
	iscsit_conn_put(c); /* may free c and ic */
}

/* Input resumed: what was held is fed, in order, until a handler pauses again. */
static void x_input(struct iscsit_conn *c)
{
	struct iser_conn *ic = ic_of(c);

	atomic_fetch_add(&c->refs, 1);
	while (ic->nheld && !c->rx_paused && c->state != CONN_CLOSING) {
		struct iser_held hp = ic->held[ic->held_first];

		ic->held_first = (ic->held_first + 1) % ic->held_cap;
		ic->nheld--;
		feed(ic, &hp);
	}
	iscsit_conn_put(c); /* may free c and ic */
}

static void drop_held(struct iser_conn *ic)
{
	while (ic->nheld) {
		iser_conn_repost(ic, ic->held[ic->held_first].b);
		ic->held_first = (ic->held_first + 1) % ic->held_cap;
		ic->nheld--;
	}
}

/* ---------------------------------------------------------------- output */

static void rsp_done(struct rdma_conn *rc, struct rdma_op *op, bool ok)
{
	struct iser_task *it =
	    (struct iser_task *)((char *)op - offsetof(struct iser_task, rsp_op));
	struct iscsit_task *t = task_of(it);
	struct iscsit_conn *c = t->conn;
	struct iscsit_txe *e = it->rsp;

	(void)rc;
	it->rsp = NULL;
	if (!ok && c->state != CONN_CLOSING)
		iscsit_conn_close(c, "Data-In RDMA WRITE failed");
	iscsit_txe_done(c, e); /* frees the task: its chunks go back to the pool */
	if (c->state == CONN_CLOSING)
		iscsit_conn_maybe_free(c);
}

static void close_done(struct rdma_conn *rc, struct rdma_op *op, bool ok)
{
	struct iser_conn *ic =
	    (struct iser_conn *)((char *)op - offsetof(struct iser_conn, close_op));
	struct iscsit_conn *c = ic->conn;

	(void)rc;
	(void)ok;
	ic->close_e = false;
	if (c->state != CONN_CLOSING)
		iscsit_conn_close(c, c->close_why ? c->close_why : "logged out");
	else
		iscsit_conn_maybe_free(c);
}

/* One entry onto the wire.  0 (posted, or dropped), or -EAGAIN: no room now, try again. */
static int send_entry(struct iscsit_conn *c, struct iscsit_txe *e)
{
	struct iser_conn *ic = ic_of(c);
	struct iser_task *it = e->task ? iscsit_task_xp(e->task) : NULL;
	int rc;

	if (ic->down) {
		iscsit_txe_done(c, e);
		return 0;
	}
	if (e->kind == TXE_DATAIN) {
		/* the data goes with the SCSI Response that follows, as one chain */
		it->din = e->task->din_len;
		iscsit_txe_done(c, e);
		return 0;
	}
	if (it && it->din) {
		struct rdma_seg loc[ISER_MAX_SEGS];
		int n = iser_task_segs(it, e->task, 0, it->din, loc);

		it->rsp = e;
		it->rsp_op.done = rsp_done;
		rc = n < 0 ? -EINVAL
			   : iser_conn_write_rsp(ic, &it->plan.wr, loc, (unsigned)n, it->din,
						 e->hdr, e->data, e->dlen, &it->rsp_op);
		if (rc == -EAGAIN) {
			it->rsp = NULL;
			return rc;
		}
		if (rc) {
			it->rsp = NULL;
			iscsit_conn_close(c, "Data-In could not be posted");
			iscsit_txe_done(c, e);
			return 0;
		}
		c->tx_pdus++;
		c->tx_bytes += it->din;
		return 0;
	}
	if (e->close_after) {
		/* the connection closes when this SEND completed, not before it left */
		ic->close_op.done = close_done;
		rc = iser_conn_send_pdu(ic, e->hdr, e->data, e->dlen, &ic->close_op);
		if (rc == 0)
			ic->close_e = true;
	} else {
		rc = iser_conn_send_pdu(ic, e->hdr, e->data, e->dlen, NULL);
	}
	if (rc == -EAGAIN)
		return rc;
	if (rc) {
		iscsit_conn_close(c, rc == -EMSGSIZE ? "PDU over InitiatorRecvDataSegmentLength"
						     : "send failed");
		iscsit_txe_done(c, e);
		return 0;
	}
	c->tx_pdus++;
	iscsit_txe_done(c, e); /* the SEND holds a copy; the entry (and a task) can go */
	return 0;
}

static void x_queue(struct iscsit_conn *c, struct iscsit_txe *e)
{
	struct iser_conn *ic = ic_of(c);

	if (!ic->pend && send_entry(c, e) == 0)
		return;
	e->next = NULL;
	if (ic->pend_tail)
		ic->pend_tail->next = e;
	else
		ic->pend = e;
	ic->pend_tail = e;
}

static int post_read(struct iscsit_task *t);

static void x_output(struct iscsit_conn *c)
{
	struct iser_conn *ic = ic_of(c);

	while (ic->nrd_wait) {
		if (post_read(ic->rd_wait[0]) == -EAGAIN)
			break;
		memmove(ic->rd_wait, ic->rd_wait + 1, --ic->nrd_wait * sizeof(*ic->rd_wait));
	}
	while (ic->pend) {
		struct iscsit_txe *e = ic->pend;

		ic->pend = e->next;
		if (!ic->pend)
			ic->pend_tail = NULL;
		if (send_entry(c, e) == -EAGAIN) {
			e->next = ic->pend;
			ic->pend = e;
			if (!ic->pend_tail)
				ic->pend_tail = e;
			break;
		}
	}
}

static void up_sq_space(struct iser_conn *ic)
{
	if (ic->conn)
		iscsit_conn_mark_dirty(ic->conn);
}

/* ---------------------------------------------------------------- write data: RDMA READ */

static void read_done(struct rdma_conn *rc, struct rdma_op *op, bool ok)
{
	struct iser_task *it =
	    (struct iser_task *)((char *)op - offsetof(struct iser_task, read_op));

	(void)rc;
	iscsit_task_data_placed(task_of(it), it->read_len, ok);
}

/* 0 (posted), -EAGAIN (no send queue room: retry from output), -1 (failed). */
static int post_read(struct iscsit_task *t)
{
	struct iser_task *it = iscsit_task_xp(t);
	struct iser_conn *ic = ic_of(t->conn);
	struct rdma_seg loc[ISER_MAX_SEGS];
	int n = iser_task_segs(it, t, it->plan.rd_local_off, it->read_len, loc);
	int rc;

	if (n < 0)
		rc = -EINVAL;
	else
		rc = iser_conn_read(ic, &it->plan.rd, loc, (unsigned)n, it->read_len, &it->read_op);
	if (rc == -EAGAIN)
		return rc;
	if (rc) {
		t->fetching = false;
		iscsit_task_data_placed(t, 0, false);
		return -1;
	}
	return 0;
}

static int x_solicit(struct iscsit_task *t)
{
	struct iser_task *it = iscsit_task_xp(t);
	struct iser_conn *ic = ic_of(t->conn);
	uint32_t off = t->r2t_next, len = t->edtl - off;

	/* what the command PDU promised (iser_plan) is what the iSCSI layer asks for */
	if (!it->plan.rd.len || off != it->plan.rd_local_off || len != it->plan.rd.len)
		return -1;
	t->r2t_next = t->edtl;
	t->fetching = true;
	it->read_len = len;
	it->read_op.done = read_done;
	if (ic->nrd_wait) /* keep their order */
		goto wait;
	switch (post_read(t)) {
	case 0:
		return 0;
	case -EAGAIN:
		goto wait;
	default:
		return 0; /* failed and reported through data_placed */
	}
wait:
	if (ic->nrd_wait == ic->rd_cap) {
		t->fetching = false;
		return -1;
	}
	ic->rd_wait[ic->nrd_wait++] = t;
	return 0;
}

/* ---------------------------------------------------------------- tasks and buffers */

static int x_task_init(struct iscsit_task *t, uint32_t imm, const char **why)
{
	struct iscsit_conn *c = t->conn;
	struct iser_task *it = iscsit_task_xp(t);
	const struct iscsit_sess_params *p = &c->sess->p;
	struct iser_plan_in in = {.read = t->st.dir == SCSI_DIR_READ,
				  .write = t->st.dir == SCSI_DIR_WRITE,
				  .final = !t->unsol_open,
				  .edtl = t->edtl,
				  .imm = imm,
				  .h = &ic_of(c)->cur};
	struct iser_plan_lim lim = {.immediate_data = p->immediate_data,
				    .initial_r2t = p->initial_r2t,
				    .first_burst = p->first_burst,
				    .max_xfer = c->xp->max_xfer};

	const char *msg = NULL;
	int rc = iser_plan_cmd(&in, &lim, &it->plan, &msg);

	/* -EOPNOTSUPP (bidirectional) is the iSCSI layer's to answer: it Rejects those */
	if (rc && rc != -EOPNOTSUPP) {
		*why = msg;
		return -1;
	}
	return 0;
}

int iser_task_segs(const struct iser_task *it, const struct iscsit_task *t, uint32_t off,
		   uint32_t len, struct rdma_seg *out)
{
	struct iovec v[ISER_MAX_SEGS];
	int n = iscsit_task_slice(t, off, len, v, ISER_MAX_SEGS);

	for (int i = 0; i < n; i++) {
		/* each piece lies in one registered chunk run: find its key */
		for (int k = 0; k < it->nsegs; k++) {
			const uint8_t *a = it->segs[k].addr;

			if ((const uint8_t *)v[i].iov_base >= a &&
			    (const uint8_t *)v[i].iov_base < a + it->segs[k].len) {
				out[i].addr = v[i].iov_base;
				out[i].len = (uint32_t)v[i].iov_len;
				out[i].lkey = it->segs[k].lkey;
				break;
			}
		}
	}
	return n;
}

static int x_buf_get(struct iscsit_task *t, uint32_t len)
{
	struct iser_task *it = iscsit_task_xp(t);
	struct iser_conn *ic = ic_of(t->conn);
	int n;

	if (ic->down)
		return -ENOTCONN;
	n = rdma_pool_get(iser_io->pool(ic->c), len, it->segs, ISER_MAX_SEGS, NULL);
	if (n <= 0)
		return n ? n : -EINVAL;
	it->nsegs = n;
	for (int i = 0; i < n; i++) {
		it->iov[i].iov_base = it->segs[i].addr;
		it->iov[i].iov_len = it->segs[i].len;
	}
	t->iov = it->iov;
	t->niov = (unsigned)n;
	t->buflen = len;
	return 0;
}

static void x_buf_put(struct iscsit_task *t)
{
	struct iser_task *it = iscsit_task_xp(t);

	rdma_pool_put(iser_io->pool(ic_of(t->conn)->c), it->segs, (unsigned)it->nsegs);
	it->nsegs = 0;
	t->niov = 0;
}

/* ---------------------------------------------------------------- login */

static int x_login_keys(struct iscsit_conn *c, struct iscsit_kv *kv, unsigned n,
			struct iscsit_text *out, uint16_t *status)
{
	return iser_login_split_keys(&ic_of(c)->keys, kv, n, out, status);
}

static int x_login_answer(struct iscsit_conn *c, struct iscsit_text *out, bool final,
			  uint16_t *status)
{
	struct iser_conn *ic = ic_of(c);
	const struct iser_key_cfg *k = &ic->ctx->cfg.keys;

	/* our MaxRecvDataSegmentLength declaration: what one receive buffer holds */
	iser_login_fix_answer(out, k->trdsl > ISER_LOGIN_DSL ? k->trdsl : ISER_LOGIN_DSL);
	if (final && iser_keys_finish(&ic->keys, out, status))
		return -1;
	return 0;
}

static void x_enter_ffp(struct iscsit_conn *c)
{
	struct iser_conn *ic = ic_of(c);

	iser_conn_enter_ffp(ic, &ic->keys);
	c->rx.max_dsl = ic->keys.trdsl;
}

/* ---------------------------------------------------------------- lifetime */

/* The link can take nothing more: what waits for it is let go. */
static void let_go(struct iser_conn *ic)
{
	struct iscsit_conn *c = ic->conn;

	drop_held(ic);
	while (ic->pend) {
		struct iscsit_txe *e = ic->pend;

		ic->pend = e->next;
		iscsit_txe_done(c, e);
	}
	ic->pend_tail = NULL;
	/* never posted: nothing writes into their buffers, the close frees them */
	for (unsigned i = 0; i < ic->nrd_wait; i++)
		ic->rd_wait[i]->fetching = false;
	ic->nrd_wait = 0;
}

static void x_close(struct iscsit_conn *c)
{
	struct iser_conn *ic = ic_of(c);

	if (!ic->down) {
		ic->in_close = true;
		ic->state = ISER_CONN_CLOSING; /* input from now on is discarded */
		iser_io->disconnect(ic->c);    /* down() runs from in here */
		ic->in_close = false;
	}
	let_go(ic);
}

static bool x_busy(const struct iscsit_conn *c)
{
	const struct iser_conn *ic = ic_of(c);

	/* until the link is down, its callbacks may still name c; a SEND that closes the
	 * connection completes into ic */
	return !ic->down || ic->close_e;
}

static void x_release(struct iscsit_conn *c)
{
	struct iser_conn *ic = ic_of(c);

	free(ic->held);
	free(ic->rd_wait);
	ic->conn = NULL;
	c->xp_priv = NULL;
	iser_conn_release(ic);
}

static bool x_target_allowed(const struct iscsit_tgt *t)
{
	return t->params.rdma_extensions;
}

static void x_show(const struct iscsit_conn *c, struct ut_json *j)
{
	const struct iser_conn *ic = ic_of(c);

	ut_json_obj(j, "iser");
	ut_json_bool(j, "RDMAExtensions", ic->keys.ext == ISER_EXT_YES);
	ut_json_u64(j, "InitiatorRecvDataSegmentLength", ic->keys.irdsl);
	ut_json_u64(j, "TargetRecvDataSegmentLength", ic->keys.trdsl);
	ut_json_u64(j, "MaxOutstandingUnexpectedPDUs", ic->keys.mou);
	ut_json_bool(j, "zbva", !ic->cm.zbva_not_sup);
	ut_json_end_obj(j);
}

const struct iscsit_xport iser_xport = {
    .name = "iser",
    /* Data-In is an RDMA WRITE and status its own SEND; no digests; and InitialR2T=Yes: an
     * unsolicited Data-Out would each take a receive buffer of the initiator's choosing,
     * beyond the window the receive queue is sized for, while the RDMA READ that moves the
     * data instead costs the initiator nothing (iscsi-scst's isert does the same) */
    .caps = 0,
    .task_priv = sizeof(struct iser_task),
    .max_xfer = ISER_MAX_XFER,
    .target_allowed = x_target_allowed,
    .input = x_input,
    .queue = x_queue,
    .output = x_output,
    .solicit = x_solicit,
    .task_init = x_task_init,
    .buf_get = x_buf_get,
    .buf_put = x_buf_put,
    .login_keys = x_login_keys,
    .login_answer = x_login_answer,
    .enter_ffp = x_enter_ffp,
    .close = x_close,
    .busy = x_busy,
    .release = x_release,
    .show = x_show,
};

/* ---------------------------------------------------------------- the RDMA side */

/* The iSER portal a connection arrived through (the listen address it matches). */
static struct iscsit_portal *portal_for(struct iscsit_ctx *ctx, const struct sockaddr_storage *l)
{
	struct iscsit_portal *any = NULL;
	uint16_t port = ntohs(l->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)l)->sin6_port
						       : ((const struct sockaddr_in *)l)->sin_port);

	for (unsigned i = 0; i < ctx->nportals; i++) {
		struct iscsit_portal *p = &ctx->portals[i];
		char a[64], b[64];

		if (p->xp != &iser_xport || p->port != port)
			continue;
		if (!any)
			any = p;
		if (p->wildcard)
			return p;
		iscsit_sockaddr_str(&p->addr, a, sizeof(a), false);
		iscsit_sockaddr_str(l, b, sizeof(b), false);
		if (!strcmp(a, b))
			return p;
	}
	return any;
}

static int up_accept(struct iser_conn *ic, const struct rdma_conn_req *req)
{
	struct iscsit_ctx *ctx = ic->ctx->up_ctx;
	struct ut_thread *ut = ut_thread_current();
	struct iscsit_worker *w;
	struct iscsit_portal *p = portal_for(ctx, &req->local);
	unsigned depth = ic->ctx->cfg.queue_depth + ic->ctx->cfg.unexpected;

	/* the verbs layer runs on the iSCSI workers: this connection's is the current one */
	if (!ut || !p)
		return -1;
	w = (struct iscsit_worker *)((char *)ut - offsetof(struct iscsit_worker, ut));
	iser_keys_init(&ic->keys, &ic->ctx->cfg.keys);
	ic->held = calloc(depth, sizeof(*ic->held));
	ic->rd_wait = calloc(depth, sizeof(*ic->rd_wait));
	if (!ic->held || !ic->rd_wait)
		goto fail;
	ic->held_cap = ic->rd_cap = depth;
	atomic_fetch_add(&w->nconns, 1); /* iscsit_conn_new takes a counted worker */
	ic->conn = iscsit_conn_new(w, &iser_xport, ic, p, &req->peer, &req->local);
	if (!ic->conn)
		goto fail;
	return 0;
fail:
	free(ic->held);
	free(ic->rd_wait);
	ic->held = NULL;
	ic->rd_wait = NULL;
	return -1;
}

static void up_down(struct iser_conn *ic)
{
	struct iscsit_conn *c = ic->conn;

	ic->down = true;
	if (!c) { /* the iSCSI side was never set up */
		iser_conn_release(ic);
		return;
	}
	let_go(ic);
	if (ic->in_close)
		return; /* iscsit_conn_close is running: it frees c when it can */
	if (c->state != CONN_CLOSING)
		iscsit_conn_close(c, ic->why ? ic->why : "RDMA connection down");
	else
		iscsit_conn_maybe_free(c);
}

const struct iser_upper iser_iscsi_upper = {
    .accept = up_accept,
    .pdu = up_pdu,
    .sq_space = up_sq_space,
    .down = up_down,
};
