/* Per-nexus and per-LU I/O counters (struct scsi_io_stats in scsi_task.h), read by utgtd's
 * admin socket.  Writers are completion paths on any thread; a relaxed atomic add per field
 * costs no lock and no ordering on the data path, and the admin thread's relaxed loads never
 * see a torn value. */
#include "scsi/scsi_core.h"

static void add(uint64_t *c, uint64_t v)
{
	__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

/* Per LU, "read" and "write" mean the medium: reads are data-in commands of the READ
 * reservation class (READ(6..16), GET LBA STATUS), not READ CAPACITY or INQUIRY; writes are
 * the commands that modify it (WRITE*, WRITE SAME, UNMAP, COMPARE AND WRITE...), with the
 * data-out bytes they carried.  Per nexus every data-in / data-out command counts. */
static bool lu_read(const struct scsi_cmd_desc *d)
{
	return d && (d->flags & SCSI_CF_DATA_IN) && (d->flags & SCSI_CF_MEDIA) &&
	       d->pr_class == PRC_READ;
}

static bool lu_write(const struct scsi_cmd_desc *d)
{
	return d && (d->flags & SCSI_CF_WRITE);
}

static void count(struct scsi_io_stats *s, const struct scsi_task *t, bool lu)
{
	const struct scsi_cmd_desc *d = t->core.desc;

	add(&s->cmds, 1);
	if (t->status == SAM_STAT_CHECK_CONDITION)
		add(&s->errors, 1);
	/* data_len is what moved: 0 for a failed command (scsi_resid_compute) */
	if (t->dir == SCSI_DIR_READ && (!lu || lu_read(d))) {
		add(&s->read_cmds, 1);
		add(&s->read_bytes, t->data_len);
	} else if (t->dir == SCSI_DIR_WRITE && (!lu || lu_write(d))) {
		add(&s->write_cmds, 1);
		add(&s->write_bytes, t->data_len);
	}
}

void scsi_stats_task_done(const struct scsi_task *t)
{
	if (t->nexus)
		count(&t->nexus->stats, t, false);
	if (t->core.dev)
		count(&t->core.dev->stats, t, true);
}

void scsi_nexus_count_tmf(struct scsi_nexus *nx)
{
	if (nx)
		add(&nx->stats.tmfs, 1);
}

void scsi_stats_table_nexus(const struct scsi_lun_table *t, int delta)
{
	for (unsigned i = 0; t && i < t->n; i++) {
		struct scsi_dev *dev = t->e[i].dev;
		bool seen = false;
		for (unsigned k = 0; k < i && !seen; k++) /* an LU at two LUNs counts once */
			seen = t->e[k].dev == dev;
		if (dev && !seen)
			add(&dev->stats.nexuses, (uint64_t)(int64_t)delta);
	}
}

void scsi_stats_nexus_luns(const struct scsi_nexus *nx, int delta)
{
	scsi_stats_table_nexus(__atomic_load_n(&nx->luns, __ATOMIC_ACQUIRE), delta);
}

void scsi_io_stats_read(const struct scsi_io_stats *live, struct scsi_io_stats *out)
{
#define LD(f) out->f = __atomic_load_n(&live->f, __ATOMIC_RELAXED)
	LD(cmds);
	LD(read_cmds);
	LD(write_cmds);
	LD(read_bytes);
	LD(write_bytes);
	LD(errors);
	LD(tmfs);
	LD(nexuses);
#undef LD
}

void scsi_io_stats_sum(struct scsi_io_stats *acc, const struct scsi_io_stats *a)
{
	acc->cmds += a->cmds;
	acc->read_cmds += a->read_cmds;
	acc->write_cmds += a->write_cmds;
	acc->read_bytes += a->read_bytes;
	acc->write_bytes += a->write_bytes;
	acc->errors += a->errors;
	acc->tmfs += a->tmfs;
	acc->nexuses += a->nexuses;
}
