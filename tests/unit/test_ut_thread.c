/* The thread runtime: messages from many threads arrive once, on the thread, in each sender's
 * order; posts from the thread itself run in the same round; call_sync waits for its function;
 * fd callbacks, hang-ups before other events of a batch, timers and pollers. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/ut_thread.h"

#define SENDERS 4
#define PER	20000

struct rec {
	struct ut_msg m;
	int sender, seq;
};

static struct ut_thread T;
static int last_seq[SENDERS];
static atomic_int ran, wrong_thread, out_of_order;

static void rec_fn(struct ut_msg *m)
{
	struct rec *r = (struct rec *)m;

	if (!ut_thread_is_current(&T))
		atomic_fetch_add(&wrong_thread, 1);
	if (r->seq != last_seq[r->sender] + 1)
		atomic_fetch_add(&out_of_order, 1);
	last_seq[r->sender] = r->seq;
	atomic_fetch_add(&ran, 1);
	free(r);
}

static void *send_many(void *arg)
{
	int id = (int)(intptr_t)arg;

	for (int i = 1; i <= PER; i++) {
		struct rec *r = malloc(sizeof(*r));

		r->m.fn = rec_fn;
		r->sender = id;
		r->seq = i;
		ut_thread_post(&T, &r->m);
	}
	return NULL;
}

static void nothing(void *arg)
{
	(void)arg;
}

static void start_T(const char *name, unsigned poll_us)
{
	memset(last_seq, 0, sizeof(last_seq));
	atomic_store(&ran, 0);
	atomic_store(&wrong_thread, 0);
	atomic_store(&out_of_order, 0);
	cr_assert_eq(ut_thread_init(&T, name), 0);
	ut_thread_set_poll(&T, poll_us);
	cr_assert_eq(ut_thread_start(&T, -1), 0);
}

static void setup(void)
{
	start_T("t-test", 0);
}

static void teardown(void)
{
	ut_thread_join(&T);
	ut_thread_fini(&T);
}

/* SENDERS threads post PER messages each; all run on T, in each sender's order. */
static void messages_from_all_senders(void)
{
	pthread_t th[SENDERS];

	for (int i = 0; i < SENDERS; i++)
		pthread_create(&th[i], NULL, send_many, (void *)(intptr_t)i);
	for (int i = 0; i < SENDERS; i++)
		pthread_join(th[i], NULL);
	/* a synchronous call queued after every message returns after they all ran */
	ut_thread_call_sync(&T, nothing, NULL);
	cr_assert_eq(atomic_load(&ran), SENDERS * PER);
	cr_assert_eq(atomic_load(&wrong_thread), 0);
	cr_assert_eq(atomic_load(&out_of_order), 0);
}

Test(ut_thread, messages_from_many_threads, .init = setup, .fini = teardown)
{
	messages_from_all_senders();
}

/* A message posted by a message of the same thread runs before the round ends: no wakeup,
 * no sleep between them. */
struct chain {
	struct ut_msg m;
	int left;
	uint64_t round0;
	bool same_round;
};

static void chain_fn(struct ut_msg *m)
{
	struct chain *c = (struct chain *)m;

	if (!ut_thread_is_current(&T))
		atomic_fetch_add(&wrong_thread, 1);
	if (c->left == 1000)
		c->round0 = T.rounds;
	if (--c->left > 0) {
		ut_thread_post(&T, &c->m);
		return;
	}
	c->same_round = T.rounds == c->round0;
	atomic_fetch_add(&ran, 1);
}

Test(ut_thread, local_posts_run_in_the_same_round, .init = setup, .fini = teardown)
{
	struct chain c = {.m.fn = chain_fn, .left = 1000};

	ut_thread_post(&T, &c.m);
	/* the first call may run between the chain's first step and its local reposts (which
	 * follow the inbox batch they came from); the second is queued behind all of them */
	ut_thread_call_sync(&T, nothing, NULL);
	ut_thread_call_sync(&T, nothing, NULL);
	cr_assert_eq(atomic_load(&ran), 1);
	cr_assert(c.same_round, "999 local reposts spread over several rounds");
	cr_assert_eq(atomic_load(&wrong_thread), 0);
}

static void whoami(void *arg)
{
	*(struct ut_thread **)arg = ut_thread_current();
}

Test(ut_thread, call_sync_runs_on_the_thread, .init = setup, .fini = teardown)
{
	struct ut_thread *seen = NULL;

	ut_thread_call_sync(&T, whoami, &seen);
	cr_assert_eq(seen, &T);
	cr_assert_null(ut_thread_current(), "the test thread is no ut_thread");
}

/* ---- fds: a socketpair whose far end the test writes and closes ---- */
struct fdrec {
	struct ut_watch w;
	int order[8];
	uint32_t ev[8];
	int n;
	int id;
	int *log;
	int *nlog;
};

