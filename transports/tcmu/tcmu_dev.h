/* One TCMU device served by utgtd: its ring, the I_T nexus its commands run on (one LUN:
 * LUN 0 is the scst.conf DEVICE), and the commands in flight.
 *
 * Threads: tcmu_dev_poll() and tcmu_dev_reap() run on one thread (the transport's event
 * thread, or a test).  The SCSI core completes tasks from any thread; the completion is queued
 * and hooks.wake() is called, after which the owner calls tcmu_dev_reap() to write the
 * completions into the ring and, when cmd_tail moved, hooks.kick() tells the kernel. */
#ifndef UTGT_TCMU_DEV_H
#define UTGT_TCMU_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct scsi_dev;
struct tcmu_dev;

struct tcmu_dev_hooks {
	void (*kick)(void *ctx); /* cmd_tail moved: the 4-byte write to /dev/uioN */
	void (*wake)(void *ctx); /* a completion is queued (called from any thread) */
	void *ctx;
};

/* Serve the ring mapped at map (size bytes) with sdev as LUN 0.  name: for logs and the
 * nexus's port names; max_xfer: the longest command LIO accepts, in bytes (0: no limit of
 * our own).  NULL with err filled when the mailbox is unusable. */
struct tcmu_dev *tcmu_dev_new(const char *name, void *map, size_t size, struct scsi_dev *sdev,
			      uint32_t max_xfer, const struct tcmu_dev_hooks *hooks, char *err,
			      size_t errlen);
/* Parse what the kernel queued and submit it; returns the number of commands taken.  Does
 * nothing once the device is closing or its ring is broken. */
unsigned tcmu_dev_poll(struct tcmu_dev *d);
/* Write queued completions into the ring; kick when cmd_tail moved.  Returns how many. */
unsigned tcmu_dev_reap(struct tcmu_dev *d);
/* Commands taken and not yet reaped. */
unsigned tcmu_dev_inflight(const struct tcmu_dev *d);
bool tcmu_dev_broken(const struct tcmu_dev *d);
/* Stop taking new commands (removal, shutdown); in-flight ones still complete. */
void tcmu_dev_close(struct tcmu_dev *d);
/* Free; only once tcmu_dev_inflight() is 0. */
void tcmu_dev_free(struct tcmu_dev *d);

#endif
