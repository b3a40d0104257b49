/* scsi/scsi_taskset.c: SIMPLE / ORDERED / HEAD OF QUEUE admission and the task management
 * functions, proven on a test-local backstore that parks every I/O until the test releases it,
 * so "still running in the backstore" is a state the test controls.  Every test checks that
 * each submitted task completed exactly once and that a TMF completed only after every task it
 * aborted. */
#include <errno.h>
#include <time.h>

#include "scsi_harness.h"

#include "scsi/scsi_core.h"

/* ---- the parking backstore ---- */

static pthread_mutex_t park_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cv = PTHREAD_COND_INITIALIZER;
static struct bs_io *parked[64];
static unsigned nparked;

static int park_open(struct backstore *bs, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	bs->can_unmap = false;
	return 0;
}
static void park_close(struct backstore *bs)
{
	(void)bs;
}
static void park_submit(struct backstore *bs, struct bs_io *io)
{
	(void)bs;
	pthread_mutex_lock(&park_mu);
	cr_assert_lt(nparked, 64);
	parked[nparked++] = io;
	pthread_cond_broadcast(&park_cv);
	pthread_mutex_unlock(&park_mu);
}
/* GET LBA STATUS asks this on a core worker (on a thin LU): everything mapped, answered at
 * once. */
static enum bs_status park_lba_status(struct backstore *bs, uint64_t off, uint64_t len,
				      bool *mapped, uint64_t *run)
{
	(void)bs;
	(void)off;
	*mapped = true;
	*run = len;
	return BS_OK;
}
static const struct backstore_ops park_ops = {.name = "parktest",
					      .open = park_open,
					      .close = park_close,
					      .submit = park_submit,
					      .lba_status = park_lba_status};

static struct timespec deadline(int secs)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	return ts;
}

/* Wait (bounded) until n I/Os are parked. */
static void wait_parked(unsigned n)
{
	struct timespec dl = deadline(10);
	pthread_mutex_lock(&park_mu);
	while (nparked < n)
		cr_assert_neq(pthread_cond_timedwait(&park_cv, &park_mu, &dl), ETIMEDOUT,
			      "only %u of %u I/Os reached the backstore", nparked, n);
	pthread_mutex_unlock(&park_mu);
}

/* Complete the oldest parked I/O (reads return zeros). */
static void release_one(void)
{
	struct bs_io *io;

	pthread_mutex_lock(&park_mu);
	cr_assert_gt(nparked, 0);
	io = parked[0];
	memmove(parked, parked + 1, --nparked * sizeof(parked[0]));
	pthread_mutex_unlock(&park_mu);
	if (io->op == BS_READ)
		for (int i = 0; i < io->iovcnt; i++)
			memset(io->iov[i].iov_base, 0, io->iov[i].iov_len);
	io->cb(io, BS_OK);
}

static void release_all(void)
{
	for (;;) {
		pthread_mutex_lock(&park_mu);
		unsigned n = nparked;
		pthread_mutex_unlock(&park_mu);
		if (!n)
			return;
		release_one();
	}
}

/* ---- asynchronous tasks and a completion log ---- */

#define MAXT 64
struct atask {
	struct scsi_task t;
	uint8_t buf[4096];
	struct iovec iov;
	int ndone;
	int order; /* completion sequence number */
};

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t log_cv = PTHREAD_COND_INITIALIZER;
static int seq;
static struct atask *tasks[MAXT];
static unsigned ntasks;
static int tmf_order, tmf_ndone;

static void atask_done(struct scsi_task *t)
{
	struct atask *a = (struct atask *)t;
	pthread_mutex_lock(&log_mu);
	a->ndone++;
	a->order = ++seq;
	pthread_cond_broadcast(&log_cv);
	pthread_mutex_unlock(&log_mu);
}

static struct scsi_dev *dev;
static struct th_nexus n1, n2;

static struct atask *submit(struct th_nexus *n, const uint8_t *cdb, unsigned len,
			    enum scsi_task_attr attr, uint64_t tag, enum scsi_data_dir dir,
			    uint32_t xfer)
{
	struct atask *a = calloc(1, sizeof(*a));
	memcpy(a->t.cdb, cdb, len);
	a->t.cdb_len = (uint8_t)len;
	a->t.lun = 0;
	a->t.nexus = &n->nx;
	a->t.attr = attr;
	a->t.tag = tag;
	a->t.dir = dir;
	a->t.exp_xfer_len = xfer;
	a->iov.iov_base = a->buf;
	a->iov.iov_len = xfer;
	a->t.iov = xfer ? &a->iov : NULL;
	a->t.iovcnt = xfer ? 1 : 0;
	a->t.done = atask_done;
	cr_assert_lt(ntasks, MAXT);
	tasks[ntasks++] = a;
	scsi_task_execute(&a->t);
	return a;
}

