/* SCSI Command, Data-Out, R2T, Data-In and SCSI Response (RFC 7143 11.3-11.8).
 *
 * A write's data lands directly in the task's buffer: immediate data from the command PDU,
 * then an unsolicited burst (InitialR2T=No) and R2T-solicited bursts, each placed by buffer
 * offset.  When all of it is in and the command's CmdSN turn has come, the task goes to the
 * SCSI core; its completion comes back to this connection's worker, which queues Data-In
 * (status in the last PDU when there is no sense) or a SCSI Response with sense and residuals. */
#include <stdlib.h>
#include <string.h>

#include "scsi/scsi_lun.h"
#include "scsi/scsi_sense.h"
#include "transports/iscsi/iscsi_int.h"

/* ---------------------------------------------------------------- task table */

static unsigned bucket(uint32_t itt)
{
	return (itt ^ (itt >> 8) ^ (itt >> 16)) & (ISCSIT_ITT_BUCKETS - 1);
}

struct iscsit_task *iscsit_task_find(struct iscsit_conn *c, uint32_t itt)
{
	for (struct iscsit_task *t = c->itt[bucket(itt)]; t; t = t->hnext)
		if (t->itt == itt)
			return t;
	return NULL;
}

static void hash_add(struct iscsit_conn *c, struct iscsit_task *t)
{
	unsigned b = bucket(t->itt);

	t->hnext = c->itt[b];
	c->itt[b] = t;
	t->in_hash = true;
}

static void hash_del(struct iscsit_conn *c, struct iscsit_task *t)
{
	if (!t->in_hash)
		return;
	for (struct iscsit_task **pp = &c->itt[bucket(t->itt)]; *pp; pp = &(*pp)->hnext) {
		if (*pp == t) {
			*pp = t->hnext;
			break;
		}
	}
	t->in_hash = false;
}

void iscsit_task_gone(struct iscsit_conn *c, uint32_t itt)
{
	c->gone_itt[c->gone_pos++ % 16] = itt;
}

static bool recently_gone(const struct iscsit_conn *c, uint32_t itt)
{
	for (unsigned i = 0; i < 16; i++)
		if (c->gone_itt[i] == itt && itt != 0)
			return true;
	return false;
}

/* A task with its transport part is just over glibc's per-thread cache limit, so every
 * command paid a trip through the allocator's bins on the way in and out.  The connection
 * keeps up to a queue's worth of freed tasks instead (only its worker allocates and frees
 * them).  Under AddressSanitizer they go back to the allocator, so a use after free is
 * still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define TASK_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TASK_CACHE 0
#endif
#endif
#ifndef TASK_CACHE
#define TASK_CACHE 32
#endif
static const unsigned task_cache_max = TASK_CACHE; /* a variable: 0 is no "always false" */

struct cached_task {
	struct cached_task *next;
};

static struct iscsit_task *task_alloc(struct iscsit_conn *c)
{
	size_t size = sizeof(struct iscsit_task) + c->xp->task_priv;
	struct iscsit_task *t;

	if (c->task_cache) {
		struct cached_task *ct = c->task_cache;

		c->task_cache = ct->next;
		c->ntask_cache--;
		t = (struct iscsit_task *)ct;
		memset(t, 0, size);
	} else {
		t = calloc(1, size);
		if (!t)
			return NULL;
	}
	t->conn = c;
	c->ntasks++;
	return t;
}

static void task_release(struct iscsit_conn *c, struct iscsit_task *t)
{
	if (c->ntask_cache < task_cache_max) {
		struct cached_task *ct = (struct cached_task *)t;

		ct->next = c->task_cache;
		c->task_cache = ct;
		c->ntask_cache++;
		return;
	}
	free(t);
}

void iscsit_task_cache_free(struct iscsit_conn *c)
{
	while (c->task_cache) {
		struct cached_task *ct = c->task_cache;

		c->task_cache = ct->next;
		free(ct);
	}
	c->ntask_cache = 0;
}

void iscsit_task_free(struct iscsit_task *t)
{
	struct iscsit_conn *c = t->conn;

	hash_del(c, t);
	scsi_task_data_release(&t->st); /* lent data-in: sent or dropped, it is not used again */
	if (t->counted && c->sess)
		iscsit_cmdsn_release(c->sess);
	if (t->imm_counted && c->sess)
		atomic_fetch_sub(&c->sess->nimm, 1);
	if (t->niov)
		c->xp->buf_put(t);
	if (t->charged)
		iscsit_mem_uncharge(c->ctx, c->sess, t->charged);
	free(t->r2ts);
	task_release(c, t);
	c->ntasks--;
}

