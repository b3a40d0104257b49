/* SANITIZE: OVERWRITE, BLOCK ERASE, CRYPTOGRAPHIC ERASE, EXIT FAILURE MODE, as their effect on
 * our stores:
 *   OVERWRITE: every block written with the initialization pattern (repeated to fill the
 *     block), OVERWRITE COUNT times; with INVERT the pattern and its complement alternate,
 *     arranged so that the last pass writes the pattern itself.
 *   BLOCK ERASE and CRYPTOGRAPHIC ERASE: afterwards every block reads zeros.  A thin LU whose
 *     deallocated blocks read zeros is deallocated entirely (holes, dropped pages); any other
 *     is overwritten with zeros.  There is no key to throw away, so the cryptographic erase
 *     has the same effect as the block erase.
 * Either way the store is flushed before the sanitize counts as done.  The device attribute
 * sanitize_rate_mb (utgt's own) paces the writes, so a sanitize neither starves the other users
 * of the backing store nor ends faster than that rate says.
 *
 * While it runs (dev->sanitizing) other medium access gets NOT READY 04/1B from the core's
 * admission checks; it starts only when the commands in flight have drained (it locks the
 * whole LU exclusively).  With IMMED the status is GOOD once the CDB and parameter list are
 * validated, the sanitize going on in the background.  Without IMMED a task management
 * function (ABORT TASK, a reset, the nexus going away) ends the SANITIZE command at once, as
 * aborted, but not the sanitize operation, which goes on to its end as SBC-4 requires.  If it
 * fails, the LU enters sanitize failure mode: medium access gets MEDIUM ERROR 31/03 until a
 * SANITIZE succeeds or — when the failed one had AUSE=1 — EXIT FAILURE MODE is sent.
 *
 * Parameter checks follow libiscsi's Sanitize tests, which are what initiators test against:
 * PARAMETER LIST LENGTH outside 5..block+4 (OVERWRITE) or non-zero (the others), reserved CDB
 * bits or bytes, and — a deliberate choice where SBC would say INVALID FIELD IN PARAMETER
 * LIST — OVERWRITE COUNT 0 and an INITIALIZATION PATTERN LENGTH of 0 or above the block size:
 * all INVALID FIELD IN CDB.  A TEST field other than 0 and a pattern longer than the list that
 * carries it are INVALID FIELD IN PARAMETER LIST; a list shorter than announced is PARAMETER
 * LIST LENGTH ERROR. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/ut_log.h"
#include "common/ut_thread.h"
#include "scsi/sbc.h"
#include "scsi/scsi_core.h"

enum {
	SA_OVERWRITE         = 0x01,
	SA_BLOCK_ERASE       = 0x02,
	SA_CRYPTO_ERASE      = 0x03,
	SA_EXIT_FAILURE_MODE = 0x1f,
};

struct sanitize_job {
	struct scsi_dev *dev;
	struct scsi_task *t; /* NULL with IMMED or once a TMF took it (under detach_mu) */
	uint8_t sa;
	bool ause;
	bool invert;
	unsigned count;
	uint8_t pattern[]; /* one block, the initialization pattern repeated */
};

/* Between the job and its task: the sanitize thread takes the task to complete it, or a TMF
 * takes it to complete it as aborted, whichever comes first.  Never held while calling into
 * the core. */
static pthread_mutex_t detach_mu = PTHREAD_MUTEX_INITIALIZER;

/* core.cancel: called by a TMF with the task set lock held.  Returns true when the task is
 * ours to give up (the core completes it as aborted; the operation carries on without it). */
static bool sanitize_cancel(struct scsi_task *t)
{
	struct sanitize_job *j;
	bool taken = false;

	pthread_mutex_lock(&detach_mu);
	j = t->core.ctx;
	if (j && j->t == t) {
		j->t = NULL;
		t->core.ctx = NULL;
		taken = true;
	}
	pthread_mutex_unlock(&detach_mu);
	return taken;
}

/* The task the job still has to complete, if no TMF took it; after this j is unreachable
 * from the task. */
static struct scsi_task *take_task(struct sanitize_job *j)
{
	struct scsi_task *t;

	pthread_mutex_lock(&detach_mu);
	t = j->t;
	j->t = NULL;
	if (t)
		t->core.ctx = NULL;
	pthread_mutex_unlock(&detach_mu);
	return t;
}

