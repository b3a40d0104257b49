/* Persistent reservations: the state one LU keeps (registrations, the reservation, the
 * generation counter, APTPL) and the helpers the PR files share.  Private to scsi/spc_pr*.c,
 * scsi/spc_reserve.c and scsi/spc_xcopy*.c.
 *
 * Identity.  A registration names an I_T nexus by the initiator port's name (the iSCSI
 * "iqn...,i,0x<isid>" or the SRP port id in hex) and the relative target port identifier, never
 * by a connection object, so it survives a reconnect.  Two widenings come from SPC-4:
 *   - ALL_TG_PT=1 registers the initiator port through every target port: we keep one
 *     registration that matches any relative target port id;
 *   - an iSCSI TransportID in format 00 names every port of an iSCSI name (any ISID): the
 *     registration matches any nexus whose initiator name is that name.
 * Exactly one registration matches a nexus (REGISTER refuses to create a second).
 *
 * SPC-2.  A RESERVE(6/10) reservation is part of the same state (struct pr_state's spc2
 * fields), so a store shared by several gateways carries it with the persistent reservations,
 * under the same version: a RESERVE through one gateway is a conflict on every other one.
 *
 * Locking.  pr->lock protects everything here.  It is never held while calling into another subsystem (UNIT ATTENTION, task set): side
 * effects are collected in a struct pr_effects under the lock and applied after it. */
#ifndef UTGT_SPC_PR_H
#define UTGT_SPC_PR_H

#include <limits.h>
#include <pthread.h>

#include "scsi/pr_store.h"
#include "scsi/scsi_cmd.h"

/* SPC-4 persistent reservation types (the TYPE field). */
enum pr_type {
	PR_TYPE_NONE = 0,
	PR_TYPE_WE = 1,	   /* Write Exclusive */
	PR_TYPE_EA = 3,	   /* Exclusive Access */
	PR_TYPE_WE_RO = 5, /* Write Exclusive - Registrants Only */
	PR_TYPE_EA_RO = 6, /* Exclusive Access - Registrants Only */
	PR_TYPE_WE_AR = 7, /* Write Exclusive - All Registrants */
	PR_TYPE_EA_AR = 8, /* Exclusive Access - All Registrants */
};

#define PR_SCOPE_LU 0

/* PERSISTENT RESERVE OUT service actions. */
enum pr_out_sa {
	PRO_REGISTER = 0,
	PRO_RESERVE = 1,
	PRO_RELEASE = 2,
	PRO_CLEAR = 3,
	PRO_PREEMPT = 4,
	PRO_PREEMPT_AND_ABORT = 5,
	PRO_REGISTER_IGNORE = 6,
	PRO_REGISTER_AND_MOVE = 7,
	PRO_REPLACE_LOST = 8,
};

/* PERSISTENT RESERVE IN service actions. */
enum pr_in_sa {
	PRI_READ_KEYS = 0,
	PRI_READ_RESERVATION = 1,
	PRI_REPORT_CAPABILITIES = 2,
	PRI_READ_FULL_STATUS = 3,
};

/* Unit attention ASCQs under ASC 2Ah. */
enum {
	PR_UA_RESERVATIONS_PREEMPTED = 0x03,
	PR_UA_RESERVATIONS_RELEASED = 0x04,
	PR_UA_REGISTRATIONS_PREEMPTED = 0x05,
};

#define PR_PORT_MAX (SCSI_NAME_MAX + 24)
/* Longest state text or change payload (spc_pr_file.c's format). */
#define PR_TEXT_MAX PR_STORE_TEXT_MAX
/* At most this many registrations per LU; more gets INSUFFICIENT REGISTRATION RESOURCES. */
#define PR_MAX_REGS 256

/* An initiator port, or every port of an iSCSI name when name_only. */
struct pr_port {
	enum scsi_proto_id proto;
	bool name_only;
	char id[PR_PORT_MAX];
};

struct pr_reg {
	struct pr_port port;
	uint16_t rtpi;	/* target port registered through (reported by READ FULL STATUS) */
	bool all_tg_pt; /* matches every target port */
	uint64_t key;
};