/* The command's buffer, charged to the memory budget first (docs/security.md): over the
 * session's share the command ends with TASK SET FULL, over the global budget with BUSY, so
 * the initiator retries later; the buffer of an answered command is released once its
 * data went out. */
static int alloc_buf(struct iscsit_task *t, uint32_t len, enum scsi_sr *why)
{
	struct iscsit_conn *c = t->conn;
	bool global;

	if (t->niov || !len)
		return 0;
	if (!iscsit_mem_charge(c->sess, len, &global)) {
		atomic_fetch_add(&c->sess->refused_mem, 1);
		*why = global ? SR_BUSY : SR_TASK_SET_FULL;
		return -1;
	}
	t->charged = len;
	if (c->xp->buf_get(t, len)) {
		iscsit_mem_uncharge(c->ctx, c->sess, t->charged);
		t->charged = 0;
		*why = SR_NO_MEMORY;
		return -1;
	}
	return 0;
}

int iscsit_task_slice(const struct iscsit_task *t, uint32_t off, uint32_t len, struct iovec *iov,
		      int max)
{
	uint64_t pos = 0;
	int n = 0;

	if ((uint64_t)off + len > t->buflen)
		return -1;
	for (unsigned i = 0; i < t->niov && len; i++) {
		uint64_t end = pos + t->iov[i].iov_len;

		if (off < end) {
			uint32_t skip = (uint32_t)(off - pos);
			uint32_t take = (uint32_t)(t->iov[i].iov_len - skip);

			if (take > len)
				take = len;
			if (n == max)
				return -1;
			iov[n].iov_base = (uint8_t *)t->iov[i].iov_base + skip;
			iov[n].iov_len = take;
			n++;
			off += take;
			len -= take;
		}
		pos = end;
	}
	return len ? -1 : n;
}

/* Point the receive machine at [off, off + len) of t's buffer. */
static bool place_data(struct iscsit_task *t, struct iscsit_rx *rx, uint32_t off, uint32_t len)
{
	struct iovec v[ISCSIT_RX_DST_MAX];
	int n = iscsit_task_slice(t, off, len, v, ISCSIT_RX_DST_MAX);

	if (n < 0)
		return false;
	iscsit_rx_set_dst(rx, v, n);
	return true;
}

/* ---------------------------------------------------------------- responses */

static void task_sent(struct iscsit_txe *e)
{
	struct iscsit_task *t = e->task;
	struct iscsit_conn *c = t->conn;

	iscsit_task_free(t);
	if (c->state == CONN_LOGOUT)
		iscsit_logout_maybe_answer(c);
}

/* How many Data-In PDUs the transmit side cuts bytes [off, end) of a read into (at
 * MaxRecvDataSegmentLength, at each MaxBurstLength sequence end, and at the end). */
static uint32_t datain_count(uint32_t off, uint32_t end, uint32_t mrdsl, uint32_t burst)
{
	uint32_t n = 0;

	while (off < end) {
		uint32_t chunk = end - off < mrdsl ? end - off : mrdsl;
		uint32_t burst_end = (off / burst + 1) * burst;

		if (off + chunk > burst_end)
			chunk = burst_end - off;
		off += chunk;
		n++;
	}
	return n;
}

static void queue_scsi_rsp(struct iscsit_conn *c, struct iscsit_task *t)
{
	struct scsi_task *st = &t->st;
	struct iscsit_txe *e = iscsit_txe_new();
	struct iscsi_sn sn;
	uint8_t flags = 0;
	uint32_t dlen = 0;

	if (!e) {
		iscsit_conn_close(c, "out of memory");
		iscsit_task_free(t);
		return;
	}
	if (st->resid_kind == SCSI_RESID_UNDER)
		flags |= ISCSI_RSP_UNDER;
	else if (st->resid_kind == SCSI_RESID_OVER)
		flags |= ISCSI_RSP_OVER;
	if (st->sense_len) {
		iscsi_put16(e->inline_data, st->sense_len);
		memcpy(e->inline_data + 2, st->sense, st->sense_len);
		dlen = 2u + st->sense_len;
		e->data = e->inline_data;
		e->dlen = dlen;
	}
	iscsit_conn_sn(c, &sn, true);
	iscsi_bhs_scsi_rsp(e->hdr, t->itt, st->status, flags,
			   st->resid_kind != SCSI_RESID_NONE ? st->resid : 0, &sn, t->exp_data_sn,
			   dlen);
	e->kind = TXE_PDU;
	e->task = t;
	e->sent = task_sent;
	t->state = TS_RESPOND;
	iscsit_tx_queue(c, e);
}

