/* SRP information units: parse what initiators send, build what the target answers (and the
 * initiator-side counterparts utgt-bench uses).  Offsets follow r16a and Linux's
 * <scsi/srp.h>, which is what interoperates. */
#include "transports/srp/srp_iu.h"

#include <string.h>

static const char *const err_names[SRP_IU__COUNT] = {
    [SRP_IU_OK] = "ok",
    [SRP_IU_NO_TAG] = "IU shorter than 16 bytes",
    [SRP_IU_UNKNOWN_OP] = "unknown IU type",
    [SRP_IU_SHORT] = "IU shorter than its fixed part",
    [SRP_IU_CDB_TOO_LONG] = "additional CDB too long",
    [SRP_IU_BAD_FMT] = "unsupported buffer descriptor format",
    [SRP_IU_BIDI] = "bidirectional command",
    [SRP_IU_DESC_PAST_IU] = "descriptor beyond the IU",
    [SRP_IU_BAD_DESC_COUNT] = "invalid descriptor count",
    [SRP_IU_BAD_TABLE] = "invalid indirect table length",
    [SRP_IU_LEN_MISMATCH] = "indirect total length differs from the descriptors",
    [SRP_IU_EXT_TABLE] = "external indirect descriptor table",
    [SRP_IU_IMM_PAST_IU] = "immediate data beyond the IU",
};

const char *srp_iu_err_str(enum srp_iu_err e)
{
	return (unsigned)e < SRP_IU__COUNT ? err_names[e] : "?";
}

static struct srp_tag tag_at(const uint8_t *p)
{
	struct srp_tag t;
	memcpy(t.b, p, 8);
	return t;
}

enum srp_iu_err srp_iu_peek(const uint8_t *iu, size_t len, uint8_t *op, struct srp_tag *tag)
{
	if (len < SRP_TAG_OFF + 8)
		return SRP_IU_NO_TAG;
	*op = iu[0];
	*tag = tag_at(iu + SRP_TAG_OFF);
	return SRP_IU_OK;
}

/* ---- login ---- */

enum srp_iu_err srp_parse_login_rdma(const uint8_t *p, size_t len, struct srp_login_req *out)
{
	if (len < SRP_LOGIN_REQ_RDMA_LEN)
		return SRP_IU_SHORT;
	if (p[11] != SRP_OP_LOGIN_REQ)
		return SRP_IU_UNKNOWN_OP;
	memset(out, 0, sizeof(*out));
	out->tag = tag_at(p);
	out->req_buf_fmt = srp_get16(p + 8);
	out->req_flags = p[10];
	out->req_it_iu_len = srp_get32(p + 12);
	memcpy(out->initiator_port_id, p + 16, 16);
	memcpy(out->target_port_id, p + 32, 16);
	out->imm_data_offset = srp_get16(p + 48);
	return SRP_IU_OK;
}

enum srp_iu_err srp_parse_login_ib(const uint8_t *p, size_t len, struct srp_login_req *out)
{
	if (len < SRP_LOGIN_REQ_LEN)
		return SRP_IU_SHORT;
	if (p[0] != SRP_OP_LOGIN_REQ)
		return SRP_IU_UNKNOWN_OP;
	memset(out, 0, sizeof(*out));
	out->tag = tag_at(p + 8);
	out->req_it_iu_len = srp_get32(p + 16);
	out->req_buf_fmt = srp_get16(p + 24);
	out->req_flags = p[26];
	out->imm_data_offset = srp_get16(p + 28);
	memcpy(out->initiator_port_id, p + 32, 16);
	memcpy(out->target_port_id, p + 48, 16);
	return SRP_IU_OK;
}

size_t srp_build_login_rdma(uint8_t out[SRP_LOGIN_REQ_RDMA_LEN], const struct srp_login_req *r)
{
	memset(out, 0, SRP_LOGIN_REQ_RDMA_LEN);
	memcpy(out, r->tag.b, 8);
	srp_put16(out + 8, r->req_buf_fmt);
	out[10] = r->req_flags;
	out[11] = SRP_OP_LOGIN_REQ;
	srp_put32(out + 12, r->req_it_iu_len);
	memcpy(out + 16, r->initiator_port_id, 16);
	memcpy(out + 32, r->target_port_id, 16);
	srp_put16(out + 48, r->imm_data_offset);
	return SRP_LOGIN_REQ_RDMA_LEN;
}

