/* One RC connection: its queue pair and IU buffers; posting SENDs and RDMA READ/WRITE chains
 * with send queue accounting; and teardown (error state, flush, free) whatever starts it.  Its
 * completion queues are rdma_cq.c's.  Runs on the connection's event thread only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/ut_log.h"
#include "transports/rdma/rdma_int.h"
#include "transports/rdma/rdma_rw.h"

/* ---- accessors ---- */

void rdma_conn_set_priv(struct rdma_conn *c, void *priv)
{
	c->priv = priv;
}

void *rdma_conn_priv(const struct rdma_conn *c)
{
	return c->priv;
}

struct rdma_srv *rdma_conn_srv(const struct rdma_conn *c)
{
	return c->srv;
}

enum rdma_conn_state rdma_conn_state(const struct rdma_conn *c)
{
	return c->state;
}

const char *rdma_conn_name(const struct rdma_conn *c)
{
	return c->name;
}

struct rdma_pool *rdma_conn_pool(struct rdma_conn *c)
{
	return c->dev ? c->dev->pool : NULL;
}

void rdma_conn_call(struct rdma_conn *c, struct ut_msg *m)
{
	ut_thread_post(c->t->ut, m);
}

void rdma_conn_set_cpu(struct rdma_conn *c, int cpu)
{
	c->cpu_hint = cpu;
}

/* ---- creation: the request ---- */

struct rdma_conn *rdma_conn_new(struct rdma_srv *s, struct rdma_cm_id *id,
				const struct rdma_cm_event *ev)
{
	struct rdma_conn *c = calloc(1, sizeof(*c));
	struct rdma_conn_req *r;
	char peer[64];

	if (!c)
		return NULL;
	c->srv = s;
	c->id = id;
	c->state = RDMA_CONN_REQUESTED;
	c->cpu_hint = -1;
	id->context = c;
	r = &c->req;
	r->priv_len = ev->param.conn.private_data_len;
	if (r->priv_len && ev->param.conn.private_data)
		memcpy(c->req_priv, ev->param.conn.private_data, r->priv_len);
	r->priv = c->req_priv;
	r->responder_resources = ev->param.conn.responder_resources;
	r->initiator_depth = ev->param.conn.initiator_depth;
	memcpy(&r->local, rdma_get_local_addr(id), sizeof(struct sockaddr_in6));
	memcpy(&r->peer, rdma_get_peer_addr(id), sizeof(struct sockaddr_in6));
	r->port_num = id->port_num;
	if (id->verbs)
		snprintf(r->dev_name, sizeof(r->dev_name), "%s",
			 ibv_get_device_name(id->verbs->device));
	rdma_format_addr(&r->peer, peer, sizeof(peer));
	snprintf(c->name, sizeof(c->name), "%s", peer);
	return c;
}

void rdma_conn_attach(struct rdma_thread *t, struct rdma_conn *c)
{
	c->t = t;
	c->next = t->conns;
	if (t->conns)
		t->conns->prev = c;
	t->conns = c;
	t->nconns++;
	atomic_fetch_add(&c->srv->nconns, 1);
}

/* ---- buffers ---- */

static void post_recv(struct rdma_conn *c, struct rdma_buf *b)
{
	struct ibv_sge sge = {.addr = (uintptr_t)b->data, .length = b->size, .lkey = b->lkey};
	struct ibv_recv_wr wr = {.wr_id = rdma_wrid_recv(b), .sg_list = &sge, .num_sge = 1}, *bad;

	if (ibv_post_recv(c->qp, &wr, &bad)) {
		rdma_log(c->srv, LOG_ERR, "%s: receive post failed", c->name);
		rdma_conn_go_down(c, "receive post failed");
		return;
	}
	c->rq_posted++;
}

void rdma_conn_repost(struct rdma_conn *c, struct rdma_buf *b)
{
	if (c->held)
		c->held--;
	if (b->srq) {
		rdma_srq_repost(b->srq, b);
		return;
	}
	if (c->state > RDMA_CONN_LIVE)
		return; /* going down: the buffer is freed with the connection */
	post_recv(c, b);
}