/* The command is done (by the core, or refused before it): answer it. */
static void respond(struct iscsit_task *t)
{
	struct iscsit_conn *c = t->conn;
	struct iscsit_session *s = c->sess;
	struct scsi_task *st = &t->st;
	uint32_t din = 0;

	/* The window slot frees before the header is built, so the answer opens it. */
	if (t->counted) {
		iscsit_cmdsn_release(s);
		t->counted = false;
	}
	if (st->dir == SCSI_DIR_READ && t->niov)
		din = st->data_len < t->edtl ? st->data_len : t->edtl;
	if (din > t->din_queued + t->buflen) {
		/* the core fills at most the room (scsi_task.h): never send beyond it */
		iscsit_log("conn %llu: ITT %#x: %u bytes of data-in beyond its room",
			   (unsigned long long)c->id, t->itt, din - t->din_queued - t->buflen);
		din = t->din_queued + t->buflen;
	}
	if (st->dir == SCSI_DIR_WRITE)
		t->exp_data_sn = t->r2t_sn;
	/* ExpDataSN counts Data-In PDUs (those of pieces sent already too): none where the
	 * transport writes the data */
	if (c->xp->caps & ISCSIT_XP_PHASE_COLLAPSE)
		t->exp_data_sn += t->din_pdus;
	if (din > t->din_queued) {
		struct iscsit_txe *e = iscsit_txe_new();

		if (!e) {
			iscsit_conn_close(c, "out of memory");
			iscsit_task_free(t);
			return;
		}
		t->din_len = din;
		if (c->xp->caps & ISCSIT_XP_PHASE_COLLAPSE)
			t->exp_data_sn +=
			    datain_count(t->din_queued, din, s->p.max_xmit_dsl, s->p.max_burst);
		e->kind = TXE_DATAIN;
		e->task = t;
		t->state = TS_RESPOND;
		/* Phase collapse: status in the last Data-In when there is no sense to send. */
		if (!st->sense_len && (c->xp->caps & ISCSIT_XP_PHASE_COLLAPSE)) {
			t->din_status = true;
			t->stat_sn = c->stat_sn++;
			e->sent = task_sent;
			iscsit_tx_queue(c, e);
			return;
		}
		iscsit_tx_queue(c, e); /* the SCSI Response that follows frees the task */
	}
	queue_scsi_rsp(c, t);
}

static void fail_task(struct iscsit_task *t, enum scsi_sr sr)
{
	memset(&t->st.core, 0, sizeof(t->st.core));
	scsi_task_set_result(&t->st, sr, false);
	t->st.data_len = 0;
	if (t->edtl) {
		t->st.resid_kind = SCSI_RESID_UNDER;
		t->st.resid = t->edtl;
	}
	respond(t);
}

/* ---------------------------------------------------------------- execution */

static void task_complete(struct iscsit_task *t)
{
	struct iscsit_conn *c = t->conn;

	c->nexec--;
	if (c->state == CONN_CLOSING) {
		iscsit_task_free(t);
		iscsit_conn_maybe_free(c);
		return;
	}
	if (t->st.aborted) {
		/* An ABORT/CLEAR/RESET took it: RFC 7143 sends no response for it. */
		iscsit_task_gone(c, t->itt);
		iscsit_task_free(t);
	} else {
		respond(t);
	}
	if (c->state == CONN_LOGOUT)
		iscsit_logout_maybe_answer(c);
}

static void task_complete_fn(struct ut_msg *m)
{
	struct iscsit_task *t =
	    (struct iscsit_task *)((char *)m - offsetof(struct iscsit_task, msg));

	/* a piece's message still posted (the core ended the command after a stop) refers to
	 * the task: complete once it has run */
	if (atomic_load(&t->din_posted) || t->din_txes) {
		t->done_deferred = true;
		return;
	}
	task_complete(t);
}

static void task_done_cb(struct scsi_task *st)
{
	struct iscsit_task *t = (struct iscsit_task *)st;

	/* Any thread: hand the task back to its connection's worker. */
	t->msg.fn = task_complete_fn;
	ut_thread_post(&t->conn->w->ut, &t->msg);
}

/* ---------------------------------------------------------------- a READ in pieces */

static void din_settle(struct iscsit_task *t)
{
	if (t->done_deferred && !t->din_txes && !atomic_load(&t->din_posted)) {
		t->done_deferred = false;
		task_complete(t);
	}
}

/* The connection will send nothing more of it: the core stops reading (once). */
static void din_stop(struct iscsit_task *t)
{
	if (!t->din_stopped) {
		t->din_stopped = true;
		scsi_task_din_stop(&t->st);
	}
}

static void piece_sent(struct iscsit_txe *e)
{
	struct iscsit_task *t = e->task;

	t->din_txes--;
	if (t->conn->state == CONN_CLOSING || t->din_stopped)
		din_stop(t); /* dropped, not sent */
	else
		scsi_task_din_sent(&t->st, e->din_end);
	din_settle(t);
}

