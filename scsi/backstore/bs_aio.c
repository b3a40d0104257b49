/* Asynchronous I/O engine for file-backed stores: io_uring, or a thread pool fallback.
 *
 * Every bs_io becomes a request that walks through one or more steps (one system call or SQE
 * each): a read or write of what is left, a WRITE SAME chunk, an fdatasync, a hole punch, a
 * discard.  The same step planner and the same result handler serve every back end; they only
 * differ in who issues the step and who reaps it: an SQE on the submitting thread's own ring
 * (common/ut_ring.h: the front ends' workers), reaped by that thread's loop; an SQE on the
 * engine's shared ring, reaped by its CQ reaper thread (callers without a ring of their own);
 * or a pool thread calling the system call. */
#include "scsi/backstore/bs_aio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/ut_log.h"
#include "common/ut_ring.h"
#include "scsi/backstore/bs_util.h"

#define AIO_DEFAULT_DEPTH   128
#define AIO_DEFAULT_THREADS 4
#define AIO_DEFAULT_STEP    (1ull << 30)
#define AIO_SAME_CHUNK	    (1u << 20) /* WRITE SAME pattern buffer */
#define AIO_MAX_RETRIES	    1000       /* EINTR/EAGAIN on one step before giving up */
#define AIO_INLINE_IOV	    8
#define AIO_INLINE_MAX	    (128u << 10) /* largest I/O run on the submitting thread (but a
					      * READ with inline_large_ok) */

enum step_kind {
	STEP_READ,
	STEP_WRITE,
	STEP_FSYNC,
	STEP_PUNCH,   /* fallocate(PUNCH_HOLE | KEEP_SIZE) */
	STEP_DISCARD, /* ioctl(BLKDISCARD): blocking, never on the ring */
};

struct aio_req {
	struct ut_ring_op op; /* on a worker's own ring */
	struct bs_aio *a;
	struct bs_io *io;
	uint64_t done; /* bytes of the io finished */
	enum bs_status st;
	unsigned retries;

	/* the step in flight */
	enum step_kind kind;
	int fd;
	int rwflags;
	uint64_t step_off;
	uint64_t step_len;
	struct iovec *iov;
	int iovcnt;
	int iov_cap;
	struct iovec iov_inline[AIO_INLINE_IOV];

	/* an aligned copy of the data (O_DIRECT bounce) or the WRITE SAME pattern */
	char *buf;
	size_t buf_len;
	bool bounce;
	bool use_buffered;
	/* READ steps on the ring: this one was asked RWF_NOWAIT (the page cache only); cold:
	 * one of them found a page missing, so the rest go to the ring's workers, which block */
	bool nowait, cold;

	struct aio_req *next;
};

struct bs_aio {
	struct bs_aio_opts o;
	uint64_t max_step;

	bool uring;
	/* bs_io.inline_ok can be honoured: the main descriptor is buffered, so the page cache
	 * answers (run_inline()); writes also need it without O_DSYNC */
	bool inline_capable, dsync;
	bool no_nowait; /* preadv2(RWF_NOWAIT) refused by this file: inline writes only */
	struct io_uring ring;
	pthread_mutex_t sq_lock;
	pthread_t reaper;
	bool reaper_started;

	pthread_mutex_t lock; /* everything below */
	pthread_cond_t work_cv;
	pthread_cond_t idle_cv;
	struct aio_req *reqs;
	struct aio_req *free;
	struct bs_io *pend_head, *pend_tail; /* waiting for a request slot (linked by bs_next) */
	struct aio_req *work_head, *work_tail;
	unsigned outstanding;
	bool stopping;
	pthread_t *workers;
	unsigned nworkers;

	struct {
		atomic_ullong submitted, completed, syscalls, resumed, retried, bounced, unaligned,
		    fua_writes, flushes, discards, queued, own_ring, inlined, cold;
	} st;
};

static void aio_dispatch(struct aio_req *r);

enum bs_status bs_errno_status(int err, enum bs_op op)
{
	switch (err) {
	case ENOSPC:
	case EDQUOT:
		return BS_ENOSPC;
	case EROFS:
		return BS_EROFS;
	case ENOMEM:
		return BS_ENOMEM;
	case EOPNOTSUPP:
	case ENOTTY:
	case ENOSYS:
		return BS_ENOTSUP;
	case EINVAL:
		/* fallocate/discard refused by the filesystem or device: the verb is unsupported.
		 * For data transfers it would be our own bug; report a medium error. */
		return op == BS_UNMAP ? BS_ENOTSUP : BS_EIO;
	default:
		return BS_EIO;
	}
}

