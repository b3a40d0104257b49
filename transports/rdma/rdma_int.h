/* Internals of the verbs layer shared by its files: threads, devices, connections. */
#ifndef UTGT_RDMA_INT_H
#define UTGT_RDMA_INT_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <sched.h>
#include <rdma/rdma_cma.h>
#include <stdatomic.h>

#include "common/ut_thread.h"

#include "transports/rdma/rdma.h"
#include "transports/rdma/rdma_pool.h"
#include "transports/rdma/rdma_rw.h"

#define RDMA_MAX_LISTEN RDMA_MAX_LISTEN_CFG
#define RDMA_CQ_BATCH	16
/* SQEs of an own event thread's io_uring: a full ring sends file I/O to the shared one */
#define RDMA_THREAD_RING_ENTRIES 256

/* Work request ids: a receive carries its buffer with the low bit set, a signaled send its
 * rdma_op, an unsignaled one 0.  The completion's opcode cannot tell them apart: it is not
 * valid in completions with an error (flushed ones included). */
#define RDMA_WRID_RECV 1u
static inline uint64_t rdma_wrid_recv(const struct rdma_buf *b)
{
	return (uintptr_t)b | RDMA_WRID_RECV;
}
static inline bool rdma_wrid_is_recv(uint64_t id)
{
	return id & RDMA_WRID_RECV;
}
static inline struct rdma_buf *rdma_wrid_buf(uint64_t id)
{
	return (struct rdma_buf *)(uintptr_t)(id & ~(uint64_t)RDMA_WRID_RECV);
}

struct rdma_srq {
	struct ibv_srq *srq;
	struct rdma_dev *dev;
	uint8_t *mem;
	struct ibv_mr *mr;
	struct rdma_buf *bufs;
	uint32_t depth, size;
};

/* One verbs device as one thread uses it. */
struct rdma_dev {
	struct rdma_thread *t;
	struct ibv_context *verbs;
	struct ibv_device_attr attr;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ut_watch watch; /* its completion channel */
	struct rdma_pool *pool;
	struct rdma_srq *srq;
	unsigned nconns;
	unsigned busy; /* draining its completion channel: destroy later */
	bool removing;
	char name[64];
	struct rdma_dev *next;
};

/* One of a connection's completion queues.  Receives and sends have their own, so that each
 * is armed (an event requested) only when the loop would otherwise wait for a completion it
 * cannot see: receives while the connection can receive, sends while something is in flight
 * at the end of a round.  A send that completes while the loop is still awake (with rxe, the
 * kernel completes it inside the doorbell system call) then costs no event and no wake-up. */
struct rdma_cq {
	struct ibv_cq *cq;
	unsigned unacked; /* events read, not yet acknowledged */
	bool armed;	  /* notification requested, no event read since */
	uint64_t arms;	  /* requests made (counter) */
};

/* Work requests posted during a loop round wait here and reach the device as one chain, one
 * ibv_post_send (one doorbell) per connection and round (rdma_conn_flush, at the end of the
 * round and whenever the connection's queues are polled).  With rxe the doorbell system call
 * carries out what was posted (up to 1,024 packets; the rest from a tasklet on the same CPU),
 * so a round's responses go out together and the initiator's side completes them together.  Order
 * is kept: each operation's RDMA READs or WRITEs are followed by its SEND, and operations follow
 * one another as they were posted.  Full, it is flushed before the next operation goes in. */
#define RDMA_STAGE_WR  RDMA_RW_MAX_WR
#define RDMA_STAGE_SGE RDMA_RW_MAX_SGE
struct rdma_stage {
	struct ibv_send_wr wr[RDMA_STAGE_WR];
	struct ibv_sge sge[RDMA_STAGE_SGE];
	unsigned nwr, nsge;
	uint64_t data_bytes; /* RDMA WRITE and READ data in it (cfg.handoff_bytes) */
};

/* A chain handed to a sender thread (rdma_sender.c): copies of the stage's work requests and
 * SGEs.  The operations they carry stay the connection's (sq_used counts them); only the
 * ibv_post_send moves. */
struct rdma_post {
	struct rdma_post *next;
	struct rdma_conn *c;
	struct ibv_send_wr *bad; /* the device refused from here on (NULL: not posted) */
	int err;
	unsigned nwr;
	struct ibv_send_wr wr[]; /* then the SGEs */
};

/* One thread that only posts handed-off chains, pinned to one CPU.  With rxe the post's system
 * call sends the first 1,024 packets and schedules the rest as a tasklet on the caller's CPU,
 * and the peer answers an RDMA READ in a tasklet on that CPU too (its read responses, and our
 * side's copy of them, are most of a large WRITE's work): a connection that always posts from
 * its own sender has that work on the sender's CPU, not on its event thread's, and
 * connections spread over the senders use every CPU, wherever the scheduler puts their event
 * threads (docs/performance.md, "Fifth round" and "Eighth round"). */
