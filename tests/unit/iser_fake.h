/* Header-only stand-in for the verbs layer under the iSER target (struct rdma_io), so iSER
 * connections run against the real iSCSI target and SCSI core without an RDMA device (the unit
 * tests and the fuzz harness share it).  One fake connection at a time:
 *
 *   - every SEND the target posts is logged (fake.sent[]), with the op it completes;
 *   - an RDMA WRITE or READ is recorded (rem, loc, bytes, op) and completes when the caller
 *     says (iser_fake_complete), as its completion would;
 *   - disconnect behaves like the real layer: the connection is told it is down at once;
 *   - everything runs on worker 0 of the started iSCSI target, where the verbs layer runs.
 * ISER_FAKE_CHECK(cond) is abort() unless the includer defines it (Criterion's cr_assert). */
#ifndef UTGT_TEST_ISER_FAKE_H
#define UTGT_TEST_ISER_FAKE_H

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "common/ut_thread.h"
#include "transports/iscsi/iscsi_pdu.h"
#include "transports/iser/iser_iscsi.h"
#include "transports/rdma/rdma_pool.h"

#ifndef ISER_FAKE_CHECK
#define ISER_FAKE_CHECK(c)                                                                         \
	do {                                                                                       \
		if (!(c))                                                                          \
			abort();                                                                   \
	} while (0)
#endif

#define NSEND 64

static struct iser_fake {
	void *priv;
	struct iser_srv_ctx ctx;
	struct rdma_pool *pool;
	bool accepted, rejected, disconnected, released;
	/* what the connection accepted with */
	struct rdma_conn_params params;
	uint8_t rep[ISER_CM_HDR_LEN];
	/* failures to inject: accept, SEND, RDMA READ/WRITE (0: none) */
	int accept_rc, send_rc, rdma_rc;
	/* disconnect as the verbs layer does, telling the connection it is down at once
	 * (iser_fake_begin sets it; a test of the connection alone may clear it) */
	bool down_on_disconnect;
	/* at disconnect, flush every operation still posted as the QP's error state does (a test
	 * that completes them itself, to look at the order, leaves it off) */
	bool flush_on_disconnect;
	struct ut_msg flush_msg;
	/* SENDs posted, in order: iSER header + BHS + data */
	uint8_t sent[NSEND][ISER_HEADERS_LEN + 8192];
	uint32_t sent_len[NSEND];
	struct rdma_op *sent_op[NSEND];
	unsigned nsent;
	struct rdma_buf sbuf[NSEND];
	uint8_t sdata[NSEND][ISER_HEADERS_LEN + 8192];
	bool sbusy[NSEND];
	/* RDMA WRITE (+SEND) and READ posted */
	unsigned nwrite, nread;
	struct rdma_rseg rem;
	struct rdma_seg loc[ISER_MAX_SEGS];
	unsigned nrem, nloc;
	uint64_t bytes;
	struct rdma_op *op;
	/* the receive buffer the test delivers in */
	struct rdma_buf rbuf[8];
	uint8_t rdata[8][ISER_HEADERS_LEN + 70000];
	/* every operation posted with an op and not yet completed */
	struct rdma_op *pending[NSEND];
	unsigned npending;
	unsigned rbusy; /* bitmask: delivered, not yet reposted */
	unsigned reposted, next_slot;
} f;

#define FC ((struct rdma_conn *)&f)