static int order_log[16], norder;

static void fd_ready(struct ut_watch *w, uint32_t events)
{
	struct fdrec *r = (struct fdrec *)w;
	char buf[64];

	if (r->n < 8)
		r->ev[r->n++] = events;
	order_log[norder++ % 16] = r->id;
	if (events & EPOLLIN)
		while (read(w->fd, buf, sizeof(buf)) > 0)
			;
	if (events & (EPOLLHUP | EPOLLRDHUP))
		ut_thread_unwatch(ut_thread_current(), w);
}

/* The loop, run on the calling thread, handles both fds of one batch with the hang-up
 * first, then stops from a poller. */
static bool stop_after_one(struct ut_poller *p)
{
	(void)p;
	ut_thread_stop(ut_thread_current());
	return false;
}

Test(ut_thread, run_on_caller_hangup_first)
{
	struct fdrec a = {.id = 1}, b = {.id = 2};
	struct ut_poller stopper = {.fn = stop_after_one};
	int pa[2], pb[2];

	cr_assert_eq(ut_thread_init(&T, "t-hup"), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pa), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pb), 0);
	a.w = (struct ut_watch){.fn = fd_ready, .fd = pa[0]};
	b.w = (struct ut_watch){.fn = fd_ready, .fd = pb[0]};
	cr_assert_eq(ut_thread_watch(&T, &a.w, EPOLLIN | EPOLLRDHUP), 0);
	cr_assert_eq(ut_thread_watch(&T, &b.w, EPOLLIN | EPOLLRDHUP), 0);
	cr_assert_eq(write(pa[1], "x", 1), 1);
	close(pb[1]);
	ut_thread_add_poller(&T, &stopper);
	norder = 0;
	ut_thread_run(&T);
	cr_assert_eq(norder, 2, "both fds handled in the one round (%d)", norder);
	cr_assert_eq(order_log[0], 2, "the hang-up ran first");
	cr_assert_eq(order_log[1], 1);
	cr_assert(b.ev[0] & EPOLLRDHUP);
	cr_assert(a.ev[0] & EPOLLIN);
	cr_assert_null(ut_thread_current(), "run restores the caller's identity");
	ut_thread_fini(&T);
	close(pa[0]);
	close(pa[1]);
	close(pb[0]);
}

/* ---- timers and pollers ---- */
static atomic_int ticks;
static void tick_fn(struct ut_timer *tm)
{
	(void)tm;
	atomic_fetch_add(&ticks, 1);
}

static void add_timer(void *arg)
{
	ut_thread_add_timer(&T, arg);
}

static void del_timer(void *arg)
{
	ut_thread_del_timer(&T, arg);
}

Test(ut_thread, timers_fire_periodically, .init = setup, .fini = teardown)
{
	struct ut_timer tm = {.fn = tick_fn, .period_ms = 20};
	uint64_t t0 = ut_clock_ms();

	atomic_store(&ticks, 0);
	ut_thread_call_sync(&T, add_timer, &tm);
	while (atomic_load(&ticks) < 5 && ut_clock_ms() - t0 < 10000)
		usleep(1000);
	ut_thread_call_sync(&T, del_timer, &tm);
	cr_assert_geq(atomic_load(&ticks), 5, "5 ticks of 20 ms within 10 s");
	/* not early: 5 periods of 20 ms cannot end before 100 ms (coarse clock: 10 ms slack) */
	cr_assert_geq(ut_clock_ms() - t0, 90);
	{
		int n = atomic_load(&ticks);

		usleep(100000);
		cr_assert_eq(atomic_load(&ticks), n, "a removed timer does not fire");
	}
}

static void armed_due(void *arg)
{
	uint64_t *o = arg;

	o[0] = T.armed_ms;
	o[1] = 0;
	for (const struct ut_timer *tm = T.timers; tm; tm = tm->next)
		if (!o[1] || tm->due_ms < o[1])
			o[1] = tm->due_ms;
}

/* What the timerfd is set for once the loop went to sleep (a message may run in the same
 * round as the one before it, ahead of the wait that sets the timerfd): bounded, 5 s. */
static uint64_t armed_when_idle(uint64_t want)
{
	uint64_t o[2], t0 = ut_clock_ms();

	do {
		ut_thread_call_sync(&T, armed_due, o);
		if (o[0] == want)
			break;
		usleep(1000);
	} while (ut_clock_ms() - t0 < 5000);
	return o[0];
}

/* The loop waits without a timeout: its timers wake it through the timerfd, set for the
 * earliest due time (timers_fire_periodically shows it fires) and cleared when the last timer
 * goes.  Periods long enough that nothing fires during the test. */
