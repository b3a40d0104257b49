/* Private to the SBC command set (scsi/sbc_*.c): CDB decoding and checks, the per-command
 * context, the LBA range lock, and the synchronous I/O helpers that worker-run commands use.
 * Nothing outside scsi/sbc_*.c includes this. */
#ifndef UTGT_SBC_H
#define UTGT_SBC_H

#include <stddef.h>
#include <string.h>

#include "scsi/scsi_cmd.h"

/* ---- CDB decoding (sbc_cdb.c) ---- */

/* LBA, length and flags of a READ/WRITE-family CDB, whatever its size. */
struct sbc_cdb {
	uint64_t lba;
	uint32_t nblocks;  /* the CDB's length field (READ(6)/WRITE(6): 0 already turned into 256) */
	uint8_t protect;   /* RD/WR/VR/ORPROTECT (byte 1 bits 7-5); 0 where the CDB has none */
	bool dpo, fua;
	uint8_t len_byte;  /* where the length field starts, for sense field pointers */
};

/* Decode t->cdb by opcode.  Opcodes without an LBA/length leave everything zero. */
void sbc_decode(const struct scsi_task *t, struct sbc_cdb *c);
/* No protection information here: a non-zero *PROTECT field is INVALID FIELD IN CDB pointing
 * at byte 1 bit 7. */
enum scsi_sr sbc_check_protect(struct scsi_task *t, const struct sbc_cdb *c);
/* LBA OUT OF RANGE when [lba, lba+n) does not fit the medium (or lba+n overflows). */
enum scsi_sr sbc_check_range(struct scsi_task *t, uint64_t lba, uint64_t n);
/* INVALID FIELD IN CDB pointing at the length field when nblocks > max. */
enum scsi_sr sbc_check_len(struct scsi_task *t, const struct sbc_cdb *c, uint64_t max);
/* Protection, Block Limits maximum transfer length, then range: the checks every command that
 * moves blocks through the Data-In/Data-Out buffer makes, in the order initiators expect. */
enum scsi_sr sbc_check_xfer(struct scsi_task *t, const struct sbc_cdb *c);
/* The same checks with another length limit (COMPARE AND WRITE's). */
enum scsi_sr sbc_check_xfer_max(struct scsi_task *t, const struct sbc_cdb *c, uint64_t max);
/* Medium access refused while the LU is in sanitize failure mode (MEDIUM ERROR 31/03). */
enum scsi_sr sbc_check_medium(struct scsi_task *t);

static inline bool sbc_nv_cache(const struct scsi_dev *dev)
{
	return dev->bs->nv_cache;
}

/* Must a write be durable before it completes?  FUA, or the write cache disabled (WCE=0 via
 * MODE SELECT, or write_through), unless the cache is non-volatile (nv_cache). */
bool sbc_write_durable(const struct scsi_dev *dev, bool fua);

/* ---- per-command context (sbc_cmd.c) ---- */

struct sbc_cmd;
typedef void (*sbc_resume_fn)(struct sbc_cmd *c);

/* Doubly linked lists of commands through one of their links (the range lock's, the lend
 * gate's), named by its offset in struct sbc_cmd. */
struct sbc_link {
	struct sbc_cmd *next, *prev;
};
struct sbc_list {
	struct sbc_cmd *head, *tail;
};
void sbc_list_add(struct sbc_list *l, struct sbc_cmd *c, size_t link);
void sbc_list_del(struct sbc_list *l, struct sbc_cmd *c, size_t link);

/* Everything an SBC command keeps while it is in flight, in t->core.ctx. */
struct sbc_cmd {
	struct scsi_task *t;
	struct scsi_dev *dev;
	struct bs_io io;            /* the fast path's single backstore I/O */
	struct iovec *iov;          /* iovecs built for io when the task's own do not fit */
	struct iovec iov_small[4];
	void *tail;                 /* READ: room for the part of the last block not sent */
	scsi_handler_fn work;       /* what runs on a core worker once the range is locked */
	/* range lock (sbc_rangelock.c) */
	struct sbc_link rl;
	struct sbc_cmd *run_next;   /* granted by a release, waiting for its resume() call */
	uint64_t rl_lba, rl_end;    /* [lba, end) */
	bool rl_excl;
	bool rl_woken;              /* sbc_range_lock_wait(): the grant has been signalled */
	uint8_t rl_state;
	sbc_resume_fn resume;       /* called once the lock, first refused, is granted */
	struct sbc_stream *stream;  /* a READ produced in pieces (sbc_stream.c) */
	/* lending (sbc_lend.c) */
	bool lend_ok;               /* READ: lend the store's memory if the gate lets it */
	bool lend_writer;           /* counted among the LU's writers */
	uint8_t lend_state;         /* none, lent, parked */
	struct sbc_link lend;
};

struct sbc_cmd *sbc_cmd_new(struct scsi_task *t);
/* Release the range lock if held and free the context (t->core.ctx becomes NULL). */
void sbc_cmd_free(struct sbc_cmd *c);
static inline struct sbc_cmd *sbc_cmd_of(struct scsi_task *t)
{
	return t->core.ctx;
}

/* ---- LBA range lock (sbc_rangelock.c) ---- */

