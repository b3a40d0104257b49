/* READ data lent from a store whose blocks are memory (backstore_ops.map: ramdisk) instead of
 * copied into the task's buffer (scsi_task.h, "Lent data-in").  The bytes must stay what the
 * READ read until the transport has sent them, so the command keeps its shared range (which
 * holds the exclusive commands off) until scsi_task_data_release(), and this gate holds off
 * the commands that change blocks under a shared range (WRITE, WRITE SAME, UNMAP, EXTENDED
 * COPY's writes) from lent ranges for as long.
 *
 * A writer counts itself in lg->writers and then reads lg->nlent; a READ links itself into
 * the lent list, counts itself in lg->nlent and then reads lg->writers; all sequentially
 * consistent, so at least one of the two sees the other.  A READ that sees a writer takes
 * it back and copies as before (it never waits).  A writer that sees lent data looks at the
 * list under lg->mu and parks if its range overlaps one; it stays counted while parked, so
 * no READ is lent until it has run (no writer starves), and the release that clears its
 * range sends it on to its range lock.  An LU that only reads takes lg->mu twice per READ
 * and parks nothing; a READ while any write is in flight on the LU is copied. */
#include <pthread.h>
#include <stdlib.h>

#include "scsi/sbc.h"

enum { LEND_NONE, LEND_LENT, LEND_PARKED };

struct scsi_lendgate {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* destroy waits for the last release */
	uint32_t writers;  /* writers holding or wanting a shared range, parked ones too */
	uint32_t nlent;	   /* READs lent and not yet released */
	struct sbc_list lent, parked;
};

#define LEND_LINK offsetof(struct sbc_cmd, lend)

struct scsi_lendgate *scsi_lendgate_create(const struct backstore *bs)
{
	struct scsi_lendgate *lg;

	if (!bs || !bs->ops || !bs->ops->map)
		return NULL;
	lg = calloc(1, sizeof(*lg));
	if (!lg)
		return NULL; /* lending only saves a copy: without the gate every READ copies */
	pthread_mutex_init(&lg->mu, NULL);
	pthread_cond_init(&lg->cv, NULL);
	return lg;
}

void scsi_lendgate_destroy(struct scsi_lendgate *lg)
{
	if (!lg)
		return;
	pthread_mutex_lock(&lg->mu);
	while (lg->lent.head || lg->parked.head)
		pthread_cond_wait(&lg->cv, &lg->mu);
	pthread_mutex_unlock(&lg->mu);
	pthread_cond_destroy(&lg->cv);
	pthread_mutex_destroy(&lg->mu);
	free(lg);
}

unsigned scsi_lendgate_parked(struct scsi_dev *dev)
{
	struct scsi_lendgate *lg = dev->lend;
	unsigned n = 0;

	if (!lg)
		return 0;
	pthread_mutex_lock(&lg->mu);
	for (struct sbc_cmd *w = lg->parked.head; w; w = w->lend.next)
		n++;
	pthread_mutex_unlock(&lg->mu);
	return n;
}

static bool overlaps_lent(const struct scsi_lendgate *lg, const struct sbc_cmd *c)
{
	for (const struct sbc_cmd *r = lg->lent.head; r; r = r->lend.next)
		if (c->rl_lba < r->rl_end && r->rl_lba < c->rl_end)
			return true;
	return false;
}

/* Under lg->mu: unpark, in arrival order, the writers no lent READ stands in front of any
 * more, chained on run_next for go_on(). */
static struct sbc_cmd *unpark_locked(struct scsi_lendgate *lg)
{
	struct sbc_cmd *run = NULL, **tailp = &run;

	for (struct sbc_cmd *w = lg->parked.head, *next; w; w = next) {
		next = w->lend.next;
		if (overlaps_lent(lg, w))
			continue;
		sbc_list_del(&lg->parked, w, LEND_LINK);
		w->lend_state = LEND_NONE;
		w->run_next = NULL;
		*tailp = w;
		tailp = &w->run_next;
	}
	return run;
}

static void go_on(struct sbc_cmd *run)
{
	while (run) {
		struct sbc_cmd *w = run;

		run = w->run_next;
		sbc_range_lock_gated(w);
	}
}

