/* Grace periods for what a command reads without a lock: a nexus's LUN table, the devices in
 * it, a device's ALUA group.  Live administration (utgtadm, in the daemon above) publishes
 * a new LUN table or ALUA group with a release store and may free the old one, or close a removed
 * device, only after scsi_srcu_synchronize(): by then every command and TMF that could have
 * seen the old pointer has completed.
 *
 * It is sleepable RCU with per-thread counters, in the manner of Linux's SRCU: a command is a
 * reader from scsi_task_execute() until just before its done() callback, possibly ending on
 * another thread than it began.  Each thread counts the sections it began and the ones it
 * ended in a slot of its own (two counters per grace period parity), so the I/O path does two
 * uncontended atomic adds on thread-local cache lines and takes no lock; the writer sums the
 * slots.  Slots of exited threads are reused, never freed, so the counts stay exact. */
#ifndef UTGT_SCSI_SRCU_H
#define UTGT_SCSI_SRCU_H

/* Begin a read-side section; returns the index to hand to scsi_srcu_unlock (from any
 * thread).  A full barrier: loads after it see every pointer published before a grace
 * period that does not wait for this section. */
unsigned scsi_srcu_lock(void);
void scsi_srcu_unlock(unsigned idx);
/* Wait until every section begun before the call has ended.  Sleeps (backing off to 1 ms);
 * never call it from a reader.  Calls from several threads are serialised. */
void scsi_srcu_synchronize(void);
/* Sections begun and not yet ended, over all threads (tests, the admin listing). */
unsigned long scsi_srcu_readers(void);

#endif
