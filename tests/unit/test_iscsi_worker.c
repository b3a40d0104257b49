/* Worker threads: messages posted from many threads all arrive, once, in each producer's
 * order; posts from the worker itself run on it; new connections go to the least loaded. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transports/iscsi/iscsi_int.h"

#define PRODUCERS 4
#define PER	  20000

struct tmsg {
	struct ut_msg m;
	int producer;
	int seq;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int last_seq[PRODUCERS];
static int total, out_of_order, wrong_thread;
static struct iscsit_worker *target_w;

static void tmsg_fn(struct ut_msg *m)
{
	struct tmsg *t = (struct tmsg *)m;

	if (!ut_thread_is_current(&target_w->ut))
		wrong_thread++;
	if (t->seq != last_seq[t->producer] + 1)
		out_of_order++;
	last_seq[t->producer] = t->seq;
	free(t);
	pthread_mutex_lock(&mu);
	total++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void *producer(void *arg)
{
	int p = (int)(intptr_t)arg;

	for (int i = 1; i <= PER; i++) {
		struct tmsg *t = malloc(sizeof(*t));

		t->m.fn = tmsg_fn;
		t->producer = p;
		t->seq = i;
		ut_thread_post(&target_w->ut, &t->m);
	}
	return NULL;
}

static bool wait_total(int want)
{
	struct timespec dl;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 20;
	pthread_mutex_lock(&mu);
	while (total < want && pthread_cond_timedwait(&cv, &mu, &dl) == 0)
		;
	ok = total >= want;
	pthread_mutex_unlock(&mu);
	return ok;
}

Test(iscsi_worker, posts_from_many_threads)
{
	struct iscsit_ctx ctx;
	pthread_t th[PRODUCERS];
	char err[128];

	memset(&ctx, 0, sizeof(ctx));
	cr_assert_eq(iscsit_workers_start(&ctx, 2, err, sizeof(err)), 0, "%s", err);
	target_w = &ctx.workers[1];
	for (int p = 0; p < PRODUCERS; p++)
		pthread_create(&th[p], NULL, producer, (void *)(intptr_t)p);
	for (int p = 0; p < PRODUCERS; p++)
		pthread_join(th[p], NULL);
	cr_assert(wait_total(PRODUCERS * PER), "only %d of %d arrived", total, PRODUCERS * PER);
	cr_assert_eq(out_of_order, 0);
	cr_assert_eq(wrong_thread, 0);
	iscsit_workers_stop(&ctx);
	cr_assert_null(ctx.workers);
}

/* A message that posts more messages from the worker thread itself. */
struct chain {
	struct ut_msg m;
	int left;
};

static void chain_fn(struct ut_msg *m)
{
	struct chain *c = (struct chain *)m;

	if (!ut_thread_is_current(&target_w->ut))
		wrong_thread++;
	pthread_mutex_lock(&mu);
	total++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	if (c->left-- > 0)
		ut_thread_post(&target_w->ut, &c->m); /* local queue: same thread */
	else
		free(c);
}

Test(iscsi_worker, local_posts_run_on_the_worker)
{
	struct iscsit_ctx ctx;
	struct chain *c = malloc(sizeof(*c));
	char err[128];

	memset(&ctx, 0, sizeof(ctx));
	total = 0;
	cr_assert_eq(iscsit_workers_start(&ctx, 1, err, sizeof(err)), 0, "%s", err);
	target_w = &ctx.workers[0];
	c->m.fn = chain_fn;
	c->left = 999;
	ut_thread_post(&target_w->ut, &c->m);
	cr_assert(wait_total(1000));
	cr_assert_eq(wrong_thread, 0);
	cr_assert(!ut_thread_is_current(&target_w->ut), "the test thread is not the worker");
	iscsit_workers_stop(&ctx);
}

Test(iscsi_worker, pick_spreads_over_the_least_loaded)
{
	struct iscsit_ctx ctx;
	unsigned count[3] = {0};
	char err[128];

	memset(&ctx, 0, sizeof(ctx));
	cr_assert_eq(iscsit_workers_start(&ctx, 3, err, sizeof(err)), 0, "%s", err);
	/* worker 1 already serves 5 connections: the next 5 go to workers 0 and 2 */
	atomic_store(&ctx.workers[1].nconns, 5);
	for (int i = 0; i < 10; i++)
		count[iscsit_worker_pick(&ctx) - ctx.workers]++;
	cr_assert_eq(count[1], 0, "the busy worker got %u", count[1]);
	cr_assert_eq(count[0], 5);
	cr_assert_eq(count[2], 5);
	cr_assert_eq(atomic_load(&ctx.workers[0].nconns), 5, "a pick counts at once");
	for (unsigned i = 0; i < 3; i++)
		atomic_store(&ctx.workers[i].nconns, 0);
	iscsit_workers_stop(&ctx);
}
