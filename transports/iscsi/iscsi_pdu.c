/* Builders and parsers for iSCSI BHS layouts (RFC 7143 section 11). */
#include "transports/iscsi/iscsi_pdu.h"

#include <string.h>

bool iscsi_opcode_is_initiator(uint8_t op)
{
	switch (op) {
	case ISCSI_OP_NOP_OUT:
	case ISCSI_OP_SCSI_CMD:
	case ISCSI_OP_TMF_REQ:
	case ISCSI_OP_LOGIN_REQ:
	case ISCSI_OP_TEXT_REQ:
	case ISCSI_OP_DATA_OUT:
	case ISCSI_OP_LOGOUT_REQ:
	case ISCSI_OP_SNACK_REQ:
		return true;
	default:
		return false;
	}
}

const char *iscsi_opcode_name(uint8_t op)
{
	switch (op) {
	case ISCSI_OP_NOP_OUT:
		return "NOP-Out";
	case ISCSI_OP_SCSI_CMD:
		return "SCSI-Command";
	case ISCSI_OP_TMF_REQ:
		return "TMF-Request";
	case ISCSI_OP_LOGIN_REQ:
		return "Login-Request";
	case ISCSI_OP_TEXT_REQ:
		return "Text-Request";
	case ISCSI_OP_DATA_OUT:
		return "Data-Out";
	case ISCSI_OP_LOGOUT_REQ:
		return "Logout-Request";
	case ISCSI_OP_SNACK_REQ:
		return "SNACK";
	case ISCSI_OP_NOP_IN:
		return "NOP-In";
	case ISCSI_OP_SCSI_RSP:
		return "SCSI-Response";
	case ISCSI_OP_TMF_RSP:
		return "TMF-Response";
	case ISCSI_OP_LOGIN_RSP:
		return "Login-Response";
	case ISCSI_OP_TEXT_RSP:
		return "Text-Response";
	case ISCSI_OP_DATA_IN:
		return "Data-In";
	case ISCSI_OP_LOGOUT_RSP:
		return "Logout-Response";
	case ISCSI_OP_R2T:
		return "R2T";
	case ISCSI_OP_ASYNC:
		return "Async-Message";
	case ISCSI_OP_REJECT:
		return "Reject";
	default:
		return "unknown";
	}
}

static void put_sn(uint8_t *hdr, const struct iscsi_sn *sn)
{
	iscsi_put32(hdr + 24, sn->stat_sn);
	iscsi_put32(hdr + 28, sn->exp_cmd_sn);
	iscsi_put32(hdr + 32, sn->max_cmd_sn);
}

void iscsi_bhs_login_rsp(uint8_t *hdr, const uint8_t *req, uint8_t flags, uint16_t tsih,
			 uint16_t status, const struct iscsi_sn *sn, uint32_t dsl)
{
	memset(hdr, 0, ISCSI_BHS_LEN);
	hdr[0] = ISCSI_OP_LOGIN_RSP;
	hdr[1] = flags;
	hdr[2] = 0; /* Version-max */
	hdr[3] = 0; /* Version-active */
	iscsi_put24(hdr + 5, dsl);
	memcpy(hdr + 8, req + 8, 6); /* ISID */
	iscsi_put16(hdr + 14, tsih);
	memcpy(hdr + 16, req + 16, 4); /* ITT */
	put_sn(hdr, sn);
	hdr[36] = (uint8_t)(status >> 8);
	hdr[37] = (uint8_t)status;
}

void iscsi_bhs_text_rsp(uint8_t *hdr, uint32_t itt, uint32_t ttt, bool final, bool cont,
			const struct iscsi_sn *sn, uint32_t dsl)
{
	memset(hdr, 0, ISCSI_BHS_LEN);
	hdr[0] = ISCSI_OP_TEXT_RSP;
	hdr[1] = (uint8_t)((final ? ISCSI_FLAG_FINAL : 0) | (cont ? ISCSI_TEXT_CONTINUE : 0));
	iscsi_put24(hdr + 5, dsl);
	iscsi_put32(hdr + 16, itt);
	iscsi_put32(hdr + 20, ttt);
	put_sn(hdr, sn);
}

