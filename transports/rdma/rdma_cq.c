/* A connection's completion queues (struct rdma_cq in rdma_int.h): creation and teardown,
 * completion dispatch, and when each queue is armed.
 *
 * An armed queue turns its next completion into an event on the device's completion channel,
 * which wakes the thread's loop: a system call to arm, one to read the event and a wake-up.
 * The loop polls both queues whenever it handles an event and again at the end of every round
 * (rdma_conn_settle, from the thread's poller), so a queue only needs to be armed when the
 * loop is about to sleep and a completion is still to come to it.  With rxe the response's
 * SEND (and the RDMA WRITEs before it) is carried out, acknowledged and completed inside the
 * ibv_post_send system call: by the end of the round nothing is in flight and the send queue
 * stays unarmed, so a command costs one event (its receive) instead of two. */
#include <errno.h>
#include <string.h>

#include "common/ut_log.h"
#include "transports/rdma/rdma_int.h"

#define ACK_EVERY 64 /* events acknowledged in batches (ibv_ack_cq_events takes a lock) */

static int cq_make(struct rdma_conn *c, struct rdma_dev *d, struct rdma_cq *q, int cqe)
{
	if (cqe > d->attr.max_cqe)
		cqe = d->attr.max_cqe;
	q->cq = ibv_create_cq(c->id->verbs, cqe, c, d->cc, 0);
	return q->cq ? 0 : -(errno ? errno : ENOMEM);
}

static int arm(struct rdma_cq *q)
{
	int rc = ibv_req_notify_cq(q->cq, 0);

	if (rc)
		return rc;
	q->armed = true;
	q->arms++;
	return 0;
}

int rdma_cq_create(struct rdma_conn *c, struct rdma_dev *d, int send_cqe, int recv_cqe)
{
	int rc = cq_make(c, d, &c->scq, send_cqe);

	if (!rc)
		rc = cq_make(c, d, &c->rcq, recv_cqe);
	/* the peer may send as soon as it has our accept */
	if (!rc && arm(&c->rcq))
		rc = -EIO;
	if (rc)
		rdma_cq_destroy(c);
	return rc;
}

static void cq_free(struct rdma_cq *q)
{
	struct ibv_wc wc[RDMA_CQ_BATCH];
	int n;

	if (!q->cq)
		return;
	/* With a shared receive queue, receives flushed after the last look at the queue are
	 * still buffers of the SRQ: give them back to it. */
	while ((n = ibv_poll_cq(q->cq, RDMA_CQ_BATCH, wc)) > 0)
		for (int i = 0; i < n; i++)
			if (rdma_wrid_is_recv(wc[i].wr_id)) {
				struct rdma_buf *b = rdma_wrid_buf(wc[i].wr_id);

				if (b->srq)
					rdma_srq_repost(b->srq, b);
			}
	if (q->unacked)
		ibv_ack_cq_events(q->cq, q->unacked);
	ibv_destroy_cq(q->cq);
	*q = (struct rdma_cq){0};
}

void rdma_cq_destroy(struct rdma_conn *c)
{
	cq_free(&c->scq);
	cq_free(&c->rcq);
}

/* ---- dispatch ---- */

static void send_done(struct rdma_conn *c, const struct ibv_wc *wc)
{
	struct rdma_op *op = (void *)(uintptr_t)wc->wr_id;
	bool ok = wc->status == IBV_WC_SUCCESS;

	if (!op) /* an unsignaled work request completing in error */
		return;
	rdma_op_finish(c, op, ok);
	if (c->want_sq_space && c->state == RDMA_CONN_LIVE) {
		c->want_sq_space = false;
		if (c->srv->ops->sq_space)
			c->srv->ops->sq_space(c);
	}
}

static void recv_done(struct rdma_conn *c, const struct ibv_wc *wc)
{
	struct rdma_buf *b = rdma_wrid_buf(wc->wr_id);

	if (!b->srq && c->rq_posted)
		c->rq_posted--;
	if (wc->status != IBV_WC_SUCCESS || c->state > RDMA_CONN_LIVE) {
		if (b->srq)
			rdma_srq_repost(b->srq, b);
		return;
	}
	/* The peer may send as soon as it has our accept, before RDMA/CM tells us it is
	 * established: the first receive establishes it as well. */
	if (c->state == RDMA_CONN_ACCEPTED)
		rdma_conn_established(c);
	rdma_thread_note_recv(c);
	c->srv->ops->recv(c, b, wc->byte_len);
}

static bool poll_one(struct rdma_conn *c, struct rdma_cq *q)
{
	struct ibv_wc wc[RDMA_CQ_BATCH];
	bool any = false;
	int n;

	while (q->cq && (n = ibv_poll_cq(q->cq, RDMA_CQ_BATCH, wc)) > 0) {
		any = true;
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS && wc[i].status != IBV_WC_WR_FLUSH_ERR &&
			    c->state <= RDMA_CONN_LIVE) {
				rdma_log(c->srv, LOG_WARNING,
					 "%s: completion error: %s (opcode %d)", c->name,
					 ibv_wc_status_str(wc[i].status), wc[i].opcode);
				rdma_conn_go_down(c, "completion error");
			}
			if (rdma_wrid_is_recv(wc[i].wr_id))
				recv_done(c, &wc[i]);
			else
				send_done(c, &wc[i]);
		}
	}
	return any;
}

bool rdma_conn_poll(struct rdma_conn *c)
{
	bool any = false;

	/* What the round staged goes out first (with rxe it completes inside the post, and is
	 * reaped right here); then sends before receives: what they release (send buffers, the
	 * requests of answered commands) is what the commands just received need.  Whatever
	 * the completions' callbacks staged is posted and reaped the same way. */
	do {
		rdma_conn_flush(c);
		any |= poll_one(c, &c->scq);
		any |= poll_one(c, &c->rcq);
	} while (c->stage.nwr);
	if (c->state == RDMA_CONN_CLOSING && !c->sq_used && !c->rq_posted)
		c->state = RDMA_CONN_CLOSED;
	return any;
}

/* ---- events and arming ---- */

void rdma_conn_cq_event(struct rdma_conn *c, struct ibv_cq *cq)
{
	struct rdma_cq *q = cq == c->scq.cq ? &c->scq : &c->rcq;

	q->armed = false;
	if (++q->unacked >= ACK_EVERY) {
		ibv_ack_cq_events(cq, q->unacked);
		q->unacked = 0;
	}
	rdma_conn_poll(c);
}

/* Would the loop miss a completion of q if it slept now? */
static bool waits_on(const struct rdma_conn *c, const struct rdma_cq *q)
{
	if (!q->cq || q->armed || c->state == RDMA_CONN_CLOSED)
		return false;
	if (q == &c->scq)
		return c->sq_used > 0;
	/* a shared receive queue's buffers are not counted per connection */
	return c->state <= RDMA_CONN_LIVE || c->rq_posted > 0;
}

bool rdma_conn_settle(struct rdma_conn *c, bool do_arm)
{
	struct rdma_cq *qs[2] = {&c->rcq, &c->scq};
	bool armed = false;

	rdma_conn_poll(c);
	if (!do_arm)
		return false;
	for (int i = 0; i < 2; i++) {
		if (!waits_on(c, qs[i]))
			continue;
		if (arm(qs[i])) {
			rdma_log(c->srv, LOG_ERR, "%s: cannot arm a completion queue", c->name);
			rdma_conn_go_down(c, "completion queue failed");
			continue;
		}
		armed = true;
	}
	return armed && rdma_conn_poll(c);
}