static int bufs_create(struct rdma_conn *c, const struct rdma_conn_params *p, bool srq)
{
	uint32_t nrecv = srq ? 0 : p->recv_depth;
	size_t rlen = (size_t)nrecv * p->recv_size, slen = (size_t)p->send_depth * p->send_size;

	c->nbufs = nrecv + p->send_depth;
	c->bufs = calloc(c->nbufs, sizeof(*c->bufs));
	if (!c->bufs)
		return -ENOMEM;
	c->iu_len = rlen + slen;
	c->iu_mem =
	    mmap(NULL, c->iu_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->iu_mem == MAP_FAILED) {
		c->iu_mem = NULL;
		return -ENOMEM;
	}
	c->iu_mr = ibv_reg_mr(c->dev->pd, c->iu_mem, c->iu_len, IBV_ACCESS_LOCAL_WRITE);
	if (!c->iu_mr)
		return -(errno ? errno : ENOMEM);
	for (uint32_t i = 0; i < c->nbufs; i++) {
		struct rdma_buf *b = &c->bufs[i];

		b->recv = i < nrecv;
		b->size = b->recv ? p->recv_size : p->send_size;
		b->data = b->recv ? c->iu_mem + (size_t)i * p->recv_size
				  : c->iu_mem + rlen + (size_t)(i - nrecv) * p->send_size;
		b->lkey = c->iu_mr->lkey;
		if (!b->recv) {
			b->next = c->send_free;
			c->send_free = b;
		}
	}
	return 0;
}

static void bufs_destroy(struct rdma_conn *c)
{
	if (c->iu_mr)
		ibv_dereg_mr(c->iu_mr);
	if (c->iu_mem)
		munmap(c->iu_mem, c->iu_len);
	free(c->bufs);
	c->iu_mr = NULL;
	c->iu_mem = NULL;
	c->bufs = NULL;
	c->send_free = NULL;
}

struct rdma_buf *rdma_conn_send_buf(struct rdma_conn *c)
{
	struct rdma_buf *b = c->send_free;

	if (b)
		c->send_free = b->next;
	else
		c->want_sq_space = true; /* sq_space when a send completes and gives one back */
	return b;
}

void rdma_conn_put_send_buf(struct rdma_conn *c, struct rdma_buf *b)
{
	b->next = c->send_free;
	c->send_free = b;
}

/* ---- accept / reject ---- */

static void qp_cq_destroy(struct rdma_conn *c)
{
	if (c->qp) {
		rdma_destroy_qp(c->id);
		c->qp = NULL;
	}
	rdma_cq_destroy(c);
}