static const uint8_t read10[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0};
static const uint8_t tur[6] = {0};

static struct atask *submit_read(struct th_nexus *n, enum scsi_task_attr attr, uint64_t tag)
{
	return submit(n, read10, 10, attr, tag, SCSI_DIR_READ, 512);
}
static struct atask *submit_tur(struct th_nexus *n, enum scsi_task_attr attr, uint64_t tag)
{
	return submit(n, tur, 6, attr, tag, SCSI_DIR_NONE, 0);
}

static bool is_done(struct atask *a)
{
	pthread_mutex_lock(&log_mu);
	bool d = a->ndone > 0;
	pthread_mutex_unlock(&log_mu);
	return d;
}

static void wait_done(struct atask *a)
{
	struct timespec dl = deadline(10);
	pthread_mutex_lock(&log_mu);
	while (!a->ndone)
		cr_assert_neq(pthread_cond_timedwait(&log_cv, &log_mu, &dl), ETIMEDOUT,
			      "task %#llx never completed", (unsigned long long)a->t.tag);
	pthread_mutex_unlock(&log_mu);
}

/* TMFs */
struct atmf {
	struct scsi_tmf tmf;
	int ndone;
	int order;
};
static void atmf_done(struct scsi_tmf *tmf)
{
	struct atmf *m = (struct atmf *)tmf;
	pthread_mutex_lock(&log_mu);
	m->ndone++;
	tmf_ndone++;
	tmf_order = ++seq;
	m->order = tmf_order;
	pthread_cond_broadcast(&log_cv);
	pthread_mutex_unlock(&log_mu);
}
static void tmf_start(struct atmf *m, struct th_nexus *n, enum scsi_tmf_fn fn, uint64_t ref)
{
	memset(m, 0, sizeof(*m));
	m->tmf.fn = fn;
	m->tmf.lun = 0;
	m->tmf.ref_tag = ref;
	m->tmf.nexus = &n->nx;
	m->tmf.done = atmf_done;
	scsi_tmf_execute(&m->tmf);
}
static bool tmf_is_done(struct atmf *m)
{
	pthread_mutex_lock(&log_mu);
	bool d = m->ndone > 0;
	pthread_mutex_unlock(&log_mu);
	return d;
}
static void tmf_wait(struct atmf *m)
{
	struct timespec dl = deadline(10);
	pthread_mutex_lock(&log_mu);
	while (!m->ndone)
		cr_assert_neq(pthread_cond_timedwait(&log_cv, &log_mu, &dl), ETIMEDOUT,
			      "TMF never completed");
	pthread_mutex_unlock(&log_mu);
}

static void setup(void)
{
	struct scsi_dev_params p;
	struct backstore *b = calloc(1, sizeof(*b));
	char err[128];

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "slow0");
	b->ops = &park_ops;
	snprintf(b->name, sizeof(b->name), "slow0");
	b->size = 1 << 20;
	b->block_size = 512;
	dev = scsi_dev_new(&p, b);
	cr_assert_eq(scsi_dev_open(dev, err, sizeof(err)), 0, "%s", err);
	th_nexus_init(&n1, "iqn.1994-05.com.example:one", 1, &dev, 1);
	th_nexus_init(&n2, "iqn.1994-05.com.example:two", 2, &dev, 1);
	th_clear_ua(&n1, 0);
	th_clear_ua(&n2, 0);
}

/* No command left behind: every task completed exactly once. */
static void teardown(void)
{
	release_all();
	for (unsigned i = 0; i < ntasks; i++) {
		wait_done(tasks[i]);
		cr_assert_eq(tasks[i]->ndone, 1, "task %u completed %d times", i, tasks[i]->ndone);
		free(tasks[i]);
	}
	ntasks = 0;
	scsi_nexus_unregister(&n1.nx);
	scsi_nexus_unregister(&n2.nx);
	scsi_dev_destroy(dev);
	scsi_core_shutdown();
}

