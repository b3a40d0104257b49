/* Event thread messaging: calls posted from other threads all run, on the target thread, in
 * each sender's order; run_sync returns only after its function ran there. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>

#include "transports/rdma/rdma_int.h"

static const struct rdma_conn_ops OPS;

struct rec {
	struct rdma_msg m;
	int sender, seq;
};

static pthread_t target_tid;
static int last_seq[2];
static atomic_int ran, wrong_thread, out_of_order;

static void rec_fn(struct rdma_msg *m)
{
	struct rec *r = (struct rec *)m;

	if (!pthread_equal(pthread_self(), target_tid))
		atomic_fetch_add(&wrong_thread, 1);
	if (r->seq != last_seq[r->sender] + 1)
		atomic_fetch_add(&out_of_order, 1);
	last_seq[r->sender] = r->seq;
	atomic_fetch_add(&ran, 1);
	free(r);
}

static void who(struct rdma_thread *t, void *arg)
{
	(void)t;
	*(pthread_t *)arg = pthread_self();
}

struct sender {
	struct rdma_thread *t;
	int id;
};

#define N 20000

static void *send_many(void *arg)
{
	struct sender *s = arg;

	for (int i = 1; i <= N; i++) {
		struct rec *r = malloc(sizeof(*r));
		r->m.fn = rec_fn;
		r->sender = s->id;
		r->seq = i;
		rdma_thread_post(s->t, &r->m);
	}
	return NULL;
}

static void nothing(struct rdma_thread *t, void *arg)
{
	(void)t;
	(void)arg;
}

Test(rdma_thread, cross_thread_messages)
{
	struct rdma_srv_cfg cfg = {
	    .name = "test", .threads = 2, .pool_chunk = 4096, .pool_max = 4096};
	char err[64];
	struct rdma_srv *s = rdma_srv_start(&cfg, &OPS, NULL, err, sizeof(err));
	struct sender a, b;
	pthread_t ta, tb;

	cr_assert_not_null(s);
	rdma_thread_run_sync(&s->threads[1], who, &target_tid);
	cr_assert_not(pthread_equal(target_tid, pthread_self()));
	a = (struct sender){&s->threads[1], 0};
	b = (struct sender){&s->threads[1], 1};
	pthread_create(&ta, NULL, send_many, &a);
	pthread_create(&tb, NULL, send_many, &b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	/* a sync call queued after all of them returns after they ran */
	rdma_thread_run_sync(&s->threads[1], nothing, NULL);
	cr_assert_eq(atomic_load(&ran), 2 * N);
	cr_assert_eq(atomic_load(&wrong_thread), 0);
	cr_assert_eq(atomic_load(&out_of_order), 0);
	rdma_srv_stop(s);
}