size_t srp_build_login_rsp(uint8_t out[SRP_LOGIN_RSP_LEN], const struct srp_login_rsp *r)
{
	memset(out, 0, SRP_LOGIN_RSP_LEN);
	out[0] = SRP_OP_LOGIN_RSP;
	srp_put32(out + 4, r->req_lim_delta);
	memcpy(out + 8, r->tag.b, 8);
	srp_put32(out + 16, r->max_it_iu_len);
	srp_put32(out + 20, r->max_ti_iu_len);
	srp_put16(out + 24, r->buf_fmt);
	out[26] = r->rsp_flags;
	return SRP_LOGIN_RSP_LEN;
}

size_t srp_build_login_rej(uint8_t out[SRP_LOGIN_REJ_LEN], const struct srp_login_rej *r)
{
	memset(out, 0, SRP_LOGIN_REJ_LEN);
	out[0] = SRP_OP_LOGIN_REJ;
	srp_put32(out + 4, r->reason);
	memcpy(out + 8, r->tag.b, 8);
	srp_put16(out + 24, r->buf_fmt);
	return SRP_LOGIN_REJ_LEN;
}

enum srp_iu_err srp_parse_login_rsp(const uint8_t *p, size_t len, struct srp_login_rsp *out)
{
	if (len < SRP_LOGIN_RSP_LEN)
		return SRP_IU_SHORT;
	if (p[0] != SRP_OP_LOGIN_RSP)
		return SRP_IU_UNKNOWN_OP;
	memset(out, 0, sizeof(*out));
	out->req_lim_delta = srp_get32(p + 4);
	out->tag = tag_at(p + 8);
	out->max_it_iu_len = srp_get32(p + 16);
	out->max_ti_iu_len = srp_get32(p + 20);
	out->buf_fmt = srp_get16(p + 24);
	out->rsp_flags = p[26];
	return SRP_IU_OK;
}

enum srp_iu_err srp_parse_login_rej(const uint8_t *p, size_t len, struct srp_login_rej *out)
{
	if (len < SRP_LOGIN_REJ_LEN)
		return SRP_IU_SHORT;
	if (p[0] != SRP_OP_LOGIN_REJ)
		return SRP_IU_UNKNOWN_OP;
	memset(out, 0, sizeof(*out));
	out->reason = srp_get32(p + 4);
	out->tag = tag_at(p + 8);
	out->buf_fmt = srp_get16(p + 24);
	return SRP_IU_OK;
}

/* ---- SRP_CMD ---- */

/* Size and validity of one direction's descriptor area starting at off.  Sets *xfer, *ndesc. */
static enum srp_iu_err desc_area(const uint8_t *iu, size_t len, enum srp_desc_fmt fmt,
				 uint8_t count, size_t off, const struct srp_cmd_limits *lim,
				 uint32_t *xfer, unsigned *ndesc, size_t *area)
{
	switch (fmt) {
	case SRP_FMT_NONE:
		*xfer = 0;
		*ndesc = 0;
		*area = 0;
		return SRP_IU_OK;
	case SRP_FMT_DIRECT:
		if (!(lim->buf_fmt & SRP_BUF_FMT_DIRECT))
			return SRP_IU_BAD_FMT;
		if (off + SRP_DIRECT_DESC_LEN > len)
			return SRP_IU_DESC_PAST_IU;
		*xfer = srp_get32(iu + off + 12);
		*ndesc = 1;
		*area = SRP_DIRECT_DESC_LEN;
		return SRP_IU_OK;
	case SRP_FMT_INDIRECT: {
		uint32_t table_len, total;
		uint64_t sum = 0;

		if (!(lim->buf_fmt & SRP_BUF_FMT_INDIRECT))
			return SRP_IU_BAD_FMT;
		if (off + SRP_INDIRECT_HDR_LEN > len)
			return SRP_IU_DESC_PAST_IU;
		table_len = srp_get32(iu + off + 12);
		total = srp_get32(iu + off + 16);
		if (!table_len || table_len % SRP_DIRECT_DESC_LEN)
			return SRP_IU_BAD_TABLE;
		if (!count || count > table_len / SRP_DIRECT_DESC_LEN)
			return SRP_IU_BAD_DESC_COUNT;
		if (off + SRP_INDIRECT_HDR_LEN + (size_t)count * SRP_DIRECT_DESC_LEN > len)
			return SRP_IU_DESC_PAST_IU;
		if (count < table_len / SRP_DIRECT_DESC_LEN)
			return SRP_IU_EXT_TABLE;
		for (unsigned i = 0; i < count; i++)
			sum += srp_get32(iu + off + SRP_INDIRECT_HDR_LEN + i * SRP_DIRECT_DESC_LEN +
					 12);
		if (sum != total)
			return SRP_IU_LEN_MISMATCH;
		*xfer = total;
		*ndesc = count;
		*area = SRP_INDIRECT_HDR_LEN + (size_t)count * SRP_DIRECT_DESC_LEN;
		return SRP_IU_OK;
	}
	default:
		return SRP_IU_BAD_FMT;
	}
}

