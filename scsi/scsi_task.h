/* The one contract between a transport and the SCSI core.
 *
 * A transport fills a struct scsi_task (CDB, LUN, I_T nexus, task attribute, data buffer,
 * completion callback) and calls scsi_task_execute().  The core calls task->done exactly once,
 * possibly before scsi_task_execute() returns and possibly from another thread (a backstore
 * completion thread), with status, sense and residual filled in.  Nothing here knows which
 * transport is on the other side. */
#ifndef UTGT_SCSI_TASK_H
#define UTGT_SCSI_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define SCSI_CDB_MAX   32
#define SCSI_SENSE_MAX 252
#define SCSI_NAME_MAX  224 /* iSCSI names are at most 223 bytes */

/* SAM task attributes.  The values are the core's own, not a wire encoding: each transport
 * maps its field in its map_attr() (iSCSI's ATTR: 0/1 simple, 2 ordered, 3 head of queue,
 * 4 ACA; SRP's TASK ATTRIBUTE: 0 simple, 1 head of queue, 2 ordered, 4 ACA). */
enum scsi_task_attr {
	SCSI_ATTR_SIMPLE        = 0,
	SCSI_ATTR_ORDERED       = 1,
	SCSI_ATTR_HEAD_OF_QUEUE = 2,
	SCSI_ATTR_ACA           = 3,
};

/* Direction the transport learned from its own header (iSCSI R/W bits, SRP descriptors). */
enum scsi_data_dir {
	SCSI_DIR_NONE  = 0,
	SCSI_DIR_READ  = 1, /* data-in: target to initiator */
	SCSI_DIR_WRITE = 2, /* data-out: initiator to target */
};

enum scsi_resid {
	SCSI_RESID_NONE  = 0,
	SCSI_RESID_UNDER = 1, /* less data than expected moved */
	SCSI_RESID_OVER  = 2, /* the command wanted more than the expected transfer length */
};

/* SPC-4 protocol identifiers, for TransportIDs and VPD 83. */
enum scsi_proto_id {
	SCSI_PROTO_FCP   = 0x0, /* TCMU: an LIO Fibre Channel fabric */
	SCSI_PROTO_SRP   = 0x4,
	SCSI_PROTO_ISCSI = 0x5,
	SCSI_PROTO_SAS   = 0x6, /* TCMU: the placeholder when the fabric is not known */
};

struct scsi_lun_table;
struct scsi_lun_entry;
struct scsi_cmd_desc;
struct scsi_dev;
struct scsi_tmf_watch;

/* Counters the core keeps per I_T nexus and per LU, for the admin socket (`utgtadm show`).
 * Updated with relaxed atomic adds when a command completes (scsi_stats.c), never under a
 * lock; a reader takes each field with a relaxed load, so a snapshot may be a few commands
 * apart between fields but never torn. */
struct scsi_io_stats {
	uint64_t cmds;                     /* commands completed, any status */
	uint64_t read_cmds, write_cmds;    /* nexus: data-in / data-out commands; LU: media ones */
	uint64_t read_bytes, write_bytes;  /* data moved to / from the initiator */
	uint64_t errors;                   /* completed with CHECK CONDITION */
	uint64_t tmfs;                     /* task management functions received */
	uint64_t nexuses;                  /* LU only: registered nexuses that address it */
};

/* An I_T nexus: one initiator port talking to one target port.  The transport creates it at
 * login, registers it with scsi_nexus_register() and unregisters it (after every task it
 * submitted has completed) at logout.  PR registrations and UNIT ATTENTIONs are keyed on the
 * port names, not on this struct, so they survive a reconnect as SPC-4 requires. */