/* Lock [lba, lba+n) of c's LU, shared (READ/WRITE/UNMAP/WRITE SAME) or exclusive (COMPARE AND
 * WRITE, ORWRITE, WRITE ATOMIC, WRITE AND VERIFY, SANITIZE).  n == UINT64_MAX: to the end.
 * Returns true when granted now.  Otherwise the command waits (never blocking the caller) and
 * `resume(c)` runs later, on the thread that released the conflicting range.  Waiters are
 * granted in arrival order among overlapping ranges, so exclusive lockers do not starve. */
bool sbc_range_lock(struct sbc_cmd *c, uint64_t lba, uint64_t n, bool excl, sbc_resume_fn resume);
void sbc_range_unlock(struct sbc_cmd *c);
/* Blocking variant for a thread that may wait (the SANITIZE thread, a core worker through
 * scsi_range_lock_blocking: the wait is bracketed by scsi_worker_block_begin/end). */
void sbc_range_lock_wait(struct sbc_cmd *c, uint64_t lba, uint64_t n, bool excl);
/* Background work that outlives its task (SANITIZE with IMMED) registers here, so
 * scsi_rangelock_destroy() waits for it. */
void sbc_rangelock_hold(struct scsi_dev *dev);
void sbc_rangelock_unhold(struct scsi_dev *dev);
/* Commands parked waiting for a range (tests observe queueing through this). */
unsigned sbc_rangelock_waiters(struct scsi_dev *dev);

/* Lock [lba, lba+n), then run `work` on a core worker; the lock is released and the context
 * freed after work returns, and work's result completes the task.  For the handler to return. */
enum scsi_sr sbc_locked_work(struct scsi_task *t, uint64_t lba, uint64_t n, bool excl,
			     scsi_handler_fn work);

/* ---- the READ/WRITE fast path (sbc_rw.c) ---- */

/* Start the transfer of an already validated READ/WRITE/WRITE ATOMIC: one asynchronous
 * backstore I/O over the task's iovecs.  `excl`: lock the range exclusively (WRITE ATOMIC).
 * Returns SR_ASYNC, SR_OK (nothing to move) or an error. */
enum scsi_sr sbc_rw_start(struct scsi_task *t, const struct sbc_cdb *cdb, bool write, bool excl);

/* ---- a READ longer than its room, in pieces (sbc_stream.c) ---- */

/* Start reading `bytes` (already validated, more than `room`) of the READ t in pieces into
 * its ring of `room` bytes (scsi_task.h, "Data-in in pieces").  SR_ASYNC or an error. */
struct sbc_stream;
enum scsi_sr sbc_read_stream(struct scsi_task *t, const struct sbc_cdb *cdb, uint32_t bytes,
			     size_t room);
void sbc_stream_free(struct sbc_stream *s);

/* ---- data-in lent from the store's memory (sbc_lend.c, scsi_task.h "Lent data-in") ---- */

/* A shared range request of a command that changes blocks, on an LU whose store lends:
 * true to go on to the range lock; false when it overlaps lent data and was parked (it takes
 * the range lock and resumes once the last overlapping READ is released). */
bool sbc_lend_writer_enter(struct sbc_cmd *c);
void sbc_lend_writer_exit(struct sbc_cmd *c);
/* c holds its shared range: lend [off, off + len) of the store to c's READ (t->din_lent) and
 * keep c, range and all, until scsi_task_data_release().  False: no writer may be kept out
 * right now, or the store cannot map the range; copy instead. */
bool sbc_lend(struct sbc_cmd *c, uint64_t off, uint64_t len);
/* Continue a writer the gate parked: its range lock, then its resume(). */
void sbc_range_lock_gated(struct sbc_cmd *c);

/* ---- synchronous I/O for worker-run commands (sbc_io.c) ---- */

/* Chunk size for commands that walk long ranges (VERIFY, WRITE SAME, SANITIZE, ...). */
#define SBC_CHUNK_BYTES (1u << 20)

/* One backstore verb over [lba, lba+n) blocks with data in buf (NULL for UNMAP/FLUSH). */
enum bs_status sbc_io_sync(struct scsi_dev *dev, enum bs_op op, uint64_t lba, uint64_t n,
			   void *buf, bool fua);
/* The same over iovecs. */
enum bs_status sbc_iov_sync(struct scsi_dev *dev, enum bs_op op, uint64_t lba, uint64_t n,
			    struct iovec *iov, int iovcnt, bool fua);
/* Fill [lba, lba+n) with copies of one block (BS_WRITE_SAME in chunks, or plain writes of a
 * replicated buffer when the store lacks the verb). */
enum bs_status sbc_fill_sync(struct scsi_dev *dev, uint64_t lba, uint64_t n, const void *block,
			     bool fua);
/* Deallocate [lba, lba+n) in chunks. */
enum bs_status sbc_unmap_sync(struct scsi_dev *dev, uint64_t lba, uint64_t n);

/* Compare len bytes of buf with the task's data-out starting `skip` bytes in.  Returns the
 * offset (relative to buf) of the first differing byte, or len when equal. */
size_t sbc_iov_cmp(const struct scsi_task *t, size_t skip, const void *buf, size_t len);
/* iovecs describing bytes [skip, skip+len) of the task's data buffer, in out[0..max). Returns
 * the count, or -1 when more than max are needed or the buffer is shorter. */
int sbc_iov_slice(const struct scsi_task *t, size_t skip, size_t len, struct iovec *out, int max);

#endif
