/* Sender threads (transports/rdma/rdma_sender.c) with real threads on stand-in verbs: a chain
 * with at least cfg.handoff_bytes of RDMA WRITE or READ data is posted by the connection's
 * sender (one per CPU; connections spread over them), smaller ones inline.
 *
 * What must hold: a connection's chains reach the device in the order they were staged, a
 * small one staged behind large ones still queued follows them through the sender (never
 * inline past them); going down takes back what a sender has not posted (its operations fail,
 * none of it reaches the device afterwards) and waits for a post in progress; a chain the
 * device refuses fails exactly what it did not take, on the connection's thread. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "transports/rdma/rdma_int.h"

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	(void)qp;
	(void)attr;
	(void)mask;
	return 0;
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	(void)id;
	return 0;
}

/* ---- the device: records each post (from which thread), may hold one, may refuse ---- */
#define MAXWR 1024
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct ibv_context CTX;
static struct ibv_qp QP[2];
static struct ibv_cq CQ;
static unsigned nposted, doorbells, inline_doorbells;
static struct {
	struct ibv_qp *qp;
	enum ibv_wr_opcode op;
	uint64_t wr_id;
} posted[MAXWR];
static pthread_t test_thread;
static struct ibv_qp *hold_qp; /* the next post on it waits in the device until released */
static bool holding;	       /* a post is waiting there now */
static int refuse_at = -1;     /* index in a chain the device refuses, */
static int refuse_db = -1;     /* in this doorbell (0: the first) */

static int f_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	int i = 0;

	pthread_mutex_lock(&mu);
	if (qp == hold_qp) {
		hold_qp = NULL;
		holding = true;
		pthread_cond_broadcast(&cv);
		while (holding)
			pthread_cond_wait(&cv, &mu);
	}
	if (pthread_equal(pthread_self(), test_thread))
		inline_doorbells++;
	for (; wr; wr = wr->next, i++) {
		if (i == refuse_at && (int)doorbells == refuse_db) {
			doorbells++;
			*bad = wr;
			pthread_cond_broadcast(&cv);
			pthread_mutex_unlock(&mu);
			return ENOMEM;
		}
		cr_assert_lt(nposted, MAXWR);
		posted[nposted].qp = qp;
		posted[nposted].op = wr->opcode;
		posted[nposted++].wr_id = wr->wr_id;
	}
	doorbells++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return 0;
}

static int f_poll(struct ibv_cq *cq, int num, struct ibv_wc *wc)
{
	(void)cq;
	(void)num;
	(void)wc;
	return 0;
}

/* Wait (up to 5 s) until cond() holds, under mu.  Some conditions change under the senders'
 * own locks, after the device's last signal: look again every 10 ms. */
static void wait_for(bool (*cond)(void), const char *what)
{
	struct timespec end, dl;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 5;
	pthread_mutex_lock(&mu);
	while (!cond()) {
		clock_gettime(CLOCK_REALTIME, &dl);
		if (dl.tv_sec > end.tv_sec ||
		    (dl.tv_sec == end.tv_sec && dl.tv_nsec > end.tv_nsec)) {
			pthread_mutex_unlock(&mu);
			cr_assert_fail("timed out waiting for %s", what);
		}
		dl.tv_nsec += 10000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&cv, &mu, &dl);
	}
	pthread_mutex_unlock(&mu);
}

static bool is_holding(void)
{
	return holding;
}