static inline bool is_aligned(uint64_t v, uint32_t a)
{
	return a == 0 || (v & (a - 1)) == 0;
}

/* Can the first len bytes of the iovecs go to an O_DIRECT descriptor as they are? */
static bool iov_dio_ok(const struct bs_aio *a, const struct iovec *iov, int iovcnt, uint64_t len)
{
	uint64_t seen = 0;

	for (int i = 0; i < iovcnt && seen < len; i++) {
		uint64_t l = iov[i].iov_len;
		if (l > len - seen)
			l = len - seen;
		if (!is_aligned((uintptr_t)iov[i].iov_base, a->o.dio_mem_align) ||
		    !is_aligned(l, a->o.dio_off_align))
			return false;
		seen += l;
	}
	return true;
}

static int req_iov_reserve(struct aio_req *r, int n)
{
	struct iovec *v;

	if (n <= r->iov_cap)
		return 0;
	v = malloc(sizeof(*v) * (size_t)n);
	if (!v)
		return -ENOMEM;
	if (r->iov != r->iov_inline)
		free(r->iov);
	r->iov = v;
	r->iov_cap = n;
	return 0;
}

/* Point the step's iovecs at bytes [skip, skip + max) of the caller's iovecs. */
static int req_iov_slice(struct aio_req *r, const struct iovec *src, int srccnt, uint64_t skip,
			 uint64_t max)
{
	int i = 0, n = 0;
	uint64_t got = 0;

	while (i < srccnt && skip >= src[i].iov_len) {
		skip -= src[i].iov_len;
		i++;
	}
	if (req_iov_reserve(r, srccnt - i < IOV_MAX ? srccnt - i : IOV_MAX))
		return -ENOMEM;
	for (; i < srccnt && got < max && n < IOV_MAX; i++) {
		uint64_t l = src[i].iov_len - skip;
		if (l > max - got)
			l = max - got;
		if (!l) {
			skip = 0;
			continue;
		}
		r->iov[n].iov_base = (char *)src[i].iov_base + skip;
		r->iov[n].iov_len = l;
		got += l;
		n++;
		skip = 0;
	}
	r->iovcnt = n;
	r->step_len = got;
	return 0;
}

static void *aligned_alloc_bytes(size_t align, size_t len)
{
	void *p;

	if (align < 64)
		align = 64;
	if (posix_memalign(&p, align, len ? len : align))
		return NULL;
	return p;
}

static size_t buf_align(const struct bs_aio *a)
{
	return a->o.dio_mem_align > 4096 ? a->o.dio_mem_align : 4096;
}

/* Step length limit for a transfer starting at this request's progress. */
static uint64_t step_limit(const struct aio_req *r)
{
	uint64_t left = r->io->len - r->done;
	return left < r->a->max_step ? left : r->a->max_step;
}

/* First call for an io: decide bounce buffer / buffered descriptor / pattern. */
static int req_prepare(struct aio_req *r)
{
	struct bs_aio *a = r->a;
	struct bs_io *io = r->io;
	bool dio = a->o.dio_off_align != 0;

	switch (io->op) {
	case BS_READ:
	case BS_WRITE:
		if (!dio)
			return 0;
		if (!is_aligned(io->off, a->o.dio_off_align) ||
		    !is_aligned(io->len, a->o.dio_off_align)) {
			r->use_buffered = true;
			atomic_fetch_add(&a->st.unaligned, 1);
			return 0;
		}
		if (iov_dio_ok(a, io->iov, io->iovcnt, io->len))
			return 0;
		r->buf = aligned_alloc_bytes(buf_align(a), io->len);
		if (!r->buf)
			return -ENOMEM;
		r->buf_len = io->len;
		r->bounce = true;
		atomic_fetch_add(&a->st.bounced, 1);
		if (io->op == BS_WRITE)
			bs_iov_to_buf(r->buf, io->iov, io->iovcnt, 0, io->len);
		return 0;
	case BS_WRITE_SAME: {
		uint64_t bsz = io->len < AIO_SAME_CHUNK ? io->len : AIO_SAME_CHUNK;
		uint64_t blk = a->o.block_size;

		bsz -= bsz % blk;
		r->buf = aligned_alloc_bytes(buf_align(a), bsz);
		if (!r->buf)
			return -ENOMEM;
		r->buf_len = bsz;
		bs_write_same_block(&(struct backstore){.block_size = a->o.block_size}, io, r->buf);
		for (uint64_t o = blk; o < bsz; o += blk)
			memcpy(r->buf + o, r->buf, blk);
		if (dio && (!is_aligned(io->off, a->o.dio_off_align) ||
			    !is_aligned(io->len, a->o.dio_off_align) ||
			    !is_aligned(bsz, a->o.dio_off_align))) {
			r->use_buffered = true;
			atomic_fetch_add(&a->st.unaligned, 1);
		}
		return 0;
	}
	case BS_FLUSH:
	case BS_UNMAP:
		return 0;
	case BS_COMPARE_WRITE: /* refused by bs_check_io: compare_write_max is 0 */
		break;
	}
	return -EINVAL;
}

