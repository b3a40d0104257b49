/* The LU range lock: the lock itself (grants, FIFO fairness, resumes), then its effect on real
 * commands, made deterministic with a store that parks one I/O until released: a WRITE waits
 * for a COMPARE AND WRITE holding its block, a COMPARE AND WRITE waits for a WRITE in flight,
 * later shared requests queue behind a waiting exclusive one, disjoint ranges never wait, and a
 * parked task can be aborted by ABORT TASK.
 *
 * Shared requests made while no exclusive one is held or waiting take no lock (they are only
 * counted), so an exclusive request waits for every one of them, whatever its range; shared
 * requests made while an exclusive one exists are recorded with their ranges.  The tests that
 * need recorded shared holders raise the flag first with an exclusive lock far away. */
#include "tests/unit/sbc_test.h"

#include "scsi/scsi_core.h"

/* ---- the lock on its own ---- */

static int order[16], norder;

static void note_resume(struct sbc_cmd *c)
{
	order[norder++] = (int)(intptr_t)c->work;
}

static struct sbc_cmd *mk(struct scsi_dev *dev, int id)
{
	struct sbc_cmd *c = calloc(1, sizeof(*c));

	c->dev = dev;
	c->work = (scsi_handler_fn)(intptr_t)id; /* just a tag for note_resume */
	return c;
}

static void drop(struct sbc_cmd *c)
{
	c->work = NULL;
	sbc_cmd_free(c);
}

/* An exclusive holder at the end of the LU: from now on shared requests are recorded. */
static struct sbc_cmd *flag_up(struct scsi_dev *dev)
{
	struct sbc_cmd *f = mk(dev, 99);

	cr_assert(sbc_range_lock(f, dev->nr_blocks - 1, 1, true, note_resume));
	cr_assert(scsi_exc_get(dev) & SCSI_EXC_RANGE);
	return f;
}

SBC_TEST(rangelock, shared_requests_take_no_lock_until_an_exclusive_one_comes)
{
	struct sbc_cmd *a = mk(fx->dev, 1), *b = mk(fx->dev, 2), *x = mk(fx->dev, 3);

	norder = 0;
	cr_assert(sbc_range_lock(a, 0, 10, false, note_resume));
	cr_assert(sbc_range_lock(b, 500, 10, false, note_resume));
	cr_assert_eq(fx->dev->rl_fast, 2);
	cr_assert_eq(scsi_exc_get(fx->dev), 0);
	/* disjoint from both, yet it waits: their ranges were not recorded */
	cr_assert_not(sbc_range_lock(x, 100, 1, true, note_resume));
	cr_assert(scsi_exc_get(fx->dev) & SCSI_EXC_RANGE);
	drop(a);
	cr_assert_eq(norder, 0);
	drop(b); /* the last one out lets it in */
	cr_assert_eq(norder, 1);
	cr_assert_eq(order[0], 3);
	cr_assert_eq(fx->dev->rl_fast, 0);
	drop(x);
	cr_assert_eq(scsi_exc_get(fx->dev), 0, "flag down once no exclusive request is left");
}

SBC_TEST(rangelock, shared_requests_share)
{
	struct sbc_cmd *a = mk(fx->dev, 1), *b = mk(fx->dev, 2);

	cr_assert(sbc_range_lock(a, 0, 10, false, note_resume));
	cr_assert(sbc_range_lock(b, 5, 10, false, note_resume));
	drop(a);
	drop(b);
	cr_assert_eq(sbc_rangelock_waiters(fx->dev), 0);
}

SBC_TEST(rangelock, exclusive_waits_for_overlap_and_resumes_on_release)
{
	struct sbc_cmd *f = flag_up(fx->dev);
	struct sbc_cmd *s = mk(fx->dev, 1), *x = mk(fx->dev, 2), *y = mk(fx->dev, 3);

	norder = 0;
	cr_assert(sbc_range_lock(s, 100, 8, false, note_resume));
	cr_assert_eq(fx->dev->rl_fast, 0, "recorded, not counted");
	cr_assert_not(sbc_range_lock(x, 107, 1, true, note_resume), "overlaps the shared holder");
	cr_assert(sbc_range_lock(y, 108, 1, true, note_resume), "disjoint: granted");
	cr_assert_eq(sbc_rangelock_waiters(fx->dev), 1);
	cr_assert_eq(norder, 0);
	drop(s);
	cr_assert_eq(norder, 1);
	cr_assert_eq(order[0], 2);
	cr_assert_eq(sbc_rangelock_waiters(fx->dev), 0);
	drop(x);
	drop(y);
	drop(f);
}

