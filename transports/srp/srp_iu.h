/* Reading and writing SRP information units.  Pure functions over byte buffers: no channel,
 * no device, so every malformed case is testable in tests/unit/test_srp_iu.c. */
#ifndef UTGT_SRP_IU_H
#define UTGT_SRP_IU_H

#include "transports/srp/srp_proto.h"

/* Opcode and tag of any IU; SRP_IU_NO_TAG when it is too short to carry a tag. */
enum srp_iu_err srp_iu_peek(const uint8_t *iu, size_t len, uint8_t *op, struct srp_tag *tag);

/* Login request in the RDMA/CM private data layout (56 bytes; longer is accepted, the rest
 * is padding) and in the IB CM / r16a layout (64 bytes). */
enum srp_iu_err srp_parse_login_rdma(const uint8_t *p, size_t len, struct srp_login_req *out);
enum srp_iu_err srp_parse_login_ib(const uint8_t *p, size_t len, struct srp_login_req *out);
size_t srp_build_login_rdma(uint8_t out[SRP_LOGIN_REQ_RDMA_LEN], const struct srp_login_req *r);

size_t srp_build_login_rsp(uint8_t out[SRP_LOGIN_RSP_LEN], const struct srp_login_rsp *r);
size_t srp_build_login_rej(uint8_t out[SRP_LOGIN_REJ_LEN], const struct srp_login_rej *r);
/* The initiator's side of the same (utgt-bench's srp engine, tests). */
enum srp_iu_err srp_parse_login_rsp(const uint8_t *p, size_t len, struct srp_login_rsp *out);
enum srp_iu_err srp_parse_login_rej(const uint8_t *p, size_t len, struct srp_login_rej *out);

/* SRP_CMD: every length, count and offset checked against len and the negotiated limits.
 * On an error about one direction's descriptor, *bad_dir says which (for the logout reason). */
enum srp_iu_err srp_parse_cmd(const uint8_t *iu, size_t len, const struct srp_cmd_limits *lim,
			      struct srp_cmd *out, enum srp_dir *bad_dir);
/* Descriptor i (< c->ndesc) of a parsed command. */
struct srp_desc srp_cmd_desc(const uint8_t *iu, const struct srp_cmd *c, unsigned i);

enum srp_iu_err srp_parse_tsk_mgmt(const uint8_t *iu, size_t len, struct srp_tsk_mgmt *out);

/* What goes into an SRP_RSP. */
struct srp_rsp_info {
	struct srp_tag tag;
	uint32_t req_lim_delta;
	uint8_t status;
	uint8_t flags; /* SRP_RSP_F_DO*, SRP_RSP_F_DI* (RSPVALID/SNSVALID are set by the builder) */
	uint32_t data_out_resid;
	uint32_t data_in_resid;
	int resp_code; /* < 0: no response data */
	const uint8_t *sense;
	uint32_t sense_len;
};
/* Residual flags and counts from the SCSI core's view (kind: 0 none, 1 under, 2 over). */
void srp_rsp_set_resid(struct srp_rsp_info *r, enum srp_dir dir, int kind, uint32_t resid);
/* Build into out (room bytes, at least SRP_RSP_HDR_LEN + 4); sense is cut to what fits (the
 * initiator's receive buffers are max_ti_iu_len long).  Returns the IU length. */
size_t srp_build_rsp(uint8_t *out, size_t room, const struct srp_rsp_info *r);
/* Whether the initiator asked for a solicited event on this response (SOLNT bits). */
bool srp_rsp_solicited(uint8_t sol_not, uint8_t status);

size_t srp_build_t_logout(uint8_t out[SRP_T_LOGOUT_LEN], uint32_t reason, struct srp_tag tag);
size_t srp_build_cred_req(uint8_t out[SRP_CRED_REQ_LEN], uint32_t delta, struct srp_tag tag);
size_t srp_build_cred_rsp(uint8_t out[SRP_CRED_RSP_LEN], struct srp_tag tag);
size_t srp_build_aer_rsp(uint8_t out[SRP_AER_RSP_LEN], struct srp_tag tag);
size_t srp_build_i_logout(uint8_t out[SRP_I_LOGOUT_LEN], struct srp_tag tag);

/* Initiator side: an SRP_CMD with the given descriptors (fmt DIRECT for one, INDIRECT for
 * several, all in the IU), or immediate data (fmt IMM: the data is sent after the IU header
 * at imm_off, not copied here).  Returns the IU length, 0 when it does not fit room. */
struct srp_cmd_build {
	struct srp_tag tag;
	uint8_t lun[8];
	uint8_t task_attr;
	const uint8_t *cdb;
	uint8_t cdb_len; /* up to 16 + 252 by the format; utgt's own limit applies on receive */
	enum srp_dir dir;
	enum srp_desc_fmt fmt;
	const struct srp_desc *descs;
	unsigned ndesc;
	uint32_t imm_len;
	uint16_t imm_off;
	struct srp_desc table; /* INDIRECT: where the table lives in the initiator's memory */
};
size_t srp_build_cmd(uint8_t *out, size_t room, const struct srp_cmd_build *b);
size_t srp_build_tsk_mgmt(uint8_t out[SRP_TSK_MGMT_LEN], const struct srp_tsk_mgmt *t);
/* Initiator side: an SRP_RSP read back (sense points into p). */
struct srp_rsp_view {
	struct srp_tag tag;
	uint32_t req_lim_delta;
	uint8_t flags, status;
	uint32_t data_out_resid, data_in_resid;
	uint32_t resp_len, sense_len;
	const uint8_t *resp, *sense;
};
enum srp_iu_err srp_parse_rsp(const uint8_t *p, size_t len, struct srp_rsp_view *out);

/* What to do about a rejected IU: true = end the channel with SRP_T_LOGOUT(*reason); false =
 * answer the command (its tag is known) with CHECK CONDITION. */
bool srp_iu_err_action(enum srp_iu_err e, enum srp_dir bad_dir, uint32_t *reason);

#endif
