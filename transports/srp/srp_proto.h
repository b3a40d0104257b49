/* SRP (T10 SRP r16a, plus SRP-2 immediate data as Linux's ib_srp speaks it) on the wire:
 * information unit types, field offsets and the parsed views the target works with.
 *
 * Every IU is read and written through byte offsets and the big-endian helpers below, never by
 * casting a packed struct onto a receive buffer: the IUs come from the network and are checked
 * field by field (srp_iu.c) before anything trusts them.  Tags are opaque 8-byte values the
 * target echoes back, so they travel as raw bytes (srp_tag). */
#ifndef UTGT_SRP_PROTO_H
#define UTGT_SRP_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* IU type codes (byte 0 of every IU; byte 11 of the RDMA/CM login request). */
enum srp_opcode {
	SRP_OP_LOGIN_REQ = 0x00,
	SRP_OP_TSK_MGMT = 0x01,
	SRP_OP_CMD = 0x02,
	SRP_OP_I_LOGOUT = 0x03,
	SRP_OP_LOGIN_RSP = 0xc0,
	SRP_OP_RSP = 0xc1,
	SRP_OP_LOGIN_REJ = 0xc2,
	SRP_OP_T_LOGOUT = 0x80,
	SRP_OP_CRED_REQ = 0x81,
	SRP_OP_AER_REQ = 0x82,
	SRP_OP_CRED_RSP = 0x41,
	SRP_OP_AER_RSP = 0x42,
};

/* SUPPORTED BUFFER FORMATS bits (login request/response). */
enum {
	SRP_BUF_FMT_DIRECT = 1 << 1,
	SRP_BUF_FMT_INDIRECT = 1 << 2,
};

/* DATA-OUT / DATA-IN BUFFER DESCRIPTOR FORMAT codes (SRP_CMD byte 5, high/low nibble). */
enum srp_desc_fmt {
	SRP_FMT_NONE = 0,
	SRP_FMT_DIRECT = 1,
	SRP_FMT_INDIRECT = 2,
	SRP_FMT_IMM = 3, /* SRP-2 immediate data, data-out only */
};

/* Login request flags (REQ_FLAGS) and response flags (RSP_FLAGS). */
enum {
	SRP_MCA_MASK = 0x03,	       /* MULTI-CHANNEL ACTION */
	SRP_MCA_SINGLE = 0x00,	       /* terminate the nexus's other channels */
	SRP_MCA_MULTI = 0x01,	       /* join them */
	SRP_REQ_IMMED = 0x80,	       /* immediate data requested (SRP-2) */
	SRP_RSP_MCR_NO_CHAN = 0x00,    /* MULTI-CHANNEL RESULT: there was no other channel */
	SRP_RSP_MCR_TERMINATED = 0x01, /* ... others were terminated */
	SRP_RSP_MCR_MAINTAINED = 0x02, /* ... others were kept */
	SRP_RSP_IMMED_SUPPORTED = 0x80,
};

/* SRP_LOGIN_REJ reasons (as Linux's <scsi/srp.h> numbers them). */
enum srp_rej_reason {
	SRP_REJ_UNABLE_ESTABLISH_CHANNEL = 0x00010000,
	SRP_REJ_INSUFFICIENT_RESOURCES = 0x00010001,
	SRP_REJ_IT_IU_LEN_TOO_LARGE = 0x00010002,
	SRP_REJ_UNABLE_ASSOCIATE_CHANNEL = 0x00010003,
	SRP_REJ_UNSUPPORTED_DESC_FMT = 0x00010004,
	SRP_REJ_MULTI_CHANNEL_UNSUPP = 0x00010005,
	SRP_REJ_CHANNEL_LIMIT_REACHED = 0x00010006,
};

