/* A READ longer than its room, in pieces (scsi/sbc_stream.c): a fake transport with a 2 MiB
 * ring takes each piece, checks that it comes in order and that never more than the room is
 * held unsent, copies it out and gives the room back; the last piece comes with done().
 * Data, status, residuals; a read failing in the middle; a TMF and a stop in the middle. */
#include "tests/unit/sbc_test.h"

#define ROOM	  (2u << 20)
#define LU_BLOCKS 65536u /* 32 MiB */

struct ft {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct scsi_task *t;
	uint8_t *ring;
	uint8_t *out; /* the transfer as the initiator would see it */
	uint32_t offs[256], lens[256];
	unsigned nev, taken;
	uint32_t handed, given;
	bool done, violated;
	const char *why;
	struct th_result r;
};

static void ft_din_ready(struct scsi_task *t, uint32_t off, uint32_t len)
{
	struct ft *f = t->priv;

	pthread_mutex_lock(&f->mu);
	if (off != f->handed || len != ROOM / 2 || f->done) {
		f->violated = true;
		f->why = "piece out of order, of another size, or after done()";
	}
	f->handed = off + len;
	if (f->handed - f->given > ROOM) {
		f->violated = true;
		f->why = "more than the room held unsent";
	}
	if (f->nev < 256) {
		f->offs[f->nev] = off;
		f->lens[f->nev] = len;
		f->nev++;
	}
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

static void ft_done(struct scsi_task *t)
{
	struct ft *f = t->priv;

	pthread_mutex_lock(&f->mu);
	if (f->given != f->handed) {
		f->violated = true;
		f->why = "done() while pieces were still held";
	}
	f->r.status = t->status;
	memcpy(f->r.sense, t->sense, sizeof(f->r.sense));
	f->r.sense_len = t->sense_len;
	f->r.data_len = t->data_len;
	f->r.resid_kind = t->resid_kind;
	f->r.resid = t->resid;
	f->r.aborted = t->aborted;
	f->done = true;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

static void ft_start(struct ft *f, struct sbc_fx *fx, uint64_t lba, uint32_t nblocks, uint32_t exp,
		     uint64_t tag)
{
	struct scsi_task *t = calloc(1, sizeof(*t));
	static struct iovec iov;

	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	f->ring = malloc(ROOM);
	f->out = calloc(1, exp);
	cdb16(t->cdb, 0x88, 0, lba, nblocks);
	t->cdb_len = 16;
	t->nexus = &fx->n.nx;
	t->tag = tag;
	t->dir = SCSI_DIR_READ;
	t->exp_xfer_len = exp;
	iov.iov_base = f->ring;
	iov.iov_len = ROOM;
	t->iov = &iov;
	t->iovcnt = 1;
	t->din_ready = ft_din_ready;
	t->done = ft_done;
	t->priv = f;
	f->t = t;
	scsi_task_execute(t);
}

/* The next piece handed over (true), or done() came first (false); bounded wait. */
static bool ft_next(struct ft *f, uint32_t *off, uint32_t *len)
{
	struct timespec ts;
	bool got;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&f->mu);
	while (f->taken == f->nev && !f->done)
		cr_assert_eq(pthread_cond_timedwait(&f->cv, &f->mu, &ts), 0, "no piece, no done()");
	got = f->taken < f->nev;
	if (got) {
		*off = f->offs[f->taken];
		*len = f->lens[f->taken];
		f->taken++;
	}
	pthread_mutex_unlock(&f->mu);
	return got;
}

/* "Send" a piece: copy it out of the ring, then give its room back. */
static void ft_send(struct ft *f, uint32_t off, uint32_t len)
{
	memcpy(f->out + off, f->ring + off % ROOM, len);
	pthread_mutex_lock(&f->mu);
	f->given = off + len;
	pthread_mutex_unlock(&f->mu);
	scsi_task_din_sent(f->t, off + len);
}

/* Wait for done(), sending nothing more. */
static void ft_wait_done(struct ft *f)
{
	uint32_t off, len;

	while (ft_next(f, &off, &len))
		;
}

static void ft_fini(struct ft *f)
{
	cr_assert_not(f->violated, "%s", f->why);
	free(f->ring);
	free(f->out);
	free(f->t);
}

/* Every piece as it comes, then what done() leaves in the ring. */
static void ft_run_to_end(struct ft *f)
{
	uint32_t off, len, end;

	while (ft_next(f, &off, &len))
		ft_send(f, off, len);
	end = f->r.data_len;
	if (end <= f->given)
		return; /* failed: data_len 0 */
	cr_assert_leq(end - f->given, f->nev ? ROOM / 2 : ROOM, "the rest fits the last piece");
	memcpy(f->out + f->given, f->ring + f->given % ROOM, end - f->given);
}

static void fx_pattern(struct sbc_fx *fx, uint64_t lba, uint32_t n)
{
	size_t len = (size_t)n * fx->bsz;
	uint8_t *b = malloc(len);

	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)((i * 7) ^ (i >> 9));
	cr_assert_eq(fx_write(fx, lba, n, b).status, SAM_STAT_GOOD);
	free(b);
}