Test(ut_thread, timers_are_on_a_timerfd, .init = setup, .fini = teardown)
{
	struct ut_timer slow = {.fn = tick_fn, .period_ms = 20000};
	struct ut_timer fast = {.fn = tick_fn, .period_ms = 10000};

	ut_thread_call_sync(&T, add_timer, &slow);
	cr_assert_eq(armed_when_idle(slow.due_ms), slow.due_ms, "set for the timer's due time");
	ut_thread_call_sync(&T, add_timer, &fast);
	cr_assert_eq(armed_when_idle(fast.due_ms), fast.due_ms, "set for the earliest timer");
	ut_thread_call_sync(&T, del_timer, &fast);
	cr_assert_eq(armed_when_idle(slow.due_ms), slow.due_ms, "back to the one left");
	ut_thread_call_sync(&T, del_timer, &slow);
	cr_assert_eq(armed_when_idle(0), 0, "no timer: the timerfd is cleared");
}

static atomic_int polls;
static bool busy_poller(struct ut_poller *p)
{
	(void)p;
	/* busy for 50 rounds, then idle: the loop must spin without sleeping meanwhile */
	return atomic_fetch_add(&polls, 1) + 1 < 50;
}

static void add_poller(void *arg)
{
	ut_thread_add_poller(&T, arg);
}

static void del_poller(void *arg)
{
	ut_thread_del_poller(&T, arg);
}

Test(ut_thread, busy_pollers_keep_the_loop_awake, .init = setup, .fini = teardown)
{
	struct ut_poller p = {.fn = busy_poller};
	uint64_t t0 = ut_clock_ms();

	atomic_store(&polls, 0);
	ut_thread_call_sync(&T, add_poller, &p);
	while (atomic_load(&polls) < 50 && ut_clock_ms() - t0 < 10000)
		usleep(1000);
	/* 50 rounds would take 50 s if the loop slept its idle second between them */
	cr_assert_geq(atomic_load(&polls), 50);
	cr_assert_lt(ut_clock_ms() - t0, 10000);
	ut_thread_call_sync(&T, del_poller, &p);
}

Test(ut_thread, join_stops_an_idle_thread)
{
	cr_assert_eq(ut_thread_init(&T, "t-stop"), 0);
	cr_assert_eq(ut_thread_start(&T, -1), 0);
	ut_thread_call_sync(&T, nothing, NULL); /* it is in its loop now */
	ut_thread_join(&T);
	cr_assert_eq(T.err, 0, "stopped on request, not by an error");
	cr_assert_not(T.started);
	ut_thread_fini(&T);
}

/* Adaptive poll: messages still arrive in order while the loop polls, and the poll is
 * bounded: an idle loop goes back to sleep instead of spinning. */
static void setup_poll(void)
{
	start_T("t-poll", 1000);
}

static double thread_cpu_ms(void)
{
	clockid_t cid;
	struct timespec ts;

	cr_assert_eq(pthread_getcpuclockid(T.thr, &cid), 0);
	cr_assert_eq(clock_gettime(cid, &ts), 0);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

Test(ut_thread, a_polling_loop_takes_messages_and_still_sleeps, .init = setup_poll,
     .fini = teardown)
{
	double before;

	messages_from_all_senders();

	/* 300 ms with nothing to do: one bounded poll of 1 ms after the last work, then sleep
	 * (a loop that kept polling would burn most of the 300 ms) */
	before = thread_cpu_ms();
	usleep(300000);
	cr_assert_lt(thread_cpu_ms() - before, 60.0, "an idle loop spun: %.1f ms of CPU",
		     thread_cpu_ms() - before);
}

struct detached_job {
	sem_t done;
	pthread_t self;
	int detach_state;
};

static void *detached_main(void *arg)
{
	struct detached_job *j = arg;

	pthread_attr_t attr;

	j->self = pthread_self();
	j->detach_state = -1;
	if (pthread_getattr_np(j->self, &attr) == 0) {
		pthread_attr_getdetachstate(&attr, &j->detach_state);
		pthread_attr_destroy(&attr);
	}
	sem_post(&j->done);
	return NULL;
}

Test(ut_thread, a_detached_job_runs_on_its_own_detached_thread)
{
	struct detached_job j;
	struct timespec until;

	sem_init(&j.done, 0, 0);
	cr_assert_eq(ut_spawn_detached(detached_main, &j), 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 30;
	cr_assert_eq(sem_timedwait(&j.done, &until), 0, "the job never ran");
	cr_assert_not(pthread_equal(j.self, pthread_self()));
	/* nobody joins it: a detached thread frees itself when the job returns */
	cr_assert_eq(j.detach_state, PTHREAD_CREATE_DETACHED);
	sem_destroy(&j.done);
}