static void din_msg_fn(struct ut_msg *m)
{
	struct iscsit_task *t =
	    (struct iscsit_task *)((char *)m - offsetof(struct iscsit_task, din_msg));
	struct iscsit_conn *c = t->conn;
	const struct iscsit_sess_params *p = &c->sess->p;
	uint32_t upto;
	struct iscsit_txe *e;

	atomic_store(&t->din_posted, false);
	upto = atomic_load(&t->din_upto);
	if (c->state == CONN_CLOSING || t->din_stopped) {
		din_stop(t);
	} else if (upto > t->din_queued) {
		e = iscsit_txe_new();
		if (!e) {
			iscsit_conn_close(c, "out of memory");
			din_stop(t);
			din_settle(t);
			return;
		}
		e->kind = TXE_DATAIN;
		e->task = t;
		e->din_end = upto;
		e->sent = piece_sent;
		t->din_pdus += datain_count(t->din_queued, upto, p->max_xmit_dsl, p->max_burst);
		t->din_queued = upto;
		t->din_txes++;
		t->started = iscsit_now(c->w); /* moving: not stuck in the core (RspTimeout) */
		iscsit_tx_queue(c, e);
	}
	din_settle(t);
}

/* The core's thread: bytes up to off + len are in the ring. */
static void task_din_ready(struct scsi_task *st, uint32_t off, uint32_t len)
{
	struct iscsit_task *t = (struct iscsit_task *)st;

	atomic_store(&t->din_upto, off + len);
	if (!atomic_exchange(&t->din_posted, true)) {
		t->din_msg.fn = din_msg_fn;
		ut_thread_post(&t->conn->w->ut, &t->din_msg);
	}
}

static enum scsi_task_attr map_attr(uint8_t a)
{
	switch (a) {
	case 2:
		return SCSI_ATTR_ORDERED;
	case 3:
		return SCSI_ATTR_HEAD_OF_QUEUE;
	case 4:
		return SCSI_ATTR_ACA;
	default:
		return SCSI_ATTR_SIMPLE; /* 0 untagged, 1 simple */
	}
}

void iscsit_task_submit(struct iscsit_task *t)
{
	struct iscsit_conn *c = t->conn;
	struct scsi_task *st = &t->st;
	enum scsi_sr why;

	if (t->failed) {
		fail_task(t, (enum scsi_sr)t->fail_sr);
		return;
	}
	if (st->dir == SCSI_DIR_READ) {
		uint32_t len = t->edtl;

		/* a long READ holds a ring of ISCSIT_DIN_ROOM, not its whole length */
		if ((c->xp->caps & ISCSIT_XP_DIN_PIECES) && len > ISCSIT_DIN_ROOM) {
			len = ISCSIT_DIN_ROOM;
			st->din_ready = task_din_ready;
		} else if (c->xp->caps & ISCSIT_XP_DIN_LEND) {
			st->din_lend = true;
		}
		if (alloc_buf(t, len, &why)) {
			fail_task(t, why);
			return;
		}
	}
	st->lun = scsi_lun_decode(t->lun_raw);
	st->nexus = &c->sess->nexus;
	st->tag = t->itt;
	st->exp_xfer_len = t->edtl;
	if (t->niov) {
		st->iov = t->iov;
		st->iovcnt = (int)t->niov;
	}
	st->done = task_done_cb;
	st->priv = t;
	t->state = TS_EXEC;
	t->started = iscsit_now(c->w);
	c->nexec++;
	atomic_fetch_add(&c->sess->started, 1);
	scsi_task_execute(st);
}

/* Submit when both conditions hold: its CmdSN turn came and its data is in. */
static void try_submit(struct iscsit_task *t)
{
	if (t->sn_ready && t->data_ready && t->state != TS_EXEC && t->state != TS_RESPOND)
		iscsit_task_submit(t);
}

/* After ExpCmdSN advanced: run the commands that were waiting behind the gap. */
static void drain_cmdsn_queue(struct iscsit_conn *c)
{
	struct iscsit_task *t;

	while ((t = iscsit_cmdsn_ready(c->sess))) {
		if (t->local_abort) {
			/* one still being fetched goes when its transfer ends (data_placed) */
			if (!t->fetching)
				iscsit_task_free(t);
			continue;
		}
		t->counted = true;
		t->sn_ready = true;
		if (t->data_ready)
			t->state = TS_CMDSN_WAIT;
		try_submit(t);
	}
}

/* ---------------------------------------------------------------- R2T */

static void seq_error(struct iscsit_conn *c, struct iscsit_task *t, enum scsi_sr sr,
		      const char *why);

