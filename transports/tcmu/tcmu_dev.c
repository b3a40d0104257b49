/* One TCMU device (see tcmu_dev.h): ring entries become scsi_tasks whose iovecs point
 * straight into the kernel's data area (zero copy), and task completions go back into the
 * ring in the order the ring allows (tcmu_ring.c decides). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "scsi/scsi_lun.h"
#include "scsi/scsi_task.h"
#include "target/tgt_log.h"
#include "transports/tcmu/tcmu_cdb.h"
#include "transports/tcmu/tcmu_dev.h"
#include "transports/tcmu/tcmu_ring.h"

#define IOV_INLINE 16

struct tcmu_cmd {
	struct scsi_task task;
	struct tcmu_dev *dev;
	struct tcmu_req req;
	struct tcmu_cmd *next;
	uint32_t iov_cap;
	struct iovec iov[];
};

struct tcmu_dev {
	char name[64];
	struct tcmu_ring ring;
	struct tcmu_dev_hooks hooks;
	struct scsi_nexus nx;
	struct scsi_lun_entry lun0;
	struct scsi_lun_table luns;
	unsigned inflight; /* owner thread only */
	bool closing;
	struct tcmu_cmd *spare; /* reused for the next entry */
	pthread_mutex_t mu;	/* guards done list */
	struct tcmu_cmd *done_head, *done_tail;
};

static struct tcmu_cmd *cmd_alloc(struct tcmu_dev *d, uint32_t niov)
{
	struct tcmu_cmd *c;

	if (niov < IOV_INLINE)
		niov = IOV_INLINE;
	c = calloc(1, sizeof(*c) + niov * sizeof(struct iovec));
	if (!c)
		return NULL;
	c->dev = d;
	c->iov_cap = niov;
	return c;
}

struct tcmu_dev *tcmu_dev_new(const char *name, void *map, size_t size, struct scsi_dev *sdev,
			      uint32_t max_xfer, const struct tcmu_dev_hooks *hooks, char *err,
			      size_t errlen)
{
	struct tcmu_dev *d = calloc(1, sizeof(*d));

	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (tcmu_ring_init(&d->ring, map, size, name, err, errlen) < 0) {
		free(d);
		return NULL;
	}
	d->hooks = *hooks;
	pthread_mutex_init(&d->mu, NULL);
	d->lun0 = (struct scsi_lun_entry){.lun = 0, .dev = sdev};
	d->luns = (struct scsi_lun_table){.n = 1, .e = &d->lun0};
	/* LIO does not tell us who the initiator is (it keeps PR and ACLs itself); one nexus
	 * per TCMU device, named after it. */
	d->nx.proto = SCSI_PROTO_SAS;
	snprintf(d->nx.initiator_name, sizeof(d->nx.initiator_name), "lio-tcmu");
	snprintf(d->nx.initiator_port, sizeof(d->nx.initiator_port), "lio-tcmu,%s", name);
	d->nx.rel_tgt_id = 1;
	d->nx.luns = &d->luns;
	d->nx.max_xfer_bytes = max_xfer; /* VPD B0 must not promise more than LIO takes */
	d->nx.transport_priv = d;
	scsi_nexus_register(&d->nx);
	tgt_log(LOG_INFO,
		"tcmu %s: ring of %u bytes at %u, data area %zu bytes, mailbox flags 0x%x: %s "
		"completion%s; commands up to %u bytes (0: no limit)",
		name, d->ring.cmdr_size, d->ring.cmdr_off, size - (size_t)d->ring.data_off,
		d->ring.flags, d->ring.oooc ? "out-of-order" : "in-order",
		d->ring.read_len ? ", read length reported" : "", max_xfer);
	return d;
}

static void cmd_done(struct scsi_task *t)
{
	struct tcmu_cmd *c = t->priv;
	struct tcmu_dev *d = c->dev;

	c->next = NULL;
	pthread_mutex_lock(&d->mu);
	if (d->done_tail)
		d->done_tail->next = c;
	else
		d->done_head = c;
	d->done_tail = c;
	pthread_mutex_unlock(&d->mu);
	if (d->hooks.wake)
		d->hooks.wake(d->hooks.ctx);
}

