/* When a connection's completion queues are armed (transports/rdma/rdma_cq.c), on stand-in
 * verbs: ibv_poll_cq, ibv_req_notify_cq, ibv_post_send and ibv_post_recv go through the
 * context's ops table, so a fake context drives the real posting and completion code without
 * a device.  A fake queue behaves as a device's does: a completion added while it is armed
 * raises one event and disarms it; one added while it is not raises none.
 *
 * What must hold: a send that completes before the round ends (rxe completes it inside the
 * doorbell system call) costs no arm and no event; one still in flight is armed for exactly
 * once; a completion that slips in before the arm is found by the poll after it; the receive
 * queue is re-armed once after each event, not every round; sends are reaped before
 * receives; a closing connection arms both queues and reaches CLOSED on the flushes. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "transports/rdma/rdma_int.h"

#define QLEN 64

struct fcq {
	struct ibv_cq cq; /* first: the verbs calls get &fcq.cq */
	struct ibv_wc q[QLEN];
	unsigned head, n;
	bool armed;	    /* the device's view */
	unsigned events;    /* raised, not yet taken */
	unsigned arms;	    /* ibv_req_notify_cq calls */
	bool land_on_arm;   /* one pending completion lands just before the next arm */
	struct ibv_wc pending;
};

static struct fcq RCQ, SCQ;
static struct ibv_context CTX;
static struct ibv_qp QP;
static bool sync_sends; /* a signaled send completes inside post_send, as rxe's loopback */
static unsigned posted_sends, posted_recvs;

/* what the connection saw, in order: 's' a send completion ('f' failed), 'r' a receive */
static char seen[64];
static unsigned nseen;

static void cqe_add(struct fcq *f, struct ibv_wc wc)
{
	cr_assert_lt(f->n, QLEN);
	f->q[(f->head + f->n++) % QLEN] = wc;
	if (f->armed) {
		f->armed = false;
		f->events++;
	}
}

static int f_poll(struct ibv_cq *cq, int num, struct ibv_wc *wc)
{
	struct fcq *f = (struct fcq *)cq;
	int k = 0;

	while (k < num && f->n) {
		wc[k++] = f->q[f->head];
		f->head = (f->head + 1) % QLEN;
		f->n--;
	}
	return k;
}

static int f_notify(struct ibv_cq *cq, int solicited)
{
	struct fcq *f = (struct fcq *)cq;

	cr_assert_eq(solicited, 0);
	if (f->land_on_arm) { /* arrives while the queue is still unarmed: no event */
		f->land_on_arm = false;
		cqe_add(f, f->pending);
	}
	f->armed = true;
	f->arms++;
	return 0;
}

static int f_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	(void)qp;
	(void)bad;
	for (; wr; wr = wr->next) {
		posted_sends++;
		if (sync_sends && (wr->send_flags & IBV_SEND_SIGNALED))
			cqe_add(&SCQ, (struct ibv_wc){.wr_id = wr->wr_id, .status = IBV_WC_SUCCESS,
						      .opcode = IBV_WC_SEND});
	}
	return 0;
}

static int f_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)qp;
	(void)bad;
	for (; wr; wr = wr->next)
		posted_recvs++;
	return 0;
}

static void on_recv(struct rdma_conn *c, struct rdma_buf *b, uint32_t len)
{
	(void)len;
	seen[nseen++] = 'r';
	rdma_conn_repost(c, b);
}

static const struct rdma_conn_ops OPS = {.recv = on_recv};
static struct rdma_srv SRV;
static struct rdma_conn *C;
static struct rdma_buf SBUF[4], RBUF[4];
static uint8_t SDATA[4][64], RDATA[4][64];
static struct rdma_op OP[4];
static unsigned done_calls;

static void op_done(struct rdma_conn *c, struct rdma_op *op, bool ok)
{
	(void)c;
	(void)op;
	done_calls++;
	seen[nseen++] = ok ? 's' : 'f';
}

static void setup(void)
{
	memset(&RCQ, 0, sizeof(RCQ));
	memset(&SCQ, 0, sizeof(SCQ));
	CTX.ops.poll_cq = f_poll;
	CTX.ops.req_notify_cq = f_notify;
	CTX.ops.post_send = f_post_send;
	CTX.ops.post_recv = f_post_recv;
	RCQ.cq.context = SCQ.cq.context = QP.context = &CTX;
	sync_sends = false;
	posted_sends = posted_recvs = done_calls = nseen = 0;
	memset(seen, 0, sizeof(seen));
	SRV.cfg.name = "test";
	SRV.ops = &OPS;
	C = calloc(1, sizeof(*C));
	C->srv = &SRV;
	C->state = RDMA_CONN_LIVE;
	C->qp = &QP;
	C->sq_depth = 16;
	C->max_sge = 4;
	C->rcq.cq = &RCQ.cq;
	C->scq.cq = &SCQ.cq;
	/* as rdma_cq_create leaves them: receives armed, sends not */
	C->rcq.armed = RCQ.armed = true;
	for (int i = 0; i < 4; i++) {
		SBUF[i] = (struct rdma_buf){.data = SDATA[i], .size = 64};
		rdma_conn_put_send_buf(C, &SBUF[i]);
		RBUF[i] = (struct rdma_buf){.data = RDATA[i], .size = 64, .recv = true};
		OP[i] = (struct rdma_op){.done = op_done};
	}
	C->rq_posted = 4;
}

static void teardown(void)
{
	free(C);
}

