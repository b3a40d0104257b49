/* SYNCHRONIZE CACHE (10) and (16).  The range is checked, but the store is flushed as a whole:
 * a backstore flush (fdatasync, a block device cache flush) has no narrower form, and it makes
 * every write completed so far durable, which includes the range.  With nv_cache the cache
 * is non-volatile and there is nothing to do.  IMMED: GOOD as soon as the CDB is validated,
 * the flush continuing on its own. */
#include <stdio.h>
#include <stdlib.h>

#include "common/ut_log.h"
#include "scsi/sbc.h"

struct immed_flush {
	struct bs_io io;
	struct scsi_dev *dev;
};

static void sync_done(struct bs_io *io, enum bs_status st)
{
	struct sbc_cmd *c = io->priv;
	struct scsi_task *t = c->t;

	sbc_cmd_free(c);
	scsi_task_complete(t, st == BS_OK ? SR_OK : scsi_sr_from_bs(st, true));
}

/* IMMED: nobody waits for the result; an error here is lost as SBC allows (the initiator
 * asked not to wait), but is still reported on stderr. */
static void sync_immed_done(struct bs_io *io, enum bs_status st)
{
	struct immed_flush *f = io->priv;
	struct scsi_dev *dev = f->dev;

	if (st != BS_OK)
		UT_LOG_RL(LOG_ERR, "%s: SYNCHRONIZE CACHE (IMMED) flush failed: backstore status %d",
			  dev->p.name, (int)st);
	free(f);
	sbc_rangelock_unhold(dev); /* last: the LU may be torn down right after */
}

enum scsi_sr sbc_sync_cache(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	struct sbc_cdb cdb;
	struct sbc_cmd *c;
	uint64_t n;
	enum scsi_sr sr;

	sbc_decode(t, &cdb);
	/* NUMBER OF LOGICAL BLOCKS 0: from LBA to the end of the medium */
	n = cdb.nblocks ? cdb.nblocks : (cdb.lba <= dev->nr_blocks ? dev->nr_blocks - cdb.lba : 1);
	sr = sbc_check_range(t, cdb.lba, n);
	if (sr != SR_OK)
		return sr;
	if (sbc_nv_cache(dev))
		return SR_OK;
	if (t->cdb[1] & 0x02) { /* IMMED */
		struct immed_flush *f = calloc(1, sizeof(*f));

		if (!f)
			return SR_NO_MEMORY;
		f->dev = dev;
		f->io.op = BS_FLUSH;
		f->io.cb = sync_immed_done;
		f->io.priv = f;
		sbc_rangelock_hold(dev); /* the LU outlives the flush */
		dev->bs->ops->submit(dev->bs, &f->io);
		return SR_OK;
	}
	c = sbc_cmd_new(t);
	if (!c)
		return SR_NO_MEMORY;
	c->io.op = BS_FLUSH;
	c->io.cb = sync_done;
	dev->bs->ops->submit(dev->bs, &c->io);
	return SR_ASYNC;
}