/* Fill the whole LU with one block.  With sanitize_rate_mb, in pieces of at most a tenth of
 * a second's worth, each started no earlier than the rate allows. */
static enum bs_status fill_lu(struct scsi_dev *dev, const uint8_t *block)
{
	uint64_t rate = (uint64_t)dev->p.sanitize_rate_mb << 20, per, done = 0;
	struct timespec t0, at;

	if (!rate)
		return sbc_fill_sync(dev, 0, dev->nr_blocks, block, false);
	per = rate / 10 / dev->block_size;
	if (!per)
		per = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t lba = 0; lba < dev->nr_blocks;) {
		uint64_t n = dev->nr_blocks - lba < per ? dev->nr_blocks - lba : per;
		enum bs_status st = sbc_fill_sync(dev, lba, n, block, false);
		uint64_t ns;

		if (st != BS_OK)
			return st;
		lba += n;
		done += n * dev->block_size;
		/* the bytes written so far take done/rate seconds from t0 */
		ns = (uint64_t)t0.tv_nsec + done % rate * 1000000000ull / rate;
		at.tv_sec = t0.tv_sec + (time_t)(done / rate) + (time_t)(ns / 1000000000ull);
		at.tv_nsec = (long)(ns % 1000000000ull);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
			;
	}
	return BS_OK;
}

static enum bs_status overwrite(struct sanitize_job *j)
{
	struct scsi_dev *dev = j->dev;
	uint32_t bsz = dev->block_size;
	uint8_t *inv = malloc(bsz);
	enum bs_status st = BS_OK;

	if (!inv)
		return BS_ENOMEM;
	for (uint32_t i = 0; i < bsz; i++)
		inv[i] = (uint8_t)~j->pattern[i];
	for (unsigned pass = 0; pass < j->count && st == BS_OK; pass++) {
		bool flip = j->invert && (j->count - 1 - pass) % 2;

		st = fill_lu(dev, flip ? inv : j->pattern);
	}
	free(inv);
	return st;
}

static enum bs_status erase(struct sanitize_job *j)
{
	struct scsi_dev *dev = j->dev;
	enum bs_status st;
	uint8_t *zero;

	if (sbc_lbprz(dev))
		return sbc_unmap_sync(dev, 0, dev->nr_blocks);
	zero = calloc(1, dev->block_size);
	if (!zero)
		return BS_ENOMEM;
	st = fill_lu(dev, zero);
	free(zero);
	return st;
}

static void *sanitize_thread(void *arg)
{
	struct sanitize_job *j = arg;
	struct scsi_dev *dev = j->dev;
	struct scsi_task *t;
	struct sbc_cmd *c = calloc(1, sizeof(*c));
	enum bs_status st = BS_ENOMEM;
	enum scsi_sr sr;

	if (c) {
		c->dev = dev;
		sbc_range_lock_wait(c, 0, UINT64_MAX, true); /* drain the commands in flight */
		st = j->sa == SA_OVERWRITE ? overwrite(j) : erase(j);
		if (st == BS_OK && !sbc_nv_cache(dev))
			st = sbc_io_sync(dev, BS_FLUSH, 0, 0, NULL, false);
		sbc_cmd_free(c);
	}
	sr = st == BS_OK ? SR_OK : SR_SANITIZE_FAILED;
	pthread_mutex_lock(&dev->lock);
	dev->sanitizing = false;
	__atomic_store_n(&dev->sanitize_failed, sr != SR_OK, __ATOMIC_RELEASE);
	dev->sanitize_ause = j->ause;
	scsi_dev_medium_changed(dev);
	pthread_mutex_unlock(&dev->lock);
	if (st != BS_OK)
		ut_log(LOG_ERR, "%s: SANITIZE failed (backstore status %d): failure mode", dev->p.name,
		       (int)st);
	t = take_task(j);
	free(j);
	if (t)
		scsi_task_complete(t, sr);
	sbc_rangelock_unhold(dev); /* last: the LU may go away now */
	return NULL;
}