struct scsi_nexus {
	uint64_t id;                           /* assigned by scsi_nexus_register(), never reused */
	enum scsi_proto_id proto;
	char initiator_name[SCSI_NAME_MAX];    /* iSCSI name / SRP port id in hex; used by ACLs */
	char initiator_port[SCSI_NAME_MAX + 24]; /* "iqn...,i,0x<isid>" for iSCSI; same as name for SRP */
	char target_name[SCSI_NAME_MAX];
	char target_port[SCSI_NAME_MAX + 24];  /* "iqn...,t,0x<tpgt>" for iSCSI */
	uint16_t rel_tgt_id;                   /* relative target port identifier (VPD 83, RTPG) */
	/* LUs this nexus may address, resolved by ACL.  Set before scsi_nexus_register(); after
	 * that only through scsi_nexus_set_luns() (live changes), which publishes a new table
	 * with a release store: the core reads it once per command (acquire). */
	const struct scsi_lun_table *luns;
	uint32_t max_xfer_bytes;               /* most one command's data may be; 0: no own limit */
	void *transport_priv;
	struct scsi_io_stats stats;            /* kept by the core; transports only read them */
};

/* A snapshot of live counters (relaxed loads), and the sum of several (admin totals). */
void scsi_io_stats_read(const struct scsi_io_stats *live, struct scsi_io_stats *out);
void scsi_io_stats_sum(struct scsi_io_stats *acc, const struct scsi_io_stats *add);
/* A transport received a task management function on nx: counted here whether the transport
 * answers it itself (a task the core never saw) or through scsi_tmf_execute(). */
void scsi_nexus_count_tmf(struct scsi_nexus *nx);

struct scsi_task {
	/* ---- filled by the transport ---- */
	uint8_t cdb[SCSI_CDB_MAX];
	uint8_t cdb_len;
	uint64_t lun;                  /* flat LUN number, see scsi_lun_decode() */
	struct scsi_nexus *nexus;
	enum scsi_task_attr attr;
	uint64_t tag;                  /* initiator task tag, what ABORT TASK names */
	enum scsi_data_dir dir;
	uint32_t exp_xfer_len;         /* expected data transfer length in bytes */
	struct iovec *iov;             /* write: the data-out; read: room for exp_xfer_len bytes */
	int iovcnt;
	void (*done)(struct scsi_task *task);
	void *priv;                    /* transport's own */
	/* Optional: data-in in pieces (see "Data-in in pieces" below).  NULL: iov holds the
	 * whole of exp_xfer_len. */
	void (*din_ready)(struct scsi_task *task, uint32_t off, uint32_t len);
	bool inline_io;                /* READ/WRITE may run on this thread (bs_io.inline_ok) */
	bool inline_wait;              /* ...a WRITE even with others in flight (bs_io.inline_wait_ok) */
	bool inline_large;             /* ...a READ of any size (bs_io.inline_large_ok) */
	bool din_lend;                 /* data-in may be lent in place (see "Lent data-in") */

	/* ---- filled by the core before done() ---- */
	uint8_t status;                /* SAM status byte */
	uint8_t sense_len;
	uint8_t sense[SCSI_SENSE_MAX];
	uint32_t data_len;             /* data-in bytes placed in iov / data-out bytes consumed */
	enum scsi_resid resid_kind;
	uint32_t resid;
	bool aborted;                  /* aborted by a TMF: the transport sends no response */
	/* Lent data-in: non-NULL when the data_len bytes to send were not placed in iov but are
	 * here, in the store's own memory, until scsi_task_data_release(). */
	const void *din_lent;

