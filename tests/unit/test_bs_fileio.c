/* vdisk_fileio: creating and sizing the file, every attribute's effect (blocksize, read_only,
 * o_direct, write_through, nv_cache, thin_provisioned), data round trips on both engine back
 * ends, UNMAP punching holes, WRITE SAME, GET LBA STATUS, many I/Os in flight. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "scsi/backstore/backstore.h"
#include "scsi/backstore/bs_aio.h"

static char path[128];

static void mkpath(void)
{
	static int n;
	snprintf(path, sizeof(path), "/tmp/utgt-fileio-%d-%d.img", (int)getpid(), n++);
	unlink(path);
}

static void cleanup(void)
{
	unlink(path);
}

static struct backstore *fb_new(uint64_t size, uint32_t bsz)
{
	struct backstore *bs = calloc(1, sizeof(*bs));

	bs->ops = backstore_find("vdisk_fileio");
	cr_assert_not_null(bs->ops);
	snprintf(bs->name, sizeof(bs->name), "f0");
	snprintf(bs->filename, sizeof(bs->filename), "%s", path);
	bs->size = size;
	bs->block_size = bsz;
	return bs;
}

static int fb_open(struct backstore *bs, char *err, size_t n)
{
	err[0] = 0;
	return bs->ops->open(bs, err, n);
}

static struct backstore *fb_make(uint64_t size, uint32_t bsz)
{
	struct backstore *bs = fb_new(size, bsz);
	char err[256];

	cr_assert_eq(fb_open(bs, err, sizeof(err)), 0, "%s", err);
	return bs;
}

static void fb_free(struct backstore *bs)
{
	bs->ops->close(bs);
	free(bs);
}

static enum bs_status rw(struct backstore *bs, enum bs_op op, uint64_t off, void *buf, uint64_t len,
			 bool fua)
{
	struct iovec iov = {buf, len};
	struct bs_io io = {
	    .op = op, .off = off, .len = len, .iov = &iov, .iovcnt = buf ? 1 : 0, .fua = fua};
	return bs_submit_sync(bs, &io);
}

static enum bs_status verb(struct backstore *bs, enum bs_op op, uint64_t off, uint64_t len)
{
	struct bs_io io = {.op = op, .off = off, .len = len};
	return bs_submit_sync(bs, &io);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 13 + seed + (i >> 10));
}

static int fd_flags(struct backstore *bs)
{
	return fcntl(bs_aio_fd(bs_aio_of(bs)), F_GETFL);
}

static struct bs_engine_stats stats(struct backstore *bs)
{
	struct bs_engine_stats s;
	bs_aio_get_stats(bs_aio_of(bs), &s);
	return s;
}

TestSuite(bs_fileio, .init = mkpath, .fini = cleanup);

Test(bs_fileio, missing_file_without_size_is_an_error)
{
	struct backstore *bs = fb_new(0, 512);
	char err[256];

	cr_assert_eq(fb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "does not exist"), "%s", err);
	cr_assert(strstr(err, path), "%s", err);
	cr_assert_eq(access(path, F_OK), -1, "nothing created");
	free(bs);
}

Test(bs_fileio, missing_file_with_size_is_created_sparse)
{
	struct backstore *bs = fb_make(64 << 20, 512);
	struct stat st;

	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, 64 << 20);
	cr_assert_lt(st.st_blocks, 64, "sparse: %ld blocks", (long)st.st_blocks);
	cr_assert_eq(bs->size, 64 << 20);
	cr_assert_eq(st.st_mode & 0777, 0600);
	fb_free(bs);
}

/* A file one device serves cannot be opened by another (a second daemon serving it would
 * split persistent-reservation state); the message names the holder.  Read-only devices
 * may share a file with each other, not with a writer. */
