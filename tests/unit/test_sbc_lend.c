/* READs lent from the store's memory (scsi/sbc_lend.c, scsi_task.h "Lent data-in"): the data
 * comes from the ramdisk's own mapping, the task's buffer untouched; a WRITE overlapping lent
 * data waits until the transport releases it, so what is "sent" in several partial pieces is
 * never torn; other ranges write at once; a READ while a writer is in flight is copied; a TMF
 * aborts a parked writer without it writing; exclusive commands wait; destroy waits for the
 * release; stores without map copy as before. */
#include "tests/unit/sbc_test.h"

#define LBAS 16u /* one 8 KiB READ at 512-byte blocks: two 4 KiB blocks */

struct lent {
	struct scsi_task *t;
	uint8_t *buf; /* the transport's own room: must stay untouched when lent */
	struct th_wait w;
	bool release_in_done;
};

static void lent_done(struct scsi_task *t)
{
	struct lent *l = t->priv;

	if (l->release_in_done)
		scsi_task_data_release(t);
	pthread_mutex_lock(&l->w.mu);
	l->w.done = true;
	pthread_cond_signal(&l->w.cv);
	pthread_mutex_unlock(&l->w.mu);
}

/* A READ of n blocks at lba that asks for lending; returns once done() ran. */
static void lent_read(struct lent *l, struct sbc_fx *fx, uint64_t lba, uint32_t n, bool lend)
{
	struct scsi_task *t = calloc(1, sizeof(*t) + sizeof(struct iovec));
	uint32_t len = n * fx->bsz;
	struct iovec *v = (struct iovec *)(t + 1);

	l->buf = malloc(len);
	memset(l->buf, 0xee, len);
	v->iov_base = l->buf;
	v->iov_len = len;
	cdb16(t->cdb, 0x88, 0, lba, n);
	t->cdb_len = 16;
	t->nexus = &fx->n.nx;
	t->dir = SCSI_DIR_READ;
	t->exp_xfer_len = len;
	t->iov = v;
	t->iovcnt = 1;
	t->din_lend = lend;
	t->done = lent_done;
	t->priv = l;
	l->t = t;
	pthread_mutex_init(&l->w.mu, NULL);
	pthread_cond_init(&l->w.cv, NULL);
	l->w.done = false;
	scsi_task_execute(t);
	pthread_mutex_lock(&l->w.mu);
	while (!l->w.done)
		pthread_cond_wait(&l->w.cv, &l->w.mu);
	pthread_mutex_unlock(&l->w.mu);
	cr_assert_eq(t->status, SAM_STAT_GOOD);
	cr_assert_eq(t->data_len, len);
}

static void lent_free(struct lent *l)
{
	scsi_task_data_release(l->t);
	free(l->t);
	free(l->buf);
}

static bool parked1(void *arg)
{
	return scsi_lendgate_parked(arg) == 1;
}

static bool waiters1(void *arg)
{
	return sbc_rangelock_waiters(arg) == 1;
}

static void fill(struct sbc_fx *fx, uint64_t lba, uint32_t n, uint8_t v)
{
	fx_fill(fx, lba, n, v);
}

Test(sbc_lend, ramdisk_read_is_the_store_itself)
{
	struct sbc_fx fx;
	struct lent l = {0};
	const uint8_t *p;

	fx_init(&fx, "ramdisk");
	fill(&fx, 0, LBAS, 0x5a);
	lent_read(&l, &fx, 0, LBAS, true);
	p = l.t->din_lent;
	cr_assert_not_null(p, "a ramdisk READ was copied");
	for (uint32_t i = 0; i < LBAS * 512; i++) {
		cr_assert_eq(p[i], 0x5a, "lent byte %u", i);
		cr_assert_eq(l.buf[i], 0xee, "the transport's buffer was written at %u", i);
	}
	lent_free(&l);
	/* released: lending goes on, and data written since is what the next READ sees */
	fill(&fx, 0, LBAS, 0x77);
	lent_read(&l, &fx, 0, LBAS, true);
	cr_assert_not_null(l.t->din_lent);
	cr_assert_eq(((const uint8_t *)l.t->din_lent)[100], 0x77);
	lent_free(&l);
	fx_fini(&fx);
}

