/* Worker threads: one epoll loop per thread, pinned to a core, serving a share of the
 * connections.  Completions from other threads (backstore I/O, core workers) and requests
 * from other workers arrive through a lock-free inbox plus an eventfd.  Each loop round:
 * socket events -> messages -> staged input -> flush every connection with output, so many
 * responses leave in one sendmsg(). */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "target/tgt_log.h"
#include "transports/iscsi/iscsi_int.h"

int iscsit_debug;

void iscsit_log(const char *fmt, ...)
{
	char buf[1024];
	struct timespec ts;
	struct tm tm;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* Millisecond stamps help line up a conformance run with the target's log. */
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	tgt_log(LOG_INFO, "%02d:%02d:%02d.%03ld iscsi: %s", tm.tm_hour, tm.tm_min, tm.tm_sec,
		ts.tv_nsec / 1000000, buf);
}

static __thread struct iscsit_worker *tls_worker;

bool iscsit_on_worker(const struct iscsit_worker *w)
{
	return tls_worker == w;
}

void iscsit_worker_post(struct iscsit_worker *w, struct iscsit_msg *m)
{
	struct iscsit_msg *old;

	if (tls_worker == w) {
		/* From our own thread (a synchronous completion inside scsi_task_execute):
		 * queue it for this round, in order, without a system call. */
		m->next = NULL;
		if (w->local_tail)
			w->local_tail->next = m;
		else
			w->local_head = m;
		w->local_tail = m;
		return;
	}
	old = atomic_load_explicit(&w->inbox, memory_order_relaxed);
	do {
		m->next = old;
	} while (!atomic_compare_exchange_weak_explicit(&w->inbox, &old, m, memory_order_release,
							memory_order_relaxed));
	/* Only the push onto an empty inbox needs to wake the worker: it reads the eventfd
	 * before taking the list, so a later push onto an empty list wakes it again. */
	if (!old) {
		uint64_t one = 1;
		ssize_t r;

		do {
			r = write(w->evfd, &one, sizeof(one));
		} while (r < 0 && errno == EINTR);
	}
}

int iscsit_worker_watch(struct iscsit_worker *w, int fd, void *ptr, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = ptr};

	return epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev);
}

void iscsit_worker_modify(struct iscsit_worker *w, int fd, void *ptr, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = ptr};

	epoll_ctl(w->epfd, EPOLL_CTL_MOD, fd, &ev);
}

void iscsit_worker_unwatch(struct iscsit_worker *w, int fd)
{
	epoll_ctl(w->epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* Run every message: the inbox (reversed into arrival order) and our own local ones. */
static unsigned drain_msgs(struct iscsit_worker *w)
{
	unsigned n = 0;

	for (;;) {
		struct iscsit_msg *m =
		    atomic_exchange_explicit(&w->inbox, NULL, memory_order_acquire);
		struct iscsit_msg *rev = NULL;

		while (m) {
			struct iscsit_msg *nx = m->next;

			m->next = rev;
			rev = m;
			m = nx;
		}
		while (rev) {
			struct iscsit_msg *nx = rev->next;

			rev->fn(rev);
			rev = nx;
			n++;
		}
		/* local messages may be added while running them: loop until both are empty */
		while (w->local_head) {
			struct iscsit_msg *lm = w->local_head;

			w->local_head = lm->next;
			if (!w->local_head)
				w->local_tail = NULL;
			lm->fn(lm);
			n++;
		}
		if (!atomic_load_explicit(&w->inbox, memory_order_relaxed))
			break;
	}
	w->msgs += n;
	return n;
}

static void process_ready(struct iscsit_worker *w)
{
	struct iscsit_conn *list = w->ready;

	w->ready = NULL;
	while (list) {
		struct iscsit_conn *c = list;

		list = c->ready_next;
		c->ready_next = NULL;
		c->on_ready = false;
		iscsit_conn_input(c);
	}
}

static void flush_dirty(struct iscsit_worker *w)
{
	while (w->dirty) {
		struct iscsit_conn *c = w->dirty;

		w->dirty = c->dirty_next;
		c->dirty_next = NULL;
		c->on_dirty = false;
		iscsit_conn_output(c);
	}
}

static bool is_portal(struct iscsit_ctx *ctx, void *p)
{
	return ctx->portals && (char *)p >= (char *)ctx->portals &&
	       (char *)p < (char *)(ctx->portals + ctx->nportals);
}

static void *worker_main(void *arg)
{
	struct iscsit_worker *w = arg;
	struct iscsit_ctx *ctx = w->ctx;
	struct epoll_event evs[64];
	time_t last_tick = 0;

	tls_worker = w;
	if (w->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
			w->cpu = -1;
	}
	{
		char name[16];

		snprintf(name, sizeof(name), "iscsi-w%u", w->idx);
		pthread_setname_np(pthread_self(), name);
	}
	while (!atomic_load(&w->stop)) {
		int timeout = (w->ready || w->local_head || w->dirty) ? 0 : 1000;
		int n = epoll_wait(w->epfd, evs, 64, timeout);
		struct timespec ts;

		if (n < 0 && errno != EINTR)
			break;
		w->wakeups++;
		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		w->now = ts.tv_sec;
		/* Hang-ups first: a connection that went away releases its nexus (and SPC-2
		 * reservation) before commands that arrived in the same batch on another one. */
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (p != w && !is_portal(ctx, p) &&
			    (evs[i].events & (EPOLLHUP | EPOLLRDHUP))) {
				iscsit_conn_input(p);
				evs[i].events = 0;
			}
		}
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (!evs[i].events)
				continue;
			if (p == w) {
				uint64_t v;

				if (read(w->evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
					iscsit_log("worker %u: eventfd read: %s", w->idx,
						   strerror(errno));
				continue;
			}
			if (is_portal(ctx, p)) {
				iscsit_portal_accept(ctx, p);
				continue;
			}
			struct iscsit_conn *c = p;

			if (evs[i].events & EPOLLOUT)
				iscsit_conn_mark_dirty(c);
			if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP))
				iscsit_conn_input(c);
		}
		drain_msgs(w);
		process_ready(w);
		drain_msgs(w);
		flush_dirty(w);
		if (w->now != last_tick) {
			last_tick = w->now;
			for (struct iscsit_conn *c = w->conns, *nx; c; c = nx) {
				nx = c->wnext;
				iscsit_conn_tick(c, w->now);
			}
			flush_dirty(w);
		}
	}
	/* Stopping: every connection was closed by the transport before; run what is left. */
	drain_msgs(w);
	iscsit_buf_drain(w);
	tls_worker = NULL;
	return NULL;
}