TestSuite(taskset, .init = setup, .fini = teardown);

Test(taskset, simple_tasks_run_concurrently)
{
	struct atask *a = submit_read(&n1, SCSI_ATTR_SIMPLE, 1);
	struct atask *b = submit_read(&n2, SCSI_ATTR_SIMPLE, 2);
	wait_parked(2);
	cr_assert_not(is_done(a));
	cr_assert_not(is_done(b));
	release_one();
	release_one();
	wait_done(a);
	wait_done(b);
	cr_assert_eq(a->t.status, SAM_STAT_GOOD);
	cr_assert_eq(a->t.data_len, 512);
}

Test(taskset, ordered_waits_for_older_and_blocks_newer)
{
	struct atask *a = submit_read(&n1, SCSI_ATTR_SIMPLE, 1);
	wait_parked(1);
	struct atask *o = submit_tur(&n1, SCSI_ATTR_ORDERED, 2);
	struct atask *s = submit_tur(&n2, SCSI_ATTR_SIMPLE, 3);
	cr_assert_not(is_done(o), "ORDERED ran while an older task was in the set");
	cr_assert_not(is_done(s), "SIMPLE overtook an ORDERED task");
	release_one();
	wait_done(a);
	wait_done(o);
	wait_done(s);
	cr_assert(a->order < o->order && o->order < s->order, "order %d %d %d", a->order,
		  o->order, s->order);
	cr_assert_eq(o->t.status, SAM_STAT_GOOD);
	cr_assert_eq(s->t.status, SAM_STAT_GOOD);
}

Test(taskset, ordered_in_backstore_blocks_all_newer)
{
	struct atask *o = submit_read(&n1, SCSI_ATTR_ORDERED, 1);
	wait_parked(1);
	struct atask *s1 = submit_read(&n1, SCSI_ATTR_SIMPLE, 2);
	struct atask *s2 = submit_tur(&n2, SCSI_ATTR_SIMPLE, 3);
	cr_assert_not(is_done(s2));
	release_one();
	wait_done(o);
	wait_parked(1); /* s1 now reached the backstore */
	wait_done(s2);
	release_one();
	wait_done(s1);
	cr_assert(o->order < s2->order);
}

Test(taskset, head_of_queue_runs_at_once)
{
	submit_read(&n1, SCSI_ATTR_ORDERED, 1);
	wait_parked(1);
	struct atask *q = submit_tur(&n1, SCSI_ATTR_SIMPLE, 2);
	struct atask *h = submit_tur(&n2, SCSI_ATTR_HEAD_OF_QUEUE, 3);
	wait_done(h);
	cr_assert_eq(h->t.status, SAM_STAT_GOOD);
	cr_assert_not(is_done(q));
	/* INQUIRY is always treated as HEAD OF QUEUE */
	uint8_t inq[6] = {0x12, 0, 0, 0, 36, 0};
	struct atask *i = submit(&n1, inq, 6, SCSI_ATTR_ORDERED, 4, SCSI_DIR_READ, 36);
	wait_done(i);
	cr_assert_eq(i->t.status, SAM_STAT_GOOD);
	cr_assert_not(is_done(q));
}

Test(taskset, abort_task_in_backstore_waits_for_it)
{
	struct atask *a = submit_read(&n1, SCSI_ATTR_SIMPLE, 0x11);
	struct atmf m;

	wait_parked(1);
	tmf_start(&m, &n1, SCSI_TMF_ABORT_TASK, 0x11);
	cr_assert_not(tmf_is_done(&m), "TMF done while its task is still in the backstore");
	cr_assert_not(is_done(a));
	release_one();
	wait_done(a);
	tmf_wait(&m);
	cr_assert_eq(m.tmf.resp, SCSI_TMF_COMPLETE);
	cr_assert(a->t.aborted);
	cr_assert_eq(a->t.status, SAM_STAT_TASK_ABORTED);
	cr_assert(a->order < tmf_order, "the task's done() ran before the TMF's");
}

