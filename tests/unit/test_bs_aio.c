/* The asynchronous engine, on both back ends (io_uring and the thread pool): data round trips,
 * split and short transfers, O_DIRECT bounce and buffered fallback, FUA, flush, hole punching,
 * WRITE SAME, queueing beyond the depth, completion on another thread (or on the submitting
 * thread's own ring), a medium that blocks (a userfaultfd-backed buffer) without stalling the
 * submitter, and inline_ok I/O run on the submitting thread only where the page cache
 * answers. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/ut_ring.h"
#include "scsi/backstore/bs_aio.h"

struct waiter {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
	enum bs_status st;
	int bad;	  /* completions with a status other than BS_OK */
	int on_submitter; /* completions that ran on the submitting thread */
	pthread_t submitter;
};

static void waiter_init(struct waiter *w)
{
	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->submitter = pthread_self();
}

static void wait_cb(struct bs_io *io, enum bs_status st)
{
	struct waiter *w = io->priv;

	pthread_mutex_lock(&w->mu);
	w->done++;
	w->st = st;
	if (st != BS_OK)
		w->bad++;
	if (pthread_equal(pthread_self(), w->submitter))
		w->on_submitter++;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* Wait until n completions, at most 20 s (a hang is a failure, not a stuck test run). */
static bool wait_for(struct waiter *w, int n)
{
	struct timespec dl;
	bool ok = true;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 20;
	pthread_mutex_lock(&w->mu);
	while (w->done < n && ok)
		ok = pthread_cond_timedwait(&w->cv, &w->mu, &dl) == 0;
	ok = w->done >= n;
	pthread_mutex_unlock(&w->mu);
	return ok;
}

static enum bs_status run(struct bs_aio *a, struct bs_io *io)
{
	struct waiter w;

	waiter_init(&w);
	io->cb = wait_cb;
	io->priv = &w;
	bs_aio_submit(a, io);
	cr_assert(wait_for(&w, 1), "I/O did not complete");
	cr_assert_eq(w.done, 1, "callback ran %d times", w.done);
	return w.st;
}

static enum bs_status rw(struct bs_aio *a, enum bs_op op, uint64_t off, void *buf, uint64_t len,
			 bool fua)
{
	struct iovec iov = {buf, len};
	struct bs_io io = {.op = op, .off = off, .len = len, .iov = &iov, .iovcnt = 1, .fua = fua};
	return run(a, &io);
}

static char tmpl_path[64];

static int temp_file(uint64_t size)
{
	int fd;

	snprintf(tmpl_path, sizeof(tmpl_path), "/tmp/utgt-aio-XXXXXX");
	fd = mkstemp(tmpl_path);
	cr_assert(fd >= 0);
	unlink(tmpl_path);
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	return fd;
}

static bool uring_works(void)
{
	struct io_uring r;

	if (io_uring_queue_init(4, &r, 0))
		return false;
	io_uring_queue_exit(&r);
	return true;
}

static struct bs_aio *engine(struct bs_aio_opts *o, bool no_uring)
{
	char err[256] = "";
	struct bs_aio *a;

	o->name = "t";
	o->no_uring = no_uring;
	if (!o->block_size)
		o->block_size = 512;
	a = bs_aio_create(o, err, sizeof(err));
	cr_assert_not_null(a, "%s", err);
	if (no_uring || !uring_works())
		cr_assert_str_eq(bs_aio_mode(a), "threads");
	else
		cr_assert_str_eq(bs_aio_mode(a), "io_uring");
	return a;
}

static struct bs_aio *file_engine(uint64_t size, bool no_uring, int *fdp)
{
	struct bs_aio_opts o = {.fd = temp_file(size), .fd_buffered = -1};

	if (fdp)
		*fdp = o.fd;
	return engine(&o, no_uring);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed + (i >> 9));
}

static struct bs_engine_stats stats(struct bs_aio *a)
{
	struct bs_engine_stats s;
	bs_aio_get_stats(a, &s);
	return s;
}

#define BOTH(fn)                                                                                   \
	static void fn(bool no_uring);                                                             \
	Test(bs_aio_uring, fn)                                                                     \
	{                                                                                          \
		fn(false);                                                                         \
	}                                                                                          \
	Test(bs_aio_threads, fn)                                                                   \
	{                                                                                          \
		fn(true);                                                                          \
	}                                                                                          \
	static void fn(bool no_uring)

BOTH(round_trip_sizes_and_offsets)
{
	struct bs_aio *a = file_engine(8 << 20, no_uring, NULL);
	static uint8_t w[1 << 20], r[1 << 20];
	const uint64_t lens[] = {512, 4096, 65536, 1 << 20};
	const uint64_t offs[] = {0, 512, 12345 * 512ull, (8 << 20) - (1 << 20)};

	for (size_t i = 0; i < 4; i++) {
		fill(w, lens[i], (unsigned)i);
		cr_assert_eq(rw(a, BS_WRITE, offs[i], w, lens[i], false), BS_OK);
		memset(r, 0xee, lens[i]);
		cr_assert_eq(rw(a, BS_READ, offs[i], r, lens[i], false), BS_OK);
		cr_assert_arr_eq(r, w, lens[i], "len %lu", (unsigned long)lens[i]);
	}
	bs_aio_destroy(a);
}

BOTH(scattered_iovecs_and_split_steps)
{
	struct bs_aio_opts o = {.fd = temp_file(1 << 20), .fd_buffered = -1, .max_step = 4096};
	struct bs_aio *a = engine(&o, no_uring);
	static uint8_t src[65536], dst[65536];
	struct iovec wv[5] = {{src, 1},
			      {src + 1, 4999},
			      {src + 5000, 30000},
			      {src + 35000, 536},
			      {src + 35536, 30000}};
	struct iovec rv[3] = {{dst, 3}, {dst + 3, 65000}, {dst + 65003, 533}};
	struct bs_io io = {.op = BS_WRITE, .off = 4096, .len = 65536, .iov = wv, .iovcnt = 5};
	struct bs_engine_stats s;

	fill(src, sizeof(src), 3);
	cr_assert_eq(run(a, &io), BS_OK);
	io = (struct bs_io){.op = BS_READ, .off = 4096, .len = 65536, .iov = rv, .iovcnt = 3};
	cr_assert_eq(run(a, &io), BS_OK);
	cr_assert_arr_eq(dst, src, sizeof(src));
	s = stats(a);
	cr_assert_geq(s.syscalls, 32, "64 KiB in 4 KiB steps, twice: %lu",
		      (unsigned long)s.syscalls);
	bs_aio_destroy(a);
}

