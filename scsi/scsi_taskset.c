/* The per-LU task set (SAM-5 8.6/8.7: SIMPLE, ORDERED, HEAD OF QUEUE) and task management
 * functions.
 *
 * Admission: every task addressed to an LU is linked into its task set in arrival order.
 *   HEAD OF QUEUE runs at once;
 *   ORDERED runs when no older task is in the set;
 *   SIMPLE runs when no older ORDERED or HEAD OF QUEUE task is in the set.
 * When a task leaves, the queued ones whose condition now holds are handed back to the
 * dispatcher.
 *
 * Aborting: a queued task (never started, or parked on a wait queue that can give it back
 * through core.cancel) is completed at once as aborted.  A task already started (its I/O is
 * in a backstore) cannot be recalled: it is marked aborted, finishes, and completes as TASK
 * ABORTED.  The TMF holds one count per such task and one for itself; each task's count is
 * dropped after that task's done() returned, so tmf->done runs only when every task the TMF
 * touched has been fully completed. */
#include <stdlib.h>

#include "scsi/scsi_core.h"
#include "scsi/scsi_srcu.h"

struct scsi_taskset {
	pthread_mutex_t mu;
	struct scsi_task *head, *tail;
	unsigned n;        /* tasks in the set */
	unsigned blockers; /* ORDERED + HEAD OF QUEUE tasks in the set */
	unsigned queued;   /* tasks not yet enabled */
};

/* One running TMF.  pending counts: 1 for the TMF itself + 1 per started task it aborted. */
struct tmf_rec {
	struct scsi_tmf *tmf;
	unsigned pending;
	bool on_stack; /* owned by a waiting caller (scsi_ts_abort_nexuses), not freed here */
	bool srcu;     /* a TMF from a transport: holds a read-side section until done() */
	unsigned srcu_idx;
	/* LUs whose SCSI_EXC count this TMF holds until done(): one, or every LU of a table */
	struct scsi_dev *dev;
	const struct scsi_lun_table *luns;
};

struct scsi_tmf_watch {
	struct tmf_rec *rec;
	struct scsi_tmf_watch *next;
};

static pthread_mutex_t tmf_mu = PTHREAD_MUTEX_INITIALIZER;

struct scsi_taskset *scsi_taskset_create(void)
{
	struct scsi_taskset *ts = calloc(1, sizeof(*ts));

	if (ts)
		pthread_mutex_init(&ts->mu, NULL);
	return ts;
}

void scsi_taskset_destroy(struct scsi_taskset *ts)
{
	if (!ts)
		return;
	pthread_mutex_destroy(&ts->mu);
	free(ts);
}

static bool is_blocker(const struct scsi_task *t)
{
	return t->core.ts_flags & (TS_HOQ | TS_ORDERED);
}

/* Caller holds ts->mu: a SIMPLE task entering now would not run at once, or would have to be
 * checked against a blocker (SCSI_EXC_TASKSET keeps the lock-free admission off). */
static void sync_exc(struct scsi_taskset *ts, struct scsi_dev *dev)
{
	if (dev)
		scsi_exc_set(dev, SCSI_EXC_TASKSET, ts->blockers || ts->queued);
}

bool scsi_ts_enter(struct scsi_taskset *ts, struct scsi_task *t)
{
	enum scsi_task_attr attr = t->attr;
	bool enabled;

	if (t->core.desc && (t->core.desc->flags & SCSI_CF_HOQ_ONLY))
		attr = SCSI_ATTR_HEAD_OF_QUEUE;
	/* ACA tasks only make sense with NACA, which we do not offer: treat them as SIMPLE. */
	t->core.ts_flags = TS_IN;
	if (attr == SCSI_ATTR_HEAD_OF_QUEUE)
		t->core.ts_flags |= TS_HOQ;
	else if (attr == SCSI_ATTR_ORDERED)
		t->core.ts_flags |= TS_ORDERED;

	pthread_mutex_lock(&ts->mu);
	if (attr == SCSI_ATTR_HEAD_OF_QUEUE)
		enabled = true;
	else if (attr == SCSI_ATTR_ORDERED)
		enabled = ts->n == 0;
	else
		enabled = ts->blockers == 0;
	t->core.next = NULL;
	t->core.prev = ts->tail;
	if (ts->tail)
		ts->tail->core.next = t;
	else
		ts->head = t;
	ts->tail = t;
	ts->n++;
	if (is_blocker(t))
		ts->blockers++;
	if (enabled)
		t->core.ts_flags |= TS_ENABLED;
	else
		ts->queued++;
	if (!enabled || is_blocker(t))
		sync_exc(ts, t->core.dev);
	pthread_mutex_unlock(&ts->mu);
	return enabled;
}

