/* Helpers shared by the tests/unit/test_sbc_*.c files: every test body runs once on a ramdisk
 * LU and once on a (thin, sparse) fileio LU, through scsi_task_execute() like a transport;
 * CDB builders; sense field accessors (INFORMATION, field pointer); a backstore that fails
 * its I/O; bounded polling. */
#ifndef UTGT_TEST_SBC_H
#define UTGT_TEST_SBC_H

#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>

#include "scsi/sbc.h"
#include "tests/unit/scsi_harness.h"

#define FX_BLOCKS 8192u /* 4 MiB at 512 bytes */

struct sbc_fx {
	struct scsi_dev *dev;
	struct th_nexus n;
	const char *handler;
	uint32_t bsz;
	char file[PATH_MAX];
};

static inline void fx_init_bs(struct sbc_fx *fx, const char *handler, uint32_t bsz, uint64_t blocks)
{
	static atomic_uint seq;
	char name[32];

	memset(fx, 0, sizeof(*fx));
	snprintf(name, sizeof(name), "sbc%u", atomic_fetch_add(&seq, 1));
	fx->handler = handler;
	fx->bsz = bsz;
	fx->dev = th_make_dev(handler, name, blocks * bsz, bsz);
	snprintf(fx->file, sizeof(fx->file), "%s", fx->dev->bs->filename);
	th_nexus_init(&fx->n, "iqn.2026-12.org.utgt:sbc-test", 1, &fx->dev, 1);
	th_clear_ua(&fx->n, 0);
}

static inline void fx_init(struct sbc_fx *fx, const char *handler)
{
	fx_init_bs(fx, handler, 512, FX_BLOCKS);
}

static inline void fx_fini(struct sbc_fx *fx)
{
	scsi_nexus_unregister(&fx->n.nx);
	scsi_dev_destroy(fx->dev);
	if (fx->file[0])
		unlink(fx->file);
}

static inline bool fx_fileio(const struct sbc_fx *fx)
{
	return !strcmp(fx->handler, "vdisk_fileio");
}

/* Thin provisioning on the ramdisk too (it can drop pages), so UNMAP runs on both. */
static inline void fx_thin(struct sbc_fx *fx)
{
	fx->dev->bs->thin_provisioned = true;
	cr_assert(sbc_thin(fx->dev), "%s cannot deallocate", fx->handler);
}

