/* iSCSI PDU wire format (RFC 7143 section 11): the 48-byte Basic Header Segment, its field
 * offsets per opcode, and pure builders/parsers.  Nothing here does I/O or keeps state, so the
 * unit tests and the fuzzers can drive it directly.
 *
 * The BHS is kept as raw bytes rather than a packed struct: every field is big-endian and the
 * layout differs per opcode, so named accessors are clearer than unions of bitfields. */
#ifndef UTGT_ISCSI_PDU_H
#define UTGT_ISCSI_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ISCSI_BHS_LEN	 48
#define ISCSI_DIGEST_LEN 4
#define ISCSI_AHS_MAX	 (255 * 4) /* TotalAHSLength is in 4-byte words, one byte */
#define ISCSI_DSL_MAX	 0xffffff  /* DataSegmentLength is 24 bits */
#define ISCSI_RSVD_TAG	 0xffffffffu

enum iscsi_opcode {
	/* initiator to target */
	ISCSI_OP_NOP_OUT = 0x00,
	ISCSI_OP_SCSI_CMD = 0x01,
	ISCSI_OP_TMF_REQ = 0x02,
	ISCSI_OP_LOGIN_REQ = 0x03,
	ISCSI_OP_TEXT_REQ = 0x04,
	ISCSI_OP_DATA_OUT = 0x05,
	ISCSI_OP_LOGOUT_REQ = 0x06,
	ISCSI_OP_SNACK_REQ = 0x10,
	/* target to initiator */
	ISCSI_OP_NOP_IN = 0x20,
	ISCSI_OP_SCSI_RSP = 0x21,
	ISCSI_OP_TMF_RSP = 0x22,
	ISCSI_OP_LOGIN_RSP = 0x23,
	ISCSI_OP_TEXT_RSP = 0x24,
	ISCSI_OP_DATA_IN = 0x25,
	ISCSI_OP_LOGOUT_RSP = 0x26,
	ISCSI_OP_R2T = 0x31,
	ISCSI_OP_ASYNC = 0x32,
	ISCSI_OP_REJECT = 0x3f,
};

/* Byte 1 flags. */
#define ISCSI_FLAG_FINAL     0x80
#define ISCSI_CMD_READ	     0x40
#define ISCSI_CMD_WRITE	     0x20
#define ISCSI_CMD_ATTR_MASK  0x07
#define ISCSI_TEXT_CONTINUE  0x40
#define ISCSI_LOGIN_TRANSIT  0x80
#define ISCSI_LOGIN_CONTINUE 0x40
#define ISCSI_DATAIN_ACK     0x40
#define ISCSI_DATAIN_OVER    0x04
#define ISCSI_DATAIN_UNDER   0x02
#define ISCSI_DATAIN_STATUS  0x01
#define ISCSI_RSP_BIDI_OVER  0x10
#define ISCSI_RSP_BIDI_UNDER 0x08
#define ISCSI_RSP_OVER	     0x04
#define ISCSI_RSP_UNDER	     0x02

/* Login stages (CSG/NSG). */
enum iscsi_stage {
	ISCSI_STAGE_SECURITY = 0,
	ISCSI_STAGE_OPERATIONAL = 1,
	ISCSI_STAGE_FULL = 3,
};

/* Login status class/detail as one 16-bit value: class << 8 | detail. */
enum iscsi_login_status {
	ISCSI_LOGIN_OK = 0x0000,
	ISCSI_LOGIN_TARGET_MOVED_TEMP = 0x0101,
	ISCSI_LOGIN_INITIATOR_ERROR = 0x0200,
	ISCSI_LOGIN_AUTH_FAILED = 0x0201,
	ISCSI_LOGIN_AUTHZ_FAILED = 0x0202,
	ISCSI_LOGIN_NOT_FOUND = 0x0203,
	ISCSI_LOGIN_TARGET_REMOVED = 0x0204,
	ISCSI_LOGIN_UNSUPPORTED_VERSION = 0x0205,
	ISCSI_LOGIN_TOO_MANY_CONNS = 0x0206,
	ISCSI_LOGIN_MISSING_PARAM = 0x0207,
	ISCSI_LOGIN_CANT_INCLUDE = 0x0208,
	ISCSI_LOGIN_SESSION_TYPE_UNSUP = 0x0209,
	ISCSI_LOGIN_NO_SESSION = 0x020a,
	ISCSI_LOGIN_INVALID_REQUEST = 0x020b,
	ISCSI_LOGIN_TARGET_ERROR = 0x0300,
	ISCSI_LOGIN_SERVICE_UNAVAIL = 0x0301,
	ISCSI_LOGIN_OUT_OF_RESOURCES = 0x0302,
};

