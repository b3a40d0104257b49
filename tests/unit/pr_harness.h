/* Helpers for the reservation tests (test_spc_pr*.c, test_spc_reserve.c): an LU seen by three
 * initiators, and one-line PERSISTENT RESERVE IN/OUT, RESERVE/RELEASE calls. */
#ifndef UTGT_TEST_PR_HARNESS_H
#define UTGT_TEST_PR_HARNESS_H

#include <sys/stat.h>

#include "scsi_harness.h"

#include "scsi/spc_pr.h"

#define PR_A "iqn.2026-01.org.example:a"
#define PR_B "iqn.2026-01.org.example:b"
#define PR_C "iqn.2026-01.org.example:c"

struct pr_env {
	struct scsi_dev *dev;
	struct th_nexus a, b, c;
	char dir[64]; /* APTPL state directory ("" when none) */
};

/* A device with optional persistence directory, built like the harness builds one. */
static inline struct scsi_dev *pr_make_dev(const char *handler, const char *name,
					   const char *pr_dir)
{
	struct scsi_dev_params p;
	struct backstore *b = calloc(1, sizeof(*b));
	char err[256] = "";
	struct scsi_dev *dev;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	if (pr_dir)
		snprintf(p.pr_file_dir, sizeof(p.pr_file_dir), "%s", pr_dir);
	b->ops = backstore_find(handler);
	cr_assert_not_null(b->ops);
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->size = 1 << 20;
	b->block_size = 512;
	b->read_zero = true;
	if (!strcmp(handler, "vdisk_fileio")) {
		snprintf(b->filename, sizeof(b->filename), "/tmp/utgt-test-%d-%s.img",
			 (int)getpid(), name);
		unlink(b->filename);
	}
	dev = scsi_dev_new(&p, b);
	cr_assert_not_null(dev);
	cr_assert_eq(scsi_dev_open(dev, err, sizeof(err)), 0, "open: %s", err);
	return dev;
}

static inline void pr_env_nexuses(struct pr_env *e)
{
	th_nexus_init(&e->a, PR_A, 1, &e->dev, 1);
	th_nexus_init(&e->b, PR_B, 1, &e->dev, 1);
	th_nexus_init(&e->c, PR_C, 2, &e->dev, 1);
	th_clear_ua(&e->a, 0);
	th_clear_ua(&e->b, 0);
	th_clear_ua(&e->c, 0);
}

static inline void pr_env_up(struct pr_env *e, const char *handler, bool persist)
{
	memset(e, 0, sizeof(*e));
	if (persist) {
		snprintf(e->dir, sizeof(e->dir), "/tmp/utgt-pr-%d-XXXXXX", (int)getpid());
		cr_assert_not_null(mkdtemp(e->dir));
	}
	e->dev = pr_make_dev(handler, "prdev", persist ? e->dir : NULL);
	pr_env_nexuses(e);
}

static inline void pr_env_down_dev(struct pr_env *e)
{
	scsi_nexus_unregister(&e->a.nx);
	scsi_nexus_unregister(&e->b.nx);
	scsi_nexus_unregister(&e->c.nx);
	if (e->dev->bs && e->dev->bs->filename[0])
		unlink(e->dev->bs->filename);
	scsi_dev_destroy(e->dev);
	e->dev = NULL;
}