int iscsit_r2t_solicit(struct iscsit_task *t)
{
	struct iscsit_conn *c = t->conn;
	const struct iscsit_sess_params *p = &c->sess->p;

	while (t->nr2t < p->max_outstanding_r2t && t->r2t_next < t->edtl) {
		uint32_t len = t->edtl - t->r2t_next;
		struct iscsit_r2t *r;
		uint8_t hdr[ISCSI_BHS_LEN];
		struct iscsi_sn sn;

		if (len > p->max_burst)
			len = p->max_burst;
		if (t->nr2t == t->r2t_cap) {
			unsigned cap = t->r2t_cap ? t->r2t_cap * 2 : 4;
			struct iscsit_r2t *nr = realloc(t->r2ts, cap * sizeof(*nr));

			if (!nr)
				return 0; /* retried as data arrives */
			t->r2ts = nr;
			t->r2t_cap = cap;
		}
		r = &t->r2ts[t->nr2t++];
		if (c->next_ttt == ISCSI_RSVD_TAG)
			c->next_ttt = 1;
		r->ttt = c->next_ttt++;
		r->off = t->r2t_next;
		r->len = len;
		r->rcvd = 0;
		r->next_sn = 0;
		t->r2t_next += len;
		iscsit_conn_sn(c, &sn, false); /* R2T carries StatSN but does not consume it */
		iscsi_bhs_r2t(hdr, t->lun_raw, t->itt, r->ttt, t->r2t_sn++, r->off, r->len, &sn);
		iscsit_tx_pdu(c, hdr, NULL, 0, false);
	}
	return 0;
}

/* Ask the transport for the rest of a write's data. */
static void solicit(struct iscsit_task *t)
{
	if (t->r2t_next >= t->edtl)
		return;
	if (t->conn->xp->solicit(t) < 0)
		seq_error(t->conn, t, SR_DATA_PHASE_ERROR, "write data could not be fetched");
}

/* ---------------------------------------------------------------- SCSI Command PDU */

static int refuse(struct iscsit_conn *c, struct iscsit_rx *rx, uint8_t reason)
{
	c->cur_reject = reason;
	if (rx->dsl)
		rx->discard = true;
	return RX_CB_OK;
}

int iscsit_cmd_header(struct iscsit_conn *c, struct iscsit_rx *rx)
{
	const struct iscsit_sess_params *p = &c->sess->p;
	struct iscsi_scsi_cmd cmd;
	struct iscsit_task *t;
	uint8_t cdb[ISCSI_CDB_MAX];

	c->cur_task = NULL;
	c->cur_reject = 0;
	if (p->discovery)
		return refuse(c, rx, ISCSI_REJECT_PROTOCOL); /* no SCSI in discovery sessions */
	if (!iscsi_parse_scsi_cmd(rx->bhs, rx->ahs, rx->ahs_len, cdb, sizeof(cdb), &cmd))
		return refuse(c, rx, ISCSI_REJECT_INVALID_FIELD);
	if (cmd.read && cmd.write)
		return refuse(c, rx, ISCSI_REJECT_CMD_UNSUPP); /* bidirectional */
	if (rx->dsl) {
		/* Immediate data must be negotiated, belong to a write and fit the limits. */
		if (!cmd.write || !p->immediate_data || rx->dsl > cmd.edtl ||
		    rx->dsl > p->first_burst || rx->dsl > p->max_recv_dsl)
			return refuse(c, rx, ISCSI_REJECT_PROTOCOL);
	}
	if (!cmd.final && (!cmd.write || p->initial_r2t))
		return refuse(c, rx, ISCSI_REJECT_PROTOCOL); /* unsolicited Data-Out not allowed */
	if (iscsit_task_find(c, cmd.itt) || cmd.itt == ISCSI_RSVD_TAG)
		return refuse(c, rx, ISCSI_REJECT_TASK_IN_PROG);

	t = task_alloc(c);
	if (!t)
		return refuse(c, rx, ISCSI_REJECT_LONG_OP);
	t->itt = cmd.itt;
	t->edtl = cmd.edtl;
	t->cmd_sn = cmd.cmd_sn;
	t->immediate = bhs_immediate(rx->bhs);
	memcpy(t->lun_raw, cmd.lun, 8);
	t->st.attr = map_attr(cmd.attr);
	t->st.dir = cmd.write ? SCSI_DIR_WRITE : cmd.read ? SCSI_DIR_READ : SCSI_DIR_NONE;
	if (cmd.cdb_len > SCSI_CDB_MAX) {
		t->failed = true;
		t->fail_sr = SR_INVALID_FIELD_IN_CDB;
		cmd.cdb_len = SCSI_CDB_MAX;
	}
	memcpy(t->st.cdb, cmd.cdb, cmd.cdb_len);
	t->st.cdb_len = (uint8_t)cmd.cdb_len;
	if (cmd.edtl > c->xp->max_xfer) {
		t->failed = true;
		t->fail_sr = SR_INVALID_FIELD_IN_CDB;
	}
	if (cmd.write && !t->failed) {
		enum scsi_sr why;

		if (alloc_buf(t, t->edtl, &why)) {
			t->failed = true;
			t->fail_sr = why;
		}
	}
	t->unsol_open = !cmd.final;
	if (c->xp->task_init && c->xp->task_init(t, rx->dsl, &rx->why)) {
		iscsit_task_free(t);
		return RX_CB_FATAL;
	}
	if (rx->dsl && (!t->niov || !place_data(t, rx, 0, rx->dsl)))
		rx->discard = true; /* failed task: the data is not kept */
	c->cur_task = t;
	return RX_CB_OK;
}

