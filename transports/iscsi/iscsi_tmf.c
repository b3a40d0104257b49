/* Task Management Function Request/Response (RFC 7143 11.5-11.6, RFC 7144 for the SAM-5
 * queries and I_T NEXUS RESET).  Commands that have not reached the SCSI core yet (collecting
 * write data, or waiting for their CmdSN turn) are aborted here; the rest is the core's job
 * through scsi_tmf_execute(), whose completion comes back to this connection's worker.  The
 * response goes out after every aborted task has come back, so none is left behind. */
#include <stdlib.h>
#include <string.h>

#include "scsi/scsi_lun.h"
#include "transports/iscsi/iscsi_int.h"

struct iscsit_tmf {
	struct scsi_tmf tmf;
	struct ut_msg msg;
	struct iscsit_conn *c;
	uint32_t itt;
	uint8_t func;
};

static void send_tmf_rsp(struct iscsit_conn *c, uint32_t itt, uint8_t response, bool close)
{
	uint8_t hdr[ISCSI_BHS_LEN];
	struct iscsi_sn sn;

	iscsit_conn_sn(c, &sn, true);
	iscsi_bhs_tmf_rsp(hdr, itt, response, &sn);
	if (close)
		iscsit_tx_pdu_then_close(c, hdr, "TARGET COLD RESET");
	else
		iscsit_tx_pdu(c, hdr, NULL, 0, false);
}

static uint8_t map_resp(enum scsi_tmf_resp r)
{
	switch (r) {
	case SCSI_TMF_COMPLETE:
		return ISCSI_TMF_RSP_COMPLETE;
	case SCSI_TMF_SUCCEEDED:
		return ISCSI_TMF_RSP_SUCCEEDED;
	case SCSI_TMF_NO_TASK:
		return ISCSI_TMF_RSP_NO_TASK;
	case SCSI_TMF_NO_LUN:
		return ISCSI_TMF_RSP_NO_LUN;
	case SCSI_TMF_NOT_SUPPORTED:
		return ISCSI_TMF_RSP_NOT_SUPPORTED;
	case SCSI_TMF_REJECTED:
	default:
		return ISCSI_TMF_RSP_REJECTED;
	}
}

/* A cold reset ends every session of the target (RFC 7143 11.5.1): close their connections. */
static void cold_reset_others(struct iscsit_conn *c)
{
	struct iscsit_ctx *ctx = c->ctx;

	pthread_mutex_lock(&ctx->sess_lock);
	for (struct iscsit_session *s = ctx->sessions; s; s = s->next)
		if (s->tgt == c->tgt && s->conn && s->conn != c)
			iscsit_conn_close_async(s->conn, "TARGET COLD RESET");
	pthread_mutex_unlock(&ctx->sess_lock);
}

static void tmf_complete_fn(struct ut_msg *m)
{
	struct iscsit_tmf *it = (struct iscsit_tmf *)((char *)m - offsetof(struct iscsit_tmf, msg));
	struct iscsit_conn *c = it->c;
	bool cold = it->func == ISCSI_TMF_TARGET_COLD_RESET;

	c->ntmf--;
	if (c->state != CONN_CLOSING) {
		send_tmf_rsp(c, it->itt, map_resp(it->tmf.resp), cold);
		if (cold)
			cold_reset_others(c);
		if (c->state == CONN_LOGOUT)
			iscsit_logout_maybe_answer(c);
	}
	free(it);
	if (c->state == CONN_CLOSING)
		iscsit_conn_maybe_free(c);
}

static void tmf_done_cb(struct scsi_tmf *tmf)
{
	struct iscsit_tmf *it = (struct iscsit_tmf *)tmf;

	it->msg.fn = tmf_complete_fn;
	ut_thread_post(&it->c->w->ut, &it->msg);
}

/* Abort locally the tasks the core has not seen; returns how many matched. */
static unsigned abort_local(struct iscsit_conn *c, bool by_lun, uint64_t lun, bool by_tag,
			    uint32_t tag)
{
	unsigned n = 0;

	for (unsigned b = 0; b < ISCSIT_ITT_BUCKETS; b++) {
		for (struct iscsit_task *t = c->itt[b], *nx; t; t = nx) {
			nx = t->hnext;
			if (t->state != TS_DATA_OUT && t->state != TS_CMDSN_WAIT)
				continue;
			if (by_tag && t->itt != tag)
				continue;
			if (by_lun && scsi_lun_decode(t->lun_raw) != lun)
				continue;
			n++;
			if (t->in_waitq || t->fetching) {
				/* still queued for its CmdSN turn, or the transport still
				 * writes into its buffer: marked, freed when that ends */
				t->local_abort = true;
				t->state = TS_CMDSN_WAIT;
				iscsit_task_gone(c, t->itt);
				continue;
			}
			iscsit_task_gone(c, t->itt);
			iscsit_task_free(t);
		}
	}
	return n;
}