static enum scsi_sr exit_failure_mode(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	enum scsi_sr sr = SR_OK;

	pthread_mutex_lock(&dev->lock);
	if (dev->sanitizing)
		sr = SR_SANITIZE_IN_PROGRESS;
	else if (dev->sanitize_failed && !dev->sanitize_ause)
		sr = scsi_invalid_cdb(t, 1, 4); /* only a new SANITIZE may clear this failure */
	else
		__atomic_store_n(&dev->sanitize_failed, false, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	return sr;
}

/* OVERWRITE parameter list -> j->count / invert / pattern. */
static enum scsi_sr parse_overwrite(struct scsi_task *t, struct sanitize_job *j, uint16_t plen)
{
	uint32_t bsz = t->core.dev->block_size;
	enum scsi_sr sr = SR_OK;
	uint16_t iplen;
	uint8_t *p;

	if (plen < 5 || plen > bsz + 4)
		return scsi_invalid_cdb(t, 7, -1);
	p = malloc(plen);
	if (!p)
		return SR_NO_MEMORY;
	if (scsi_data_out(t, p, plen) < plen) {
		sr = SR_PARAM_LIST_LENGTH_ERROR;
		goto out;
	}
	j->invert = p[0] & 0x80;
	j->count = p[0] & 0x1f;
	iplen = get_be16(p + 2);
	if (j->count == 0 || iplen == 0 || iplen > bsz)
		sr = SR_INVALID_FIELD_IN_CDB; /* see the top of the file */
	else if (p[0] & 0x60)
		sr = scsi_invalid_param(t, 0, 6); /* TEST */
	else if (iplen > plen - 4)
		sr = scsi_invalid_param(t, 2, -1);
	else
		for (uint32_t i = 0; i < bsz; i++)
			j->pattern[i] = p[4 + i % iplen];
out:
	free(p);
	return sr;
}

enum scsi_sr sbc_sanitize(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint8_t sa = t->cdb[1] & 0x1f;
	bool immed = t->cdb[1] & 0x80;
	uint16_t plen = get_be16(t->cdb + 7);
	struct sanitize_job *j;
	enum scsi_sr sr = SR_OK;
	bool t_taken;
	int rc;

	if (t->cdb[1] & 0x40)
		return scsi_invalid_cdb(t, 1, 6);
	for (uint16_t i = 2; i <= 6; i++)
		if (t->cdb[i])
			return scsi_invalid_cdb(t, i, -1);
	if (sa == SA_EXIT_FAILURE_MODE) {
		if (plen)
			return scsi_invalid_cdb(t, 7, -1);
		return exit_failure_mode(t);
	}
	if (sa != SA_OVERWRITE && plen)
		return scsi_invalid_cdb(t, 7, -1);

	j = calloc(1, sizeof(*j) + dev->block_size);
	if (!j)
		return SR_NO_MEMORY;
	j->dev = dev;
	j->sa = sa;
	j->ause = t->cdb[1] & 0x20;
	if (sa == SA_OVERWRITE)
		sr = parse_overwrite(t, j, plen);
	if (sr != SR_OK) {
		free(j);
		return sr;
	}
	if (!immed) {
		j->t = t;
		t->core.ctx = j;
		t->core.cancel = sanitize_cancel;
	}

	pthread_mutex_lock(&dev->lock);
	if (dev->sanitizing)
		sr = SR_SANITIZE_IN_PROGRESS;
	else
		dev->sanitizing = true;
	scsi_dev_medium_changed(dev);
	pthread_mutex_unlock(&dev->lock);
	if (sr != SR_OK) {
		/* not started; a TMF running meanwhile may already have taken the task */
		if (!take_task(j) && !immed)
			sr = SR_ASYNC; /* a TMF completed it meanwhile */
		free(j);
		return sr;
	}
	sbc_rangelock_hold(dev);
	rc = ut_spawn_detached(sanitize_thread, j);
	if (rc) {
		pthread_mutex_lock(&dev->lock);
		dev->sanitizing = false;
		scsi_dev_medium_changed(dev);
		pthread_mutex_unlock(&dev->lock);
		t_taken = take_task(j) != NULL;
		free(j);
		sbc_rangelock_unhold(dev);
		if (!immed && !t_taken)
			return SR_ASYNC; /* a TMF completed it meanwhile */
		return SR_NO_MEMORY;
	}
	/* from here the thread owns j (and t without IMMED, unless a TMF takes it) */
	return immed ? SR_OK : SR_ASYNC;
}