static void release_hold(void)
{
	pthread_mutex_lock(&mu);
	holding = false;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/* ---- two connections on one service with sender threads ---- */
#define NOPS 64
#define BIG  (256u << 10)
static const struct rdma_conn_ops OPS;
static struct rdma_srv SRV;
static struct rdma_thread T;
static struct rdma_conn *C[2];
static struct rdma_cm_id ID[2];
static struct rdma_buf SBUF[2][NOPS];
static uint8_t SDATA[2][NOPS][64];
static struct rdma_op OP[2][NOPS];
static int result[2][NOPS]; /* 0 pending, 1 done ok, -1 failed */
static uint8_t LOCAL[64];

static void op_done(struct rdma_conn *c, struct rdma_op *op, bool ok)
{
	int k = c == C[0] ? 0 : 1;

	result[k][op - OP[k]] = ok ? 1 : -1;
}

static void setup(void)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("one CPU: no sender threads");
	test_thread = pthread_self();
	CTX.ops.post_send = f_post_send;
	CTX.ops.poll_cq = f_poll;
	QP[0].context = QP[1].context = CQ.context = &CTX;
	nposted = doorbells = inline_doorbells = 0;
	hold_qp = NULL;
	holding = false;
	refuse_at = refuse_db = -1;
	memset(result, 0, sizeof(result));
	memset(&SRV, 0, sizeof(SRV));
	SRV.cfg.name = "test";
	SRV.cfg.handoff_bytes = BIG;
	SRV.ops = &OPS;
	T.srv = &SRV;
	T.ut = NULL; /* the refusal's wake-up is called by hand below */
	cr_assert_eq(rdma_senders_start(&SRV), 0);
	cr_assert_geq(SRV.nsenders, 2);
	for (int k = 0; k < 2; k++) {
		C[k] = calloc(1, sizeof(*C[k]));
		C[k]->srv = &SRV;
		C[k]->t = &T;
		C[k]->id = &ID[k];
		C[k]->state = RDMA_CONN_LIVE;
		C[k]->qp = &QP[k];
		C[k]->sq_depth = 1024;
		C[k]->max_sge = 4;
		C[k]->rcq.cq = C[k]->scq.cq = &CQ;
		C[k]->released = false;
		C[k]->cpu_hint = -1; /* no hint: the sender with the fewest connections */
		snprintf(C[k]->name, sizeof(C[k]->name), "conn%d", k);
		for (int i = 0; i < NOPS; i++) {
			SBUF[k][i] = (struct rdma_buf){.data = SDATA[k][i], .size = 64};
			rdma_conn_put_send_buf(C[k], &SBUF[k][i]);
			OP[k][i] = (struct rdma_op){.done = op_done};
		}
	}
}

static void teardown(void)
{
	release_hold();
	rdma_senders_stop(&SRV); /* joins: every queued chain was posted or taken back */
	for (int k = 0; k < 2; k++)
		free(C[k]);
}

/* Command i of connection k answered with `bytes` of data-in and a response, then flushed. */
static void respond(int k, int i, uint32_t bytes)
{
	struct rdma_rseg rem = {.addr = 0x100000u * (unsigned)(i + 1), .rkey = 7, .len = bytes};
	struct rdma_seg loc = {.addr = LOCAL, .len = bytes, .lkey = 9};
	struct rdma_buf *b = rdma_conn_send_buf(C[k]);

	cr_assert_not_null(b);
	cr_assert_eq(rdma_conn_write_send(C[k], &rem, 1, &loc, 1, bytes, b, 36, false, &OP[k][i]),
		     0);
	rdma_conn_flush(C[k]);
}

/* Command i of connection k fetching `bytes` of data-out by RDMA READ, then flushed. */
static void fetch(int k, int i, uint32_t bytes)
{
	struct rdma_rseg rem = {.addr = 0x100000u * (unsigned)(i + 1), .rkey = 7, .len = bytes};
	struct rdma_seg loc = {.addr = LOCAL, .len = bytes, .lkey = 9};

	cr_assert_eq(rdma_conn_read(C[k], &rem, 1, &loc, 1, bytes, &OP[k][i]), 0);
	rdma_conn_flush(C[k]);
}

static bool pending_zero(void)
{
	return !atomic_load(&C[0]->ho_pending) && !atomic_load(&C[1]->ho_pending);
}

/* (sender locks are never held while the device's mu is taken, so either order is safe) */
/* The responses of connection k that reached the device, in device order. */
static int device_order(int k, int *out)
{
	int n = 0;

	pthread_mutex_lock(&mu);
	for (unsigned j = 0; j < nposted; j++)
		if (posted[j].qp == &QP[k] && posted[j].op == IBV_WR_SEND)
			out[n++] = (int)((struct rdma_op *)(uintptr_t)posted[j].wr_id - OP[k]);
	pthread_mutex_unlock(&mu);
	return n;
}