SBC_TEST(rangelock, waiting_exclusive_is_not_overtaken)
{
	struct sbc_cmd *s1 = mk(fx->dev, 1), *x = mk(fx->dev, 2), *s2 = mk(fx->dev, 3),
		       *s3 = mk(fx->dev, 4);

	norder = 0;
	cr_assert(sbc_range_lock(s1, 0, 4, false, note_resume));
	cr_assert_not(sbc_range_lock(x, 0, UINT64_MAX, true, note_resume)); /* whole LU */
	/* a shared request overlapping the waiting exclusive one queues behind it... */
	cr_assert_not(sbc_range_lock(s2, 50, 1, false, note_resume));
	cr_assert_eq(sbc_rangelock_waiters(fx->dev), 2);
	drop(s1);
	/* ...and is granted only after the exclusive one */
	cr_assert_eq(norder, 1);
	cr_assert_eq(order[0], 2);
	cr_assert_not(sbc_range_lock(s3, 9, 1, false, note_resume));
	drop(x);
	cr_assert_eq(norder, 3);
	cr_assert_eq(order[1], 3);
	cr_assert_eq(order[2], 4);
	drop(s2);
	drop(s3);
}

SBC_TEST(rangelock, exclusive_against_exclusive)
{
	struct sbc_cmd *a = mk(fx->dev, 1), *b = mk(fx->dev, 2), *c = mk(fx->dev, 3);

	norder = 0;
	cr_assert(sbc_range_lock(a, 10, 1, true, note_resume));
	cr_assert_not(sbc_range_lock(b, 10, 1, true, note_resume));
	cr_assert_not(sbc_range_lock(c, 0, 11, false, note_resume));
	drop(a);
	cr_assert_eq(norder, 1);
	cr_assert_eq(order[0], 2);
	drop(b);
	cr_assert_eq(norder, 2);
	cr_assert_eq(order[1], 3);
	drop(c);
}

/* ---- with commands ---- */

static void caw_cdb(uint8_t *c, uint64_t lba, uint8_t n)
{
	memset(c, 0, 16);
	c[0] = 0x89;
	put_be64(c + 2, lba);
	c[13] = n;
}

static void caw_buf(uint8_t *b, uint8_t expect, uint8_t now)
{
	memset(b, expect, 512);
	memset(b + 512, now, 512);
}

Test(rangelock, write_waits_for_compare_and_write)
{
	struct sbc_fx fx;
	struct fx_job caw, wr;
	uint8_t cc[16], wc[16], cbuf[1024], wbuf[512];
	int nlog;

	fx_init_ops(&fx, &gate_ops);
	caw_cdb(cc, 3, 1);
	caw_buf(cbuf, 0, 'C');
	gate_arm(BS_READ); /* park COMPARE AND WRITE's read: it then holds block 3 exclusively */
	fx_job_start(&caw, &fx, cc, SCSI_DIR_WRITE, cbuf, 1024);
	cr_assert(gate_wait_parked(5), "COMPARE AND WRITE never read");

	memset(wbuf, 'W', 512);
	cdb10(wc, 0x2a, 0, 3, 1);
	fx_job_start(&wr, &fx, wc, SCSI_DIR_WRITE, wbuf, 512);
	for (double end = fx_now() + 5; sbc_rangelock_waiters(fx.dev) == 0 && fx_now() < end;)
		usleep(1000);
	cr_assert_eq(sbc_rangelock_waiters(fx.dev), 1, "the WRITE is not waiting for the lock");
	nlog = atomic_load(&gate.nlog);
	for (int i = 0; i < nlog; i++)
		cr_assert_neq(gate.log[i].op, BS_WRITE, "a write reached the store too early");

	gate_release();
	cr_assert_eq(fx_job_join(&caw).status, SAM_STAT_GOOD);
	cr_assert_eq(fx_job_join(&wr).status, SAM_STAT_GOOD);
	/* order at the store: CAW's read, CAW's write, then the WRITE */
	nlog = atomic_load(&gate.nlog);
	cr_assert_eq(nlog, 3);
	cr_assert_eq(gate.log[0].op, BS_READ);
	cr_assert_eq(gate.log[1].op, BS_WRITE);
	cr_assert_eq(gate.log[1].first, 'C');
	cr_assert_eq(gate.log[2].op, BS_WRITE);
	cr_assert_eq(gate.log[2].first, 'W');
	fx_expect(&fx, 3, 1, 'W');
	fx_fini(&fx);
}