/* An entry we cannot run: answer CHECK CONDITION without the core. */
static void refuse(struct tcmu_cmd *c)
{
	struct scsi_task *t = &c->task;
	uint8_t key = 0x04, asc = 0x44; /* HARDWARE ERROR, INTERNAL TARGET FAILURE */

	if (c->req.err == TCMU_REQ_BIDI || c->req.err == TCMU_REQ_TOO_LONG)
		key = 0x05, asc = 0x24; /* ILLEGAL REQUEST, INVALID FIELD IN CDB */
	t->priv = c;
	t->status = SAM_STAT_CHECK_CONDITION;
	tcmu_sense_fixed(t->sense, key, asc, 0);
	t->sense_len = 18;
	cmd_done(t);
}

static void submit(struct tcmu_dev *d, struct tcmu_cmd *c)
{
	struct scsi_task *t = &c->task;

	memset(t, 0, sizeof(*t));
	d->inflight++;
	if (c->req.err) {
		refuse(c);
		return;
	}
	memcpy(t->cdb, c->req.cdb, c->req.cdb_len);
	t->cdb_len = c->req.cdb_len;
	t->lun = 0;
	t->nexus = &d->nx;
	t->attr = SCSI_ATTR_SIMPLE;
	t->tag = c->req.cmd_id;
	t->exp_xfer_len = (uint32_t)c->req.len;
	t->dir = !c->req.len			 ? SCSI_DIR_NONE
		 : tcmu_cdb_data_out(c->req.cdb) ? SCSI_DIR_WRITE
						 : SCSI_DIR_READ;
	t->iov = c->iov;
	t->iovcnt = (int)c->req.iovcnt;
	t->done = cmd_done;
	t->priv = c;
	scsi_task_execute(t);
}

unsigned tcmu_dev_poll(struct tcmu_dev *d)
{
	unsigned n = 0;

	while (!d->closing && !d->ring.broken) {
		struct tcmu_cmd *c = d->spare;
		enum tcmu_next r;

		if (!c && !(c = d->spare = cmd_alloc(d, IOV_INLINE)))
			break; /* out of memory: the entries wait in the ring */
		c->req.iov = c->iov;
		c->req.iov_cap = c->iov_cap;
		r = tcmu_ring_next(&d->ring, &c->req);
		if (r == TCMU_NEXT_IOV_ROOM) {
			struct tcmu_cmd *b = cmd_alloc(d, c->req.iovcnt);
			if (!b)
				break;
			free(c);
			d->spare = b;
			continue;
		}
		if (r != TCMU_NEXT_CMD)
			break;
		d->spare = NULL;
		submit(d, c);
		n++;
	}
	return n;
}

unsigned tcmu_dev_reap(struct tcmu_dev *d)
{
	struct tcmu_cmd *c;
	unsigned n = 0;
	bool moved = false;

	pthread_mutex_lock(&d->mu);
	c = d->done_head;
	d->done_head = d->done_tail = NULL;
	pthread_mutex_unlock(&d->mu);
	while (c) {
		struct tcmu_cmd *next = c->next;
		struct scsi_task *t = &c->task;
		struct tcmu_rsp rsp = {
		    .status = t->aborted ? SAM_STAT_TASK_ABORTED : t->status,
		    .sense = t->sense,
		    .sense_len = t->status == SAM_STAT_CHECK_CONDITION ? t->sense_len : 0,
		    /* underflow of a read: LIO trims what it sends to the initiator */
		    .read_len_valid = t->dir == SCSI_DIR_READ && t->data_len < t->exp_xfer_len,
		    .read_len = t->data_len,
		};
		int rc = tcmu_ring_complete(&d->ring, &c->req, &rsp);

		if (rc < 0)
			tgt_log(LOG_ERR, "tcmu %s: completion of cmd_id %u has no ring entry",
				d->name, c->req.cmd_id);
		moved |= rc > 0;
		d->inflight--;
		free(c);
		n++;
		c = next;
	}
	if (moved && d->hooks.kick)
		d->hooks.kick(d->hooks.ctx);
	return n;
}

unsigned tcmu_dev_inflight(const struct tcmu_dev *d)
{
	return d->inflight;
}

bool tcmu_dev_broken(const struct tcmu_dev *d)
{
	return d->ring.broken;
}

void tcmu_dev_close(struct tcmu_dev *d)
{
	d->closing = true;
}

void tcmu_dev_free(struct tcmu_dev *d)
{
	if (!d)
		return;
	scsi_nexus_unregister(&d->nx);
	tcmu_ring_fini(&d->ring);
	pthread_mutex_destroy(&d->mu);
	free(d->spare);
	free(d);
}