Test(sbc_lend, not_asked_or_no_map_copies)
{
	struct sbc_fx fx;
	struct lent l = {0};

	fx_init(&fx, "ramdisk");
	fill(&fx, 8, 4, 0x31);
	lent_read(&l, &fx, 8, 4, false);
	cr_assert_null(l.t->din_lent, "lent without din_lend");
	cr_assert_eq(l.buf[0], 0x31);
	cr_assert_eq(l.buf[4 * 512 - 1], 0x31);
	lent_free(&l);
	fx_fini(&fx);

	fx_init(&fx, "vdisk_fileio");
	cr_assert_null(fx.dev->lend, "a file has no memory to lend");
	fill(&fx, 8, 4, 0x32);
	lent_read(&l, &fx, 8, 4, true);
	cr_assert_null(l.t->din_lent);
	cr_assert_eq(l.buf[0], 0x32);
	lent_free(&l);
	fx_fini(&fx);
}

/* The transport sends the lent bytes in two partial pieces with a WRITE of the same blocks
 * arriving in between: the WRITE waits for the release, so the bytes sent are all the old
 * ones, and the new ones land after. */
Test(sbc_lend, overlapping_write_waits_for_release)
{
	struct sbc_fx fx;
	struct lent l = {0};
	struct fx_job wr;
	uint8_t *wbuf = malloc(8 * 512), sent[LBAS * 512];
	const uint8_t *p;

	fx_init(&fx, "ramdisk");
	fill(&fx, 0, LBAS, 0x11);
	lent_read(&l, &fx, 0, LBAS, true);
	p = l.t->din_lent;
	cr_assert_not_null(p);
	memcpy(sent, p, 3000); /* a partial send: the socket took 3000 bytes */

	memset(wbuf, 0x22, 8 * 512);
	{
		uint8_t c[16];

		cdb16(c, 0x8a, 0, 4, 8);
		fx_job_start(&wr, &fx, c, SCSI_DIR_WRITE, wbuf, 8 * 512);
	}
	cr_assert(fx_poll(parked1, fx.dev, 5), "the overlapping WRITE did not park");
	memcpy(sent + 3000, p + 3000, sizeof(sent) - 3000); /* the rest, later */
	for (size_t i = 0; i < sizeof(sent); i++)
		cr_assert_eq(sent[i], 0x11, "byte %zu sent torn: %#x", i, sent[i]);

	lent_free(&l);
	cr_assert_eq(fx_job_join(&wr).status, SAM_STAT_GOOD);
	cr_assert_eq(scsi_lendgate_parked(fx.dev), 0);
	fx_expect(&fx, 0, 4, 0x11);
	fx_expect(&fx, 4, 8, 0x22);
	fx_expect(&fx, 12, 4, 0x11);
	free(wbuf);
	fx_fini(&fx);
}

/* Blocks the lent READ does not cover are written at once; while a writer waits, READs are
 * copied (no new lending can starve it). */
Test(sbc_lend, other_ranges_go_on_and_reads_copy_while_a_writer_waits)
{
	struct sbc_fx fx;
	struct lent a = {0}, b = {0};
	struct fx_job wr;
	uint8_t *wbuf = malloc(512);

	fx_init(&fx, "ramdisk");
	fill(&fx, 0, LBAS, 0x41);
	fill(&fx, 200, 8, 0x42);
	lent_read(&a, &fx, 0, LBAS, true);
	cr_assert_not_null(a.t->din_lent);
	fill(&fx, 100, 8, 0x43); /* another range: does not wait */
	fx_expect(&fx, 100, 8, 0x43);

	memset(wbuf, 0x44, 512);
	{
		uint8_t c[16];

		cdb16(c, 0x8a, 0, 0, 1);
		fx_job_start(&wr, &fx, c, SCSI_DIR_WRITE, wbuf, 512);
	}
	cr_assert(fx_poll(parked1, fx.dev, 5));
	lent_read(&b, &fx, 200, 8, true);
	cr_assert_null(b.t->din_lent, "lent while a writer waits");
	cr_assert_eq(b.buf[0], 0x42);
	cr_assert_eq(b.buf[8 * 512 - 1], 0x42);
	lent_free(&b);

	lent_free(&a);
	cr_assert_eq(fx_job_join(&wr).status, SAM_STAT_GOOD);
	fx_expect(&fx, 0, 1, 0x44);
	lent_read(&b, &fx, 200, 8, true);
	cr_assert_not_null(b.t->din_lent, "no writer left: lending again");
	lent_free(&b);
	free(wbuf);
	fx_fini(&fx);
}