struct rdma_sender {
	struct rdma_srv *srv;
	unsigned idx;
	int cpu; /* the one it is pinned to */
	pthread_t thr;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cv;		 /* work queued, a post finished, stop */
	struct rdma_post *head, *tail;	 /* queued, in posting order */
	struct rdma_post *failed;	 /* refused by the device, oldest first */
	const struct rdma_conn *posting; /* in ibv_post_send now */
	atomic_uint nconns;		 /* connections it posts for (rdma_sender_pick) */
	bool stop;
	uint64_t posts; /* counter */
};

struct rdma_conn {
	struct rdma_srv *srv;
	struct rdma_thread *t;
	struct rdma_dev *dev;
	struct rdma_cm_id *id;
	struct rdma_cq rcq, scq; /* receive and send completions */
	struct ibv_qp *qp;
	enum rdma_conn_state state;
	bool upper_knows; /* accepted: the upper layer gets down() */
	bool down_notified;
	bool released;	    /* the upper layer is done with it */
	bool want_sq_space; /* a post got -EAGAIN */
	unsigned busy;	    /* inside a callback loop: free later */
	uint32_t sq_depth, sq_used;
	uint32_t rq_posted;
	uint32_t max_inline, max_sge;
	uint8_t *iu_mem;
	size_t iu_len;
	struct ibv_mr *iu_mr;
	struct rdma_buf *bufs;
	unsigned nbufs;
	struct rdma_buf *send_free;
	void *priv;
	char name[64];
	int cpu_hint;  /* rdma_conn_set_cpu, -1 */
	unsigned held; /* received IUs the upper layer has not reposted: requests in progress */
	unsigned win_recvs; /* receives in the thread's placement window */
	struct rdma_stage stage;
	/* chains of this connection queued on (or being posted by, or refused by) ho_sender: while
	 * there are any, every later chain goes there too, so the send queue keeps their order;
	 * ho_sender is the connection's for its lifetime once given */
	atomic_uint ho_pending;
	struct rdma_sender *ho_sender;
	uint64_t doorbells, wrs_posted, handoffs; /* counters */
	struct rdma_conn *prev, *next;		  /* thread's list */
	/* the connection request, until the upper layer has seen it */
	struct rdma_conn_req req;
	uint8_t req_priv[256];
	struct ut_msg req_msg;
};

/* The service's state on one ut_thread. */
struct rdma_thread {
	struct rdma_srv *srv;
	unsigned idx;
	struct ut_thread *ut; /* the loop it runs on: own, or lent (cfg.run_on) */
	struct ut_thread own;
	bool own_inited, attached;
	struct ut_watch cm_watch;
	struct ut_timer tick;
	struct ut_poller poller;
	uint64_t last_comp_us; /* poll_us: when a completion queue last had work */
	/* pin auto: receives in the window and the sum of the requests in progress at each */
	unsigned win_recvs, win_depth;
	int placed_cpu;	    /* the CPU the thread is pinned to now, -1: free */
	cpu_set_t free_set; /* its affinity when free (the process's at start) */
	uint64_t moves;	    /* placement changes (counter) */
	struct rdma_event_channel *cm;
	struct rdma_dev *devs;
	struct rdma_conn *conns;
	unsigned nconns;
	/* thread 0: the listeners */
	struct rdma_cm_id *listen_id[RDMA_MAX_LISTEN];
	int listen_err[RDMA_MAX_LISTEN]; /* last errno logged for it */
	bool no_cm_logged;
	/* a sender's post for one of its connections failed (rdma_sender_failed) */
	struct ut_msg ho_msg;
	atomic_bool ho_msg_posted;
};

struct rdma_srv {
	struct rdma_srv_cfg cfg;
	const struct rdma_conn_ops *ops;
	void *ctx;
	struct rdma_thread *threads;
	unsigned nthreads;
	atomic_uint nconns;
	atomic_bool closing;
	struct rdma_sender *senders; /* one per CPU with cfg.handoff_bytes, else NULL */
	unsigned nsenders;
	pthread_mutex_t lock;
	pthread_cond_t cv;
};

