/* iSER wire format (RFC 7145) as Linux's ib_iser and LIO's isert speak it over InfiniBand /
 * RoCE: the 4-byte private data of the RDMA CM REQ/REP and the 28-byte iSER header that
 * precedes every iSCSI PDU carried in a SEND.  Pure encode/decode with strict checks, no
 * verbs, no state: the unit tests and the connection code drive it directly.
 *
 * Layout of the iSER header (all big-endian):
 *   byte 0     flags: opcode in the high nibble (1 = iSCSI control-type PDU, 2 = Hello,
 *              3 = HelloReply), 0x08 = Write STag valid, 0x04 = Read STag valid, 0x03 reserved
 *   bytes 1-3  reserved
 *   bytes 4-7  Write STag          bytes 8-15  Write Base Offset (VA)
 *   bytes 16-19 Read STag          bytes 20-27 Read Base Offset (VA)
 * followed by the 48-byte BHS, AHS and the data segment (no digests, no padding: iSER never
 * negotiates digests and a SEND carries its own length). */
#ifndef UTGT_ISER_PROTO_H
#define UTGT_ISER_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ISER_HDR_LEN	 28
#define ISER_BHS_LEN	 48
#define ISER_HEADERS_LEN (ISER_HDR_LEN + ISER_BHS_LEN) /* smallest legal SEND */

/* Opcodes (high nibble of byte 0). Hello/HelloReply exist for iWARP only (RFC 7145 5.1.4);
 * on InfiniBand and RoCE the initiator never sends them, so we treat them as protocol errors. */
#define ISER_OP_ISCSI_CTRL 0x1
#define ISER_OP_HELLO	   0x2
#define ISER_OP_HELLO_RPLY 0x3

#define ISER_FLAG_WSV	   0x08 /* Write STag/VA valid: data the target RDMA READs */
#define ISER_FLAG_RSV	   0x04 /* Read STag/VA valid: where the target RDMA WRITEs */
#define ISER_FLAG_RESERVED 0x03

/* CM REQ (initiator) / REP (target) private data: one flags byte + 3 reserved. */
#define ISER_CM_HDR_LEN		   4
#define ISER_CM_ZBVA_NOT_SUP	   0x80 /* REQ: initiator cannot take zero-based VAs */
#define ISER_CM_SEND_W_INV_NOT_SUP 0x40 /* REQ: initiator cannot take Send with Invalidate */
/* In the REP the same bits mean "the target will not use" ZBVA / Send with Invalidate. */

struct iser_hdr {
	uint8_t opcode; /* ISER_OP_* */
	bool wsv, rsv;
	uint32_t write_stag;
	uint64_t write_va;
	uint32_t read_stag;
	uint64_t read_va;
};

enum iser_err {
	ISER_OK = 0,
	ISER_E_SHORT = -1,    /* SEND shorter than iSER header + BHS */
	ISER_E_OPCODE = -2,   /* not an iSCSI control-type PDU (Hello, unknown) */
	ISER_E_FLAGS = -3,    /* reserved flag bits set */
	ISER_E_LENGTH = -4,   /* BHS lengths (AHS, DataSegmentLength) disagree with the SEND */
	ISER_E_TOO_LONG = -5, /* data segment beyond the negotiated receive limit */
	ISER_E_CM_PRIV = -6,  /* CM private data malformed */
};
const char *iser_strerror(int err);

/* Decode the iSER header at the start of a received SEND of len bytes. */
int iser_hdr_decode(const uint8_t *b, size_t len, struct iser_hdr *h);
/* Encode h (flags derived from opcode/wsv/rsv, reserved bytes zero) into b[ISER_HDR_LEN]. */
void iser_hdr_encode(uint8_t *b, const struct iser_hdr *h);
/* The header the target puts before every PDU it sends: iSCSI control, no STags (the target
 * never advertises buffers of its own). */
void iser_hdr_encode_tgt(uint8_t *b);

/* Check a whole received SEND: iSER header, then that TotalAHSLength and DataSegmentLength of
 * the BHS fit exactly (no padding, no digests) and that the data segment is at most max_dsl.
 * On success *dsl is the data segment length and *data_off its offset in the SEND. */
int iser_pdu_check(const uint8_t *b, size_t len, uint32_t max_dsl, struct iser_hdr *h,
		   uint32_t *dsl, uint32_t *data_off);

/* CM REQ private data from the initiator.  Initiators older than the iSER CM header send none
 * (len 0): treated as "ZBVA and Send with Invalidate not supported", what we use anyway. */
struct iser_cm_req {
	bool zbva_not_sup;
	bool send_w_inv_not_sup;
};
int iser_cm_req_parse(const void *priv, size_t len, struct iser_cm_req *r);
/* Our REP private data: we neither use zero-based VAs nor Send with Invalidate. */
void iser_cm_rep_build(uint8_t out[ISER_CM_HDR_LEN]);

#endif