/* Caller holds ts->mu. */
static void unlink_locked(struct scsi_taskset *ts, struct scsi_task *t)
{
	if (t->core.prev)
		t->core.prev->core.next = t->core.next;
	else
		ts->head = t->core.next;
	if (t->core.next)
		t->core.next->core.prev = t->core.prev;
	else
		ts->tail = t->core.prev;
	t->core.next = t->core.prev = NULL;
	ts->n--;
	if (is_blocker(t))
		ts->blockers--;
	if (!(t->core.ts_flags & TS_ENABLED))
		ts->queued--;
	t->core.ts_flags &= ~TS_IN;
}

/* Caller holds ts->mu.  Enable queued tasks whose condition holds; chain them on runq_next. */
static struct scsi_task *enable_locked(struct scsi_taskset *ts)
{
	struct scsi_task *out = NULL, **tailp = &out;
	bool seen_any = false, seen_blocker = false;

	for (struct scsi_task *t = ts->head; t && ts->queued; t = t->core.next) {
		if (!(t->core.ts_flags & TS_ENABLED)) {
			bool ok = (t->core.ts_flags & TS_ORDERED) ? !seen_any : !seen_blocker;
			if (ok) {
				t->core.ts_flags |= TS_ENABLED;
				ts->queued--;
				t->core.runq_next = NULL;
				*tailp = t;
				tailp = &t->core.runq_next;
			}
		}
		seen_any = true;
		if (is_blocker(t))
			seen_blocker = true;
	}
	return out;
}

struct scsi_task *scsi_ts_leave(struct scsi_taskset *ts, struct scsi_task *t, bool *aborted,
				bool *tas, struct scsi_tmf_watch **watch)
{
	struct scsi_task *en = NULL;

	pthread_mutex_lock(&ts->mu);
	if (t->core.ts_flags & TS_IN) {
		bool blocker = is_blocker(t);

		unlink_locked(ts, t);
		if (ts->queued)
			en = enable_locked(ts);
		if (blocker || en)
			sync_exc(ts, t->core.dev);
	}
	*aborted = t->core.ts_flags & TS_ABORTED;
	*tas = t->core.ts_flags & TS_TAS;
	*watch = t->core.tmf_watch;
	t->core.tmf_watch = NULL;
	pthread_mutex_unlock(&ts->mu);
	return en;
}

bool scsi_ts_aborted(struct scsi_taskset *ts, const struct scsi_task *t)
{
	bool a;

	pthread_mutex_lock(&ts->mu);
	a = t->core.ts_flags & TS_ABORTED;
	pthread_mutex_unlock(&ts->mu);
	return a;
}

/* Count the TMF on its LU(s): while any runs, commands take the locked admission.  dev or
 * luns stays valid until done() (the TMF's read-side section, or the caller's command). */
static void tmf_hold(struct tmf_rec *rec, struct scsi_dev *dev, const struct scsi_lun_table *luns)
{
	rec->dev = dev;
	rec->luns = luns;
	if (dev)
		__atomic_add_fetch(&dev->exc, SCSI_EXC_TMF_ONE, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; luns && i < luns->n; i++)
		if (luns->e[i].dev)
			__atomic_add_fetch(&luns->e[i].dev->exc, SCSI_EXC_TMF_ONE, __ATOMIC_SEQ_CST);
}

static void tmf_unhold(struct tmf_rec *rec)
{
	if (rec->dev)
		__atomic_sub_fetch(&rec->dev->exc, SCSI_EXC_TMF_ONE, __ATOMIC_RELEASE);
	for (unsigned i = 0; rec->luns && i < rec->luns->n; i++)
		if (rec->luns->e[i].dev)
			__atomic_sub_fetch(&rec->luns->e[i].dev->exc, SCSI_EXC_TMF_ONE,
					   __ATOMIC_RELEASE);
}

