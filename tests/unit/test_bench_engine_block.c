/* utgt-bench block engine (io_uring) on a scratch file. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "initiator/engine.h"

static char path[] = "/var/tmp/ub-blk-XXXXXX";

static void mkfile(size_t size)
{
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

static struct ub_epath *open_path(bool direct)
{
	struct ub_eng_opts o = {.direct = direct, .queue_depth = 8};
	char err[256];
	struct ub_epath *p = ub_engine_block.create(path, &o, err, sizeof(err));

	cr_assert_not_null(p, "%s", err);
	cr_assert_eq(ub_engine_block.connect(p), 0, "%s", ub_engine_block.last_error(p));
	cr_assert_eq(ub_engine_block.state(p), UB_PS_UP);
	return p;
}

struct done {
	int n;
};

static void on_done(struct ub_io *io)
{
	((struct done *)io->owner)->n++;
}

static void io_sync(struct ub_epath *p, bool write, uint64_t lba, void *buf, uint32_t nblocks,
		    enum ub_io_result want)
{
	struct iovec iov = {buf, (size_t)nblocks * 4096};
	struct done d = {0};
	struct ub_io io = {.write = write,
			   .lba = lba,
			   .nblocks = nblocks,
			   .iov = &iov,
			   .iovcnt = 1,
			   .done = on_done,
			   .owner = &d};
	bool flag = false;

	cr_assert_eq(ub_engine_block.submit(p, &io), 0);
	while (!d.n) {
		cr_assert(!ub_epath_wait(&ub_engine_block, p, &flag, ub_now_ns() + 20000000ull) ||
			  d.n);
	}
	cr_assert_eq(io.result, want);
}

Test(bench_engine_block, round_trip_direct)
{
	struct ub_epath *p;
	uint32_t bs;
	uint64_t n;
	uint8_t *w = aligned_alloc(4096, 8192), *r = aligned_alloc(4096, 8192);

	mkfile(1 << 20);
	p = open_path(true);
	ub_engine_block.geometry(p, &bs, &n);
	cr_assert_eq(bs, 4096);
	cr_assert_eq(n, 256);
	for (int i = 0; i < 8192; i++)
		w[i] = (uint8_t)(i * 7);
	io_sync(p, true, 10, w, 2, UB_IO_OK);
	memset(r, 0, 8192);
	io_sync(p, false, 10, r, 2, UB_IO_OK);
	cr_assert_eq(memcmp(w, r, 8192), 0);
	cr_assert_eq(ub_engine_block.inflight(p), 0);
	ub_engine_block.destroy(p);
	unlink(path);
	free(w);
	free(r);
}

Test(bench_engine_block, refuses_out_of_range_and_pass_through)
{
	struct ub_epath *p;
	uint8_t *b = aligned_alloc(4096, 4096);
	struct iovec iov = {b, 4096};
	struct ub_io io = {.lba = 256, .nblocks = 1, .iov = &iov, .iovcnt = 1};
	uint8_t cdb[6] = {0x12, 1, 0x83, 0, 255, 0};
	struct ub_io out;

	mkfile(1 << 20);
	p = open_path(true);
	cr_assert_eq(ub_engine_block.submit(p, &io), -EINVAL);
	cr_assert_eq(ub_epath_scsi_in(&ub_engine_block, p, cdb, 6, b, 255, &out, 1000000000ull),
		     UB_IO_NOT_SUPPORTED);
	ub_engine_block.destroy(p);
	unlink(path);
	free(b);
}

Test(bench_engine_block, disconnect_hands_back_outstanding_io)
{
	struct ub_epath *p;
	uint8_t *b = aligned_alloc(4096, 4096);
	struct iovec iov = {b, 4096};
	struct done d = {0};
	struct ub_io io = {
	    .lba = 1, .nblocks = 1, .iov = &iov, .iovcnt = 1, .done = on_done, .owner = &d};

	mkfile(1 << 20);
	p = open_path(false);
	cr_assert_eq(ub_engine_block.submit(p, &io), 0);
	ub_engine_block.disconnect(p, "test");
	cr_assert_eq(d.n, 1);
	cr_assert_eq(io.result, UB_IO_PATH_ERROR);
	cr_assert_eq(ub_engine_block.state(p), UB_PS_DOWN);
	cr_assert_str_eq(ub_engine_block.last_error(p), "test");
	ub_engine_block.destroy(p);
	unlink(path);
	free(b);
}

Test(bench_engine_block, open_errors_say_why)
{
	struct ub_eng_opts o = {.direct = true};
	char err[256];
	struct ub_epath *p = ub_engine_block.create("/nonexistent/disk", &o, err, sizeof(err));

	cr_assert_not_null(p);
	cr_assert_neq(ub_engine_block.connect(p), 0);
	cr_assert(strstr(ub_engine_block.last_error(p), "No such file"), "%s",
		  ub_engine_block.last_error(p));
	ub_engine_block.destroy(p);
	p = ub_engine_block.create("/tmp", &o, err, sizeof(err));
	cr_assert_neq(ub_engine_block.connect(p), 0);
	ub_engine_block.destroy(p);
	mkfile(0);
	p = ub_engine_block.create(path, &o, err, sizeof(err));
	cr_assert_neq(ub_engine_block.connect(p), 0);
	cr_assert(strstr(ub_engine_block.last_error(p), "empty"), "%s",
		  ub_engine_block.last_error(p));
	ub_engine_block.destroy(p);
	unlink(path);
	cr_assert_null(ub_engine_block.create("", &o, err, sizeof(err)));
}

struct stamp {
	int n;
	uint64_t t[4];
};

static void on_stamp(struct ub_io *io)
{
	struct stamp *s = io->owner;
	s->t[s->n++] = ub_now_ns();
}

/* fio's reaping: wait() returns once completions are in the CQ ring and service() hands
 * them all over in one go; nothing is delivered inside submit() or wait(). */
Test(bench_engine_block, wait_reaps_a_batch_like_fio)
{
	struct ub_epath *p;
	uint8_t *buf = aligned_alloc(4096, 4 * 4096);
	struct iovec iov[4];
	struct ub_io io[4];
	struct stamp st = {0};
	uint64_t t0 = ub_now_ns();

	mkfile(1 << 20);
	p = open_path(false);
	cr_assert_not_null(ub_engine_block.wait);
	for (int i = 0; i < 4; i++) {
		iov[i] = (struct iovec){buf + i * 4096, 4096};
		io[i] = (struct ub_io){.lba = (uint64_t)i * 8, .nblocks = 8, .iov = &iov[i],
				       .iovcnt = 1, .done = on_stamp, .owner = &st};
		cr_assert_eq(ub_engine_block.submit(p, &io[i]), 0);
	}
	cr_assert_eq(st.n, 0, "no completion inside submit()");
	while (st.n < 4 && ub_now_ns() - t0 < 5000000000ull) {
		int ready = ub_engine_block.wait(p, 100);
		cr_assert_eq(ub_engine_block.inflight(p) + (unsigned)st.n, 4u);
		if (ready > 0)
			ub_engine_block.service(p, POLLIN);
	}
	cr_assert_eq(st.n, 4, "4 reads completed within 5 s, got %d", st.n);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(io[i].result, UB_IO_OK);
	cr_assert_eq(ub_engine_block.wait(p, 0), 0, "nothing left to reap");
	ub_engine_block.destroy(p);
	unlink(path);
	free(buf);
}
