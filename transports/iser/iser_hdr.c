/* iSER header and CM private data codec (see iser_proto.h for the layout).  Strict on what can
 * hurt us (lengths, opcode, flag bits we would misread), lenient on reserved bytes whose
 * meaning is "must be zero on send" only. */
#include "transports/iser/iser_proto.h"

#include <string.h>

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, (uint32_t)v);
}

const char *iser_strerror(int err)
{
	switch (err) {
	case ISER_OK:
		return "ok";
	case ISER_E_SHORT:
		return "SEND shorter than iSER header + BHS";
	case ISER_E_OPCODE:
		return "iSER opcode is not iSCSI control";
	case ISER_E_FLAGS:
		return "reserved iSER flag bits set";
	case ISER_E_LENGTH:
		return "BHS lengths disagree with the SEND length";
	case ISER_E_TOO_LONG:
		return "data segment longer than negotiated";
	case ISER_E_CM_PRIV:
		return "malformed iSER CM private data";
	}
	return "unknown iSER error";
}

int iser_hdr_decode(const uint8_t *b, size_t len, struct iser_hdr *h)
{
	if (len < ISER_HDR_LEN)
		return ISER_E_SHORT;
	memset(h, 0, sizeof(*h));
	h->opcode = b[0] >> 4;
	if (h->opcode != ISER_OP_ISCSI_CTRL)
		return ISER_E_OPCODE;
	if (b[0] & ISER_FLAG_RESERVED)
		return ISER_E_FLAGS;
	h->wsv = b[0] & ISER_FLAG_WSV;
	h->rsv = b[0] & ISER_FLAG_RSV;
	/* STags/VAs are kept even when their valid bit is clear; users look at wsv/rsv first. */
	h->write_stag = get32(b + 4);
	h->write_va = get64(b + 8);
	h->read_stag = get32(b + 16);
	h->read_va = get64(b + 20);
	return ISER_OK;
}

void iser_hdr_encode(uint8_t *b, const struct iser_hdr *h)
{
	memset(b, 0, ISER_HDR_LEN);
	b[0] =
	    (uint8_t)(h->opcode << 4) | (h->wsv ? ISER_FLAG_WSV : 0) | (h->rsv ? ISER_FLAG_RSV : 0);
	put32(b + 4, h->write_stag);
	put64(b + 8, h->write_va);
	put32(b + 16, h->read_stag);
	put64(b + 20, h->read_va);
}

void iser_hdr_encode_tgt(uint8_t *b)
{
	struct iser_hdr h = {.opcode = ISER_OP_ISCSI_CTRL};

	iser_hdr_encode(b, &h);
}

int iser_pdu_check(const uint8_t *b, size_t len, uint32_t max_dsl, struct iser_hdr *h,
		   uint32_t *dsl, uint32_t *data_off)
{
	int rc;

	if (len < ISER_HEADERS_LEN)
		return ISER_E_SHORT;
	rc = iser_hdr_decode(b, len, h);
	if (rc)
		return rc;
	const uint8_t *bhs = b + ISER_HDR_LEN;
	uint32_t ahs = (uint32_t)bhs[4] * 4;
	uint32_t d = (uint32_t)bhs[5] << 16 | (uint32_t)bhs[6] << 8 | bhs[7];

	/* A SEND is one PDU: the SEND length is the framing.  ib_iser sends the data segment
	 * unpadded; a sender that pads it to 4 bytes as on TCP is accepted too.  Anything else
	 * (short, trailing bytes) is a framing error. */
	uint64_t want = (uint64_t)ISER_HEADERS_LEN + ahs + d;
	uint64_t padded = (uint64_t)ISER_HEADERS_LEN + ahs + ((d + 3) & ~3u);
	if (len != want && len != padded)
		return ISER_E_LENGTH;
	if (d > max_dsl)
		return ISER_E_TOO_LONG;
	*dsl = d;
	*data_off = ISER_HEADERS_LEN + ahs;
	return ISER_OK;
}

int iser_cm_req_parse(const void *priv, size_t len, struct iser_cm_req *r)
{
	const uint8_t *p = priv;

	r->zbva_not_sup = true;
	r->send_w_inv_not_sup = true;
	if (len == 0 || !priv)
		return ISER_OK;
	if (len < ISER_CM_HDR_LEN)
		return ISER_E_CM_PRIV;
	/* Other bits are reserved: ignored so a newer initiator is not refused for them. */
	r->zbva_not_sup = p[0] & ISER_CM_ZBVA_NOT_SUP;
	r->send_w_inv_not_sup = p[0] & ISER_CM_SEND_W_INV_NOT_SUP;
	return ISER_OK;
}

void iser_cm_rep_build(uint8_t out[ISER_CM_HDR_LEN])
{
	memset(out, 0, ISER_CM_HDR_LEN);
	out[0] = ISER_CM_ZBVA_NOT_SUP | ISER_CM_SEND_W_INV_NOT_SUP;
}
