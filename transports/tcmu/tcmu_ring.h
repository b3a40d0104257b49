/* The target_core_user command ring, as pure memory: parse the entries the kernel queued and
 * write completions back, on a mapped area given by the caller.  No syscalls here, so unit
 * tests can play the kernel with a ring in ordinary memory.
 *
 * Everything read from the ring is first copied into locals and then checked (the area is
 * shared with the kernel): an entry is only trusted as far as its own bounds, every iovec must
 * lie inside the data area, the CDB inside its entry.  Not thread-safe: one thread per ring. */
#ifndef UTGT_TCMU_RING_H
#define UTGT_TCMU_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct tcmu_ring {
	uint8_t *base; /* the mapping: mailbox at 0 */
	size_t size;
	uint32_t cmdr_off, cmdr_size;
	uint64_t data_off;    /* first byte after the command ring */
	uint16_t flags;	      /* the mailbox flags, as the kernel set them */
	bool oooc;	      /* kernel takes completions out of order (CAP_OOOC) */
	bool read_len;	      /* kernel honours rsp.read_len (CAP_READ_LEN) */
	uint32_t fetch;	      /* next entry to parse, offset in the command ring */
	uint32_t tail;	      /* our cmd_tail: everything before it is handed back */
	uint32_t outstanding; /* CMD entries parsed but not yet completed */
	bool broken;	      /* an entry we cannot step over: stop using this ring */
	/* cmd_ids parsed and not yet completed, one bit each: a second completion for one
	 * command is refused (the kernel would take it for another command, or break) */
	uint8_t *live_ids;
	uint64_t refused; /* completions refused for a cmd_id not in flight */
	/* the last TMR entry parsed (TCMU_NEXT_TMR), its ids copied out of the ring */
	struct tcmu_tmr {
		uint8_t type; /* TCMU_TMR_* */
		uint32_t n;
		uint16_t *ids; /* the cmd_ids LIO aborted */
		uint32_t cap;
	} tmr;
	/* parsed entries in ring order: commands (offset, done) and runs of skipped ones */
	struct tcmu_fifo_ent {
		uint32_t off; /* ring offset of a command; UINT32_MAX: skipped entries */
		uint32_t len;
		bool done;
	} * fifo;
	uint32_t fifo_cap, fifo_head, fifo_n;
	char name[64]; /* for log lines */
};

/* Why a CMD entry could not be turned into a SCSI command (completed with CHECK CONDITION). */
enum tcmu_req_err {
	TCMU_REQ_OK = 0,
	TCMU_REQ_BAD_CDB,  /* cdb_off outside the entry, or CDB longer than 32 bytes */
	TCMU_REQ_BAD_IOV,  /* iovec array past the entry, or an iovec outside the data area */
	TCMU_REQ_BIDI,	   /* bidirectional / DIF iovecs: not served */
	TCMU_REQ_TOO_LONG, /* more data than a task can carry (4 GiB) */
};

struct tcmu_req {
	uint16_t cmd_id;
	uint32_t entry_off; /* where the entry is, for in-order completion */
	enum tcmu_req_err err;
	uint8_t cdb[32];
	uint8_t cdb_len;
	struct iovec *iov; /* caller's array; pointers into the mapping */
	uint32_t iovcnt;   /* filled; on TCMU_NEXT_IOV_ROOM: how many are needed */
	uint32_t iov_cap;  /* set by the caller */
	uint64_t len;	   /* sum of the iovecs */
};

enum tcmu_next {
	TCMU_NEXT_EMPTY,    /* nothing (more) queued */
	TCMU_NEXT_CMD,	    /* req filled (check req->err) and owed a completion */
	TCMU_NEXT_IOV_ROOM, /* req->iovcnt iovecs needed: grow req->iov and call again */
	TCMU_NEXT_BROKEN,   /* the ring cannot be parsed further; see the log */
	TCMU_NEXT_TMR,	    /* a task management notification: r->tmr filled */
};

struct tcmu_rsp {
	uint8_t status;
	const uint8_t *sense;
	uint32_t sense_len; /* cut to the 96 bytes the ring carries */
	bool read_len_valid;
	uint32_t read_len; /* data-in bytes actually moved (underflow) */
};

/* Check the mailbox and set up r; 0, or -1 with err filled. */
int tcmu_ring_init(struct tcmu_ring *r, void *base, size_t size, const char *name, char *err,
		   size_t errlen);
void tcmu_ring_fini(struct tcmu_ring *r);
/* Parse the next entry.  PAD entries are stepped over; a TMR entry (tmr_notification=1: LIO
 * ran a TMF and aborted the commands it lists, which it still waits for in the ring) is
 * returned as TCMU_NEXT_TMR with r->tmr filled and owes no completion; an unknown opcode is
 * flagged TCMU_UFLAG_UNKNOWN_OP and stepped over. */
enum tcmu_next tcmu_ring_next(struct tcmu_ring *r, struct tcmu_req *req);
/* Something is queued past what was parsed (cmd_head moved): a peek, no entry checked. */
bool tcmu_ring_pending(const struct tcmu_ring *r);
/* Hand one completion back and advance cmd_tail as far as allowed (out of order when the
 * kernel can take it, else only up to the oldest command still running).  Returns true when
 * cmd_tail moved (the caller should kick the kernel), false when it did not; -1 when refused:
 * req->cmd_id is not in flight (never taken, or completed already; counted in r->refused). */
int tcmu_ring_complete(struct tcmu_ring *r, const struct tcmu_req *req, const struct tcmu_rsp *rsp);

/* A TMR type's name, for log lines. */
const char *tcmu_tmr_name(uint8_t type);

/* Fixed-format sense data (18 bytes) for the errors the transport raises itself. */
void tcmu_sense_fixed(uint8_t out[18], uint8_t key, uint8_t asc, uint8_t ascq);

#endif