BOTH(iovecs_longer_than_len_are_trimmed)
{
	struct bs_aio *a = file_engine(65536, no_uring, NULL);
	uint8_t w[4096], r[8192];

	memset(w, 0x11, sizeof(w));
	cr_assert_eq(rw(a, BS_WRITE, 4096, w, 4096, false), BS_OK);
	memset(r, 0x77, sizeof(r));
	{
		struct iovec iov = {r, sizeof(r)};
		struct bs_io io = {.op = BS_READ, .off = 0, .len = 4096, .iov = &iov, .iovcnt = 1};
		cr_assert_eq(run(a, &io), BS_OK);
	}
	for (size_t i = 0; i < 4096; i++)
		cr_assert_eq(r[i], 0);
	for (size_t i = 4096; i < 8192; i++)
		cr_assert_eq(r[i], 0x77, "byte %zu beyond len was written", i);
	bs_aio_destroy(a);
}

BOTH(short_read_at_end_of_file_is_resumed_then_fails)
{
	int fd;
	struct bs_aio *a = file_engine(4096, no_uring, &fd);
	uint8_t r[8192];
	struct bs_engine_stats s;

	/* The engine trusts the store's size; the file ends half way through this read. */
	cr_assert_eq(rw(a, BS_READ, 0, r, sizeof(r), false), BS_EIO);
	s = stats(a);
	cr_assert_eq(s.resumed, 1, "the short first step was resumed");
	cr_assert_eq(rw(a, BS_READ, 0, r, 4096, false), BS_OK);
	bs_aio_destroy(a);
}

BOTH(fua_and_flush)
{
	struct bs_aio *a = file_engine(1 << 20, no_uring, NULL);
	uint8_t w[8192], r[8192];
	struct bs_io fl = {.op = BS_FLUSH};
	struct bs_engine_stats s;

	fill(w, sizeof(w), 1);
	cr_assert_eq(rw(a, BS_WRITE, 0, w, sizeof(w), true), BS_OK);
	cr_assert_eq(run(a, &fl), BS_OK);
	cr_assert_eq(rw(a, BS_READ, 0, r, sizeof(r), false), BS_OK);
	cr_assert_arr_eq(r, w, sizeof(w));
	s = stats(a);
	cr_assert_eq(s.fua_writes, 1);
	cr_assert_eq(s.flushes, 1);
	bs_aio_destroy(a);
}

BOTH(nv_cache_ignores_fua_and_flush)
{
	struct bs_aio_opts o = {.fd = temp_file(1 << 20), .fd_buffered = -1, .nv_cache = true};
	struct bs_aio *a = engine(&o, no_uring);
	uint8_t w[4096];
	struct bs_io fl = {.op = BS_FLUSH};
	struct bs_engine_stats s;

	memset(w, 3, sizeof(w));
	cr_assert_eq(rw(a, BS_WRITE, 0, w, sizeof(w), true), BS_OK);
	cr_assert_eq(run(a, &fl), BS_OK);
	s = stats(a);
	cr_assert_eq(s.fua_writes, 0);
	cr_assert_eq(s.flushes, 0);
	bs_aio_destroy(a);
}

BOTH(unmap_punches_a_hole)
{
	int fd;
	struct bs_aio *a = file_engine(4 << 20, no_uring, &fd);
	static uint8_t w[4 << 20], r[4 << 20];
	struct bs_io um = {.op = BS_UNMAP, .off = 1 << 20, .len = 2 << 20};
	struct bs_io fl = {.op = BS_FLUSH};
	struct stat before, after;

	memset(w, 0xab, sizeof(w));
	cr_assert_eq(rw(a, BS_WRITE, 0, w, sizeof(w), false), BS_OK);
	cr_assert_eq(run(a, &fl), BS_OK);
	cr_assert_eq(fstat(fd, &before), 0);
	cr_assert_eq(run(a, &um), BS_OK);
	cr_assert_eq(fstat(fd, &after), 0);
	cr_assert_leq((after.st_blocks + 4096) * 512, before.st_blocks * 512,
		      "blocks before %ld after %ld", (long)before.st_blocks, (long)after.st_blocks);
	cr_assert_eq(after.st_size, 4 << 20, "KEEP_SIZE");
	cr_assert_eq(rw(a, BS_READ, 0, r, sizeof(r), false), BS_OK);
	for (size_t i = 0; i < sizeof(r); i += 511)
		cr_assert_eq(r[i], (i >= (1u << 20) && i < (3u << 20)) ? 0 : 0xab, "byte %zu", i);
	bs_aio_destroy(a);
}

BOTH(write_same_over_several_chunks)
{
	struct bs_aio *a = file_engine(8 << 20, no_uring, NULL);
	uint8_t blk[4096];
	static uint8_t r[3 << 20];
	struct iovec iov = {blk, sizeof(blk)};
	uint64_t len = (3 << 20) - 8192; /* more than one 1 MiB pattern chunk, not a multiple */
	struct bs_io io = {.op = BS_WRITE_SAME, .off = 4096, .len = len, .iov = &iov, .iovcnt = 1};

	fill(blk, sizeof(blk), 42);
	/* block size 512: the pattern is the first 512 bytes of blk */
	cr_assert_eq(run(a, &io), BS_OK);
	cr_assert_eq(rw(a, BS_READ, 0, r, sizeof(r), false), BS_OK);
	for (size_t i = 0; i < 4096; i++)
		cr_assert_eq(r[i], 0);
	for (uint64_t o = 4096; o < 4096 + len; o += 512)
		cr_assert_arr_eq(r + o, blk, 512, "block at %lu", (unsigned long)o);
	for (size_t i = 4096 + len; i < sizeof(r); i++)
		cr_assert_eq(r[i], 0, "beyond the range at %zu", i);
	bs_aio_destroy(a);
}

