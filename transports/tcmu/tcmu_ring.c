/* The target_core_user ring on a memory area (see tcmu_ring.h).
 *
 * Completion protocol, as the kernel reads it: it walks the ring from its last cleaned
 * position up to our cmd_tail, skips PAD and TMR entries, and takes every CMD entry's
 * hdr.cmd_id and rsp as a completion.  So with CAP_OOOC a completion is written into
 * whatever CMD entry sits at our tail (its request fields were copied out when it was parsed)
 * and carries the finishing command's cmd_id; without it, each command answers in its own
 * entry and the tail only moves past a run of finished ones.
 *
 * Our private list of parsed entries (offset, length, command or not, done) drives the tail,
 * so lengths are never re-read from shared memory once checked. */
#include "transports/tcmu/tcmu_uapi.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "common/ut_log.h"
#include "transports/tcmu/tcmu_cdb.h"
#include "transports/tcmu/tcmu_ring.h"

#define ENT_SKIP UINT32_MAX /* fifo .off of a run of entries owed no completion */

#define OFF_HDR_CMD_ID 4
#define OFF_HDR_UFLAGS 7
#define ENT_MIN	       sizeof(struct tcmu_cmd_entry)
#define IOV_OFF	       offsetof(struct tcmu_cmd_entry, req.iov)

static uint32_t *mb_u32(struct tcmu_ring *r, size_t off)
{
	return (uint32_t *)(void *)(r->base + off);
}

static uint32_t load_head(struct tcmu_ring *r)
{
	return __atomic_load_n(mb_u32(r, offsetof(struct tcmu_mailbox, cmd_head)),
			       __ATOMIC_ACQUIRE);
}

static void publish_tail(struct tcmu_ring *r)
{
	__atomic_store_n(mb_u32(r, offsetof(struct tcmu_mailbox, cmd_tail)), r->tail,
			 __ATOMIC_RELEASE);
}

void tcmu_sense_fixed(uint8_t out[18], uint8_t key, uint8_t asc, uint8_t ascq)
{
	memset(out, 0, 18);
	out[0] = 0x70;
	out[2] = key;
	out[7] = 10;
	out[12] = asc;
	out[13] = ascq;
}