/* Plan the next step from the request's progress. */
static int req_plan(struct aio_req *r)
{
	struct bs_aio *a = r->a;
	struct bs_io *io = r->io;
	int err;

	r->fd = a->o.fd;
	r->rwflags = 0;
	r->step_off = io->off + r->done;
	switch (io->op) {
	case BS_READ:
	case BS_WRITE:
		r->kind = io->op == BS_READ ? STEP_READ : STEP_WRITE;
		if (r->bounce) {
			r->iov = r->iov_inline;
			r->iov[0].iov_base = r->buf + r->done;
			r->iov[0].iov_len = step_limit(r);
			r->iovcnt = 1;
			r->step_len = r->iov[0].iov_len;
		} else {
			err = req_iov_slice(r, io->iov, io->iovcnt, r->done, step_limit(r));
			if (err)
				return err;
		}
		break;
	case BS_WRITE_SAME:
		r->kind = STEP_WRITE;
		r->iov = r->iov_inline;
		r->iov[0].iov_base = r->buf;
		r->iov[0].iov_len = io->len - r->done < r->buf_len ? io->len - r->done : r->buf_len;
		r->iovcnt = 1;
		r->step_len = r->iov[0].iov_len;
		break;
	case BS_FLUSH:
		r->kind = STEP_FSYNC;
		return 0;
	case BS_UNMAP:
		if (r->kind != STEP_DISCARD)
			r->kind = STEP_PUNCH;
		r->step_off = io->off;
		r->step_len = io->len;
		return 0;
	case BS_COMPARE_WRITE:
		return -EINVAL;
	}
	if (r->kind == STEP_WRITE && io->fua && !a->o.nv_cache)
		r->rwflags = RWF_DSYNC;
	/* A short O_DIRECT transfer may leave the rest misaligned: finish it buffered. */
	if (a->o.dio_off_align &&
	    (r->use_buffered || !is_aligned(r->step_off, a->o.dio_off_align) ||
	     !is_aligned(r->step_len, a->o.dio_off_align)))
		r->fd = a->o.fd_buffered >= 0 ? a->o.fd_buffered : a->o.fd;
	return 0;
}

/* Issue the step with a blocking system call; result as an io_uring CQE would carry it. */
static int64_t step_exec_sync(struct aio_req *r)
{
	ssize_t n;

	switch (r->kind) {
	case STEP_READ:
		n = preadv2(r->fd, r->iov, r->iovcnt, (off_t)r->step_off, 0);
		return n < 0 ? -errno : n;
	case STEP_WRITE:
		n = pwritev2(r->fd, r->iov, r->iovcnt, (off_t)r->step_off, r->rwflags);
		return n < 0 ? -errno : n;
	case STEP_FSYNC:
		return fdatasync(r->fd) ? -errno : 0;
	case STEP_PUNCH:
		return fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				 (off_t)r->step_off, (off_t)r->step_len)
			   ? -errno
			   : 0;
	case STEP_DISCARD: {
		uint64_t range[2] = {r->step_off, r->step_len};
		return ioctl(r->fd, BLKDISCARD, range) ? -errno : 0;
	}
	}
	return -EINVAL;
}

