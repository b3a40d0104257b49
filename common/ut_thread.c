/* The event loop of common/ut_thread.h.  The inbox is a lock-free LIFO the loop reverses into
 * arrival order; only the push onto an empty inbox writes the eventfd, because the loop reads
 * the eventfd before it takes the list, so a later push onto an empty list wakes it again.
 *
 * Timers wake the loop through a timerfd armed for the earliest one, re-armed only when that
 * changes (once per period), so the loop waits in epoll_wait without a timeout: a timeout
 * would make the kernel read the clock and start and cancel an hrtimer on every wait, which
 * a ring thread pays once per command (and under emulation each clock read is a device
 * access). */
#include "common/ut_thread.h"

#include "common/ut_ring.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 64

static __thread struct ut_thread *tls_current;

struct ut_thread *ut_thread_current(void)
{
	return tls_current;
}

uint64_t ut_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int ut_spawn_detached(void *(*fn)(void *arg), void *arg)
{
	pthread_attr_t attr;
	pthread_t th;
	int rc;

	rc = pthread_attr_init(&attr);
	if (rc)
		return rc;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return rc;
}

static void inbox_ready(struct ut_watch *w, uint32_t events)
{
	uint64_t v;
	(void)events;

	/* messages are taken after the fd callbacks; this only rearms the eventfd */
	if (read(w->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
}

/* The timerfd fired: its timers run at the end of this round (run_timers). */
static void timer_ready(struct ut_watch *w, uint32_t events)
{
	struct ut_thread *t = (struct ut_thread *)(void *)((char *)w -
							   offsetof(struct ut_thread, timer_watch));
	uint64_t v;
	(void)events;

	if (read(w->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	t->armed_ms = 0; /* expired: the next wait arms it again */
}

/* The coarse clock lags CLOCK_MONOTONIC by up to its resolution (a tick): the timerfd is set
 * that much after a timer's due time, so the timer is due by the coarse clock when it fires. */
static uint64_t coarse_slack_ms(void)
{
	struct timespec r;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &r))
		return 10;
	return (uint64_t)r.tv_sec * 1000u + ((uint64_t)r.tv_nsec + 999999u) / 1000000u;
}

int ut_thread_init(struct ut_thread *t, const char *name)
{
	int e;

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "ut");
	t->cpu = -1;
	t->evfd = t->tfd = -1;
	atomic_init(&t->inbox, NULL);
	atomic_init(&t->stop, false);
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (t->epfd < 0)
		return -errno;
	t->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (t->evfd < 0)
		goto fail;
	t->inbox_watch.fn = inbox_ready;
	t->inbox_watch.fd = t->evfd;
	if (ut_thread_watch(t, &t->inbox_watch, EPOLLIN))
		goto fail;
	t->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t->tfd < 0)
		goto fail;
	t->timer_watch.fn = timer_ready;
	t->timer_watch.fd = t->tfd;
	if (ut_thread_watch(t, &t->timer_watch, EPOLLIN))
		goto fail;
	t->timer_slack_ms = coarse_slack_ms();
	t->now_ms = ut_clock_ms();
	return 0;
fail:
	e = errno;
	ut_thread_fini(t);
	return -e;
}

void ut_thread_fini(struct ut_thread *t)
{
	ut_ring_free(t->ring);
	t->ring = NULL;
	if (t->tfd >= 0)
		close(t->tfd);
	if (t->evfd >= 0)
		close(t->evfd);
	if (t->epfd >= 0)
		close(t->epfd);
	t->tfd = t->evfd = t->epfd = -1;
}

void ut_thread_post(struct ut_thread *t, struct ut_msg *m)
{
	struct ut_msg *old;

	if (tls_current == t) {
		m->next = NULL;
		if (t->local_tail)
			t->local_tail->next = m;
		else
			t->local_head = m;
		t->local_tail = m;
		return;
	}
	old = atomic_load_explicit(&t->inbox, memory_order_relaxed);
	do {
		m->next = old;
	} while (!atomic_compare_exchange_weak_explicit(&t->inbox, &old, m, memory_order_release,
							memory_order_relaxed));
	if (!old) {
		uint64_t one = 1;
		ssize_t r;

		do
			r = write(t->evfd, &one, sizeof(one));
		while (r < 0 && errno == EINTR);
	}
}