enum srp_iu_err srp_parse_cmd(const uint8_t *iu, size_t len, const struct srp_cmd_limits *lim,
			      struct srp_cmd *out, enum srp_dir *bad_dir)
{
	enum srp_desc_fmt ofmt, ifmt;
	uint32_t add_cdb, oxfer, ixfer;
	unsigned ondesc, indesc;
	size_t off, oarea, iarea;
	enum srp_iu_err e;

	*bad_dir = SRP_DIR_NONE;
	if (len < SRP_TAG_OFF + 8)
		return SRP_IU_NO_TAG;
	memset(out, 0, sizeof(*out));
	out->tag = tag_at(iu + SRP_TAG_OFF);
	if (iu[0] != SRP_OP_CMD)
		return SRP_IU_UNKNOWN_OP;
	if (len < SRP_CMD_HDR_LEN)
		return SRP_IU_SHORT;
	out->sol_not = iu[1];
	memcpy(out->lun, iu + 20, 8);
	out->task_attr = iu[29] & 0x07;
	add_cdb = iu[31] & 0xfc; /* ADDITIONAL CDB LENGTH, in 4-byte words, bits 7..2 */
	if (16 + add_cdb > 32)	 /* SCSI_CDB_MAX: the core executes CDBs of up to 32 bytes */
		return SRP_IU_CDB_TOO_LONG;
	if (SRP_CMD_HDR_LEN + add_cdb > len)
		return SRP_IU_SHORT;
	out->cdb = iu + 32;
	out->cdb_len = (uint8_t)(16 + add_cdb);