	/* ---- core-private: transports must not touch ---- */
	struct {
		struct scsi_dev *dev;
		const struct scsi_lun_table *luns; /* the nexus's table when the task arrived */
		const struct scsi_lun_entry *lun_ent;
		unsigned srcu_idx;             /* read-side section held until done() (scsi_srcu.h) */
		const struct scsi_cmd_desc *desc;
		struct scsi_task *next, *prev; /* task set of the LU */
		struct scsi_task *wait_next;   /* queued behind ORDERED / range lock */
		uint32_t flags;
		int sr;                        /* enum scsi_sr once decided */
		/* sense details for the sense builder */
		uint8_t ua_asc, ua_ascq;       /* for SR_UNIT_ATTENTION */
		uint16_t sks_field;            /* sense-key-specific field pointer: byte */
		int8_t sks_bit;                /* bit, or -1 when the whole byte */
		bool sks_cdb;                  /* true: points into the CDB; false: parameter list */
		bool info_valid;
		uint64_t info;                 /* INFORMATION field (miscompare offset, bad LBA) */
		/* per-command scratch shared by the SBC path */
		uint64_t lba;
		uint32_t nblocks;
		uint64_t xfer_wanted;         /* bytes the CDB asks to move */
		bool xfer_set;
		bool xfer_refused;             /* refused for its expected length (scsi_data.c) */
		uint64_t range_lba;            /* range lock held, when flags say so */
		uint32_t range_len;
		void *ctx;
		/* engine bookkeeping (scsi_exec.c / scsi_taskset.c) */
		uint32_t ts_flags;             /* task set state, guarded by the task set lock */
		struct scsi_task *runq_next;   /* per-thread dispatch queue */
		struct scsi_tmf_watch *tmf_watch; /* TMFs waiting for this aborted task */
		/* Set by code that parks an enabled task on its own wait queue (the SBC range
		 * lock): a TMF calls it, with the task set lock held, to pull the task off that
		 * queue.  It returns true when the task was removed and will never run (the core
		 * then completes it as aborted), false when it already left the queue.  It must
		 * not call back into the core. */
		bool (*cancel)(struct scsi_task *t);
	} core;
};

/* Submit a task.  task->done is called exactly once. */
void scsi_task_execute(struct scsi_task *task);

/* Data-in in pieces.  A transport that sets din_ready on a data-in task may give it iov room
 * for less than exp_xfer_len: `room` bytes, a multiple of SCSI_DIN_ROOM_ALIGN and at least
 * SCSI_DIN_ROOM_MIN.  A READ that moves more than the room is then read from the backstore
 * in pieces of room / 2 bytes into iov used as a ring (byte X of the transfer at offset
 * X % room), at most two pieces at a time, and never more than the room holds unsent:
 *   - din_ready(t, off, len), from any thread, hands over bytes [off, off + len) of the
 *     transfer, in order, one piece after the other; never the last piece;
 *   - the transport gives the room back with scsi_task_din_sent(t, off + len) once those
 *     bytes are sent (on its own thread, never from inside din_ready);
 *   - done() comes once, after every piece handed over was given back: with GOOD the last
 *     piece is in the ring and data_len counts the whole transfer, so what follows the
 *     pieces is sent with the status; with any other status data_len is 0 (the pieces sent
 *     already are not data the initiator may use, as SAM says of a failed command);
 *   - scsi_task_din_stop(t): the transport will send nothing more (its connection is gone);
 *     every piece handed over counts as given back, no more are read, and the command ends
 *     as aborted once its reads in flight have come back.  Only while it holds a piece.
 * A TMF that aborts the command stops it before its next piece.  Every other command's
 * data-in is at most SCSI_DIN_ROOM_MIN bytes and goes into the room as usual. */
#define SCSI_DIN_ROOM_MIN   (2u << 20)
#define SCSI_DIN_ROOM_ALIGN (128u << 10)
void scsi_task_din_sent(struct scsi_task *task, uint32_t upto);
void scsi_task_din_stop(struct scsi_task *task);

/* Lent data-in.  A transport that sets din_lend on a READ (and gives it room for the whole
 * transfer, no din_ready pieces) lets the core skip the copy when the LU's store is memory
 * (backstore_ops.map): done() then comes with GOOD status and din_lent pointing at the
 * data_len bytes in the store, and iov untouched.  The command keeps its LBA range until the
 * transport calls scsi_task_data_release(): writes to those blocks from any initiator wait
 * for it, so the bytes stay what the READ read while the transport sends them (they are
 * "gone" once the socket has them: sendmsg() without MSG_ZEROCOPY copies them).  The
 * transport releases once, whether the bytes went out or its connection dropped them, on
 * any thread (inside done() too); on a task with din_lent NULL it does nothing, so a
 * transport may call it for every task it frees.  Any other outcome (an error, a store
 * without map, a WRITE in flight on the LU) fills iov as usual. */
