/* Core worker threads: where commands that must block (synchronous backstore I/O for
 * COMPARE AND WRITE, EXTENDED COPY, SANITIZE, ...) run, so a transport thread never waits. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "scsi/scsi_core.h"

struct job {
	struct scsi_task *t;
	scsi_handler_fn fn;
	struct job *next;
};

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cv = PTHREAD_COND_INITIALIZER;
static struct job *q_head, *q_tail;
static pthread_t *workers;
static unsigned nworkers_running;
static bool stopping;

static void *worker_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct job *j;
		enum scsi_sr sr;

		pthread_mutex_lock(&pool_mu);
		while (!q_head && !stopping)
			pthread_cond_wait(&pool_cv, &pool_mu);
		if (!q_head) { /* stopping and drained */
			pthread_mutex_unlock(&pool_mu);
			return NULL;
		}
		j = q_head;
		q_head = j->next;
		if (!q_head)
			q_tail = NULL;
		pthread_mutex_unlock(&pool_mu);

		sr = j->fn(j->t);
		if (sr != SR_ASYNC)
			scsi_task_complete(j->t, sr);
		free(j);
	}
}

/* Caller holds pool_mu. */
static int start_locked(unsigned n)
{
	if (nworkers_running)
		return 0;
	if (n == 0)
		n = 2;
	workers = calloc(n, sizeof(*workers));
	if (!workers)
		return -ENOMEM;
	stopping = false;
	for (unsigned i = 0; i < n; i++) {
		int rc = pthread_create(&workers[i], NULL, worker_main, NULL);
		if (rc) {
			fprintf(stderr, "utgt: cannot start SCSI worker thread: %d\n", rc);
			if (i == 0) {
				free(workers);
				workers = NULL;
				return -rc;
			}
			break;
		}
		nworkers_running++;
	}
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
	if (!nworkers_running)
		start_locked(2);
	pthread_mutex_unlock(&pool_mu);
}

/* Runs every queued job to completion, then stops the threads.  The core can be used again
 * afterwards (it restarts lazily). */
void scsi_core_shutdown(void)
{
	pthread_t *w;
	unsigned n;

	pthread_mutex_lock(&pool_mu);
	if (!nworkers_running) {
		pthread_mutex_unlock(&pool_mu);
		return;
	}
	stopping = true;
	w = workers;
	n = nworkers_running;
	pthread_cond_broadcast(&pool_cv);
	pthread_mutex_unlock(&pool_mu);

	for (unsigned i = 0; i < n; i++)
		pthread_join(w[i], NULL);

	pthread_mutex_lock(&pool_mu);
	free(workers);
	workers = NULL;
	nworkers_running = 0;
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
	if (!nworkers_running && start_locked(2) != 0) {
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