int iscsit_cmd_pdu(struct iscsit_conn *c, struct iscsit_rx *rx)
{
	struct iscsit_session *s = c->sess;
	const struct iscsit_sess_params *p = &s->p;
	struct iscsit_task *t = c->cur_task;
	enum iscsit_cmdsn_verdict v;

	c->cur_task = NULL;
	if (c->cur_reject) {
		iscsit_send_reject(c, rx->bhs, c->cur_reject);
		c->cur_reject = 0;
		return RX_CB_OK;
	}
	if (t->immediate) {
		/* Immediate commands take no CmdSN slot, so they are counted on their own: at
		 * most QueuedCommands alive per session; beyond, Reject "immediate command
		 * reject" (RFC 7143 11.17.1) and the initiator sends it again later. */
		if (atomic_fetch_add(&s->nimm, 1) >= s->queued_cmds) {
			atomic_fetch_sub(&s->nimm, 1);
			atomic_fetch_add(&s->rejected_imm, 1);
			iscsit_send_reject(c, rx->bhs, ISCSI_REJECT_IMM_CMD);
			iscsit_task_gone(c, t->itt);
			iscsit_task_free(t);
			return RX_CB_OK;
		}
		t->imm_counted = true;
	}
	v = iscsit_cmdsn_check(s, t->cmd_sn, t->immediate, !t->immediate);
	if (v == CMDSN_DROP) {
		/* Outside the window: silently ignored (RFC 7143 4.2.2.1). */
		iscsit_dbg("conn %llu: CmdSN %u outside window, dropped", (unsigned long long)c->id,
			   t->cmd_sn);
		iscsit_task_gone(c, t->itt);
		iscsit_task_free(t);
		return RX_CB_OK;
	}
	t->counted = v == CMDSN_ACCEPT && !t->immediate;
	t->sn_ready = v == CMDSN_ACCEPT;
	hash_add(c, t);
	if (rx->ddigest_bad) {
		/* Immediate data corrupted: the command is rejected (RFC 7143 7.8). */
		iscsit_send_reject(c, rx->bhs, ISCSI_REJECT_DATA_DIGEST);
		iscsit_task_gone(c, t->itt);
		iscsit_task_free(t);
		if (v == CMDSN_ACCEPT)
			drain_cmdsn_queue(c);
		return RX_CB_OK;
	}

	if (t->st.dir == SCSI_DIR_WRITE) {
		t->rcvd = rx->dsl;
		/* With InitialR2T=No the initiator may follow up to FirstBurstLength unsolicited;
		 * R2Ts solicit what comes after. */
		if (t->unsol_open) {
			t->unsol_len = t->edtl < p->first_burst ? t->edtl : p->first_burst;
			if (t->unsol_len < rx->dsl)
				t->unsol_len = rx->dsl;
			/* F=0 with nothing left to send unsolicited: no Data-Out will end it */
			if (t->unsol_len == rx->dsl)
				t->unsol_open = false;
		} else {
			t->unsol_len = rx->dsl;
		}
		t->unsol_rcvd = rx->dsl;
		t->r2t_next = t->unsol_len;
	}
	if (v == CMDSN_QUEUE) {
		t->state = TS_CMDSN_WAIT;
		iscsit_cmdsn_enqueue(s, t);
	}
	if (t->st.dir == SCSI_DIR_WRITE && t->rcvd < t->edtl) {
		t->state = TS_DATA_OUT;
		if (t->failed)
			t->r2t_next = t->edtl; /* nothing to solicit for a refused command */
		solicit(t);
		if (t->failed && !t->unsol_open) {
			/* no data will come for it: answer now */
			t->data_ready = true;
		}
	} else {
		t->data_ready = true;
	}
	if (v == CMDSN_ACCEPT) {
		if (t->data_ready)
			iscsit_task_submit(t);
		drain_cmdsn_queue(c);
	}
	return RX_CB_OK;
}