/* One test body, two Criterion tests: ramdisk and fileio. */
#define SBC_TEST(suite, name)                                                                      \
	static void suite##_##name##_body(struct sbc_fx *fx);                                      \
	Test(suite, name##_ramdisk)                                                   \
	{                                                                                          \
		struct sbc_fx fx;                                                                  \
		fx_init(&fx, "ramdisk");                                                           \
		suite##_##name##_body(&fx);                                                        \
		fx_fini(&fx);                                                                      \
	}                                                                                          \
	Test(suite, name##_fileio)                                                   \
	{                                                                                          \
		struct sbc_fx fx;                                                                  \
		fx_init(&fx, "vdisk_fileio");                                                      \
		suite##_##name##_body(&fx);                                                        \
		fx_fini(&fx);                                                                      \
	}                                                                                          \
	static void suite##_##name##_body(struct sbc_fx *fx)

/* ---- CDBs ---- */

static inline void cdb10(uint8_t *c, uint8_t op, uint8_t b1, uint32_t lba, uint16_t n)
{
	memset(c, 0, 16);
	c[0] = op;
	c[1] = b1;
	put_be32(c + 2, lba);
	put_be16(c + 7, n);
}

static inline void cdb12(uint8_t *c, uint8_t op, uint8_t b1, uint32_t lba, uint32_t n)
{
	memset(c, 0, 16);
	c[0] = op;
	c[1] = b1;
	put_be32(c + 2, lba);
	put_be32(c + 6, n);
}

static inline void cdb16(uint8_t *c, uint8_t op, uint8_t b1, uint64_t lba, uint32_t n)
{
	memset(c, 0, 16);
	c[0] = op;
	c[1] = b1;
	put_be64(c + 2, lba);
	put_be32(c + 10, n);
}

static inline unsigned cdb_len_of(uint8_t op)
{
	return op < 0x20 ? 6 : op < 0x60 ? 10 : op < 0xa0 ? 16 : 12;
}

static inline struct th_result fx_exec(struct sbc_fx *fx, const uint8_t *cdb, enum scsi_data_dir dir,
				       void *buf, uint32_t len)
{
	return th_exec(&fx->n, 0, cdb, cdb_len_of(cdb[0]), dir, buf, len);
}

static inline struct th_result fx_write(struct sbc_fx *fx, uint64_t lba, uint32_t n, const void *buf)
{
	uint8_t c[16];

	cdb16(c, 0x8a, 0, lba, n);
	return fx_exec(fx, c, SCSI_DIR_WRITE, (void *)buf, n * fx->bsz);
}

static inline struct th_result fx_read(struct sbc_fx *fx, uint64_t lba, uint32_t n, void *buf)
{
	uint8_t c[16];

	cdb16(c, 0x88, 0, lba, n);
	return fx_exec(fx, c, SCSI_DIR_READ, buf, n * fx->bsz);
}

/* Write n blocks of byte v at lba, asserting success. */
static inline void fx_fill(struct sbc_fx *fx, uint64_t lba, uint32_t n, uint8_t v)
{
	uint8_t *b = malloc((size_t)n * fx->bsz);
	struct th_result r;

	memset(b, v, (size_t)n * fx->bsz);
	r = fx_write(fx, lba, n, b);
	free(b);
	cr_assert_eq(r.status, SAM_STAT_GOOD, "fill write failed, key %#x asc %#x", th_sense_key(&r),
		     th_asc(&r));
}

/* Assert the n blocks at lba all hold byte v. */
static inline void fx_expect(struct sbc_fx *fx, uint64_t lba, uint32_t n, uint8_t v)
{
	size_t len = (size_t)n * fx->bsz;
	uint8_t *b = malloc(len);
	struct th_result r;

	memset(b, ~v, len);
	r = fx_read(fx, lba, n, b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	for (size_t i = 0; i < len; i++)
		cr_assert_eq(b[i], v, "%s: byte %zu of LBA %llu+: %#x, expected %#x", fx->handler, i,
			     (unsigned long long)lba, b[i], v);
	free(b);
}

/* ---- sense details ---- */

static inline bool th_fixed(const struct th_result *r)
{
	return (r->sense[0] & 0x7f) < 0x72;
}

/* INFORMATION field; false when not valid / absent. */
static inline bool th_info(const struct th_result *r, uint64_t *info)
{
	if (th_fixed(r)) {
		if (!(r->sense[0] & 0x80))
			return false;
		*info = get_be32(r->sense + 3);
		return true;
	}
	for (unsigned off = 8; off + 2 <= r->sense_len; off += 2 + r->sense[off + 1]) {
		if (r->sense[off] == 0x00) {
			*info = get_be64(r->sense + off + 4);
			return true;
		}
	}
	return false;
}

/* Sense-key-specific field pointer: byte, bit (-1: none), in CDB?  false when SKSV=0. */
static inline bool th_field(const struct th_result *r, uint16_t *byte, int *bit, bool *cdb)
{
	const uint8_t *p = NULL;

	if (th_fixed(r)) {
		p = r->sense + 15;
	} else {
		for (unsigned off = 8; off + 2 <= r->sense_len; off += 2 + r->sense[off + 1])
			if (r->sense[off] == 0x02)
				p = r->sense + off + 4;
	}
	if (!p || !(p[0] & 0x80))
		return false;
	*cdb = p[0] & 0x40;
	*bit = (p[0] & 0x08) ? (p[0] & 7) : -1;
	*byte = get_be16(p + 1);
	return true;
}

#define th_assert_field(r, in_cdb, byte_, bit_)                                                    \
	do {                                                                                       \
		uint16_t fb_;                                                                      \
		int fbit_;                                                                         \
		bool fc_;                                                                          \
		cr_assert(th_field(&(r), &fb_, &fbit_, &fc_), "no field pointer");                 \
		cr_assert_eq(fc_, (in_cdb), "C/D %d", fc_);                                        \
		cr_assert_eq(fb_, (byte_), "field byte %u", fb_);                                  \
		cr_assert_eq(fbit_, (bit_), "field bit %d", fbit_);                                \
	} while (0)

/* ---- stores with a twist: one that fails every I/O, one that records what it is asked ---- */

static inline int failing_open(struct backstore *bs, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	bs->can_unmap = true;
	bs->unmap_zeroes = true;
	return 0;
}

static inline void failing_close(struct backstore *bs)
{
	(void)bs;
}

static inline void failing_submit(struct backstore *bs, struct bs_io *io)
{
	(void)bs;
	io->cb(io, BS_EIO);
}

static const struct backstore_ops failing_ops = {
	.name = "failing",
	.open = failing_open,
	.close = failing_close,
	.submit = failing_submit,
};

/* A ramdisk that records the verbs it is given (flags of the last WRITE, FLUSH count). */
struct spy_log {
	atomic_int writes, flushes, unmaps, write_sames;
	atomic_bool last_fua;
};
static struct spy_log spy;

static inline int spy_open(struct backstore *bs, char *err, size_t errlen)
{
	return bs_ramdisk_ops.open(bs, err, errlen);
}

static inline void spy_close(struct backstore *bs)
{
	bs_ramdisk_ops.close(bs);
}

static inline void spy_submit(struct backstore *bs, struct bs_io *io)
{
	switch (io->op) {
	case BS_WRITE:
		atomic_fetch_add(&spy.writes, 1);
		atomic_store(&spy.last_fua, io->fua);
		break;
	case BS_FLUSH:
		atomic_fetch_add(&spy.flushes, 1);
		break;
	case BS_UNMAP:
		atomic_fetch_add(&spy.unmaps, 1);
		break;
	case BS_WRITE_SAME:
		atomic_fetch_add(&spy.write_sames, 1);
		atomic_store(&spy.last_fua, io->fua);
		break;
	default:
		break;
	}
	bs_ramdisk_ops.submit(bs, io);
}

static const struct backstore_ops spy_ops = {
	.name = "spy",
	.open = spy_open,
	.close = spy_close,
	.submit = spy_submit,
};

/* A ramdisk that can park the next I/O of one kind (READ, WRITE, ...) until released, and
 * logs the order in which I/Os reach it: for deterministic ordering tests. */
struct gate_log {
	enum bs_op op;
	uint64_t off;
	uint8_t first; /* first data byte of a write */
};
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int armed;            /* op to park, or -1 */
	struct bs_io *parked[8];
	int nparked;
	struct backstore *bs;
	struct gate_log log[256];
	atomic_int nlog;
} gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, -1, {0}, 0, NULL, {{0}}, 0};

static inline void gate_submit(struct backstore *bs, struct bs_io *io)
{
	int i = atomic_fetch_add(&gate.nlog, 1);

	if (i < 256) {
		gate.log[i].op = io->op;
		gate.log[i].off = io->off;
		gate.log[i].first = io->iovcnt ? *(uint8_t *)io->iov[0].iov_base : 0;
	}
	pthread_mutex_lock(&gate.mu);
	gate.bs = bs;
	if ((int)io->op == gate.armed && gate.nparked < 8) {
		gate.parked[gate.nparked++] = io;
		gate.armed = -1; /* one-shot */
		pthread_cond_broadcast(&gate.cv);
		pthread_mutex_unlock(&gate.mu);
		return;
	}
	pthread_mutex_unlock(&gate.mu);
	bs_ramdisk_ops.submit(bs, io);
}

static inline void gate_arm(enum bs_op op)
{
	pthread_mutex_lock(&gate.mu);
	gate.armed = (int)op;
	pthread_mutex_unlock(&gate.mu);
}

/* Wait (bounded) until an I/O is parked. */
static inline bool gate_wait_parked(double secs)
{
	struct timespec ts;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)secs + 1;
	pthread_mutex_lock(&gate.mu);
	while (!gate.nparked)
		if (pthread_cond_timedwait(&gate.cv, &gate.mu, &ts))
			break;
	ok = gate.nparked > 0;
	pthread_mutex_unlock(&gate.mu);
	return ok;
}