Test(taskset, abort_task_queued_completes_at_once)
{
	struct atask *a = submit_read(&n1, SCSI_ATTR_SIMPLE, 1);
	struct atmf m;

	wait_parked(1);
	struct atask *o = submit_tur(&n1, SCSI_ATTR_ORDERED, 2);
	struct atask *s = submit_tur(&n1, SCSI_ATTR_SIMPLE, 3);
	tmf_start(&m, &n1, SCSI_TMF_ABORT_TASK, 2);
	tmf_wait(&m);
	cr_assert(is_done(o));
	cr_assert(o->t.aborted);
	cr_assert_eq(o->t.status, SAM_STAT_TASK_ABORTED);
	cr_assert_not(is_done(a));
	/* s was queued behind the ORDERED task only; it still waits for a? no: SIMPLE only waits
	 * for older ORDERED/HEAD OF QUEUE tasks, and o is gone, so s ran */
	wait_done(s);
	cr_assert_eq(s->t.status, SAM_STAT_GOOD);
	release_one();
	wait_done(a);
	cr_assert_not(a->t.aborted);
	cr_assert_eq(a->t.status, SAM_STAT_GOOD);
}

Test(taskset, abort_task_unknown_tag)
{
	struct atmf m;
	tmf_start(&m, &n1, SCSI_TMF_ABORT_TASK, 0x999);
	tmf_wait(&m);
	cr_assert_eq(m.tmf.resp, SCSI_TMF_NO_TASK);
	/* a tag of another nexus is not ours to abort */
	struct atask *a = submit_read(&n2, SCSI_ATTR_SIMPLE, 0x5);
	wait_parked(1);
	struct atmf m2;
	tmf_start(&m2, &n1, SCSI_TMF_ABORT_TASK, 0x5);
	tmf_wait(&m2);
	cr_assert_eq(m2.tmf.resp, SCSI_TMF_NO_TASK);
	release_one();
	wait_done(a);
	cr_assert_not(a->t.aborted);
}

Test(taskset, abort_task_set_only_this_nexus)
{
	struct atask *a1 = submit_read(&n1, SCSI_ATTR_SIMPLE, 1);
	struct atask *b1 = submit_read(&n2, SCSI_ATTR_SIMPLE, 2);
	struct atmf m;

	wait_parked(2);
	struct atask *a2 = submit_tur(&n1, SCSI_ATTR_ORDERED, 3);
	tmf_start(&m, &n1, SCSI_TMF_ABORT_TASK_SET, 0);
	wait_done(a2);
	cr_assert(a2->t.aborted);
	cr_assert_not(tmf_is_done(&m));
	release_all();
	wait_done(a1);
	wait_done(b1);
	tmf_wait(&m);
	cr_assert(a1->t.aborted);
	cr_assert_not(b1->t.aborted);
	cr_assert_eq(b1->t.status, SAM_STAT_GOOD);
	cr_assert(a1->order < tmf_order);
}

Test(taskset, clear_task_set_raises_2f00_for_others)
{
	struct atask *a = submit_read(&n1, SCSI_ATTR_SIMPLE, 1);
	struct atask *b = submit_read(&n2, SCSI_ATTR_SIMPLE, 2);
	struct atmf m;

	wait_parked(2);
	tmf_start(&m, &n1, SCSI_TMF_CLEAR_TASK_SET, 0);
	release_all();
	tmf_wait(&m);
	cr_assert(a->t.aborted && b->t.aborted);
	cr_assert(a->order < tmf_order && b->order < tmf_order);
	struct th_result r = th_exec(&n2, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2f, 0x00);
	r = th_exec(&n1, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD, "the requester gets no UA");
}

Test(taskset, tas_sends_task_aborted_to_other_nexus)
{
	struct atmf m;

	pthread_mutex_lock(&dev->lock);
	dev->mode.tas = true;
	pthread_mutex_unlock(&dev->lock);
	struct atask *b = submit_read(&n2, SCSI_ATTR_SIMPLE, 2);
	wait_parked(1);
	tmf_start(&m, &n1, SCSI_TMF_CLEAR_TASK_SET, 0);
	release_all();
	tmf_wait(&m);
	cr_assert_not(b->t.aborted, "TAS=1: the other nexus gets a response");
	cr_assert_eq(b->t.status, SAM_STAT_TASK_ABORTED);
	cr_assert_eq(b->t.sense_len, 0);
	struct th_result r = th_exec(&n2, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD, "TAS=1: no 2F/00");
}