Test(bs_fileio, a_served_file_is_locked)
{
	struct backstore *a = fb_make(1 << 20, 512), *b = fb_new(0, 512), *r1, *r2;
	char err[256], want[64];

	cr_assert_eq(fb_open(b, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "in use by process %d", (int)getpid());
	cr_assert(strstr(err, want), "%s", err);
	b->read_only = true;
	cr_assert_eq(fb_open(b, err, sizeof(err)), -1, "not even read-only while written");
	free(b);
	fb_free(a);
	r1 = fb_new(0, 512);
	r2 = fb_new(0, 512);
	r1->read_only = r2->read_only = true;
	cr_assert_eq(fb_open(r1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(fb_open(r2, err, sizeof(err)), 0, "%s", err);
	a = fb_new(0, 512);
	cr_assert_eq(fb_open(a, err, sizeof(err)), -1, "no writer while read-only devices serve it");
	free(a);
	fb_free(r1);
	fb_free(r2);
	a = fb_make(0, 512); /* free again once they closed */
	fb_free(a);
}

Test(bs_fileio, read_only_never_creates)
{
	struct backstore *bs = fb_new(1 << 20, 512);
	char err[256];

	bs->read_only = true;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "read_only"), "%s", err);
	cr_assert_eq(access(path, F_OK), -1);
	free(bs);
}

Test(bs_fileio, existing_file_sets_the_size_rounded_to_blocks)
{
	int fd = open(path, O_CREAT | O_RDWR, 0600);
	struct backstore *bs;

	cr_assert_eq(ftruncate(fd, (1 << 20) + 4096 + 100), 0);
	close(fd);
	bs = fb_make(0, 4096);
	cr_assert_eq(bs->size, (1 << 20) + 4096);
	fb_free(bs);
	bs = fb_make(0, 512);
	cr_assert_eq(bs->size, (1 << 20) + 4096);
	fb_free(bs);
}

Test(bs_fileio, existing_file_size_attribute)
{
	int fd = open(path, O_CREAT | O_RDWR, 0600);
	struct backstore *bs;
	char err[256];
	struct stat st;

	cr_assert_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	bs = fb_make(512 << 10, 512); /* smaller: the LU is that much of the file */
	cr_assert_eq(bs->size, 512 << 10);
	fb_free(bs);
	bs = fb_new(2 << 20, 512); /* larger: refused, the file is not grown */
	cr_assert_eq(fb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "larger"), "%s", err);
	free(bs);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, 1 << 20);
}

Test(bs_fileio, bad_files)
{
	struct backstore *bs = fb_new(0, 512);
	char err[256];
	int fd;

	snprintf(bs->filename, sizeof(bs->filename), "/tmp");
	cr_assert_eq(fb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "directory"), "%s", err);
	bs->filename[0] = 0;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "filename"), "%s", err);
	snprintf(bs->filename, sizeof(bs->filename), "/nonexistent-dir/x.img");
	bs->size = 1 << 20;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "No such file"), "%s", err);
	/* smaller than a block */
	fd = open(path, O_CREAT | O_RDWR, 0600);
	cr_assert_eq(ftruncate(fd, 100), 0);
	close(fd);
	snprintf(bs->filename, sizeof(bs->filename), "%s", path);
	bs->size = 0;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "smaller than one"), "%s", err);
	free(bs);
}

Test(bs_fileio, blocksize)
{
	struct backstore *bs = fb_new(1 << 20, 1024);
	char err[256];
	uint8_t w[8192], r[8192];

	cr_assert_eq(fb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "blocksize 1024"), "%s", err);
	bs->block_size = 0;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->block_size, 512, "default 512");
	bs->ops->close(bs);
	free(bs);
	unlink(path);
	bs = fb_make(1 << 20, 4096);
	fill(w, sizeof(w), 4);
	cr_assert_eq(rw(bs, BS_WRITE, 4096, w, sizeof(w), false), BS_OK);
	cr_assert_eq(rw(bs, BS_READ, 4096, r, sizeof(r), false), BS_OK);
	cr_assert_arr_eq(r, w, sizeof(w));
	fb_free(bs);
}

