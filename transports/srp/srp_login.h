/* SRP login negotiation: from an SRP_LOGIN_REQ, the target's limits and what already exists
 * for the I_T nexus, decide between SRP_LOGIN_RSP (with the negotiated IU lengths, request
 * limit, buffer formats, multichannel result and immediate data) and SRP_LOGIN_REJ (reason).
 * Pure: the channel code applies the decision. */
#ifndef UTGT_SRP_LOGIN_H
#define UTGT_SRP_LOGIN_H

#include <stdbool.h>
#include <stdint.h>

#include "transports/srp/srp_proto.h"

struct srp_login_limits {
	uint32_t max_it_iu_len; /* largest request IU the target will post receive buffers for */
	uint32_t max_ti_iu_len; /* the target's responses are at most this long */
	uint32_t req_lim;	/* credits granted per channel */
	uint16_t buf_fmt;	/* SRP_BUF_FMT_* the target accepts */
	bool imm;		/* immediate data accepted */
	unsigned max_channels;	/* per I_T nexus */
};

struct srp_login_decision {
	bool accept;
	uint32_t rej_reason;	  /* when !accept */
	struct srp_login_rsp rsp; /* when accept */
	bool terminate_others;	  /* SINGLE: the nexus's existing channels must go */
	uint32_t it_iu_len;	  /* receive buffer size for this channel */
	bool imm;
	uint16_t imm_data_offset;
};

/* target_found: the login's target port id names a target this daemon serves.
 * channels: live channels of the same I_T nexus (initiator port id + target). */
void srp_login_decide(const struct srp_login_req *req, const struct srp_login_limits *lim,
		      bool target_found, unsigned channels, struct srp_login_decision *out);

#endif
