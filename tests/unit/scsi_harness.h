/* Header-only harness for unit tests of the SCSI core: build an LU on a ramdisk or fileio
 * store, a nexus that sees it, and run one CDB synchronously through scsi_task_execute(),
 * exactly as a transport would.  Shared by every tests/unit/test_spc_* and test_sbc_* file. */
#ifndef UTGT_TEST_SCSI_HARNESS_H
#define UTGT_TEST_SCSI_HARNESS_H

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scsi/backstore/backstore.h"
#include "scsi/scsi_cmd.h"
#include "scsi/scsi_dev.h"
#include "scsi/scsi_lun.h"
#include "scsi/scsi_task.h"

struct th_result {
	uint8_t status;
	uint8_t sense[SCSI_SENSE_MAX];
	uint8_t sense_len;
	uint32_t data_len;
	enum scsi_resid resid_kind;
	uint32_t resid;
	bool aborted;
};

struct th_wait {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
};

static inline void th_done_cb(struct scsi_task *t)
{
	struct th_wait *w = t->priv;
	pthread_mutex_lock(&w->mu);
	w->done = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* A device on a backstore of the given handler; size in bytes; block size 512 or 4096.
 * fileio gets a fresh sparse temp file (removed at process exit is not needed: /tmp). */
static inline struct scsi_dev *th_make_dev(const char *handler, const char *name, uint64_t size,
					   uint32_t bs)
{
	struct scsi_dev_params p;
	struct backstore *b = calloc(1, sizeof(*b));
	char err[256] = "";
	struct scsi_dev *dev;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	b->ops = backstore_find(handler);
	cr_assert_not_null(b->ops, "no backstore %s", handler);
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->size = size;
	b->block_size = bs;
	b->read_zero = true;
	if (!strcmp(handler, "vdisk_fileio")) {
		snprintf(b->filename, sizeof(b->filename), "/tmp/utgt-test-%d-%s.img", (int)getpid(), name);
		unlink(b->filename);
		b->thin_provisioned = true;
	}
	dev = scsi_dev_new(&p, b);
	cr_assert_not_null(dev);
	cr_assert_eq(scsi_dev_open(dev, err, sizeof(err)), 0, "open %s: %s", name, err);
	return dev;
}

struct th_nexus {
	struct scsi_nexus nx;
	struct scsi_lun_table table;
	struct scsi_lun_entry ents[8];
};

/* A nexus named `initiator` that sees devs[i] at LUN i. */
static inline void th_nexus_init(struct th_nexus *n, const char *initiator, uint16_t rtpi,
				 struct scsi_dev **devs, unsigned ndevs)
{
	memset(n, 0, sizeof(*n));
	n->nx.proto = SCSI_PROTO_ISCSI;
	snprintf(n->nx.initiator_name, sizeof(n->nx.initiator_name), "%s", initiator);
	snprintf(n->nx.initiator_port, sizeof(n->nx.initiator_port), "%s,i,0x230000000001", initiator);
	snprintf(n->nx.target_name, sizeof(n->nx.target_name), "iqn.2026-12.org.utgt:test");
	snprintf(n->nx.target_port, sizeof(n->nx.target_port), "iqn.2026-12.org.utgt:test,t,0x0001");
	n->nx.rel_tgt_id = rtpi;
	for (unsigned i = 0; i < ndevs && i < 8; i++) {
		n->ents[i].lun = i;
		n->ents[i].dev = devs[i];
	}
	n->table.n = ndevs;
	n->table.e = n->ents;
	n->nx.luns = &n->table;
	scsi_nexus_register(&n->nx);
}

/* Execute t (calloc'ed, CDB, nexus and buffers filled in), wait for its completion, return
 * what the transport would send and free t. */
static inline struct th_result th_run(struct scsi_task *t)
{
	struct th_wait w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	struct th_result r;

	t->done = th_done_cb;
	t->priv = &w;
	scsi_task_execute(t);
	pthread_mutex_lock(&w.mu);
	while (!w.done)
		pthread_cond_wait(&w.cv, &w.mu);
	pthread_mutex_unlock(&w.mu);
	r.status = t->status;
	memcpy(r.sense, t->sense, sizeof(r.sense));
	r.sense_len = t->sense_len;
	r.data_len = t->data_len;
	r.resid_kind = t->resid_kind;
	r.resid = t->resid;
	r.aborted = t->aborted;
	free(t);
	return r;
}

/* Run one CDB on `lun`.  `buf` is the data-out (dir WRITE) or receives data-in (dir READ);
 * `len` is the expected transfer length the "transport" announces. */
static inline struct th_result th_exec_attr(struct th_nexus *n, uint64_t lun, const uint8_t *cdb,
					    unsigned cdb_len, enum scsi_data_dir dir, void *buf,
					    uint32_t len, enum scsi_task_attr attr, uint64_t tag)
{
	struct scsi_task *t = calloc(1, sizeof(*t));
	struct iovec iov = {buf, len};

	memcpy(t->cdb, cdb, cdb_len);
	t->cdb_len = (uint8_t)cdb_len;
	t->lun = lun;
	t->nexus = &n->nx;
	t->attr = attr;
	t->tag = tag;
	t->dir = dir;
	t->exp_xfer_len = len;
	t->iov = len ? &iov : NULL;
	t->iovcnt = len ? 1 : 0;
	return th_run(t);
}

static inline struct th_result th_exec(struct th_nexus *n, uint64_t lun, const uint8_t *cdb,
				       unsigned cdb_len, enum scsi_data_dir dir, void *buf, uint32_t len)
{
	return th_exec_attr(n, lun, cdb, cdb_len, dir, buf, len, SCSI_ATTR_SIMPLE, 0);
}

/* Sense accessors that understand both fixed (70h/71h) and descriptor (72h/73h) formats. */
static inline uint8_t th_sense_key(const struct th_result *r)
{
	if (r->sense_len < 3)
		return 0;
	return (r->sense[0] & 0x7f) >= 0x72 ? (r->sense[1] & 0xf) : (r->sense[2] & 0xf);
}
static inline uint8_t th_asc(const struct th_result *r)
{
	return (r->sense[0] & 0x7f) >= 0x72 ? r->sense[2] : r->sense[12];
}
static inline uint8_t th_ascq(const struct th_result *r)
{
	return (r->sense[0] & 0x7f) >= 0x72 ? r->sense[3] : r->sense[13];
}

/* Assert CHECK CONDITION with key/asc/ascq. */
#define th_assert_sense(r, key, asc, ascq)                                                         \
	do {                                                                                       \
		cr_assert_eq((r).status, SAM_STAT_CHECK_CONDITION, "status %#x", (r).status);       \
		cr_assert_eq(th_sense_key(&(r)), (key), "key %#x", th_sense_key(&(r)));             \
		cr_assert_eq(th_asc(&(r)), (asc), "asc %#x", th_asc(&(r)));                         \
		cr_assert_eq(th_ascq(&(r)), (ascq), "ascq %#x", th_ascq(&(r)));                     \
	} while (0)

/* Clear the power-on UNIT ATTENTION a fresh nexus gets, so tests start clean. */
static inline void th_clear_ua(struct th_nexus *n, uint64_t lun)
{
	uint8_t tur[6] = {0};
	for (int i = 0; i < 8; i++) {
		struct th_result r = th_exec(n, lun, tur, 6, SCSI_DIR_NONE, NULL, 0);
		if (r.status == SAM_STAT_GOOD || th_sense_key(&r) != SK_UNIT_ATTENTION)
			return;
	}
}

#endif