static void round_trip_body(void)
{
	struct backstore *bs = fb_make(16 << 20, 512);
	static uint8_t w[1 << 20], r[1 << 20];
	uint8_t a[1000], b[24];
	struct iovec v[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
	struct bs_io io = {.op = BS_READ, .off = 512, .len = 1024, .iov = v, .iovcnt = 2};

	fill(w, sizeof(w), 1);
	cr_assert_eq(rw(bs, BS_WRITE, 0, w, sizeof(w), false), BS_OK);
	cr_assert_eq(rw(bs, BS_WRITE, (16 << 20) - sizeof(w), w, sizeof(w), false), BS_OK);
	cr_assert_eq(rw(bs, BS_READ, 0, r, sizeof(r), false), BS_OK);
	cr_assert_arr_eq(r, w, sizeof(w));
	cr_assert_eq(rw(bs, BS_READ, (16 << 20) - sizeof(r), r, sizeof(r), false), BS_OK);
	cr_assert_arr_eq(r, w, sizeof(w));
	cr_assert_eq(bs_submit_sync(bs, &io), BS_OK);
	cr_assert_arr_eq(a, w + 512, sizeof(a));
	cr_assert_arr_eq(b, w + 1512, sizeof(b));
	cr_assert_eq(rw(bs, BS_READ, 16 << 20, r, 512, false), BS_ERANGE);
	fb_free(bs);
}

Test(bs_fileio, round_trip_io_uring)
{
	round_trip_body();
}

Test(bs_fileio, round_trip_thread_pool)
{
	setenv("UTGT_NO_IO_URING", "1", 1);
	round_trip_body();
}

Test(bs_fileio, read_only_opens_rdonly_and_refuses_writes)
{
	struct backstore *bs = fb_make(1 << 20, 512);
	uint8_t w[512];
	char err[256];

	memset(w, 0x42, sizeof(w));
	cr_assert_eq(rw(bs, BS_WRITE, 0, w, sizeof(w), false), BS_OK);
	fb_free(bs);
	bs = fb_new(0, 512);
	bs->read_only = true;
	bs->thin_provisioned = true;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(fd_flags(bs) & O_ACCMODE, O_RDONLY);
	cr_assert_not(bs->can_unmap, "no deallocation on a read-only store");
	cr_assert_eq(rw(bs, BS_WRITE, 0, w, sizeof(w), false), BS_EROFS);
	cr_assert_eq(verb(bs, BS_UNMAP, 0, 512), BS_EROFS);
	cr_assert_eq(verb(bs, BS_WRITE_SAME, 0, 512), BS_EROFS);
	cr_assert_eq(verb(bs, BS_FLUSH, 0, 0), BS_OK);
	memset(w, 0, sizeof(w));
	cr_assert_eq(rw(bs, BS_READ, 0, w, sizeof(w), false), BS_OK);
	cr_assert_eq(w[0], 0x42);
	fb_free(bs);
}

Test(bs_fileio, o_direct_opens_direct_and_bounces_misaligned_buffers)
{
	struct backstore *bs = fb_new(4 << 20, 512);
	char err[256];
	uint8_t *w, *r;
	struct bs_engine_stats s;

	bs->o_direct = true;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert(fd_flags(bs) & O_DIRECT);
	cr_assert_eq(posix_memalign((void **)&w, 4096, 65536 + 64), 0);
	cr_assert_eq(posix_memalign((void **)&r, 4096, 65536 + 64), 0);
	fill(w, 65536 + 64, 2);
	cr_assert_eq(rw(bs, BS_WRITE, 8192, w, 65536, false), BS_OK);	     /* aligned */
	cr_assert_eq(rw(bs, BS_WRITE, 1 << 20, w + 7, 65536, false), BS_OK); /* misaligned */
	cr_assert_eq(rw(bs, BS_READ, 8192, r + 5, 65536, false), BS_OK);
	cr_assert_arr_eq(r + 5, w, 65536);
	cr_assert_eq(rw(bs, BS_READ, 1 << 20, r, 65536, false), BS_OK);
	cr_assert_arr_eq(r, w + 7, 65536);
	s = stats(bs);
	cr_assert_eq(s.bounced, 2, "only the two misaligned transfers bounce");
	free(w);
	free(r);
	fb_free(bs);
}

Test(bs_fileio, write_through_opens_dsync_unless_nv_cache)
{
	struct backstore *bs = fb_new(1 << 20, 512);
	char err[256];

	bs->write_through = true;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(fd_flags(bs) & O_DSYNC, O_DSYNC);
	bs->ops->close(bs);
	bs->nv_cache = true;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(fd_flags(bs) & O_DSYNC, 0, "nv_cache: SCST does not open O_DSYNC");
	bs->ops->close(bs);
	bs->nv_cache = false;
	bs->write_through = false;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(fd_flags(bs) & O_DSYNC, 0);
	fb_free(bs);
}

Test(bs_fileio, fua_and_flush_reach_the_file_unless_nv_cache)
{
	struct backstore *bs = fb_make(1 << 20, 512);
	uint8_t w[4096];
	struct bs_engine_stats s;
	char err[256];

	memset(w, 1, sizeof(w));
	cr_assert_eq(rw(bs, BS_WRITE, 0, w, sizeof(w), true), BS_OK);
	cr_assert_eq(verb(bs, BS_FLUSH, 0, 0), BS_OK);
	s = stats(bs);
	cr_assert_eq(s.fua_writes, 1);
	cr_assert_eq(s.flushes, 1);
	bs->ops->close(bs);
	bs->nv_cache = true;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rw(bs, BS_WRITE, 0, w, sizeof(w), true), BS_OK);
	cr_assert_eq(verb(bs, BS_FLUSH, 0, 0), BS_OK);
	s = stats(bs);
	cr_assert_eq(s.fua_writes, 0);
	cr_assert_eq(s.flushes, 0);
	fb_free(bs);
}