/* A TMF pulls a parked writer off the gate (scsi_task.h: core.cancel); the task set lock is
 * held, so nothing here calls into the core. */
static bool lend_cancel(struct scsi_task *t)
{
	struct sbc_cmd *c = t->core.ctx;
	struct scsi_lendgate *lg = c ? c->dev->lend : NULL;
	bool found = false;

	if (!lg)
		return false;
	pthread_mutex_lock(&lg->mu);
	if (c->lend_state == LEND_PARKED) {
		sbc_list_del(&lg->parked, c, LEND_LINK);
		c->lend_state = LEND_NONE;
		found = true;
		if (!lg->parked.head && !lg->lent.head)
			pthread_cond_broadcast(&lg->cv);
	}
	pthread_mutex_unlock(&lg->mu);
	if (found)
		sbc_cmd_free(c); /* uncounts the writer; holds no range yet */
	return found;
}

bool sbc_lend_writer_enter(struct sbc_cmd *c)
{
	struct scsi_lendgate *lg = c->dev->lend;
	bool parked = false;

	c->lend_writer = true;
	__atomic_add_fetch(&lg->writers, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&lg->nlent, __ATOMIC_SEQ_CST))
		return true;
	pthread_mutex_lock(&lg->mu);
	if (overlaps_lent(lg, c)) {
		c->lend_state = LEND_PARKED;
		sbc_list_add(&lg->parked, c, LEND_LINK);
		if (c->t)
			c->t->core.cancel = lend_cancel;
		parked = true;
	}
	pthread_mutex_unlock(&lg->mu);
	return !parked;
}

void sbc_lend_writer_exit(struct sbc_cmd *c)
{
	if (!c->lend_writer)
		return;
	c->lend_writer = false;
	__atomic_sub_fetch(&c->dev->lend->writers, 1, __ATOMIC_SEQ_CST);
}

/* Take c off the lent list; the caller must not touch the LU after this (destroy may be
 * waiting for exactly this release). */
static struct sbc_cmd *unlend(struct scsi_lendgate *lg, struct sbc_cmd *c)
{
	struct sbc_cmd *run;

	pthread_mutex_lock(&lg->mu);
	sbc_list_del(&lg->lent, c, LEND_LINK);
	c->lend_state = LEND_NONE;
	__atomic_sub_fetch(&lg->nlent, 1, __ATOMIC_SEQ_CST);
	run = unpark_locked(lg);
	if (!lg->lent.head && !lg->parked.head)
		pthread_cond_broadcast(&lg->cv);
	pthread_mutex_unlock(&lg->mu);
	return run;
}

bool sbc_lend(struct sbc_cmd *c, uint64_t off, uint64_t len)
{
	struct scsi_lendgate *lg = c->dev->lend;
	void *p;

	if (!lg || __atomic_load_n(&lg->writers, __ATOMIC_SEQ_CST))
		return false;
	p = c->dev->bs->ops->map(c->dev->bs, off, len);
	if (!p)
		return false;
	pthread_mutex_lock(&lg->mu);
	c->lend_state = LEND_LENT;
	sbc_list_add(&lg->lent, c, LEND_LINK);
	__atomic_add_fetch(&lg->nlent, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&lg->mu);
	if (__atomic_load_n(&lg->writers, __ATOMIC_SEQ_CST)) {
		/* a writer came in between: it may have parked behind this READ */
		go_on(unlend(lg, c));
		return false;
	}
	c->t->din_lent = p;
	return true;
}

void scsi_task_data_release(struct scsi_task *t)
{
	struct sbc_cmd *c = t->core.ctx;
	struct scsi_lendgate *lg;
	struct sbc_cmd *run;

	if (!t->din_lent || !c || c->lend_state != LEND_LENT)
		return;
	t->din_lent = NULL;
	lg = c->dev->lend;
	/* the range first: unlend is the last touch of the LU that destroy waits for */
	sbc_range_unlock(c);
	run = unlend(lg, c);
	sbc_cmd_free(c);
	go_on(run); /* live commands: their LU stays */
}