static void expect_pattern(const uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (out[i] != (uint8_t)((i * 7) ^ (i >> 9)))
			cr_assert_fail("byte %zu: %#x", i, out[i]);
}

static void stream_whole(const char *handler)
{
	struct sbc_fx fx;
	struct ft f;
	uint32_t n = 20481; /* 10 MiB + one block: ten pieces handed, a short last one */

	fx_init_bs(&fx, handler, 512, LU_BLOCKS);
	fx_pattern(&fx, 100, n);
	ft_start(&f, &fx, 100, n, n * 512, 1);
	ft_run_to_end(&f);
	cr_assert_eq(f.nev, 10, "pieces handed over: %u", f.nev);
	cr_assert_eq(f.r.status, SAM_STAT_GOOD);
	cr_assert_eq(f.r.data_len, n * 512);
	cr_assert_eq(f.r.resid_kind, SCSI_RESID_NONE);
	expect_pattern(f.out, (size_t)n * 512);
	ft_fini(&f);
	fx_fini(&fx);
}

Test(sbc_stream, pieces_in_order_within_the_room_ramdisk)
{
	stream_whole("ramdisk");
}

Test(sbc_stream, pieces_in_order_within_the_room_fileio)
{
	stream_whole("vdisk_fileio");
}

/* The expected length ends inside a block: exactly that many bytes, the block's rest read
 * into scratch, OVERFLOW by what was cut. */