Test(bs_fileio, thin_unmap_punches_holes_and_reads_zeros)
{
	struct backstore *bs = fb_new(8 << 20, 512);
	static uint8_t w[8 << 20], r[8 << 20];
	char err[256];
	struct stat before, after;

	bs->thin_provisioned = true;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert(bs->can_unmap);
	cr_assert(bs->unmap_zeroes);
	memset(w, 0x66, sizeof(w));
	cr_assert_eq(rw(bs, BS_WRITE, 0, w, sizeof(w), false), BS_OK);
	cr_assert_eq(verb(bs, BS_FLUSH, 0, 0), BS_OK);
	cr_assert_eq(stat(path, &before), 0);
	cr_assert_eq(verb(bs, BS_UNMAP, 2 << 20, 4 << 20), BS_OK);
	cr_assert_eq(stat(path, &after), 0);
	cr_assert_leq(after.st_blocks * 512 + (4 << 20), before.st_blocks * 512,
		      "4 MiB deallocated: %ld -> %ld blocks", (long)before.st_blocks,
		      (long)after.st_blocks);
	cr_assert_eq(after.st_size, 8 << 20);
	cr_assert_eq(rw(bs, BS_READ, 0, r, sizeof(r), false), BS_OK);
	for (size_t i = 0; i < sizeof(r); i += 509)
		cr_assert_eq(r[i], (i >= (2u << 20) && i < (6u << 20)) ? 0 : 0x66, "byte %zu", i);
	fb_free(bs);
}

Test(bs_fileio, not_thin_refuses_unmap_and_keeps_data)
{
	struct backstore *bs = fb_make(1 << 20, 512);
	uint8_t w[4096], r[4096];

	cr_assert_not(bs->can_unmap);
	cr_assert_not(bs->unmap_zeroes);
	memset(w, 0x31, sizeof(w));
	cr_assert_eq(rw(bs, BS_WRITE, 0, w, sizeof(w), false), BS_OK);
	cr_assert_eq(verb(bs, BS_UNMAP, 0, 4096), BS_ENOTSUP);
	cr_assert_eq(rw(bs, BS_READ, 0, r, sizeof(r), false), BS_OK);
	cr_assert_arr_eq(r, w, sizeof(w));
	fb_free(bs);
}