	ofmt = (enum srp_desc_fmt)(iu[5] >> 4);
	ifmt = (enum srp_desc_fmt)(iu[5] & 0x0f);
	off = SRP_CMD_HDR_LEN + add_cdb;
	if (ofmt != SRP_FMT_NONE && ifmt != SRP_FMT_NONE) {
		/* Checked before bidirectional use: a broken format is a logout either way. */
		if (ofmt > SRP_FMT_IMM || (ofmt == SRP_FMT_IMM && !lim->imm)) {
			*bad_dir = SRP_DIR_OUT;
			return SRP_IU_BAD_FMT;
		}
		if (ifmt > SRP_FMT_INDIRECT) {
			*bad_dir = SRP_DIR_IN;
			return SRP_IU_BAD_FMT;
		}
		return SRP_IU_BIDI;
	}
	if (ofmt == SRP_FMT_IMM) {
		uint32_t imm_len;

		*bad_dir = SRP_DIR_OUT;
		if (!lim->imm)
			return SRP_IU_BAD_FMT;
		if (off + SRP_IMM_DESC_LEN > len)
			return SRP_IU_IMM_PAST_IU;
		imm_len = srp_get32(iu + off);
		if (lim->imm_data_offset < off + SRP_IMM_DESC_LEN ||
		    (uint64_t)lim->imm_data_offset + imm_len > len)
			return SRP_IU_IMM_PAST_IU;
		*bad_dir = SRP_DIR_NONE;
		out->dir = SRP_DIR_OUT;
		out->fmt = SRP_FMT_IMM;
		out->xfer_len = imm_len;
		out->imm_off = lim->imm_data_offset;
		out->desc_off = (uint32_t)off;
		return SRP_IU_OK;
	}
	*bad_dir = SRP_DIR_OUT;
	e = desc_area(iu, len, ofmt, iu[6], off, lim, &oxfer, &ondesc, &oarea);
	if (e)
		return e;
	*bad_dir = SRP_DIR_IN;
	e = desc_area(iu, len, ifmt, iu[7], off + oarea, lim, &ixfer, &indesc, &iarea);
	if (e)
		return e;
	*bad_dir = SRP_DIR_NONE;
	if (ofmt != SRP_FMT_NONE) {
		out->dir = SRP_DIR_OUT;
		out->fmt = ofmt;
		out->xfer_len = oxfer;
		out->ndesc = ondesc;
	} else if (ifmt != SRP_FMT_NONE) {
		out->dir = SRP_DIR_IN;
		out->fmt = ifmt;
		out->xfer_len = ixfer;
		out->ndesc = indesc;
	}
	out->desc_off = (uint32_t)off;
	if (out->fmt == SRP_FMT_INDIRECT)
		out->desc_off += SRP_INDIRECT_HDR_LEN;
	return SRP_IU_OK;
}

struct srp_desc srp_cmd_desc(const uint8_t *iu, const struct srp_cmd *c, unsigned i)
{
	const uint8_t *d = iu + c->desc_off + (size_t)i * SRP_DIRECT_DESC_LEN;
	struct srp_desc r = {.va = srp_get64(d), .key = srp_get32(d + 8), .len = srp_get32(d + 12)};
	return r;
}

/* ---- SRP_TSK_MGMT ---- */

enum srp_iu_err srp_parse_tsk_mgmt(const uint8_t *iu, size_t len, struct srp_tsk_mgmt *out)
{
	if (len < SRP_TAG_OFF + 8)
		return SRP_IU_NO_TAG;
	memset(out, 0, sizeof(*out));
	out->tag = tag_at(iu + SRP_TAG_OFF);
	if (iu[0] != SRP_OP_TSK_MGMT)
		return SRP_IU_UNKNOWN_OP;
	if (len < SRP_TSK_MGMT_LEN)
		return SRP_IU_SHORT;
	out->sol_not = iu[1];
	memcpy(out->lun, iu + 20, 8);
	out->func = iu[30];
	out->task_tag = tag_at(iu + 32);
	return SRP_IU_OK;
}

size_t srp_build_tsk_mgmt(uint8_t out[SRP_TSK_MGMT_LEN], const struct srp_tsk_mgmt *t)
{
	memset(out, 0, SRP_TSK_MGMT_LEN);
	out[0] = SRP_OP_TSK_MGMT;
	out[1] = t->sol_not;
	memcpy(out + 8, t->tag.b, 8);
	memcpy(out + 20, t->lun, 8);
	out[30] = t->func;
	memcpy(out + 32, t->task_tag.b, 8);
	return SRP_TSK_MGMT_LEN;
}

/* ---- SRP_RSP ---- */

void srp_rsp_set_resid(struct srp_rsp_info *r, enum srp_dir dir, int kind, uint32_t resid)
{
	if (!kind || dir == SRP_DIR_NONE)
		return;
	if (dir == SRP_DIR_IN) {
		r->flags |= kind == 1 ? SRP_RSP_F_DIUNDER : SRP_RSP_F_DIOVER;
		r->data_in_resid = resid;
	} else {
		r->flags |= kind == 1 ? SRP_RSP_F_DOUNDER : SRP_RSP_F_DOOVER;
		r->data_out_resid = resid;
	}
}

