/* Connection lifetime, whatever its transport: created on a worker when the transport
 * accepted a link, fed through the receive state machine's handlers, closed on
 * error/logout/timeout, freed once every task it sent into the SCSI core has come back and
 * the transport let go.  All of it runs on the connection's worker thread. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

#define LOGIN_TIMEOUT 30 /* seconds from accept to full feature phase */

void iscsit_conn_mark_dirty(struct iscsit_conn *c)
{
	if (c->on_dirty || c->state == CONN_CLOSING)
		return;
	c->on_dirty = true;
	c->dirty_next = c->w->dirty;
	c->w->dirty = c;
}

void iscsit_conn_mark_ready(struct iscsit_conn *c)
{
	if (c->on_ready || c->state == CONN_CLOSING)
		return;
	c->on_ready = true;
	c->ready_next = c->w->ready;
	c->w->ready = c;
}

void iscsit_conn_pause(struct iscsit_conn *c)
{
	c->rx_paused = true;
	if (c->xp->rx_changed)
		c->xp->rx_changed(c);
}

void iscsit_conn_resume(struct iscsit_conn *c)
{
	if (c->state == CONN_CLOSING)
		return;
	c->rx_paused = false;
	if (c->xp->rx_changed)
		c->xp->rx_changed(c);
	iscsit_conn_mark_ready(c);
}

void iscsit_conn_sn(struct iscsit_conn *c, struct iscsi_sn *sn, bool advance)
{
	sn->stat_sn = advance ? c->stat_sn++ : c->stat_sn;
	if (c->sess) {
		sn->exp_cmd_sn = iscsit_session_exp_cmd_sn(c->sess);
		sn->max_cmd_sn = iscsit_session_max_cmd_sn(c->sess);
	} else {
		sn->exp_cmd_sn = c->login_cmd_sn;
		sn->max_cmd_sn = c->login_cmd_sn;
	}
}

void iscsit_send_reject(struct iscsit_conn *c, const uint8_t *bhs, uint8_t reason)
{
	uint8_t hdr[ISCSI_BHS_LEN];
	struct iscsi_sn sn;

	iscsit_conn_sn(c, &sn, true);
	iscsi_bhs_reject(hdr, reason, &sn);
	iscsit_tx_pdu(c, hdr, bhs, ISCSI_BHS_LEN, true);
	iscsit_dbg("conn %llu: Reject %s reason %#x", (unsigned long long)c->id,
		   iscsi_opcode_name(bhs_opcode(bhs)), reason);
}

void iscsit_conn_request_logout(struct iscsit_conn *c, unsigned secs)
{
	uint8_t hdr[ISCSI_BHS_LEN];
	struct iscsi_sn sn;

	if (c->state != CONN_FFP || c->async_logout_sent)
		return;
	c->async_logout_sent = true;
	iscsit_conn_sn(c, &sn, true);
	iscsi_bhs_async(hdr, ISCSI_ASYNC_LOGOUT_REQ, 0, 0, (uint16_t)secs, &sn, 0);
	iscsit_tx_pdu(c, hdr, NULL, 0, false);
}

/* ---------------------------------------------------------------- receive dispatch */

static bool op_has_scratch_data(uint8_t op)
{
	return op == ISCSI_OP_NOP_OUT || op == ISCSI_OP_TEXT_REQ || op == ISCSI_OP_LOGIN_REQ;
}

static int on_header(void *ctx, struct iscsit_rx *rx)
{
	struct iscsit_conn *c = ctx;
	uint8_t op = bhs_opcode(rx->bhs);

	if (c->state == CONN_LOGIN) {
		/* Only Login Requests until the full feature phase (RFC 7143 6.1). */
		if (op != ISCSI_OP_LOGIN_REQ) {
			rx->why = "non-login PDU during login";
			return RX_CB_FATAL;
		}
		if (rx->dsl > 8192 || rx->ahs_len) {
			rx->why = "login PDU too large";
			return RX_CB_FATAL;
		}
		return RX_CB_OK;
	}
	switch (op) {
	case ISCSI_OP_SCSI_CMD:
		return iscsit_cmd_header(c, rx);
	case ISCSI_OP_DATA_OUT:
		return iscsit_dataout_header(c, rx);
	default:
		/* Anything else is bounded by our MaxRecvDataSegmentLength; the rx machine
		 * discards an oversized segment and on_pdu rejects the PDU. */
		if (!op_has_scratch_data(op) && rx->dsl)
			rx->discard = true;
		return RX_CB_OK;
	}
}

