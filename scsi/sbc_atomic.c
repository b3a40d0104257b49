/* WRITE ATOMIC(16): a WRITE whose blocks no other command can see half written or interleave
 * with: the range is locked exclusively for the duration of the one backstore write.  Its
 * limits (VPD B0: MAXIMUM ATOMIC TRANSFER LENGTH, ATOMIC ALIGNMENT, ATOMIC TRANSFER LENGTH
 * GRANULARITY) come from sbc_task_limits(); a length or alignment outside them is INVALID FIELD
 * IN CDB pointing at the offending field.
 *
 * The atomicity is with respect to other commands.  After a crash or power loss a fileio or
 * blockio store may hold part of the write: the host file system and disks give no
 * all-or-nothing guarantee for multi-block writes, and we keep no journal. */
#include "scsi/sbc.h"

enum scsi_sr sbc_write_atomic(struct scsi_task *t)
{
	struct sbc_limits lim;
	struct sbc_cdb c;
	enum scsi_sr sr;

	sbc_decode(t, &c);
	sr = sbc_check_protect(t, &c);
	if (sr != SR_OK)
		return sr;
	/* the range first: libiscsi's WriteAtomic16.BeyondEol runs off the end with lengths
	 * above the atomic maximum and expects LBA OUT OF RANGE */
	sr = sbc_check_range(t, c.lba, c.nblocks);
	if (sr != SR_OK)
		return sr;
	sbc_task_limits(t, &lim);
	sr = sbc_check_len(t, &c, lim.max_atomic_blocks);
	if (sr != SR_OK)
		return sr;
	if (lim.atomic_granularity && c.nblocks % lim.atomic_granularity)
		return scsi_invalid_cdb(t, c.len_byte, -1);
	if (lim.atomic_alignment && c.lba % lim.atomic_alignment)
		return scsi_invalid_cdb(t, 2, -1);
	sr = sbc_check_xfer(t, &c); /* maximum transfer length, sanitize failure mode */
	if (sr != SR_OK)
		return sr;
	return sbc_rw_start(t, &c, true, true);
}
