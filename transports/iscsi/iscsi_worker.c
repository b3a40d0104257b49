/* Worker threads: one ut_thread each (common/ut_thread.h), placed by the scheduler (bound to
 * a core with `pin 1`), serving a share of the connections.  Each has its own io_uring
 * (common/ut_ring.h): the file-backed stores put the commands' I/O there, one submit per
 * round, and the completions come back in the same loop, without a thread hand-off.  Other
 * backstore completions and requests from other threads arrive as messages; each round then
 * processes staged input and flushes every connection with output, so many responses leave
 * in one sendmsg(). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORKER_RING_ENTRIES 128

#include "common/ut_log.h"
#include "common/ut_ring.h"
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
	ut_log(LOG_INFO, "%02d:%02d:%02d.%03ld iscsi: %s", tm.tm_hour, tm.tm_min, tm.tm_sec,
		ts.tv_nsec / 1000000, buf);
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

/* Every round, after events and messages: input staged by a budget or a resume, the
 * completions that produced, then all output. */
static bool round_fn(struct ut_poller *p)
{
	struct iscsit_worker *w =
	    (struct iscsit_worker *)((char *)p - offsetof(struct iscsit_worker, round));
	struct iscsit_conn *list = w->ready;

	w->ready = NULL;
	while (list) {
		struct iscsit_conn *c = list;

		list = c->ready_next;
		c->ready_next = NULL;
		c->on_ready = false;
		iscsit_conn_input(c);
	}
	ut_thread_drain(&w->ut);
	flush_dirty(w);
	return w->ready || w->dirty;
}

static void tick_fn(struct ut_timer *tm)
{
	struct iscsit_worker *w =
	    (struct iscsit_worker *)((char *)tm - offsetof(struct iscsit_worker, tick));

	for (struct iscsit_conn *c = w->conns, *nx; c; c = nx) {
		nx = c->wnext;
		iscsit_conn_tick(c, iscsit_now(w));
	}
	flush_dirty(w);
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
	for (unsigned i = 0; i < n; i++) {
		struct iscsit_worker *w = &ctx->workers[i];
		char name[16];
		int rc;

		snprintf(name, sizeof(name), "iscsi-w%u", i % 1000u);
		rc = ut_thread_init(&w->ut, name);
		if (rc) {
			snprintf(err, errlen, "worker %u: %s", i, strerror(-rc));
			return -1;
		}
		ctx->nworkers = i + 1;
		rc = ut_ring_attach(&w->ut, WORKER_RING_ENTRIES);
		if (rc)
			iscsit_log("worker %u: no io_uring of its own (%s): file I/O completes on "
				   "the backstore's thread",
				   i, strerror(-rc));
		ut_thread_set_poll(&w->ut, ctx->poll_us);
		w->ctx = ctx;
		w->idx = i;
		w->round.fn = round_fn;
		ut_thread_add_poller(&w->ut, &w->round);
		w->tick.fn = tick_fn;
		w->tick.period_ms = 1000;
		ut_thread_add_timer(&w->ut, &w->tick);
	}
	for (unsigned i = 0; i < n; i++) {
		struct iscsit_worker *w = &ctx->workers[i];
		int cpu = ctx->pin && ncpu > 0 ? (int)(i % (unsigned)ncpu) : -1;
		int rc = ut_thread_start(&w->ut, cpu);

		if (rc) {
			snprintf(err, errlen, "worker %u: cannot start thread: %s", i,
				 strerror(-rc));
			return -1;
		}
		if (w->ut.cpu >= 0)
			iscsit_log("worker %u started, pinned to cpu %d", i, w->ut.cpu);
		else
			iscsit_log("worker %u started", i);
	}
	return 0;
}

void iscsit_workers_stop(struct iscsit_ctx *ctx)
{
	/* Every connection was closed by the transport before: what is left are messages,
	 * which the loop runs before it ends.  The buffer cache is freed after, when no
	 * message can return a buffer to it any more. */
	for (unsigned i = 0; i < ctx->nworkers; i++)
		ut_thread_join(&ctx->workers[i].ut);
	for (unsigned i = 0; i < ctx->nworkers; i++) {
		iscsit_buf_drain(&ctx->workers[i]);
		ut_thread_fini(&ctx->workers[i].ut);
	}
	free(ctx->workers);
	ctx->workers = NULL;
	ctx->nworkers = 0;
}

struct iscsit_worker *iscsit_worker_pick(struct iscsit_ctx *ctx)
{
	struct iscsit_worker *best = NULL;
	unsigned start = atomic_fetch_add(&ctx->next_worker, 1);

	/* Least loaded; ties broken round-robin so a burst of logins spreads out. */
	for (unsigned i = 0; i < ctx->nworkers; i++) {
		struct iscsit_worker *w = &ctx->workers[(start + i) % ctx->nworkers];

		if (!best || atomic_load(&w->nconns) < atomic_load(&best->nconns))
			best = w;
	}
	atomic_fetch_add(&best->nconns, 1); /* count now so the next pick sees it */
	return best;
}

void iscsit_worker_link(struct iscsit_worker *w, struct iscsit_conn *c)
{
	c->wprev = NULL;
	c->wnext = w->conns;
	if (w->conns)
		w->conns->wprev = c;
	w->conns = c;
}

void iscsit_worker_unlink(struct iscsit_worker *w, struct iscsit_conn *c)
{
	if (c->on_ready)
		for (struct iscsit_conn **pp = &w->ready; *pp; pp = &(*pp)->ready_next)
			if (*pp == c) {
				*pp = c->ready_next;
				break;
			}
	if (c->on_dirty)
		for (struct iscsit_conn **pp = &w->dirty; *pp; pp = &(*pp)->dirty_next)
			if (*pp == c) {
				*pp = c->dirty_next;
				break;
			}
	c->on_ready = c->on_dirty = false;
	c->ready_next = c->dirty_next = NULL;
	if (c->wprev)
		c->wprev->wnext = c->wnext;
	else
		w->conns = c->wnext;
	if (c->wnext)
		c->wnext->wprev = c->wprev;
	c->wprev = c->wnext = NULL;
}

struct shed_msg {
	struct ut_msg m;
	struct iscsit_worker *w;
};

static void shed_fn(struct ut_msg *m)
{
	struct shed_msg *sm = (struct shed_msg *)m;
	struct iscsit_conn *oldest = NULL;

	for (struct iscsit_conn *c = sm->w->conns; c; c = c->wnext)
		if (c->state == CONN_LOGIN && (!oldest || c->login_start < oldest->login_start))
			oldest = c;
	if (oldest)
		iscsit_conn_close(oldest, "out of descriptors: oldest login dropped");
	free(sm);
}

void iscsit_workers_shed_login(struct iscsit_ctx *ctx)
{
	for (unsigned i = 0; i < ctx->nworkers; i++) {
		struct shed_msg *sm = calloc(1, sizeof(*sm));

		if (!sm)
			continue;
		sm->m.fn = shed_fn;
		sm->w = &ctx->workers[i];
		ut_thread_post(&sm->w->ut, &sm->m);
	}
}
