/* The service: event threads started and stopped, listeners closed, every connection reached
 * (shutdown), and the wait for the last connection to go. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/ut_log.h"
#include "transports/rdma/rdma_int.h"

void *rdma_srv_ctx(const struct rdma_srv *s)
{
	return s->ctx;
}

unsigned rdma_srv_nconns(const struct rdma_srv *s)
{
	return atomic_load(&s->nconns);
}

static void close_fn(void *arg)
{
	rdma_cm_close_listeners(arg);
}

void rdma_srv_close_listeners(struct rdma_srv *s)
{
	atomic_store(&s->closing, true);
	rdma_thread_call_sync(&s->threads[0], close_fn, &s->threads[0]);
}

struct each {
	struct rdma_thread *t;
	void (*fn)(struct rdma_conn *c, void *arg);
	void *arg;
};

static void each_fn(void *arg)
{
	struct each *e = arg;
	struct rdma_thread *t = e->t;
	struct rdma_conn *c, *nx;

	/* fn may take a connection down and free it: hold them all while walking */
	for (c = t->conns; c; c = c->next)
		c->busy++;
	for (c = t->conns; c; c = nx) {
		nx = c->next;
		if (c->state != RDMA_CONN_REQUESTED)
			e->fn(c, e->arg);
	}
	for (c = t->conns; c; c = nx) {
		nx = c->next;
		c->busy--;
		rdma_conn_maybe_free(c);
	}
}

void rdma_srv_each_conn(struct rdma_srv *s, void (*fn)(struct rdma_conn *c, void *arg), void *arg)
{
	for (unsigned i = 0; i < s->nthreads; i++) {
		struct each e = {&s->threads[i], fn, arg};

		rdma_thread_call_sync(&s->threads[i], each_fn, &e);
	}
}

bool rdma_srv_wait_idle(struct rdma_srv *s, unsigned timeout_ms)
{
	struct timespec dl;
	bool idle;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&s->lock);
	while (atomic_load(&s->nconns) && pthread_cond_timedwait(&s->cv, &s->lock, &dl) == 0)
		;
	idle = atomic_load(&s->nconns) == 0;
	pthread_mutex_unlock(&s->lock);
	return idle;
}

/* On the thread itself, as the service's last act there: everything it owns goes. */
static void teardown_fn(void *arg)
{
	struct rdma_thread *t = arg;

	rdma_cm_close_listeners(t);
	while (t->conns)
		rdma_conn_force_free(t->conns);
	while (t->devs)
		rdma_dev_destroy(t->devs);
	if (t->cm) {
		ut_thread_unwatch(t->ut, &t->cm_watch);
		rdma_destroy_event_channel(t->cm);
		t->cm = NULL;
	}
	rdma_thread_detach(t);
}

static void srv_free(struct rdma_srv *s)
{
	free(s->threads);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cv);
	free(s);
}

void rdma_srv_stop(struct rdma_srv *s)
{
	if (!s)
		return;
	atomic_store(&s->closing, true);
	for (unsigned i = s->nthreads; i-- > 0;) {
		struct rdma_thread *t = &s->threads[i];

		if (t->ut)
			rdma_thread_call_sync(t, teardown_fn, t);
		rdma_thread_stop(t);
	}
	rdma_senders_stop(s); /* after the connections: none is left to post for */
	srv_free(s);
}

struct rdma_srv *rdma_srv_start(const struct rdma_srv_cfg *cfg, const struct rdma_conn_ops *ops,
				void *ctx, char *err, size_t errlen)
{
	struct rdma_srv *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->cfg = *cfg;
	if (!s->cfg.threads)
		s->cfg.threads = 1;
	if (s->cfg.nlisten > RDMA_MAX_LISTEN)
		s->cfg.nlisten = RDMA_MAX_LISTEN;
	s->ops = ops;
	s->ctx = ctx;
	atomic_init(&s->nconns, 0);
	atomic_init(&s->closing, false);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->threads = calloc(s->cfg.threads, sizeof(*s->threads));
	if (!s->threads) {
		snprintf(err, errlen, "out of memory");
		srv_free(s);
		return NULL;
	}
	/* Every thread's state exists before any loop runs: a connection request on thread 0
	 * may be handed to any of them. */
	for (unsigned i = 0; i < s->cfg.threads; i++) {
		s->threads[i].srv = s;
		s->threads[i].idx = i;
		s->threads[i].ho_msg.fn = rdma_sender_failed;
	}
	if (s->cfg.handoff_bytes) {
		int rc = rdma_senders_start(s);

		if (rc) {
			snprintf(err, errlen, "sender threads: %s", strerror(-rc));
			rdma_senders_stop(s);
			srv_free(s);
			return NULL;
		}
	}
	s->nthreads = s->cfg.threads;
	for (unsigned i = 0; i < s->nthreads; i++) {
		int rc = rdma_thread_start(&s->threads[i], s->cfg.run_on ? s->cfg.run_on[i] : NULL);

		if (rc) {
			snprintf(err, errlen, "event thread %u: %s", i, strerror(-rc));
			rdma_srv_stop(s);
			return NULL;
		}
	}
	return s;
}
