/* An io_uring owned by one ut_thread, so that I/O a thread starts also completes on it: no
 * completion thread, no hand-off back, and one io_uring_enter() for everything the thread
 * queued in a round of its loop.
 *
 * The thread's loop drives the ring (common/ut_thread.c): SQEs queued during a round are
 * submitted after the round's fd callbacks and messages, and again before the loop waits;
 * completions already posted are reaped at those two points without a system call, and the
 * ring's fd is in the thread's epoll set, so completions that come later wake it.  Each SQE
 * carries a struct ut_ring_op whose done() runs on the thread with the CQE's result.  When
 * the loop ends it waits for the SQEs still in flight and runs their done() before returning.
 *
 * Only the owning thread touches its ring.  A thread without one (or a full ring) leaves the
 * caller to its own fallback. */
#ifndef UTGT_COMMON_UT_RING_H
#define UTGT_COMMON_UT_RING_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/ut_thread.h"

struct ut_ring_op {
	void (*done)(struct ut_ring_op *op, int res);
};

struct ut_ring {
	struct io_uring ring;
	struct ut_watch watch; /* the ring's fd: readable while CQEs wait */
	unsigned cap;	       /* most SQEs in flight: the CQ never overflows */
	unsigned inflight;     /* queued and not yet reaped */
	unsigned unsubmitted;  /* queued and not yet given to the kernel */
	/* counters, read by the owner */
	uint64_t submits, reaped;
};

/* Give t a ring of `entries` SQEs (before it runs, or on it).  0 or -errno (no io_uring:
 * the thread simply has none). */
int ut_ring_attach(struct ut_thread *t, unsigned entries);
/* The calling thread's ring, or NULL. */
struct ut_ring *ut_ring_current(void);
/* A free SQE, or NULL when the ring is full (the caller falls back). */
struct io_uring_sqe *ut_ring_get_sqe(struct ut_ring *r);
/* The SQE from ut_ring_get_sqe, prepared: op->done(op, res) runs on the thread when it
 * completes (never before this returns). */
void ut_ring_queue(struct ut_ring *r, struct io_uring_sqe *sqe, struct ut_ring_op *op);
/* Submit what is queued, then run the completions already posted.  True when a done() ran
 * (it may have queued more work for the thread).  Called by the thread's loop. */
bool ut_ring_flush(struct ut_ring *r);
/* Wait for every SQE in flight and run its done() (the loop, as it ends). */
void ut_ring_quiesce(struct ut_ring *r);
/* Release the ring (ut_thread_fini; the thread no longer runs). */
void ut_ring_free(struct ut_ring *r);

#endif
