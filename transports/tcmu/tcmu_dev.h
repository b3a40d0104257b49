/* One TCMU device served by utgtd: its ring, the I_T nexus its commands run on (one LUN:
 * LUN 0 is the scst.conf DEVICE), and the commands in flight.
 *
 * Threads: tcmu_dev_poll() runs on one thread (the transport's ring thread for the device,
 * or a test), the ring thread; tcmu_dev_reap() on any; a second ring thread may take
 * entries beside it (tcmu_dev_set_second_thread()).  The SCSI core completes tasks from any thread; that
 * thread writes the completion into the ring and, when cmd_tail moved, calls hooks.kick() to
 * tell the kernel.  Completions inside tcmu_dev_poll() leave the kick to tcmu_dev_reap().
 * hooks.wake() is called for completions on a closing device and for finished aborts (the
 * owner may free the device once tcmu_dev_inflight() is 0). */
#ifndef UTGT_TCMU_DEV_H
#define UTGT_TCMU_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct scsi_dev;
struct tcmu_dev;

struct tcmu_dev_hooks {
	void (*kick)(void *ctx); /* cmd_tail moved: the 4-byte write to /dev/uioN (any thread) */
	void (*wake)(void *ctx); /* look at the device again (any thread; see above) */
	void *ctx;
};

/* What a device has done, for `utgtadm show devices` (relaxed loads: fields may be a few
 * commands apart, never torn). */
struct tcmu_dev_stats {
	uint32_t ring_bytes;   /* command ring size */
	uint64_t data_bytes;   /* data area size */
	uint16_t flags;	       /* mailbox flags (TCMU_MAILBOX_FLAG_CAP_*) */
	uint32_t inflight;     /* commands taken and not yet completed in the ring */
	uint64_t cmds;	       /* commands taken from the ring */
	uint64_t completions;  /* completions written into the ring */
	uint64_t polled;       /* of those, made on the ring thread while it parsed the ring
				* (INQUIRY, a page-cache READ/WRITE run inline): no thread hop */
	uint64_t aborted;      /* of those, commands a TMR aborted */
	uint64_t tmrs;	       /* TMR entries (tmr_notification=1) */
	uint64_t tmr_cmds;     /* commands the TMRs named that were still ours */
	uint64_t held;	       /* commands the hang_lba fault injection held */
	uint64_t refused;      /* second completions refused by the ring: always 0 */
	uint64_t allocs;       /* command structures allocated (finished ones are reused) */
	uint64_t second;       /* commands taken by the second ring thread */
	uint64_t second_wakes; /* times the ring thread woke it */
};

/* Serve the ring mapped at map (size bytes) with sdev as LUN 0.  name: for logs and the
 * nexus's port names; max_xfer: the longest command LIO accepts, in bytes (0: no limit of
 * our own).  NULL with err filled when the mailbox is unusable. */
struct tcmu_dev *tcmu_dev_new(const char *name, void *map, size_t size, struct scsi_dev *sdev,
			      uint32_t max_xfer, const struct tcmu_dev_hooks *hooks, char *err,
			      size_t errlen);
/* Parse what the kernel queued and submit it; returns the number of commands taken.  Does
 * nothing once the device is closing or its ring is broken.  Call tcmu_dev_reap() after. */
unsigned tcmu_dev_poll(struct tcmu_dev *d);
/* Make the kick completions inside tcmu_dev_poll() owed; 1 when it kicked.  Only from a
 * thread that keeps the device alive meanwhile (its ring threads, its owner): the kick is
 * made after the device's mutex is released. */
unsigned tcmu_dev_reap(struct tcmu_dev *d);
/* Commands taken and not yet completed, plus task management functions still running: the
 * device may be freed when this is 0. */
unsigned tcmu_dev_inflight(const struct tcmu_dev *d);
/* Fault injection for tests (dev_config option hang_lba, docs/tcmu.md): READs and WRITEs
 * starting at LBA lba alternate between being held (never run; only a TMR that aborts them,
 * or the device closing, lets them go) and running, so the retry that follows an abort
 * succeeds.  UINT64_MAX: off (the default).  Call before the first poll. */
void tcmu_dev_set_hang_lba(struct tcmu_dev *d, uint64_t lba);
/* Start a second ring thread (see tcmu_dev.c): when entries wait behind the one the poller
 * took, it takes and runs entries beside it, on another CPU, until the ring is empty, and
 * kicks once for its completions.  A lone command is never handed over (QD1 stays on the
 * poller).  Call before the first poll; 0 or -errno. */
int tcmu_dev_set_second_thread(struct tcmu_dev *d);
/* What the second ring thread runs each time it is woken, less its kick (tcmu_dev_reap()):
 * take and run entries until the ring is empty, as the second thread.  Tests call it from a
 * thread of their own, beside tcmu_dev_poll(). */
unsigned tcmu_dev_poll_second(struct tcmu_dev *d);
void tcmu_dev_get_stats(const struct tcmu_dev *d, struct tcmu_dev_stats *out);
/* The protocol identifier of the device's nexus (enum scsi_proto_id: the fabric LIO exports
 * it through, tcmu_lio_fabric()); commands read it for VPD 83 and INQUIRY.  Returns the
 * previous one. */
int tcmu_dev_set_proto(struct tcmu_dev *d, int proto);
bool tcmu_dev_broken(const struct tcmu_dev *d);
/* The kernel queued something no ring thread has taken yet: a peek for a ring thread that
 * polls before it sleeps (the transport's poll_us). */
bool tcmu_dev_pending(struct tcmu_dev *d);
/* Stop taking new commands (removal, shutdown); in-flight ones still complete (held ones are
 * run). */
void tcmu_dev_close(struct tcmu_dev *d);
/* Free; only once tcmu_dev_inflight() is 0. */
void tcmu_dev_free(struct tcmu_dev *d);

#endif
