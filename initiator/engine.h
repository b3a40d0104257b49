/* The engine interface: how utgt-bench moves a command over one path.  Each engine (iSCSI via
 * libiscsi, a block device/file via io_uring; SRP or iSER over verbs later) opens one path
 * per target string, reports its state, exposes a pollable fd for the tester's own event
 * loop, and completes commands through a callback.  Engines never call a completion from
 * inside submit(), and never block in service(). */
#ifndef UB_ENGINE_H
#define UB_ENGINE_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

enum ub_path_state { UB_PS_DOWN, UB_PS_CONNECTING, UB_PS_UP };

enum ub_io_result {
	UB_IO_OK,
	UB_IO_PATH_ERROR, /* transport failed: the command may be retried on another path */
	UB_IO_SCSI_ERROR, /* the LU answered with a non-GOOD status (see status/sense) */
	UB_IO_NOT_SUPPORTED,
};

struct ub_epath;

/* What a command does besides READ/WRITE.  Engines without native_ops get FLUSH and TRIM as
 * pass-through CDBs (SYNCHRONIZE CACHE(16), UNMAP) built by multipath. */
enum ub_op { UB_OP_RW, UB_OP_FLUSH, UB_OP_TRIM };

struct ub_io {
	/* Request.  cdb_len > 0 makes it a pass-through data-in command (INQUIRY, RTPG...) of
	 * xfer_len bytes into iov; otherwise a READ(16)/WRITE(16) of nblocks at lba. */
	bool write;
	uint8_t op;	 /* enum ub_op */
	bool fua;	 /* write through the cache (fio's sync=1) */
	uint16_t ioprio; /* io_uring priority (block engine), 0: none */
	uint64_t lba;
	uint32_t nblocks;
	struct iovec *iov;
	int iovcnt;
	uint8_t cdb[16];
	uint8_t cdb_len;
	uint32_t xfer_len;
	void (*done)(struct ub_io *io);
	void *owner;
	/* Result, valid in done(). */
	enum ub_io_result result;
	uint8_t status; /* SCSI status byte when result is UB_IO_SCSI_ERROR */
	uint8_t sense_key, asc, ascq;
	uint32_t residual;
	int sys_errno; /* the kernel's error, block engine */
	/* Engine scratch. */
	struct ub_epath *eng_path;
	void *eng_task;
};

struct ub_eng_opts {
	const char *initiator_name;
	/* iSCSI operational keys; -1 (or 0 for sizes) leaves the library default */
	int header_digest; /* libiscsi enum iscsi_header_digest */
	int data_digest;   /* 0 none, 1 crc32c */
	int nodelay;	   /* TCP_NODELAY on the session socket */
	int initial_r2t;
	int immediate_data;
	uint32_t max_recv_dsl;
	unsigned io_timeout_s;
	unsigned connect_timeout_ms;
	/* iSCSI over TCP: a NOP-Out ping when nothing was received for nop_interval_ms (0: none);
	 * no NOP-In within nop_timeout_ms fails the path (open-iscsi's noop_out_interval and
	 * noop_out_timeout) */
	unsigned nop_interval_ms, nop_timeout_ms;
	/* the largest data transfer the job issues (its bs); 0 = unknown.  Engines with a
	 * per-command limit refuse a larger one in create(). */
	uint64_t max_io_bytes;
	/* block engine */
	bool direct;
	unsigned queue_depth;
	unsigned iodepth; /* the job's: the io_uring ring gets as many entries, as fio's does */
	bool sqpoll, registerfiles, hipri;
	int nonvectored; /* 1 READ/WRITE, 0 READV/WRITEV, -1 READ/WRITE where supported */
	unsigned submit_batch; /* hand SQEs to the kernel every this many (0: once per round) */
	int sqpoll_cpu;
	uint64_t null_size; /* null engine: the size it pretends to have */
};

struct ub_engine {
	const char *name;
	bool native_ops; /* submits UB_OP_FLUSH/UB_OP_TRIM itself */
	/* Prepare a path to target; no I/O yet.  NULL and a reason in err on a bad target. */
	struct ub_epath *(*create)(const char *target, const struct ub_eng_opts *o, char *err,
				   size_t errlen);
	void (*destroy)(struct ub_epath *p);
	/* Start connecting (asynchronously where the transport allows).  After it, state() is
	 * CONNECTING, UP, or DOWN with last_error() saying why. */
	int (*connect)(struct ub_epath *p);
	/* Drop the connection: every outstanding command completes with UB_IO_PATH_ERROR. */
	void (*disconnect)(struct ub_epath *p, const char *why);
	enum ub_path_state (*state)(struct ub_epath *p);
	const char *(*last_error)(struct ub_epath *p);
	/* Fill pfd with the fd/events to wait for; 0 when nothing to wait for right now. */
	int (*pollfd)(struct ub_epath *p, struct pollfd *pfd);
	/* Handle revents (0: a timer tick, for timeouts and connect deadlines). */
	void (*service)(struct ub_epath *p, short revents);
	/* Optional: wait up to timeout_ms for completions in the engine's own system call (the
	 * way fio reaps io_uring) instead of poll() on pollfd(); >0 when service() has some to
	 * deliver.  Multipath uses it when the job has this one path. */
	int (*wait)(struct ub_epath *p, int timeout_ms);
	/* 0: queued; <0: refused (path not up, or pass-through unsupported: -ENOTSUP). */
	int (*submit)(struct ub_epath *p, struct ub_io *io);
	void (*geometry)(struct ub_epath *p, uint32_t *block_size, uint64_t *nblocks);
	unsigned (*inflight)(struct ub_epath *p);
};

extern const struct ub_engine ub_engine_iscsi;
extern const struct ub_engine ub_engine_block;
extern const struct ub_engine ub_engine_srp; /* srp: targets, initiator/engine_srp.c */
extern const struct ub_engine ub_engine_null; /* ioengine=null: no I/O (fio's null) */

/* Choose the engine for a job: an iscsi:// filename means iSCSI whatever ioengine says;
 * the kernel engines fio users name (libaio, io_uring, psync, sync...) mean the block engine.
 * NULL with a reason in err when the name is something we do not have. */
const struct ub_engine *ub_engine_resolve(const char *ioengine, const char *filename, char *note,
					  size_t notelen, char *err, size_t errlen);

uint64_t ub_now_ns(void);

/* Run one path's event loop until *flag becomes true or the deadline passes (false). */
bool ub_epath_wait(const struct ub_engine *e, struct ub_epath *p, const bool *flag,
		   uint64_t deadline_ns);
/* Synchronous pass-through data-in command on one idle path (only used while setting up).
 * Returns the result; buf gets up to len bytes. */
enum ub_io_result ub_epath_scsi_in(const struct ub_engine *e, struct ub_epath *p,
				   const uint8_t *cdb, uint8_t cdb_len, void *buf, uint32_t len,
				   struct ub_io *out, uint64_t timeout_ns);

#endif