Test(sbc_stream, expected_length_inside_a_block)
{
	struct sbc_fx fx;
	struct ft f;
	uint32_t n = 8192, exp = 8192 * 512 - 100;

	fx_init_bs(&fx, "ramdisk", 512, LU_BLOCKS);
	fx_pattern(&fx, 0, n);
	ft_start(&f, &fx, 0, n, exp, 1);
	ft_run_to_end(&f);
	cr_assert_eq(f.r.status, SAM_STAT_GOOD);
	cr_assert_eq(f.r.data_len, exp);
	cr_assert_eq(f.r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(f.r.resid, 100);
	expect_pattern(f.out, exp);
	ft_fini(&f);
	fx_fini(&fx);
}

/* A READ the room holds goes in one piece, with done(), as without pieces. */
Test(sbc_stream, a_read_the_room_holds_is_not_cut)
{
	struct sbc_fx fx;
	struct ft f;

	fx_init_bs(&fx, "ramdisk", 512, LU_BLOCKS);
	fx_pattern(&fx, 0, 4096);
	ft_start(&f, &fx, 0, 4096, 4096 * 512, 1);
	ft_run_to_end(&f);
	cr_assert_eq(f.nev, 0);
	cr_assert_eq(f.r.status, SAM_STAT_GOOD);
	expect_pattern(f.out, 4096 * 512);
	ft_fini(&f);
	fx_fini(&fx);
}

/* A store that fails reads from 5 MiB on. */
static void fail_late_submit(struct backstore *bs, struct bs_io *io)
{
	if (io->op == BS_READ && io->off >= (5u << 20)) {
		io->cb(io, BS_EIO);
		return;
	}
	bs_ramdisk_ops.submit(bs, io);
}

static struct backstore_ops fail_late_ops = {.name = "fail_late", .submit = fail_late_submit};

/* The medium fails in the middle: the pieces before it went out, then CHECK CONDITION
 * (MEDIUM ERROR) with nothing counted as moved, and no piece after the failed one. */
Test(sbc_stream, a_read_failing_in_the_middle_ends_with_check_condition)
{
	struct sbc_fx fx;
	struct ft f;

	fx_init_bs(&fx, "ramdisk", 512, LU_BLOCKS);
	fail_late_ops.open = fx.dev->bs->ops->open;
	fail_late_ops.close = fx.dev->bs->ops->close;
	fx.dev->bs->ops = &fail_late_ops; /* the open ramdisk, its reads failing late */
	ft_start(&f, &fx, 0, 16384, 16384 * 512, 1);
	ft_run_to_end(&f);
	cr_assert_eq(f.nev, 5, "the five pieces before 5 MiB: %u", f.nev);
	cr_assert_eq(f.r.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(th_sense_key(&f.r), 0x3, "MEDIUM ERROR");
	cr_assert_eq(f.r.data_len, 0);
	cr_assert_eq(f.r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(f.r.resid, 16384 * 512);
	ft_fini(&f);
	fx_fini(&fx);
}

struct tmf_wait {
	struct scsi_tmf tmf;
	atomic_bool done;
};

static void tmf_done(struct scsi_tmf *tmf)
{
	atomic_store(&((struct tmf_wait *)tmf)->done, true);
}

/* ABORT TASK while a piece is held by a client that does not read: the TMF waits; once the
 * piece is sent the command reads nothing more and ends aborted (no status), then the TMF
 * completes. */
Test(sbc_stream, abort_task_in_the_middle)
{
	struct sbc_fx fx;
	struct ft f;
	struct tmf_wait w = {0};
	uint32_t off, len;

	fx_init_bs(&fx, "ramdisk", 512, LU_BLOCKS);
	ft_start(&f, &fx, 0, 32768, 32768 * 512, 77);
	cr_assert(ft_next(&f, &off, &len));
	ft_send(&f, off, len);
	cr_assert(ft_next(&f, &off, &len)); /* held: the "socket" does not drain */
	w.tmf.fn = SCSI_TMF_ABORT_TASK;
	w.tmf.lun = 0;
	w.tmf.ref_tag = 77;
	w.tmf.nexus = &fx.n.nx;
	w.tmf.done = tmf_done;
	scsi_tmf_execute(&w.tmf);
	usleep(20000);
	cr_assert_not(atomic_load(&w.done), "the TMF waits for the command");
	cr_assert_not(f.done);
	ft_send(&f, off, len);
	while (ft_next(&f, &off, &len))
		ft_send(&f, off, len);
	cr_assert(f.r.aborted, "aborted: the transport sends no status");
	cr_assert_lt(f.nev, 4, "no piece read after the abort but the ones in flight: %u", f.nev);
	for (int i = 0; i < 1000 && !atomic_load(&w.done); i++)
		usleep(1000);
	cr_assert(atomic_load(&w.done), "the TMF completed");
	cr_assert_eq(w.tmf.resp, SCSI_TMF_COMPLETE);
	ft_fini(&f);
	fx_fini(&fx);
}

/* The transport's connection went: stop with a piece held ends the command at once. */
Test(sbc_stream, stop_ends_the_command)
{
	struct sbc_fx fx;
	struct ft f;
	uint32_t off, len;

	fx_init_bs(&fx, "ramdisk", 512, LU_BLOCKS);
	ft_start(&f, &fx, 0, 32768, 32768 * 512, 1);
	cr_assert(ft_next(&f, &off, &len));
	pthread_mutex_lock(&f.mu);
	f.given = f.handed; /* what stop gives back */
	pthread_mutex_unlock(&f.mu);
	scsi_task_din_stop(f.t);
	pthread_mutex_lock(&f.mu);
	f.given = f.handed; /* a piece handed while stopping counts as given back too */
	pthread_mutex_unlock(&f.mu);
	ft_wait_done(&f);
	cr_assert_eq(f.r.status, SAM_STAT_TASK_ABORTED);
	cr_assert_eq(f.r.data_len, 0);
	cr_assert_leq(f.nev, 2);
	ft_fini(&f);
	fx_fini(&fx);
}