/* ---------------------------------------------------------------- Data-Out */

static int fatal(struct iscsit_rx *rx, const char *why)
{
	rx->why = why;
	return RX_CB_FATAL;
}

/* A Data-Out that breaks the sequence rules (DataSN, offset, range) ends its command with
 * CHECK CONDITION once the initiator has finished sending, rather than the connection: at
 * ErrorRecoveryLevel 0 nothing can be retransmitted, but other commands need not suffer. */
static void seq_error(struct iscsit_conn *c, struct iscsit_task *t, enum scsi_sr sr,
		      const char *why)
{
	if (!t->failed) {
		iscsit_log("conn %llu: ITT %#x: %s", (unsigned long long)c->id, t->itt, why);
		t->failed = true;
		t->fail_sr = sr;
	}
}

int iscsit_dataout_header(struct iscsit_conn *c, struct iscsit_rx *rx)
{
	const struct iscsit_sess_params *p = &c->sess->p;
	const uint8_t *h = rx->bhs;
	uint32_t itt = bhs_itt(h), ttt = bhs_w20(h), sn = bhs_w36(h), off = bhs_w40(h);
	uint32_t dsl = rx->dsl;
	struct iscsit_task *t;
	bool bad = false;

	c->cur_task = NULL;
	c->cur_ignore = false;
	c->cur_reject = 0;
	c->cur_r2t = -1;
	if (dsl > p->max_recv_dsl)
		return fatal(rx, "Data-Out over MaxRecvDataSegmentLength");
	t = iscsit_task_find(c, itt);
	if (!t || t->state == TS_EXEC || t->state == TS_RESPOND || t->local_abort ||
	    (t->state == TS_CMDSN_WAIT && t->data_ready)) {
		if (recently_gone(c, itt) || (t && (t->failed || t->local_abort)))
			c->cur_ignore = true;
		else
			c->cur_reject = ISCSI_REJECT_INVALID_FIELD;
		if (dsl)
			rx->discard = true;
		return RX_CB_OK;
	}
	if (ttt == ISCSI_RSVD_TAG) {
		if (!t->unsol_open) {
			c->cur_reject = ISCSI_REJECT_PROTOCOL; /* not part of any burst */
			if (dsl)
				rx->discard = true;
			return RX_CB_OK;
		}
		if ((uint64_t)off + dsl > t->unsol_len) {
			seq_error(c, t, SR_DATA_OFFSET_ERROR,
				  "unsolicited Data-Out beyond FirstBurstLength");
			bad = true;
		} else if (p->data_pdu_inorder && off != t->unsol_rcvd) {
			seq_error(c, t, SR_DATA_OFFSET_ERROR,
				  "unsolicited Data-Out offset out of order");
			bad = true;
		} else if (p->data_pdu_inorder && sn != t->unsol_next_sn) {
			seq_error(c, t, SR_DATA_PHASE_ERROR,
				  "unsolicited Data-Out DataSN out of order");
			bad = true;
		}
	} else {
		struct iscsit_r2t *r = NULL;

		for (unsigned i = 0; i < t->nr2t; i++) {
			if (t->r2ts[i].ttt == ttt) {
				r = &t->r2ts[i];
				c->cur_r2t = (int)i;
				break;
			}
		}
		if (!r) {
			c->cur_reject =
			    ISCSI_REJECT_INVALID_FIELD; /* unknown Target Transfer Tag */
			if (dsl)
				rx->discard = true;
			return RX_CB_OK;
		}
		if (off < r->off || (uint64_t)off + dsl > (uint64_t)r->off + r->len ||
		    r->rcvd + dsl > r->len) {
			seq_error(c, t, SR_DATA_OFFSET_ERROR, "Data-Out outside its R2T");
			bad = true;
		} else if (p->data_pdu_inorder && off != r->off + r->rcvd) {
			seq_error(c, t, SR_DATA_OFFSET_ERROR, "Data-Out offset out of order");
			bad = true;
		} else if (p->data_pdu_inorder && sn != r->next_sn) {
			seq_error(c, t, SR_DATA_PHASE_ERROR, "Data-Out DataSN out of order");
			bad = true;
		}
	}
	c->cur_task = t;
	if (dsl && (!t->niov || bad || t->failed || !place_data(t, rx, off, dsl)))
		rx->discard = true;
	return RX_CB_OK;
}

/* Everything the command will get is in: run it (or answer a failed one). */
static void data_complete(struct iscsit_task *t)
{
	t->data_ready = true;
	if (t->sn_ready)
		try_submit(t);
	else
		t->state = TS_CMDSN_WAIT;
}