Test(bs_fileio, write_same_with_pattern_and_without_data)
{
	struct backstore *bs = fb_make(4 << 20, 4096);
	uint8_t blk[4096];
	static uint8_t r[4 << 20];
	struct iovec iov = {blk, sizeof(blk)};
	struct bs_io io = {
	    .op = BS_WRITE_SAME, .off = 4096, .len = (2 << 20) + 8192, .iov = &iov, .iovcnt = 1};

	fill(blk, sizeof(blk), 77);
	cr_assert_eq(bs_submit_sync(bs, &io), BS_OK);
	io = (struct bs_io){.op = BS_WRITE_SAME, .off = 8192, .len = 4096};
	cr_assert_eq(bs_submit_sync(bs, &io), BS_OK);
	cr_assert_eq(rw(bs, BS_READ, 0, r, sizeof(r), false), BS_OK);
	for (uint64_t o = 0; o < sizeof(r); o += 4096) {
		bool in = o >= 4096 && o < 4096 + (2 << 20) + 8192 && o != 8192;
		if (in) {
			cr_assert_arr_eq(r + o, blk, 4096, "block %lu", (unsigned long)(o / 4096));
		} else {
			cr_assert_eq(r[o], 0, "block %lu", (unsigned long)(o / 4096));
			cr_assert_eq(r[o + 4095], 0);
		}
	}
	fb_free(bs);
}

Test(bs_fileio, lba_status_follows_holes)
{
	struct backstore *bs = fb_new(4 << 20, 512);
	uint8_t w[8192];
	bool mapped;
	uint64_t run;
	char err[256];

	bs->thin_provisioned = true;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_not_null(bs->ops->lba_status);
	cr_assert_eq(bs->ops->lba_status(bs, 0, 4 << 20, &mapped, &run), BS_OK);
	cr_assert_not(mapped);
	cr_assert_eq(run, 4 << 20, "a fresh sparse file is one hole");
	memset(w, 9, sizeof(w));
	cr_assert_eq(rw(bs, BS_WRITE, 1 << 20, w, sizeof(w), false), BS_OK);
	cr_assert_eq(verb(bs, BS_FLUSH, 0, 0), BS_OK);
	cr_assert_eq(bs->ops->lba_status(bs, 0, 4 << 20, &mapped, &run), BS_OK);
	cr_assert_not(mapped);
	cr_assert_eq(run, 1 << 20);
	cr_assert_eq(bs->ops->lba_status(bs, 1 << 20, 3 << 20, &mapped, &run), BS_OK);
	cr_assert(mapped);
	cr_assert_geq(run, 8192);
	cr_assert_eq(run % 512, 0);
	cr_assert_lt(run, 1 << 20);
	/* the run never goes past len */
	cr_assert_eq(bs->ops->lba_status(bs, 1 << 20, 512, &mapped, &run), BS_OK);
	cr_assert_eq(run, 512);
	cr_assert_eq(verb(bs, BS_UNMAP, 1 << 20, 8192), BS_OK);
	cr_assert_eq(bs->ops->lba_status(bs, 1 << 20, 3 << 20, &mapped, &run), BS_OK);
	cr_assert_not(mapped, "punched");
	fb_free(bs);
}

/* Many I/Os in flight through the store: each completes once, from another thread. */
struct flight {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done, bad, here;
	pthread_t self;
};

