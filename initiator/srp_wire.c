/* utgt-bench's own SRP encoder and decoder (srp_wire.h). */
#include "initiator/srp_wire.h"

#include <string.h>

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* Buffer formats a login offers (SRP_LOGIN_REQ bytes 8-9): direct and indirect descriptors. */
#define BUF_FMT_DIRECT	 0x0002
#define BUF_FMT_INDIRECT 0x0004
/* Login flags (byte 10): multichannel action 1 = join; immediate data requested. */
#define LOGIN_MULTICHANNEL 0x01
#define LOGIN_IMMEDIATE	   0x80
/* Descriptor formats in an SRP_CMD (byte 5: data-out in the high nibble, data-in low). */
enum { DESC_NONE = 0, DESC_DIRECT = 1, DESC_INDIRECT = 2, DESC_IMM = 3 };
/* SRP_RSP flags (byte 18). */
#define RSP_RSPVALID 0x01
#define RSP_SNSVALID 0x02
#define RSP_DOUNDER  0x08
#define RSP_DIUNDER  0x20

void ub_srp_login_req(uint8_t out[UB_SRP_LOGIN_REQ_LEN], const struct ub_srp_login *l)
{
	memset(out, 0, UB_SRP_LOGIN_REQ_LEN);
	/* bytes 0-7: tag, unused on a login */
	put16(out + 8, BUF_FMT_DIRECT | BUF_FMT_INDIRECT);
	out[10] = (uint8_t)((l->multichannel ? LOGIN_MULTICHANNEL : 0) |
			    (l->imm_off ? LOGIN_IMMEDIATE : 0));
	out[11] = UB_SRP_LOGIN_REQ;
	put32(out + 12, l->it_iu_len);
	memcpy(out + 16, l->initiator_port_id, 16);
	memcpy(out + 32, l->target_port_id, 16);
	put16(out + 48, l->imm_off);
}

bool ub_srp_login_rsp(const uint8_t *p, size_t len, struct ub_srp_login_rsp *out)
{
	if (!p || len < 52 || p[0] != UB_SRP_LOGIN_RSP)
		return false;
	out->req_lim = get32(p + 4);
	out->max_it_iu_len = get32(p + 16);
	out->max_ti_iu_len = get32(p + 20);
	out->imm = p[26] & 0x80;
	return true;
}

bool ub_srp_login_rej(const uint8_t *p, size_t len, uint32_t *reason)
{
	if (!p || len < 32 || p[0] != UB_SRP_LOGIN_REJ)
		return false;
	*reason = get32(p + 4);
	return true;
}

static void put_buf(uint8_t *p, const struct ub_srp_buf *b)
{
	put64(p, b->va);
	put32(p + 8, b->key);
	put32(p + 12, b->len);
}

size_t ub_srp_cmd(uint8_t *out, size_t room, const struct ub_srp_cmd *c)
{
	size_t len = UB_SRP_CMD_HDR_LEN;
	unsigned fmt = DESC_NONE;

	if (c->cdb_len < 6 || c->cdb_len > 16 || room < UB_SRP_CMD_HDR_LEN)
		return 0;
	if (c->dir != UB_SRP_NONE && !c->nbufs && !(c->dir == UB_SRP_OUT && c->imm_len))
		return 0;
	memset(out, 0, UB_SRP_CMD_HDR_LEN);
	out[0] = UB_SRP_CMD;
	put64(out + 8, c->tag);
	if (c->lun < 256)
		out[21] = (uint8_t)c->lun;
	else
		put16(out + 20, (uint16_t)(0x4000 | (c->lun & 0x3fff)));
	/* byte 29: task attribute SIMPLE (0); byte 31: no additional CDB */
	memcpy(out + 32, c->cdb, c->cdb_len);
	if (c->dir == UB_SRP_NONE)
		return len;
	if (c->nbufs == 0) { /* immediate data: its length, the data at imm_off */
		if (c->imm_off < len + 4 || c->imm_off > room)
			return 0;
		put32(out + len, c->imm_len);
		fmt = DESC_IMM;
		len = (size_t)c->imm_off + c->imm_len;
	} else if (c->nbufs == 1) {
		if (room < len + 16)
			return 0;
		put_buf(out + len, &c->bufs[0]);
		len += 16;
		fmt = DESC_DIRECT;
	} else {
		uint64_t total = 0;
		struct ub_srp_buf table = {c->table_va, c->table_key, c->nbufs * 16u};

		if (c->nbufs > 255 || room < len + 20 + 16ull * c->nbufs)
			return 0;
		put_buf(out + len, &table);
		for (unsigned i = 0; i < c->nbufs; i++) {
			put_buf(out + len + 20 + 16 * i, &c->bufs[i]);
			total += c->bufs[i].len;
		}
		if (total > UINT32_MAX)
			return 0;
		put32(out + len + 16, (uint32_t)total);
		len += 20 + 16 * c->nbufs;
		fmt = DESC_INDIRECT;
		/* descriptors in the IU: the whole table is */
		out[c->dir == UB_SRP_OUT ? 6 : 7] = (uint8_t)c->nbufs;
	}
	out[5] = (uint8_t)(c->dir == UB_SRP_OUT ? fmt << 4 : fmt);
	return len;
}

bool ub_srp_rsp(const uint8_t *p, size_t len, struct ub_srp_rsp *out)
{
	uint32_t rsp_len = 0, sns_len = 0;

	if (!p || len < 36 || p[0] != UB_SRP_RSP)
		return false;
	memset(out, 0, sizeof(*out));
	out->req_lim_delta = get32(p + 4);
	out->tag = get64(p + 8);
	out->status = p[19];
	out->do_under = p[18] & RSP_DOUNDER;
	out->di_under = p[18] & RSP_DIUNDER;
	out->do_resid = get32(p + 20);
	out->di_resid = get32(p + 24);
	if (p[18] & RSP_SNSVALID)
		sns_len = get32(p + 28);
	if (p[18] & RSP_RSPVALID)
		rsp_len = get32(p + 32);
	if ((uint64_t)36 + rsp_len + sns_len > len)
		return false;
	out->sense = sns_len ? p + 36 + rsp_len : NULL;
	out->sense_len = sns_len;
	return true;
}

bool ub_srp_target_req(const uint8_t *p, size_t len, uint8_t *op, uint64_t *tag,
		       uint32_t *req_lim_delta)
{
	if (!p || len < 16)
		return false;
	*op = p[0];
	*req_lim_delta = get32(p + 4);
	*tag = get64(p + 8);
	return true;
}

bool ub_srp_t_logout(const uint8_t *p, size_t len, uint32_t *reason)
{
	if (!p || len < 20 || p[0] != UB_SRP_T_LOGOUT)
		return false;
	*reason = get32(p + 16);
	return true;
}

void ub_srp_target_rsp(uint8_t out[UB_SRP_TARGET_RSP_LEN], uint8_t op, uint64_t tag)
{
	memset(out, 0, UB_SRP_TARGET_RSP_LEN);
	out[0] = op == UB_SRP_AER_REQ ? UB_SRP_AER_RSP : UB_SRP_CRED_RSP;
	put64(out + 8, tag);
}
