/* SRP_TSK_MGMT onto the SCSI core's task management: ABORT TASK, ABORT TASK SET, CLEAR TASK
 * SET, LOGICAL UNIT RESET, CLEAR ACA.  The answer is an SRP_RSP with response data (RSPVALID,
 * four bytes, the code in the last).  Commands a TMF aborts get no SRP_RSP of their own (SAM);
 * their credits come back with this response or an SRP_CRED_REQ. */
#include "scsi/scsi_lun.h"
#include "common/ut_log.h"
#include "transports/srp/srp_int.h"
#include "transports/srp/srp_iu.h"

static uint8_t srp_code(enum scsi_tmf_resp resp)
{
	switch (resp) {
	case SCSI_TMF_COMPLETE:
	case SCSI_TMF_NO_TASK: /* ABORT TASK of a command already done: function complete */
		return SRP_RSP_CODE_COMPLETE;
	case SCSI_TMF_SUCCEEDED:
		return SRP_RSP_CODE_SUCCEEDED;
	case SCSI_TMF_NO_LUN:
		return SRP_RSP_CODE_INCORRECT_LUN;
	case SCSI_TMF_NOT_SUPPORTED:
		return SRP_RSP_CODE_NOT_SUPPORTED;
	case SCSI_TMF_REJECTED:
	default:
		return SRP_RSP_CODE_FAILED;
	}
}

static void tmf_done_fn(struct ut_msg *m)
{
	struct srpt_req *r = (struct srpt_req *)((char *)m - offsetof(struct srpt_req, msg));

	r->tmf_code = srp_code(r->tmf.resp);
	ut_log(LOG_INFO, "ib_srpt: %s: task management function 0x%02x done: code %u",
		r->ch->iname, r->cmd.task_attr, r->tmf_code);
	srpt_req_respond(r);
}

static void tmf_done(struct scsi_tmf *tmf)
{
	struct srpt_req *r = tmf->priv;

	r->msg.fn = tmf_done_fn;
	srpt_io->call(r->ch->conn, &r->msg);
}

static bool map_fn(uint8_t f, enum scsi_tmf_fn *out)
{
	switch (f) {
	case SRP_TMF_ABORT_TASK:
		*out = SCSI_TMF_ABORT_TASK;
		return true;
	case SRP_TMF_ABORT_TASK_SET:
		*out = SCSI_TMF_ABORT_TASK_SET;
		return true;
	case SRP_TMF_CLEAR_TASK_SET:
		*out = SCSI_TMF_CLEAR_TASK_SET;
		return true;
	case SRP_TMF_LUN_RESET:
		*out = SCSI_TMF_LOGICAL_UNIT_RESET;
		return true;
	case SRP_TMF_CLEAR_ACA:
		*out = SCSI_TMF_CLEAR_ACA;
		return true;
	default:
		return false;
	}
}

/* Commands of this channel the core has not seen yet (waiting for pool chunks, or for their
 * data-out to arrive by RDMA READ) are the transport's to abort: they are dropped without a
 * response, their credits come back like any aborted command's. */
static unsigned abort_local(struct srpt_ch *ch, enum scsi_tmf_fn fn, uint64_t lun, uint64_t tag)
{
	unsigned n = 0;

	if (fn != SCSI_TMF_ABORT_TASK && fn != SCSI_TMF_ABORT_TASK_SET &&
	    fn != SCSI_TMF_CLEAR_TASK_SET && fn != SCSI_TMF_LOGICAL_UNIT_RESET)
		return 0;
	for (unsigned i = 0; i < ch->nreqs; i++) {
		struct srpt_req *x = &ch->reqs[i];
		bool pre_core = x->state == REQ_WAIT_BUF || x->state == REQ_READ ||
				(x->state == REQ_WAIT_SQ && x->is_read_wait);

		if (x->is_tmf || !pre_core || x->aborted || x->st.lun != lun)
			continue;
		if (fn == SCSI_TMF_ABORT_TASK && x->st.tag != tag)
			continue;
		n++;
		if (x->state == REQ_READ) {
			x->aborted = true; /* dropped when its RDMA READ completes */
			continue;
		}
		if (x->state == REQ_WAIT_BUF)
			rdma_pool_cancel(srpt_io->pool(ch->conn), &x->pw);
		else
			srpt_ch_sq_remove(ch, x);
		srpt_ch_req_free(ch, x);
	}
	return n;
}

void srpt_tmf_start(struct srpt_ch *ch, struct srpt_req *r)
{
	struct srp_tsk_mgmt tm;
	enum scsi_tmf_fn fn;

	r->is_tmf = true;
	if (ch->nexus)
		scsi_nexus_count_tmf(&ch->nexus->nx); /* the admin socket's task_mgmt counter */
	if (srp_parse_tsk_mgmt(r->iu->data, r->iu_len, &tm)) {
		memcpy(r->cmd.tag.b, r->iu->data + SRP_TAG_OFF, 8);
		r->tmf_code = SRP_RSP_CODE_FIELDS_INVALID;
		srpt_req_respond(r);
		return;
	}
	r->cmd.tag = tm.tag;
	r->cmd.sol_not = tm.sol_not;
	r->cmd.task_attr = tm.func; /* kept for the log */
	if (!map_fn(tm.func, &fn)) {
		ut_log(LOG_NOTICE, "ib_srpt: %s: task management function 0x%02x not supported",
			ch->iname, tm.func);
		r->tmf_code = SRP_RSP_CODE_NOT_SUPPORTED;
		srpt_req_respond(r);
		return;
	}
	ut_log(LOG_INFO, "ib_srpt: %s: task management function 0x%02x, LUN %llu%s", ch->iname,
		tm.func, (unsigned long long)scsi_lun_decode(tm.lun),
		abort_local(ch, fn, scsi_lun_decode(tm.lun), srp_tag_u64(tm.task_tag))
		    ? " (commands not yet in the core dropped)"
		    : "");
	r->tmf.fn = fn;
	r->tmf.lun = scsi_lun_decode(tm.lun);
	r->tmf.ref_tag = srp_tag_u64(tm.task_tag);
	r->tmf.nexus = &ch->nexus->nx;
	r->tmf.done = tmf_done;
	r->tmf.priv = r;
	r->state = REQ_EXEC;
	scsi_tmf_execute(&r->tmf);
}