static void tmf_put(struct tmf_rec *rec)
{
	bool last;

	pthread_mutex_lock(&tmf_mu);
	last = --rec->pending == 0;
	pthread_mutex_unlock(&tmf_mu);
	if (last) {
		struct scsi_tmf *tmf = rec->tmf;
		bool srcu = rec->srcu;
		unsigned idx = rec->srcu_idx;
		tmf_unhold(rec);
		if (!rec->on_stack)
			free(rec);
		if (srcu)
			scsi_srcu_unlock(idx);
		tmf->done(tmf); /* rec must not be touched from here on */
	}
}

void scsi_tmf_release(struct scsi_tmf_watch *w)
{
	while (w) {
		struct scsi_tmf_watch *next = w->next;
		tmf_put(w->rec);
		free(w);
		w = next;
	}
}

static void run_chain(struct scsi_task *t)
{
	while (t) {
		struct scsi_task *next = t->core.runq_next;
		scsi_exec_enabled(t);
		t = next;
	}
}

/* ---- task management ---- */

enum match_kind {
	M_TAG,    /* this nexus, this tag */
	M_NEXUS,  /* every task of this nexus */
	M_ALL,    /* every task */
	M_PRED,   /* tasks whose nexus a predicate accepts (PREEMPT AND ABORT) */
};

struct pred {
	bool (*match)(const struct scsi_nexus *nx, void *arg);
	void *arg;
	const struct scsi_task *keep;
};

/* Nexuses that lost tasks to another nexus's TMF (for 2F/00). */
struct victims {
	const struct scsi_nexus **nx;
	unsigned n, cap;
};

static void victims_add(struct victims *v, const struct scsi_nexus *nx)
{
	for (unsigned i = 0; i < v->n; i++)
		if (v->nx[i] == nx)
			return;
	if (v->n == v->cap) {
		unsigned cap = v->cap ? v->cap * 2 : 4;
		const struct scsi_nexus **p = realloc(v->nx, cap * sizeof(*p));
		if (!p)
			return; /* the UA is lost, the abort is not */
		v->nx = p;
		v->cap = cap;
	}
	v->nx[v->n++] = nx;
}

/* Abort the matching tasks of one LU.  Returns how many matched. */
static unsigned abort_on_lu(struct scsi_dev *dev, struct tmf_rec *rec, enum match_kind kind,
			    uint64_t tag, struct victims *victims, const struct pred *pred)
{
	const struct scsi_nexus *nx = rec->tmf->nexus;
	struct scsi_taskset *ts = dev->ts;
	struct scsi_task *now = NULL, **nowp = &now, *en = NULL, *t, *next;
	unsigned matched = 0;
	bool tas_mode;

	pthread_mutex_lock(&dev->lock);
	tas_mode = dev->mode.tas;
	pthread_mutex_unlock(&dev->lock);

	pthread_mutex_lock(&ts->mu);
	for (t = ts->head; t; t = next) {
		next = t->core.next;
		if (kind == M_PRED) {
			if (t == pred->keep || !pred->match(t->nexus, pred->arg))
				continue;
		} else if (kind != M_ALL && t->nexus != nx) {
			continue;
		}
		if (kind == M_TAG && t->tag != tag)
			continue;
		matched++;
		t->core.ts_flags |= TS_ABORTED;
		if (t->nexus != nx) {
			if (tas_mode)
				t->core.ts_flags |= TS_TAS;
			else if (victims)
				victims_add(victims, t->nexus);
		}
		if (!(t->core.ts_flags & TS_ENABLED) || (t->core.cancel && t->core.cancel(t))) {
			unlink_locked(ts, t);
			t->core.runq_next = NULL;
			*nowp = t;
			nowp = &t->core.runq_next;
			continue;
		}
		/* started: wait for it */
		struct scsi_tmf_watch *w = malloc(sizeof(*w));
		if (!w)
			continue; /* it still completes as aborted; only the wait is lost */
		w->rec = rec;
		w->next = t->core.tmf_watch;
		t->core.tmf_watch = w;
		pthread_mutex_lock(&tmf_mu);
		rec->pending++;
		pthread_mutex_unlock(&tmf_mu);
	}
	if (now && ts->queued)
		en = enable_locked(ts);
	sync_exc(ts, dev);
	pthread_mutex_unlock(&ts->mu);

	for (t = now; t; t = next) {
		next = t->core.runq_next;
		scsi_task_complete_aborted(t, t->core.ts_flags & TS_TAS);
	}
	run_chain(en);
	return matched;
}