/* A step finished with res (bytes, or -errno).  True when the request needs another step. */
static bool step_done(struct aio_req *r, int64_t res)
{
	struct bs_aio *a = r->a;
	struct bs_io *io = r->io;

	if (r->kind == STEP_READ && r->nowait) {
		r->nowait = false;
		if (res == -EAGAIN || res == -EOPNOTSUPP || res == -EINVAL) {
			if (res != -EAGAIN)
				__atomic_store_n(&a->no_nowait, true, __ATOMIC_RELAXED);
			r->cold = true;
			atomic_fetch_add(&a->st.cold, 1);
			return true;
		}
	}
	if (res == -EINTR || res == -EAGAIN) {
		if (++r->retries < AIO_MAX_RETRIES) {
			atomic_fetch_add(&a->st.retried, 1);
			return true;
		}
		r->st = BS_EIO;
		return false;
	}
	r->retries = 0;
	switch (r->kind) {
	case STEP_READ:
	case STEP_WRITE:
		if (res < 0) {
			r->st = bs_errno_status((int)-res, io->op);
			return false;
		}
		if (res == 0) {
			/* end of file inside the store (the file shrank), or a write that cannot
			 * progress: the data is not there */
			r->st = BS_EIO;
			return false;
		}
		r->done += (uint64_t)res;
		if (r->done < io->len) {
			if ((uint64_t)res < r->step_len)
				atomic_fetch_add(&a->st.resumed, 1);
			if (req_plan(r)) {
				r->st = BS_ENOMEM;
				return false;
			}
			return true;
		}
		r->st = BS_OK;
		return false;
	case STEP_FSYNC:
		r->st = res < 0 ? bs_errno_status((int)-res, io->op) : BS_OK;
		return false;
	case STEP_PUNCH:
		if ((res == -EOPNOTSUPP || res == -EINVAL) && a->o.blockdev) {
			/* the device has no zeroing deallocation: plain discard */
			r->kind = STEP_DISCARD;
			return true;
		}
		r->st = res < 0 ? bs_errno_status((int)-res, io->op) : BS_OK;
		return false;
	case STEP_DISCARD:
		r->st = res < 0 ? bs_errno_status((int)-res, io->op) : BS_OK;
		return false;
	}
	r->st = BS_EIO;
	return false;
}

static void req_release_bufs(struct aio_req *r)
{
	if (r->iov != r->iov_inline)
		free(r->iov);
	r->iov = r->iov_inline;
	r->iov_cap = AIO_INLINE_IOV;
	free(r->buf);
	r->buf = NULL;
}

/* Bind io to the slot and plan its first step.  On failure r->st says why and the request
 * must be finished without a step. */
static void req_start(struct aio_req *r, struct bs_io *io)
{
	r->io = io;
	r->done = 0;
	r->st = BS_OK;
	r->retries = 0;
	r->kind = STEP_READ;
	r->bounce = false;
	r->use_buffered = false;
	r->nowait = r->cold = false;
	r->buf = NULL;
	r->buf_len = 0;
	r->iov = r->iov_inline;
	r->iov_cap = AIO_INLINE_IOV;
	if (req_prepare(r) || req_plan(r))
		r->st = BS_ENOMEM;
}

/* The request is finished: deliver, recycle the slot (to a waiting io if any). */
static void req_finish(struct aio_req *r)
{
	struct bs_aio *a = r->a;

	for (;;) {
		struct bs_io *io = r->io, *next;
		enum bs_status st = r->st;

		if (st == BS_OK && r->bounce && io->op == BS_READ)
			bs_buf_to_iov(io->iov, io->iovcnt, 0, r->buf, io->len);
		req_release_bufs(r);

		pthread_mutex_lock(&a->lock);
		next = a->pend_head;
		if (next) {
			a->pend_head = next->bs_next;
			if (!a->pend_head)
				a->pend_tail = NULL;
		} else {
			r->next = a->free;
			a->free = r;
		}
		pthread_mutex_unlock(&a->lock);

		atomic_fetch_add(&a->st.completed, 1);
		io->cb(io, st);

		pthread_mutex_lock(&a->lock);
		if (--a->outstanding == 0)
			pthread_cond_broadcast(&a->idle_cv);
		pthread_mutex_unlock(&a->lock);

		if (!next)
			return;
		req_start(r, next);
		if (r->st == BS_OK) {
			aio_dispatch(r);
			return;
		}
		/* could not even plan it (out of memory): finish it and look again */
	}
}

static void work_push(struct aio_req *r)
{
	struct bs_aio *a = r->a;

	pthread_mutex_lock(&a->lock);
	r->next = NULL;
	if (a->work_tail)
		a->work_tail->next = r;
	else
		a->work_head = r;
	a->work_tail = r;
	pthread_cond_signal(&a->work_cv);
	pthread_mutex_unlock(&a->lock);
}