Test(rangelock, compare_and_write_waits_for_write_in_flight)
{
	struct sbc_fx fx;
	struct fx_job caw, wr;
	uint8_t cc[16], wc[16], cbuf[1024], wbuf[512];

	fx_init_ops(&fx, &gate_ops);
	memset(wbuf, 'W', 512);
	cdb10(wc, 0x2a, 0, 7, 1);
	gate_arm(BS_WRITE);
	fx_job_start(&wr, &fx, wc, SCSI_DIR_WRITE, wbuf, 512);
	cr_assert(gate_wait_parked(5));

	/* expects the WRITE's data: only true if it waits for the WRITE to finish */
	caw_cdb(cc, 7, 1);
	caw_buf(cbuf, 'W', 'C');
	fx_job_start(&caw, &fx, cc, SCSI_DIR_WRITE, cbuf, 1024);
	for (double end = fx_now() + 5; sbc_rangelock_waiters(fx.dev) == 0 && fx_now() < end;)
		usleep(1000);
	cr_assert_eq(sbc_rangelock_waiters(fx.dev), 1);
	cr_assert_eq(atomic_load(&gate.nlog), 1, "COMPARE AND WRITE read before the WRITE ended");

	gate_release();
	cr_assert_eq(fx_job_join(&wr).status, SAM_STAT_GOOD);
	cr_assert_eq(fx_job_join(&caw).status, SAM_STAT_GOOD);
	fx_expect(&fx, 7, 1, 'C');
	fx_fini(&fx);
}

Test(rangelock, disjoint_ranges_do_not_wait)
{
	struct sbc_fx fx;
	struct fx_job wr;
	uint8_t cc[16], wc[16], cbuf[1024], wbuf[512];
	struct th_result r;

	struct sbc_cmd *f;

	fx_init_ops(&fx, &gate_ops);
	f = flag_up(fx.dev); /* so the WRITE's range is recorded */
	memset(wbuf, 'W', 512);
	cdb10(wc, 0x2a, 0, 0, 1);
	gate_arm(BS_WRITE);
	fx_job_start(&wr, &fx, wc, SCSI_DIR_WRITE, wbuf, 512);
	cr_assert(gate_wait_parked(5));
	caw_cdb(cc, 1, 1);
	caw_buf(cbuf, 0, 'C');
	r = fx_exec(&fx, cc, SCSI_DIR_WRITE, cbuf, 1024); /* completes while the WRITE is parked */
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	gate_release();
	cr_assert_eq(fx_job_join(&wr).status, SAM_STAT_GOOD);
	drop(f);
	fx_expect(&fx, 0, 1, 'W');
	fx_expect(&fx, 1, 1, 'C');
	fx_fini(&fx);
}

Test(rangelock, parked_task_can_be_aborted)
{
	struct sbc_fx fx;
	struct fx_job caw, wr;
	uint8_t cc[16], wc[16], cbuf[1024], wbuf[512];

	fx_init_ops(&fx, &gate_ops);
	memset(wbuf, 'W', 512);
	cdb10(wc, 0x2a, 0, 9, 1);
	gate_arm(BS_WRITE);
	fx_job_start(&wr, &fx, wc, SCSI_DIR_WRITE, wbuf, 512);
	cr_assert(gate_wait_parked(5));
	caw_cdb(cc, 9, 1);
	caw_buf(cbuf, 'W', 'C');
	fx_job_start(&caw, &fx, cc, SCSI_DIR_WRITE, cbuf, 1024);
	for (double end = fx_now() + 5; sbc_rangelock_waiters(fx.dev) == 0 && fx_now() < end;)
		usleep(1000);
	cr_assert_eq(sbc_rangelock_waiters(fx.dev), 1);

	fx_abort_task(&fx, caw.tag);
	cr_assert(fx_job_join(&caw).aborted, "the parked COMPARE AND WRITE was not aborted");
	cr_assert_eq(sbc_rangelock_waiters(fx.dev), 0);

	gate_release();
	cr_assert_eq(fx_job_join(&wr).status, SAM_STAT_GOOD);
	fx_expect(&fx, 9, 1, 'W'); /* the aborted COMPARE AND WRITE wrote nothing */
	fx_fini(&fx);
}