static bool find_task(struct scsi_dev *dev, const struct scsi_nexus *nx, bool any, uint64_t tag)
{
	bool found = false;

	pthread_mutex_lock(&dev->ts->mu);
	for (struct scsi_task *t = dev->ts->head; t && !found; t = t->core.next)
		found = t->nexus == nx && (any || t->tag == tag);
	pthread_mutex_unlock(&dev->ts->mu);
	return found;
}

static void raise_victims(struct scsi_dev *dev, struct victims *v)
{
	for (unsigned i = 0; i < v->n; i++) /* COMMANDS CLEARED BY ANOTHER INITIATOR */
		scsi_ua_raise(dev, v->nx[i]->initiator_port, v->nx[i]->rel_tgt_id, 0x2f, 0x00);
	v->n = 0;
}

static void lu_reset_published(void *arg)
{
	tmf_put(arg);
}

/* SAM-5: a logical unit (or target) reset establishes its UNIT ATTENTION for every I_T nexus,
 * the one that requested it included (libiscsi's MultipathIO.Reset checks every path), and
 * for an LU that several gateways serve on their I_T nexuses too: the TMF then completes once
 * every gateway has the reset in force (spc_pr_check.c). */
static void lu_reset(struct scsi_dev *dev, struct tmf_rec *rec, uint8_t asc, uint8_t ascq)
{
	abort_on_lu(dev, rec, M_ALL, 0, NULL, NULL);
	scsi_ua_clear_prevent(dev, NULL); /* a reset clears PREVENT ALLOW MEDIUM REMOVAL */
	scsi_ua_raise_all(dev, NULL, asc, ascq);
	pthread_mutex_lock(&tmf_mu);
	rec->pending++;
	pthread_mutex_unlock(&tmf_mu);
	if (!scsi_reservation_lu_reset(dev, asc, ascq, lu_reset_published, rec))
		tmf_put(rec);
}

