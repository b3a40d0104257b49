/* Command execution: from a transport's struct scsi_task to a handler and back.
 *
 * On arrival (scsi_task_execute):
 *   1. LUN -> LU through the nexus's LUN table.  An unknown LUN still serves INQUIRY
 *      (peripheral qualifier 011b), REPORT LUNS and REQUEST SENSE; anything else gets
 *      LOGICAL UNIT NOT SUPPORTED (25/00).
 *   2. Opcode / service action -> table entry (20/00, or 24/00 pointing at the service action).
 *      With a pending UNIT ATTENTION on the LU, the UA is reported first.
 *   3. Control byte: NACA and LINK are not supported (24/00 with the bit pointed at).
 *   4. Task set admission (SIMPLE / ORDERED / HEAD OF QUEUE), see scsi_taskset.c.
 * A SIMPLE READ or WRITE enabled at once on an LU whose exceptions word (dev->exc) reads zero
 * and whose nexus has touched the LU before goes straight to its handler after the ALUA check:
 * with nothing pending there is no UA to report, no reservation, the medium is ready and
 * writable, no TMF can have aborted it yet, so steps 5 and 7-9 would take their locks only to
 * pass.  Anything else takes the full path.
 * When the task is enabled (at once, or when older tasks completed):
 *   5. UNIT ATTENTION, unless the command neither reports nor clears one.
 *   6. ALUA access state of the nexus's target port group.
 *   7. Reservations (SPC-2 and persistent).
 *   8. Write protection for commands that modify the medium (27/00).
 *   9. Medium state for commands that touch it: stopped 04/02, ejected 3A/00, sanitize 04/1B;
 *      while a sanitize runs, every command but INQUIRY, REPORT LUNS, REQUEST SENSE: 04/1B.
 *  10. The handler; its scsi_sr, now or later through scsi_task_complete().
 * Completion turns the scsi_sr into status + sense (fixed, or descriptor with D_SENSE),
 * computes residuals, leaves the task set and calls done(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ut_log.h"
#include "scsi/scsi_core.h"
#include "scsi/scsi_srcu.h"

/* ---- opcode table lookup ---- */

static pthread_once_t index_once = PTHREAD_ONCE_INIT;
static uint16_t op_first[256]; /* 1 + index of the first row with this opcode; 0 = none */

static void build_index(void)
{
	for (unsigned i = scsi_cmd_table_len; i-- > 0;)
		op_first[scsi_cmd_table[i].opcode] = (uint16_t)(i + 1);
}

/* Rows of one opcode are adjacent in the table (test_scsi_opcodes checks it is sorted). */
const struct scsi_cmd_desc *scsi_cmd_find(uint8_t opcode, uint16_t sa, bool use_sa,
					  const struct scsi_dev *dev)
{
	const struct scsi_cmd_desc *first = NULL;
	unsigned i;

	pthread_once(&index_once, build_index);
	i = op_first[opcode];
	if (!i)
		return NULL;
	for (i--; i < scsi_cmd_table_len && scsi_cmd_table[i].opcode == opcode; i++) {
		const struct scsi_cmd_desc *d = &scsi_cmd_table[i];
		if ((d->flags & SCSI_CF_SA) && (!use_sa || d->sa != sa))
			continue;
		if (scsi_cmd_for_type(d, dev))
			return d;
		if (!first)
			first = d;
	}
	return first;
}

const struct scsi_cmd_desc *scsi_cmd_lookup_dev(const uint8_t *cdb, const struct scsi_dev *dev)
{
	return scsi_cmd_find(cdb[0], cdb[1] & 0x1f, true, dev);
}

const struct scsi_cmd_desc *scsi_cmd_lookup(const uint8_t *cdb)
{
	return scsi_cmd_lookup_dev(cdb, NULL);
}

bool scsi_cmd_opcode_known(uint8_t opcode)
{
	pthread_once(&index_once, build_index);
	return op_first[opcode] != 0;
}

/* ---- completion ---- */

static void finish(struct scsi_task *t, enum scsi_sr sr, bool aborted, bool tas)
{
	struct scsi_dev *dev = t->core.dev;
	const struct scsi_sr_info *i;
	bool desc = false;

	if (aborted)
		sr = SR_ABORTED;
	i = scsi_sr_info(sr);
	if (dev && i->status == SAM_STAT_CHECK_CONDITION) /* the sense format matters only then */
		desc = scsi_dev_d_sense(dev);
	scsi_task_set_result(t, sr, desc);
	scsi_resid_compute(t, i->status == SAM_STAT_GOOD || i->status == SAM_STAT_CONDITION_MET);
	/* Aborted: the transport sends nothing, unless TAS asks for the TASK ABORTED status. */
	t->aborted = aborted && !tas;
	scsi_stats_task_done(t);
}