struct pr_state {
	uint32_t generation;
	bool aptpl;   /* PTPL_A: the last REGISTER / REGISTER AND MOVE had APTPL=1 */
	uint8_t type; /* PR_TYPE_NONE when no persistent reservation */
	int holder;   /* index into regs; -1 for the all-registrants types */
	/* An SPC-2 RESERVE(6/10) in force: the whole LU for the I_T nexus (spc2_port,
	 * spc2_rtpi).  A shared store keeps it with the rest; a state file never does, since a
	 * power on ends it (SPC-2 5.5.1). */
	bool spc2;
	uint16_t spc2_rtpi;
	struct pr_port spc2_port;
	unsigned nregs;
	struct pr_reg regs[PR_MAX_REGS];
};

struct scsi_pr {
	struct scsi_dev *dev;
	pthread_mutex_t lock;
	struct pr_state st;
	/* Where the state is kept (scsi/pr_store.h): the state directory, the Ceph cluster, or
	 * NULL (no APTPL).  ver: the store's version st was loaded from or stored as. */
	struct pr_store *store;
	uint64_t ver;
	/* One PERSISTENT RESERVE OUT at a time from compare-and-store to publish, so this
	 * gateway's own commands never race each other for a version. */
	pthread_mutex_t out_lock;
	/* Any reservation (SPC-2 or persistent) in force?  Written under the lock, read without
	 * it by the conflict check so commands pay nothing for the lock while none exists. */
	bool active;
	/* Changes stored and published from a thread of their own (a reset or an I_T nexus
	 * loss on a shared store: spc_pr_check.c); destroy waits for them.  Under lock. */
	unsigned async;
	pthread_cond_t async_done;
};

/* Side effects decided under pr->lock and applied after it is dropped. */
struct pr_ua {
	struct pr_port port;
	uint16_t rtpi;
	bool all_tg_pt;
	uint8_t ascq;
};

struct pr_effects {
	unsigned nua;
	struct pr_ua ua[PR_MAX_REGS * 2];
	unsigned nabort;
	struct pr_reg abort[PR_MAX_REGS]; /* PREEMPT AND ABORT: the preempted nexuses */
	/* A LOGICAL UNIT RESET through another gateway (SAM-5: it affects every I_T nexus of
	 * the LU): abort every task, end PREVENT, raise this UNIT ATTENTION (29/xx) on every
	 * nexus.  0: none. */
	uint8_t reset_asc, reset_ascq;
};

/* ---- identity (spc_pr.c) ---- */
/* The port of a nexus, as a registration would name it. */
void pr_port_of_nexus(const struct scsi_nexus *nx, struct pr_port *out);
bool pr_reg_matches(const struct pr_reg *r, const struct scsi_nexus *nx);
/* Index of the registration the nexus acts through, or -1. */
int pr_find(const struct pr_state *st, const struct scsi_nexus *nx);
/* Two registrations that would name an overlapping set of I_T nexuses. */
bool pr_reg_overlaps(const struct pr_reg *a, const struct pr_reg *b);
static inline bool pr_type_all_reg(uint8_t type)
{
	return type == PR_TYPE_WE_AR || type == PR_TYPE_EA_AR;
}
static inline bool pr_type_reg_only(uint8_t type)
{
	return type == PR_TYPE_WE_RO || type == PR_TYPE_EA_RO;
}
bool pr_type_valid(uint8_t type);
/* Is registration i a reservation holder (every registrant for the all-registrants types)? */
bool pr_is_holder(const struct pr_state *st, int i);
/* Remove registration i, keeping the holder index right; an all-registrants reservation
 * ends with its last registrant, any other one with its holder. */
void pr_remove(struct pr_state *st, int i);
/* Append a registration; returns its index or -1 when the table is full. */
int pr_add(struct pr_state *st, const struct pr_reg *r);

/* Recompute pr->active after a change.  Caller holds pr->lock. */
void pr_update_active(struct scsi_pr *pr);

/* ---- side effects (spc_pr.c) ---- */
void pr_fx_ua(struct pr_effects *fx, const struct pr_reg *r, uint8_t ascq);
void pr_fx_abort(struct pr_effects *fx, const struct pr_reg *r);
/* Establish the collected UNIT ATTENTIONs and abort the collected nexuses' tasks (except
 * `keep`); waits until every aborted task has completed.  Call without pr->lock. */
void pr_fx_apply(struct scsi_dev *dev, const struct pr_effects *fx, const struct scsi_task *keep);

