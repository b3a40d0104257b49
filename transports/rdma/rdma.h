/* The verbs layer RDMA transports share (SRP now, iSER later).  It knows nothing of either
 * protocol: it accepts RC connections through RDMA/CM, gives each one a queue pair, a
 * completion queue and registered buffers for the protocol's information units, moves data
 * with RDMA READ/WRITE between the peer's memory and a registered data pool, and takes every
 * connection down cleanly on disconnect, device removal and shutdown.
 *
 * Threads.  A service runs on N event threads (common/ut_thread.h): its own, or threads the
 * upper layer lends it (cfg.run_on) so that a connection and what the upper layer keeps for it
 * live on one thread with no hand-off.  On each, the service watches an RDMA/CM event channel
 * and one completion channel per device, ticks once a second, and sleeps unless poll_us asks
 * it to spin on its completion queues for a while after each burst.  A connection lives on one
 * thread: every callback below runs there, and the upper layer calls the rdma_conn_*
 * functions there only (from elsewhere, it posts a ut_msg with rdma_conn_call).  Thread 0 also
 * owns the listeners; a new connection is moved to the least loaded thread (rdma_migrate_id)
 * before the upper layer sees it.
 *
 * Connection states (enum rdma_conn_state): REQUESTED until the upper layer accepts or
 * rejects; ACCEPTED until RDMA/CM reports ESTABLISHED; LIVE; CLOSING from the first sign of
 * trouble (peer disconnect, error completion, device removal, local disconnect): the QP is
 * moved to the error state and every posted work request completes (flushed); CLOSED when
 * nothing is posted any more.  The memory is released when the connection is CLOSED and the
 * upper layer has called rdma_conn_release (after its own in-flight work finished). */
#ifndef UTGT_RDMA_H
#define UTGT_RDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/ut_thread.h"

struct rdma_srv;
struct rdma_conn;
struct rdma_pool;
struct rdma_srq;

enum rdma_conn_state {
	RDMA_CONN_REQUESTED,
	RDMA_CONN_ACCEPTED,
	RDMA_CONN_LIVE,
	RDMA_CONN_CLOSING,
	RDMA_CONN_CLOSED,
};

/* Registered local memory and the peer's memory. */
struct rdma_seg {
	void *addr;
	uint32_t len;
	uint32_t lkey;
};