static void flight_cb(struct bs_io *io, enum bs_status st)
{
	struct flight *f = io->priv;

	pthread_mutex_lock(&f->mu);
	f->done++;
	f->bad += st != BS_OK;
	f->here += pthread_equal(f->self, pthread_self());
	pthread_cond_signal(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

static void flight_wait(struct flight *f, int n)
{
	struct timespec dl;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 20;
	pthread_mutex_lock(&f->mu);
	while (f->done < n && pthread_cond_timedwait(&f->cv, &f->mu, &dl) == 0)
		;
	pthread_mutex_unlock(&f->mu);
	cr_assert_eq(f->done, n, "%d of %d completed", f->done, n);
}

static void many_in_flight_body(void)
{
	enum { N = 300 };
	struct backstore *bs = fb_make(N * 8192, 512);
	static uint8_t data[N][8192], back[N][8192];
	static struct iovec iov[N];
	static struct bs_io io[N];
	struct flight f = {
	    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, pthread_self()};

	for (int i = 0; i < N; i++) {
		fill(data[i], 8192, (unsigned)i * 3);
		iov[i] = (struct iovec){data[i], 8192};
		io[i] = (struct bs_io){.op = BS_WRITE,
				       .off = (uint64_t)i * 8192,
				       .len = 8192,
				       .iov = &iov[i],
				       .iovcnt = 1,
				       .cb = flight_cb,
				       .priv = &f,
				       .fua = i % 10 == 0};
		bs->ops->submit(bs, &io[i]);
	}
	flight_wait(&f, N);
	cr_assert_eq(f.bad, 0);
	cr_assert_eq(f.here, 0, "completions ran on the submitting thread");
	f.done = 0;
	for (int i = 0; i < N; i++) {
		iov[i] = (struct iovec){back[i], 8192};
		io[i].op = BS_READ;
		bs->ops->submit(bs, &io[i]);
	}
	flight_wait(&f, N);
	cr_assert_eq(f.bad, 0);
	for (int i = 0; i < N; i++)
		cr_assert_arr_eq(back[i], data[i], 8192, "io %d", i);
	fb_free(bs);
}

Test(bs_fileio, many_in_flight_io_uring)
{
	many_in_flight_body();
}

Test(bs_fileio, many_in_flight_thread_pool)
{
	setenv("UTGT_NO_IO_URING", "1", 1);
	many_in_flight_body();
}

Test(bs_fileio, close_waits_for_in_flight_io)
{
	enum { N = 64 };
	struct backstore *bs = fb_make(N * 65536, 512);
	static uint8_t data[N][65536];
	static struct iovec iov[N];
	static struct bs_io io[N];
	struct flight f = {
	    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, pthread_self()};

	for (int i = 0; i < N; i++) {
		iov[i] = (struct iovec){data[i], 65536};
		io[i] = (struct bs_io){.op = BS_WRITE,
				       .off = (uint64_t)i * 65536,
				       .len = 65536,
				       .iov = &iov[i],
				       .iovcnt = 1,
				       .cb = flight_cb,
				       .priv = &f};
		bs->ops->submit(bs, &io[i]);
	}
	bs->ops->close(bs); /* drains */
	cr_assert_eq(f.done, N, "close returned with %d of %d completed", f.done, N);
	cr_assert_eq(f.bad, 0);
	free(bs);
}

/* Live resize (SCST's size write / resync_size): the file grows sparsely to a larger size, is
 * never cut for a smaller one, and 0 takes its length again; a read-only file cannot grow. */
Test(bs_fileio, resize_grows_never_shrinks_and_resyncs, .init = mkpath, .fini = cleanup)
{
	struct backstore *bs = fb_make(1 << 20, 512);
	char err[256] = "";
	struct stat st;
	uint8_t b[512];

	cr_assert_not_null(bs->ops->resize);
	cr_assert_eq(bs->ops->resize(bs, 4 << 20, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->size, 4 << 20);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, 4 << 20, "the file grew");
	cr_assert_lt(st.st_blocks * 512, 4 << 20, "sparsely");
	cr_assert_eq(rw(bs, BS_READ, (4 << 20) - 512, b, 512, false), BS_OK, "its new end reads");
	cr_assert_eq(bs->ops->resize(bs, (2 << 20) + 100, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->size, 2 << 20, "cut to whole blocks");
	cr_assert_eq(rw(bs, BS_READ, 2 << 20, b, 512, false), BS_ERANGE, "beyond the new end");
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, 4 << 20, "the file keeps its tail");
	cr_assert_eq(bs->ops->resize(bs, 0, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->size, 4 << 20, "resync: the file's length");
	cr_assert_eq(bs->ops->resize(bs, 100, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "f0: a size smaller than one 512-byte block");
	cr_assert_eq(bs->size, 4 << 20, "a refused resize changes nothing");
	fb_free(bs);
	bs = fb_new(0, 512);
	bs->read_only = true;
	cr_assert_eq(fb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->ops->resize(bs, 8 << 20, err, sizeof(err)), -1);
	cr_assert(strstr(err, "is read-only and holds 4194304 bytes"), "%s", err);
	cr_assert_eq(bs->ops->resize(bs, 1 << 20, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->size, 1 << 20, "a read-only store may still shrink");
	fb_free(bs);
}
