/* Posting on a connection (transports/rdma/rdma_conn.c), on stand-in verbs: what a loop round
 * posts is staged and reaches the device as one chain, one ibv_post_send, when the connection's
 * queues are polled.  ibv_post_send and ibv_poll_cq go through the context's ops table; the
 * QP's move to the error state and the CM's disconnect are stood in for below, so a
 * connection can go down without a device.
 *
 * What must hold: a round's responses go in one doorbell, each operation's RDMA WRITEs right
 * before its SEND and the operations in the order they were posted; a full stage is posted
 * before the next operation goes in; a post the device refuses part-way fails exactly the
 * operations whose last work request it did not take (the others complete as posted), and the
 * connection goes down; operations staged when the connection goes down fail; no room in the
 * send queue stages nothing. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "transports/rdma/rdma_int.h"

/* ---- stand-ins for the calls going down makes ---- */
static unsigned qp_errors, disconnects;

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	(void)qp;
	(void)mask;
	if (attr->qp_state == IBV_QPS_ERR)
		qp_errors++;
	return 0;
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	(void)id;
	disconnects++;
	return 0;
}

/* ---- the device: records every post, takes a chain up to `refuse_at` ---- */
#define MAXWR 1024
static struct ibv_context CTX;
static struct ibv_qp QP;
static struct ibv_cq CQ;
static unsigned doorbells, nposted;
static struct {
	enum ibv_wr_opcode op;
	uint64_t wr_id;
	unsigned flags;
	uint64_t raddr;
	uint32_t bytes;
} posted[MAXWR];
static int refuse_at; /* index in the next chain the device refuses (-1: none) */

static int f_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	int i = 0;

	(void)qp;
	doorbells++;
	for (; wr; wr = wr->next, i++) {
		uint32_t bytes = 0;

		if (i == refuse_at) {
			refuse_at = -1;
			*bad = wr;
			return ENOMEM;
		}
		cr_assert_lt(nposted, MAXWR);
		for (int k = 0; k < wr->num_sge; k++)
			bytes += wr->sg_list[k].length;
		posted[nposted].op = wr->opcode;
		posted[nposted].wr_id = wr->wr_id;
		posted[nposted].flags = wr->send_flags;
		posted[nposted].raddr = wr->wr.rdma.remote_addr;
		posted[nposted++].bytes = bytes;
	}
	return 0;
}

static int f_poll(struct ibv_cq *cq, int num, struct ibv_wc *wc)
{
	(void)cq;
	(void)num;
	(void)wc;
	return 0;
}

/* ---- the connection ---- */
#define NOPS 200
static const struct rdma_conn_ops OPS;
static struct rdma_srv SRV;
static struct rdma_conn *C;
static struct rdma_cm_id ID;
static struct rdma_buf SBUF[NOPS];
static uint8_t SDATA[NOPS][64];
static struct rdma_op OP[NOPS];
static int result[NOPS]; /* 0 pending, 1 done ok, -1 failed */
static uint8_t LOCAL[NOPS][4096];

static void op_done(struct rdma_conn *c, struct rdma_op *op, bool ok)
{
	(void)c;
	result[op - OP] = ok ? 1 : -1;
}

static void setup(void)
{
	CTX.ops.post_send = f_post_send;
	CTX.ops.poll_cq = f_poll;
	QP.context = CQ.context = &CTX;
	doorbells = nposted = qp_errors = disconnects = 0;
	refuse_at = -1;
	memset(result, 0, sizeof(result));
	SRV.cfg.name = "test";
	SRV.ops = &OPS;
	C = calloc(1, sizeof(*C));
	C->srv = &SRV;
	C->id = &ID;
	C->state = RDMA_CONN_LIVE;
	C->qp = &QP;
	C->sq_depth = 1024;
	C->max_sge = 4;
	C->rcq.cq = C->scq.cq = &CQ;
	C->rcq.armed = C->scq.armed = true;
	for (int i = 0; i < NOPS; i++) {
		SBUF[i] = (struct rdma_buf){.data = SDATA[i], .size = 64};
		rdma_conn_put_send_buf(C, &SBUF[i]);
		OP[i] = (struct rdma_op){.done = op_done};
	}
}

static void teardown(void)
{
	free(C);
}

/* The answer to command i: 4 KiB of data-in by RDMA WRITE, then its response. */
static int respond(int i)
{
	struct rdma_rseg rem = {.addr = 0x10000u * (unsigned)(i + 1), .rkey = 7, .len = 4096};
	struct rdma_seg loc = {.addr = LOCAL[i], .len = 4096, .lkey = 9};
	struct rdma_buf *b = rdma_conn_send_buf(C);

	cr_assert_not_null(b);
	return rdma_conn_write_send(C, &rem, 1, &loc, 1, 4096, b, 36, false, &OP[i]);
}