int iscsit_dataout_pdu(struct iscsit_conn *c, struct iscsit_rx *rx)
{
	struct iscsit_task *t = c->cur_task;
	bool final = bhs_flags(rx->bhs) & ISCSI_FLAG_FINAL;
	uint32_t dsl = rx->dsl;

	c->cur_task = NULL;
	if (c->cur_ignore)
		return RX_CB_OK;
	if (c->cur_reject) {
		iscsit_send_reject(c, rx->bhs, c->cur_reject);
		c->cur_reject = 0;
		return RX_CB_OK;
	}
	if (rx->ddigest_bad) {
		/* ERL 0: reject the PDU; the command ends with a CRC error once its data
		 * sequence is over (RFC 7143 7.8). */
		iscsit_send_reject(c, rx->bhs, ISCSI_REJECT_DATA_DIGEST);
		if (!t->failed) {
			t->failed = true;
			t->fail_sr = SR_PROTOCOL_CRC_ERROR;
		}
	}
	if (c->cur_r2t < 0) {
		t->unsol_rcvd += dsl;
		t->unsol_next_sn++;
		if (final) {
			t->unsol_open = false;
			if (t->unsol_rcvd < t->unsol_len && !t->failed) {
				/* a short unsolicited burst leaves a hole no R2T covers */
				seq_error(c, t, SR_DATA_PHASE_ERROR,
					  "unsolicited burst ended short of FirstBurstLength");
			}
		}
	} else {
		struct iscsit_r2t *r = &t->r2ts[c->cur_r2t];

		r->rcvd += dsl;
		r->next_sn++;
		if (r->rcvd >= r->len || final) {
			if (r->rcvd != r->len)
				seq_error(c, t, SR_DATA_PHASE_ERROR,
					  "R2T burst ended before its desired length");
			/* burst over: retire it and solicit more */
			t->r2ts[c->cur_r2t] = t->r2ts[--t->nr2t];
			if (!t->failed)
				solicit(t);
		}
	}
	t->rcvd += dsl;
	if (t->unsol_open || t->nr2t || t->fetching)
		return RX_CB_OK;
	if (t->failed || (t->rcvd >= t->edtl && t->r2t_next >= t->edtl))
		data_complete(t);
	return RX_CB_OK;
}

/* Out of the session's CmdSN wait queue, if it is there. */
static void unqueue(struct iscsit_conn *c, struct iscsit_task *t)
{
	struct iscsit_session *s = c->sess;

	if (!t->in_waitq || !s)
		return;
	pthread_mutex_lock(&s->lock);
	for (struct iscsit_task **pp = &s->waitq; *pp; pp = &(*pp)->qnext)
		if (*pp == t) {
			*pp = t->qnext;
			break;
		}
	t->in_waitq = false;
	pthread_mutex_unlock(&s->lock);
}

void iscsit_task_data_placed(struct iscsit_task *t, uint32_t len, bool ok)
{
	struct iscsit_conn *c = t->conn;

	t->fetching = false;
	if (c->state == CONN_CLOSING) {
		/* closed while the transfer ran: nothing will run this command any more */
		unqueue(c, t);
		iscsit_task_free(t);
		iscsit_conn_maybe_free(c);
		return;
	}
	if (t->local_abort) {
		/* aborted while the transfer ran; one still in the CmdSN queue goes with it */
		if (!t->in_waitq)
			iscsit_task_free(t);
		return;
	}
	if (ok)
		t->rcvd += len;
	else
		seq_error(t->conn, t, SR_DATA_PHASE_ERROR, "RDMA READ of write data failed");
	if (t->unsol_open)
		return;
	if (t->failed || t->rcvd >= t->edtl)
		data_complete(t);
}

/* ---------------------------------------------------------------- teardown */

void iscsit_conn_drop_tasks(struct iscsit_conn *c)
{
	/* A command whose PDU was cut inside its data segment has a task that is counted in
	 * c->ntasks but not yet in the ITT table: without this the connection is never freed,
	 * its session never released, and a reinstating login waits for it forever. */
	if (c->cur_task && !c->cur_task->in_hash)
		iscsit_task_free(c->cur_task);
	c->cur_task = NULL;
	for (unsigned b = 0; b < ISCSIT_ITT_BUCKETS; b++) {
		struct iscsit_task *t = c->itt[b];

		while (t) {
			struct iscsit_task *nx = t->hnext;

			/* a task whose data the transport is still fetching owns memory the
			 * link writes into: it is freed when that transfer ends (data_placed) */
			if ((t->state == TS_DATA_OUT || t->state == TS_CMDSN_WAIT) &&
			    !t->fetching) {
				unqueue(c, t);
				iscsit_task_free(t);
			}
			t = nx;
		}
	}
}
