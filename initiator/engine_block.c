/* Block engine: io_uring on a block device or a file, O_DIRECT unless direct=0.  For LUNs a
 * kernel initiator attached (/dev/sdX) and for local baselines.  No SCSI pass-through: the
 * kernel owns the SCSI layer there, so multipath checks are not available on this engine.
 * Flushes are fsync, trims punch holes (files) or discard (devices, through fallocate), sync
 * writes carry RWF_DSYNC, priorities go in the SQE; fio's io_uring options sqthread_poll,
 * registerfiles and nonvectored map to the ring's setup.
 *
 * The ring is driven as fio's io_uring engine drives it, so that both measure the same kernel
 * work: the same setup flags (COOP_TASKRUN, SINGLE_ISSUER, DEFER_TASKRUN where the kernel has
 * them: completions are run when the job asks for them, not by interrupting it), READ/WRITE
 * rather than READV/WRITEV where the kernel has them (fio's nonvectored=-1 probe), and
 * completions waited for in io_uring_enter(GETEVENTS, min_complete=1) after the CQ ring was
 * found empty, rather than in poll(). */
#include "initiator/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct block_path {
	char path[1024];
	struct ub_eng_opts o;
	int fd;
	struct io_uring ring;
	bool ring_ok;
	bool defer;	  /* DEFER_TASKRUN: completions appear only after an enter with GETEVENTS */
	bool nonvectored; /* IORING_OP_READ/WRITE rather than READV/WRITEV */
	unsigned depth;
	unsigned inflight;
	unsigned unsubmitted;
	uint32_t block_size;
	uint64_t nblocks;
	char err[1200];
};

#define B(ep) ((struct block_path *)(ep))