static int uring_submit_locked(struct bs_aio *a)
{
	int ret;

	for (unsigned tries = 0;; tries++) {
		ret = io_uring_submit(&a->ring);
		if (ret >= 0 || (ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) ||
		    tries >= AIO_MAX_RETRIES)
			return ret;
		/* the kernel is short of memory for requests: give it a moment */
		nanosleep(&(struct timespec){0, 100000}, NULL);
	}
}

static void step_prep(struct aio_req *r, struct io_uring_sqe *sqe)
{
	switch (r->kind) {
	case STEP_READ:
		/* A buffered READ the page cache cannot answer whole comes back -EAGAIN and is
		 * sent again as work for the ring's workers (step_done), which sleep in the read
		 * behind readahead the way a pool thread does.  Left to the kernel (6.1), an
		 * uncached read resumes from this thread as its pages arrive, and eight cold
		 * 1 MiB reads at once went at 0.73-0.82x a pool's rate (tests/vm/fileio_cold.sh). */
		r->nowait = !r->cold && r->fd == r->a->o.fd && r->a->inline_capable && !r->bounce &&
			    !__atomic_load_n(&r->a->no_nowait, __ATOMIC_RELAXED);
		io_uring_prep_readv2(sqe, r->fd, r->iov, (unsigned)r->iovcnt, r->step_off,
				     r->nowait ? RWF_NOWAIT : 0);
		if (r->cold)
			io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
		break;
	case STEP_WRITE:
		io_uring_prep_writev2(sqe, r->fd, r->iov, (unsigned)r->iovcnt, r->step_off,
				      r->rwflags);
		break;
	case STEP_FSYNC:
		io_uring_prep_fsync(sqe, r->fd, IORING_FSYNC_DATASYNC);
		break;
	case STEP_PUNCH:
		io_uring_prep_fallocate(sqe, r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					r->step_off, r->step_len);
		break;
	case STEP_DISCARD:
		io_uring_prep_nop(sqe); /* never reached: discards go to the pool */
		break;
	}
}

static void step_complete(struct aio_req *r, int64_t res);

static void own_ring_done(struct ut_ring_op *op, int res)
{
	struct aio_req *r = (struct aio_req *)op;

	atomic_fetch_add_explicit(&r->a->st.own_ring, 1, memory_order_relaxed);
	step_complete(r, res);
}

/* Put the step on the calling thread's own ring, submitted with the rest of its round and
 * reaped by its loop.  False when the thread has none or it is full. */
static bool own_ring_queue(struct aio_req *r)
{
	struct ut_ring *ring = ut_ring_current();
	struct io_uring_sqe *sqe;

	/* A submitter that blocks until the end would never reap its own ring. */
	if (!ring || r->io->waited || !(sqe = ut_ring_get_sqe(ring)))
		return false;
	step_prep(r, sqe);
	r->op.done = own_ring_done;
	ut_ring_queue(ring, sqe, &r->op);
	return true;
}

/* Put the step on the shared ring.  False when it cannot go there (no SQE): run it on the
 * pool. */
static bool uring_queue(struct aio_req *r)
{
	struct bs_aio *a = r->a;
	struct io_uring_sqe *sqe;
	int ret;

	if (own_ring_queue(r))
		return true;
	pthread_mutex_lock(&a->sq_lock);
	sqe = io_uring_get_sqe(&a->ring);
	if (!sqe) {
		uring_submit_locked(a);
		sqe = io_uring_get_sqe(&a->ring);
	}
	if (!sqe) {
		pthread_mutex_unlock(&a->sq_lock);
		return false;
	}
	step_prep(r, sqe);
	io_uring_sqe_set_data(sqe, r);
	ret = uring_submit_locked(a);
	pthread_mutex_unlock(&a->sq_lock);
	if (ret < 0)
		UT_LOG_RL(LOG_ERR, "%s: io_uring_submit: %s", a->o.name ? a->o.name : "aio",
			  strerror(-ret));
	return true;
}

static void aio_dispatch(struct aio_req *r)
{
	struct bs_aio *a = r->a;

	atomic_fetch_add(&a->st.syscalls, 1);
	if (r->kind == STEP_FSYNC)
		atomic_fetch_add(&a->st.flushes, 1);
	if (r->kind == STEP_DISCARD)
		atomic_fetch_add(&a->st.discards, 1);
	if (r->kind == STEP_WRITE && (r->rwflags & RWF_DSYNC))
		atomic_fetch_add(&a->st.fua_writes, 1);
	if (a->uring && r->kind != STEP_DISCARD && uring_queue(r))
		return;
	work_push(r);
}