enum iscsi_reject_reason {
	ISCSI_REJECT_DATA_DIGEST = 0x02,
	ISCSI_REJECT_SNACK = 0x03,
	ISCSI_REJECT_PROTOCOL = 0x04,
	ISCSI_REJECT_CMD_UNSUPP = 0x05,
	ISCSI_REJECT_IMM_CMD = 0x06,
	ISCSI_REJECT_TASK_IN_PROG = 0x07,
	ISCSI_REJECT_DATA_ACK = 0x08,
	ISCSI_REJECT_INVALID_FIELD = 0x09,
	ISCSI_REJECT_LONG_OP = 0x0a,
	ISCSI_REJECT_WAIT_LOGOUT = 0x0c,
};

enum iscsi_tmf_func {
	ISCSI_TMF_ABORT_TASK = 1,
	ISCSI_TMF_ABORT_TASK_SET = 2,
	ISCSI_TMF_CLEAR_ACA = 3,
	ISCSI_TMF_CLEAR_TASK_SET = 4,
	ISCSI_TMF_LUN_RESET = 5,
	ISCSI_TMF_TARGET_WARM_RESET = 6,
	ISCSI_TMF_TARGET_COLD_RESET = 7,
	ISCSI_TMF_TASK_REASSIGN = 8,
	/* RFC 7144 (SAM-5 functions) */
	ISCSI_TMF_QUERY_TASK = 9,
	ISCSI_TMF_QUERY_TASK_SET = 10,
	ISCSI_TMF_I_T_NEXUS_RESET = 11,
	ISCSI_TMF_QUERY_ASYNC_EVENT = 12,
};

enum iscsi_tmf_response {
	ISCSI_TMF_RSP_COMPLETE = 0,
	ISCSI_TMF_RSP_NO_TASK = 1,
	ISCSI_TMF_RSP_NO_LUN = 2,
	ISCSI_TMF_RSP_ALLEGIANT = 3,
	ISCSI_TMF_RSP_NO_REASSIGN = 4,
	ISCSI_TMF_RSP_NOT_SUPPORTED = 5,
	ISCSI_TMF_RSP_AUTH_FAILED = 6,
	ISCSI_TMF_RSP_SUCCEEDED = 7, /* RFC 7144: QUERY found something */
	ISCSI_TMF_RSP_REJECTED = 255,
};

enum iscsi_logout_reason {
	ISCSI_LOGOUT_SESSION = 0,
	ISCSI_LOGOUT_CONN = 1,
	ISCSI_LOGOUT_RECOVERY = 2,
};

enum iscsi_logout_response {
	ISCSI_LOGOUT_RSP_OK = 0,
	ISCSI_LOGOUT_RSP_NO_CID = 1,
	ISCSI_LOGOUT_RSP_NO_RECOVERY = 2,
	ISCSI_LOGOUT_RSP_FAILED = 3,
};

enum iscsi_async_event {
	ISCSI_ASYNC_SCSI = 0,
	ISCSI_ASYNC_LOGOUT_REQ = 1, /* target requests logout; Parameter3 = time to wait */
	ISCSI_ASYNC_DROP_CONN = 2,
	ISCSI_ASYNC_DROP_ALL = 3,
	ISCSI_ASYNC_RENEGOTIATE = 4,
};

/* ---- field access ---- */
static inline uint16_t iscsi_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t iscsi_get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}
static inline uint32_t iscsi_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void iscsi_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void iscsi_put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}
static inline void iscsi_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Fields common to every BHS. */
static inline uint8_t bhs_opcode(const uint8_t *b)
{
	return b[0] & 0x3f;
}
static inline bool bhs_immediate(const uint8_t *b)
{
	return b[0] & 0x40;
}
static inline uint8_t bhs_flags(const uint8_t *b)
{
	return b[1];
}
static inline unsigned bhs_ahs_len(const uint8_t *b)
{
	return (unsigned)b[4] * 4;
}
static inline uint32_t bhs_dsl(const uint8_t *b)
{
	return iscsi_get24(b + 5);
}
static inline uint32_t bhs_itt(const uint8_t *b)
{
	return iscsi_get32(b + 16);
}
/* Bytes 20..23: TTT (Data-Out, NOP-Out, Text), EDTL (SCSI Command), RTT (TMF), CID (Login). */
static inline uint32_t bhs_w20(const uint8_t *b)
{
	return iscsi_get32(b + 20);
}
/* CmdSN on requests; StatSN on responses. */
static inline uint32_t bhs_w24(const uint8_t *b)
{
	return iscsi_get32(b + 24);
}
/* ExpStatSN on requests. */
static inline uint32_t bhs_w28(const uint8_t *b)
{
	return iscsi_get32(b + 28);
}
static inline uint32_t bhs_w32(const uint8_t *b)
{
	return iscsi_get32(b + 32);
}
static inline uint32_t bhs_w36(const uint8_t *b)
{
	return iscsi_get32(b + 36);
}
static inline uint32_t bhs_w40(const uint8_t *b)
{
	return iscsi_get32(b + 40);
}
static inline uint32_t bhs_w44(const uint8_t *b)
{
	return iscsi_get32(b + 44);
}
static inline const uint8_t *bhs_lun(const uint8_t *b)
{
	return b + 8;
}

