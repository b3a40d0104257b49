/* A ut_thread's own io_uring: done() runs on the thread, everything queued in one round goes
 * to the kernel in one submit, completions that come later wake the loop through the ring's
 * fd, and a loop that ends waits for what is still in flight. */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "common/ut_ring.h"

static struct ut_thread T;
static atomic_int done_n, wrong_thread;
static int last_res;

struct op {
	struct ut_ring_op op;
	char buf[8];
};

static void op_done(struct ut_ring_op *o, int res)
{
	if (!ut_thread_is_current(&T))
		atomic_fetch_add(&wrong_thread, 1);
	last_res = res;
	atomic_fetch_add(&done_n, 1);
	(void)o;
}

static void setup(void)
{
	atomic_store(&done_n, 0);
	atomic_store(&wrong_thread, 0);
	cr_assert_eq(ut_thread_init(&T, "ring"), 0);
	if (ut_ring_attach(&T, 16))
		cr_skip_test("no io_uring here");
	cr_assert_eq(ut_thread_start(&T, -1), 0);
}

static void teardown(void)
{
	ut_thread_join(&T);
	ut_thread_fini(&T);
}

static bool wait_done(int n)
{
	for (int i = 0; i < 20000 && atomic_load(&done_n) < n; i++)
		usleep(1000);
	return atomic_load(&done_n) >= n;
}

static struct op nops[8];

static void queue_nops(void *arg)
{
	struct ut_ring *r = ut_ring_current();

	(void)arg;
	cr_assert_eq(r, T.ring);
	for (int i = 0; i < 8; i++) {
		struct io_uring_sqe *sqe = ut_ring_get_sqe(r);

		cr_assert_not_null(sqe);
		io_uring_prep_nop(sqe);
		nops[i].op.done = op_done;
		ut_ring_queue(r, sqe, &nops[i].op);
	}
}

static uint64_t submits_seen;

static void read_submits(void *arg)
{
	(void)arg;
	submits_seen = T.ring->submits;
}

Test(ut_ring, one_submit_per_round_done_on_the_thread, .init = setup, .fini = teardown)
{
	ut_thread_call_sync(&T, read_submits, NULL);
	uint64_t before = submits_seen;

	ut_thread_call_sync(&T, queue_nops, NULL);
	cr_assert(wait_done(8), "completions did not come back");
	ut_thread_call_sync(&T, read_submits, NULL);
	cr_assert_eq(submits_seen - before, 1, "8 SQEs of one round in %llu submits",
		     (unsigned long long)(submits_seen - before));
	cr_assert_eq(atomic_load(&wrong_thread), 0);
	cr_assert_eq(T.ring->inflight, 0);
	cr_assert_null(ut_ring_current(), "the test thread has no ring");
}

static int pfd[2];
static struct op rd;

static void queue_pipe_read(void *arg)
{
	struct ut_ring *r = ut_ring_current();
	struct io_uring_sqe *sqe = ut_ring_get_sqe(r);

	(void)arg;
	io_uring_prep_read(sqe, pfd[0], rd.buf, sizeof(rd.buf), 0);
	rd.op.done = op_done;
	ut_ring_queue(r, sqe, &rd.op);
}

Test(ut_ring, a_late_completion_wakes_the_loop, .init = setup, .fini = teardown)
{
	cr_assert_eq(pipe(pfd), 0);
	ut_thread_call_sync(&T, queue_pipe_read, NULL);
	cr_assert_eq(atomic_load(&done_n), 0, "nothing to read yet");
	/* the loop sleeps in epoll_wait now: only the ring's fd can wake it */
	cr_assert_eq(write(pfd[1], "abc", 3), 3);
	cr_assert(wait_done(1), "the completion did not wake the loop");
	cr_assert_eq(last_res, 3);
	cr_assert_eq(memcmp(rd.buf, "abc", 3), 0);
	close(pfd[0]);
	close(pfd[1]);
}

static void *write_later(void *arg)
{
	(void)arg;
	usleep(50000);
	if (write(pfd[1], "x", 1) != 1)
		abort();
	return NULL;
}

Test(ut_ring, a_loop_that_ends_waits_for_its_io, .init = setup)
{
	pthread_t th;

	cr_assert_eq(pipe(pfd), 0);
	ut_thread_call_sync(&T, queue_pipe_read, NULL);
	/* Whether the write lands before or after the loop ends, the read completes on T
	 * before the join returns. */
	pthread_create(&th, NULL, write_later, NULL);
	ut_thread_join(&T);
	cr_assert_eq(atomic_load(&done_n), 1, "the read in flight was reaped before the end");
	cr_assert_eq(atomic_load(&wrong_thread), 0);
	pthread_join(th, NULL);
	ut_thread_fini(&T);
	close(pfd[0]);
	close(pfd[1]);
}
