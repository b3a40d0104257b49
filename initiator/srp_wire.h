/* The SRP information units utgt-bench's srp engine sends and reads, encoded here and nowhere
 * else: the tester does not share protocol code with the target it measures, so a layout
 * mistake on one side shows up as a failure instead of cancelling out (issue 17).  Written
 * from T10's SRP (r16a) and the RDMA/CM login layout Linux's ib_srp uses; the byte images are
 * pinned in tests/unit/test_bench_srp_wire.c.  Pure functions over byte buffers. */
#ifndef UTGT_BENCH_SRP_WIRE_H
#define UTGT_BENCH_SRP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* IU opcodes (byte 0) */
enum {
	UB_SRP_LOGIN_REQ = 0x00,
	UB_SRP_CMD = 0x02,
	UB_SRP_CRED_RSP = 0x41,
	UB_SRP_AER_RSP = 0x42,
	UB_SRP_T_LOGOUT = 0x80,
	UB_SRP_CRED_REQ = 0x81,
	UB_SRP_AER_REQ = 0x82,
	UB_SRP_LOGIN_RSP = 0xc0,
	UB_SRP_RSP = 0xc1,
	UB_SRP_LOGIN_REJ = 0xc2,
};

#define UB_SRP_LOGIN_REQ_LEN 56 /* RDMA/CM private data */
#define UB_SRP_CMD_HDR_LEN   48 /* up to and with the 16-byte CDB */
#define UB_SRP_TARGET_RSP_LEN 16 /* SRP_CRED_RSP, SRP_AER_RSP */

struct ub_srp_login {
	uint8_t initiator_port_id[16];
	uint8_t target_port_id[16];
	uint32_t it_iu_len;
	bool multichannel; /* join an existing nexus instead of replacing its channels */
	uint16_t imm_off;  /* 0: no immediate data asked for */
};
void ub_srp_login_req(uint8_t out[UB_SRP_LOGIN_REQ_LEN], const struct ub_srp_login *l);

struct ub_srp_login_rsp {
	uint32_t req_lim;
	uint32_t max_it_iu_len, max_ti_iu_len;
	bool imm; /* the target takes immediate data */
};
/* false when p is not an SRP_LOGIN_RSP of at least 52 bytes */
bool ub_srp_login_rsp(const uint8_t *p, size_t len, struct ub_srp_login_rsp *out);
/* false when p is not an SRP_LOGIN_REJ of at least 32 bytes; else the reason code */
bool ub_srp_login_rej(const uint8_t *p, size_t len, uint32_t *reason);

/* One memory descriptor: virtual address, remote key, length. */
struct ub_srp_buf {
	uint64_t va;
	uint32_t key;
	uint32_t len;
};

enum ub_srp_data { UB_SRP_NONE, UB_SRP_IN, UB_SRP_OUT };

struct ub_srp_cmd {
	uint64_t tag;
	uint16_t lun; /* single level: peripheral below 256, flat above */
	const uint8_t *cdb;
	uint8_t cdb_len; /* 6..16 */
	enum ub_srp_data dir;
	/* one buffer: a direct descriptor; several: an indirect table carried in the IU, whose
	 * address (table_va/table_key) is where the IU itself sits in registered memory */
	const struct ub_srp_buf *bufs;
	unsigned nbufs;
	uint64_t table_va;
	uint32_t table_key;
	/* immediate data (dir OUT, nbufs 0): imm_len bytes follow at imm_off, not copied here */
	uint32_t imm_len;
	uint16_t imm_off;
};
/* The SRP_CMD into out (room bytes).  Returns its length (imm_off + imm_len with immediate
 * data, though only the header is written), or 0 when it does not fit or is malformed. */
size_t ub_srp_cmd(uint8_t *out, size_t room, const struct ub_srp_cmd *c);

struct ub_srp_rsp {
	uint64_t tag;
	uint32_t req_lim_delta;
	uint8_t status;
	bool di_under, do_under; /* residual counts below are meaningful */
	uint32_t di_resid, do_resid;
	const uint8_t *sense; /* into p */
	uint32_t sense_len;
};
/* false when p is not an SRP_RSP or its response/sense lengths run past len */
bool ub_srp_rsp(const uint8_t *p, size_t len, struct ub_srp_rsp *out);

/* A request of the target's: opcode, tag and credit delta (SRP_CRED_REQ, SRP_AER_REQ,
 * SRP_T_LOGOUT).  false when shorter than 16 bytes. */
bool ub_srp_target_req(const uint8_t *p, size_t len, uint8_t *op, uint64_t *tag,
		       uint32_t *req_lim_delta);
/* The reason an SRP_T_LOGOUT gives (bytes 16-19); false when shorter than 20 bytes. */
bool ub_srp_t_logout(const uint8_t *p, size_t len, uint32_t *reason);
/* The answer to a credit or event request (UB_SRP_TARGET_RSP_LEN bytes). */
void ub_srp_target_rsp(uint8_t out[UB_SRP_TARGET_RSP_LEN], uint8_t op, uint64_t tag);

#endif