Test(rdma_conn, a_rounds_responses_go_in_one_doorbell_in_order, .init = setup, .fini = teardown)
{
	for (int i = 0; i < 3; i++)
		cr_assert_eq(respond(i), 0);
	cr_assert_eq(doorbells, 0, "staged, not posted yet");
	cr_assert_eq(C->sq_used, 6, "their room is taken at once");
	rdma_conn_poll(C); /* the end of the round */
	cr_assert_eq(doorbells, 1);
	cr_assert_eq(nposted, 6);
	for (unsigned i = 0; i < 3; i++) {
		cr_assert_eq(posted[2 * i].op, IBV_WR_RDMA_WRITE, "command %u: the data first", i);
		cr_assert_eq(posted[2 * i].raddr, 0x10000u * (i + 1));
		cr_assert_eq(posted[2 * i].bytes, 4096);
		cr_assert_eq(posted[2 * i].wr_id, 0, "unsignaled");
		cr_assert_eq(posted[2 * i + 1].op, IBV_WR_SEND, "command %u: then its response", i);
		cr_assert_eq(posted[2 * i + 1].wr_id, (uintptr_t)&OP[i]);
		cr_assert(posted[2 * i + 1].flags & IBV_SEND_SIGNALED);
	}
	rdma_conn_poll(C);
	cr_assert_eq(doorbells, 1, "nothing staged: no empty doorbell");
	cr_assert_eq(C->doorbells, 1);
	cr_assert_eq(C->wrs_posted, 6);
}

Test(rdma_conn, sends_and_reads_share_the_chain, .init = setup, .fini = teardown)
{
	struct rdma_rseg rem = {.addr = 0x5000, .rkey = 3, .len = 8192};
	struct rdma_seg loc[2] = {{.addr = LOCAL[0], .len = 4096}, {.addr = LOCAL[1], .len = 4096}};
	struct rdma_buf *b = rdma_conn_send_buf(C);

	cr_assert_eq(rdma_conn_send(C, b, 16, true, &OP[0]), 0);
	cr_assert_eq(rdma_conn_read(C, &rem, 1, loc, 2, 8192, &OP[1]), 0);
	rdma_conn_flush(C);
	cr_assert_eq(doorbells, 1);
	cr_assert_eq(nposted, 2);
	cr_assert_eq(posted[0].op, IBV_WR_SEND);
	cr_assert(posted[0].flags & IBV_SEND_SOLICITED);
	cr_assert_eq(posted[1].op, IBV_WR_RDMA_READ);
	cr_assert_eq(posted[1].bytes, 8192, "one READ gathering both chunks");
	cr_assert_eq(posted[1].wr_id, (uintptr_t)&OP[1], "the READ's last request is signaled");
}

Test(rdma_conn, a_full_stage_is_posted_before_the_next_operation, .init = setup, .fini = teardown)
{
	int n = RDMA_STAGE_WR / 2 + 1; /* one response more than the stage holds */

	for (int i = 0; i < n; i++)
		cr_assert_eq(respond(i), 0);
	cr_assert_eq(doorbells, 1, "the full stage went out when the next did not fit");
	cr_assert_eq(nposted, RDMA_STAGE_WR);
	rdma_conn_poll(C);
	cr_assert_eq(doorbells, 2);
	cr_assert_eq(nposted, 2u * (unsigned)n);
	cr_assert_eq(posted[nposted - 1].wr_id, (uintptr_t)&OP[n - 1], "order kept across posts");
}

Test(rdma_conn, a_refused_post_fails_what_the_device_did_not_take, .init = setup, .fini = teardown)
{
	for (int i = 0; i < 3; i++)
		cr_assert_eq(respond(i), 0);
	refuse_at = 3; /* takes command 0's WRITE and SEND and command 1's WRITE */
	rdma_conn_flush(C);
	cr_assert_eq(nposted, 3);
	cr_assert_eq(result[0], 0, "posted: completes (or is flushed) through the queue");
	cr_assert_eq(result[1], -1, "its response was not taken");
	cr_assert_eq(result[2], -1, "not taken at all");
	cr_assert_eq(C->state, RDMA_CONN_CLOSING);
	cr_assert_eq(qp_errors, 1, "the QP went to the error state");
	cr_assert_eq(disconnects, 1);
	cr_assert_eq(C->sq_used, 2, "only command 0's room is still taken");
	cr_assert_eq(respond(3), -ENOTCONN, "nothing more is staged");
	cr_assert_eq(C->stage.nwr, 0);
}

Test(rdma_conn, operations_staged_when_the_connection_goes_down_fail, .init = setup,
     .fini = teardown)
{
	unsigned nfree;

	cr_assert_eq(respond(0), 0);
	cr_assert_eq(respond(1), 0);
	rdma_conn_go_down(C, "test");
	cr_assert_eq(doorbells, 0, "never posted");
	cr_assert_eq(result[0], -1);
	cr_assert_eq(result[1], -1);
	cr_assert_eq(C->sq_used, 0);
	cr_assert_eq(C->state, RDMA_CONN_CLOSED, "nothing posted, nothing to wait for");
	nfree = 0;
	for (struct rdma_buf *b = C->send_free; b; b = b->next)
		nfree++;
	cr_assert_eq(nfree, NOPS, "their send buffers came back");
}

Test(rdma_conn, no_send_queue_room_stages_nothing, .init = setup, .fini = teardown)
{
	C->sq_depth = 3;
	cr_assert_eq(respond(0), 0);
	cr_assert_eq(respond(1), -EAGAIN, "2 + 2 > 3");
	cr_assert(C->want_sq_space);
	cr_assert_eq(C->stage.nwr, 2);
	rdma_conn_flush(C);
	cr_assert_eq(nposted, 2);
	cr_assert_eq(result[1], 0, "not failed: the caller waits for room");
}
