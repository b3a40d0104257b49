/* Per-LU LBA range locks: what makes COMPARE AND WRITE, ORWRITE, WRITE ATOMIC, WRITE AND
 * VERIFY and SANITIZE atomic with respect to every other command touching the same blocks.
 *
 * Ordinary data commands (READ, WRITE, WRITE SAME, UNMAP) take a shared lock on their range,
 * the read-modify-write commands an exclusive one.  A request is granted when it overlaps no
 * conflicting holder and no conflicting earlier waiter (arrival order among overlapping ranges,
 * so a stream of WRITEs cannot starve a COMPARE AND WRITE).  Nobody blocks: a refused command
 * is parked here and resumed by whoever releases the range that stood in its way.
 *
 * The common case, a shared request while no exclusive holder or waiter exists, takes no lock:
 * it only counts itself in dev->rl_fast.  It adds itself to the count and then reads
 * SCSI_EXC_RANGE, while an exclusive request sets that flag (under rl->mu) and then reads the
 * count, both sequentially consistent: either the shared request sees the flag (it uncounts
 * itself and takes the locked way) or the exclusive one sees the count and waits until it
 * drains; the release that brings the count to zero with the flag up grants the waiters.
 * Shared requests made while the flag is up are linked into the shared list under rl->mu, and
 * exclusive requests scan that list, as many as there are such commands in flight. */
#include <pthread.h>
#include <stdlib.h>

#include "scsi/sbc.h"
#include "scsi/scsi_core.h"

enum { RL_NONE, RL_WAITING, RL_HELD, RL_FAST };

struct scsi_rangelock {
	pthread_mutex_t mu;
	pthread_cond_t cv;          /* blocking waiters and destroy */
	struct sbc_list shared;      /* holders */
	struct sbc_list excl;        /* holders */
	struct sbc_list waiting;     /* FIFO */
	unsigned background;        /* work outliving its task (sbc_rangelock_hold) */
	unsigned nexcl;             /* exclusive holders + waiters: SCSI_EXC_RANGE while > 0 */
};

struct scsi_rangelock *scsi_rangelock_create(void)
{
	struct scsi_rangelock *rl = calloc(1, sizeof(*rl));

	if (!rl)
		return NULL;
	pthread_mutex_init(&rl->mu, NULL);
	pthread_cond_init(&rl->cv, NULL);
	return rl;
}

/* Waits for background work (an IMMED SANITIZE) and every holder: the LU is going away, and
 * they still use its backstore. */
void scsi_rangelock_destroy(struct scsi_rangelock *rl)
{
	if (!rl)
		return;
	pthread_mutex_lock(&rl->mu);
	while (rl->background || rl->shared.head || rl->excl.head || rl->waiting.head)
		pthread_cond_wait(&rl->cv, &rl->mu);
	pthread_mutex_unlock(&rl->mu);
	pthread_cond_destroy(&rl->cv);
	pthread_mutex_destroy(&rl->mu);
	free(rl);
}

static void list_add(struct sbc_list *l, struct sbc_cmd *c)
{
	sbc_list_add(l, c, offsetof(struct sbc_cmd, rl));
}

static void list_del(struct sbc_list *l, struct sbc_cmd *c)
{
	sbc_list_del(l, c, offsetof(struct sbc_cmd, rl));
}

static bool overlap(const struct sbc_cmd *a, const struct sbc_cmd *b)
{
	return a->rl_lba < b->rl_end && b->rl_lba < a->rl_end;
}

static bool conflicts(const struct sbc_cmd *a, const struct sbc_cmd *b)
{
	return (a->rl_excl || b->rl_excl) && overlap(a, b);
}

/* Does c conflict with a holder, or with a waiter queued before `upto` (NULL: any waiter)? */
static bool blocked(const struct scsi_rangelock *rl, const struct sbc_cmd *c,
		    const struct sbc_cmd *upto)
{
	/* shared holders that took no lock: their ranges are unknown, so any overlaps */
	if (c->rl_excl && __atomic_load_n(&c->dev->rl_fast, __ATOMIC_SEQ_CST))
		return true;
	for (const struct sbc_cmd *h = rl->excl.head; h; h = h->rl.next)
		if (overlap(c, h))
			return true;
	if (c->rl_excl)
		for (const struct sbc_cmd *h = rl->shared.head; h; h = h->rl.next)
			if (overlap(c, h))
				return true;
	for (const struct sbc_cmd *w = rl->waiting.head; w && w != upto; w = w->rl.next)
		if (conflicts(c, w))
			return true;
	return false;
}

static void grant(struct scsi_rangelock *rl, struct sbc_cmd *c)
{
	c->rl_state = RL_HELD;
	list_add(c->rl_excl ? &rl->excl : &rl->shared, c);
}