static void *fk_priv(const struct rdma_conn *c)
{
	(void)c;
	return f.priv;
}
static void fk_set_priv(struct rdma_conn *c, void *p)
{
	(void)c;
	f.priv = p;
}
static const char *fk_name(const struct rdma_conn *c)
{
	(void)c;
	return "192.0.2.1:4791";
}
static void *fk_ctx(struct rdma_conn *c)
{
	(void)c;
	return &f.ctx;
}
static int fk_accept(struct rdma_conn *c, const struct rdma_conn_params *p)
{
	(void)c;
	f.accepted = true;
	f.params = *p;
	memcpy(f.rep, p->priv, p->priv_len < sizeof(f.rep) ? p->priv_len : sizeof(f.rep));
	return f.accept_rc;
}
static void fk_reject(struct rdma_conn *c, const void *priv, uint8_t len)
{
	(void)c, (void)priv, (void)len;
	f.rejected = true;
}
static struct rdma_buf *fk_send_buf(struct rdma_conn *c)
{
	(void)c;
	for (unsigned i = 0; i < NSEND; i++)
		if (!f.sbusy[i]) {
			f.sbusy[i] = true;
			f.sbuf[i].data = f.sdata[i];
			f.sbuf[i].size = sizeof(f.sdata[i]);
			return &f.sbuf[i];
		}
	return NULL;
}
static void fk_put_send_buf(struct rdma_conn *c, struct rdma_buf *b)
{
	(void)c;
	f.sbusy[b - f.sbuf] = false;
}
static int fk_send(struct rdma_conn *c, struct rdma_buf *b, uint32_t len, bool sol,
		   struct rdma_op *op)
{
	(void)c, (void)sol;
	if (f.send_rc)
		return f.send_rc;
	ISER_FAKE_CHECK(f.nsent < NSEND);
	memcpy(f.sent[f.nsent], b->data, len);
	f.sent_len[f.nsent] = len;
	f.sent_op[f.nsent++] = op;
	if (op) {
		ISER_FAKE_CHECK(f.npending < NSEND);
		f.pending[f.npending++] = op;
	}
	f.sbusy[b - f.sbuf] = false; /* the buffer is free once posted, in the fake */
	return 0;
}
/* An RDMA READ or WRITE posted: what the test can look at. */
static int fk_rdma(const struct rdma_rseg *rem, unsigned nrem, const struct rdma_seg *loc,
		   unsigned nloc, uint64_t bytes, struct rdma_op *op)
{
	ISER_FAKE_CHECK(nrem == 1);
	if (f.rdma_rc)
		return f.rdma_rc;
	f.rem = *rem;
	f.nrem = nrem;
	memcpy(f.loc, loc, nloc * sizeof(*loc));
	f.nloc = nloc;
	f.bytes = bytes;
	f.op = op;
	return 0;
}
static int fk_write_send(struct rdma_conn *c, const struct rdma_rseg *rem, unsigned nrem,
			 const struct rdma_seg *loc, unsigned nloc, uint64_t bytes,
			 struct rdma_buf *b, uint32_t len, bool sol, struct rdma_op *op)
{
	int rc = fk_rdma(rem, nrem, loc, nloc, bytes, op);

	if (rc)
		return rc;
	f.nwrite++;
	return fk_send(c, b, len, sol, op); /* the response SEND completes the chain */
}
static int fk_read(struct rdma_conn *c, const struct rdma_rseg *rem, unsigned nrem,
		   const struct rdma_seg *loc, unsigned nloc, uint64_t bytes, struct rdma_op *op)
{
	int rc = fk_rdma(rem, nrem, loc, nloc, bytes, op);

	(void)c;
	if (rc)
		return rc;
	f.nread++;
	ISER_FAKE_CHECK(f.npending < NSEND);
	f.pending[f.npending++] = op;
	return 0;
}
static void fk_repost(struct rdma_conn *c, struct rdma_buf *b)
{
	(void)c;
	f.rbusy &= ~(1u << (b - f.rbuf));
	f.reposted++;
}
/* The flushed completions arrive after the disconnect call returns, as from a CQ. */
static void fk_flush(struct ut_msg *m)
{
	(void)m;
	while (f.npending) {
		struct rdma_op *op = f.pending[--f.npending];
		op->done(FC, op, false);
	}
}
static void fk_disconnect(struct rdma_conn *c)
{
	f.disconnected = true;
	if (f.down_on_disconnect)
		iser_conn_ops.down(c);
	if (f.flush_on_disconnect) {
		f.flush_msg.fn = fk_flush;
		ut_thread_post(ut_thread_current(), &f.flush_msg);
	}
}
static void fk_release(struct rdma_conn *c)
{
	(void)c;
	f.released = true;
}
static struct rdma_pool *fk_pool(struct rdma_conn *c)
{
	(void)c;
	return f.pool;
}

static const struct rdma_io fake_io = {
    .priv = fk_priv,
    .set_priv = fk_set_priv,
    .name = fk_name,
    .ctx = fk_ctx,
    .accept = fk_accept,
    .reject = fk_reject,
    .send_buf = fk_send_buf,
    .put_send_buf = fk_put_send_buf,
    .send = fk_send,
    .write_send = fk_write_send,
    .read = fk_read,
    .repost = fk_repost,
    .disconnect = fk_disconnect,
    .release = fk_release,
    .pool = fk_pool,
};

static const struct rdma_io *iser_fake_saved_io;

static inline void iser_fake_nothing(void *arg)
{
	(void)arg;
}

/* Run fn on worker 0, where the verbs layer would call the target, and let what it started
 * there (core completions, the round's flush) finish before returning. */