int tcmu_ring_init(struct tcmu_ring *r, void *base, size_t size, const char *name, char *err,
		   size_t errlen)
{
	struct tcmu_mailbox mb;
	uint32_t tail;

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	if (size < sizeof(mb)) {
		snprintf(err, errlen, "mapping of %zu bytes is smaller than the mailbox", size);
		return -1;
	}
	memcpy(&mb, base, sizeof(mb));
	tail = __atomic_load_n(
	    (uint32_t *)(void *)((uint8_t *)base + offsetof(struct tcmu_mailbox, cmd_tail)),
	    __ATOMIC_ACQUIRE);
	if (mb.version < 1 || mb.version > TCMU_MAILBOX_VERSION) {
		snprintf(err, errlen, "mailbox version %u (we speak 1..%u)", mb.version,
			 TCMU_MAILBOX_VERSION);
		return -1;
	}
	if (mb.cmdr_off < sizeof(mb) || mb.cmdr_size < ENT_MIN || mb.cmdr_size % 8 ||
	    (uint64_t)mb.cmdr_off + mb.cmdr_size > size) {
		snprintf(err, errlen, "command ring at %u, %u bytes, does not fit %zu bytes",
			 mb.cmdr_off, mb.cmdr_size, size);
		return -1;
	}
	if (tail >= mb.cmdr_size || tail % 8) {
		snprintf(err, errlen, "cmd_tail %u outside the %u-byte ring", tail, mb.cmdr_size);
		return -1;
	}
	r->base = base;
	r->size = size;
	r->cmdr_off = mb.cmdr_off;
	r->cmdr_size = mb.cmdr_size;
	r->data_off = (uint64_t)mb.cmdr_off + mb.cmdr_size;
	r->flags = mb.flags;
	r->oooc = mb.flags & TCMU_MAILBOX_FLAG_CAP_OOOC;
	r->read_len = mb.flags & TCMU_MAILBOX_FLAG_CAP_READ_LEN;
	/* entries the kernel queued before we came (a restarted daemon) are served again */
	r->fetch = r->tail = tail;
	r->live_ids = calloc(1, (UINT16_MAX + 1) / 8);
	if (!r->live_ids) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

void tcmu_ring_fini(struct tcmu_ring *r)
{
	free(r->fifo);
	r->fifo = NULL;
	r->fifo_cap = r->fifo_n = 0;
	free(r->live_ids);
	r->live_ids = NULL;
	free(r->tmr.ids);
	r->tmr.ids = NULL;
	r->tmr.cap = r->tmr.n = 0;
}

/* cmd_id bit: op 0 tests, 1 sets, -1 clears; returns the bit before. */
static bool live_id(struct tcmu_ring *r, uint16_t id, int op)
{
	uint8_t m = (uint8_t)(1u << (id & 7)), *b = &r->live_ids[id >> 3];
	bool was = *b & m;

	if (op > 0)
		*b |= m;
	else if (op < 0)
		*b &= (uint8_t)~m;
	return was;
}

const char *tcmu_tmr_name(uint8_t type)
{
	switch (type) {
	case TCMU_TMR_ABORT_TASK:
		return "ABORT TASK";
	case TCMU_TMR_ABORT_TASK_SET:
		return "ABORT TASK SET";
	case TCMU_TMR_CLEAR_ACA:
		return "CLEAR ACA";
	case TCMU_TMR_CLEAR_TASK_SET:
		return "CLEAR TASK SET";
	case TCMU_TMR_LUN_RESET:
		return "LOGICAL UNIT RESET";
	case TCMU_TMR_TARGET_WARM_RESET:
		return "TARGET WARM RESET";
	case TCMU_TMR_TARGET_COLD_RESET:
		return "TARGET COLD RESET";
	case TCMU_TMR_LUN_RESET_PRO:
		return "LUN RESET (PR preempt)";
	default:
		return "unknown TMF";
	}
}

static struct tcmu_fifo_ent *fifo_at(struct tcmu_ring *r, uint32_t i)
{
	return &r->fifo[(r->fifo_head + i) % r->fifo_cap];
}

static int fifo_grow(struct tcmu_ring *r)
{
	uint32_t cap = r->fifo_cap ? r->fifo_cap * 2 : 64;
	struct tcmu_fifo_ent *f = malloc(sizeof(*f) * cap);

	if (!f)
		return -1;
	for (uint32_t i = 0; i < r->fifo_n; i++)
		f[i] = *fifo_at(r, i);
	free(r->fifo);
	r->fifo = f;
	r->fifo_cap = cap;
	r->fifo_head = 0;
	return 0;
}

/* Record one parsed entry; runs of skipped entries share one element (their .len grows). */
static int fifo_push(struct tcmu_ring *r, uint32_t off, uint32_t len, bool cmd)
{
	struct tcmu_fifo_ent *last = r->fifo_n ? fifo_at(r, r->fifo_n - 1) : NULL;

	if (!cmd && last && last->off == ENT_SKIP) {
		last->len += len; /* extend the run */
		return 0;
	}
	if (r->fifo_n == r->fifo_cap && fifo_grow(r) < 0)
		return -1;
	*fifo_at(r, r->fifo_n++) =
	    (struct tcmu_fifo_ent){.off = cmd ? off : ENT_SKIP, .len = len, .done = !cmd};
	return 0;
}

/* Pop finished elements off the front, moving the tail over them. */
static bool release_front(struct tcmu_ring *r)
{
	bool moved = false;

	while (r->fifo_n && fifo_at(r, 0)->done) {
		r->tail = (r->tail + fifo_at(r, 0)->len) % r->cmdr_size;
		r->fifo_head = (r->fifo_head + 1) % r->fifo_cap;
		r->fifo_n--;
		moved = true;
	}
	if (moved)
		publish_tail(r);
	return moved;
}

static void set_uflags(struct tcmu_ring *r, uint32_t off, uint8_t f)
{
	r->base[r->cmdr_off + off + OFF_HDR_UFLAGS] = f;
}

static enum tcmu_next broken(struct tcmu_ring *r)
{
	r->broken = true;
	return TCMU_NEXT_BROKEN;
}

/* Step over an entry owed no completion. */
static int skip(struct tcmu_ring *r, uint32_t len)
{
	if (fifo_push(r, r->fetch, len, false) < 0)
		return -1;
	r->fetch = (r->fetch + len) % r->cmdr_size;
	return 0;
}

/* Copy a TMR entry's list out of the ring.  The kernel sizes the entry for cmd_cnt ids; a
 * count the entry cannot hold is cut to what it holds (and logged). */
static int parse_tmr(struct tcmu_ring *r, const uint8_t *e, uint32_t len)
{
	struct tcmu_tmr_entry t;
	uint32_t room, n;

	r->tmr.type = TCMU_TMR_UNKNOWN;
	r->tmr.n = 0;
	if (len < sizeof(t)) {
		ut_log(LOG_WARNING, "tcmu %s: TMR entry of %u bytes (too short); skipped", r->name,
			len);
		return 0;
	}
	memcpy(&t, e, sizeof(t));
	room = (len - (uint32_t)sizeof(t)) / sizeof(uint16_t);
	n = t.cmd_cnt;
	if (n > room) {
		ut_log(LOG_WARNING,
			"tcmu %s: TMR entry names %u command(s) but holds %u; taking those", r->name,
			n, room);
		n = room;
	}
	if (n > r->tmr.cap) {
		uint16_t *ids = realloc(r->tmr.ids, n * sizeof(*ids));
		if (!ids)
			return -1;
		r->tmr.ids = ids;
		r->tmr.cap = n;
	}
	if (n)
		memcpy(r->tmr.ids, e + sizeof(t), n * sizeof(uint16_t));
	r->tmr.type = t.tmr_type;
	r->tmr.n = n;
	return 0;
}

/* Fill req from the CMD entry at r->fetch (len bytes, already bounded). */
static enum tcmu_next parse_cmd(struct tcmu_ring *r, const uint8_t *e, uint32_t len,
				struct tcmu_req *req)
{
	struct tcmu_cmd_entry ent;
	uint64_t nio, cdb_rel, total = 0;
	uint32_t cap = req->iov_cap;

	memcpy(&ent, e, ENT_MIN);
	{
		struct iovec *iov = req->iov;
		memset(req, 0, sizeof(*req));
		req->iov = iov;
		req->iov_cap = cap;
	}
	req->cmd_id = ent.hdr.cmd_id;
	req->entry_off = r->fetch;
	nio = (uint64_t)ent.req.iov_cnt + ent.req.iov_bidi_cnt + ent.req.iov_dif_cnt;
	if (nio > cap && !ent.req.iov_bidi_cnt && !ent.req.iov_dif_cnt &&
	    IOV_OFF + nio * sizeof(struct iovec) <= len) {
		req->iovcnt = (uint32_t)nio;
		return TCMU_NEXT_IOV_ROOM; /* nothing consumed, nothing logged yet */
	}

	/* the CDB lives inside the entry, after the iovecs */
	cdb_rel = ent.req.cdb_off - (uint64_t)r->cmdr_off - r->fetch;
	if (ent.req.cdb_off < (uint64_t)r->cmdr_off + r->fetch || cdb_rel >= len) {
		ut_log(LOG_ERR,
			"tcmu %s: cmd_id %u: cdb_off %llu outside its entry (ring offset %u, "
			"%u bytes); CHECK CONDITION",
			r->name, req->cmd_id, (unsigned long long)ent.req.cdb_off, r->fetch, len);
		req->err = TCMU_REQ_BAD_CDB;
	} else {
		unsigned cl = e[cdb_rel] == 0x7f && cdb_rel + 8 > len ? 0 : 1;
		if (cl)
			cl = tcmu_cdb_len(e + cdb_rel);
		if (!cl || cl > sizeof(req->cdb) || cdb_rel + cl > len) {
			ut_log(LOG_ERR,
				"tcmu %s: cmd_id %u: CDB (opcode 0x%02x) does not fit its entry or "
				"is longer than %zu bytes; CHECK CONDITION",
				r->name, req->cmd_id, e[cdb_rel], sizeof(req->cdb));
			req->err = TCMU_REQ_BAD_CDB;
		} else {
			memcpy(req->cdb, e + cdb_rel, cl);
			req->cdb_len = (uint8_t)cl;
		}
	}

	if (IOV_OFF + nio * sizeof(struct iovec) > len) {
		ut_log(LOG_ERR,
			"tcmu %s: cmd_id %u: %llu iovecs do not fit its %u-byte entry; CHECK "
			"CONDITION",
			r->name, req->cmd_id, (unsigned long long)nio, len);
		if (!req->err)
			req->err = TCMU_REQ_BAD_IOV;
		nio = 0;
	} else if (ent.req.iov_bidi_cnt || ent.req.iov_dif_cnt) {
		ut_log(LOG_ERR,
			"tcmu %s: cmd_id %u: bidirectional/DIF iovecs (%u/%u) are not served; "
			"CHECK CONDITION",
			r->name, req->cmd_id, ent.req.iov_bidi_cnt, ent.req.iov_dif_cnt);
		if (!req->err)
			req->err = TCMU_REQ_BIDI;
		nio = 0;
	}
	for (uint32_t i = 0; i < nio && !req->err; i++) {
		struct iovec v;
		uint64_t off;

		memcpy(&v, e + IOV_OFF + i * sizeof(v), sizeof(v));
		off = (uint64_t)(uintptr_t)v.iov_base;
		if (off < r->data_off || off > r->size || v.iov_len > r->size - off) {
			ut_log(LOG_ERR,
				"tcmu %s: cmd_id %u: iovec %u (offset %llu, %zu bytes) outside the "
				"data area [%llu, %zu); CHECK CONDITION",
				r->name, req->cmd_id, i, (unsigned long long)off, v.iov_len,
				(unsigned long long)r->data_off, r->size);
			req->err = TCMU_REQ_BAD_IOV;
			break;
		}
		req->iov[i].iov_base = r->base + off;
		req->iov[i].iov_len = v.iov_len;
		total += v.iov_len;
	}
	if (!req->err && total > UINT32_MAX) {
		ut_log(LOG_ERR, "tcmu %s: cmd_id %u: %llu data bytes; CHECK CONDITION", r->name,
			req->cmd_id, (unsigned long long)total);
		req->err = TCMU_REQ_TOO_LONG;
	}
	if (!req->err) {
		req->iovcnt = (uint32_t)nio;
		req->len = total;
	}
	return TCMU_NEXT_CMD;
}

enum tcmu_next tcmu_ring_next(struct tcmu_ring *r, struct tcmu_req *req)
{
	for (;;) {
		uint32_t head, avail, len, op;
		struct tcmu_cmd_entry_hdr h;
		const uint8_t *e;

		if (r->broken)
			return TCMU_NEXT_BROKEN;
		head = load_head(r);
		if (head >= r->cmdr_size || head % 8) {
			ut_log(LOG_ERR,
				"tcmu %s: cmd_head %u outside the %u-byte ring; device stopped",
				r->name, head, r->cmdr_size);
			return broken(r);
		}
		if (head == r->fetch) {
			if (!r->outstanding)
				release_front(r); /* only skipped entries left: give them back */
			return TCMU_NEXT_EMPTY;
		}
		avail = (head + r->cmdr_size - r->fetch) % r->cmdr_size;
		e = r->base + r->cmdr_off + r->fetch;
		memcpy(&h, e, sizeof(h));
		len = tcmu_hdr_get_len(h.len_op);
		op = tcmu_hdr_get_op(h.len_op);
		if (!len || len > avail || r->fetch + len > r->cmdr_size) {
			ut_log(
			    LOG_ERR,
			    "tcmu %s: entry at ring offset %u claims %u bytes (%u queued, ring of "
			    "%u): cannot step over it; device stopped",
			    r->name, r->fetch, len, avail, r->cmdr_size);
			return broken(r);
		}
		if (op == TCMU_OP_CMD && len >= ENT_MIN) {
			enum tcmu_next n = parse_cmd(r, e, len, req);
			if (n != TCMU_NEXT_CMD)
				return n;
			if (fifo_push(r, r->fetch, len, true) < 0) {
				ut_log(LOG_ERR, "tcmu %s: out of memory; device stopped", r->name);
				return broken(r);
			}
			r->fetch = (r->fetch + len) % r->cmdr_size;
			r->outstanding++;
			if (live_id(r, req->cmd_id, 1))
				ut_log(LOG_ERR,
					"tcmu %s: cmd_id %u queued again while still in flight",
					r->name, req->cmd_id);
			return TCMU_NEXT_CMD;
		}
		if (op == TCMU_OP_TMR) {
			if (parse_tmr(r, e, len) < 0 || skip(r, len) < 0) {
				ut_log(LOG_ERR, "tcmu %s: out of memory; device stopped", r->name);
				return broken(r);
			}
			return TCMU_NEXT_TMR;
		}
		if (op != TCMU_OP_PAD) {
			ut_log(LOG_ERR,
				"tcmu %s: entry at ring offset %u: %s (opcode %u, %u bytes); "
				"flagged UNKNOWN_OP and skipped",
				r->name, r->fetch,
				op == TCMU_OP_CMD ? "command entry too short" : "unknown opcode",
				op, len);
			set_uflags(r, r->fetch, TCMU_UFLAG_UNKNOWN_OP);
		}
		if (skip(r, len) < 0) {
			ut_log(LOG_ERR, "tcmu %s: out of memory; device stopped", r->name);
			return broken(r);
		}
	}
}

bool tcmu_ring_pending(const struct tcmu_ring *r)
{
	return !r->broken && load_head((struct tcmu_ring *)r) != r->fetch;
}

static void write_rsp(struct tcmu_ring *r, uint32_t off, uint16_t cmd_id,
		      const struct tcmu_rsp *rsp)
{
	uint8_t *e = r->base + r->cmdr_off + off;
	struct tcmu_cmd_entry ent;
	size_t sl = rsp->sense_len < TCMU_SENSE_BUFFERSIZE ? rsp->sense_len : TCMU_SENSE_BUFFERSIZE;
	uint8_t uflags = 0;

	memset(&ent.rsp, 0, sizeof(ent.rsp));
	ent.rsp.scsi_status = rsp->status;
	if (rsp->sense && sl)
		memcpy(ent.rsp.sense_buffer, rsp->sense, sl);
	if (rsp->read_len_valid && r->read_len) {
		ent.rsp.read_len = rsp->read_len;
		uflags |= TCMU_UFLAG_READ_LEN;
	}
	memcpy(e + offsetof(struct tcmu_cmd_entry, rsp), &ent.rsp, sizeof(ent.rsp));
	memcpy(e + OFF_HDR_CMD_ID, &cmd_id, sizeof(cmd_id));
	e[OFF_HDR_UFLAGS] = uflags;
}

int tcmu_ring_complete(struct tcmu_ring *r, const struct tcmu_req *req, const struct tcmu_rsp *rsp)
{
	if (!r->outstanding || !live_id(r, req->cmd_id, 0)) {
		__atomic_fetch_add(&r->refused, 1, __ATOMIC_RELAXED); /* stats read it */
		return -1;
	}
	if (r->oooc) {
		/* the first command entry still held, whichever command it carried */
		uint32_t i = 0;
		while (i < r->fifo_n && (fifo_at(r, i)->off == ENT_SKIP || fifo_at(r, i)->done))
			i++;
		if (i == r->fifo_n)
			return -1;
		write_rsp(r, fifo_at(r, i)->off, req->cmd_id, rsp);
		fifo_at(r, i)->done = true;
	} else {
		uint32_t i = 0;
		while (i < r->fifo_n &&
		       (fifo_at(r, i)->off != req->entry_off || fifo_at(r, i)->done))
			i++;
		if (i == r->fifo_n)
			return -1;
		write_rsp(r, req->entry_off, req->cmd_id, rsp);
		fifo_at(r, i)->done = true;
	}
	live_id(r, req->cmd_id, -1);
	r->outstanding--;
	return release_front(r) ? 1 : 0;
}