size_t srp_build_rsp(uint8_t *out, size_t room, const struct srp_rsp_info *r)
{
	uint32_t resp_len = r->resp_code >= 0 ? 4 : 0;
	uint32_t sense_len = r->sense ? r->sense_len : 0;
	uint8_t flags = r->flags & (SRP_RSP_F_DOOVER | SRP_RSP_F_DOUNDER | SRP_RSP_F_DIOVER |
				    SRP_RSP_F_DIUNDER);

	if (room < SRP_RSP_HDR_LEN + resp_len)
		return 0;
	if (sense_len > room - SRP_RSP_HDR_LEN - resp_len)
		sense_len = (uint32_t)(room - SRP_RSP_HDR_LEN - resp_len);
	memset(out, 0, SRP_RSP_HDR_LEN + resp_len);
	out[0] = SRP_OP_RSP;
	srp_put32(out + 4, r->req_lim_delta);
	memcpy(out + 8, r->tag.b, 8);
	if (resp_len) {
		flags |= SRP_RSP_F_RSPVALID;
		out[SRP_RSP_HDR_LEN + 3] = (uint8_t)r->resp_code;
	}
	if (sense_len) {
		flags |= SRP_RSP_F_SNSVALID;
		memcpy(out + SRP_RSP_HDR_LEN + resp_len, r->sense, sense_len);
	}
	out[18] = flags;
	out[19] = r->status;
	srp_put32(out + 20, r->data_out_resid);
	srp_put32(out + 24, r->data_in_resid);
	srp_put32(out + 28, sense_len);
	srp_put32(out + 32, resp_len);
	return SRP_RSP_HDR_LEN + resp_len + sense_len;
}

bool srp_rsp_solicited(uint8_t sol_not, uint8_t status)
{
	/* SOLNT: bit 1 asks for it on successful completion, bit 2 on unsuccessful. */
	return status == 0 ? (sol_not & 0x02) != 0 : (sol_not & 0x04) != 0;
}

enum srp_iu_err srp_parse_rsp(const uint8_t *p, size_t len, struct srp_rsp_view *out)
{
	if (len < SRP_RSP_HDR_LEN)
		return len < SRP_TAG_OFF + 8 ? SRP_IU_NO_TAG : SRP_IU_SHORT;
	if (p[0] != SRP_OP_RSP)
		return SRP_IU_UNKNOWN_OP;
	memset(out, 0, sizeof(*out));
	out->req_lim_delta = srp_get32(p + 4);
	out->tag = tag_at(p + 8);
	out->flags = p[18];
	out->status = p[19];
	out->data_out_resid = srp_get32(p + 20);
	out->data_in_resid = srp_get32(p + 24);
	if (out->flags & SRP_RSP_F_RSPVALID)
		out->resp_len = srp_get32(p + 32);
	if (out->flags & SRP_RSP_F_SNSVALID)
		out->sense_len = srp_get32(p + 28);
	if ((uint64_t)SRP_RSP_HDR_LEN + out->resp_len + out->sense_len > len)
		return SRP_IU_DESC_PAST_IU;
	out->resp = p + SRP_RSP_HDR_LEN;
	out->sense = out->resp + out->resp_len;
	return SRP_IU_OK;
}

/* ---- small IUs ---- */

static size_t build16(uint8_t out[16], uint8_t op, uint32_t word, struct srp_tag tag)
{
	memset(out, 0, 16);
	out[0] = op;
	srp_put32(out + 4, word);
	memcpy(out + 8, tag.b, 8);
	return 16;
}

size_t srp_build_t_logout(uint8_t out[SRP_T_LOGOUT_LEN], uint32_t reason, struct srp_tag tag)
{
	return build16(out, SRP_OP_T_LOGOUT, reason, tag);
}

size_t srp_build_cred_req(uint8_t out[SRP_CRED_REQ_LEN], uint32_t delta, struct srp_tag tag)
{
	return build16(out, SRP_OP_CRED_REQ, delta, tag);
}

size_t srp_build_cred_rsp(uint8_t out[SRP_CRED_RSP_LEN], struct srp_tag tag)
{
	return build16(out, SRP_OP_CRED_RSP, 0, tag);
}

size_t srp_build_aer_rsp(uint8_t out[SRP_AER_RSP_LEN], struct srp_tag tag)
{
	return build16(out, SRP_OP_AER_RSP, 0, tag);
}