void scsi_task_complete(struct scsi_task *t, enum scsi_sr sr)
{
	struct scsi_dev *dev = t->core.dev;
	struct scsi_tmf_watch *watch = NULL;
	struct scsi_task *enabled = NULL;
	bool aborted = false, tas = false;

	if (t->core.flags & TF_DONE) {
		UT_LOG_RL(LOG_CRIT, "BUG: task %#llx completed twice (%s)", (unsigned long long)t->tag,
			  scsi_sr_info(sr)->name);
		return;
	}
	t->core.flags |= TF_DONE;
	if (sr == SR_ASYNC) /* a handler's bug: nothing will complete it later */
		sr = SR_INTERNAL_ERROR;
	if (dev && dev->ts)
		enabled = scsi_ts_leave(dev->ts, t, &aborted, &tas, &watch);
	finish(t, sr, aborted, tas);
	scsi_srcu_unlock(t->core.srcu_idx); /* nothing of the LU or its table is read after this */
	t->done(t);			    /* t may be gone after this */
	scsi_tmf_release(watch);
	while (enabled) {
		struct scsi_task *next = enabled->core.runq_next;
		scsi_exec_enabled(enabled);
		enabled = next;
	}
}

void scsi_task_complete_aborted(struct scsi_task *t, bool tas)
{
	t->core.flags |= TF_DONE;
	finish(t, SR_ABORTED, true, tas);
	scsi_srcu_unlock(t->core.srcu_idx);
	t->done(t);
}

/* Complete a task that has not entered a task set. */
static void complete_early(struct scsi_task *t, enum scsi_sr sr)
{
	t->core.flags |= TF_DONE;
	finish(t, sr, false, false);
	scsi_srcu_unlock(t->core.srcu_idx);
	t->done(t);
}

/* ---- admission checks when the task is enabled ---- */

static bool sanitizing(struct scsi_dev *dev)
{
	bool s;

	pthread_mutex_lock(&dev->lock);
	s = dev->sanitizing;
	pthread_mutex_unlock(&dev->lock);
	return s;
}

static enum scsi_sr admit(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	const struct scsi_cmd_desc *d = t->core.desc;
	uint8_t asc, ascq;
	enum scsi_sr sr;

	if (!dev)
		return SR_OK; /* only SCSI_CF_NO_LU commands get here without an LU */
	if (!(d->flags & SCSI_CF_NO_UA) && scsi_ua_pop(dev, t->nexus, &asc, &ascq))
		return scsi_unit_attention(t, asc, ascq);
	sr = scsi_alua_check(t);
	if (sr != SR_OK)
		return sr;
	sr = scsi_reservation_check(t);
	if (sr != SR_OK)
		return sr;
	if ((d->flags & (SCSI_CF_WRITE | SCSI_CF_CONFLICT_RO)) &&
	    scsi_dev_write_protected(dev, t->core.lun_ent))
		return SR_WRITE_PROTECTED;
	if (d->flags & SCSI_CF_MEDIA)
		return scsi_dev_readiness(dev);
	/* SBC-4: while a sanitize operation runs only INQUIRY, REPORT LUNS and REQUEST SENSE
	 * are served */
	if (!(d->flags & SCSI_CF_SANITIZE_OK) && sanitizing(dev))
		return SR_SANITIZE_IN_PROGRESS;
	return SR_OK;
}

/* Steps 5, 7-9 have nothing to say: see the top of this file and enum scsi_exc. */
static bool admit_fast(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	const struct scsi_cmd_desc *d = t->core.desc;

	if (!dev || !(d->flags & SCSI_CF_FAST) || t->attr == SCSI_ATTR_ORDERED ||
	    t->attr == SCSI_ATTR_HEAD_OF_QUEUE || scsi_exc_get(dev))
		return false;
	if (!scsi_ua_known(dev, t->nexus))
		return false; /* first contact: its power-on UA is due */
	if ((d->flags & SCSI_CF_WRITE) &&
	    ((t->core.lun_ent && t->core.lun_ent->read_only) || (dev->bs && dev->bs->read_only)))
		return false;
	__atomic_add_fetch(&dev->fast_admits, 1, __ATOMIC_RELAXED);
	return true;
}

static void run(struct scsi_task *t)
{
	enum scsi_sr sr;

	if (t->core.dev && scsi_ts_aborted(t->core.dev->ts, t)) {
		scsi_task_complete(t, SR_ABORTED);
		return;
	}
	sr = admit(t);
	if (sr == SR_OK)
		sr = t->core.desc->fn(t);
	if (sr != SR_ASYNC)
		scsi_task_complete(t, sr);
}

/* Per-thread dispatch queue: completions that enable further tasks add them here, and only
 * the outermost dispatcher on the thread runs them, so the stack stays flat. */
static __thread struct scsi_task *runq_head, *runq_tail;
static __thread bool dispatching;