static int on_pdu_dispatch(struct iscsit_conn *c, struct iscsit_rx *rx);

/* After each PDU: a transmit backlog over its share stops input here (backpressure), so a
 * client that sends without reading can make us queue at most one PDU's answer more. */
static int on_pdu(void *ctx, struct iscsit_rx *rx)
{
	struct iscsit_conn *c = ctx;
	int rc = on_pdu_dispatch(c, rx);

	if (rc == RX_CB_OK && c->tx_full)
		return RX_CB_PAUSE;
	return rc;
}

static int on_pdu_dispatch(struct iscsit_conn *c, struct iscsit_rx *rx)
{
	uint8_t op = bhs_opcode(rx->bhs);

	c->last_rx = iscsit_now(c->w);
	c->nop_ttt = ISCSI_RSVD_TAG; /* any PDU proves the initiator alive */
	c->w->pdus_in++;
	if (c->state == CONN_LOGIN)
		return iscsit_login_pdu(c, rx);
	if (c->state == CONN_CLOSING)
		return RX_CB_PAUSE;

	switch (op) {
	case ISCSI_OP_SCSI_CMD:
		return iscsit_cmd_pdu(c, rx);
	case ISCSI_OP_DATA_OUT:
		return iscsit_dataout_pdu(c, rx);
	default:
		break;
	}
	switch (op) {
	case ISCSI_OP_NOP_OUT:
	case ISCSI_OP_TEXT_REQ:
	case ISCSI_OP_TMF_REQ:
	case ISCSI_OP_LOGOUT_REQ:
		break;
	case ISCSI_OP_SNACK_REQ:
		/* ErrorRecoveryLevel 0: nothing to retransmit from */
		iscsit_send_reject(c, rx->bhs, ISCSI_REJECT_SNACK);
		return RX_CB_OK;
	case ISCSI_OP_LOGIN_REQ:
		iscsit_send_reject(c, rx->bhs, ISCSI_REJECT_PROTOCOL);
		return RX_CB_OK;
	default:
		iscsit_send_reject(c, rx->bhs, ISCSI_REJECT_CMD_UNSUPP);
		return RX_CB_OK;
	}
	if (rx->discard) {
		/* data segment over MaxRecvDataSegmentLength (RFC 7143 13.12) */
		iscsit_send_reject(c, rx->bhs, ISCSI_REJECT_PROTOCOL);
		return RX_CB_OK;
	}
	if (rx->ddigest_bad) {
		iscsit_send_reject(c, rx->bhs, ISCSI_REJECT_DATA_DIGEST);
		return RX_CB_OK;
	}
	switch (op) {
	case ISCSI_OP_NOP_OUT:
		return iscsit_nop_pdu(c, rx);
	case ISCSI_OP_TEXT_REQ:
		return iscsit_text_pdu(c, rx);
	case ISCSI_OP_TMF_REQ:
		return iscsit_tmf_pdu(c, rx);
	default:
		return iscsit_logout_pdu(c, rx);
	}
}

const struct iscsit_rx_ops iscsit_conn_rx_ops = {
    .on_header = on_header,
    .on_pdu = on_pdu,
};

int iscsit_conn_feed(struct iscsit_conn *c, const uint8_t *pdu, size_t len)
{
	int rc;

	if (c->state == CONN_CLOSING)
		return RX_CB_FATAL;
	rc = iscsit_rx_feed(&c->rx, pdu, len, &iscsit_conn_rx_ops, c);
	if (rc < 0) {
		if (c->state != CONN_CLOSING)
			iscsit_conn_close(c, c->rx.why ? c->rx.why : "protocol error");
		return RX_CB_FATAL;
	}
	return rc;
}

