/* A ut_thread's own io_uring (common/ut_ring.h). */
#include "common/ut_ring.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/epoll.h>

#define REAP_BATCH 32
#define FLUSH_PASSES 4 /* submit/reap passes per flush while done() queues more */

struct ut_ring *ut_ring_current(void)
{
	struct ut_thread *t = ut_thread_current();

	return t ? t->ring : NULL;
}

/* Run the completions already posted; the count. */
static unsigned reap(struct ut_ring *r)
{
	unsigned total = 0;

	for (;;) {
		struct ut_ring_op *ops[REAP_BATCH];
		int res[REAP_BATCH];
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;

		io_uring_for_each_cqe(&r->ring, head, cqe)
		{
			ops[n] = io_uring_cqe_get_data(cqe);
			res[n] = cqe->res;
			if (++n == REAP_BATCH)
				break;
		}
		if (!n)
			return total;
		/* CQ slots back before the callbacks, which may queue more */
		io_uring_cq_advance(&r->ring, n);
		r->inflight -= n;
		r->reaped += n;
		for (unsigned i = 0; i < n; i++)
			ops[i]->done(ops[i], res[i]);
		total += n;
	}
}

static void ring_ready(struct ut_watch *w, uint32_t events)
{
	struct ut_ring *r = (struct ut_ring *)((char *)w - offsetof(struct ut_ring, watch));

	(void)events;
	reap(r);
}

int ut_ring_attach(struct ut_thread *t, unsigned entries)
{
	struct ut_ring *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return -ENOMEM;
	ret = io_uring_queue_init(entries, &r->ring, 0);
	if (ret < 0) {
		free(r);
		return ret;
	}
	r->cap = r->ring.cq.ring_entries;
	r->watch.fn = ring_ready;
	r->watch.fd = r->ring.ring_fd;
	ret = ut_thread_watch(t, &r->watch, EPOLLIN);
	if (ret) {
		io_uring_queue_exit(&r->ring);
		free(r);
		return ret;
	}
	t->ring = r;
	return 0;
}

static void submit(struct ut_ring *r)
{
	int ret;

	do
		ret = io_uring_submit(&r->ring);
	while (ret == -EINTR);
	/* Anything else (EAGAIN, EBUSY: the kernel is short of memory) stays queued for the
	 * next flush; flush reports work so the loop comes back without sleeping. */
	if (ret >= 0) {
		r->unsubmitted = 0;
		r->submits++;
	}
}

struct io_uring_sqe *ut_ring_get_sqe(struct ut_ring *r)
{
	struct io_uring_sqe *sqe;

	if (r->inflight >= r->cap)
		return NULL;
	sqe = io_uring_get_sqe(&r->ring);
	if (!sqe) {
		submit(r); /* SQ full of this round's work: make room */
		sqe = io_uring_get_sqe(&r->ring);
	}
	return sqe;
}

void ut_ring_queue(struct ut_ring *r, struct io_uring_sqe *sqe, struct ut_ring_op *op)
{
	io_uring_sqe_set_data(sqe, op);
	r->inflight++;
	r->unsubmitted++;
}

bool ut_ring_flush(struct ut_ring *r)
{
	bool ran = false;

	for (unsigned pass = 0; pass < FLUSH_PASSES; pass++) {
		if (r->unsubmitted)
			submit(r);
		if (!reap(r))
			break;
		ran = true;
		if (!r->unsubmitted)
			break;
	}
	return ran || r->unsubmitted;
}

void ut_ring_quiesce(struct ut_ring *r)
{
	while (r->inflight) {
		struct io_uring_cqe *cqe;
		int ret;

		ut_ring_flush(r);
		if (!r->inflight)
			return;
		ret = io_uring_wait_cqe(&r->ring, &cqe);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN)
			return; /* the ring failed: nothing more will come */
	}
}

void ut_ring_free(struct ut_ring *r)
{
	if (!r)
		return;
	io_uring_queue_exit(&r->ring);
	free(r);
}
