/* PRE-FETCH (10) and (16).
 *
 * SBC lets the device server answer CONDITION MET when the whole range now sits in its cache
 * and GOOD when the cache cannot hold it.  Our device server has no cache of its own it could
 * vouch for: ramdisk and nullio have none besides the medium, and fileio's host page cache
 * may evict the range at any moment.  So the range is validated (LBA OUT OF RANGE, sanitize
 * failure mode) and the answer is GOOD, the "insufficient cache" case — which is also what
 * libiscsi's PreFetch tests require (they fail on CONDITION MET).  IMMED changes nothing:
 * there is no prefetch left running when the status is returned. */
#include "scsi/sbc.h"

enum scsi_sr sbc_pre_fetch(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	struct sbc_cdb c;
	uint64_t n;
	enum scsi_sr sr;

	sbc_decode(t, &c);
	/* PREFETCH LENGTH 0: from LBA to the end of the medium */
	n = c.nblocks ? c.nblocks : (c.lba <= dev->nr_blocks ? dev->nr_blocks - c.lba : 1);
	sr = sbc_check_range(t, c.lba, n);
	if (sr != SR_OK)
		return sr;
	return sbc_check_medium(t);
}
