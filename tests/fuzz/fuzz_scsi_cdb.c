/* libFuzzer: the SCSI core's CDB dispatcher through scsi_task_execute(), as a transport calls
 * it, on a ramdisk LU.  Input: LUN byte, direction byte, 4-byte expected transfer length
 * (bounded), a 16-byte CDB, then data-out.  Each task must complete exactly once, with sense
 * that fits and a residual that makes sense. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scsi/backstore/backstore.h"
#include "scsi/scsi_dev.h"
#include "scsi/scsi_lun.h"
#include "scsi/scsi_task.h"

static struct scsi_nexus nx;
static struct scsi_lun_table table;
static struct scsi_lun_entry ents[2];

struct waiter {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
};

static void done_cb(struct scsi_task *t)
{
	struct waiter *w = t->priv;

	pthread_mutex_lock(&w->mu);
	w->done++;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

static struct scsi_dev *make_dev(const char *name, uint64_t size)
{
	struct scsi_dev_params p;
	struct backstore *b = calloc(1, sizeof(*b));
	struct scsi_dev *dev;
	char err[256];

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	b->ops = backstore_find("ramdisk");
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->size = size;
	b->block_size = 512;
	b->read_zero = true;
	dev = scsi_dev_new(&p, b);
	if (!dev || scsi_dev_open(dev, err, sizeof(err))) {
		fprintf(stderr, "cannot open %s: %s\n", name, err);
		abort();
	}
	return dev;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	scsi_core_init(2);
	ents[0].lun = 0;
	ents[0].dev = make_dev("fz0", 4 << 20);
	ents[1].lun = 1;
	ents[1].dev = make_dev("fz1", 1 << 20);
	ents[1].read_only = true;
	table.n = 2;
	table.e = ents;
	nx.proto = SCSI_PROTO_ISCSI;
	snprintf(nx.initiator_name, sizeof(nx.initiator_name), "iqn.fuzz:i");
	snprintf(nx.initiator_port, sizeof(nx.initiator_port), "iqn.fuzz:i,i,0x1");
	snprintf(nx.target_name, sizeof(nx.target_name), "iqn.fuzz:t");
	snprintf(nx.target_port, sizeof(nx.target_port), "iqn.fuzz:t,t,0x1");
	nx.rel_tgt_id = 1;
	nx.luns = &table;
	scsi_nexus_register(&nx);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
	struct scsi_task *t;
	struct iovec iov;
	uint32_t edtl;
	uint8_t *buf;

	if (size < 22)
		return 0;
	edtl = (uint32_t)data[2] << 16 | (uint32_t)data[3] << 8 | data[4];
	edtl &= 0x3ffff; /* up to 256 KiB */
	t = calloc(1, sizeof(*t));
	buf = calloc(1, edtl ? edtl : 1);
	memcpy(t->cdb, data + 6, 16);
	t->cdb_len = (uint8_t)(6 + (data[5] % 11)); /* 6..16 */
	t->lun = data[0] % 3;			    /* LUN 2 does not exist */
	t->nexus = &nx;
	t->attr = (enum scsi_task_attr)(data[1] >> 4 & 3);
	t->tag = 1;
	t->dir = (enum scsi_data_dir)(data[1] % 3);
	t->exp_xfer_len = edtl;
	if (t->dir == SCSI_DIR_WRITE && size > 22)
		memcpy(buf, data + 22, size - 22 < edtl ? size - 22 : edtl);
	iov.iov_base = buf;
	iov.iov_len = edtl;
	t->iov = edtl ? &iov : NULL;
	t->iovcnt = edtl ? 1 : 0;
	t->done = done_cb;
	t->priv = &w;
	scsi_task_execute(t);
	pthread_mutex_lock(&w.mu);
	while (!w.done)
		pthread_cond_wait(&w.cv, &w.mu);
	pthread_mutex_unlock(&w.mu);
	if (w.done != 1 || t->sense_len > SCSI_SENSE_MAX ||
	    (t->dir == SCSI_DIR_READ && t->data_len > edtl))
		__builtin_trap();
	free(buf);
	free(t);
	return 0;
}
