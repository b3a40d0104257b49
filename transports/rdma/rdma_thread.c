/* Event threads of the verbs layer: one epoll loop each over its inbox (eventfd), a 1 s
 * timer, its RDMA/CM event channel and one completion channel per device.  Work from other
 * threads (SCSI completions, shutdown) arrives as rdma_msg through a lock-free inbox.
 *
 * By default a thread sleeps until an fd is ready.  With poll_us, after handling a burst it
 * keeps polling its completion queues until poll_us pass without a completion, trading a
 * core for latency; the queues stay armed, so sleeping again loses nothing. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "target/tgt_log.h"
#include "transports/rdma/rdma_int.h"

static __thread struct rdma_thread *tls_thread;

void rdma_log(const struct rdma_srv *s, int prio, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	tgt_log(prio, "%s: %s", s && s->cfg.name ? s->cfg.name : "rdma", buf);
}

void rdma_thread_post(struct rdma_thread *t, struct rdma_msg *m)
{
	struct rdma_msg *old;

	if (tls_thread == t) {
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
	/* The thread reads the eventfd before taking the list: only the push onto an empty
	 * list has to wake it. */
	if (!old) {
		uint64_t one = 1;
		ssize_t r;

		do
			r = write(t->evfd, &one, sizeof(one));
		while (r < 0 && errno == EINTR);
	}
}

static void drain_msgs(struct rdma_thread *t)
{
	for (;;) {
		struct rdma_msg *m =
		    atomic_exchange_explicit(&t->inbox, NULL, memory_order_acquire);
		struct rdma_msg *rev = NULL;

		while (m) { /* pushed newest first: reverse into arrival order */
			struct rdma_msg *nx = m->next;
			m->next = rev;
			rev = m;
			m = nx;
		}
		while (rev) {
			struct rdma_msg *nx = rev->next;
			rev->fn(rev);
			rev = nx;
		}
		while (t->local_head) {
			struct rdma_msg *lm = t->local_head;
			t->local_head = lm->next;
			if (!t->local_head)
				t->local_tail = NULL;
			lm->fn(lm);
		}
		if (!atomic_load_explicit(&t->inbox, memory_order_relaxed))
			break;
	}
}

struct sync_msg {
	struct rdma_msg m;
	struct rdma_thread *t;
	void (*fn)(struct rdma_thread *t, void *arg);
	void *arg;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	bool done;
};

static void sync_fn(struct rdma_msg *m)
{
	struct sync_msg *s = (struct sync_msg *)m;

	s->fn(s->t, s->arg);
	pthread_mutex_lock(&s->lock);
	s->done = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->lock);
}

void rdma_thread_run_sync(struct rdma_thread *t, void (*fn)(struct rdma_thread *t, void *arg),
			  void *arg)
{
	struct sync_msg s = {.m.fn = sync_fn, .t = t, .fn = fn, .arg = arg};

	if (tls_thread == t || !t->started) {
		fn(t, arg);
		return;
	}
	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.cv, NULL);
	rdma_thread_post(t, &s.m);
	pthread_mutex_lock(&s.lock);
	while (!s.done)
		pthread_cond_wait(&s.cv, &s.lock);
	pthread_mutex_unlock(&s.lock);
	pthread_mutex_destroy(&s.lock);
	pthread_cond_destroy(&s.cv);
}

int rdma_thread_watch(struct rdma_thread *t, int fd, struct rdma_src *src)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = src};

	return epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev);
}

void rdma_thread_unwatch(struct rdma_thread *t, int fd)
{
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, fd, NULL);
}

int rdma_thread_init(struct rdma_thread *t)
{
	struct itimerspec its = {.it_interval = {1, 0}, .it_value = {1, 0}};

	t->epfd = t->evfd = t->tfd = -1;
	atomic_init(&t->inbox, NULL);
	atomic_init(&t->stop, false);
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (t->epfd < 0)
		goto fail;
	t->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (t->evfd < 0)
		goto fail;
	t->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t->tfd < 0 || timerfd_settime(t->tfd, 0, &its, NULL) < 0)
		goto fail;
	t->inbox_src = (struct rdma_src){SRC_INBOX, t};
	t->timer_src = (struct rdma_src){SRC_TIMER, t};
	t->cm_src = (struct rdma_src){SRC_CM, t};
	if (rdma_thread_watch(t, t->evfd, &t->inbox_src) ||
	    rdma_thread_watch(t, t->tfd, &t->timer_src))
		goto fail;
	return 0;
fail:
	rdma_thread_fini(t);
	return -1;
}

void rdma_thread_fini(struct rdma_thread *t)
{
	if (t->tfd >= 0)
		close(t->tfd);
	if (t->evfd >= 0)
		close(t->evfd);
	if (t->epfd >= 0)
		close(t->epfd);
	t->epfd = t->evfd = t->tfd = -1;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static bool poll_all(struct rdma_thread *t)
{
	bool any = false;

	for (struct rdma_conn *c = t->conns; c; c = c->next)
		c->busy++;
	for (struct rdma_conn *c = t->conns, *nx; c; c = nx) {
		any |= rdma_conn_poll(c);
		nx = c->next;
		c->busy--;
		rdma_conn_maybe_free(c);
	}
	return any;
}

/* Connections released while something was still on the stack are freed here. */
static void reap(struct rdma_thread *t)
{
	for (struct rdma_conn *c = t->conns, *nx; c; c = nx) {
		nx = c->next;
		if (c->released && !c->busy)
			rdma_conn_maybe_free(c);
	}
}

static void handle(struct rdma_thread *t, struct rdma_src *src)
{
	uint64_t v;
	ssize_t r;

	switch (src->kind) {
	case SRC_INBOX:
		r = read(t->evfd, &v, sizeof(v));
		(void)r;
		break;
	case SRC_TIMER:
		r = read(t->tfd, &v, sizeof(v));
		(void)r;
		rdma_cm_tick(t);
		break;
	case SRC_CM:
		rdma_cm_events(t);
		break;
	case SRC_COMP:
		rdma_dev_comp_event(src->obj);
		break;
	}
}

void *rdma_thread_main(void *arg)
{
	struct rdma_thread *t = arg;
	struct epoll_event evs[32];
	char name[16];

	tls_thread = t;
	snprintf(name, sizeof(name), "rdma-ev%u", t->idx);
	pthread_setname_np(pthread_self(), name);
	rdma_cm_tick(t); /* RDMA/CM channel and listeners right away, not after a second */
	while (!atomic_load(&t->stop)) {
		int n = epoll_wait(t->epfd, evs, 32, t->local_head ? 0 : 1000);

		if (n < 0 && errno != EINTR) {
			rdma_log(t->srv, LOG_ERR, "thread %u: epoll_wait: %s", t->idx,
				 strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++)
			handle(t, evs[i].data.ptr);
		drain_msgs(t);
		reap(t);
		if (t->srv->cfg.poll_us && n > 0) {
			uint64_t last = now_us();

			while (!atomic_load(&t->stop) && now_us() - last < t->srv->cfg.poll_us) {
				if (poll_all(t))
					last = now_us();
				drain_msgs(t);
				reap(t);
			}
		}
	}
	drain_msgs(t);
	return NULL;
}