int rdma_conn_accept(struct rdma_conn *c, const struct rdma_conn_params *p)
{
	const struct rdma_srv_cfg *cfg = &c->srv->cfg;
	struct ibv_qp_init_attr qa = {0};
	struct rdma_conn_param cp = {0};
	struct rdma_dev *d;
	uint32_t sq, rq;
	int rc;

	d = rdma_dev_get(c->t, c->id->verbs);
	if (!d)
		return -ENODEV;
	c->dev = d;
	d->nconns++;
	sq = p->send_depth + p->rdma_wrs;
	if (sq > (uint32_t)d->attr.max_qp_wr)
		sq = (uint32_t)d->attr.max_qp_wr;
	rq = d->srq ? 0 : p->recv_depth + 1;
	if (rq > (uint32_t)d->attr.max_qp_wr)
		return -EINVAL;
	rc = rdma_cq_create(c, d, (int)sq, (int)(d->srq ? p->recv_depth + 1 : rq));
	if (rc)
		goto err;
	qa.send_cq = c->scq.cq;
	qa.recv_cq = c->rcq.cq;
	qa.srq = d->srq ? d->srq->srq : NULL;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = sq;
	qa.cap.max_recv_wr = rq;
	qa.cap.max_send_sge = d->attr.max_sge < 30 ? (uint32_t)d->attr.max_sge : 30;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = cfg->max_inline;
	if (rdma_create_qp(c->id, d->pd, &qa)) {
		/* some devices refuse inline sends: try without */
		qa.cap.max_inline_data = 0;
		if (rdma_create_qp(c->id, d->pd, &qa)) {
			rc = -(errno ? errno : ENOMEM);
			goto err_cq;
		}
	}
	c->qp = c->id->qp;
	c->sq_depth = qa.cap.max_send_wr < sq ? qa.cap.max_send_wr : sq;
	c->max_inline = qa.cap.max_inline_data;
	c->max_sge = qa.cap.max_send_sge;
	rc = bufs_create(c, p, d->srq != NULL);
	if (rc)
		goto err_bufs;
	for (uint32_t i = 0; i < c->nbufs; i++)
		if (c->bufs[i].recv)
			post_recv(c, &c->bufs[i]);
	if (c->state != RDMA_CONN_REQUESTED) {
		rc = -EIO;
		goto err_bufs;
	}
	if (p->pool_bytes && (rc = rdma_pool_grow(d->pool, p->pool_bytes)))
		rdma_log(c->srv, LOG_WARNING, "%s: data pool could not grow: %s", c->name,
			 strerror(-rc));
	cp.private_data = p->priv;
	cp.private_data_len = p->priv_len;
	/* The request's values are already from our side of the connection (the CM swaps the
	 * peer's): initiator_depth is how many RDMA READs we may have outstanding. */
	cp.initiator_depth = c->req.initiator_depth;
	if (cp.initiator_depth > d->attr.max_qp_init_rd_atom)
		cp.initiator_depth = (uint8_t)d->attr.max_qp_init_rd_atom;
	cp.responder_resources = c->req.responder_resources;
	if (cp.responder_resources > d->attr.max_qp_rd_atom)
		cp.responder_resources = (uint8_t)d->attr.max_qp_rd_atom;
	cp.rnr_retry_count = 7;
	if (rdma_accept(c->id, &cp)) {
		rc = -(errno ? errno : EIO);
		goto err_bufs;
	}
	c->state = RDMA_CONN_ACCEPTED;
	c->upper_knows = true;
	return 0;

err_bufs:
	/* receives already posted flush into the CQ, which goes with the QP */
	c->rq_posted = 0;
	if (c->qp) {
		rdma_destroy_qp(c->id);
		c->qp = NULL;
	}
	bufs_destroy(c);
err_cq:
	rdma_cq_destroy(c);
err:
	rdma_dev_put(d);
	c->dev = NULL;
	return rc;
}

void rdma_conn_reject(struct rdma_conn *c, const void *priv, uint8_t priv_len)
{
	if (c->state != RDMA_CONN_REQUESTED)
		return;
	if (rdma_reject(c->id, priv, priv_len))
		rdma_log(c->srv, LOG_WARNING, "%s: reject failed: %s", c->name, strerror(errno));
	c->state = RDMA_CONN_CLOSED;
	c->released = true;
}

/* ---- posting: staged per round, flushed as one chain ---- */

static bool sq_room(struct rdma_conn *c, uint32_t n)
{
	if (c->sq_used + n <= c->sq_depth)
		return true;
	c->want_sq_space = true;
	return false;
}

void rdma_op_finish(struct rdma_conn *c, struct rdma_op *op, bool ok)
{
	c->sq_used = c->sq_used >= op->nwr ? c->sq_used - op->nwr : 0;
	op->nwr = 0;
	if (op->send_buf) {
		rdma_conn_put_send_buf(c, op->send_buf);
		op->send_buf = NULL;
	}
	if (op->done)
		op->done(c, op, ok);
}

/* Every operation whose signaled (last) work request is in the chain from w on: failed.  Their
 * callbacks cannot stage more: the connection is down by now. */