Test(rdma_sender, large_chains_go_to_the_connections_sender_small_ones_stay_inline, .init = setup,
     .fini = teardown)
{
	respond(0, 0, 4096);
	cr_assert_eq(inline_doorbells, 1, "below handoff_bytes: posted by the caller");
	cr_assert_eq(C[0]->handoffs, 0);
	cr_assert_null(C[0]->ho_sender, "no sender until a chain is handed off");
	respond(0, 1, BIG);
	cr_assert_eq(C[0]->handoffs, 1);
	cr_assert_not_null(C[0]->ho_sender);
	wait_for(pending_zero, "the sender's post");
	cr_assert_eq(doorbells, 2);
	cr_assert_eq(inline_doorbells, 1, "the large one was posted by the sender");
	cr_assert_eq(C[0]->sq_used, 4, "its room stays taken until it completes");
	respond(1, 0, BIG);
	cr_assert_neq(C[1]->ho_sender, C[0]->ho_sender, "connections spread over the senders");
	respond(0, 2, BIG);
	wait_for(pending_zero, "the senders' posts");
	cr_assert_eq(C[0]->handoffs, 2);
	cr_assert_eq(atomic_load(&C[0]->ho_sender->nconns), 1);
	rdma_sender_conn_gone(C[0]);
	cr_assert_null(C[0]->ho_sender);
	cr_assert_eq(atomic_load(&SRV.senders[0].nconns) + atomic_load(&SRV.senders[1].nconns), 1,
		     "a connection freed leaves its sender");
}

/* With rxe the peer answers an RDMA READ on the CPU that posted it: a large WRITE's data-out is
 * most of its work, and goes to the sender as a large READ's data-in does. */
Test(rdma_sender, large_rdma_reads_go_to_the_sender_too, .init = setup, .fini = teardown)
{
	unsigned reads = 0;

	fetch(0, 0, 4096);
	cr_assert_eq(inline_doorbells, 1, "a small RDMA READ: posted by the caller");
	cr_assert_eq(C[0]->handoffs, 0);
	fetch(0, 1, BIG);
	cr_assert_eq(C[0]->handoffs, 1, "an RDMA READ of handoff_bytes: the sender's");
	cr_assert_not_null(C[0]->ho_sender);
	wait_for(pending_zero, "the sender's post");
	cr_assert_eq(doorbells, 2);
	cr_assert_eq(inline_doorbells, 1, "the large one was posted by the sender");
	pthread_mutex_lock(&mu);
	for (unsigned j = 0; j < nposted; j++)
		reads += posted[j].qp == &QP[0] && posted[j].op == IBV_WR_RDMA_READ;
	pthread_mutex_unlock(&mu);
	cr_assert_eq(reads, 2, "both READs reached the device");
	cr_assert_eq(C[0]->stage.data_bytes, 0, "the stage's count starts again");
}

/* Both connections on one sender, as more connections than CPUs would be. */
static void share_sender(void)
{
	cr_assert_not_null(C[1]->ho_sender);
	C[0]->ho_sender = C[1]->ho_sender;
	atomic_fetch_add(&C[0]->ho_sender->nconns, 1);
}

Test(rdma_sender, chains_behind_a_queued_one_follow_it_in_order, .init = setup, .fini = teardown)
{
	int order[NOPS], n;

	hold_qp = &QP[0];
	respond(0, 0, BIG);
	wait_for(is_holding, "the sender inside the first post");
	respond(0, 1, BIG);
	respond(0, 2, 4096); /* small, but chains of its connection are still queued */
	respond(0, 3, BIG);
	respond(1, 0, 4096); /* another connection: nothing of it queued, inline */
	cr_assert_eq(C[0]->handoffs, 4, "the small one followed the queued ones");
	cr_assert_eq(inline_doorbells, 1, "only the other connection's");
	release_hold();
	wait_for(pending_zero, "the queued posts");
	n = device_order(0, order);
	cr_assert_eq(n, 4);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(order[i], i, "device order %d: response %d", i, order[i]);
	cr_assert_eq(doorbells, 3, "the three queued behind the first went in one post");
	respond(0, 4, 4096);
	cr_assert_eq(inline_doorbells, 2, "nothing queued any more: inline again");
}