/* ---- APTPL state file (spc_pr_file.c) ---- */
/* Serialise st into buf (NUL-terminated); returns the length or -1 when it does not fit. */
int pr_state_format(const struct pr_state *st, const char *devname, char *buf, size_t len);
/* Parse a state file's text.  On error returns false with "line N: reason" in err and leaves
 * st untouched. */
bool pr_state_parse(const char *text, const char *devname, struct pr_state *st, char *err,
		    size_t errlen);
/* Write the state atomically (temp file, fsync, rename, fsync directory); with !st->aptpl the
 * file is removed.  0 or -errno. */
int pr_state_save(const char *path, const char *devname, const struct pr_state *st);
/* Load the file into st.  Returns 0 when loaded, -ENOENT when there is none, another -errno
 * (with a message in err) when it cannot be read or is corrupt. */
int pr_state_load(const char *path, const char *devname, struct pr_state *st, char *err,
		  size_t errlen);

/* The side effects of a change as the payload a shared store carries to the other gateways
 * (lines "ua ..." and "abort ..."): length, or -1 when they do not fit. */
int pr_fx_format(const struct pr_effects *fx, char *buf, size_t len);
/* Parse such a payload (len bytes, not NUL-terminated); false when malformed. */
bool pr_fx_parse(const char *text, size_t len, struct pr_effects *fx);

/* Is nx the SPC-2 reservation holder of st? */
bool pr_spc2_holder_is(const struct pr_state *st, const struct scsi_nexus *nx);

/* ---- the store (spc_pr_sync.c, over scsi/pr_store.h) ---- */
/* How many times a PERSISTENT RESERVE OUT redoes itself after losing a compare-and-store
 * before giving up with a retryable status. */
#define PR_CAS_TRIES 16
/* Open the device's store (its backstore's shared one, else the state directory, else none)
 * and load the state into pr.  0, or -1 with a reason in err (a shared store that cannot be
 * read: the LU must not start enforcing nothing while other gateways enforce a reservation). */
int pr_sync_open(struct scsi_pr *pr, char *err, size_t errlen);
void pr_sync_close(struct scsi_pr *pr);
/* Load the stored state and put it in force when it is newer than pr->ver.  Without
 * pr->lock.  0 or -errno. */
int pr_sync_refresh(struct scsi_pr *pr);
/* One change of the state, computed on st (pr->st) under pr->lock: sets *dirty when st
 * changed and must be stored, and collects its side effects in fx. */
typedef enum scsi_sr (*pr_change_fn)(struct pr_state *st, struct pr_effects *fx, void *arg,
				     bool *dirty);
/* The one way the state changes: run fn on pr->st and store the result (compare-and-store,
 * redone on the reloaded state when another gateway stored first; a failed store puts the
 * old state back), then, on a shared store, publish it with fx and return only when every
 * other gateway has it in force.  spc2_only: the change concerns SPC-2 or reset state, which
 * only a shared store keeps.  Takes pr->out_lock; call on a core worker when the store is
 * shared.  The caller applies fx on this gateway when it returns SR_OK. */
enum scsi_sr pr_sync_change(struct scsi_pr *pr, pr_change_fn fn, void *arg,
			    struct pr_effects *fx, bool spc2_only);
/* The outcome for a failed store operation. */
enum scsi_sr pr_sync_sr(int err);

/* ---- TransportIDs (spc_pr_tid.c) ---- */
/* Parse one TransportID at buf (avail bytes).  Returns its length, 0 when the format or
 * protocol is not supported / malformed, or -1 when it runs past avail. */
int pr_tid_parse(const uint8_t *buf, uint32_t avail, struct pr_port *out);
/* Encode a port as a TransportID into buf (room bytes); returns the full length even when it
 * did not fit. */
uint32_t pr_tid_encode(const struct pr_port *p, uint8_t *buf, uint32_t room);

/* ---- conflicts (spc_pr_check.c) ---- */
/* Would a command of class prc from nx conflict with dev's reservations (SPC-2 or persistent)?
 * Used by the dispatcher's check and by EXTENDED COPY for the LUs it reads and writes. */
bool scsi_pr_conflicts(struct scsi_dev *dev, const struct scsi_nexus *nx, enum scsi_pr_class prc);

#endif
