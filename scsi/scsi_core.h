/* Engine internals shared by the core's own files (scsi_exec.c, scsi_taskset.c, spc_ua.c,
 * spc_alua.c, scsi_sense.c, scsi_data.c).  Handlers include scsi_cmd.h; this header only adds
 * what the engine pieces need from each other, plus the task flag bits and the cancel hook
 * that the SBC range lock uses to make its waiters abortable. */
#ifndef UTGT_SCSI_CORE_H
#define UTGT_SCSI_CORE_H

#include "scsi/scsi_cmd.h"

/* task->core.flags: written only by the thread running the task.  Bits 0-15 belong to the
 * engine; bits 16-31 are free for the SBC code. */
enum {
	TF_DONE      = 1u << 0, /* scsi_task_complete() ran (guards against double completion) */
	TF_SKS_VALID = 1u << 1, /* core.sks_* hold a field pointer for the sense data */
	TF_SBC_FIRST = 1u << 16,
};

/* task->core.ts_flags: written under the task set lock only (TMFs run on other threads). */
enum {
	TS_IN        = 1u << 0, /* entered its LU's task set */
	TS_ENABLED   = 1u << 1, /* allowed to run (not waiting behind ORDERED / HEAD OF QUEUE) */
	TS_ABORTED   = 1u << 2, /* a TMF aborted it; completes as TASK ABORTED */
	TS_TAS       = 1u << 3, /* aborted by another nexus with TAS=1: the status is sent */
	TS_HOQ       = 1u << 4, /* admitted as HEAD OF QUEUE */
	TS_ORDERED   = 1u << 5, /* admitted as ORDERED */
};

/* dev->exc: what keeps SIMPLE READs and WRITEs off the lock-free admission of scsi_exec.c.
 * Each flag is set and cleared under the lock of the state it stands for; a reader that finds
 * the word zero after its task entered the task set skips every admission check but ALUA (which
 * takes no lock).  A change racing with that load orders the command before the change, as the
 * locked checks would have if the command had been a moment earlier. */
enum scsi_exc {
	SCSI_EXC_UA       = 1u << 0, /* ua->mu: a UNIT ATTENTION is pending for some nexus */
	SCSI_EXC_RESERVED = 1u << 1, /* pr->lock: an SPC-2 or persistent reservation exists */
	SCSI_EXC_MEDIUM   = 1u << 2, /* dev->lock: stopped, no medium, sanitizing, or SWP set */
	SCSI_EXC_TASKSET  = 1u << 3, /* ts->mu: ORDERED / HEAD OF QUEUE in the set, or a queue */
	SCSI_EXC_RANGE    = 1u << 4, /* rl->mu: an exclusive range lock held or waited for */
	SCSI_EXC_TMF_ONE  = 1u << 8, /* bits 8-31 count the TMFs running on the LU */
};