/* A step's result arrived (from a CQE or a pool thread). */
static void step_complete(struct aio_req *r, int64_t res)
{
	if (step_done(r, res))
		aio_dispatch(r);
	else
		req_finish(r);
}

static void *reaper_main(void *arg)
{
	struct bs_aio *a = arg;
	bool stop = false;

	while (!stop) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0, seen = 0;
		struct aio_req *batch[64];
		int64_t res[64];
		int ret = io_uring_wait_cqe(&a->ring, &cqe);

		if (ret == -EINTR || ret == -EAGAIN)
			continue;
		if (ret < 0) {
			UT_LOG_RL(LOG_ERR, "%s: io_uring_wait_cqe: %s", a->o.name ? a->o.name : "aio",
				  strerror(-ret));
			nanosleep(&(struct timespec){0, 1000000}, NULL);
			continue;
		}
		io_uring_for_each_cqe(&a->ring, head, cqe)
		{
			struct aio_req *r = io_uring_cqe_get_data(cqe);

			seen++;
			if (!r) {
				stop = true;
			} else {
				batch[n] = r;
				res[n] = cqe->res;
				n++;
			}
			if (seen == 64)
				break;
		}
		/* Release the CQ slots before running callbacks, which may submit more. */
		io_uring_cq_advance(&a->ring, seen);
		for (unsigned i = 0; i < n; i++)
			step_complete(batch[i], res[i]);
	}
	return NULL;
}

static void *worker_main(void *arg)
{
	struct bs_aio *a = arg;

	for (;;) {
		struct aio_req *r;

		pthread_mutex_lock(&a->lock);
		while (!a->work_head && !a->stopping)
			pthread_cond_wait(&a->work_cv, &a->lock);
		r = a->work_head;
		if (!r) {
			pthread_mutex_unlock(&a->lock);
			return NULL;
		}
		a->work_head = r->next;
		if (!a->work_head)
			a->work_tail = NULL;
		pthread_mutex_unlock(&a->lock);
		step_complete(r, step_exec_sync(r));
	}
}

/* io->inline_ok: run the first step on the submitting thread instead of handing it to the
 * reaper or a pool thread (whose wakeup costs more than a page-cache copy).  A READ goes with
 * RWF_NOWAIT, which fails with EAGAIN rather than wait for the medium (then it goes the usual
 * way); a WRITE only when nothing else of this engine is in flight (`alone`), since a buffered
 * write may wait for a page or for dirty throttling, and that must not stall a busy thread,
 * unless the submitter says it may wait (io->inline_wait_ok).  Up to AIO_INLINE_MAX bytes, or a
 * READ of any size when the submitter asks for it (io->inline_large_ok).
 * Never with O_DIRECT, O_DSYNC or FUA: those wait for the medium.  False: not run, dispatch
 * it.  A short transfer continues the usual way (step_complete). */
static bool run_inline(struct aio_req *r, bool alone)
{
	struct bs_aio *a = r->a;
	struct bs_io *io = r->io;
	ssize_t n;

	if (!io->inline_ok || (io->op != BS_READ && io->op != BS_WRITE) || !a->inline_capable ||
	    (io->len > AIO_INLINE_MAX && !(io->op == BS_READ && io->inline_large_ok)) ||
	    r->rwflags || r->bounce)
		return false;
	if (r->kind == STEP_READ) {
		if (__atomic_load_n(&a->no_nowait, __ATOMIC_RELAXED))
			return false;
		n = preadv2(r->fd, r->iov, r->iovcnt, (off_t)r->step_off, RWF_NOWAIT);
		if (n < 0 && errno == EAGAIN) {
			r->cold = true; /* the ring need not ask the page cache again */
			atomic_fetch_add(&a->st.cold, 1);
			return false;
		}
		if (n < 0 && (errno == EOPNOTSUPP || errno == EINVAL)) {
			__atomic_store_n(&a->no_nowait, true, __ATOMIC_RELAXED);
			return false;
		}
	} else if (r->kind == STEP_WRITE && (alone || io->inline_wait_ok) && !a->dsync) {
		n = pwritev2(r->fd, r->iov, r->iovcnt, (off_t)r->step_off, 0);
	} else {
		return false;
	}
	atomic_fetch_add(&a->st.syscalls, 1);
	atomic_fetch_add(&a->st.inlined, 1);
	step_complete(r, n < 0 ? -errno : n);
	return true;
}