void iscsi_bhs_scsi_rsp(uint8_t *hdr, uint32_t itt, uint8_t status, uint8_t flags, uint32_t resid,
			const struct iscsi_sn *sn, uint32_t exp_data_sn, uint32_t dsl)
{
	memset(hdr, 0, ISCSI_BHS_LEN);
	hdr[0] = ISCSI_OP_SCSI_RSP;
	hdr[1] = (uint8_t)(ISCSI_FLAG_FINAL | flags);
	hdr[2] = 0; /* Response: command completed at target */
	hdr[3] = status;
	iscsi_put24(hdr + 5, dsl);
	iscsi_put32(hdr + 16, itt);
	put_sn(hdr, sn);
	iscsi_put32(hdr + 36, exp_data_sn);
	iscsi_put32(hdr + 44, resid);
}

void iscsi_bhs_data_in(uint8_t *hdr, const uint8_t lun[8], uint32_t itt, uint8_t flags,
		       uint8_t status, uint32_t data_sn, uint32_t offset, uint32_t resid,
		       const struct iscsi_sn *sn, uint32_t dsl)
{
	memset(hdr, 0, ISCSI_BHS_LEN);
	hdr[0] = ISCSI_OP_DATA_IN;
	hdr[1] = flags;
	iscsi_put24(hdr + 5, dsl);
	if (flags & ISCSI_DATAIN_STATUS) {
		hdr[3] = status;
		put_sn(hdr, sn);
		iscsi_put32(hdr + 44, resid);
	} else {
		/* StatSN is reserved without the S bit; the SN window is still carried. */
		iscsi_put32(hdr + 28, sn->exp_cmd_sn);
		iscsi_put32(hdr + 32, sn->max_cmd_sn);
	}
	if (lun)
		memcpy(hdr + 8, lun, 8);
	iscsi_put32(hdr + 16, itt);
	iscsi_put32(hdr + 20, ISCSI_RSVD_TAG);
	iscsi_put32(hdr + 36, data_sn);
	iscsi_put32(hdr + 40, offset);
}

void iscsi_bhs_r2t(uint8_t *hdr, const uint8_t lun[8], uint32_t itt, uint32_t ttt, uint32_t r2t_sn,
		   uint32_t offset, uint32_t len, const struct iscsi_sn *sn)
{
	memset(hdr, 0, ISCSI_BHS_LEN);
	hdr[0] = ISCSI_OP_R2T;
	hdr[1] = ISCSI_FLAG_FINAL;
	if (lun)
		memcpy(hdr + 8, lun, 8);
	iscsi_put32(hdr + 16, itt);
	iscsi_put32(hdr + 20, ttt);
	put_sn(hdr, sn);
	iscsi_put32(hdr + 36, r2t_sn);
	iscsi_put32(hdr + 40, offset);
	iscsi_put32(hdr + 44, len);
}

void iscsi_bhs_nop_in(uint8_t *hdr, const uint8_t lun[8], uint32_t itt, uint32_t ttt,
		      const struct iscsi_sn *sn, uint32_t dsl)
{
	memset(hdr, 0, ISCSI_BHS_LEN);
	hdr[0] = ISCSI_OP_NOP_IN;
	hdr[1] = ISCSI_FLAG_FINAL;
	iscsi_put24(hdr + 5, dsl);
	if (lun)
		memcpy(hdr + 8, lun, 8);
	iscsi_put32(hdr + 16, itt);
	iscsi_put32(hdr + 20, ttt);
	put_sn(hdr, sn);
}

void iscsi_bhs_tmf_rsp(uint8_t *hdr, uint32_t itt, uint8_t response, const struct iscsi_sn *sn)
{
	memset(hdr, 0, ISCSI_BHS_LEN);
	hdr[0] = ISCSI_OP_TMF_RSP;
	hdr[1] = ISCSI_FLAG_FINAL;
	hdr[2] = response;
	iscsi_put32(hdr + 16, itt);
	put_sn(hdr, sn);
}

void iscsi_bhs_logout_rsp(uint8_t *hdr, uint32_t itt, uint8_t response, uint16_t time2wait,
			  uint16_t time2retain, const struct iscsi_sn *sn)
{
	memset(hdr, 0, ISCSI_BHS_LEN);
	hdr[0] = ISCSI_OP_LOGOUT_RSP;
	hdr[1] = ISCSI_FLAG_FINAL;
	hdr[2] = response;
	iscsi_put32(hdr + 16, itt);
	put_sn(hdr, sn);
	iscsi_put16(hdr + 40, time2wait);
	iscsi_put16(hdr + 42, time2retain);
}

void iscsi_bhs_reject(uint8_t *hdr, uint8_t reason, const struct iscsi_sn *sn)
{
	memset(hdr, 0, ISCSI_BHS_LEN);
	hdr[0] = ISCSI_OP_REJECT;
	hdr[1] = ISCSI_FLAG_FINAL;
	hdr[2] = reason;
	iscsi_put24(hdr + 5, ISCSI_BHS_LEN); /* the rejected header is the data */
	iscsi_put32(hdr + 16, ISCSI_RSVD_TAG);
	put_sn(hdr, sn);
}