unsigned ut_thread_drain(struct ut_thread *t)
{
	unsigned n = 0;

	for (;;) {
		struct ut_msg *m = atomic_exchange_explicit(&t->inbox, NULL, memory_order_acquire);
		struct ut_msg *rev = NULL;

		while (m) { /* pushed newest first: reverse into arrival order */
			struct ut_msg *nx = m->next;

			m->next = rev;
			rev = m;
			m = nx;
		}
		while (rev) {
			struct ut_msg *nx = rev->next;

			rev->fn(rev);
			rev = nx;
			n++;
		}
		/* messages may post more of their own: loop until both lists are empty */
		while (t->local_head) {
			struct ut_msg *lm = t->local_head;

			t->local_head = lm->next;
			if (!t->local_head)
				t->local_tail = NULL;
			lm->fn(lm);
			n++;
		}
		if (!atomic_load_explicit(&t->inbox, memory_order_relaxed))
			break;
	}
	t->msgs += n;
	return n;
}

struct sync_call {
	struct ut_msg m;
	void (*fn)(void *arg);
	void *arg;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	bool done;
};

static void sync_fn(struct ut_msg *m)
{
	struct sync_call *s = (struct sync_call *)m;

	s->fn(s->arg);
	pthread_mutex_lock(&s->lock);
	s->done = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->lock);
}

void ut_thread_call_sync(struct ut_thread *t, void (*fn)(void *arg), void *arg)
{
	struct sync_call s = {.m.fn = sync_fn, .fn = fn, .arg = arg};

	if (tls_current == t || !t->started) {
		fn(arg);
		return;
	}
	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.cv, NULL);
	ut_thread_post(t, &s.m);
	pthread_mutex_lock(&s.lock);
	while (!s.done)
		pthread_cond_wait(&s.cv, &s.lock);
	pthread_mutex_unlock(&s.lock);
	pthread_mutex_destroy(&s.lock);
	pthread_cond_destroy(&s.cv);
}

int ut_thread_watch(struct ut_thread *t, struct ut_watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	return epoll_ctl(t->epfd, EPOLL_CTL_ADD, w->fd, &ev) ? -errno : 0;
}

int ut_thread_modify(struct ut_thread *t, struct ut_watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	return epoll_ctl(t->epfd, EPOLL_CTL_MOD, w->fd, &ev) ? -errno : 0;
}

void ut_thread_unwatch(struct ut_thread *t, struct ut_watch *w)
{
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, w->fd, NULL);
}

void ut_thread_add_timer(struct ut_thread *t, struct ut_timer *tm)
{
	tm->due_ms = ut_clock_ms() + tm->period_ms;
	tm->next = t->timers;
	t->timers = tm;
}

void ut_thread_del_timer(struct ut_thread *t, struct ut_timer *tm)
{
	for (struct ut_timer **pp = &t->timers; *pp; pp = &(*pp)->next)
		if (*pp == tm) {
			*pp = tm->next;
			return;
		}
}

void ut_thread_add_poller(struct ut_thread *t, struct ut_poller *p)
{
	p->next = t->pollers;
	t->pollers = p;
}

void ut_thread_del_poller(struct ut_thread *t, struct ut_poller *p)
{
	for (struct ut_poller **pp = &t->pollers; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			return;
		}
}

/* Point the timerfd at due_ms (coarse clock; 0: disarm) unless it already is. */
static void arm_timerfd(struct ut_thread *t, uint64_t due_ms)
{
	struct itimerspec its = {0};

	if (due_ms == t->armed_ms)
		return;
	if (due_ms) {
		uint64_t at = due_ms + t->timer_slack_ms;

		its.it_value.tv_sec = (time_t)(at / 1000u);
		its.it_value.tv_nsec = (long)(at % 1000u) * 1000000L;
	}
	if (timerfd_settime(t->tfd, due_ms ? TFD_TIMER_ABSTIME : 0, &its, NULL) == 0)
		t->armed_ms = due_ms;
}

/* How long the next wait may block: 0 with work pending or a timer due, else -1 (until an fd,
 * the inbox or the timerfd is ready).  The timerfd is set here for the earliest timer. */
static int sleep_ms(struct ut_thread *t, bool busy)
{
	uint64_t first = 0;

	for (const struct ut_timer *tm = t->timers; tm; tm = tm->next) {
		if (tm->due_ms <= t->now_ms)
			return 0; /* it runs next round, and the timerfd is set after */
		if (!first || tm->due_ms < first)
			first = tm->due_ms;
	}
	arm_timerfd(t, first);
	if (busy || t->local_head || atomic_load_explicit(&t->inbox, memory_order_relaxed))
		return 0;
	return -1;
}