/* SRP_T_LOGOUT reasons (r16a). */
enum srp_tlogout_reason {
	SRP_TLO_NO_REASON = 0,
	SRP_TLO_INACTIVE = 1,	    /* reclaiming the channel (target shutting down) */
	SRP_TLO_INVALID_IU = 2,	    /* an IU type a target does not accept */
	SRP_TLO_UNEXPECTED_RSP = 3, /* a response with no request outstanding */
	SRP_TLO_MULTICHANNEL = 4,   /* a new login asked for a single channel */
	SRP_TLO_BAD_OUT_FMT = 6,    /* unsupported DATA-OUT BUFFER DESCRIPTOR FORMAT */
	SRP_TLO_BAD_IN_FMT = 7,	    /* unsupported DATA-IN BUFFER DESCRIPTOR FORMAT */
	SRP_TLO_BAD_OUT_COUNT = 8,  /* invalid DATA-OUT BUFFER DESCRIPTOR COUNT */
	SRP_TLO_BAD_IN_COUNT = 9,   /* invalid DATA-IN BUFFER DESCRIPTOR COUNT */
};

/* SRP_TSK_MGMT functions. */
enum {
	SRP_TMF_ABORT_TASK = 0x01,
	SRP_TMF_ABORT_TASK_SET = 0x02,
	SRP_TMF_CLEAR_TASK_SET = 0x04,
	SRP_TMF_LUN_RESET = 0x08,
	SRP_TMF_CLEAR_ACA = 0x40,
};

/* SRP_RSP response codes (RESPONSE DATA byte 3). */
enum {
	SRP_RSP_CODE_COMPLETE = 0x00,
	SRP_RSP_CODE_FIELDS_INVALID = 0x02,
	SRP_RSP_CODE_NOT_SUPPORTED = 0x04,
	SRP_RSP_CODE_FAILED = 0x05,
	SRP_RSP_CODE_SUCCEEDED = 0x08,	   /* SRP-2 */
	SRP_RSP_CODE_INCORRECT_LUN = 0x09, /* SRP-2 */
};

/* SRP_RSP flags (byte 18). */
enum {
	SRP_RSP_F_RSPVALID = 1 << 0,
	SRP_RSP_F_SNSVALID = 1 << 1,
	SRP_RSP_F_DOOVER = 1 << 2,
	SRP_RSP_F_DOUNDER = 1 << 3,
	SRP_RSP_F_DIOVER = 1 << 4,
	SRP_RSP_F_DIUNDER = 1 << 5,
};

/* Fixed sizes. */
enum {
	SRP_LOGIN_REQ_LEN = 64,
	SRP_LOGIN_REQ_RDMA_LEN = 56, /* what fits in an RDMA/CM connect request over IB */
	SRP_LOGIN_RSP_LEN = 52,
	SRP_LOGIN_REJ_LEN = 32,
	SRP_CMD_HDR_LEN = 48,
	SRP_TSK_MGMT_LEN = 48,
	SRP_RSP_HDR_LEN = 36,
	SRP_I_LOGOUT_LEN = 16,
	SRP_T_LOGOUT_LEN = 16,
	SRP_CRED_REQ_LEN = 16,
	SRP_CRED_RSP_LEN = 16,
	SRP_AER_RSP_LEN = 16,
	SRP_DIRECT_DESC_LEN = 16,
	SRP_INDIRECT_HDR_LEN = 20, /* table descriptor + total length */
	SRP_IMM_DESC_LEN = 4,
	SRP_TAG_OFF = 8,	/* the tag's place in every IU but the RDMA/CM login */
	SRP_MIN_IT_IU_LEN = 64, /* an initiator must accept at least this (r16a) */
};

static inline uint16_t srp_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t srp_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t srp_get64(const uint8_t *p)
{
	return (uint64_t)srp_get32(p) << 32 | srp_get32(p + 4);
}

static inline void srp_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void srp_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void srp_put64(uint8_t *p, uint64_t v)
{
	srp_put32(p, (uint32_t)(v >> 32));
	srp_put32(p + 4, (uint32_t)v);
}

/* The initiator's tag, byte for byte (Linux puts a host-order u32 there). */
struct srp_tag {
	uint8_t b[8];
};

static inline uint64_t srp_tag_u64(struct srp_tag t)
{
	uint64_t v;
	memcpy(&v, t.b, 8);
	return v;
}

static inline struct srp_tag srp_tag_of(uint64_t v)
{
	struct srp_tag t;
	memcpy(t.b, &v, 8);
	return t;
}