void bs_aio_submit(struct bs_aio *a, struct bs_io *io)
{
	struct aio_req *r;
	bool alone;

	atomic_fetch_add(&a->st.submitted, 1);
	/* Verbs with nothing to do complete here, without a slot. */
	if ((io->op == BS_FLUSH && a->o.nv_cache) || (io->op != BS_FLUSH && io->len == 0)) {
		atomic_fetch_add(&a->st.completed, 1);
		io->cb(io, BS_OK);
		return;
	}
	pthread_mutex_lock(&a->lock);
	alone = ++a->outstanding == 1;
	r = a->free;
	if (r) {
		a->free = r->next;
	} else {
		io->bs_next = NULL;
		if (a->pend_tail)
			a->pend_tail->bs_next = io;
		else
			a->pend_head = io;
		a->pend_tail = io;
		atomic_fetch_add(&a->st.queued, 1);
	}
	pthread_mutex_unlock(&a->lock);
	if (!r)
		return;
	req_start(r, io);
	if (r->st != BS_OK)
		req_finish(r);
	else if (!run_inline(r, alone))
		aio_dispatch(r);
}

void bs_dio_align(int fd, uint32_t fallback, uint32_t *mem_align, uint32_t *off_align)
{
	struct statx stx;

	*mem_align = *off_align = fallback;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN)) {
		*mem_align = stx.stx_dio_mem_align;
		*off_align = stx.stx_dio_offset_align;
	}
}

static bool env_no_uring(void)
{
	const char *e = getenv("UTGT_NO_IO_URING");
	return e && *e && strcmp(e, "0") != 0;
}

static void close_fds(const struct bs_aio_opts *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->fd_buffered >= 0 && o->fd_buffered != o->fd)
		close(o->fd_buffered);
}

struct bs_aio *bs_aio_create(const struct bs_aio_opts *o, char *err, size_t errlen)
{
	struct bs_aio *a = calloc(1, sizeof(*a));
	unsigned depth;
	int ret;

	if (!a) {
		snprintf(err, errlen, "%s: out of memory", o->name ? o->name : "aio");
		close_fds(o);
		return NULL;
	}
	a->o = *o;
	a->inline_capable = !a->o.dio_off_align && a->o.fd >= 0;
	a->dsync = a->o.fd >= 0 && (fcntl(a->o.fd, F_GETFL) & O_DSYNC);
	if (!a->o.block_size)
		a->o.block_size = 512;
	depth = a->o.depth ? a->o.depth : AIO_DEFAULT_DEPTH;
	a->max_step = a->o.max_step ? a->o.max_step : AIO_DEFAULT_STEP;
	if (a->o.dio_off_align && a->max_step >= a->o.dio_off_align)
		a->max_step -= a->max_step % a->o.dio_off_align;
	if (a->max_step < a->o.block_size)
		a->max_step = a->o.block_size;
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->sq_lock, NULL);
	pthread_cond_init(&a->work_cv, NULL);
	pthread_cond_init(&a->idle_cv, NULL);
	a->reqs = calloc(depth, sizeof(*a->reqs));
	if (!a->reqs)
		goto nomem;
	for (unsigned i = 0; i < depth; i++) {
		a->reqs[i].a = a;
		a->reqs[i].iov = a->reqs[i].iov_inline;
		a->reqs[i].iov_cap = AIO_INLINE_IOV;
		a->reqs[i].next = a->free;
		a->free = &a->reqs[i];
	}

	if (!a->o.no_uring && !env_no_uring()) {
		/* CQ is twice the SQ by default, and at most `depth` steps are in flight, so
		 * the CQ never overflows. */
		ret = io_uring_queue_init(depth, &a->ring, 0);
		if (ret == 0) {
			a->uring = true;
		} else {
			ut_log(LOG_NOTICE, "%s: io_uring unavailable (%s); using a thread pool",
			       a->o.name ? a->o.name : "aio", strerror(-ret));
		}
	}
	/* Without io_uring the pool does everything; with it, only blocking discards. */
	a->nworkers = a->uring ? 1 : (a->o.threads ? a->o.threads : AIO_DEFAULT_THREADS);
	a->workers = calloc(a->nworkers, sizeof(*a->workers));
	if (!a->workers)
		goto nomem;
	for (unsigned i = 0; i < a->nworkers; i++) {
		ret = pthread_create(&a->workers[i], NULL, worker_main, a);
		if (ret) {
			a->nworkers = i;
			snprintf(err, errlen, "%s: cannot start I/O threads: %s",
				 a->o.name ? a->o.name : "aio", strerror(ret));
			bs_aio_destroy(a);
			return NULL;
		}
	}
	if (a->uring) {
		ret = pthread_create(&a->reaper, NULL, reaper_main, a);
		if (ret) {
			snprintf(err, errlen, "%s: cannot start the completion thread: %s",
				 a->o.name ? a->o.name : "aio", strerror(ret));
			bs_aio_destroy(a);
			return NULL;
		}
		a->reaper_started = true;
	}
	return a;