int iscsit_tmf_pdu(struct iscsit_conn *c, struct iscsit_rx *rx)
{
	const uint8_t *h = rx->bhs;
	uint8_t func = h[1] & 0x7f;
	uint32_t itt = bhs_itt(h), rtt = bhs_w20(h), cmd_sn = bhs_w24(h), ref_sn = bhs_w32(h);
	uint64_t lun = scsi_lun_decode(bhs_lun(h));
	struct iscsit_session *s = c->sess;
	struct iscsit_tmf *it;
	enum scsi_tmf_fn fn;

	if (iscsit_cmdsn_check(s, cmd_sn, bhs_immediate(h), false) == CMDSN_DROP)
		return RX_CB_OK;
	if (s->p.discovery) {
		iscsit_send_reject(c, h, ISCSI_REJECT_PROTOCOL);
		return RX_CB_OK;
	}
	scsi_nexus_count_tmf(&s->nexus); /* the admin socket's task_mgmt counter */
	switch (func) {
	case ISCSI_TMF_ABORT_TASK:
		fn = SCSI_TMF_ABORT_TASK;
		break;
	case ISCSI_TMF_ABORT_TASK_SET:
		fn = SCSI_TMF_ABORT_TASK_SET;
		break;
	case ISCSI_TMF_CLEAR_ACA:
		fn = SCSI_TMF_CLEAR_ACA;
		break;
	case ISCSI_TMF_CLEAR_TASK_SET:
		fn = SCSI_TMF_CLEAR_TASK_SET;
		break;
	case ISCSI_TMF_LUN_RESET:
		fn = SCSI_TMF_LOGICAL_UNIT_RESET;
		break;
	case ISCSI_TMF_TARGET_WARM_RESET:
		fn = SCSI_TMF_TARGET_WARM_RESET;
		break;
	case ISCSI_TMF_TARGET_COLD_RESET:
		fn = SCSI_TMF_TARGET_COLD_RESET;
		break;
	case ISCSI_TMF_QUERY_TASK:
		fn = SCSI_TMF_QUERY_TASK;
		break;
	case ISCSI_TMF_QUERY_TASK_SET:
		fn = SCSI_TMF_QUERY_TASK_SET;
		break;
	case ISCSI_TMF_I_T_NEXUS_RESET:
		fn = SCSI_TMF_I_T_NEXUS_RESET;
		break;
	case ISCSI_TMF_QUERY_ASYNC_EVENT:
		fn = SCSI_TMF_QUERY_ASYNC_EVENT;
		break;
	case ISCSI_TMF_TASK_REASSIGN:
		/* needs ErrorRecoveryLevel 2 */
		send_tmf_rsp(c, itt, ISCSI_TMF_RSP_NO_REASSIGN, false);
		return RX_CB_OK;
	default:
		send_tmf_rsp(c, itt, ISCSI_TMF_RSP_REJECTED, false);
		return RX_CB_OK;
	}

	if (fn == SCSI_TMF_ABORT_TASK) {
		struct iscsit_task *t = iscsit_task_find(c, rtt);

		if (!t || t->state == TS_RESPOND) {
			/* Gone already, or never seen: RefCmdSN still ahead in the window means
			 * "consider it received" and complete; behind means it completed. */
			uint32_t exp = iscsit_session_exp_cmd_sn(s);
			uint32_t max = iscsit_session_max_cmd_sn(s);

			send_tmf_rsp(c, itt,
				     !t && sn_le(exp, ref_sn) && sn_le(ref_sn, max)
					 ? ISCSI_TMF_RSP_COMPLETE
					 : ISCSI_TMF_RSP_NO_TASK,
				     false);
			return RX_CB_OK;
		}
		if (t->state == TS_DATA_OUT || t->state == TS_CMDSN_WAIT) {
			abort_local(c, false, 0, true, rtt);
			send_tmf_rsp(c, itt, ISCSI_TMF_RSP_COMPLETE, false);
			return RX_CB_OK;
		}
	} else if (fn == SCSI_TMF_ABORT_TASK_SET || fn == SCSI_TMF_CLEAR_TASK_SET ||
		   fn == SCSI_TMF_LOGICAL_UNIT_RESET) {
		abort_local(c, true, lun, false, 0);
	} else if (fn == SCSI_TMF_I_T_NEXUS_RESET || fn == SCSI_TMF_TARGET_WARM_RESET ||
		   fn == SCSI_TMF_TARGET_COLD_RESET) {
		abort_local(c, false, 0, false, 0);
	}

	it = calloc(1, sizeof(*it));
	if (!it) {
		send_tmf_rsp(c, itt, ISCSI_TMF_RSP_REJECTED, false);
		return RX_CB_OK;
	}
	it->c = c;
	it->itt = itt;
	it->func = func;
	it->tmf.fn = fn;
	it->tmf.lun = lun;
	it->tmf.ref_tag = rtt;
	it->tmf.nexus = &s->nexus;
	it->tmf.done = tmf_done_cb;
	it->tmf.priv = it;
	c->ntmf++;
	scsi_tmf_execute(&it->tmf);
	return RX_CB_OK;
}