static void fail_from(struct rdma_conn *c, struct ibv_send_wr *w)
{
	for (; w; w = w->next)
		if (w->wr_id)
			rdma_op_finish(c, (struct rdma_op *)(uintptr_t)w->wr_id, false);
}

void rdma_conn_handoff_fail(struct rdma_conn *c)
{
	struct rdma_post *p = rdma_sender_take_back(c);

	while (p) {
		struct rdma_post *nx = p->next;

		fail_from(c, p->bad ? p->bad : &p->wr[0]);
		free(p);
		p = nx;
	}
	if (c->state == RDMA_CONN_CLOSING && !c->sq_used && !c->rq_posted)
		c->state = RDMA_CONN_CLOSED;
}

/* A chain goes to a sender thread when it carries enough RDMA WRITE or READ data to be worth
 * moving its work to another CPU, or when earlier chains of the connection are still with
 * one. */
static bool handoff(struct rdma_conn *c, unsigned n)
{
	const struct rdma_stage *st = &c->stage;
	uint32_t min = c->srv->cfg.handoff_bytes;
	struct rdma_sender *s;

	if (!atomic_load_explicit(&c->ho_pending, memory_order_acquire) &&
	    (!min || st->data_bytes < min))
		return false;
	s = rdma_sender_pick(c);
	return s && !rdma_sender_queue(s, c, &st->wr[0], n);
}

void rdma_conn_flush(struct rdma_conn *c)
{
	struct rdma_stage *st = &c->stage;
	struct ibv_send_wr *bad = NULL;
	unsigned n = st->nwr;
	int rc;

	if (!n)
		return;
	if (handoff(c, n)) {
		st->nwr = st->nsge = 0;
		st->data_bytes = 0;
		return;
	}
	st->nwr = st->nsge = 0; /* the array stays intact until the next operation is staged */
	st->data_bytes = 0;
	rc = ibv_post_send(c->qp, &st->wr[0], &bad);
	c->doorbells++;
	if (!rc) {
		c->wrs_posted += n;
		return;
	}
	rdma_log(c->srv, LOG_ERR, "%s: send post failed: %s", c->name, strerror(rc));
	rdma_conn_go_down(c, "send post failed");
	/* the device took the work requests before bad (they complete, flushed); not the rest */
	fail_from(c, bad ? bad : &st->wr[0]);
	if (c->state == RDMA_CONN_CLOSING && !c->sq_used && !c->rq_posted)
		c->state = RDMA_CONN_CLOSED;
}

/* Stage wr[0..n) (built in the stage's free tail, nsge entries of its SGE array) for op. */
static void stage_commit(struct rdma_conn *c, unsigned n, unsigned nsge, struct rdma_op *op)
{
	struct rdma_stage *st = &c->stage;

	/* one chain: the previous operation's last work request, then these in order */
	for (unsigned i = st->nwr ? st->nwr - 1 : 0; i + 1 < st->nwr + n; i++)
		st->wr[i].next = &st->wr[i + 1];
	st->wr[st->nwr + n - 1].next = NULL;
	st->nwr += n;
	st->nsge += nsge;
	op->nwr = n;
	c->sq_used += n;
}

static void send_wr(struct rdma_conn *c, struct ibv_send_wr *w, struct ibv_sge *sge,
		    struct rdma_buf *b, uint32_t len, bool solicited, struct rdma_op *op)
{
	sge->addr = (uintptr_t)b->data;
	sge->length = len;
	sge->lkey = b->lkey;
	memset(w, 0, sizeof(*w));
	w->wr_id = (uintptr_t)op;
	w->sg_list = sge;
	w->num_sge = 1;
	w->opcode = IBV_WR_SEND;
	w->send_flags = IBV_SEND_SIGNALED | (solicited ? IBV_SEND_SOLICITED : 0) |
			(len <= c->max_inline ? IBV_SEND_INLINE : 0);
	op->send_buf = b;
}

