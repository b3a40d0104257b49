/* The service: event threads started and stopped, listeners closed, every connection reached
 * (shutdown), and the wait for the last connection to go. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "target/tgt_log.h"
#include "transports/rdma/rdma_int.h"

void *rdma_srv_ctx(const struct rdma_srv *s)
{
	return s->ctx;
}

unsigned rdma_srv_nconns(const struct rdma_srv *s)
{
	return atomic_load(&s->nconns);
}

static void close_fn(struct rdma_thread *t, void *arg)
{
	(void)arg;
	rdma_cm_close_listeners(t);
}

void rdma_srv_close_listeners(struct rdma_srv *s)
{
	atomic_store(&s->closing, true);
	rdma_thread_run_sync(&s->threads[0], close_fn, NULL);
}

struct each {
	void (*fn)(struct rdma_conn *c, void *arg);
	void *arg;
};

static void each_fn(struct rdma_thread *t, void *arg)
{
	struct each *e = arg;
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
	struct each e = {fn, arg};

	for (unsigned i = 0; i < s->nthreads; i++)
		rdma_thread_run_sync(&s->threads[i], each_fn, &e);
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

/* On the thread itself, as its last act: everything it owns goes. */
static void teardown_fn(struct rdma_thread *t, void *arg)
{
	(void)arg;
	rdma_cm_close_listeners(t);
	while (t->conns)
		rdma_conn_force_free(t->conns);
	while (t->devs)
		rdma_dev_destroy(t->devs);
	if (t->cm) {
		rdma_thread_unwatch(t, t->cm->fd);
		rdma_destroy_event_channel(t->cm);
		t->cm = NULL;
	}
	atomic_store(&t->stop, true);
}

static void srv_free(struct rdma_srv *s)
{
	for (unsigned i = 0; i < s->nthreads; i++)
		rdma_thread_fini(&s->threads[i]);
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

		if (!t->started)
			continue;
		rdma_thread_run_sync(t, teardown_fn, NULL);
		pthread_join(t->th, NULL);
		t->started = false;
	}
	srv_free(s);
}

struct rdma_srv *rdma_srv_start(const struct rdma_srv_cfg *cfg, const struct rdma_conn_ops *ops,
				void *ctx, char *err, size_t errlen)
{
	struct rdma_srv *s = calloc(1, sizeof(*s));
	unsigned i;

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
		goto fail;
	}
	for (i = 0; i < s->cfg.threads; i++) {
		struct rdma_thread *t = &s->threads[i];

		t->srv = s;
		t->idx = i;
		if (rdma_thread_init(t)) {
			snprintf(err, errlen, "event thread setup: %s", strerror(errno));
			goto fail;
		}
		s->nthreads = i + 1;
	}
	for (i = 0; i < s->nthreads; i++) {
		struct rdma_thread *t = &s->threads[i];
		int rc = pthread_create(&t->th, NULL, rdma_thread_main, t);

		if (rc) {
			snprintf(err, errlen, "event thread: %s", strerror(rc));
			goto fail;
		}
		t->started = true;
	}
	return s;
fail:
	rdma_srv_stop(s->nthreads ? s : NULL);
	if (!s->nthreads)
		srv_free(s);
	return NULL;
}