/* O_DIRECT: an aligned buffer goes straight through; a misaligned one is bounced; an offset
 * the direct descriptor cannot take goes to the buffered one. */
static struct bs_aio *direct_engine(uint64_t size, bool no_uring, uint32_t off_align)
{
	struct bs_aio_opts o = {.fd = temp_file(size)};
	uint32_t mem, off;

	char p[64];

	/* the temp file is already unlinked: reopen it O_DIRECT through /proc */
	o.fd_buffered = o.fd;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", o.fd_buffered);
	o.fd = open(p, O_RDWR | O_DIRECT);
	cr_assert(o.fd >= 0, "O_DIRECT open: %s", strerror(errno));
	bs_dio_align(o.fd, 4096, &mem, &off);
	cr_assert_gt(mem, 0);
	o.dio_mem_align = mem;
	o.dio_off_align = off > off_align ? off : off_align;
	return engine(&o, no_uring);
}

BOTH(odirect_aligned_goes_straight_through)
{
	struct bs_aio *a = direct_engine(1 << 20, no_uring, 512);
	uint8_t *w, *r;
	struct bs_engine_stats s;

	cr_assert_eq(posix_memalign((void **)&w, 4096, 65536), 0);
	cr_assert_eq(posix_memalign((void **)&r, 4096, 65536), 0);
	fill(w, 65536, 8);
	cr_assert_eq(rw(a, BS_WRITE, 8192, w, 65536, false), BS_OK);
	cr_assert_eq(rw(a, BS_READ, 8192, r, 65536, false), BS_OK);
	cr_assert_arr_eq(r, w, 65536);
	s = stats(a);
	cr_assert_eq(s.bounced, 0);
	cr_assert_eq(s.unaligned, 0);
	free(w);
	free(r);
	bs_aio_destroy(a);
}

BOTH(odirect_misaligned_buffers_are_bounced)
{
	struct bs_aio *a = direct_engine(1 << 20, no_uring, 512);
	uint8_t *wb, *rb;
	struct bs_engine_stats s;

	cr_assert_eq(posix_memalign((void **)&wb, 4096, 65536 + 4096), 0);
	cr_assert_eq(posix_memalign((void **)&rb, 4096, 65536 + 4096), 0);
	fill(wb + 3, 65536, 9);
	cr_assert_eq(rw(a, BS_WRITE, 4096, wb + 3, 65536, false), BS_OK);
	memset(rb, 0, 65536 + 4096);
	cr_assert_eq(rw(a, BS_READ, 4096, rb + 1, 65536, false), BS_OK);
	cr_assert_arr_eq(rb + 1, wb + 3, 65536);
	cr_assert_eq(rb[0], 0, "nothing written before the buffer");
	cr_assert_eq(rb[65537], 0, "nothing written after the buffer");
	s = stats(a);
	cr_assert_eq(s.bounced, 2);
	{
		/* iovecs of odd lengths are bounced too */
		uint8_t *al;
		cr_assert_eq(posix_memalign((void **)&al, 4096, 8192), 0);
		struct iovec v[2] = {{al, 100}, {al + 4096, 412}};
		struct bs_io io = {.op = BS_READ, .off = 4096, .len = 512, .iov = v, .iovcnt = 2};
		cr_assert_eq(run(a, &io), BS_OK);
		cr_assert_arr_eq(al, wb + 3, 100);
		cr_assert_arr_eq(al + 4096, wb + 103, 412);
		free(al);
	}
	s = stats(a);
	cr_assert_eq(s.bounced, 3);
	free(wb);
	free(rb);
	bs_aio_destroy(a);
}

BOTH(odirect_unaligned_offset_uses_the_buffered_descriptor)
{
	struct bs_aio *a = direct_engine(1 << 20, no_uring, 4096);
	uint8_t *w, *r;
	struct bs_engine_stats s;

	cr_assert_eq(posix_memalign((void **)&w, 4096, 8192), 0);
	cr_assert_eq(posix_memalign((void **)&r, 4096, 8192), 0);
	fill(w, 8192, 10);
	cr_assert_eq(rw(a, BS_WRITE, 512, w, 1536, false), BS_OK); /* 512-byte blocks */
	cr_assert_eq(rw(a, BS_READ, 0, r, 4096, false), BS_OK);	   /* aligned: direct */
	for (int i = 0; i < 512; i++)
		cr_assert_eq(r[i], 0);
	cr_assert_arr_eq(r + 512, w, 1536, "direct read sees the buffered write");
	s = stats(a);
	cr_assert_eq(s.unaligned, 1);
	cr_assert_eq(s.bounced, 0);
	free(w);
	free(r);
	bs_aio_destroy(a);
}

/* Many I/Os in flight, more than the engine's depth: every one completes exactly once, off the
 * submitting thread where the back end is asynchronous, with the right data. */
struct multi {
	struct waiter w;
	struct bs_io *base;
	atomic_int per_io[512];
	/* completions wait here until every I/O is submitted, so the engine's slots fill up
	 * and queueing beyond the depth is certain, not a matter of timing */
	pthread_mutex_t gate_mu;
	pthread_cond_t gate_cv;
	bool gate_open;
};

static void multi_cb(struct bs_io *io, enum bs_status st)
{
	struct multi *m = io->priv;

	pthread_mutex_lock(&m->gate_mu);
	while (!m->gate_open)
		pthread_cond_wait(&m->gate_cv, &m->gate_mu);
	pthread_mutex_unlock(&m->gate_mu);
	atomic_fetch_add(&m->per_io[io - m->base], 1);
	wait_cb(io, st);
}