/* Caller holds rl->mu.  Grant, in arrival order, every waiter nothing stands in front of any
 * more; chain them on run_next for resume_granted().  Then the flag follows nexcl: with no
 * exclusive request left, every shared waiter has just been granted. */
static struct sbc_cmd *grant_waiters_locked(struct scsi_dev *dev, struct scsi_rangelock *rl)
{
	struct sbc_cmd *run = NULL, **tailp = &run;

	for (struct sbc_cmd *w = rl->waiting.head, *next; w; w = next) {
		next = w->rl.next;
		if (blocked(rl, w, w))
			continue;
		list_del(&rl->waiting, w);
		grant(rl, w);
		w->run_next = NULL;
		*tailp = w;
		tailp = &w->run_next;
	}
	scsi_exc_set(dev, SCSI_EXC_RANGE, rl->nexcl != 0);
	return run;
}

/* A TMF pulls a parked task off the queue (see scsi_task.h: core.cancel).  Called with the
 * core's task set lock held; must not call back into the core.  Granting the waiters that
 * queued behind this one is left to the next release, which must come: a waiter only waits
 * while some holder exists. */
static bool rl_cancel(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	struct scsi_rangelock *rl = dev->rl;
	struct sbc_cmd *found = NULL;

	pthread_mutex_lock(&rl->mu);
	for (struct sbc_cmd *w = rl->waiting.head; w; w = w->rl.next) {
		if (w->t == t) {
			found = w;
			list_del(&rl->waiting, w);
			w->rl_state = RL_NONE;
			break;
		}
	}
	if (found && found->rl_excl && !--rl->nexcl && !rl->waiting.head)
		scsi_exc_set(dev, SCSI_EXC_RANGE, false); /* else the next grant pass clears it */
	if (found && !rl->waiting.head)
		pthread_cond_broadcast(&rl->cv);
	pthread_mutex_unlock(&rl->mu);
	if (!found)
		return false;
	sbc_cmd_free(found);
	return true;
}

static void resume_granted(struct sbc_cmd *run);

/* A lock-free shared holder leaves; the last one out while an exclusive request waits lets the
 * waiters in. */
static void fast_put(struct scsi_dev *dev)
{
	struct scsi_rangelock *rl = dev->rl;
	struct sbc_cmd *run;

	if (__atomic_sub_fetch(&dev->rl_fast, 1, __ATOMIC_SEQ_CST) ||
	    !(__atomic_load_n(&dev->exc, __ATOMIC_SEQ_CST) & SCSI_EXC_RANGE))
		return;
	pthread_mutex_lock(&rl->mu);
	run = grant_waiters_locked(dev, rl);
	pthread_mutex_unlock(&rl->mu);
	resume_granted(run);
}

static bool fast_get(struct sbc_cmd *c)
{
	struct scsi_dev *dev = c->dev;

	if (scsi_exc_get(dev) & SCSI_EXC_RANGE)
		return false;
	__atomic_add_fetch(&dev->rl_fast, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&dev->exc, __ATOMIC_SEQ_CST) & SCSI_EXC_RANGE) {
		fast_put(dev);
		return false;
	}
	c->rl_state = RL_FAST;
	return true;
}

static bool range_lock(struct sbc_cmd *c)
{
	struct scsi_rangelock *rl = c->dev->rl;
	bool excl = c->rl_excl, ok;

	if (!excl && fast_get(c))
		return true;
	pthread_mutex_lock(&rl->mu);
	if (excl) {
		rl->nexcl++;
		scsi_exc_set(c->dev, SCSI_EXC_RANGE, true); /* before blocked() reads rl_fast */
	}
	ok = !blocked(rl, c, NULL);
	if (ok) {
		grant(rl, c);
	} else {
		c->rl_state = RL_WAITING;
		if (c->t)
			c->t->core.cancel = rl_cancel;
		list_add(&rl->waiting, c);
	}
	pthread_mutex_unlock(&rl->mu);
	return ok;
}

/* Does c change blocks?  A hold without a task (EXTENDED COPY's) may. */
static bool changes_blocks(const struct sbc_cmd *c)
{
	return !c->t || !c->t->core.desc || (c->t->core.desc->flags & SCSI_CF_WRITE);
}

bool sbc_range_lock(struct sbc_cmd *c, uint64_t lba, uint64_t n, bool excl, sbc_resume_fn resume)
{
	c->rl_lba = lba;
	c->rl_end = n > UINT64_MAX - lba ? UINT64_MAX : lba + n;
	c->rl_excl = excl;
	c->resume = resume;
	/* an exclusive range keeps lent READs out by itself: they hold theirs shared */
	if (!excl && c->dev->lend && changes_blocks(c) && !sbc_lend_writer_enter(c))
		return false;
	return range_lock(c);
}

void sbc_range_lock_gated(struct sbc_cmd *c)
{
	if (range_lock(c))
		c->resume(c);
}