Test(rdma_sender, going_down_takes_back_queued_chains, .init = setup, .fini = teardown)
{
	int order[NOPS];
	unsigned nfree = 0;

	/* the sender busy with the other connection's post: ours wait behind it */
	hold_qp = &QP[1];
	respond(1, 0, BIG);
	wait_for(is_holding, "the sender inside the other connection's post");
	share_sender();
	respond(0, 0, BIG);
	respond(0, 1, 4096);
	respond(0, 2, BIG);
	cr_assert_eq(atomic_load(&C[0]->ho_pending), 3);
	rdma_conn_go_down(C[0], "test");
	for (int i = 0; i < 3; i++)
		cr_assert_eq(result[0][i], -1, "response %d: never posted, failed", i);
	cr_assert_eq(atomic_load(&C[0]->ho_pending), 0);
	cr_assert_eq(C[0]->sq_used, 0);
	cr_assert_eq(C[0]->state, RDMA_CONN_CLOSED, "nothing left to complete: it may be freed");
	for (struct rdma_buf *b = C[0]->send_free; b; b = b->next)
		nfree++;
	cr_assert_eq(nfree, NOPS, "their send buffers came back");
	release_hold();
	wait_for(pending_zero, "the other connection's post");
	cr_assert_eq(device_order(0, order), 0, "nothing of it reached the device");
	cr_assert_eq(device_order(1, order), 1);
	cr_assert_eq(result[1][0], 0, "the other connection's is posted, to complete");
}

struct down_arg {
	int done;
};