static inline uint32_t iscsi_pad4(uint32_t len)
{
	return (4 - (len & 3)) & 3;
}

/* Serial number arithmetic (RFC 1982, 32 bits), as CmdSN/StatSN comparisons require. */
static inline bool sn_lt(uint32_t a, uint32_t b)
{
	return a != b && (uint32_t)(b - a) < 0x80000000u;
}
static inline bool sn_le(uint32_t a, uint32_t b)
{
	return a == b || sn_lt(a, b);
}

/* Is the opcode one an initiator may send? */
bool iscsi_opcode_is_initiator(uint8_t op);
const char *iscsi_opcode_name(uint8_t op);

/* ---- builders for target PDUs (hdr is ISCSI_BHS_LEN bytes, zeroed by the builder) ---- */
struct iscsi_sn {
	uint32_t stat_sn, exp_cmd_sn, max_cmd_sn;
};

void iscsi_bhs_login_rsp(uint8_t *hdr, const uint8_t *req, uint8_t flags, uint16_t tsih,
			 uint16_t status, const struct iscsi_sn *sn, uint32_t dsl);
void iscsi_bhs_text_rsp(uint8_t *hdr, uint32_t itt, uint32_t ttt, bool final, bool cont,
			const struct iscsi_sn *sn, uint32_t dsl);
void iscsi_bhs_scsi_rsp(uint8_t *hdr, uint32_t itt, uint8_t status, uint8_t flags, uint32_t resid,
			const struct iscsi_sn *sn, uint32_t exp_data_sn, uint32_t dsl);
void iscsi_bhs_data_in(uint8_t *hdr, const uint8_t lun[8], uint32_t itt, uint8_t flags,
		       uint8_t status, uint32_t data_sn, uint32_t offset, uint32_t resid,
		       const struct iscsi_sn *sn, uint32_t dsl);
void iscsi_bhs_r2t(uint8_t *hdr, const uint8_t lun[8], uint32_t itt, uint32_t ttt, uint32_t r2t_sn,
		   uint32_t offset, uint32_t len, const struct iscsi_sn *sn);
void iscsi_bhs_nop_in(uint8_t *hdr, const uint8_t lun[8], uint32_t itt, uint32_t ttt,
		      const struct iscsi_sn *sn, uint32_t dsl);
void iscsi_bhs_tmf_rsp(uint8_t *hdr, uint32_t itt, uint8_t response, const struct iscsi_sn *sn);
void iscsi_bhs_logout_rsp(uint8_t *hdr, uint32_t itt, uint8_t response, uint16_t time2wait,
			  uint16_t time2retain, const struct iscsi_sn *sn);
void iscsi_bhs_reject(uint8_t *hdr, uint8_t reason, const struct iscsi_sn *sn);
void iscsi_bhs_async(uint8_t *hdr, uint8_t event, uint16_t p1, uint16_t p2, uint16_t p3,
		     const struct iscsi_sn *sn, uint32_t dsl);

/* ---- parsed views of initiator PDUs ---- */
struct iscsi_login_req {
	bool transit, cont;
	uint8_t csg, nsg;
	uint8_t ver_max, ver_min;
	uint8_t isid[6];
	uint16_t tsih;
	uint32_t itt;
	uint16_t cid;
	uint32_t cmd_sn, exp_stat_sn;
};
/* 0, or the login status to answer with when the header is malformed. */
uint16_t iscsi_parse_login_req(const uint8_t *hdr, struct iscsi_login_req *out);

struct iscsi_scsi_cmd {
	bool final, read, write;
	uint8_t attr;
	uint8_t lun[8];
	uint32_t itt, edtl, cmd_sn, exp_stat_sn;
	const uint8_t *cdb; /* 16 bytes in the BHS, plus an extended-CDB AHS when present */
	unsigned cdb_len;
};
/* Parses the BHS and AHS (which may hold an Extended CDB, type 1).  cdb_buf receives the whole
 * CDB when extended (up to 16 + 244 bytes; callers give 260).  Returns false when the AHS is
 * malformed or the CDB would not fit. */
bool iscsi_parse_scsi_cmd(const uint8_t *hdr, const uint8_t *ahs, unsigned ahs_len,
			  uint8_t *cdb_buf, size_t cdb_buf_len, struct iscsi_scsi_cmd *out);

/* Upper bound on a CDB this target accepts through an Extended CDB AHS. */
#define ISCSI_CDB_MAX 260

#endif