size_t srp_build_i_logout(uint8_t out[SRP_I_LOGOUT_LEN], struct srp_tag tag)
{
	return build16(out, SRP_OP_I_LOGOUT, 0, tag);
}

/* ---- initiator side SRP_CMD ---- */

size_t srp_build_cmd(uint8_t *out, size_t room, const struct srp_cmd_build *b)
{
	uint32_t add_cdb = b->cdb_len > 16 ? ((uint32_t)b->cdb_len - 16 + 3) & ~3u : 0;
	size_t off = SRP_CMD_HDR_LEN + add_cdb, need = off;
	uint8_t fmt = (uint8_t)b->fmt;

	if (add_cdb > 252)
		return 0;
	if (b->fmt == SRP_FMT_DIRECT)
		need += SRP_DIRECT_DESC_LEN;
	else if (b->fmt == SRP_FMT_INDIRECT)
		need += SRP_INDIRECT_HDR_LEN + (size_t)b->ndesc * SRP_DIRECT_DESC_LEN;
	else if (b->fmt == SRP_FMT_IMM)
		need = b->imm_off;
	if (need > room || (b->fmt == SRP_FMT_IMM && b->imm_off < off + SRP_IMM_DESC_LEN))
		return 0;
	memset(out, 0, need);
	out[0] = SRP_OP_CMD;
	memcpy(out + 8, b->tag.b, 8);
	memcpy(out + 20, b->lun, 8);
	out[29] = b->task_attr & 0x07;
	out[31] = (uint8_t)add_cdb;
	memcpy(out + 32, b->cdb, b->cdb_len);
	if (b->dir == SRP_DIR_OUT) {
		out[5] = (uint8_t)(fmt << 4);
		out[6] = b->fmt == SRP_FMT_INDIRECT ? (uint8_t)b->ndesc : 0;
	} else if (b->dir == SRP_DIR_IN) {
		out[5] = fmt;
		out[7] = b->fmt == SRP_FMT_INDIRECT ? (uint8_t)b->ndesc : 0;
	}
	if (b->fmt == SRP_FMT_DIRECT) {
		srp_put64(out + off, b->descs[0].va);
		srp_put32(out + off + 8, b->descs[0].key);
		srp_put32(out + off + 12, b->descs[0].len);
	} else if (b->fmt == SRP_FMT_INDIRECT) {
		uint32_t total = 0;

		srp_put64(out + off, b->table.va);
		srp_put32(out + off + 8, b->table.key);
		srp_put32(out + off + 12, (uint32_t)b->ndesc * SRP_DIRECT_DESC_LEN);
		for (unsigned i = 0; i < b->ndesc; i++) {
			uint8_t *d = out + off + SRP_INDIRECT_HDR_LEN + i * SRP_DIRECT_DESC_LEN;

			srp_put64(d, b->descs[i].va);
			srp_put32(d + 8, b->descs[i].key);
			srp_put32(d + 12, b->descs[i].len);
			total += b->descs[i].len;
		}
		srp_put32(out + off + 16, total);
	} else if (b->fmt == SRP_FMT_IMM) {
		srp_put32(out + off, b->imm_len);
	}
	return need;
}

/* ---- policy ---- */

bool srp_iu_err_action(enum srp_iu_err e, enum srp_dir bad_dir, uint32_t *reason)
{
	switch (e) {
	case SRP_IU_NO_TAG:
		*reason = SRP_TLO_NO_REASON;
		return true;
	case SRP_IU_UNKNOWN_OP:
		*reason = SRP_TLO_INVALID_IU;
		return true;
	case SRP_IU_BAD_FMT:
		*reason = bad_dir == SRP_DIR_IN ? SRP_TLO_BAD_IN_FMT : SRP_TLO_BAD_OUT_FMT;
		return true;
	case SRP_IU_BAD_DESC_COUNT:
	case SRP_IU_DESC_PAST_IU:
		*reason = bad_dir == SRP_DIR_IN ? SRP_TLO_BAD_IN_COUNT : SRP_TLO_BAD_OUT_COUNT;
		return true;
	default:
		*reason = SRP_TLO_NO_REASON;
		return false;
	}
}