struct rdma_rseg {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

/* A completion the upper layer waits for (RDMA READ; RDMA WRITE + SEND; a SEND). */
struct rdma_op;
typedef void (*rdma_op_done_fn)(struct rdma_conn *c, struct rdma_op *op, bool ok);
struct rdma_op {
	rdma_op_done_fn done; /* may be NULL */
	/* private */
	uint32_t nwr;
	struct rdma_buf *send_buf;
};

/* A registered buffer for one information unit (receive or send). */
struct rdma_buf {
	uint8_t *data;
	uint32_t size;
	/* private */
	uint32_t lkey;
	struct rdma_buf *next;
	struct rdma_op op;    /* for sends without an op of the caller */
	struct rdma_srq *srq; /* receive buffer of a shared receive queue */
	bool recv;
};

struct rdma_conn_req {
	const uint8_t *priv; /* connect private data */
	uint8_t priv_len;
	struct sockaddr_storage local, peer;
	char dev_name[64];
	uint8_t port_num;
	/* From our side (the CM turns the peer's values around): */
	uint8_t responder_resources; /* RDMA READs the peer may have outstanding toward us */
	uint8_t initiator_depth;     /* RDMA READs we may have outstanding toward the peer */
};

struct rdma_conn_params {
	uint32_t recv_depth; /* receive buffers (with an SRQ: the credits, for CQ sizing) */
	uint32_t recv_size;
	uint32_t send_depth; /* send buffers */
	uint32_t send_size;
	uint32_t rdma_wrs;   /* send queue room for RDMA READ/WRITE work requests */
	uint64_t pool_bytes; /* grow the data pool by this much (up to its cap) */
	const void *priv;    /* accept private data */
	uint8_t priv_len;
};

struct rdma_conn_ops {
	/* A connection request: call rdma_conn_accept or rdma_conn_reject before returning. */
	void (*request)(struct rdma_conn *c, const struct rdma_conn_req *req);
	void (*established)(struct rdma_conn *c);
	/* A received IU: the upper layer owns b until rdma_conn_repost(c, b). */
	void (*recv)(struct rdma_conn *c, struct rdma_buf *b, uint32_t len);
	/* Send queue room (or a send buffer) came back after an -EAGAIN (or a NULL send_buf). */
	void (*sq_space)(struct rdma_conn *c);
	/* Once, for an accepted connection going down: nothing more can be posted; finish,
	 * then rdma_conn_release(c). */
	void (*down)(struct rdma_conn *c);
	/* Every second, for each accepted connection not yet down (timeouts). */
	void (*tick)(struct rdma_conn *c);
};

#define RDMA_MAX_LISTEN_CFG 8

/* Where own event threads run.  With a software device (rxe) the kernel does a connection's
 * send work inside the thread's doorbell system call and, on one machine, the initiator's
 * completion too, so the CPU a thread runs on decides how many CPUs a command crosses. */
enum rdma_pin {
	RDMA_PIN_OFF,  /* the scheduler's choice */
	RDMA_PIN_ON,   /* thread i on CPU i, modulo the CPUs online */
	/* While its connections carry about one command at a time, a thread runs on the CPU its
	 * busiest connection names (rdma_conn_set_cpu); under load the scheduler places it. */
	RDMA_PIN_AUTO,
};

struct rdma_srv_cfg {
	const char *name; /* for the log: "ib_srpt" */
	struct sockaddr_storage listen[RDMA_MAX_LISTEN_CFG];
	unsigned nlisten;
	unsigned threads; /* event threads, >= 1 */
	unsigned pin;	  /* enum rdma_pin, for own threads */
	/* Run on these `threads` running ut_threads instead of starting our own (NULL: own).
	 * They must outlive rdma_srv_stop. */
	struct ut_thread *const *run_on;
	unsigned poll_us; /* 0: sleep on completion channels; else spin this long when idle */
	bool srq;	  /* one shared receive queue per device and thread */
	uint32_t srq_depth;
	uint32_t srq_buf_size;
	uint32_t pool_chunk; /* data pool chunk, bytes */
	uint64_t pool_max;   /* data pool cap per device and thread, bytes */
	uint32_t max_inline; /* inline send size to ask the device for */
	/* A round's chain with at least this many bytes of RDMA WRITE (data-in) and READ
	 * (data-out) is posted by a sender thread on another CPU than the event thread's; later
	 * chains of the connection follow it there while it has any queued.  0: every chain is
	 * posted inline. */
	uint32_t handoff_bytes;
};

/* Start the threads and the listeners.  With no RDMA device (or no RDMA/CM) the service still
 * starts: it logs it once and keeps trying every few seconds, so a device added later works. */
struct rdma_srv *rdma_srv_start(const struct rdma_srv_cfg *cfg, const struct rdma_conn_ops *ops,
				void *ctx, char *err, size_t errlen);
void *rdma_srv_ctx(const struct rdma_srv *s);
/* No new connections from now on (listeners closed, requests rejected). */
void rdma_srv_close_listeners(struct rdma_srv *s);
/* Run fn(c, arg) on every connection, each on its own thread; returns once all have run. */
void rdma_srv_each_conn(struct rdma_srv *s, void (*fn)(struct rdma_conn *c, void *arg), void *arg);
unsigned rdma_srv_nconns(const struct rdma_srv *s);
/* Wait until no connection is left or timeout_ms passes; true when none is left. */
bool rdma_srv_wait_idle(struct rdma_srv *s, unsigned timeout_ms);
/* Stop the threads and free everything still there (connections are torn down without
 * waiting for the upper layer, which must have drained them already). */
void rdma_srv_stop(struct rdma_srv *s);

/* ---- connection, on its thread ---- */
void rdma_conn_set_priv(struct rdma_conn *c, void *priv);
void *rdma_conn_priv(const struct rdma_conn *c);
struct rdma_srv *rdma_conn_srv(const struct rdma_conn *c);
enum rdma_conn_state rdma_conn_state(const struct rdma_conn *c);
const char *rdma_conn_name(const struct rdma_conn *c); /* "peer-addr:port" for the log */
int rdma_conn_accept(struct rdma_conn *c, const struct rdma_conn_params *p);
void rdma_conn_reject(struct rdma_conn *c, const void *priv, uint8_t priv_len);
struct rdma_buf *rdma_conn_send_buf(struct rdma_conn *c);
void rdma_conn_put_send_buf(struct rdma_conn *c, struct rdma_buf *b); /* unused, back */
/* Post a SEND of b (len bytes); b goes back to the free list when it completes, then
 * op->done (op may be NULL).  0, -EAGAIN (send queue full: wait for sq_space), -ENOTCONN. */
int rdma_conn_send(struct rdma_conn *c, struct rdma_buf *b, uint32_t len, bool solicited,
		   struct rdma_op *op);
/* RDMA WRITE bytes from loc into rem, then SEND b in the same chain (the peer sees the data
 * before the response).  -EINVAL: the transfer does not fit the descriptors. */
int rdma_conn_write_send(struct rdma_conn *c, const struct rdma_rseg *rem, unsigned nrem,
			 const struct rdma_seg *loc, unsigned nloc, uint64_t bytes,
			 struct rdma_buf *b, uint32_t len, bool solicited, struct rdma_op *op);
/* RDMA READ bytes from rem into loc; op->done when all of it arrived. */
int rdma_conn_read(struct rdma_conn *c, const struct rdma_rseg *rem, unsigned nrem,
		   const struct rdma_seg *loc, unsigned nloc, uint64_t bytes, struct rdma_op *op);
void rdma_conn_repost(struct rdma_conn *c, struct rdma_buf *b);
void rdma_conn_disconnect(struct rdma_conn *c);
void rdma_conn_release(struct rdma_conn *c);
struct rdma_pool *rdma_conn_pool(struct rdma_conn *c);
/* The CPU this connection's requests come from, when known (-1: not known); pin auto. */
void rdma_conn_set_cpu(struct rdma_conn *c, int cpu);
/* From any thread: run m->fn on c's thread. */
void rdma_conn_call(struct rdma_conn *c, struct ut_msg *m);

/* ---- helpers (rdma_addr.c, pure) ---- */
/* "ADDR:PORT", "[IPv6]:PORT" or ":PORT"/"PORT" (wildcard).  0 or -1. */
int rdma_parse_addr(const char *s, struct sockaddr_storage *ss);
void rdma_format_addr(const struct sockaddr_storage *ss, char *out, size_t room);

#endif
