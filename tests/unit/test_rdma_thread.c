/* The verbs layer's event threads: a service on its own threads runs each thread's work there,
 * each with an io_uring of its own (file I/O a command starts completes on the thread that
 * answers it); a service on threads lent by the upper layer runs on exactly those, gives them
 * no ring, and stopping it leaves them running (their owner stops them). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/ut_ring.h"
#include "transports/rdma/rdma_int.h"

static const struct rdma_conn_ops OPS;

static void whoami(void *arg)
{
	*(struct ut_thread **)arg = ut_thread_current();
}

static void which_ring(void *arg)
{
	*(struct ut_ring **)arg = ut_ring_current();
}

Test(rdma_thread, own_threads)
{
	struct rdma_srv_cfg cfg = {
	    .name = "test", .threads = 2, .pin = true, .pool_chunk = 4096, .pool_max = 4096};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char err[64];
	struct rdma_srv *s = rdma_srv_start(&cfg, &OPS, NULL, err, sizeof(err));
	struct ut_thread *seen0 = NULL, *seen1 = NULL;

	cr_assert_not_null(s, "%s", err);
	rdma_thread_call_sync(&s->threads[0], whoami, &seen0);
	rdma_thread_call_sync(&s->threads[1], whoami, &seen1);
	cr_assert_eq(seen0, &s->threads[0].own);
	cr_assert_eq(seen1, &s->threads[1].own);
	cr_assert(s->threads[1].attached, "timer and poller are on the loop");
	for (int i = 0; i < 2; i++) {
		struct ut_ring *r = NULL;

		rdma_thread_call_sync(&s->threads[i], which_ring, &r);
		cr_assert_not_null(r, "thread %d has a ring of its own", i);
		cr_assert_eq(r, s->threads[i].own.ring);
		cr_assert_eq(s->threads[i].own.cpu, i % ncpu, "thread %d pinned to its CPU", i);
	}
	rdma_srv_stop(s);
}

static int counter_ran;
static void bump(void *arg)
{
	(void)arg;
	counter_ran++;
}

Test(rdma_thread, lent_threads_are_used_and_left_running)
{
	struct ut_thread lent[2];
	struct ut_thread *run_on[2] = {&lent[0], &lent[1]};
	struct rdma_srv_cfg cfg = {
	    .name = "test", .threads = 2, .run_on = run_on, .pool_chunk = 4096, .pool_max = 4096};
	char err[64];
	struct rdma_srv *s;
	struct ut_thread *seen = NULL;

	for (int i = 0; i < 2; i++) {
		cr_assert_eq(ut_thread_init(&lent[i], "lent"), 0);
		cr_assert_eq(ut_thread_start(&lent[i], -1), 0);
	}
	s = rdma_srv_start(&cfg, &OPS, NULL, err, sizeof(err));
	cr_assert_not_null(s, "%s", err);
	rdma_thread_call_sync(&s->threads[1], whoami, &seen);
	cr_assert_eq(seen, &lent[1]);
	cr_assert_not(s->threads[1].own_inited, "no thread of its own");
	cr_assert_null(lent[1].ring, "a lent loop keeps what its owner gave it");
	/* the lent loop carries the service's timer and poller */
	cr_assert_not_null(lent[1].timers);
	cr_assert_not_null(lent[1].pollers);
	rdma_srv_stop(s);
	/* gone from the loops, which still run */
	cr_assert_null(lent[1].timers);
	cr_assert_null(lent[1].pollers);
	ut_thread_call_sync(&lent[1], bump, NULL);
	cr_assert_eq(counter_ran, 1);
	for (int i = 0; i < 2; i++) {
		ut_thread_join(&lent[i]);
		ut_thread_fini(&lent[i]);
	}
}