static inline void gate_release(void)
{
	struct bs_io *io[8];
	int n;

	pthread_mutex_lock(&gate.mu);
	n = gate.nparked;
	memcpy(io, gate.parked, sizeof(io));
	gate.nparked = 0;
	pthread_mutex_unlock(&gate.mu);
	for (int i = 0; i < n; i++)
		bs_ramdisk_ops.submit(gate.bs, io[i]);
}

static const struct backstore_ops gate_ops = {
	.name = "gate",
	.open = spy_open,
	.close = spy_close,
	.submit = gate_submit,
};

/* An LU on a store with the given ops (not in the registry). */
static inline void fx_init_ops(struct sbc_fx *fx, const struct backstore_ops *ops)
{
	struct scsi_dev_params p;
	struct backstore *b = calloc(1, sizeof(*b));
	char err[128];

	memset(fx, 0, sizeof(*fx));
	memset(&p, 0, sizeof(p));
	memset(&spy, 0, sizeof(spy));
	gate.armed = -1;
	gate.nparked = 0;
	atomic_store(&gate.nlog, 0);
	snprintf(p.name, sizeof(p.name), "%s", ops->name);
	b->ops = ops;
	b->size = (uint64_t)FX_BLOCKS * 512;
	b->block_size = 512;
	b->thin_provisioned = true;
	fx->handler = ops->name;
	fx->bsz = 512;
	fx->dev = scsi_dev_new(&p, b);
	cr_assert_not_null(fx->dev);
	cr_assert_eq(scsi_dev_open(fx->dev, err, sizeof(err)), 0, "%s", err);
	th_nexus_init(&fx->n, "iqn.2026-12.org.utgt:sbc-ops", 1, &fx->dev, 1);
	th_clear_ua(&fx->n, 0);
}