/* An ABORT TASK for a WRITE parked behind lent data: it ends aborted and writes nothing. */
Test(sbc_lend, parked_writer_can_be_aborted)
{
	struct sbc_fx fx;
	struct lent l = {0};
	struct fx_job wr;
	uint8_t *wbuf = malloc(LBAS * 512);

	fx_init(&fx, "ramdisk");
	fill(&fx, 0, LBAS, 0x51);
	lent_read(&l, &fx, 0, LBAS, true);
	memset(wbuf, 0x52, LBAS * 512);
	{
		uint8_t c[16];

		cdb16(c, 0x8a, 0, 0, LBAS);
		fx_job_start(&wr, &fx, c, SCSI_DIR_WRITE, wbuf, LBAS * 512);
	}
	cr_assert(fx_poll(parked1, fx.dev, 5));
	fx_abort_task(&fx, wr.tag);
	cr_assert(fx_job_join(&wr).aborted, "the parked WRITE was not aborted");
	cr_assert_eq(scsi_lendgate_parked(fx.dev), 0);
	cr_assert_eq(((const uint8_t *)l.t->din_lent)[0], 0x51);
	lent_free(&l);
	fx_expect(&fx, 0, LBAS, 0x51);
	free(wbuf);
	fx_fini(&fx);
}

/* A transport whose connection dropped releases without sending: the writer goes on. */
Test(sbc_lend, release_without_sending_lets_the_writer_in)
{
	struct sbc_fx fx;
	struct lent l = {0};
	struct fx_job wr;
	uint8_t *wbuf = malloc(512);

	fx_init(&fx, "ramdisk");
	lent_read(&l, &fx, 0, 1, true);
	memset(wbuf, 0x61, 512);
	{
		uint8_t c[16];

		cdb16(c, 0x8a, 0, 0, 1);
		fx_job_start(&wr, &fx, c, SCSI_DIR_WRITE, wbuf, 512);
	}
	cr_assert(fx_poll(parked1, fx.dev, 5));
	scsi_task_data_release(l.t);
	scsi_task_data_release(l.t); /* twice: the second does nothing */
	lent_free(&l);
	cr_assert_eq(fx_job_join(&wr).status, SAM_STAT_GOOD);
	fx_expect(&fx, 0, 1, 0x61);
	free(wbuf);
	fx_fini(&fx);
}

/* COMPARE AND WRITE (exclusive) waits on the lent READ's shared range, as it waits on any
 * READ in flight. */
Test(sbc_lend, exclusive_command_waits_for_release)
{
	struct sbc_fx fx;
	struct lent l = {0};
	struct fx_job caw;
	uint8_t c[16] = {0x89}, cbuf[1024];

	fx_init(&fx, "ramdisk");
	fill(&fx, 3, 1, 'A');
	lent_read(&l, &fx, 0, LBAS, true);
	put_be64(c + 2, 3);
	c[13] = 1;
	memset(cbuf, 'A', 512);
	memset(cbuf + 512, 'B', 512);
	fx_job_start(&caw, &fx, c, SCSI_DIR_WRITE, cbuf, 1024);
	cr_assert(fx_poll(waiters1, fx.dev, 5), "COMPARE AND WRITE did not wait");
	cr_assert_eq(((const uint8_t *)l.t->din_lent)[3 * 512], 'A');
	lent_free(&l);
	cr_assert_eq(fx_job_join(&caw).status, SAM_STAT_GOOD);
	fx_expect(&fx, 3, 1, 'B');
	fx_fini(&fx);
}