void scsi_task_data_release(struct scsi_task *task);

/* Task management functions (SAM-5 names). */
enum scsi_tmf_fn {
	SCSI_TMF_ABORT_TASK,
	SCSI_TMF_ABORT_TASK_SET,
	SCSI_TMF_CLEAR_TASK_SET,
	SCSI_TMF_CLEAR_ACA,
	SCSI_TMF_LOGICAL_UNIT_RESET,
	SCSI_TMF_I_T_NEXUS_RESET,
	SCSI_TMF_TARGET_WARM_RESET,
	SCSI_TMF_TARGET_COLD_RESET,
	SCSI_TMF_QUERY_TASK,
	SCSI_TMF_QUERY_TASK_SET,
	SCSI_TMF_QUERY_ASYNC_EVENT,
};

enum scsi_tmf_resp {
	SCSI_TMF_COMPLETE,          /* function complete */
	SCSI_TMF_SUCCEEDED,         /* QUERY TASK found it */
	SCSI_TMF_NO_TASK,           /* ABORT TASK: no such task (still "complete" for iSCSI) */
	SCSI_TMF_NO_LUN,
	SCSI_TMF_NOT_SUPPORTED,
	SCSI_TMF_REJECTED,
};

struct scsi_tmf {
	enum scsi_tmf_fn fn;
	uint64_t lun;
	uint64_t ref_tag;              /* ABORT TASK / QUERY TASK: the task named */
	struct scsi_nexus *nexus;
	void (*done)(struct scsi_tmf *tmf);
	void *priv;
	enum scsi_tmf_resp resp;       /* filled by the core */
	/* core-private */
	int pending;
};

/* Run a TMF.  tmf->done is called once every task it aborts has completed (with aborted set,
 * their own done() called first), so no command is left behind. */
void scsi_tmf_execute(struct scsi_tmf *tmf);

/* Nexus lifecycle.  Register before the first task; unregister after the last completes. */
void scsi_nexus_register(struct scsi_nexus *nx);
void scsi_nexus_unregister(struct scsi_nexus *nx);
/* Live change of the LUs a registered nexus may address (scsi/scsi_lunmap.c).  The caller
 * keeps nx from unregistering meanwhile (its login/logout lock).  When the map changes (LUN
 * numbers, LUs or read_only), REPORTED LUNS DATA HAS CHANGED is set for nx on every LU of the
 * new table, then the table is published; an LU nx no longer reaches loses nx's PREVENT ALLOW
 * MEDIUM REMOVAL and SPC-2 reservation.  Returns whether the map changed.  The old table (and
 * an LU no table holds any more) must stay valid until scsi_srcu_synchronize() returns. */
bool scsi_nexus_set_luns(struct scsi_nexus *nx, const struct scsi_lun_table *luns);

/* Core lifetime: worker threads for the commands that block (COMPARE AND WRITE, XCOPY, ...). */
int scsi_core_init(unsigned nworkers);
void scsi_core_shutdown(void);

/* SAM status codes. */
enum {
	SAM_STAT_GOOD                 = 0x00,
	SAM_STAT_CHECK_CONDITION      = 0x02,
	SAM_STAT_CONDITION_MET        = 0x04,
	SAM_STAT_BUSY                 = 0x08,
	SAM_STAT_RESERVATION_CONFLICT = 0x18,
	SAM_STAT_TASK_SET_FULL        = 0x28,
	SAM_STAT_ACA_ACTIVE           = 0x30,
	SAM_STAT_TASK_ABORTED         = 0x40,
};

#endif