/* RDMA READ/WRITE work requests for bytes (plus room for a SEND after them when send) built
 * in the stage's free tail, flushing the stage first when they do not fit what is left.  The
 * number of RDMA work requests (0 or more), with *nsge the SGEs they use; -EINVAL when they
 * would not fit an empty stage or the peer's descriptors. */
static int stage_rw(struct rdma_conn *c, enum ibv_wr_opcode opcode, const struct rdma_rseg *rem,
		    unsigned nrem, const struct rdma_seg *loc, unsigned nloc, uint64_t bytes,
		    bool send, unsigned *nsge)
{
	struct rdma_stage *st = &c->stage;
	unsigned extra = send ? 1 : 0;

	for (int tries = 0; tries < 2; tries++) {
		int n = 0;

		if (st->nwr + extra <= RDMA_STAGE_WR && st->nsge + extra <= RDMA_STAGE_SGE)
			n = bytes ? rdma_rw_build(opcode, rem, nrem, loc, nloc, bytes, c->max_sge,
						  &st->wr[st->nwr], RDMA_STAGE_WR - st->nwr - extra,
						  &st->sge[st->nsge],
						  RDMA_STAGE_SGE - st->nsge - extra)
				  : 0;
		else
			n = -E2BIG;
		if (n >= 0) {
			*nsge = 0;
			for (int i = 0; i < n; i++)
				*nsge += (unsigned)st->wr[st->nwr + i].num_sge;
			return n;
		}
		if (n != -E2BIG || !st->nwr)
			return -EINVAL;
		rdma_conn_flush(c);
		if (c->state != RDMA_CONN_LIVE && c->state != RDMA_CONN_ACCEPTED)
			return -ENOTCONN;
	}
	return -EINVAL;
}

static bool can_post(const struct rdma_conn *c)
{
	return c->state == RDMA_CONN_LIVE || c->state == RDMA_CONN_ACCEPTED;
}

int rdma_conn_send(struct rdma_conn *c, struct rdma_buf *b, uint32_t len, bool solicited,
		   struct rdma_op *op)
{
	return rdma_conn_write_send(c, NULL, 0, NULL, 0, 0, b, len, solicited, op);
}

int rdma_conn_write_send(struct rdma_conn *c, const struct rdma_rseg *rem, unsigned nrem,
			 const struct rdma_seg *loc, unsigned nloc, uint64_t bytes,
			 struct rdma_buf *b, uint32_t len, bool solicited, struct rdma_op *op)
{
	struct rdma_stage *st = &c->stage;
	unsigned nsge;
	int n;

	if (!can_post(c))
		return -ENOTCONN;
	n = stage_rw(c, IBV_WR_RDMA_WRITE, rem, nrem, loc, nloc, bytes, true, &nsge);
	if (n < 0)
		return n;
	if ((uint32_t)n + 1 > c->sq_depth)
		return -EINVAL;
	if (!sq_room(c, (uint32_t)n + 1))
		return -EAGAIN;
	if (!op) {
		op = &b->op;
		op->done = NULL;
	}
	send_wr(c, &st->wr[st->nwr + n], &st->sge[st->nsge + nsge], b, len, solicited, op);
	stage_commit(c, (unsigned)n + 1, nsge + 1, op);
	st->data_bytes += bytes;
	return 0;
}

int rdma_conn_read(struct rdma_conn *c, const struct rdma_rseg *rem, unsigned nrem,
		   const struct rdma_seg *loc, unsigned nloc, uint64_t bytes, struct rdma_op *op)
{
	struct rdma_stage *st = &c->stage;
	unsigned nsge;
	int n;

	if (!can_post(c))
		return -ENOTCONN;
	if (!bytes)
		return -EINVAL;
	n = stage_rw(c, IBV_WR_RDMA_READ, rem, nrem, loc, nloc, bytes, false, &nsge);
	if (n <= 0)
		return n == 0 ? -EINVAL : n;
	if ((uint32_t)n > c->sq_depth)
		return -EINVAL;
	if (!sq_room(c, (uint32_t)n))
		return -EAGAIN;
	st->wr[st->nwr + n - 1].wr_id = (uintptr_t)op;
	st->wr[st->nwr + n - 1].send_flags = IBV_SEND_SIGNALED;
	op->send_buf = NULL;
	stage_commit(c, (unsigned)n, nsge, op);
	st->data_bytes += bytes;
	return 0;
}