static void gate_set(struct multi *m, bool open)
{
	pthread_mutex_lock(&m->gate_mu);
	m->gate_open = open;
	pthread_cond_broadcast(&m->gate_cv);
	pthread_mutex_unlock(&m->gate_mu);
}

BOTH(many_in_flight_beyond_depth)
{
	struct bs_aio_opts o = {.fd = temp_file(4 << 20), .fd_buffered = -1, .depth = 8};
	struct bs_aio *a = engine(&o, no_uring);
	enum { N = 512, SZ = 4096 };
	static uint8_t bufs[N][SZ], back[N][SZ];
	static struct iovec iov[N];
	static struct bs_io io[N];
	static struct multi m;
	struct bs_engine_stats s;

	waiter_init(&m.w);
	m.base = io;
	pthread_mutex_init(&m.gate_mu, NULL);
	pthread_cond_init(&m.gate_cv, NULL);
	gate_set(&m, false);
	for (int i = 0; i < N; i++) {
		fill(bufs[i], SZ, (unsigned)i);
		iov[i] = (struct iovec){bufs[i], SZ};
		io[i] = (struct bs_io){.op = BS_WRITE,
				       .off = (uint64_t)((i * 37) % N) * SZ,
				       .len = SZ,
				       .iov = &iov[i],
				       .iovcnt = 1,
				       .cb = multi_cb,
				       .priv = &m};
	}
	for (int i = 0; i < N; i++) {
		atomic_store(&m.per_io[i], 0);
		bs_aio_submit(a, &io[i]);
	}
	gate_set(&m, true);
	cr_assert(wait_for(&m.w, N), "only %d of %d completed", m.w.done, N);
	cr_assert_eq(m.w.bad, 0);
	cr_assert_eq(m.w.on_submitter, 0, "completions ran on the submitting thread");
	s = stats(a);
	cr_assert_gt(s.queued, 0, "depth 8 must have queued some of %d", N);
	cr_assert_eq(s.completed, N);
	for (int i = 0; i < N; i++)
		cr_assert_eq(atomic_load(&m.per_io[i]), 1, "io %d completed %d times", i,
			     atomic_load(&m.per_io[i]));
	/* read everything back, also all at once */
	waiter_init(&m.w);
	for (int i = 0; i < N; i++) {
		iov[i] = (struct iovec){back[i], SZ};
		io[i].op = BS_READ;
	}
	for (int i = 0; i < N; i++)
		bs_aio_submit(a, &io[i]);
	cr_assert(wait_for(&m.w, N));
	cr_assert_eq(m.w.bad, 0);
	for (int i = 0; i < N; i++)
		cr_assert_arr_eq(back[i], bufs[i], SZ, "io %d", i);
	bs_aio_destroy(a);
}

/* Two threads submitting at once against one engine. */
struct hammer {
	struct bs_aio *a;
	int id;
	struct waiter w;
};

static void *hammer_main(void *arg)
{
	struct hammer *h = arg;
	static uint8_t data[2][64][4096];
	struct iovec iov[64];
	struct bs_io io[64];

	waiter_init(&h->w);
	for (int i = 0; i < 64; i++) {
		memset(data[h->id][i], h->id * 64 + i, 4096);
		iov[i] = (struct iovec){data[h->id][i], 4096};
		io[i] = (struct bs_io){.op = BS_WRITE,
				       .off = (uint64_t)(h->id * 64 + i) * 4096,
				       .len = 4096,
				       .iov = &iov[i],
				       .iovcnt = 1,
				       .cb = wait_cb,
				       .priv = &h->w,
				       .fua = i % 3 == 0};
		bs_aio_submit(h->a, &io[i]);
	}
	wait_for(&h->w, 64);
	return NULL;
}

BOTH(concurrent_submitters)
{
	struct bs_aio_opts o = {.fd = temp_file(1 << 20), .fd_buffered = -1, .depth = 16};
	struct bs_aio *a = engine(&o, no_uring);
	struct hammer h[2] = {{.a = a, .id = 0}, {.a = a, .id = 1}};
	pthread_t t[2];
	uint8_t r[4096];

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, hammer_main, &h[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(h[i].w.done, 64);
		cr_assert_eq(h[i].w.bad, 0);
	}
	for (int b = 0; b < 128; b++) {
		cr_assert_eq(rw(a, BS_READ, (uint64_t)b * 4096, r, 4096, false), BS_OK);
		cr_assert_eq(r[0], (uint8_t)b);
		cr_assert_eq(r[4095], (uint8_t)b);
	}
	bs_aio_destroy(a);
}

/* A medium that blocks: the data buffer's page is missing and only arrives when a userfaultfd
 * handler supplies it, so the write system call sleeps inside the kernel.  bs_aio_submit must
 * return while it sleeps; the I/O completes once the page arrives. */
struct uffd_ctx {
	int uffd;
	char *page;
	size_t psz;
	atomic_int submit_returned;
	atomic_int faulted;
	uint8_t fillb;
};

static void *uffd_main(void *arg)
{
	struct uffd_ctx *u = arg;
	struct uffd_msg msg;
	struct pollfd p = {u->uffd, POLLIN, 0};
	char *src = aligned_alloc(u->psz, u->psz);

	memset(src, u->fillb, u->psz);
	if (poll(&p, 1, 20000) != 1 || read(u->uffd, &msg, sizeof(msg)) != sizeof(msg)) {
		free(src);
		return NULL;
	}
	atomic_store(&u->faulted, 1);
	/* hold the fault until the submitter has shown it was not stalled (bounded wait) */
	for (int i = 0; i < 20000 && !atomic_load(&u->submit_returned); i++)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	struct uffdio_copy c = {.dst = (uintptr_t)u->page, .src = (uintptr_t)src, .len = u->psz};
	ioctl(u->uffd, UFFDIO_COPY, &c);
	free(src);
	return NULL;
}

/* A page whose first touch blocks until uffd_main supplies it (filled with `fillb`).  Skips
 * the test (after destroying a) when the kernel has no userfaultfd for us. */