void scsi_exec_enabled(struct scsi_task *t)
{
	t->core.runq_next = NULL;
	if (runq_tail)
		runq_tail->core.runq_next = t;
	else
		runq_head = t;
	runq_tail = t;
	if (dispatching)
		return;
	dispatching = true;
	while (runq_head) {
		struct scsi_task *x = runq_head;
		runq_head = x->core.runq_next;
		if (!runq_head)
			runq_tail = NULL;
		run(x);
	}
	dispatching = false;
}

/* ---- arrival ---- */

static bool control_byte_bad(struct scsi_task *t, const struct scsi_cmd_desc *d)
{
	unsigned last = d->cdb_len - 1;
	uint8_t c = t->cdb[last];

	if (c & 0x04) { /* NACA */
		scsi_invalid_cdb(t, (uint16_t)last, 2);
		return true;
	}
	if (c & 0x01) { /* LINK (obsolete) */
		scsi_invalid_cdb(t, (uint16_t)last, 0);
		return true;
	}
	return false;
}

void scsi_task_execute(struct scsi_task *t)
{
	const struct scsi_lun_entry *ent = NULL;
	const struct scsi_cmd_desc *d;
	struct scsi_dev *dev;
	uint8_t asc, ascq;

	memset(&t->core, 0, sizeof(t->core));
	t->core.sks_bit = -1;
	t->status = SAM_STAT_GOOD;
	t->sense_len = 0;
	t->data_len = 0;
	t->resid_kind = SCSI_RESID_NONE;
	t->resid = 0;
	t->aborted = false;

	/* From here to done() the task may use the LUN table and the LU it names: a live change
	 * that replaces them waits for it (scsi_srcu_synchronize) before freeing them. */
	t->core.srcu_idx = scsi_srcu_lock();
	if (t->nexus)
		t->core.luns = __atomic_load_n(&t->nexus->luns, __ATOMIC_ACQUIRE);
	ent = scsi_lun_lookup(t->core.luns, t->lun);
	dev = ent ? ent->dev : NULL;
	t->core.dev = dev;
	t->core.lun_ent = ent;

	d = scsi_cmd_lookup_dev(t->cdb, dev);
	t->core.desc = d;
	if (!dev && !(d && (d->flags & SCSI_CF_NO_LU))) {
		complete_early(t, SR_LUN_NOT_SUPPORTED);
		return;
	}
	if (!d || !scsi_cmd_on_lu(d, dev, NULL)) {
		/* an unsupported command still reports a pending UNIT ATTENTION first */
		if (scsi_ua_pop(dev, t->nexus, &asc, &ascq)) {
			complete_early(t, scsi_unit_attention(t, asc, ascq));
			return;
		}
		if (d && !(d->flags & SCSI_CF_SA)) /* in the table, but this LU does not offer it */
			complete_early(t, SR_INVALID_OPCODE);
		else if (d || scsi_cmd_opcode_known(t->cdb[0])) /* a service action it lacks */
			complete_early(t, scsi_invalid_cdb(t, 1, 4));
		else
			complete_early(t, SR_INVALID_OPCODE);
		return;
	}
	if (t->cdb_len && t->cdb_len < d->cdb_len) {
		complete_early(t, SR_INVALID_OPCODE); /* the transport cut the CDB short */
		return;
	}
	if (control_byte_bad(t, d)) {
		complete_early(t, SR_INVALID_FIELD_IN_CDB);
		return;
	}
	if (dev && dev->ts && !scsi_ts_enter(dev->ts, t))
		return; /* runs when older tasks complete */
	if (!dispatching && admit_fast(t)) {
		enum scsi_sr sr = scsi_alua_check(t);

		if (sr == SR_OK)
			sr = d->fn(t);
		if (sr != SR_ASYNC)
			scsi_task_complete(t, sr);
		return;
	}
	scsi_exec_enabled(t);
}

/* ---- nexus lifecycle ---- */

static uint64_t next_nexus_id;

void scsi_nexus_register(struct scsi_nexus *nx)
{
	nx->id = __atomic_add_fetch(&next_nexus_id, 1, __ATOMIC_RELAXED);
	scsi_stats_nexus_luns(nx, +1);
	scsi_core_lazy_init();
}

/* I_T nexus loss.  UNIT ATTENTIONs and persistent reservations are keyed on port names and
 * outlive the nexus; a medium removal prevention and an SPC-2 reservation do not. */
void scsi_nexus_unregister(struct scsi_nexus *nx)
{
	const struct scsi_lun_table *luns = __atomic_load_n(&nx->luns, __ATOMIC_ACQUIRE);

	scsi_stats_table_nexus(luns, -1);
	for (unsigned i = 0; luns && i < luns->n; i++) {
		struct scsi_dev *dev = luns->e[i].dev;
		if (!dev)
			continue;
		scsi_ua_clear_prevent(dev, nx);
		scsi_reservation_reset(dev, nx);
	}
}