static struct ub_epath *blk_create(const char *target, const struct ub_eng_opts *o, char *err,
				   size_t errlen)
{
	struct block_path *p;

	if (!target[0] || strlen(target) >= sizeof(p->path)) {
		snprintf(err, errlen, "bad file name '%s'", target);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	strcpy(p->path, target);
	p->o = *o;
	p->fd = -1;
	/* fio's ring has iodepth entries, which also caps the kernel's io-wq workers for the
	 * ring (min(entries, 4 * CPUs)); a command beyond them (the job's spare flush) waits
	 * for the next commit to free an SQE.  An SQ thread frees them in its own time: room
	 * for everything then. */
	p->depth = o->iodepth && !o->sqpoll ? o->iodepth
		   : o->queue_depth	       ? o->queue_depth
						 : 64;
	return (struct ub_epath *)p;
}

static void blk_close(struct block_path *p)
{
	if (p->ring_ok)
		io_uring_queue_exit(&p->ring);
	p->ring_ok = false;
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

static void blk_destroy(struct ub_epath *ep)
{
	blk_close(B(ep));
	free(ep);
}

/* fio's ring: COOP_TASKRUN | SINGLE_ISSUER | DEFER_TASKRUN, dropping what the kernel refuses
 * (the thread that connects is the job's, the only one that ever enters this ring). */
static int ring_setup(struct block_path *p)
{
	unsigned want = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER |
			IORING_SETUP_DEFER_TASKRUN;
	int rc;

	if (p->o.sqpoll)
		want = 0; /* the SQ thread submits: no single issuer, no deferred task work */
	for (;;) {
		struct io_uring_params par = {0};

		par.flags = want;
		if (p->o.sqpoll) {
			par.flags |= IORING_SETUP_SQPOLL;
			par.sq_thread_idle = 1000;
			if (p->o.sqpoll_cpu >= 0) {
				par.flags |= IORING_SETUP_SQ_AFF;
				par.sq_thread_cpu = (unsigned)p->o.sqpoll_cpu;
			}
		}
		rc = io_uring_queue_init_params(p->depth, &p->ring, &par);
		if (rc != -EINVAL || !want)
			break;
		want = want & IORING_SETUP_DEFER_TASKRUN
			   ? want & ~(IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER)
			   : 0;
	}
	p->defer = rc >= 0 && (want & IORING_SETUP_DEFER_TASKRUN);
	p->nonvectored = p->o.nonvectored > 0;
	if (rc >= 0 && p->o.nonvectored < 0) {
		struct io_uring_probe *pr = io_uring_get_probe_ring(&p->ring);
		p->nonvectored = pr && io_uring_opcode_supported(pr, IORING_OP_READ) &&
				 io_uring_opcode_supported(pr, IORING_OP_WRITE);
		if (pr)
			io_uring_free_probe(pr);
	}
	return rc;
}

static int blk_connect(struct ub_epath *ep)
{
	struct block_path *p = B(ep);
	struct stat st;
	int flags = O_RDWR | (p->o.direct ? O_DIRECT : 0);
	int rc;

	blk_close(p);
	p->fd = open(p->path, flags);
	if (p->fd < 0) {
		snprintf(p->err, sizeof(p->err), "cannot open %s: %s%s", p->path, strerror(errno),
			 errno == EINVAL && p->o.direct ? " (O_DIRECT not supported here? try "
							  "--direct=0)"
							: "");
		return -1;
	}
	if (fstat(p->fd, &st) < 0) {
		snprintf(p->err, sizeof(p->err), "%s: %s", p->path, strerror(errno));
		blk_close(p);
		return -1;
	}
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes = 0;
		int lbs = 512;
		if (ioctl(p->fd, BLKGETSIZE64, &bytes) < 0 || ioctl(p->fd, BLKSSZGET, &lbs) < 0) {
			snprintf(p->err, sizeof(p->err), "%s: cannot read device size: %s", p->path,
				 strerror(errno));
			blk_close(p);
			return -1;
		}
		p->block_size = (uint32_t)lbs;
		p->nblocks = bytes / (uint64_t)lbs;
	} else if (S_ISREG(st.st_mode)) {
		/* 4 KiB keeps O_DIRECT happy on every file system we meet. */
		p->block_size = p->o.direct ? 4096 : 512;
		p->nblocks = (uint64_t)st.st_size / p->block_size;
	} else {
		snprintf(p->err, sizeof(p->err), "%s is neither a block device nor a file",
			 p->path);
		blk_close(p);
		return -1;
	}
	if (!p->nblocks) {
		snprintf(p->err, sizeof(p->err), "%s is empty", p->path);
		blk_close(p);
		return -1;
	}
	rc = ring_setup(p);
	if (rc >= 0 && (p->o.registerfiles || p->o.sqpoll)) {
		rc = io_uring_register_files(&p->ring, &p->fd, 1);
		if (rc < 0)
			io_uring_queue_exit(&p->ring);
	}
	if (rc < 0) {
		snprintf(p->err, sizeof(p->err), "io_uring setup failed: %s", strerror(-rc));
		blk_close(p);
		return -1;
	}
	p->ring_ok = true;
	return 0;
}

static void complete(struct block_path *p, struct ub_io *io, int res)
{
	uint64_t want = (uint64_t)io->nblocks * p->block_size;

	p->inflight--;
	io->residual = 0;
	io->sys_errno = res < 0 ? -res : 0;
	if (res >= 0 && io->op != UB_OP_RW) {
		io->result = UB_IO_OK;
	} else if (res < 0) {
		io->result = UB_IO_SCSI_ERROR;
		io->status = 2; /* CHECK CONDITION-like: the kernel reported an I/O error */
		io->sense_key = res == -EIO ? 3 : 4;
		io->asc = io->ascq = 0;
	} else if ((uint64_t)res != want) {
		io->result = UB_IO_SCSI_ERROR;
		io->status = 0;
		io->residual = (uint32_t)(want - (uint64_t)res);
	} else {
		io->result = UB_IO_OK;
	}
	io->done(io);
}

/* fio's commit: io_uring_enter(to_submit, 0, GETEVENTS), which also runs the completions
 * deferred so far, so the next reap finds them in the CQ ring without entering again. */
static void commit(struct block_path *p)
{
	io_uring_submit_and_get_events(&p->ring);
	p->unsubmitted = 0;
}

static void blk_disconnect(struct ub_epath *ep, const char *why)
{
	struct block_path *p = B(ep);
	struct io_uring_cqe *cqe;

	if (why)
		snprintf(p->err, sizeof(p->err), "%s", why);
	/* Reap what is in flight before closing: io_uring I/O cannot be abandoned. */
	while (p->ring_ok && p->inflight) {
		struct ub_io *io;

		if (p->unsubmitted)
			commit(p);
		if (io_uring_wait_cqe(&p->ring, &cqe) != 0)
			break;
		io = io_uring_cqe_get_data(cqe);
		io_uring_cqe_seen(&p->ring, cqe);
		p->inflight--;
		io->result = UB_IO_PATH_ERROR;
		io->done(io);
	}
	blk_close(p);
}

static enum ub_path_state blk_state(struct ub_epath *ep)
{
	return B(ep)->ring_ok ? UB_PS_UP : UB_PS_DOWN;
}

static const char *blk_last_error(struct ub_epath *ep)
{
	return B(ep)->err;
}

static int blk_pollfd(struct ub_epath *ep, struct pollfd *pfd)
{
	struct block_path *p = B(ep);

	if (!p->ring_ok)
		return 0;
	if (p->unsubmitted)
		commit(p);
	pfd->fd = p->ring.ring_fd;
	pfd->events = POLLIN;
	pfd->revents = 0;
	return 1;
}

static void blk_service(struct ub_epath *ep, short revents)
{
	struct block_path *p = B(ep);
	struct io_uring_cqe *cqe;
	struct ub_io *done[64];
	int res[64];
	unsigned n;

	if (!p->ring_ok)
		return;
	/* Deferred completions (DEFER_TASKRUN) appear in the CQ ring only after an enter; a
	 * caller that polled rather than waited (setup helpers, timer ticks) needs one. */
	(void)revents;
	if (p->defer && p->inflight && !io_uring_cq_ready(&p->ring))
		io_uring_get_events(&p->ring);
	/* Collect first, complete after: done() may submit, which touches the ring. */
	do {
		n = 0;
		while (n < 64 && io_uring_peek_cqe(&p->ring, &cqe) == 0) {
			done[n] = io_uring_cqe_get_data(cqe);
			res[n] = cqe->res;
			io_uring_cqe_seen(&p->ring, cqe);
			n++;
		}
		for (unsigned i = 0; i < n; i++)
			complete(p, done[i], res[i]);
	} while (n == 64);
}

/* fio's reaping: take what the CQ ring holds; only when it is empty, enter the kernel (with
 * any SQEs still to submit) and wait there for at least one completion. */
static int blk_wait(struct ub_epath *ep, int timeout_ms)
{
	struct block_path *p = B(ep);
	struct io_uring_cqe *cqe;

	if (!p->ring_ok || !p->inflight) {
		if (timeout_ms > 0) {
			struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000};
			nanosleep(&ts, NULL);
		}
		return 0;
	}
	if (io_uring_cq_ready(&p->ring)) {
		if (p->unsubmitted)
			commit(p);
	} else if (timeout_ms <= 0) {
		commit(p);
	} else {
		struct __kernel_timespec ts = {timeout_ms / 1000,
					       (long long)(timeout_ms % 1000) * 1000000};
		io_uring_submit_and_wait_timeout(&p->ring, &cqe, 1, &ts, NULL);
	}
	p->unsubmitted = 0;
	return io_uring_cq_ready(&p->ring) > 0;
}