/* Released from inside done(), the parked writer runs on. */
Test(sbc_lend, release_inside_done)
{
	struct sbc_fx fx;
	struct lent l = {.release_in_done = true};

	fx_init(&fx, "ramdisk");
	fill(&fx, 0, 2, 0x71);
	lent_read(&l, &fx, 0, 2, true);
	cr_assert_null(l.t->din_lent, "released in done()");
	fill(&fx, 0, 2, 0x72); /* would wait forever if the range were still held */
	fx_expect(&fx, 0, 2, 0x72);
	lent_free(&l);
	fx_fini(&fx);
}

struct destroy_job {
	struct scsi_dev *dev;
	atomic_bool done;
};

static void *destroy_main(void *arg)
{
	struct destroy_job *j = arg;

	scsi_dev_destroy(j->dev);
	atomic_store(&j->done, true);
	return NULL;
}

/* The LU's memory outlives its last command while data is lent: destroy waits. */
Test(sbc_lend, destroy_waits_for_the_release)
{
	struct sbc_fx fx;
	struct lent l = {0};
	struct destroy_job j;
	pthread_t th;

	fx_init(&fx, "ramdisk");
	fill(&fx, 0, 1, 0x81);
	lent_read(&l, &fx, 0, 1, true);
	scsi_nexus_unregister(&fx.n.nx);
	j.dev = fx.dev;
	atomic_store(&j.done, false);
	cr_assert_eq(pthread_create(&th, NULL, destroy_main, &j), 0);
	usleep(50000);
	cr_assert(!atomic_load(&j.done), "destroyed under lent data");
	cr_assert_eq(((const uint8_t *)l.t->din_lent)[0], 0x81);
	lent_free(&l);
	pthread_join(th, NULL);
	cr_assert(atomic_load(&j.done));
}

/* Writers and lending READs on two threads over the same 64 KiB: a READ that was lent
 * sees the same bytes before and after a pause (nothing wrote under it), each of its 4 KiB
 * blocks holds one writer's pattern, and every command succeeds. */
struct race {
	struct sbc_fx *fx;
	atomic_bool stop;
	unsigned lent, copied;
};

static void *race_writer(void *arg)
{
	struct race *r = arg;
	uint8_t *b = malloc(4096);

	for (unsigned i = 0; !atomic_load(&r->stop); i++) {
		memset(b, (uint8_t)(i % 250 + 1), 4096);
		cr_assert_eq(fx_write(r->fx, (i % 16) * 8, 8, b).status, SAM_STAT_GOOD);
	}
	free(b);
	return NULL;
}

Test(sbc_lend, lent_reads_are_stable_under_concurrent_writes)
{
	struct sbc_fx fx;
	struct race r = {.fx = &fx};
	pthread_t th;
	uint8_t *snap = malloc(128 * 512);

	fx_init(&fx, "ramdisk");
	fill(&fx, 0, 128, 0x01);
	cr_assert_eq(pthread_create(&th, NULL, race_writer, &r), 0);
	for (int i = 0; i < 2000; i++) {
		struct lent l = {0};
		const uint8_t *p;

		lent_read(&l, &fx, 0, 128, true);
		p = l.t->din_lent;
		if (p) {
			r.lent++;
			memcpy(snap, p, 128 * 512);
			sched_yield();
			cr_assert_eq(memcmp(snap, p, 128 * 512), 0, "lent data changed");
			for (int blk = 0; blk < 16; blk++)
				for (int k = 1; k < 4096; k++)
					cr_assert_eq(p[blk * 4096 + k], p[blk * 4096],
						     "4 KiB block %d torn at %d", blk, k);
		} else {
			r.copied++;
		}
		lent_free(&l);
	}
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);
	cr_assert_gt(r.lent, 0, "nothing was lent (%u copied)", r.copied);
	free(snap);
	fx_fini(&fx);
}