void scsi_tmf_execute(struct scsi_tmf *tmf)
{
	const struct scsi_nexus *nx = tmf->nexus;
	const struct scsi_lun_table *luns;
	const struct scsi_lun_entry *ent;
	struct scsi_dev *dev;
	struct victims victims = {0};
	struct tmf_rec *rec;
	uint8_t asc, ascq;

	tmf->resp = SCSI_TMF_COMPLETE;
	rec = calloc(1, sizeof(*rec));
	if (!rec) {
		tmf->resp = SCSI_TMF_REJECTED;
		tmf->done(tmf);
		return;
	}
	rec->tmf = tmf;
	rec->pending = 1;
	/* the LUN table and its LUs stay until done(), as for a command (scsi_srcu.h) */
	rec->srcu = true;
	rec->srcu_idx = scsi_srcu_lock();
	luns = nx ? __atomic_load_n(&nx->luns, __ATOMIC_ACQUIRE) : NULL;
	ent = scsi_lun_lookup(luns, tmf->lun);
	dev = ent ? ent->dev : NULL;

	switch (tmf->fn) {
	case SCSI_TMF_ABORT_TASK:
	case SCSI_TMF_ABORT_TASK_SET:
	case SCSI_TMF_CLEAR_TASK_SET:
	case SCSI_TMF_LOGICAL_UNIT_RESET:
	case SCSI_TMF_QUERY_TASK:
	case SCSI_TMF_QUERY_TASK_SET:
	case SCSI_TMF_QUERY_ASYNC_EVENT:
		if (!dev) {
			tmf->resp = SCSI_TMF_NO_LUN;
			goto out;
		}
		break;
	default:
		break;
	}
	if (tmf->fn == SCSI_TMF_I_T_NEXUS_RESET || tmf->fn == SCSI_TMF_TARGET_WARM_RESET ||
	    tmf->fn == SCSI_TMF_TARGET_COLD_RESET)
		tmf_hold(rec, NULL, luns);
	else
		tmf_hold(rec, dev, NULL);

	switch (tmf->fn) {
	case SCSI_TMF_ABORT_TASK:
		if (!abort_on_lu(dev, rec, M_TAG, tmf->ref_tag, NULL, NULL))
			tmf->resp = SCSI_TMF_NO_TASK;
		break;
	case SCSI_TMF_ABORT_TASK_SET:
		abort_on_lu(dev, rec, M_NEXUS, 0, NULL, NULL);
		break;
	case SCSI_TMF_CLEAR_TASK_SET:
		abort_on_lu(dev, rec, M_ALL, 0, &victims, NULL);
		raise_victims(dev, &victims);
		break;
	case SCSI_TMF_LOGICAL_UNIT_RESET:
		lu_reset(dev, rec, 0x29, 0x03); /* BUS DEVICE RESET FUNCTION OCCURRED */
		break;
	case SCSI_TMF_I_T_NEXUS_RESET:
		for (unsigned i = 0; luns && i < luns->n; i++) {
			struct scsi_dev *d = luns->e[i].dev;
			abort_on_lu(d, rec, M_NEXUS, 0, NULL, NULL);
			scsi_ua_clear_prevent(d, nx);
			scsi_reservation_reset(d, nx);
			scsi_ua_raise(d, nx->initiator_port, nx->rel_tgt_id, 0x29, 0x07);
		}
		break;
	case SCSI_TMF_TARGET_WARM_RESET:
	case SCSI_TMF_TARGET_COLD_RESET:
		/* cold reset is a power cycle as far as the initiators can tell: POWER ON OCCURRED;
		 * warm reset: SCSI BUS RESET OCCURRED */
		for (unsigned i = 0; luns && i < luns->n; i++)
			lu_reset(luns->e[i].dev, rec, 0x29,
				 tmf->fn == SCSI_TMF_TARGET_COLD_RESET ? 0x01 : 0x02);
		break;
	case SCSI_TMF_QUERY_TASK:
		tmf->resp = find_task(dev, nx, false, tmf->ref_tag) ? SCSI_TMF_SUCCEEDED
								     : SCSI_TMF_COMPLETE;
		break;
	case SCSI_TMF_QUERY_TASK_SET:
		tmf->resp = find_task(dev, nx, true, 0) ? SCSI_TMF_SUCCEEDED : SCSI_TMF_COMPLETE;
		break;
	case SCSI_TMF_QUERY_ASYNC_EVENT:
		tmf->resp = scsi_ua_peek(dev, nx, &asc, &ascq) ? SCSI_TMF_SUCCEEDED
							       : SCSI_TMF_COMPLETE;
		break;
	case SCSI_TMF_CLEAR_ACA: /* NormACA is 0: there is never an ACA to clear */
	default:
		tmf->resp = SCSI_TMF_NOT_SUPPORTED;
		break;
	}
out:
	free(victims.nx);
	tmf_put(rec);
}

/* PREEMPT AND ABORT: a TMF-like abort run by the PR code on a core worker, which waits here
 * until every aborted task has completed. */
struct sync_tmf {
	struct scsi_tmf tmf;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
};

static void sync_tmf_done(struct scsi_tmf *tmf)
{
	struct sync_tmf *s = tmf->priv;

	pthread_mutex_lock(&s->mu);
	s->done = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

void scsi_ts_abort_nexuses(struct scsi_dev *dev,
			   bool (*match)(const struct scsi_nexus *nx, void *arg), void *arg,
			   const struct scsi_task *keep)
{
	struct sync_tmf s = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	struct pred pred = {match, arg, keep};
	struct tmf_rec rec = {.tmf = &s.tmf, .pending = 1, .on_stack = true};

	s.tmf.fn = SCSI_TMF_ABORT_TASK_SET;
	s.tmf.nexus = keep ? keep->nexus : NULL;
	s.tmf.done = sync_tmf_done;
	s.tmf.priv = &s;
	tmf_hold(&rec, dev, NULL);
	abort_on_lu(dev, &rec, M_PRED, 0, NULL, &pred);
	tmf_put(&rec);
	/* An aborted task may be a job still queued for a worker: let the pool replace us
	 * while we wait (one worker waiting here must not starve it). */
	scsi_worker_block_begin();
	pthread_mutex_lock(&s.mu);
	while (!s.done)
		pthread_cond_wait(&s.cv, &s.mu);
	pthread_mutex_unlock(&s.mu);
	scsi_worker_block_end();
	pthread_mutex_destroy(&s.mu);
	pthread_cond_destroy(&s.cv);
}