static void uffd_start(struct uffd_ctx *u, pthread_t *th, struct bs_aio *a)
{
	struct uffdio_api api = {.api = UFFD_API};
	struct uffdio_register reg;

	u->psz = (size_t)sysconf(_SC_PAGESIZE);
	u->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (u->uffd < 0) {
		cr_log_warn("userfaultfd unavailable (%s): cannot build a blocking medium",
			    strerror(errno));
		bs_aio_destroy(a);
		cr_skip_test();
	}
	cr_assert_eq(ioctl(u->uffd, UFFDIO_API, &api), 0);
	u->page = mmap(NULL, u->psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(u->page, MAP_FAILED);
	reg = (struct uffdio_register){.range = {(uintptr_t)u->page, u->psz},
				       .mode = UFFDIO_REGISTER_MODE_MISSING};
	cr_assert_eq(ioctl(u->uffd, UFFDIO_REGISTER, &reg), 0);
	pthread_create(th, NULL, uffd_main, u);
}

BOTH(blocked_medium_does_not_stall_the_submitter)
{
	struct bs_aio *a = file_engine(1 << 20, no_uring, NULL);
	struct uffd_ctx u = {.fillb = 0x5c};
	struct waiter w;
	pthread_t th;
	uint8_t r[4096];

	uffd_start(&u, &th, a);

	waiter_init(&w);
	struct iovec iov = {u.page, 4096};
	struct bs_io io = {.op = BS_WRITE,
			   .off = 8192,
			   .len = 4096,
			   .iov = &iov,
			   .iovcnt = 1,
			   .cb = wait_cb,
			   .priv = &w};
	bs_aio_submit(a, &io);
	/* we got here: the submitter was not held by the blocked write */
	cr_assert_eq(w.done, 0, "completed before its data existed");
	atomic_store(&u.submit_returned, 1);
	cr_assert(wait_for(&w, 1), "blocked write never completed");
	cr_assert_eq(w.st, BS_OK);
	cr_assert_eq(atomic_load(&u.faulted), 1, "the write really waited for the page");
	pthread_join(th, NULL);
	cr_assert_eq(rw(a, BS_READ, 8192, r, 4096, false), BS_OK);
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(r[i], 0x5c);
	munmap(u.page, u.psz);
	close(u.uffd);
	bs_aio_destroy(a);
}

/* Submit io with inline_ok; true when it completed on this thread before submit returned. */
static bool ran_inline(struct bs_aio *a, struct bs_io *io)
{
	struct waiter w;
	int done_at_return;

	waiter_init(&w);
	io->cb = wait_cb;
	io->priv = &w;
	io->inline_ok = true;
	bs_aio_submit(a, io);
	done_at_return = w.done;
	cr_assert(wait_for(&w, 1), "I/O did not complete");
	cr_assert_eq(w.done, 1, "callback ran %d times", w.done);
	cr_assert_eq(w.st, BS_OK);
	if (w.on_submitter)
		cr_assert_eq(done_at_return, 1, "an inline completion comes before submit returns");
	return w.on_submitter == 1;
}

/* Does this file take preadv2(RWF_NOWAIT)?  (The test file system decides.) */
static bool nowait_reads(int fd)
{
	char b[512];
	struct iovec v = {b, sizeof(b)};

	return preadv2(fd, &v, 1, 0, RWF_NOWAIT) >= 0 || errno == EAGAIN;
}

BOTH(inline_ok_runs_page_cache_io_on_the_submitter)
{
	int fd;
	struct bs_aio *a = file_engine(1 << 20, no_uring, &fd);
	static uint8_t w[256 << 10], r[256 << 10];
	struct iovec wv = {w, 4096}, rv = {r, 4096};
	struct bs_io io;
	bool nowait = nowait_reads(fd);

	fill(w, sizeof(w), 3);
	io = (struct bs_io){.op = BS_WRITE, .off = 8192, .len = 4096, .iov = &wv, .iovcnt = 1};
	cr_assert(ran_inline(a, &io), "a buffered write with nothing in flight runs inline");
	io = (struct bs_io){.op = BS_READ, .off = 8192, .len = 4096, .iov = &rv, .iovcnt = 1};
	cr_assert_eq(ran_inline(a, &io), nowait, "a cached read runs inline when RWF_NOWAIT works");
	cr_assert_arr_eq(r, w, 4096);
	cr_assert_eq(stats(a).inlined, nowait ? 2 : 1);

	/* what waits for the medium, or is large, or was not offered, goes the usual way */
	io = (struct bs_io){.op = BS_WRITE, .off = 0, .len = 4096, .iov = &wv, .iovcnt = 1,
			    .fua = true};
	cr_assert_not(ran_inline(a, &io), "FUA write");
	wv.iov_len = rv.iov_len = sizeof(w);
	io = (struct bs_io){.op = BS_WRITE, .off = 0, .len = sizeof(w), .iov = &wv, .iovcnt = 1};
	cr_assert_not(ran_inline(a, &io), "256 KiB write");
	io = (struct bs_io){.op = BS_READ, .off = 0, .len = sizeof(r), .iov = &rv, .iovcnt = 1};
	cr_assert_not(ran_inline(a, &io), "256 KiB read");
	cr_assert_arr_eq(r, w, sizeof(w));
	cr_assert_eq(rw(a, BS_WRITE, 0, w, 4096, false), BS_OK); /* inline_ok not set */
	cr_assert_eq(stats(a).inlined, nowait ? 2 : 1);
	bs_aio_destroy(a);
}

/* inline_large_ok (TCMU's ring thread): a cached READ of any size runs on the submitter; a
 * large WRITE still goes the usual way. */
BOTH(inline_large_ok_runs_a_large_cached_read_on_the_submitter)
{
	int fd;
	struct bs_aio *a = file_engine(4 << 20, no_uring, &fd);
	static uint8_t w[1 << 20], r[1 << 20];
	struct iovec wv = {w, sizeof(w)}, rv = {r, sizeof(r)};
	struct bs_io io;
	bool nowait = nowait_reads(fd);

	fill(w, sizeof(w), 7);
	io = (struct bs_io){.op = BS_WRITE, .off = 1 << 20, .len = sizeof(w), .iov = &wv,
			    .iovcnt = 1, .inline_large_ok = true};
	cr_assert_not(ran_inline(a, &io), "1 MiB write: inline_large_ok is for reads");
	io = (struct bs_io){.op = BS_READ, .off = 1 << 20, .len = sizeof(r), .iov = &rv,
			    .iovcnt = 1, .inline_large_ok = true};
	cr_assert_eq(ran_inline(a, &io), nowait, "a cached 1 MiB read runs inline when asked");
	cr_assert_arr_eq(r, w, sizeof(w));
	cr_assert_eq(stats(a).inlined, nowait ? 1 : 0);
	bs_aio_destroy(a);
}

/* Are the first len bytes of fd out of the page cache?  (tmpfs never lets them go.) */
static bool evicted(int fd, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char vec[(4 << 20) / 4096];
	void *m;
	bool out = true;

	cr_assert(len / (size_t)pg <= sizeof(vec));
	cr_assert_eq(fdatasync(fd), 0);
	cr_assert_eq(posix_fadvise(fd, 0, (off_t)len, POSIX_FADV_DONTNEED), 0);
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	cr_assert(m != MAP_FAILED);
	cr_assert_eq(mincore(m, len, vec), 0);
	for (size_t i = 0; i < len / (size_t)pg; i++)
		out = out && !(vec[i] & 1);
	munmap(m, len);
	return out;
}

/* On the ring a buffered READ first asks the page cache alone (RWF_NOWAIT); one it cannot
 * answer is sent again for the ring's workers, and the data is the same either way.  The
 * pool never asks. */
BOTH(a_read_the_page_cache_cannot_answer_is_sent_to_the_ring_workers)
{
	int fd;
	struct bs_aio *a = file_engine(4 << 20, no_uring, &fd);
	static uint8_t w[4 << 20], r[1 << 20];
	bool nowait = nowait_reads(fd);

	fill(w, sizeof(w), 11);
	cr_assert_eq(pwrite(fd, w, sizeof(w), 0), (ssize_t)sizeof(w));
	if (!evicted(fd, sizeof(w)))
		cr_skip_test("this file system keeps the file's pages cached");
	cr_assert_eq(rw(a, BS_READ, 1 << 20, r, sizeof(r), false), BS_OK);
	cr_assert_arr_eq(r, w + (1 << 20), sizeof(r), "cold read");
	cr_assert_eq(stats(a).cold > 0, !no_uring && nowait, "cold steps: %llu",
		     (unsigned long long)stats(a).cold);
	cr_assert_eq(stats(a).retried, 0, "EAGAIN from RWF_NOWAIT is not a retry");

	/* now cached: answered by the page cache on the first try */
	uint64_t cold = stats(a).cold;
	memset(r, 0, sizeof(r));
	cr_assert_eq(rw(a, BS_READ, 1 << 20, r, sizeof(r), false), BS_OK);
	cr_assert_arr_eq(r, w + (1 << 20), sizeof(r), "cached read");
	cr_assert_eq(stats(a).cold, cold, "a cached read went to the workers");

	/* Offered inline (ib_srpt, TCMU) and refused there: the page cache is asked once. */
	if (!evicted(fd, sizeof(w)))
		cr_skip_test("the pages came back");
	struct iovec rv = {r, sizeof(r)};
	struct bs_io io = {.op = BS_READ, .off = 2 << 20, .len = sizeof(r), .iov = &rv,
			   .iovcnt = 1, .inline_ok = true, .inline_large_ok = true};
	cr_assert_not(ran_inline(a, &io), "a cold read ran on the submitter");
	cr_assert_arr_eq(r, w + (2 << 20), sizeof(r), "cold read offered inline");
	cr_assert_eq(stats(a).cold - cold, nowait ? 1 : 0, "cold steps: %llu",
		     (unsigned long long)(stats(a).cold - cold));
	bs_aio_destroy(a);
}

BOTH(inline_ok_writes_wait_on_an_o_dsync_file)
{
	struct bs_aio_opts o = {.fd = -1, .fd_buffered = -1};
	int rwfd = temp_file(65536);
	char p[64];
	uint8_t w[4096], r[4096];
	struct iovec wv = {w, sizeof(w)}, rv = {r, sizeof(r)};
	struct bs_io io;
	struct bs_aio *a;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", rwfd);
	o.fd = open(p, O_RDWR | O_DSYNC);
	close(rwfd);
	cr_assert(o.fd >= 0);
	a = engine(&o, no_uring);
	fill(w, sizeof(w), 9);
	io = (struct bs_io){.op = BS_WRITE, .off = 4096, .len = 4096, .iov = &wv, .iovcnt = 1};
	cr_assert_not(ran_inline(a, &io), "write_through: the write waits for the medium");
	io = (struct bs_io){.op = BS_READ, .off = 4096, .len = 4096, .iov = &rv, .iovcnt = 1};
	cr_assert_eq(ran_inline(a, &io), nowait_reads(o.fd), "reads still come from the cache");
	cr_assert_arr_eq(r, w, sizeof(w));
	bs_aio_destroy(a);
}

/* Submit an I/O of first_op whose buffer is a page that faults until the submit returned,
 * then a 4 KiB inline_ok WRITE at 64 KiB (inline_wait_ok as given) beside it; both must
 * complete OK and the write's data read back.  True when the write ran on the submitter. */
static bool write_beside_held(bool no_uring, enum bs_op first_op, bool wait_ok)
{
	struct bs_aio *a = file_engine(1 << 20, no_uring, NULL);
	struct uffd_ctx u = {.fillb = 0x3c};
	struct waiter w1, w2;
	pthread_t th;
	uint8_t b[4096];
	bool on_submitter;

	uffd_start(&u, &th, a);

	waiter_init(&w1);
	waiter_init(&w2);
	struct iovec v1 = {u.page, 4096}, v2 = {b, sizeof(b)};
	struct bs_io held = {.op = first_op, .off = 0, .len = 4096, .iov = &v1, .iovcnt = 1,
			     .cb = wait_cb, .priv = &w1};
	struct bs_io second = {.op = BS_WRITE, .off = 65536, .len = 4096, .iov = &v2, .iovcnt = 1,
			       .cb = wait_cb, .priv = &w2, .inline_ok = true,
			       .inline_wait_ok = wait_ok};
	memset(b, 0x77, sizeof(b));
	bs_aio_submit(a, &held);
	bs_aio_submit(a, &second);
	on_submitter = w2.on_submitter == 1;
	if (on_submitter) {
		cr_assert_eq(w2.done, 1, "an inline completion comes before submit returns");
		cr_assert_eq(w1.done, 0, "the I/O in flight is still waiting for its page");
	}
	atomic_store(&u.submit_returned, 1);
	cr_assert(wait_for(&w1, 1) && wait_for(&w2, 1), "I/O never completed");
	cr_assert_eq(w1.st, BS_OK);
	cr_assert_eq(w2.st, BS_OK);
	pthread_join(th, NULL);
	memset(b, 0, sizeof(b));
	cr_assert_eq(rw(a, BS_READ, 65536, b, 4096, false), BS_OK);
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(b[i], 0x77);
	munmap(u.page, u.psz);
	close(u.uffd);
	bs_aio_destroy(a);
	return on_submitter;
}

/* A buffered write may wait (for a page, for the inode behind another write): with another
 * I/O of the engine in flight it is handed off, so the submitter never waits behind it. */
BOTH(inline_ok_write_is_handed_off_while_another_is_in_flight)
{
	cr_assert_not(write_beside_held(no_uring, BS_WRITE, false),
		      "ran inline behind a write in flight");
}

/* ...unless its submitter may wait (inline_wait_ok: TCMU's two ring threads): then it runs on
 * the submitter beside an I/O in flight (a READ into the faulting page).  The engine's
 * choice is the same with io_uring; the thread pool only, because an io_uring worker stalled
 * on that fault also stalled this process's write to the file (seen on Linux 6.x), which
 * would test the kernel, not the choice. */
Test(bs_aio_threads, inline_wait_ok_write_runs_beside_another_in_flight)
{
	cr_assert(write_beside_held(true, BS_READ, true),
		  "handed off although its submitter may wait");
}

BOTH(zero_length_and_nothing_to_do_complete_inline)
{
	struct bs_aio *a = file_engine(65536, no_uring, NULL);
	struct bs_io io = {.op = BS_WRITE, .off = 0, .len = 0};
	struct bs_engine_stats s;

	cr_assert_eq(run(a, &io), BS_OK);
	s = stats(a);
	cr_assert_eq(s.syscalls, 0);
	bs_aio_destroy(a);
}

BOTH(write_to_readonly_descriptor_fails_cleanly)
{
	struct bs_aio_opts o = {.fd = -1, .fd_buffered = -1};
	int rwfd = temp_file(65536);
	char p[64];
	uint8_t w[512] = {1};
	struct bs_aio *a;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", rwfd);
	o.fd = open(p, O_RDONLY);
	close(rwfd);
	cr_assert(o.fd >= 0);
	a = engine(&o, no_uring);
	cr_assert_eq(rw(a, BS_WRITE, 0, w, sizeof(w), false), BS_EIO, "EBADF is a medium error");
	cr_assert_eq(rw(a, BS_READ, 0, w, sizeof(w), false), BS_OK);
	bs_aio_destroy(a);
}

Test(bs_aio, environment_forces_thread_pool)
{
	struct bs_aio_opts o = {.name = "t", .fd = temp_file(4096), .fd_buffered = -1};
	char err[128];
	struct bs_aio *a;

	setenv("UTGT_NO_IO_URING", "1", 1);
	a = bs_aio_create(&o, err, sizeof(err));
	cr_assert_not_null(a, "%s", err);
	cr_assert_str_eq(bs_aio_mode(a), "threads");
	bs_aio_destroy(a);
	setenv("UTGT_NO_IO_URING", "0", 1);
	o.fd = temp_file(4096);
	a = bs_aio_create(&o, err, sizeof(err));
	cr_assert_not_null(a);
	cr_assert_str_eq(bs_aio_mode(a), uring_works() ? "io_uring" : "threads");
	bs_aio_destroy(a);
}

Test(bs_aio, errno_mapping)
{
	cr_assert_eq(bs_errno_status(ENOSPC, BS_WRITE), BS_ENOSPC);
	cr_assert_eq(bs_errno_status(EDQUOT, BS_WRITE), BS_ENOSPC);
	cr_assert_eq(bs_errno_status(EROFS, BS_WRITE), BS_EROFS);
	cr_assert_eq(bs_errno_status(EIO, BS_READ), BS_EIO);
	cr_assert_eq(bs_errno_status(ENOMEM, BS_READ), BS_ENOMEM);
	cr_assert_eq(bs_errno_status(EOPNOTSUPP, BS_UNMAP), BS_ENOTSUP);
	cr_assert_eq(bs_errno_status(EINVAL, BS_UNMAP), BS_ENOTSUP);
	cr_assert_eq(bs_errno_status(EINVAL, BS_WRITE), BS_EIO);
}

Test(bs_aio, io_uring_setup_failure_falls_back_to_the_thread_pool)
{
	/* more SQ entries than the kernel allows (32768): io_uring_queue_init fails */
	struct bs_aio_opts o = {.name = "t", .fd = temp_file(65536), .fd_buffered = -1,
				.depth = 40000};
	char err[128];
	struct bs_aio *a;
	uint8_t w[512], r[512];

	unsetenv("UTGT_NO_IO_URING");
	a = bs_aio_create(&o, err, sizeof(err));
	cr_assert_not_null(a, "%s", err);
	cr_assert_str_eq(bs_aio_mode(a), "threads");
	memset(w, 0x2e, sizeof(w));
	cr_assert_eq(rw(a, BS_WRITE, 512, w, sizeof(w), false), BS_OK);
	cr_assert_eq(rw(a, BS_READ, 512, r, sizeof(r), false), BS_OK);
	cr_assert_arr_eq(r, w, sizeof(w));
	bs_aio_destroy(a);
}

/* ---------------------------------------------------------------- a worker's own ring */

static struct ut_thread OWN;
static atomic_int own_done, own_off_thread, own_bad;
static struct bs_aio *own_a;
static uint8_t own_w[64 << 10], own_r[8][4096];
static struct iovec own_iov[9];
static struct bs_io own_io[9];

static void own_cb(struct bs_io *io, enum bs_status st)
{
	(void)io;
	if (!ut_thread_is_current(&OWN))
		atomic_fetch_add(&own_off_thread, 1);
	if (st != BS_OK)
		atomic_fetch_add(&own_bad, 1);
	atomic_fetch_add(&own_done, 1);
}

/* On OWN: one 64 KiB write (16 steps of 4 KiB: the resumed steps stay on the ring). */
static void own_write(void *arg)
{
	(void)arg;
	own_iov[8] = (struct iovec){own_w, sizeof(own_w)};
	own_io[8] = (struct bs_io){.op = BS_WRITE, .off = 0, .len = sizeof(own_w),
				   .iov = &own_iov[8], .iovcnt = 1, .cb = own_cb};
	bs_aio_submit(own_a, &own_io[8]);
}

/* On OWN: eight 4 KiB reads in one round. */
static void own_reads(void *arg)
{
	(void)arg;
	for (int i = 0; i < 8; i++) {
		own_iov[i] = (struct iovec){own_r[i], 4096};
		own_io[i] = (struct bs_io){.op = BS_READ, .off = (uint64_t)i * 8192, .len = 4096,
					   .iov = &own_iov[i], .iovcnt = 1, .cb = own_cb};
		bs_aio_submit(own_a, &own_io[i]);
	}
}

/* On OWN, as bs_submit_sync does: submit and block until the callback.  Were the step on
 * OWN's ring, nobody would reap it: the wait ends at its timeout instead. */
static bool own_blocking_read_done;

static void own_blocking_read(void *arg)
{
	static struct iovec iov;
	static struct bs_io io;
	int before = atomic_load(&own_done);

	(void)arg;
	iov = (struct iovec){own_r[0], 4096};
	io = (struct bs_io){.op = BS_READ, .off = 8192, .len = 4096, .iov = &iov, .iovcnt = 1,
			    .cb = own_cb, .waited = true};
	bs_aio_submit(own_a, &io);
	for (int i = 0; i < 10000 && atomic_load(&own_done) == before; i++)
		usleep(1000);
	own_blocking_read_done = atomic_load(&own_done) > before;
}

static uint64_t own_submits;

static void own_read_submits(void *arg)
{
	(void)arg;
	own_submits = OWN.ring->submits;
}

static bool own_wait(int n)
{
	for (int i = 0; i < 20000 && atomic_load(&own_done) < n; i++)
		usleep(1000);
	return atomic_load(&own_done) >= n;
}

Test(bs_aio, a_worker_with_its_own_ring_completes_its_io_itself)
{
	struct bs_aio_opts o = {.fd = temp_file(1 << 20), .fd_buffered = -1, .max_step = 4096};
	struct bs_engine_stats s;
	uint64_t before;

	if (!uring_works())
		cr_skip_test("no io_uring here");
	own_a = engine(&o, false);
	cr_assert_eq(ut_thread_init(&OWN, "own"), 0);
	cr_assert_eq(ut_ring_attach(&OWN, 8), 0);
	cr_assert_eq(ut_thread_start(&OWN, -1), 0);
	fill(own_w, sizeof(own_w), 5);

	ut_thread_call_sync(&OWN, own_write, NULL);
	cr_assert(own_wait(1), "the write did not complete");
	s = stats(own_a);
	cr_assert_eq(s.own_ring, 16, "16 steps on the worker's ring (got %llu)",
		     (unsigned long long)s.own_ring);

	ut_thread_call_sync(&OWN, own_read_submits, NULL);
	before = own_submits;
	ut_thread_call_sync(&OWN, own_reads, NULL);
	cr_assert(own_wait(9), "the reads did not complete");
	ut_thread_call_sync(&OWN, own_read_submits, NULL);
	cr_assert_eq(own_submits - before, 1, "eight reads of one round in %llu submits",
		     (unsigned long long)(own_submits - before));
	for (int i = 0; i < 8; i++)
		cr_assert_eq(memcmp(own_r[i], own_w + i * 8192, 4096), 0, "read %d", i);
	cr_assert_eq(atomic_load(&own_bad), 0);
	cr_assert_eq(atomic_load(&own_off_thread), 0, "every callback ran on the worker");
	s = stats(own_a);
	cr_assert_eq(s.own_ring, 24);

	/* A submitter that blocks for its I/O is served by the shared ring, not its own. */
	atomic_store(&own_off_thread, 0);
	ut_thread_call_sync(&OWN, own_blocking_read, NULL);
	cr_assert(own_blocking_read_done, "a blocking submitter's I/O waited on its own ring");
	cr_assert_eq(atomic_load(&own_off_thread), 1, "completed by the shared ring's reaper");
	cr_assert_eq(memcmp(own_r[0], own_w + 8192, 4096), 0);
	cr_assert_eq(stats(own_a).own_ring, 24);
	atomic_store(&own_done, 9);

	/* From a thread without a ring the shared ring and its reaper still serve. */
	uint8_t r[4096];
	cr_assert_eq(rw(own_a, BS_READ, 4096, r, sizeof(r), false), BS_OK);
	cr_assert_eq(memcmp(r, own_w + 4096, 4096), 0);
	cr_assert_eq(stats(own_a).own_ring, 24);

	ut_thread_join(&OWN);
	ut_thread_fini(&OWN);
	bs_aio_destroy(own_a);
}