nomem:
	snprintf(err, errlen, "%s: out of memory", a->o.name ? a->o.name : "aio");
	bs_aio_destroy(a);
	return NULL;
}

void bs_aio_destroy(struct bs_aio *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	while (a->outstanding)
		pthread_cond_wait(&a->idle_cv, &a->lock);
	a->stopping = true;
	pthread_cond_broadcast(&a->work_cv);
	pthread_mutex_unlock(&a->lock);
	for (unsigned i = 0; i < a->nworkers; i++)
		pthread_join(a->workers[i], NULL);
	if (a->reaper_started) {
		struct io_uring_sqe *sqe;

		/* A NOP without a request tells the reaper to stop. */
		pthread_mutex_lock(&a->sq_lock);
		while (!(sqe = io_uring_get_sqe(&a->ring)))
			uring_submit_locked(a);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data(sqe, NULL);
		uring_submit_locked(a);
		pthread_mutex_unlock(&a->sq_lock);
		pthread_join(a->reaper, NULL);
	}
	if (a->uring)
		io_uring_queue_exit(&a->ring);
	close_fds(&a->o);
	free(a->workers);
	free(a->reqs);
	pthread_cond_destroy(&a->work_cv);
	pthread_cond_destroy(&a->idle_cv);
	pthread_mutex_destroy(&a->lock);
	pthread_mutex_destroy(&a->sq_lock);
	free(a);
}

void bs_aio_store_close(struct backstore *bs)
{
	bs_aio_destroy(bs_aio_of(bs));
	bs->priv = NULL;
}

void bs_aio_store_submit(struct backstore *bs, struct bs_io *io)
{
	enum bs_status st = bs_check_io(bs, io);

	if (st == BS_OK && io->op == BS_UNMAP && !bs->can_unmap)
		st = BS_ENOTSUP;
	if (st != BS_OK) {
		io->cb(io, st);
		return;
	}
	bs_aio_submit(bs_aio_of(bs), io);
}

void bs_aio_store_stats(struct backstore *bs, struct bs_engine_stats *out)
{
	bs_aio_get_stats(bs_aio_of(bs), out);
}

int bs_aio_fd(const struct bs_aio *a)
{
	return a->o.fd;
}

const char *bs_aio_mode(const struct bs_aio *a)
{
	return a->uring ? "io_uring" : "threads";
}

void bs_aio_get_stats(const struct bs_aio *a, struct bs_engine_stats *out)
{
	struct bs_aio *m = (struct bs_aio *)a;

	out->mode = bs_aio_mode(a);
	/* completed first: an I/O is counted submitted before it can complete */
	out->completed = atomic_load(&m->st.completed);
	out->submitted = atomic_load(&m->st.submitted);
	out->in_flight = out->submitted - out->completed;
	out->syscalls = atomic_load(&m->st.syscalls);
	out->resumed = atomic_load(&m->st.resumed);
	out->retried = atomic_load(&m->st.retried);
	out->bounced = atomic_load(&m->st.bounced);
	out->unaligned = atomic_load(&m->st.unaligned);
	out->fua_writes = atomic_load(&m->st.fua_writes);
	out->flushes = atomic_load(&m->st.flushes);
	out->discards = atomic_load(&m->st.discards);
	out->queued = atomic_load(&m->st.queued);
	out->own_ring = atomic_load(&m->st.own_ring);
	out->inlined = atomic_load(&m->st.inlined);
	out->cold = atomic_load(&m->st.cold);
}