void rdma_log(const struct rdma_srv *s, int prio, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* rdma_thread.c */
/* Run fn(arg) on t's loop and wait for it. */
void rdma_thread_call_sync(struct rdma_thread *t, void (*fn)(void *arg), void *arg);
/* Set up t on its loop (own or lent) and start it.  0 or -errno. */
int rdma_thread_start(struct rdma_thread *t, struct ut_thread *lent);
/* On t's loop, as the last act of the service there: the watches, timer and poller go. */
void rdma_thread_detach(struct rdma_thread *t);
/* After rdma_thread_detach: stop and free an own loop (a lent one keeps running). */
void rdma_thread_stop(struct rdma_thread *t);
/* A completion channel of t fired (poll_us: keep spinning a while). */
void rdma_thread_comp_seen(struct rdma_thread *t);
/* A receive of c goes to the upper layer (pin auto counts the requests in progress: receive
 * buffers held, plus one while answers are still in the send queue). */
void rdma_thread_note_recv(struct rdma_conn *c);

/* rdma_place.c: pin auto's decision, pure.  After a window of `recvs` receives with `depth`
 * the sum of the requests in progress at each, the CPU a thread pinned to `cur` (-1: free)
 * should be on: `hint` (the busiest connection's CPU, -1 none) while about one request is in
 * progress at a time, free (-1) from two on, unchanged in between. */
#define RDMA_PLACE_WINDOW 32 /* receives per decision (or the 1 s tick, whichever first) */
int rdma_place_cpu(unsigned recvs, unsigned depth, int hint, int cur);
int rdma_place_beside(int cpu, long ncpus);

/* rdma_sender.c: posting chains from a thread on another CPU (cfg.handoff_bytes) */
/* One sender per CPU the process may run on, each pinned to its CPU (none with fewer than
 * two).  0 or -errno; rdma_senders_stop undoes a partial start. */
int rdma_senders_start(struct rdma_srv *s);
void rdma_senders_stop(struct rdma_srv *s); /* no connection may be left */
/* c's sender: the one it was given at its first hand-off, for its lifetime (its chains stay in
 * order); the first time, the one with the fewest connections.  NULL: post inline. */
struct rdma_sender *rdma_sender_pick(struct rdma_conn *c);
void rdma_sender_conn_gone(struct rdma_conn *c); /* c is freed: its sender has one fewer */
/* Queue the chain wr (nwr work requests, next-linked, SGEs anywhere) on s for c.  The copies
 * are s's; the caller may reuse wr at once.  -ENOMEM: nothing queued, post it inline. */
int rdma_sender_queue(struct rdma_sender *s, struct rdma_conn *c, const struct ibv_send_wr *wr,
		      unsigned nwr);
/* On c's thread: c's chains that were queued and not yet posted, or refused, taken back in
 * order (after waiting for one being posted now); none of c's is left with its sender after. */
struct rdma_post *rdma_sender_take_back(struct rdma_conn *c);
/* On t's loop: a post for one of its connections failed; each such connection goes down and
 * its chains come back (rdma_conn_handoff_fail). */
void rdma_sender_failed(struct ut_msg *m);

/* rdma_dev.c */
struct rdma_dev *rdma_dev_get(struct rdma_thread *t, struct ibv_context *verbs);
void rdma_dev_put(struct rdma_dev *d); /* a connection left it */
void rdma_dev_destroy(struct rdma_dev *d);
void rdma_dev_comp_event(struct rdma_dev *d);
void rdma_srq_repost(struct rdma_srq *q, struct rdma_buf *b);

/* rdma_cq.c: completion queues, polling and arming */
/* Both queues, on device d's completion channel (cqe entries each); the receive queue armed. */
int rdma_cq_create(struct rdma_conn *c, struct rdma_dev *d, int send_cqe, int recv_cqe);
void rdma_cq_destroy(struct rdma_conn *c); /* receives of an SRQ go back to it */
bool rdma_conn_poll(struct rdma_conn *c);  /* both queues dry; true when something completed */
/* An event of cq was read from the completion channel: it is no longer armed; poll. */
void rdma_conn_cq_event(struct rdma_conn *c, struct ibv_cq *cq);
/* End of a loop round: poll, arm each queue a completion still has to come to, poll again
 * (a completion queued before the request raises no event).  True when the second poll
 * found work (the loop should not sleep yet).  arm false: poll only (poll_us spinning). */
bool rdma_conn_settle(struct rdma_conn *c, bool arm);

/* rdma_conn.c */
/* Post what the round staged, in one chain.  On a failed post the connection goes down and
 * every operation with a work request the device did not take completes as failed. */
void rdma_conn_flush(struct rdma_conn *c);
/* Every chain of c that went to a sender and was not posted: its operations fail. */
void rdma_conn_handoff_fail(struct rdma_conn *c);
/* op is over: its send queue room and send buffer come back, then op->done(ok). */
void rdma_op_finish(struct rdma_conn *c, struct rdma_op *op, bool ok);
struct rdma_conn *rdma_conn_new(struct rdma_srv *s, struct rdma_cm_id *id,
				const struct rdma_cm_event *ev);
void rdma_conn_attach(struct rdma_thread *t, struct rdma_conn *c);
void rdma_conn_go_down(struct rdma_conn *c, const char *why);
void rdma_conn_established(struct rdma_conn *c);
void rdma_conn_maybe_free(struct rdma_conn *c);
void rdma_conn_force_free(struct rdma_conn *c);

/* rdma_cm.c */
void rdma_cm_events(struct rdma_thread *t);
void rdma_cm_tick(struct rdma_thread *t);
void rdma_cm_close_listeners(struct rdma_thread *t);

#endif
