/* SRP login negotiation (see srp_login.h). */
#include "transports/srp/srp_login.h"

#include <string.h>

/* The reason to refuse this login, or 0 to accept it. */
static uint32_t refusal(const struct srp_login_req *req, const struct srp_login_limits *lim,
			bool target_found, unsigned channels)
{
	uint8_t mca = req->req_flags & SRP_MCA_MASK;

	if (!target_found)
		return SRP_REJ_UNABLE_ASSOCIATE_CHANNEL;
	if (req->req_it_iu_len < SRP_MIN_IT_IU_LEN)
		return SRP_REJ_UNABLE_ESTABLISH_CHANNEL;
	if (req->req_it_iu_len > lim->max_it_iu_len)
		return SRP_REJ_IT_IU_LEN_TOO_LARGE;
	if (req->req_buf_fmt && !(req->req_buf_fmt & lim->buf_fmt))
		return SRP_REJ_UNSUPPORTED_DESC_FMT;
	if (mca != SRP_MCA_SINGLE && mca != SRP_MCA_MULTI)
		return SRP_REJ_UNABLE_ESTABLISH_CHANNEL; /* reserved action code */
	if (mca == SRP_MCA_MULTI && channels >= lim->max_channels)
		return SRP_REJ_CHANNEL_LIMIT_REACHED;
	return 0;
}

void srp_login_decide(const struct srp_login_req *req, const struct srp_login_limits *lim,
		      bool target_found, unsigned channels, struct srp_login_decision *out)
{
	bool single = (req->req_flags & SRP_MCA_MASK) == SRP_MCA_SINGLE;
	uint8_t mcr;

	memset(out, 0, sizeof(*out));
	out->rej_reason = refusal(req, lim, target_found, channels);
	if (out->rej_reason)
		return;
	if (single) {
		out->terminate_others = channels > 0;
		mcr = channels ? SRP_RSP_MCR_TERMINATED : SRP_RSP_MCR_NO_CHAN;
	} else {
		mcr = channels ? SRP_RSP_MCR_MAINTAINED : SRP_RSP_MCR_NO_CHAN;
	}
	out->accept = true;
	out->it_iu_len = req->req_it_iu_len;
	/* Immediate data only where the data can start after the SRP_CMD header and the 4-byte
	 * immediate descriptor, and inside the IU; otherwise the login still succeeds without. */
	if (lim->imm && (req->req_flags & SRP_REQ_IMMED) &&
	    req->imm_data_offset >= SRP_CMD_HDR_LEN + SRP_IMM_DESC_LEN &&
	    req->imm_data_offset < req->req_it_iu_len) {
		out->imm = true;
		out->imm_data_offset = req->imm_data_offset;
	}
	out->rsp.tag = req->tag;
	out->rsp.req_lim_delta = lim->req_lim;
	out->rsp.max_it_iu_len = req->req_it_iu_len;
	out->rsp.max_ti_iu_len = lim->max_ti_iu_len;
	out->rsp.buf_fmt = lim->buf_fmt;
	out->rsp.rsp_flags = (uint8_t)(mcr | (out->imm ? SRP_RSP_IMMED_SUPPORTED : 0));
}