/* Granted commands waiting for their resume() call on this thread.  A resumed command may
 * complete inside its own submit (ramdisk, nullio) and release its range from within the loop
 * that resumed it, granting the next waiter, and so on: resuming that one at once would nest
 * one stack level per waiter.  Instead only the outermost unlock on the thread runs resumes;
 * nested ones append to this queue. */
static __thread struct sbc_cmd *resume_head, *resume_tail;
static __thread bool resuming;

static void resume_granted(struct sbc_cmd *run)
{
	if (run) {
		if (resume_tail)
			resume_tail->run_next = run;
		else
			resume_head = run;
		while (run->run_next)
			run = run->run_next;
		resume_tail = run;
	}
	if (resuming)
		return;
	resuming = true;
	while (resume_head) {
		struct sbc_cmd *w = resume_head;

		resume_head = w->run_next;
		if (!resume_head)
			resume_tail = NULL;
		w->resume(w);
	}
	resuming = false;
}

void sbc_range_unlock(struct sbc_cmd *c)
{
	struct scsi_rangelock *rl;
	struct sbc_cmd *run;

	if (!c)
		return;
	sbc_lend_writer_exit(c);
	if (c->rl_state == RL_NONE)
		return;
	if (c->rl_state == RL_FAST) {
		c->rl_state = RL_NONE;
		fast_put(c->dev);
		return;
	}
	rl = c->dev->rl;
	pthread_mutex_lock(&rl->mu);
	if (c->rl_state == RL_HELD)
		list_del(c->rl_excl ? &rl->excl : &rl->shared, c);
	else
		list_del(&rl->waiting, c);
	c->rl_state = RL_NONE;
	if (c->rl_excl)
		rl->nexcl--;
	run = grant_waiters_locked(c->dev, rl);
	if (!rl->shared.head && !rl->excl.head && !rl->waiting.head)
		pthread_cond_broadcast(&rl->cv);
	pthread_mutex_unlock(&rl->mu);
	/* Outside the lock: a resumed command may submit I/O that completes (and unlocks) at
	 * once.  Each granted command is resumed exactly once, by the outermost unlock on this
	 * thread, so none can be freed before its turn (it holds its range, and a TMF cannot
	 * cancel a granted command). */
	resume_granted(run);
}

/* The waiter may run on and free c as soon as it sees rl_woken: touch nothing after. */
static void wake_blocked(struct sbc_cmd *c)
{
	struct scsi_rangelock *rl = c->dev->rl;

	pthread_mutex_lock(&rl->mu);
	c->rl_woken = true;
	pthread_cond_broadcast(&rl->cv);
	pthread_mutex_unlock(&rl->mu);
}

void sbc_range_lock_wait(struct sbc_cmd *c, uint64_t lba, uint64_t n, bool excl)
{
	struct scsi_rangelock *rl = c->dev->rl;

	c->rl_woken = false;
	if (sbc_range_lock(c, lba, n, excl, wake_blocked))
		return;
	/* The holders may be commands whose work is still queued for a core worker. */
	scsi_worker_block_begin();
	pthread_mutex_lock(&rl->mu);
	while (!c->rl_woken)
		pthread_cond_wait(&rl->cv, &rl->mu);
	pthread_mutex_unlock(&rl->mu);
	scsi_worker_block_end();
}

struct scsi_range_hold {
	struct sbc_cmd c;
};

struct scsi_range_hold *scsi_range_lock_blocking(struct scsi_dev *dev, uint64_t lba, uint64_t n,
						 bool excl)
{
	struct scsi_range_hold *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->c.dev = dev; /* no task: nothing for a TMF to cancel, the caller checks for aborts */
	sbc_range_lock_wait(&h->c, lba, n, excl);
	return h;
}

void scsi_range_unlock_blocking(struct scsi_range_hold *h)
{
	if (h)
		sbc_cmd_free(&h->c); /* unlocks; h is c */
}

void sbc_rangelock_hold(struct scsi_dev *dev)
{
	pthread_mutex_lock(&dev->rl->mu);
	dev->rl->background++;
	pthread_mutex_unlock(&dev->rl->mu);
}

/* The caller must not touch dev afterwards: destroy may be waiting for exactly this. */
void sbc_rangelock_unhold(struct scsi_dev *dev)
{
	struct scsi_rangelock *rl = dev->rl;

	pthread_mutex_lock(&rl->mu);
	rl->background--;
	pthread_cond_broadcast(&rl->cv);
	pthread_mutex_unlock(&rl->mu);
}

unsigned sbc_rangelock_waiters(struct scsi_dev *dev)
{
	struct scsi_rangelock *rl = dev->rl;
	unsigned n = 0;

	pthread_mutex_lock(&rl->mu);
	for (struct sbc_cmd *w = rl->waiting.head; w; w = w->rl.next)
		n++;
	pthread_mutex_unlock(&rl->mu);
	return n;
}