static void send_one(int i)
{
	struct rdma_buf *b = rdma_conn_send_buf(C);

	cr_assert_not_null(b);
	cr_assert_eq(rdma_conn_send(C, b, 16, false, &OP[i]), 0);
}

static void recv_arrives(int i)
{
	cqe_add(&RCQ, (struct ibv_wc){.wr_id = rdma_wrid_recv(&RBUF[i]), .status = IBV_WC_SUCCESS,
				      .opcode = IBV_WC_RECV, .byte_len = 16});
}

/* The loop reads an event from the channel and hands it to the connection. */
static void take_event(struct fcq *f)
{
	cr_assert_gt(f->events, 0, "an event to take");
	f->events--;
	rdma_conn_cq_event(C, &f->cq);
}

Test(rdma_cq, a_send_completed_in_the_round_is_never_armed_for, .init = setup, .fini = teardown)
{
	sync_sends = true;
	for (int round = 0; round < 3; round++) {
		recv_arrives(round);
		take_event(&RCQ);
		send_one(round); /* the answer, completed inside the post */
		cr_assert_not(rdma_conn_settle(C, true));
		cr_assert_eq(C->sq_used, 0);
	}
	cr_assert_eq(done_calls, 3);
	cr_assert_eq(SCQ.arms, 0, "no event asked for the sends");
	cr_assert_eq(SCQ.events, 0);
	cr_assert_eq(RCQ.arms, 3, "the receive queue re-armed once per event");
	cr_assert(C->rcq.armed && RCQ.armed);
	cr_assert_eq(C->rcq.arms + C->scq.arms, 3, "the counters agree");
}

Test(rdma_cq, a_send_in_flight_is_armed_for_once, .init = setup, .fini = teardown)
{
	send_one(0);
	cr_assert_not(rdma_conn_settle(C, true));
	cr_assert_eq(SCQ.arms, 1);
	cr_assert(C->scq.armed);
	cr_assert_not(rdma_conn_settle(C, true));
	cr_assert_eq(SCQ.arms, 1, "still armed: no second request");
	cr_assert_eq(done_calls, 0);
	/* the completion arrives later and raises the event the loop sleeps on */
	cqe_add(&SCQ, (struct ibv_wc){.wr_id = (uintptr_t)&OP[0], .status = IBV_WC_SUCCESS});
	cr_assert_eq(SCQ.events, 1);
	take_event(&SCQ);
	cr_assert_eq(done_calls, 1);
	cr_assert_not(C->scq.armed);
	cr_assert_not(rdma_conn_settle(C, true));
	cr_assert_eq(SCQ.arms, 1, "nothing in flight: not armed again");
	cr_assert_eq(RCQ.arms, 0, "receives were armed all along");
}

Test(rdma_cq, a_completion_before_the_arm_is_polled_after_it, .init = setup, .fini = teardown)
{
	send_one(0);
	SCQ.land_on_arm = true;
	SCQ.pending = (struct ibv_wc){.wr_id = (uintptr_t)&OP[0], .status = IBV_WC_SUCCESS};
	cr_assert(rdma_conn_settle(C, true), "work found after arming: the loop must not sleep");
	cr_assert_eq(done_calls, 1, "found by the poll after the arm, though it raised no event");
	cr_assert_eq(SCQ.events, 0);
}

Test(rdma_cq, spinning_polls_without_arming, .init = setup, .fini = teardown)
{
	C->rcq.armed = RCQ.armed = false;
	send_one(0);
	cr_assert_not(rdma_conn_settle(C, false));
	cr_assert_eq(SCQ.arms + RCQ.arms, 0);
	cr_assert_not(rdma_conn_settle(C, true));
	cr_assert_eq(SCQ.arms, 1);
	cr_assert_eq(RCQ.arms, 1);
}

Test(rdma_cq, sends_are_reaped_before_receives, .init = setup, .fini = teardown)
{
	send_one(0);
	recv_arrives(0);
	cqe_add(&SCQ, (struct ibv_wc){.wr_id = (uintptr_t)&OP[0], .status = IBV_WC_SUCCESS});
	cr_assert(rdma_conn_poll(C));
	cr_assert_str_eq(seen, "sr", "the send released its resources first");
	cr_assert_eq(posted_recvs, 1, "the receive buffer went back");
}

Test(rdma_cq, events_are_acknowledged_in_batches, .init = setup, .fini = teardown)
{
	for (int i = 0; i < 64; i++) {
		recv_arrives(i % 4);
		take_event(&RCQ);
		rdma_conn_settle(C, true);
	}
	cr_assert_eq(C->rcq.unacked, 0);
	cr_assert_eq(RCQ.cq.comp_events_completed, 64);
}

Test(rdma_cq, a_closing_connection_arms_both_and_closes_on_the_flushes, .init = setup,
     .fini = teardown)
{
	send_one(0);
	C->rcq.armed = RCQ.armed = false;
	C->state = RDMA_CONN_CLOSING; /* the QP went to the error state */
	C->rq_posted = 1;
	cr_assert_not(rdma_conn_settle(C, true));
	cr_assert(C->rcq.armed && C->scq.armed);
	cqe_add(&SCQ, (struct ibv_wc){.wr_id = (uintptr_t)&OP[0], .status = IBV_WC_WR_FLUSH_ERR});
	cqe_add(&RCQ, (struct ibv_wc){.wr_id = rdma_wrid_recv(&RBUF[0]),
				      .status = IBV_WC_WR_FLUSH_ERR});
	take_event(&SCQ);
	cr_assert_eq(C->state, RDMA_CONN_CLOSED);
	cr_assert_str_eq(seen, "f", "the send failed; flushed receives are not delivered");
}