int iscsit_workers_start(struct iscsit_ctx *ctx, unsigned n, char *err, size_t errlen)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (n == 0)
		n = ncpu > 0 ? (unsigned)ncpu : 1;
	ctx->workers = calloc(n, sizeof(*ctx->workers));
	if (!ctx->workers) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ctx->nworkers = n;
	for (unsigned i = 0; i < n; i++) {
		struct iscsit_worker *w = &ctx->workers[i];

		w->ctx = ctx;
		w->idx = i;
		w->cpu = ncpu > 0 ? (int)(i % (unsigned)ncpu) : -1;
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		w->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (w->epfd < 0 || w->evfd < 0 || iscsit_worker_watch(w, w->evfd, w, EPOLLIN)) {
			snprintf(err, errlen, "worker %u: %s", i, strerror(errno));
			return -1;
		}
		{
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
			w->now = ts.tv_sec;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		struct iscsit_worker *w = &ctx->workers[i];

		if (pthread_create(&w->thr, NULL, worker_main, w)) {
			snprintf(err, errlen, "worker %u: cannot start thread", i);
			return -1;
		}
		w->started = true;
		iscsit_log("worker %u started, pinned to cpu %d", i, w->cpu);
	}
	return 0;
}

struct stop_msg {
	struct iscsit_msg m;
	struct iscsit_worker *w;
};

static void stop_fn(struct iscsit_msg *m)
{
	struct stop_msg *sm = (struct stop_msg *)m;

	atomic_store(&sm->w->stop, true);
	free(sm);
}

void iscsit_workers_stop(struct iscsit_ctx *ctx)
{
	for (unsigned i = 0; i < ctx->nworkers; i++) {
		struct iscsit_worker *w = &ctx->workers[i];
		struct stop_msg *sm;

		if (!w->started)
			continue;
		sm = calloc(1, sizeof(*sm));
		if (sm) {
			sm->m.fn = stop_fn;
			sm->w = w;
			iscsit_worker_post(w, &sm->m);
		} else {
			atomic_store(&w->stop, true);
		}
	}
	for (unsigned i = 0; i < ctx->nworkers; i++) {
		struct iscsit_worker *w = &ctx->workers[i];

		if (w->started)
			pthread_join(w->thr, NULL);
		if (w->epfd >= 0)
			close(w->epfd);
		if (w->evfd >= 0)
			close(w->evfd);
	}
	free(ctx->workers);
	ctx->workers = NULL;
	ctx->nworkers = 0;
}

struct adopt_msg {
	struct iscsit_msg m;
	struct iscsit_worker *w;
	int fd;
	struct iscsit_portal *portal;
};

static void adopt_fn(struct iscsit_msg *m)
{
	struct adopt_msg *am = (struct adopt_msg *)m;

	if (!iscsit_conn_new(am->w, am->fd, am->portal))
		close(am->fd);
	free(am);
}

void iscsit_worker_adopt(struct iscsit_ctx *ctx, int fd, struct iscsit_portal *portal)
{
	struct iscsit_worker *best = NULL;
	unsigned start = atomic_fetch_add(&ctx->next_worker, 1);
	struct adopt_msg *am;

	/* Least loaded; ties broken round-robin so a burst of logins spreads out. */
	for (unsigned i = 0; i < ctx->nworkers; i++) {
		struct iscsit_worker *w = &ctx->workers[(start + i) % ctx->nworkers];

		if (!best || atomic_load(&w->nconns) < atomic_load(&best->nconns))
			best = w;
	}
	am = calloc(1, sizeof(*am));
	if (!am) {
		close(fd);
		return;
	}
	atomic_fetch_add(&best->nconns, 1); /* count now so the next accept sees it */
	am->m.fn = adopt_fn;
	am->w = best;
	am->fd = fd;
	am->portal = portal;
	iscsit_worker_post(best, &am->m);
}