/* Set or clear flag in dev->exc (the caller holds the flag's lock). */
static inline void scsi_exc_set(struct scsi_dev *dev, uint32_t flag, bool on)
{
	if (on)
		__atomic_fetch_or(&dev->exc, flag, __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_and(&dev->exc, ~flag, __ATOMIC_SEQ_CST);
}

static inline uint32_t scsi_exc_get(const struct scsi_dev *dev)
{
	return __atomic_load_n(&dev->exc, __ATOMIC_ACQUIRE);
}

/* Lazily start the worker pool (2 threads) when a test or program never called
 * scsi_core_init(). */
void scsi_core_lazy_init(void);

/* ---- counters (scsi_stats.c) ---- */
/* A command completed (status, data_len final): count it on its nexus and its LU. */
void scsi_stats_task_done(const struct scsi_task *t);
/* A nexus registered (+1) / unregistered (-1): each LU it addresses counts it. */
void scsi_stats_nexus_luns(const struct scsi_nexus *nx, int delta);
/* The same for one LUN table (a nexus moving from one table to another). */
void scsi_stats_table_nexus(const struct scsi_lun_table *t, int delta);

/* ---- task set (scsi_taskset.c) ---- */
/* Enter t into its LU's task set.  Returns true when t may run now; false when it waits (it is
 * run later through scsi_exec_enabled() when its turn comes, or completed as aborted). */
bool scsi_ts_enter(struct scsi_taskset *ts, struct scsi_task *t);
/* Leave the task set at completion (before done()).  Returns the tasks this made runnable
 * (chained on core.runq_next) for the caller to pass to scsi_exec_enabled() after done();
 * *aborted / *tas tell how a TMF left the task; *watch is the TMF bookkeeping to hand to
 * scsi_tmf_release() after done(). */
struct scsi_tmf_watch;
struct scsi_task *scsi_ts_leave(struct scsi_taskset *ts, struct scsi_task *t, bool *aborted,
				bool *tas, struct scsi_tmf_watch **watch);
/* Has a TMF aborted t (checked before an enabled task starts)? */
bool scsi_ts_aborted(struct scsi_taskset *ts, const struct scsi_task *t);
/* After t->done() of an aborted task: let the TMFs waiting for it finish. */
void scsi_tmf_release(struct scsi_tmf_watch *watch);

/* ---- dispatch (scsi_exec.c) ---- */
/* Run a task whose turn came (admission checks, then the handler).  Safe to call from any
 * thread, including from inside a completion: nested calls are queued per thread and run by
 * the outermost caller, so a long chain of queued tasks never recurses. */
void scsi_exec_enabled(struct scsi_task *t);
/* Complete a task that never ran its handler (or was pulled off a wait queue), as aborted by a
 * TMF; tas: send TASK ABORTED status rather than nothing. */
void scsi_task_complete_aborted(struct scsi_task *t, bool tas);

/* ---- residuals (scsi_data.c) ---- */
/* Fill data_len / resid_kind / resid from what the command wanted and exp_xfer_len. */
void scsi_resid_compute(struct scsi_task *t, bool good);

/* ---- UNIT ATTENTION (spc_ua.c) ---- */
/* Take the highest-priority pending UA of t's nexus on dev (creating the nexus's power-on UA
 * the first time it touches the LU).  Returns false when none is pending. */
bool scsi_ua_pop(struct scsi_dev *dev, const struct scsi_nexus *nx, uint8_t *asc, uint8_t *ascq);
/* Has nx touched dev before (its power-on UA already made)?  Lock-free; false when unsure
 * (the slow path then finds out), never true for a nexus that has not. */
bool scsi_ua_known(struct scsi_dev *dev, const struct scsi_nexus *nx);
/* Is a UA pending for nx on dev (QUERY ASYNCHRONOUS EVENT)?  Does not consume it. */
bool scsi_ua_peek(struct scsi_dev *dev, const struct scsi_nexus *nx, uint8_t *asc, uint8_t *ascq);
/* PREVENT ALLOW MEDIUM REMOVAL state per nexus (kept with the UA state, which is the per-LU
 * per-nexus record); dev->prevent is kept equal to the number of nexuses preventing.
 * clear: nx NULL clears every nexus's (LU reset). */
void scsi_ua_set_prevent(struct scsi_dev *dev, const struct scsi_nexus *nx, bool on);
void scsi_ua_clear_prevent(struct scsi_dev *dev, const struct scsi_nexus *nx);
/* Relative target port ids of every nexus that has touched dev (for the implicit TPG). */
unsigned scsi_ua_known_ports(struct scsi_dev *dev, uint16_t *rtpis, unsigned max);

/* ---- ALUA (spc_alua.c) ---- */
/* Admission rule: NOT READY when t's target port group is standby/unavailable/transitioning
 * and the command is not allowed there. */
enum scsi_sr scsi_alua_check(struct scsi_task *t);
/* Medium access through a port group in this state: SR_OK or the NOT READY reason. */
enum scsi_sr scsi_alua_access(enum scsi_alua_state state);
/* The implicit group every LU without a DEVICE_GROUP is in. */
#define SCSI_DEFAULT_TPG_ID 0

/* ---- LU state read under dev->lock (scsi_dev.c) ---- */
/* The device-specific parameter WP bit and the D_SENSE used for sense data. */
bool scsi_dev_write_protected(const struct scsi_dev *dev, const struct scsi_lun_entry *ent);
bool scsi_dev_d_sense(struct scsi_dev *dev);
/* The medium's state as a sense reason, SR_OK when ready: removed, stopped or sanitizing. */
enum scsi_sr scsi_dev_readiness(struct scsi_dev *dev);
/* After a change of stopped, medium_removed, sanitizing or mode.swp (caller holds dev->lock,
 * or owns dev alone): SCSI_EXC_MEDIUM follows them. */
void scsi_dev_medium_changed(struct scsi_dev *dev);

/* ---- INQUIRY (spc_inquiry.c, spc_vpd.c) ---- */
void scsi_put_ascii(uint8_t *dst, size_t width, const char *s);
/* Byte 0 of INQUIRY data, standard and VPD: peripheral qualifier and device type. */
uint8_t scsi_inquiry_peripheral(const struct scsi_dev *dev);
enum scsi_sr spc_vpd_page(struct scsi_task *t, uint8_t page, uint16_t alloc);

/* Highest set bit of a CDB byte, for field pointers at reserved bits. */
static inline int8_t scsi_msb(uint8_t v)
{
	return v ? (int8_t)(7 - __builtin_clz((unsigned)v << 24)) : -1;
}

#endif