/* ---- a task over several iovecs, as a transport with scattered buffers would submit ---- */

static inline struct th_result fx_exec_iov(struct sbc_fx *fx, const uint8_t *cdb,
					   enum scsi_data_dir dir, struct iovec *iov, int iovcnt,
					   uint32_t exp)
{
	struct scsi_task *t = calloc(1, sizeof(*t));

	memcpy(t->cdb, cdb, 16);
	t->cdb_len = (uint8_t)cdb_len_of(cdb[0]);
	t->nexus = &fx->n.nx;
	t->dir = dir;
	t->exp_xfer_len = exp;
	t->iov = iov;
	t->iovcnt = iovcnt;
	return th_run(t);
}

/* ---- a command on its own thread, for tests that need several in flight ---- */

struct fx_job {
	struct sbc_fx *fx;
	uint8_t cdb[16];
	enum scsi_data_dir dir;
	void *buf;
	uint32_t len;
	uint64_t tag;
	struct th_result r;
	pthread_t th;
};

static inline void *fx_job_main(void *arg)
{
	struct fx_job *j = arg;

	j->r = th_exec_attr(&j->fx->n, 0, j->cdb, cdb_len_of(j->cdb[0]), j->dir, j->buf, j->len,
			    SCSI_ATTR_SIMPLE, j->tag);
	return NULL;
}

static inline void fx_job_start(struct fx_job *j, struct sbc_fx *fx, const uint8_t *cdb,
				enum scsi_data_dir dir, void *buf, uint32_t len)
{
	static atomic_ulong tags = 1000;

	j->fx = fx;
	memcpy(j->cdb, cdb, 16);
	j->dir = dir;
	j->buf = buf;
	j->len = len;
	j->tag = atomic_fetch_add(&tags, 1);
	cr_assert_eq(pthread_create(&j->th, NULL, fx_job_main, j), 0);
}

static inline struct th_result fx_job_join(struct fx_job *j)
{
	pthread_join(j->th, NULL);
	return j->r;
}

/* ---- task management ---- */

static inline void fx_tmf_done(struct scsi_tmf *tmf)
{
	struct th_wait *w = tmf->priv;

	pthread_mutex_lock(&w->mu);
	w->done = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* ABORT TASK for the command tagged `tag` on LUN 0, returning once the TMF completed. */
static inline enum scsi_tmf_resp fx_abort_task(struct sbc_fx *fx, uint64_t tag)
{
	struct th_wait w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	struct scsi_tmf tmf;

	memset(&tmf, 0, sizeof(tmf));
	tmf.fn = SCSI_TMF_ABORT_TASK;
	tmf.ref_tag = tag;
	tmf.nexus = &fx->n.nx;
	tmf.done = fx_tmf_done;
	tmf.priv = &w;
	scsi_tmf_execute(&tmf);
	pthread_mutex_lock(&w.mu);
	while (!w.done)
		pthread_cond_wait(&w.cv, &w.mu);
	pthread_mutex_unlock(&w.mu);
	return tmf.resp;
}

/* ---- time ---- */

static inline double fx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Poll cond() every millisecond for at most `secs`; true when it became true. */
static inline bool fx_poll(bool (*cond)(void *), void *arg, double secs)
{
	double end = fx_now() + secs;

	while (!cond(arg)) {
		if (fx_now() > end)
			return false;
		usleep(1000);
	}
	return true;
}

#endif
