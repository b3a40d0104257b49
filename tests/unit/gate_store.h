/* A test backstore whose reads wait at a gate the test opens, so a command can be caught while
 * it is in flight (EXTENDED COPY running, a READ to be aborted by PREEMPT AND ABORT).  Memory
 * backed; one per test process.  Reads block the thread that submits them: submit gated
 * commands from a helper thread (gate_submit_async) or let a core worker do it. */
#ifndef UTGT_TEST_GATE_STORE_H
#define UTGT_TEST_GATE_STORE_H

#include "scsi_harness.h"

#include "scsi/scsi_core.h"

struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool open;
	unsigned waiting; /* reads that reached the gate so far */
	uint8_t *mem;
};
static struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0, NULL};

static int gate_bs_open(struct backstore *bs, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	g.mem = calloc(1, bs->size);
	return g.mem ? 0 : -1;
}

static void gate_bs_close(struct backstore *bs)
{
	(void)bs;
	free(g.mem);
	g.mem = NULL;
}

static void gate_bs_submit(struct backstore *bs, struct bs_io *io)
{
	uint64_t off = io->off;

	(void)bs;
	if (io->op == BS_READ) {
		pthread_mutex_lock(&g.mu);
		g.waiting++;
		pthread_cond_broadcast(&g.cv);
		while (!g.open)
			pthread_cond_wait(&g.cv, &g.mu);
		pthread_mutex_unlock(&g.mu);
	}
	for (int i = 0; i < io->iovcnt; i++) {
		if (io->op == BS_READ)
			memcpy(io->iov[i].iov_base, g.mem + off, io->iov[i].iov_len);
		else if (io->op == BS_WRITE)
			memcpy(g.mem + off, io->iov[i].iov_base, io->iov[i].iov_len);
		off += io->iov[i].iov_len;
	}
	io->cb(io, BS_OK);
}

static const struct backstore_ops gate_ops = {
    .name = "test_gate", .open = gate_bs_open, .close = gate_bs_close, .submit = gate_bs_submit};

/* A gated LU of `size` bytes (512-byte blocks); the gate starts closed. */
static inline struct scsi_dev *gate_make_dev(const char *name, uint64_t size)
{
	struct scsi_dev_params prm;
	struct backstore *b = calloc(1, sizeof(*b));
	struct scsi_dev *dev;
	char err[128];

	memset(&prm, 0, sizeof(prm));
	snprintf(prm.name, sizeof(prm.name), "%s", name);
	b->ops = &gate_ops;
	b->size = size;
	b->block_size = 512;
	snprintf(b->name, sizeof(b->name), "%s", name);
	dev = scsi_dev_new(&prm, b);
	cr_assert_not_null(dev);
	cr_assert_eq(scsi_dev_open(dev, err, sizeof(err)), 0, "%s", err);
	g.open = false;
	g.waiting = 0;
	return dev;
}

static inline void gate_wait_reads(unsigned n)
{
	pthread_mutex_lock(&g.mu);
	while (g.waiting < n)
		pthread_cond_wait(&g.cv, &g.mu);
	pthread_mutex_unlock(&g.mu);
}

static inline void gate_set(bool open)
{
	pthread_mutex_lock(&g.mu);
	g.open = open;
	pthread_cond_broadcast(&g.cv);
	pthread_mutex_unlock(&g.mu);
}

/* A task the test owns, submitted from a helper thread (so a gated read blocks that thread,
 * not the test), with a completion the test can wait for. */
struct async_task {
	struct scsi_task t;
	struct iovec iov;
	uint8_t buf[4096];
	struct th_wait w;
	pthread_t thr;
};

static void *async_submit_main(void *arg)
{
	scsi_task_execute(&((struct async_task *)arg)->t);
	return NULL;
}

static inline struct async_task *async_task_new(struct th_nexus *n, uint64_t lun,
						const uint8_t *cdb, unsigned cdb_len,
						enum scsi_data_dir dir, const void *data,
						uint32_t len, uint64_t tag)
{
	struct async_task *a = calloc(1, sizeof(*a));

	cr_assert_leq(len, sizeof(a->buf));
	pthread_mutex_init(&a->w.mu, NULL);
	pthread_cond_init(&a->w.cv, NULL);
	memcpy(a->t.cdb, cdb, cdb_len);
	a->t.cdb_len = (uint8_t)cdb_len;
	a->t.lun = lun;
	a->t.nexus = &n->nx;
	a->t.tag = tag;
	a->t.dir = dir;
	a->t.exp_xfer_len = len;
	if (data)
		memcpy(a->buf, data, len);
	a->iov.iov_base = a->buf;
	a->iov.iov_len = len;
	a->t.iov = len ? &a->iov : NULL;
	a->t.iovcnt = len ? 1 : 0;
	a->t.done = th_done_cb;
	a->t.priv = &a->w;
	return a;
}

static inline void async_task_start(struct async_task *a)
{
	cr_assert_eq(pthread_create(&a->thr, NULL, async_submit_main, a), 0);
}

/* Wait for completion and for the submitting thread; frees nothing. */
static inline void async_task_wait(struct async_task *a)
{
	pthread_mutex_lock(&a->w.mu);
	while (!a->w.done)
		pthread_cond_wait(&a->w.cv, &a->w.mu);
	pthread_mutex_unlock(&a->w.mu);
	pthread_join(a->thr, NULL);
}

#endif