Test(taskset, lu_reset)
{
	struct atask *a = submit_read(&n1, SCSI_ATTR_SIMPLE, 1);
	struct atask *b = submit_read(&n2, SCSI_ATTR_SIMPLE, 2);
	struct atmf m;

	wait_parked(2);
	struct atask *q = submit_tur(&n2, SCSI_ATTR_ORDERED, 3);
	tmf_start(&m, &n1, SCSI_TMF_LOGICAL_UNIT_RESET, 0);
	wait_done(q);
	cr_assert(q->t.aborted);
	cr_assert_not(tmf_is_done(&m));
	release_one();
	cr_assert_not(tmf_is_done(&m), "one task still in the backstore");
	release_one();
	tmf_wait(&m);
	cr_assert(a->t.aborted && b->t.aborted);
	cr_assert_eq(m.tmf.resp, SCSI_TMF_COMPLETE);
	struct th_result r = th_exec(&n2, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x03);
	/* SAM-5: for every I_T nexus, the one that sent the reset included (libiscsi
	 * MultipathIO.Reset checks each path) */
	r = th_exec(&n1, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x03);
	r = th_exec(&n1, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	/* the LU works afterwards */
	struct atask *c = submit_read(&n1, SCSI_ATTR_ORDERED, 4);
	wait_parked(1);
	release_one();
	wait_done(c);
	cr_assert_eq(c->t.status, SAM_STAT_GOOD);
}

Test(taskset, i_t_nexus_reset)
{
	struct atask *a = submit_read(&n1, SCSI_ATTR_SIMPLE, 1);
	struct atask *b = submit_read(&n2, SCSI_ATTR_SIMPLE, 2);
	struct atmf m;

	wait_parked(2);
	tmf_start(&m, &n1, SCSI_TMF_I_T_NEXUS_RESET, 0);
	release_all();
	tmf_wait(&m);
	cr_assert(a->t.aborted);
	cr_assert_not(b->t.aborted);
	struct th_result r = th_exec(&n1, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x07);
	r = th_exec(&n2, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
}

Test(taskset, target_resets)
{
	struct atmf m;
	struct atask *b = submit_read(&n2, SCSI_ATTR_SIMPLE, 2);

	wait_parked(1);
	tmf_start(&m, &n1, SCSI_TMF_TARGET_WARM_RESET, 0);
	release_all();
	tmf_wait(&m);
	cr_assert(b->t.aborted);
	struct th_result r = th_exec(&n2, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x02);
	r = th_exec(&n1, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x02);
	tmf_start(&m, &n1, SCSI_TMF_TARGET_COLD_RESET, 0);
	tmf_wait(&m);
	r = th_exec(&n2, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x01);
	r = th_exec(&n1, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x01);
}

Test(taskset, query_functions)
{
	struct atmf m;
	struct atask *a = submit_read(&n1, SCSI_ATTR_SIMPLE, 0x42);

	wait_parked(1);
	tmf_start(&m, &n1, SCSI_TMF_QUERY_TASK, 0x42);
	tmf_wait(&m);
	cr_assert_eq(m.tmf.resp, SCSI_TMF_SUCCEEDED);
	tmf_start(&m, &n2, SCSI_TMF_QUERY_TASK, 0x42);
	tmf_wait(&m);
	cr_assert_eq(m.tmf.resp, SCSI_TMF_COMPLETE, "not n2's task");
	tmf_start(&m, &n1, SCSI_TMF_QUERY_TASK_SET, 0);
	tmf_wait(&m);
	cr_assert_eq(m.tmf.resp, SCSI_TMF_SUCCEEDED);
	tmf_start(&m, &n2, SCSI_TMF_QUERY_TASK_SET, 0);
	tmf_wait(&m);
	cr_assert_eq(m.tmf.resp, SCSI_TMF_COMPLETE);
	release_one();
	wait_done(a);
	cr_assert_not(a->t.aborted, "queries abort nothing");
	tmf_start(&m, &n1, SCSI_TMF_QUERY_TASK, 0x42);
	tmf_wait(&m);
	cr_assert_eq(m.tmf.resp, SCSI_TMF_COMPLETE);
	/* asynchronous event = pending UA */
	tmf_start(&m, &n1, SCSI_TMF_QUERY_ASYNC_EVENT, 0);
	tmf_wait(&m);
	cr_assert_eq(m.tmf.resp, SCSI_TMF_COMPLETE);
	scsi_ua_raise_all(dev, NULL, 0x2a, 0x09);
	tmf_start(&m, &n1, SCSI_TMF_QUERY_ASYNC_EVENT, 0);
	tmf_wait(&m);
	cr_assert_eq(m.tmf.resp, SCSI_TMF_SUCCEEDED);
	struct th_result r = th_exec(&n1, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x09);
}

Test(taskset, tmf_errors)
{
	struct atmf m;

	memset(&m, 0, sizeof(m));
	m.tmf.fn = SCSI_TMF_ABORT_TASK_SET;
	m.tmf.lun = 9;
	m.tmf.nexus = &n1.nx;
	m.tmf.done = atmf_done;
	scsi_tmf_execute(&m.tmf);
	tmf_wait(&m);
	cr_assert_eq(m.tmf.resp, SCSI_TMF_NO_LUN);
	tmf_start(&m, &n1, SCSI_TMF_CLEAR_ACA, 0);
	tmf_wait(&m);
	cr_assert_eq(m.tmf.resp, SCSI_TMF_NOT_SUPPORTED);
}

/* Many tasks of every attribute, some in the backstore, some queued, two TMFs racing the
 * releases: every task completes exactly once (checked in teardown) and each TMF completes
 * after the tasks it aborted. */
Test(taskset, no_command_left_behind)
{
	static const enum scsi_task_attr attrs[] = {SCSI_ATTR_SIMPLE, SCSI_ATTR_ORDERED,
						    SCSI_ATTR_SIMPLE, SCSI_ATTR_HEAD_OF_QUEUE};
	struct atmf m1, m2;
	struct atask *a[24];

	for (unsigned i = 0; i < 24; i++)
		a[i] = submit_read(i % 3 ? &n1 : &n2, attrs[i % 4], 100 + i);
	release_one();
	tmf_start(&m1, &n1, SCSI_TMF_ABORT_TASK_SET, 0);
	release_one();
	tmf_start(&m2, &n2, SCSI_TMF_LOGICAL_UNIT_RESET, 0);
	release_all();
	tmf_wait(&m1);
	tmf_wait(&m2);
	for (unsigned i = 0; i < 24; i++) {
		wait_done(a[i]);
		if (a[i]->t.aborted)
			cr_assert_eq(a[i]->t.status, SAM_STAT_TASK_ABORTED);
		else
			cr_assert_eq(a[i]->t.status, SAM_STAT_GOOD, "task %u status %#x", i,
				     a[i]->t.status);
		if (a[i]->t.aborted)
			cr_assert(a[i]->order < (m1.order > m2.order ? m1.order : m2.order));
		if (a[i]->t.aborted && a[i]->t.nexus == &n1.nx && i > 0)
			cr_assert(a[i]->order < m1.order || a[i]->order < m2.order);
	}
	release_all();
}

static bool match_n2(const struct scsi_nexus *nx, void *arg)
{
	return nx == arg;
}

static void *preempt_thread(void *arg)
{
	scsi_ts_abort_nexuses(dev, match_n2, arg, NULL);
	return NULL;
}

Test(taskset, abort_nexuses_waits_for_backstore)
{
	pthread_t th;
	struct atask *a = submit_read(&n1, SCSI_ATTR_SIMPLE, 1);
	struct atask *b = submit_read(&n2, SCSI_ATTR_SIMPLE, 2);

	wait_parked(2);
	struct atask *q = submit_tur(&n2, SCSI_ATTR_ORDERED, 3);
	pthread_create(&th, NULL, preempt_thread, &n2.nx);
	wait_done(q);
	cr_assert(q->t.aborted);
	cr_assert_not(is_done(b));
	release_all();
	pthread_join(th, NULL); /* returns only once b completed */
	cr_assert(is_done(b));
	cr_assert(b->t.aborted);
	wait_done(a);
	cr_assert_not(a->t.aborted);
}

/* A task parked on the SBC range lock is "queued": ABORT TASK pulls it off through
 * core.cancel and completes it at once, while the lock holder is still in the backstore. */
Test(taskset, abort_task_waiting_on_range_lock)
{
	uint8_t watomic[16] = {0x9c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0};
	struct atmf m;

	struct atask *w = submit(&n1, watomic, 16, SCSI_ATTR_SIMPLE, 1, SCSI_DIR_WRITE, 512);
	wait_parked(1);
	cr_assert_not(is_done(w), "WRITE ATOMIC holds its range in the backstore");
	struct atask *r = submit_read(&n2, SCSI_ATTR_SIMPLE, 2); /* same LBA: waits for the lock */
	cr_assert_not(is_done(r));
	pthread_mutex_lock(&park_mu);
	cr_assert_eq(nparked, 1, "the READ did not reach the backstore");
	pthread_mutex_unlock(&park_mu);
	tmf_start(&m, &n2, SCSI_TMF_ABORT_TASK, 2);
	tmf_wait(&m);
	cr_assert(is_done(r), "aborted at once: it never started");
	cr_assert(r->t.aborted);
	cr_assert_eq(r->t.status, SAM_STAT_TASK_ABORTED);
	cr_assert_not(is_done(w));
	release_one();
	wait_done(w);
	cr_assert_eq(w->t.status, SAM_STAT_GOOD);
	cr_assert_not(w->t.aborted);
	/* the lock is free again: a new READ goes straight to the backstore */
	struct atask *r2 = submit_read(&n2, SCSI_ATTR_SIMPLE, 3);
	wait_parked(1);
	release_one();
	wait_done(r2);
	cr_assert_eq(r2->t.status, SAM_STAT_GOOD);
}

/* PREEMPT AND ABORT runs on a core worker and waits there for the tasks it aborted; one of
 * them may itself be a job queued for a worker.  With a single worker, waiting must not keep
 * that job from running. */
static pthread_mutex_t occ_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t occ_cv = PTHREAD_COND_INITIALIZER;
static bool occ_go;

static enum scsi_sr occupy_worker(struct scsi_task *t)
{
	struct timespec dl = deadline(10);
	int rc = 0;

	(void)t;
	pthread_mutex_lock(&occ_mu);
	while (!occ_go && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&occ_cv, &occ_mu, &dl);
	pthread_mutex_unlock(&occ_mu);
	return SR_OK;
}

static enum scsi_sr preempt_and_abort_n2(struct scsi_task *t)
{
	(void)t;
	scsi_ts_abort_nexuses(dev, match_n2, &n2.nx, NULL);
	return SR_OK;
}

static void job_done(struct scsi_task *t)
{
	struct th_wait *w = t->priv;

	pthread_mutex_lock(&w->mu);
	w->done = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

Test(taskset, abort_nexuses_on_the_only_worker, .timeout = 60)
{
	static const uint8_t gls[16] = {0x9e, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 24, 0, 0};
	struct th_wait wo = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	struct th_wait wp = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	struct scsi_task occ, pa;
	struct timespec dl = deadline(10);
	struct atask *q;

	scsi_core_shutdown();
	cr_assert_eq(scsi_core_init(1), 0);
	/* GET LBA STATUS asks the store (on a worker) only on a thin LU; a fully provisioned
	 * one is answered "mapped" at once */
	dev->bs->thin_provisioned = true;
	dev->bs->can_unmap = true;
	occ_go = false;
	memset(&occ, 0, sizeof(occ));
	memset(&pa, 0, sizeof(pa));
	occ.done = pa.done = job_done;
	occ.priv = &wo;
	pa.priv = &wp;
	scsi_run_blocking(&occ, occupy_worker);	      /* the worker is busy...           */
	scsi_run_blocking(&pa, preempt_and_abort_n2); /* ...the abort queues behind it... */
	q = submit(&n2, gls, 16, SCSI_ATTR_SIMPLE, 7, SCSI_DIR_READ, 24); /* ...and the victim */
	cr_assert_not(is_done(q), "GET LBA STATUS waits for a worker");
	pthread_mutex_lock(&occ_mu);
	occ_go = true;
	pthread_cond_broadcast(&occ_cv);
	pthread_mutex_unlock(&occ_mu);
	pthread_mutex_lock(&wp.mu);
	while (!wp.done)
		cr_assert_neq(pthread_cond_timedwait(&wp.cv, &wp.mu, &dl), ETIMEDOUT,
			      "the abort never saw its victim complete");
	pthread_mutex_unlock(&wp.mu);
	cr_assert(is_done(q), "returned only once the victim completed");
	cr_assert(q->t.aborted);
	cr_assert_eq(pa.status, SAM_STAT_GOOD);
	pthread_mutex_lock(&wo.mu);
	while (!wo.done)
		pthread_cond_wait(&wo.cv, &wo.mu);
	pthread_mutex_unlock(&wo.mu);
}