/* ---- long chains of waiters complete without recursion ---- */

/* A resume that completes at once, as a command on the ramdisk or nullio does (their I/O
 * finishes inside submit), so its unlock happens inside the unlock that granted it. */
static int depth, max_depth, nresumed;

static void complete_inline(struct sbc_cmd *c)
{
	depth++;
	if (depth > max_depth)
		max_depth = depth;
	nresumed++;
	sbc_cmd_free(c); /* releases: grants the next waiter */
	depth--;
}

SBC_TEST(rangelock, chain_of_inline_completions_is_flat)
{
	enum { N = 2000 };
	struct sbc_cmd *h = mk(fx->dev, 0);

	depth = max_depth = nresumed = 0;
	cr_assert(sbc_range_lock(h, 42, 1, true, complete_inline));
	for (int i = 0; i < N; i++) /* each exclusive waiter waits for the one before it */
		cr_assert_not(sbc_range_lock(mk(fx->dev, i + 1), 42, 1, true, complete_inline));
	cr_assert_eq(sbc_rangelock_waiters(fx->dev), N);
	drop(h);
	cr_assert_eq(nresumed, N, "every waiter ran");
	cr_assert_eq(max_depth, 1, "resumes nested %d deep", max_depth);
	cr_assert_eq(sbc_rangelock_waiters(fx->dev), 0);
}

/* The same with real commands: a chain of WRITE ATOMICs on one block of a ramdisk, released
 * by a thread with a small stack.  Nested resumes would run out of it. */
struct chain_task {
	struct scsi_task t;
	struct iovec iov;
	uint8_t buf[512];
};

static atomic_int chain_done, chain_good;

static void chain_cb(struct scsi_task *t)
{
	if (t->status == SAM_STAT_GOOD)
		atomic_fetch_add(&chain_good, 1);
	atomic_fetch_add(&chain_done, 1);
}

static void *release_gate(void *arg)
{
	(void)arg;
	gate_release();
	return NULL;
}

Test(rangelock, chain_of_commands_on_a_small_stack)
{
	enum { N = 3000 };
	struct sbc_fx fx;
	struct chain_task *ts = calloc(N + 1, sizeof(*ts));
	pthread_attr_t attr;
	pthread_t th;

	fx_init_ops(&fx, &gate_ops);
	atomic_store(&chain_done, 0);
	atomic_store(&chain_good, 0);
	gate_arm(BS_WRITE); /* the first WRITE ATOMIC holds block 5 at the store */
	for (int i = 0; i <= N; i++) {
		struct chain_task *c = &ts[i];

		cdb16(c->t.cdb, 0x9c, 0, 5, 1);
		c->t.cdb_len = 16;
		c->t.nexus = &fx.n.nx;
		c->t.dir = SCSI_DIR_WRITE;
		c->t.exp_xfer_len = 512;
		memset(c->buf, (uint8_t)i, 512);
		c->iov.iov_base = c->buf;
		c->iov.iov_len = 512;
		c->t.iov = &c->iov;
		c->t.iovcnt = 1;
		c->t.done = chain_cb;
		scsi_task_execute(&c->t);
		if (i == 0)
			cr_assert(gate_wait_parked(5));
	}
	cr_assert_eq(sbc_rangelock_waiters(fx.dev), N);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	cr_assert_eq(pthread_create(&th, &attr, release_gate, NULL), 0);
	pthread_join(th, NULL);
	pthread_attr_destroy(&attr);
	cr_assert_eq(atomic_load(&chain_done), N + 1);
	cr_assert_eq(atomic_load(&chain_good), N + 1);
	fx_expect(&fx, 5, 1, (uint8_t)N); /* granted in arrival order: the last one wins */
	fx_fini(&fx);
	free(ts);
}
