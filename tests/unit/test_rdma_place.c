/* pin auto's decision (transports/rdma/rdma_place.c) and what feeds it: the requests in
 * progress when each receive arrives, counted per connection until the upper layer reposts the
 * receive buffer (rdma_thread_note_recv, rdma_conn_repost).
 *
 * What must hold: one request at a time pins the thread to the busiest connection's CPU (or
 * leaves it free when that CPU is unknown); two or more at a time frees it; in between, and
 * with no receives at all, nothing moves; a thread that polls goes beside the initiator's CPU
 * (the next one), not onto it. */
#include <criterion/criterion.h>
#include <string.h>

#include "transports/rdma/rdma_int.h"

Test(rdma_place, one_at_a_time_goes_to_the_connections_cpu)
{
	cr_assert_eq(rdma_place_cpu(32, 32, 1, -1), 1, "depth 1: on CPU 1");
	cr_assert_eq(rdma_place_cpu(32, 32, 0, 1), 0, "moves to where the requests now come from");
	cr_assert_eq(rdma_place_cpu(32, 40, 1, -1), 1, "mean 1.25 still counts as one at a time");
	cr_assert_eq(rdma_place_cpu(32, 32, -1, 1), -1, "no CPU known: free");
}

Test(rdma_place, two_or_more_at_a_time_frees_it)
{
	cr_assert_eq(rdma_place_cpu(32, 64, 1, 1), -1, "mean 2");
	cr_assert_eq(rdma_place_cpu(32, 32 * 9, 1, 1), -1, "mean 9 (QD16)");
	cr_assert_eq(rdma_place_cpu(32, 64, 1, -1), -1, "free stays free");
}

Test(rdma_place, in_between_and_idle_nothing_moves)
{
	cr_assert_eq(rdma_place_cpu(32, 48, 1, -1), -1, "mean 1.5, free: stays free");
	cr_assert_eq(rdma_place_cpu(32, 48, 0, 1), 1, "mean 1.5, pinned: stays");
	cr_assert_eq(rdma_place_cpu(0, 0, 0, 1), 1, "no receives: no decision");
	cr_assert_eq(rdma_place_cpu(1, 1, CPU_SETSIZE, -1), -1, "a CPU out of range: free");
}

Test(rdma_place, a_polling_thread_goes_beside_the_connections_cpu)
{
	cr_assert_eq(rdma_place_beside(0, 2), 1);
	cr_assert_eq(rdma_place_beside(1, 2), 0, "wraps around");
	cr_assert_eq(rdma_place_beside(2, 4), 3);
	cr_assert_eq(rdma_place_beside(-1, 2), -1, "no CPU known: free");
	cr_assert_eq(rdma_place_beside(0, 1), 0, "one CPU: nowhere else to go");
}

/* The depth sampled at each receive is the connection's requests in progress, itself included,
 * and one more while answers are still in the send queue. */
Test(rdma_place, the_depth_is_counted_from_receive_to_repost)
{
	static struct rdma_srv srv;
	static struct rdma_thread t;
	static struct rdma_conn c;
	struct rdma_buf b = {0};

	srv.cfg.pin = RDMA_PIN_AUTO;
	t.srv = &srv;
	c.srv = &srv;
	c.t = &t;
	c.state = RDMA_CONN_CLOSING; /* reposting goes no further than the count */
	for (int i = 0; i < 3; i++)  /* three arrive before any is answered */
		rdma_thread_note_recv(&c);
	cr_assert_eq(c.held, 3);
	cr_assert_eq(t.win_recvs, 3);
	cr_assert_eq(t.win_depth, 1 + 2 + 3);
	for (int i = 0; i < 3; i++)
		rdma_conn_repost(&c, &b);
	cr_assert_eq(c.held, 0);
	rdma_thread_note_recv(&c); /* then one at a time */
	rdma_conn_repost(&c, &b);
	rdma_thread_note_recv(&c);
	cr_assert_eq(t.win_depth, 6 + 1 + 1);
	cr_assert_eq(c.win_recvs, 5);
	rdma_conn_repost(&c, &b);
	c.sq_used = 2; /* an answer's RDMA WRITE and SEND still going out */
	rdma_thread_note_recv(&c);
	cr_assert_eq(t.win_depth, 8 + 2, "one held, one answer on the wire");
	rdma_conn_repost(&c, &b);
	c.sq_used = 0;

	srv.cfg.pin = RDMA_PIN_OFF;
	memset(&t, 0, sizeof(t));
	t.srv = &srv;
	rdma_thread_note_recv(&c);
	cr_assert_eq(t.win_recvs, 0, "counted for pin auto only");
	cr_assert_eq(c.held, 1, "the count itself is kept");
}