void iscsit_conn_input(struct iscsit_conn *c)
{
	if (c->state == CONN_CLOSING || c->rx_paused)
		return;
	c->xp->input(c);
}

void iscsit_conn_output(struct iscsit_conn *c)
{
	if (c->state == CONN_CLOSING)
		return;
	c->xp->output(c);
}

/* ---------------------------------------------------------------- lifetime */

struct iscsit_conn *iscsit_conn_new(struct iscsit_worker *w, const struct iscsit_xport *xp,
				    void *xp_priv, struct iscsit_portal *p,
				    const struct sockaddr_storage *peer,
				    const struct sockaddr_storage *local)
{
	struct iscsit_ctx *ctx = w->ctx;
	struct iscsit_conn *c = calloc(1, sizeof(*c));

	if (!c || iscsit_rx_init(&c->rx)) {
		free(c);
		atomic_fetch_sub(&w->nconns, 1);
		return NULL;
	}
	c->id = atomic_fetch_add(&ctx->next_conn_id, 1) + 1;
	c->ctx = ctx;
	c->w = w;
	c->xp = xp;
	c->xp_priv = xp_priv;
	c->portal = p;
	c->state = CONN_LOGIN;
	c->nop_ttt = ISCSI_RSVD_TAG;
	c->next_ttt = 1;
	c->login_start = c->last_rx = iscsit_now(w);
	c->peer = *peer;
	c->local = *local;
	iscsit_sockaddr_str(&c->peer, c->peer_str, sizeof(c->peer_str), true);
	iscsit_sockaddr_str(&c->local, c->local_str, sizeof(c->local_str), true);
	iscsit_worker_link(w, c);
	atomic_fetch_add(&ctx->nconns, 1);
	iscsit_log("conn %llu: %s -> %s (portal %s) over %s, served by worker %u on cpu %d",
		   (unsigned long long)c->id, c->peer_str, c->local_str, p->str, xp->name, w->idx,
		   w->ut.cpu);
	return c;
}

void iscsit_conn_close(struct iscsit_conn *c, const char *why)
{
	if (c->state == CONN_CLOSING)
		return;
	iscsit_log("conn %llu: %s closed: %s (rx %llu PDUs/%llu bytes, tx %llu PDUs/%llu bytes)",
		   (unsigned long long)c->id, c->peer_str, why, (unsigned long long)c->rx.pdus,
		   (unsigned long long)c->rx.bytes, (unsigned long long)c->tx_pdus,
		   (unsigned long long)c->tx_bytes);
	c->state = CONN_CLOSING;
	iscsit_place_cancel(c);
	c->xp->close(c);
	iscsit_login_free(c);
	iscsit_conn_drop_tasks(c);
	iscsit_text_free(&c->text_rsp);
	if (c->wait_for) {
		/* we were waiting for an old session to go: stop waiting */
		pthread_mutex_lock(&c->ctx->sess_lock);
		if (c->wait_for && c->wait_for->waiter == c)
			c->wait_for->waiter = NULL;
		c->wait_for = NULL;
		pthread_mutex_unlock(&c->ctx->sess_lock);
	}
	iscsit_conn_maybe_free(c);
}

