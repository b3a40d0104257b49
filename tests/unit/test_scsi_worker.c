/* scsi/scsi_worker.c: the worker pool runs blocking handlers concurrently, completes their
 * tasks, drains on shutdown, and starts lazily when nobody called scsi_core_init(). */
#include <errno.h>
#include <time.h>

#include "scsi_harness.h"

#include "scsi/scsi_core.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int inside, completed;

static void done_cb(struct scsi_task *t)
{
	(void)t;
	pthread_mutex_lock(&mu);
	completed++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/* Waits until `want` jobs are inside at once: only possible with that many workers. */
static int want;
static enum scsi_sr rendezvous(struct scsi_task *t)
{
	struct timespec dl;
	int rc = 0;

	(void)t;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	pthread_mutex_lock(&mu);
	inside++;
	pthread_cond_broadcast(&cv);
	while (inside < want && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&cv, &mu, &dl);
	pthread_mutex_unlock(&mu);
	return rc == ETIMEDOUT ? SR_INTERNAL_ERROR : SR_OK;
}

static enum scsi_sr quick(struct scsi_task *t)
{
	(void)t;
	return SR_CONDITION_MET;
}

static void wait_completed(int n)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	pthread_mutex_lock(&mu);
	while (completed < n)
		cr_assert_neq(pthread_cond_timedwait(&cv, &mu, &dl), ETIMEDOUT);
	pthread_mutex_unlock(&mu);
}

Test(worker, runs_jobs_concurrently)
{
	struct scsi_task t[3];

	cr_assert_eq(scsi_core_init(3), 0);
	want = 3;
	for (int i = 0; i < 3; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].done = done_cb;
		cr_assert_eq(scsi_run_blocking(&t[i], rendezvous), SR_ASYNC);
	}
	wait_completed(3);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(t[i].status, SAM_STAT_GOOD, "all three ran at the same time");
	scsi_core_shutdown();
}

Test(worker, shutdown_drains_the_queue)
{
	struct scsi_task t[32];

	cr_assert_eq(scsi_core_init(1), 0);
	for (int i = 0; i < 32; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].done = done_cb;
		scsi_run_blocking(&t[i], quick);
	}
	scsi_core_shutdown();
	cr_assert_eq(completed, 32, "every queued job ran before shutdown returned");
	cr_assert_eq(t[31].status, SAM_STAT_CONDITION_MET);
}

Test(worker, lazy_start)
{
	struct scsi_task t;

	memset(&t, 0, sizeof(t));
	t.done = done_cb;
	cr_assert_eq(scsi_run_blocking(&t, quick), SR_ASYNC);
	wait_completed(1);
	cr_assert_eq(t.status, SAM_STAT_CONDITION_MET);
	/* two lazily started workers are there */
	struct scsi_task u[2];
	want = 2;
	inside = 0;
	for (int i = 0; i < 2; i++) {
		memset(&u[i], 0, sizeof(u[i]));
		u[i].done = done_cb;
		scsi_run_blocking(&u[i], rendezvous);
	}
	wait_completed(3);
	cr_assert_eq(u[0].status, SAM_STAT_GOOD);
	cr_assert_eq(u[1].status, SAM_STAT_GOOD);
	scsi_core_shutdown();
}

/* A job that waits for other work (PREEMPT AND ABORT waiting for the tasks it aborted, EXTENDED
 * COPY waiting for a range lock) says so; the pool then starts another thread, so the work it
 * waits for runs even when every worker is waiting.  One worker: the job waits for a job queued
 * behind it. */
static bool released;

static enum scsi_sr waits_for_next_job(struct scsi_task *t)
{
	struct timespec dl;
	int rc = 0;

	(void)t;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	scsi_worker_block_begin();
	pthread_mutex_lock(&mu);
	while (!released && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&cv, &mu, &dl);
	pthread_mutex_unlock(&mu);
	scsi_worker_block_end();
	return rc == ETIMEDOUT ? SR_INTERNAL_ERROR : SR_OK;
}

static enum scsi_sr releases(struct scsi_task *t)
{
	(void)t;
	pthread_mutex_lock(&mu);
	released = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return SR_CONDITION_MET;
}

Test(worker, waiting_worker_is_replaced, .timeout = 30)
{
	struct scsi_task t[2];

	completed = 0;
	released = false;
	cr_assert_eq(scsi_core_init(1), 0);
	cr_assert_eq(scsi_core_workers(), 1);
	memset(t, 0, sizeof(t));
	t[0].done = t[1].done = done_cb;
	scsi_run_blocking(&t[0], waits_for_next_job);
	scsi_run_blocking(&t[1], releases);
	wait_completed(2);
	cr_assert_eq(t[0].status, SAM_STAT_GOOD, "the waiting job saw the one behind it run");
	cr_assert_eq(t[1].status, SAM_STAT_CONDITION_MET);
	/* the extra thread leaves once nobody waits: back to the configured pool */
	for (double end = (double)time(NULL) + 10; scsi_core_workers() != 1 && time(NULL) < end;)
		usleep(1000);
	cr_assert_eq(scsi_core_workers(), 1);
	/* outside a worker the calls change nothing */
	scsi_worker_block_begin();
	cr_assert_eq(scsi_core_workers(), 1);
	scsi_worker_block_end();
	scsi_core_shutdown();
	cr_assert_eq(scsi_core_workers(), 0);
}