static bool run_pollers(struct ut_thread *t)
{
	bool busy = false;

	for (struct ut_poller *p = t->pollers, *nx; p; p = nx) {
		nx = p->next; /* a poller may remove itself */
		busy |= p->fn(p);
	}
	return busy;
}

static void run_timers(struct ut_thread *t)
{
	for (struct ut_timer *tm = t->timers, *nx; tm; tm = nx) {
		nx = tm->next; /* a timer may remove itself */
		if (tm->due_ms > t->now_ms)
			continue;
		/* no catching up after a stall: the next one is a period from now */
		tm->due_ms = t->now_ms + tm->period_ms;
		tm->fn(tm);
	}
}

void ut_thread_set_poll(struct ut_thread *t, unsigned us)
{
	t->poll_us = us;
}

static uint64_t clock_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Wait for fds: with a poll budget and a busy last round, look without sleeping first. */
static int wait_events(struct ut_thread *t, struct epoll_event *evs, int timeout)
{
	if (timeout != 0 && t->poll_us && t->worked) {
		uint64_t until = clock_us() + t->poll_us;

		do {
			int n = epoll_wait(t->epfd, evs, MAX_EVENTS, 0);

			if (n != 0 || t->local_head ||
			    atomic_load_explicit(&t->inbox, memory_order_relaxed))
				return n;
		} while (clock_us() < until);
	}
	return epoll_wait(t->epfd, evs, MAX_EVENTS, timeout);
}

void ut_thread_run(struct ut_thread *t)
{
	struct epoll_event evs[MAX_EVENTS];
	struct ut_thread *outer = tls_current;
	bool busy = false;

	tls_current = t;
	t->err = 0;
	while (!atomic_load_explicit(&t->stop, memory_order_acquire)) {
		int n = wait_events(t, evs, sleep_ms(t, busy));

		if (n < 0) {
			if (errno != EINTR) {
				t->err = errno;
				break;
			}
			n = 0;
		}
		t->rounds++;
		t->now_ms = ut_clock_ms();
		for (int i = 0; i < n; i++) {
			struct ut_watch *w = evs[i].data.ptr;

			if (w != &t->inbox_watch && (evs[i].events & (EPOLLHUP | EPOLLRDHUP))) {
				w->fn(w, evs[i].events);
				evs[i].events = 0;
			}
		}
		for (int i = 0; i < n; i++) {
			struct ut_watch *w = evs[i].data.ptr;

			if (evs[i].events)
				w->fn(w, evs[i].events);
		}
		t->worked = ut_thread_drain(t) || n > 0;
		/* I/O the callbacks and messages started goes out before the pollers run, so a
		 * completion the kernel posted at once is answered in this round. */
		if (t->ring)
			busy = ut_ring_flush(t->ring);
		else
			busy = false;
		busy |= run_pollers(t);
		run_timers(t);
		if (t->ring)
			busy |= ut_ring_flush(t->ring);
	}
	if (t->ring)
		ut_ring_quiesce(t->ring);
	ut_thread_drain(t);
	tls_current = outer;
}

static void *thread_main(void *arg)
{
	struct ut_thread *t = arg;

	if (t->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(t->cpu, &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
			t->cpu = -1;
	}
	pthread_setname_np(pthread_self(), t->name);
	ut_thread_run(t);
	return NULL;
}

int ut_thread_start(struct ut_thread *t, int cpu)
{
	int rc;

	t->cpu = cpu;
	atomic_store(&t->stop, false);
	t->started = true; /* before the thread runs: call_sync must post, not run inline */
	rc = pthread_create(&t->thr, NULL, thread_main, t);
	if (rc) {
		t->started = false;
		return -rc;
	}
	return 0;
}

void ut_thread_stop(struct ut_thread *t)
{
	atomic_store_explicit(&t->stop, true, memory_order_release);
	if (tls_current != t) {
		/* wake it so the flag is seen now, not after its longest sleep */
		uint64_t one = 1;
		ssize_t r;

		do
			r = write(t->evfd, &one, sizeof(one));
		while (r < 0 && errno == EINTR);
	}
}

void ut_thread_wait(struct ut_thread *t)
{
	if (!t->started)
		return;
	pthread_join(t->thr, NULL);
	t->started = false;
}

void ut_thread_join(struct ut_thread *t)
{
	if (!t->started)
		return;
	ut_thread_stop(t);
	ut_thread_wait(t);
}