/* One memory descriptor of the initiator: virtual address, remote key, length. */
struct srp_desc {
	uint64_t va;
	uint32_t key;
	uint32_t len;
};

/* ---- parsed views ---- */

struct srp_login_req {
	struct srp_tag tag;
	uint32_t req_it_iu_len;
	uint16_t req_buf_fmt;
	uint8_t req_flags;
	uint16_t imm_data_offset; /* valid when req_flags has SRP_REQ_IMMED */
	uint8_t initiator_port_id[16];
	uint8_t target_port_id[16];
};

struct srp_login_rsp {
	struct srp_tag tag;
	uint32_t req_lim_delta;
	uint32_t max_it_iu_len;
	uint32_t max_ti_iu_len;
	uint16_t buf_fmt;
	uint8_t rsp_flags;
};

struct srp_login_rej {
	struct srp_tag tag;
	uint32_t reason;
	uint16_t buf_fmt;
};

enum srp_dir {
	SRP_DIR_NONE,
	SRP_DIR_OUT, /* data-out: initiator to target, fetched by RDMA READ or immediate */
	SRP_DIR_IN,  /* data-in: target to initiator, by RDMA WRITE */
};

/* An SRP_CMD as the target will execute it.  The descriptors stay in the IU (the receive
 * buffer is held until the command completes): desc_off says where the first one is. */
struct srp_cmd {
	struct srp_tag tag;
	uint8_t sol_not;
	uint8_t lun[8];
	uint8_t task_attr; /* SRP encoding: 0 simple, 1 head of queue, 2 ordered, 4 ACA */
	uint8_t cdb_len;
	const uint8_t *cdb; /* into the IU */
	enum srp_dir dir;
	enum srp_desc_fmt fmt;
	uint32_t xfer_len; /* expected data transfer length */
	unsigned ndesc;	   /* descriptors present in the IU (direct: 1) */
	uint32_t desc_off; /* offset of descriptor 0 in the IU */
	uint32_t imm_off;  /* immediate data: offset in the IU */
};

struct srp_tsk_mgmt {
	struct srp_tag tag;
	uint8_t sol_not;
	uint8_t lun[8];
	uint8_t func;
	struct srp_tag task_tag;
};

/* Why an IU could not be accepted, and what the target does about it (srp_iu_err_action):
 * errors r16a lists as target logout reasons (descriptor format, descriptor count, unknown IU
 * type, an IU too short to carry a tag) end the channel with SRP_T_LOGOUT; the others answer
 * the command with an SRP_RSP carrying CHECK CONDITION, and the channel lives on. */
enum srp_iu_err {
	SRP_IU_OK = 0,
	SRP_IU_NO_TAG,	       /* shorter than 16 bytes: nothing to answer to */
	SRP_IU_UNKNOWN_OP,     /* not a request type a target accepts */
	SRP_IU_SHORT,	       /* shorter than its fixed part */
	SRP_IU_CDB_TOO_LONG,   /* additional CDB beyond what utgt executes (32-byte CDBs) */
	SRP_IU_BAD_FMT,	       /* reserved format code, or one not negotiated at login */
	SRP_IU_BIDI,	       /* both data-out and data-in descriptors */
	SRP_IU_DESC_PAST_IU,   /* descriptors (or immediate data) beyond the IU's length */
	SRP_IU_BAD_DESC_COUNT, /* zero, or more than the table holds */
	SRP_IU_BAD_TABLE,      /* indirect table length not a whole number of descriptors */
	SRP_IU_LEN_MISMATCH,   /* indirect TOTAL LENGTH differs from the descriptors' sum */
	SRP_IU_EXT_TABLE,      /* descriptor table not in the IU (external): not supported */
	SRP_IU_IMM_PAST_IU,    /* immediate data (or its offset) outside the IU */
	SRP_IU__COUNT
};

const char *srp_iu_err_str(enum srp_iu_err e);

/* What the channel negotiated, for the command parser. */
struct srp_cmd_limits {
	bool imm;		  /* immediate data accepted */
	uint16_t imm_data_offset; /* where the initiator puts it */
	uint16_t buf_fmt;	  /* SRP_BUF_FMT_* accepted */
};

#endif