static inline void iser_fake_on_worker(void (*fn)(void *), void *arg)
{
	ut_thread_call_sync(&iscsit_global->workers[0].ut, fn, arg);
	/* completions it posted run after it; a call queued behind them returns after them */
	for (int i = 0; i < 3; i++)
		ut_thread_call_sync(&iscsit_global->workers[0].ut, iser_fake_nothing, NULL);
}

/* A fresh fake connection whose upper layer is up (pool: the data pool it hands out). */
static inline void iser_fake_reset(const struct iser_upper *up, void *up_ctx,
				   struct rdma_pool *pool)
{
	memset(&f, 0, sizeof(f));
	iser_conn_cfg_default(&f.ctx.cfg);
	f.ctx.up = up;
	f.ctx.up_ctx = up_ctx;
	f.pool = pool;
	f.down_on_disconnect = true;
	for (int i = 0; i < 8; i++) {
		f.rbuf[i].data = f.rdata[i];
		f.rbuf[i].size = sizeof(f.rdata[i]);
		f.rbuf[i].recv = true;
	}
}

/* The iSCSI target is started: fake verbs under it from now on. */
static inline void iser_fake_begin(void)
{
	iser_fake_reset(&iser_iscsi_upper, iscsit_global,
			rdma_pool_create(NULL, ISER_POOL_CHUNK, 4u << 20, 64u << 20));
	iser_fake_saved_io = iser_io;
	iser_io = &fake_io;
}

/* After the target stopped. */
static inline void iser_fake_end(void)
{
	iser_io = iser_fake_saved_io;
	rdma_pool_destroy(f.pool);
	f.pool = NULL;
}

static inline void iser_fake_do_request(void *arg)
{
	iser_conn_ops.request(FC, arg);
}

/* An ib_iser connection request from 127.0.0.1 to the portal 127.0.0.1:3260. */
static inline void iser_fake_connect(void)
{
	const uint8_t priv[4] = {ISER_CM_ZBVA_NOT_SUP | ISER_CM_SEND_W_INV_NOT_SUP};
	struct rdma_conn_req req = {.priv = priv, .priv_len = sizeof(priv)};
	struct sockaddr_in *l = (struct sockaddr_in *)&req.local;
	struct sockaddr_in *p = (struct sockaddr_in *)&req.peer;

	l->sin_family = p->sin_family = AF_INET;
	l->sin_addr.s_addr = p->sin_addr.s_addr = htonl(0x7f000001);
	l->sin_port = htons(3260);
	p->sin_port = htons(40000);
	iser_fake_on_worker(iser_fake_do_request, &req);
}

struct iser_fake_rx {
	unsigned slot;
	uint32_t len;
};

static inline void iser_fake_do_recv(void *arg)
{
	struct iser_fake_rx *a = arg;

	iser_conn_ops.recv(FC, &f.rbuf[a->slot], a->len);
}

/* Deliver one SEND of len bytes (iSER header, BHS, ...) as the next receive completion.
 * Returns false when no receive buffer is free (the target holds all of them). */
static inline bool iser_fake_deliver_raw(const void *send, uint32_t len)
{
	for (unsigned k = 0; k < 8; k++) {
		unsigned slot = f.next_slot++ % 8;
		struct iser_fake_rx a = {slot, len};

		if (f.rbusy & (1u << slot))
			continue;
		memcpy(f.rdata[slot], send, len);
		f.rbusy |= 1u << slot;
		iser_fake_on_worker(iser_fake_do_recv, &a);
		return true;
	}
	return false;
}

struct iser_fake_done {
	struct rdma_op *op;
	bool ok;
};

static inline void iser_fake_do_done(void *arg)
{
	struct iser_fake_done *d = arg;

	for (unsigned i = 0; i < f.npending; i++)
		if (f.pending[i] == d->op) {
			f.pending[i] = f.pending[--f.npending];
			break;
		}
	d->op->done(FC, d->op, d->ok);
}

/* An operation the target posted completes (ok: success; else flushed / failed). */
static inline void iser_fake_complete(struct rdma_op *op, bool ok)
{
	struct iser_fake_done d = {op, ok};

	iser_fake_on_worker(iser_fake_do_done, &d);
}

static inline void iser_fake_do_down(void *arg)
{
	(void)arg;
	iser_conn_ops.down(FC);
}

/* The peer goes away. */
static inline void iser_fake_down(void)
{
	iser_fake_on_worker(iser_fake_do_down, NULL);
}

#endif