void iscsi_bhs_async(uint8_t *hdr, uint8_t event, uint16_t p1, uint16_t p2, uint16_t p3,
		     const struct iscsi_sn *sn, uint32_t dsl)
{
	memset(hdr, 0, ISCSI_BHS_LEN);
	hdr[0] = ISCSI_OP_ASYNC;
	hdr[1] = ISCSI_FLAG_FINAL;
	iscsi_put24(hdr + 5, dsl);
	iscsi_put32(hdr + 16, ISCSI_RSVD_TAG);
	put_sn(hdr, sn);
	hdr[36] = event;
	iscsi_put16(hdr + 38, p1);
	iscsi_put16(hdr + 40, p2);
	iscsi_put16(hdr + 42, p3);
}

uint16_t iscsi_parse_login_req(const uint8_t *hdr, struct iscsi_login_req *out)
{
	memset(out, 0, sizeof(*out));
	if (bhs_opcode(hdr) != ISCSI_OP_LOGIN_REQ)
		return ISCSI_LOGIN_INVALID_REQUEST;
	out->transit = hdr[1] & ISCSI_LOGIN_TRANSIT;
	out->cont = hdr[1] & ISCSI_LOGIN_CONTINUE;
	out->csg = (hdr[1] >> 2) & 3;
	out->nsg = hdr[1] & 3;
	out->ver_max = hdr[2];
	out->ver_min = hdr[3];
	memcpy(out->isid, hdr + 8, 6);
	out->tsih = iscsi_get16(hdr + 14);
	out->itt = bhs_itt(hdr);
	out->cid = iscsi_get16(hdr + 20);
	out->cmd_sn = bhs_w24(hdr);
	out->exp_stat_sn = bhs_w28(hdr);
	/* T and C together are a protocol error (RFC 7143 11.12.2). */
	if (out->transit && out->cont)
		return ISCSI_LOGIN_INITIATOR_ERROR;
	if (out->csg == 2 || out->csg == ISCSI_STAGE_FULL)
		return ISCSI_LOGIN_INITIATOR_ERROR;
	if (out->transit && (out->nsg == 2 || out->nsg <= out->csg))
		return ISCSI_LOGIN_INITIATOR_ERROR;
	/* Only version 0 exists. */
	if (out->ver_min > 0)
		return ISCSI_LOGIN_UNSUPPORTED_VERSION;
	return 0;
}

bool iscsi_parse_scsi_cmd(const uint8_t *hdr, const uint8_t *ahs, unsigned ahs_len,
			  uint8_t *cdb_buf, size_t cdb_buf_len, struct iscsi_scsi_cmd *out)
{
	unsigned off = 0;

	memset(out, 0, sizeof(*out));
	out->final = hdr[1] & ISCSI_FLAG_FINAL;
	out->read = hdr[1] & ISCSI_CMD_READ;
	out->write = hdr[1] & ISCSI_CMD_WRITE;
	out->attr = hdr[1] & ISCSI_CMD_ATTR_MASK;
	memcpy(out->lun, hdr + 8, 8);
	out->itt = bhs_itt(hdr);
	out->edtl = bhs_w20(hdr);
	out->cmd_sn = bhs_w24(hdr);
	out->exp_stat_sn = bhs_w28(hdr);
	out->cdb = hdr + 32;
	out->cdb_len = 16;

	/* Walk the AHS list: each is 2-byte length, 1-byte type, then data, padded to 4. */
	while (off < ahs_len) {
		unsigned len, type, total;

		if (ahs_len - off < 4)
			return false;
		len = iscsi_get16(ahs + off);
		type = ahs[off + 2];
		total = 3 + len;
		total += iscsi_pad4(total);
		if (total > ahs_len - off)
			return false;
		if (type == 1) { /* Extended CDB: len counts the reserved byte plus CDB bytes */
			unsigned extra;

			if (len < 1)
				return false;
			extra = len - 1;
			if (16 + extra > cdb_buf_len)
				return false;
			memcpy(cdb_buf, hdr + 32, 16);
			memcpy(cdb_buf + 16, ahs + off + 4, extra);
			out->cdb = cdb_buf;
			out->cdb_len = 16 + extra;
		} else if (type == 2) {
			/* Expected bidirectional read data length: we refuse bidi commands later.
			 */
		} else {
			return false;
		}
		off += total;
	}
	return true;
}