void iscsit_conn_maybe_free(struct iscsit_conn *c)
{
	struct iscsit_ctx *ctx = c->ctx;
	struct iscsit_worker *w = c->w;
	struct iscsit_session *s = c->sess;

	if (c->state != CONN_CLOSING || c->ntasks || c->ntmf || (c->xp->busy && c->xp->busy(c)))
		return;
	/* Detach from the session under the table lock, so that nobody finds c through it
	 * once we decided to free (posters take a reference under the same lock). */
	pthread_mutex_lock(&ctx->sess_lock);
	if (atomic_load(&c->refs)) {
		pthread_mutex_unlock(&ctx->sess_lock);
		return;
	}
	if (s && s->conn == c)
		s->conn = NULL;
	pthread_mutex_unlock(&ctx->sess_lock);

	iscsit_worker_unlink(w, c);
	if (s)
		iscsit_session_release(s);
	c->xp->release(c);
	iscsit_rx_free(&c->rx);
	iscsit_task_cache_free(c);
	iscsit_tgt_put(c->tgt);
	free(c);
	atomic_fetch_sub(&w->nconns, 1);
	if (atomic_fetch_sub(&ctx->nconns, 1) == 1) {
		pthread_mutex_lock(&ctx->drain_lock);
		pthread_cond_broadcast(&ctx->drain_cv);
		pthread_mutex_unlock(&ctx->drain_lock);
	}
}

void iscsit_conn_put(struct iscsit_conn *c)
{
	if (atomic_fetch_sub(&c->refs, 1) == 1)
		iscsit_conn_maybe_free(c);
}

struct close_msg {
	struct ut_msg m;
	struct iscsit_conn *c;
	const char *why;
};

static void close_fn(struct ut_msg *m)
{
	struct close_msg *cm = (struct close_msg *)m;
	struct iscsit_conn *c = cm->c;

	iscsit_conn_close(c, cm->why);
	free(cm);
	iscsit_conn_put(c);
}

void iscsit_conn_close_async(struct iscsit_conn *c, const char *why)
{
	struct close_msg *cm = malloc(sizeof(*cm));

	/* Caller holds ctx->sess_lock (c found through a session), so c is alive here. */
	if (!cm)
		return;
	atomic_fetch_add(&c->refs, 1);
	cm->m.fn = close_fn;
	cm->c = c;
	cm->why = why;
	ut_thread_post(&c->w->ut, &cm->m);
}

void iscsit_conn_enter_ffp(struct iscsit_conn *c)
{
	c->state = CONN_FFP;
	c->rx.hdigest_on = c->sess->p.header_digest;
	c->rx.ddigest_on = c->sess->p.data_digest;
	c->rx.max_dsl = c->sess->p.max_recv_dsl;
	c->last_rx = iscsit_now(c->w);
	c->xp->enter_ffp(c);
}

void iscsit_conn_tick(struct iscsit_conn *c, time_t now)
{
	const struct iscsit_tgt_params *tp;

	switch (c->state) {
	case CONN_LOGIN:
		if (now - c->login_start > LOGIN_TIMEOUT)
			iscsit_conn_close(c, "login timeout");
		return;
	case CONN_FFP:
		break;
	default:
		return;
	}
	tp = c->tgt ? &c->tgt->params : &c->ctx->disc_params;
	if (c->nop_ttt != ISCSI_RSVD_TAG) {
		if (now - c->nop_sent >= (time_t)tp->nop_in_timeout) {
			iscsit_conn_close(c, "no answer to NOP-In (NopInTimeout)");
			return;
		}
	}
	if (tp->nop_in_interval && c->nop_ttt == ISCSI_RSVD_TAG &&
	    now - c->last_rx >= (time_t)tp->nop_in_interval)
		iscsit_nop_ping(c);
	/* RspTimeout (SCST): a command stuck in the core that long takes its connection down;
	 * the connection still waits for the command to come back before it is freed. */
	if (c->nexec && tp->rsp_timeout) {
		for (unsigned b = 0; b < ISCSIT_ITT_BUCKETS; b++) {
			for (struct iscsit_task *t = c->itt[b]; t; t = t->hnext) {
				if (t->state == TS_EXEC &&
				    now - t->started > (time_t)tp->rsp_timeout) {
					iscsit_log(
					    "conn %llu: ITT %#x (opcode %#x) in the core for %lds: "
					    "RspTimeout",
					    (unsigned long long)c->id, t->itt, t->st.cdb[0],
					    (long)(now - t->started));
					iscsit_conn_close(c, "RspTimeout");
					return;
				}
			}
		}
	}
}