/* ---- state changes ---- */

void rdma_conn_established(struct rdma_conn *c)
{
	if (c->state != RDMA_CONN_ACCEPTED)
		return;
	c->state = RDMA_CONN_LIVE;
	if (c->srv->ops->established)
		c->srv->ops->established(c);
}

void rdma_conn_go_down(struct rdma_conn *c, const char *why)
{
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_ERR};
	enum rdma_conn_state prev = c->state;

	if (prev >= RDMA_CONN_CLOSING)
		return;
	c->state = RDMA_CONN_CLOSING;
	if (prev == RDMA_CONN_REQUESTED) {
		/* never accepted: nothing posted, nobody above to tell */
		c->state = RDMA_CONN_CLOSED;
		c->released = true;
		return;
	}
	rdma_log(c->srv, LOG_INFO, "%s: connection down (%s)", c->name, why);
	rdma_disconnect(c->id); /* DREQ to the peer; moves the QP to the error state */
	if (c->qp)
		ibv_modify_qp(c->qp, &qa, IBV_QP_STATE);
	if (c->upper_knows && !c->down_notified) {
		c->down_notified = true;
		c->busy++;
		if (c->srv->ops->down)
			c->srv->ops->down(c);
		c->busy--;
	}
	c->busy++;
	/* with a sender, never posted (staged before the ones below): nothing will complete them */
	rdma_conn_handoff_fail(c);
	if (c->stage.nwr) {
		/* staged, never posted */
		c->stage.nwr = c->stage.nsge = 0;
		c->stage.data_bytes = 0;
		fail_from(c, &c->stage.wr[0]);
	}
	c->busy--;
	if (!c->sq_used && !c->rq_posted)
		c->state = RDMA_CONN_CLOSED;
}

void rdma_conn_disconnect(struct rdma_conn *c)
{
	rdma_conn_go_down(c, "local disconnect");
	rdma_conn_maybe_free(c);
}

void rdma_conn_release(struct rdma_conn *c)
{
	c->released = true;
	rdma_conn_maybe_free(c);
}

static void conn_free(struct rdma_conn *c)
{
	struct rdma_thread *t = c->t;
	struct rdma_dev *d = c->dev;

	qp_cq_destroy(c);
	bufs_destroy(c);
	/* our device resources go before the id: the id's reference may be librdmacm's last on
	 * a removed device, and then it closes the device context under them */
	if (d)
		rdma_dev_put(d);
	if (c->id)
		rdma_destroy_id(c->id);
	rdma_sender_conn_gone(c);
	if (t) {
		if (c->prev)
			c->prev->next = c->next;
		else if (t->conns == c)
			t->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		t->nconns--;
		atomic_fetch_sub(&c->srv->nconns, 1);
		pthread_mutex_lock(&c->srv->lock);
		pthread_cond_broadcast(&c->srv->cv);
		pthread_mutex_unlock(&c->srv->lock);
	}
	free(c);
}

void rdma_conn_maybe_free(struct rdma_conn *c)
{
	if (c->busy || !c->released)
		return;
	if (c->state == RDMA_CONN_CLOSING && !c->sq_used && !c->rq_posted)
		c->state = RDMA_CONN_CLOSED;
	if (c->state != RDMA_CONN_CLOSED)
		return;
	conn_free(c);
}

void rdma_conn_force_free(struct rdma_conn *c)
{
	rdma_conn_go_down(c, "shutdown");
	c->busy++;
	rdma_conn_handoff_fail(c); /* it may have been down already: no sender may touch it */
	c->busy--;
	c->released = true;
	c->state = RDMA_CONN_CLOSED;
	c->busy = 0;
	conn_free(c);
}