static void *go_down_thread(void *arg)
{
	struct down_arg *a = arg;

	rdma_conn_go_down(C[0], "test");
	pthread_mutex_lock(&mu);
	a->done = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static struct down_arg DOWN;
static bool down_done(void)
{
	return DOWN.done;
}

Test(rdma_sender, going_down_waits_for_a_post_in_progress, .init = setup, .fini = teardown)
{
	int order[NOPS], n;
	pthread_t th;

	hold_qp = &QP[0];
	respond(0, 0, BIG);
	wait_for(is_holding, "the sender inside the post");
	respond(0, 1, BIG);
	respond(0, 2, BIG);
	DOWN.done = 0;
	cr_assert_eq(pthread_create(&th, NULL, go_down_thread, &DOWN), 0);
	release_hold();
	wait_for(down_done, "going down");
	pthread_join(th, NULL);
	/* each response either reached the device (a prefix, in order) or failed: never both,
	 * never neither, and no post of the connection is with a sender any more */
	n = device_order(0, order);
	cr_assert_geq(n, 1, "the one in progress was posted");
	for (int i = 0; i < 3; i++) {
		if (i < n) {
			cr_assert_eq(order[i], i);
			cr_assert_eq(result[0][i], 0, "posted: it completes through the queue");
		} else {
			cr_assert_eq(result[0][i], -1, "response %d: taken back, failed", i);
		}
	}
	cr_assert_eq(atomic_load(&C[0]->ho_pending), 0);
	pthread_mutex_lock(&C[0]->ho_sender->lock);
	cr_assert_null(C[0]->ho_sender->head);
	cr_assert_null(C[0]->ho_sender->posting);
	pthread_mutex_unlock(&C[0]->ho_sender->lock);
	cr_assert_eq(C[0]->sq_used, 2u * (unsigned)n, "the posted ones' room until they complete");
}

/* A connection whose commands come from CPU h (ib_srp's channel h+1) gets the sender on CPU
 * h, where the initiator completes what it issued.  No sender there: the fewest connections. */
Test(rdma_sender, a_connection_gets_the_sender_on_its_initiators_cpu, .init = setup,
     .fini = teardown)
{
	unsigned n = SRV.nsenders;

	C[0]->cpu_hint = SRV.senders[n - 1].cpu; /* the first to hand off would get sender 0 */
	C[1]->cpu_hint = SRV.senders[0].cpu;
	respond(0, 0, BIG);
	respond(1, 0, BIG);
	wait_for(pending_zero, "the senders' posts");
	cr_assert_eq(C[0]->ho_sender, &SRV.senders[n - 1], "on CPU %d", C[0]->cpu_hint);
	cr_assert_eq(C[1]->ho_sender, &SRV.senders[0], "on CPU %d", C[1]->cpu_hint);
	rdma_sender_conn_gone(C[0]);
	rdma_sender_conn_gone(C[1]);
	C[0]->cpu_hint = C[1]->cpu_hint = SRV.senders[0].cpu; /* both channels on one CPU */
	respond(0, 1, BIG);
	respond(1, 1, BIG);
	wait_for(pending_zero, "the senders' posts");
	cr_assert_eq(C[0]->ho_sender, C[1]->ho_sender, "both on the one CPU they name");
	rdma_sender_conn_gone(C[0]);
	rdma_sender_conn_gone(C[1]);
	C[0]->cpu_hint = C[1]->cpu_hint = CPU_SETSIZE; /* a CPU we have no sender on */
	respond(0, 2, BIG);
	respond(1, 2, BIG);
	wait_for(pending_zero, "the senders' posts");
	cr_assert_neq(C[0]->ho_sender, C[1]->ho_sender, "no sender there: the fewest");
}

static bool refused(void)
{
	bool any;

	struct rdma_sender *x = C[0]->ho_sender;

	pthread_mutex_lock(&x->lock);
	any = x->failed && !x->posting;
	pthread_mutex_unlock(&x->lock);
	return any;
}

Test(rdma_sender, a_refused_chain_fails_on_its_thread, .init = setup, .fini = teardown)
{
	uint32_t two = 2 * BIG;

	/* two responses in one chain (one flush): the device takes the first and refuses the
	 * second's data */
	for (int i = 0; i < 2; i++) {
		struct rdma_rseg rem = {
		    .addr = 0x100000u * (unsigned)(i + 1), .rkey = 7, .len = BIG};
		struct rdma_seg loc = {.addr = LOCAL, .len = BIG, .lkey = 9};
		struct rdma_buf *b = rdma_conn_send_buf(C[0]);

		cr_assert_eq(
		    rdma_conn_write_send(C[0], &rem, 1, &loc, 1, BIG, b, 36, false, &OP[0][i]), 0);
	}
	cr_assert_eq(C[0]->stage.data_bytes, two);
	refuse_at = 2;
	refuse_db = 0;
	rdma_conn_flush(C[0]);
	wait_for(refused, "the refusal");
	cr_assert_eq(atomic_load(&C[0]->ho_pending), 1, "refused: pending until its thread saw it");
	cr_assert_eq(C[0]->state, RDMA_CONN_LIVE, "the sender does not touch the connection");
	rdma_sender_failed(&T.ho_msg); /* what the sender's message runs on the thread */
	cr_assert_eq(C[0]->state, RDMA_CONN_CLOSING, "down: the first is still to complete");
	cr_assert_eq(result[0][0], 0, "taken by the device: completes (or is flushed)");
	cr_assert_eq(result[0][1], -1, "not taken: failed");
	cr_assert_eq(C[0]->sq_used, 2);
	cr_assert_eq(atomic_load(&C[0]->ho_pending), 0);
	cr_assert_eq(C[1]->state, RDMA_CONN_LIVE, "the other connection is not touched");
}

Test(rdma_sender, a_refusal_inside_posts_sent_together_fails_from_there, .init = setup,
     .fini = teardown)
{
	hold_qp = &QP[0];
	respond(0, 0, BIG);
	wait_for(is_holding, "the sender inside the first post");
	for (int i = 1; i < 4; i++)
		respond(0, i, BIG);
	refuse_at = 3; /* the second post of the next doorbell: response 2's SEND */
	refuse_db = 1;
	release_hold();
	wait_for(refused, "the refusal");
	cr_assert_eq(atomic_load(&C[0]->ho_pending), 2, "responses 2 and 3 wait for the thread");
	rdma_sender_failed(&T.ho_msg);
	cr_assert_eq(result[0][0], 0);
	cr_assert_eq(result[0][1], 0, "taken whole in the shared post");
	cr_assert_eq(result[0][2], -1, "its data was taken, its response not");
	cr_assert_eq(result[0][3], -1, "after the refusal: not taken");
	cr_assert_eq(C[0]->sq_used, 4, "the room of responses 0 and 1 only");
	cr_assert_eq(atomic_load(&C[0]->ho_pending), 0);
}