static int blk_submit(struct ub_epath *ep, struct ub_io *io)
{
	struct block_path *p = B(ep);
	struct io_uring_sqe *sqe;
	off_t off;
	int fd;

	if (io->cdb_len)
		return -ENOTSUP;
	if (!p->ring_ok)
		return -EAGAIN;
	if (io->op != UB_OP_FLUSH && io->lba + io->nblocks > p->nblocks)
		return -EINVAL;
	sqe = io_uring_get_sqe(&p->ring);
	if (!sqe) {
		commit(p);
		sqe = io_uring_get_sqe(&p->ring);
		if (!sqe)
			return -EBUSY;
	}
	off = (off_t)(io->lba * p->block_size);
	fd = p->o.registerfiles || p->o.sqpoll ? 0 : p->fd;
	if (io->op == UB_OP_FLUSH)
		io_uring_prep_fsync(sqe, fd, 0);
	else if (io->op == UB_OP_TRIM)
		io_uring_prep_fallocate(sqe, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					(uint64_t)off, (uint64_t)io->nblocks * p->block_size);
	else if (p->nonvectored && io->iovcnt == 1 && io->write)
		io_uring_prep_write(sqe, fd, io->iov[0].iov_base, (unsigned)io->iov[0].iov_len,
				    (uint64_t)off);
	else if (p->nonvectored && io->iovcnt == 1)
		io_uring_prep_read(sqe, fd, io->iov[0].iov_base, (unsigned)io->iov[0].iov_len,
				   (uint64_t)off);
	else if (io->write)
		io_uring_prep_writev(sqe, fd, io->iov, (unsigned)io->iovcnt, (uint64_t)off);
	else
		io_uring_prep_readv(sqe, fd, io->iov, (unsigned)io->iovcnt, (uint64_t)off);
	if (fd != p->fd)
		sqe->flags |= IOSQE_FIXED_FILE;
	if (io->op == UB_OP_RW && io->write && io->fua)
		sqe->rw_flags = RWF_DSYNC;
	sqe->ioprio = io->ioprio;
	io_uring_sqe_set_data(sqe, io);
	io->eng_path = ep;
	p->inflight++;
	/* Batch: every submit_batch SQEs go to the kernel at once (fio's iodepth_batch_submit,
	 * 1 by default: one commit per I/O, as fio does); the rest of a round's go in one
	 * commit from wait() (or pollfd()), just before the loop sleeps. */
	if (++p->unsubmitted >= p->o.submit_batch && p->o.submit_batch)
		commit(p);
	return 0;
}

static void blk_geometry(struct ub_epath *ep, uint32_t *bs, uint64_t *nblocks)
{
	*bs = B(ep)->block_size;
	*nblocks = B(ep)->nblocks;
}

static unsigned blk_inflight(struct ub_epath *ep)
{
	return B(ep)->inflight;
}

const struct ub_engine ub_engine_block = {
    .name = "block",
    .native_ops = true,
    .create = blk_create,
    .destroy = blk_destroy,
    .connect = blk_connect,
    .disconnect = blk_disconnect,
    .state = blk_state,
    .last_error = blk_last_error,
    .pollfd = blk_pollfd,
    .service = blk_service,
    .wait = blk_wait,
    .submit = blk_submit,
    .geometry = blk_geometry,
    .inflight = blk_inflight,
};
