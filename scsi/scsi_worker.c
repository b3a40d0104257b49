/* Core worker threads: where commands that must block (synchronous backstore I/O for
 * COMPARE AND WRITE, EXTENDED COPY, PERSISTENT RESERVE OUT, ...) run, so a transport thread
 * never waits.
 *
 * The pool keeps `target` threads able to take jobs.  A job that waits for other work which
 * may itself need a worker (PREEMPT AND ABORT waiting for the tasks it aborted, EXTENDED COPY
 * waiting for a range lock held by a queued COMPARE AND WRITE) brackets the wait with
 * scsi_worker_block_begin/end: the pool starts a stand-in thread for it, and the surplus
 * thread leaves once it is idle again.  So even a one-thread pool cannot deadlock on itself.
 * Threads are detached; shutdown waits for the count to reach zero. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ut_log.h"
#include "common/ut_thread.h"
#include "scsi/scsi_core.h"

/* A bound on stand-ins: each one is a job waiting for another, so reaching this means
 * something is badly wrong; waiting jobs then share the configured workers. */
#define MAX_WORKERS 1024

struct job {
	struct scsi_task *t;
	scsi_handler_fn fn;
	struct job *next;
};

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cv = PTHREAD_COND_INITIALIZER; /* jobs, surplus, stopping */
static pthread_cond_t exit_cv = PTHREAD_COND_INITIALIZER; /* a thread left */
static struct job *q_head, *q_tail;
static unsigned target;  /* configured pool size; 0 = not started */
static unsigned running; /* threads alive */
static unsigned blocked; /* workers between block_begin and block_end */
static bool stopping;
static __thread bool on_worker;

static void *worker_main(void *arg)
{
	(void)arg;
	on_worker = true;
	pthread_mutex_lock(&pool_mu);
	for (;;) {
		struct job *j;
		enum scsi_sr sr;

		while (!q_head && !stopping) {
			if (running - blocked > target)
				goto leave; /* a stand-in no longer needed */
			pthread_cond_wait(&pool_cv, &pool_mu);
		}
		if (!q_head) /* stopping and drained */
			goto leave;
		j = q_head;
		q_head = j->next;
		if (!q_head)
			q_tail = NULL;
		pthread_mutex_unlock(&pool_mu);

		sr = j->fn(j->t);
		if (sr != SR_ASYNC)
			scsi_task_complete(j->t, sr);
		free(j);
		pthread_mutex_lock(&pool_mu);
	}
leave:
	running--;
	pthread_cond_broadcast(&exit_cv);
	pthread_mutex_unlock(&pool_mu);
	return NULL;
}

/* Caller holds pool_mu. */
static int spawn_locked(void)
{
	int rc = ut_spawn_detached(worker_main, NULL);

	if (rc) {
		ut_log(LOG_ERR, "cannot start SCSI worker thread: %s", strerror(rc));
		return -rc;
	}
	running++;
	return 0;
}

/* Caller holds pool_mu. */
static int start_locked(unsigned n)
{
	int rc = 0;

	if (target)
		return 0;
	if (n == 0)
		n = 2;
	stopping = false;
	for (unsigned i = 0; i < n; i++) {
		rc = spawn_locked();
		if (rc)
			break;
	}
	if (!running)
		return rc;
	target = running;
	return 0;
}

int scsi_core_init(unsigned nworkers)
{
	int rc;

	pthread_mutex_lock(&pool_mu);
	rc = start_locked(nworkers);
	pthread_mutex_unlock(&pool_mu);
	return rc;
}

void scsi_core_lazy_init(void)
{
	pthread_mutex_lock(&pool_mu);
	if (!target)
		start_locked(2);
	pthread_mutex_unlock(&pool_mu);
}

/* Runs every queued job to completion, then stops the threads.  The core can be used again
 * afterwards (it restarts lazily). */
void scsi_core_shutdown(void)
{
	pthread_mutex_lock(&pool_mu);
	if (!target) {
		pthread_mutex_unlock(&pool_mu);
		return;
	}
	stopping = true;
	pthread_cond_broadcast(&pool_cv);
	while (running)
		pthread_cond_wait(&exit_cv, &pool_mu);
	target = 0;
	stopping = false;
	pthread_mutex_unlock(&pool_mu);
}

enum scsi_sr scsi_run_blocking(struct scsi_task *t, scsi_handler_fn fn)
{
	struct job *j = malloc(sizeof(*j));

	if (!j)
		return SR_NO_MEMORY;
	j->t = t;
	j->fn = fn;
	j->next = NULL;
	pthread_mutex_lock(&pool_mu);
	if (!target && start_locked(2) != 0) {
		pthread_mutex_unlock(&pool_mu);
		free(j);
		return SR_NO_MEMORY;
	}
	if (q_tail)
		q_tail->next = j;
	else
		q_head = j;
	q_tail = j;
	pthread_cond_signal(&pool_cv);
	pthread_mutex_unlock(&pool_mu);
	return SR_ASYNC;
}

void scsi_worker_block_begin(void)
{
	if (!on_worker)
		return;
	pthread_mutex_lock(&pool_mu);
	blocked++;
	/* Stopping too: shutdown drains the queue, and its jobs may be what we wait for. */
	if (running - blocked < target && running < MAX_WORKERS)
		spawn_locked();
	pthread_mutex_unlock(&pool_mu);
}

void scsi_worker_block_end(void)
{
	if (!on_worker)
		return;
	pthread_mutex_lock(&pool_mu);
	blocked--;
	pthread_cond_broadcast(&pool_cv); /* an idle stand-in may leave now */
	pthread_mutex_unlock(&pool_mu);
}

unsigned scsi_core_workers(void)
{
	unsigned n;

	pthread_mutex_lock(&pool_mu);
	n = running;
	pthread_mutex_unlock(&pool_mu);
	return n;
}