static inline void pr_env_down(struct pr_env *e)
{
	char path[128];

	if (e->dev)
		pr_env_down_dev(e);
	if (e->dir[0]) {
		snprintf(path, sizeof(path), "%s/prdev.pr", e->dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/prdev.pr.tmp", e->dir);
		unlink(path);
		rmdir(e->dir);
	}
	scsi_core_shutdown();
}

/* PERSISTENT RESERVE OUT with a 24-byte parameter list; flags is byte 20 (SPEC_I_PT 0x08,
 * ALL_TG_PT 0x04, APTPL 0x01). */
static inline struct th_result prout_flags(struct th_nexus *n, uint8_t sa, uint8_t type,
					   uint64_t rk, uint64_t sark, uint8_t flags)
{
	uint8_t cdb[10] = {0x5f, sa, type, 0, 0, 0, 0, 0, 24, 0};
	uint8_t p[24] = {0};

	put_be64(p, rk);
	put_be64(p + 8, sark);
	p[20] = flags;
	return th_exec(n, 0, cdb, 10, SCSI_DIR_WRITE, p, sizeof(p));
}

static inline struct th_result prout(struct th_nexus *n, uint8_t sa, uint8_t type, uint64_t rk,
				     uint64_t sark)
{
	return prout_flags(n, sa, type, rk, sark, 0);
}

/* PERSISTENT RESERVE OUT with an arbitrary parameter list. */
static inline struct th_result prout_raw(struct th_nexus *n, uint8_t sa, uint8_t type,
					 const uint8_t *p, uint32_t len)
{
	uint8_t cdb[10] = {0x5f, sa, type, 0, 0, 0, 0, 0, 0, 0};

	put_be32(cdb + 5, len);
	return th_exec(n, 0, cdb, 10, SCSI_DIR_WRITE, (void *)p, len);
}

static inline struct th_result prin(struct th_nexus *n, uint8_t sa, uint8_t *buf, uint16_t alloc)
{
	uint8_t cdb[10] = {0x5e, sa, 0, 0, 0, 0, 0, 0, 0, 0};

	put_be16(cdb + 7, alloc);
	memset(buf, 0xee, alloc);
	return th_exec(n, 0, cdb, 10, SCSI_DIR_READ, buf, alloc);
}

#define assert_good(x)                                                                             \
	do {                                                                                       \
		struct th_result _r = (x);                                                         \
		cr_assert_eq(_r.status, SAM_STAT_GOOD, "status %#x key %#x asc %#x/%#x",           \
			     _r.status, th_sense_key(&_r), th_asc(&_r), th_ascq(&_r));             \
	} while (0)
#define assert_conflict(x)                                                                         \
	do {                                                                                       \
		struct th_result _r = (x);                                                         \
		cr_assert_eq(_r.status, SAM_STAT_RESERVATION_CONFLICT,                             \
			     "status %#x key %#x asc %#x", _r.status, th_sense_key(&_r),           \
			     th_asc(&_r));                                                         \
	} while (0)

/* READ KEYS: returns the generation; keys into out (up to max), count into *n. */
static inline uint32_t pr_read_keys(struct th_nexus *n, uint64_t *out, unsigned max, unsigned *cnt)
{
	uint8_t buf[8 + 8 * 16];
	struct th_result r = prin(n, PRI_READ_KEYS, buf, sizeof(buf));
	uint32_t len;

	assert_good(r);
	len = get_be32(buf + 4);
	*cnt = len / 8;
	for (unsigned i = 0; i < *cnt && i < max && i < 16; i++)
		out[i] = get_be64(buf + 8 + 8 * i);
	return get_be32(buf);
}

/* READ RESERVATION: true when one exists, with its key and type. */
static inline bool pr_read_res(struct th_nexus *n, uint64_t *key, uint8_t *type)
{
	uint8_t buf[24];
	struct th_result r = prin(n, PRI_READ_RESERVATION, buf, sizeof(buf));

	assert_good(r);
	if (get_be32(buf + 4) == 0)
		return false;
	cr_assert_eq(get_be32(buf + 4), 16);
	*key = get_be64(buf + 8);
	*type = buf[21] & 0x0f;
	cr_assert_eq(buf[21] >> 4, 0, "scope");
	return true;
}

static inline struct th_result tur_on(struct th_nexus *n)
{
	uint8_t cdb[6] = {0};
	return th_exec(n, 0, cdb, 6, SCSI_DIR_NONE, NULL, 0);
}

static inline struct th_result read10(struct th_nexus *n, uint32_t lba, void *buf)
{
	uint8_t cdb[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0};
	put_be32(cdb + 2, lba);
	return th_exec(n, 0, cdb, 10, SCSI_DIR_READ, buf, 512);
}

static inline struct th_result write10(struct th_nexus *n, uint32_t lba, void *buf)
{
	uint8_t cdb[10] = {0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0};
	put_be32(cdb + 2, lba);
	return th_exec(n, 0, cdb, 10, SCSI_DIR_WRITE, buf, 512);
}

/* Assert the next command from n reports UNIT ATTENTION 2A/ascq, then nothing more. */
static inline void assert_ua(struct th_nexus *n, uint8_t ascq)
{
	struct th_result r = tur_on(n);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, ascq);
	r = tur_on(n);
	assert_good(r);
}

static inline void assert_no_ua(struct th_nexus *n)
{
	struct th_result r = tur_on(n);
	assert_good(r);
}

static inline struct th_result reserve6(struct th_nexus *n)
{
	uint8_t cdb[6] = {0x16, 0, 0, 0, 0, 0};
	return th_exec(n, 0, cdb, 6, SCSI_DIR_NONE, NULL, 0);
}

static inline struct th_result release6(struct th_nexus *n)
{
	uint8_t cdb[6] = {0x17, 0, 0, 0, 0, 0};
	return th_exec(n, 0, cdb, 6, SCSI_DIR_NONE, NULL, 0);
}

static inline void pr_tmf_done(struct scsi_tmf *tmf)
{
	struct th_wait *w = tmf->priv;

	pthread_mutex_lock(&w->mu);
	w->done = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* Run a TMF from n on LUN 0 and wait for its response, which must be FUNCTION COMPLETE. */
static inline void run_tmf(struct th_nexus *n, enum scsi_tmf_fn fn)
{
	struct th_wait w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	struct scsi_tmf tmf = {.fn = fn, .lun = 0, .nexus = &n->nx, .done = pr_tmf_done, .priv = &w};

	scsi_tmf_execute(&tmf);
	pthread_mutex_lock(&w.mu);
	while (!w.done)
		pthread_cond_wait(&w.cv, &w.mu);
	pthread_mutex_unlock(&w.mu);
	cr_assert_eq(tmf.resp, SCSI_TMF_COMPLETE);
}

#endif
