/* The asynchronous I/O engine behind the file-backed stores (vdisk_fileio, vdisk_blockio).
 *
 * One engine per open store.  Verbs go to an io_uring or, when io_uring is unavailable or
 * UTGT_NO_IO_URING=1, to a small pool of threads doing preadv2/pwritev2.  The ring is the
 * calling thread's own when it has one (a front end's worker: common/ut_ring.h), so the
 * completion runs io->cb on the thread that submitted, in its loop, and the steps of a round
 * go to the kernel in one io_uring_enter(); otherwise it is the engine's shared ring, whose
 * CQ reaper thread calls io->cb.  Either way bs_aio_submit() never waits for the medium: it
 * queues and returns, so a slow file never stalls the caller.
 *
 * Data moves through the caller's iovecs directly.  Only when the store is opened O_DIRECT and
 * the caller's buffers are not aligned for it does the engine copy through an aligned bounce
 * buffer; an I/O whose offset or length is not aligned for O_DIRECT goes through a second,
 * buffered descriptor instead.  Short transfers are resumed for the remainder; EINTR/EAGAIN
 * are retried. */
#ifndef UTGT_BS_AIO_H
#define UTGT_BS_AIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scsi/backstore/backstore.h"

struct bs_aio_opts {
	const char *name;	/* for messages */
	int fd;			/* the store; O_DIRECT when dio_off_align != 0 */
	int fd_buffered;	/* -1, or the same file without O_DIRECT for unaligned I/O */
	uint32_t dio_mem_align; /* O_DIRECT buffer address alignment (0: not O_DIRECT) */
	uint32_t dio_off_align; /* O_DIRECT offset/length alignment (0: not O_DIRECT) */
	uint32_t block_size;	/* the LU's logical block size (WRITE SAME pattern size) */
	bool blockdev;	   /* UNMAP: fallocate(PUNCH_HOLE) on a block device, else BLKDISCARD */
	bool nv_cache;	   /* FLUSH and FUA are no-ops: the cache is non-volatile */
	uint64_t max_step; /* most bytes per system call; 0 = 1 GiB.  Tests shrink it. */
	unsigned depth;	   /* I/Os in flight at once; more wait in a queue.  0 = 128 */
	unsigned threads;  /* thread-pool size without io_uring; 0 = 4 */
	bool no_uring;	   /* use the thread pool even if io_uring works */
};

struct bs_aio;

/* Takes ownership of the descriptors (closed by bs_aio_destroy, or here on failure).
 * NULL with a message in err on failure. */
struct bs_aio *bs_aio_create(const struct bs_aio_opts *o, char *err, size_t errlen);

/* Start io (already validated with bs_check_io).  io->cb runs exactly once: on the calling
 * thread's loop (own ring), from the reaper or a pool thread, or before this returns for verbs
 * with nothing to do and for io->inline_ok I/O the page cache answered on the caller's
 * thread.  The callback must not wait for other I/O on the same engine. */
void bs_aio_submit(struct bs_aio *a, struct bs_io *io);

/* Wait for every submitted I/O to complete, stop the threads, close the descriptors.  Not
 * from inside a completion callback. */
void bs_aio_destroy(struct bs_aio *a);

/* The store's descriptor (for synchronous queries such as SEEK_DATA; never for data I/O). */
int bs_aio_fd(const struct bs_aio *a);

/* "io_uring" or "threads". */
const char *bs_aio_mode(const struct bs_aio *a);
void bs_aio_get_stats(const struct bs_aio *a, struct bs_engine_stats *out);

/* O_DIRECT alignment of an open descriptor (statx STATX_DIOALIGN), or `fallback` for both when
 * the kernel or filesystem does not say.  0/0 when the file cannot do O_DIRECT at all. */
void bs_dio_align(int fd, uint32_t fallback, uint32_t *mem_align, uint32_t *off_align);

/* vdisk_fileio and vdisk_blockio keep their engine in bs->priv. */
static inline struct bs_aio *bs_aio_of(const struct backstore *bs)
{
	return (struct bs_aio *)bs->priv;
}

/* The close and submit ops of a store whose engine is bs->priv: submit validates io (and
 * refuses UNMAP when the store cannot deallocate) before handing it to the engine. */
void bs_aio_store_close(struct backstore *bs);
void bs_aio_store_submit(struct backstore *bs, struct bs_io *io);
void bs_aio_store_stats(struct backstore *bs, struct bs_engine_stats *out);

/* errno (positive) of a failed system call -> the status the SCSI core understands. */
enum bs_status bs_errno_status(int err, enum bs_op op);

#endif
