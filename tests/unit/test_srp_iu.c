/* SRP information units: every field where Linux's <scsi/srp.h> (r16a) puts it, and every
 * malformed SRP_CMD the parser must refuse without reading past the IU. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "transports/srp/srp_iu.h"

static const struct srp_cmd_limits LIM_ALL = {
    .imm = true, .imm_data_offset = 68, .buf_fmt = SRP_BUF_FMT_DIRECT | SRP_BUF_FMT_INDIRECT};

static const uint8_t TAG[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};

static void put_desc(uint8_t *d, uint64_t va, uint32_t key, uint32_t len)
{
	srp_put64(d, va);
	srp_put32(d + 8, key);
	srp_put32(d + 12, len);
}

/* An SRP_CMD header laid out by hand: READ(10) of 8 blocks on LUN 1. */
static void cmd_hdr(uint8_t *iu, uint8_t buf_fmt, uint8_t out_cnt, uint8_t in_cnt)
{
	memset(iu, 0, SRP_CMD_HDR_LEN);
	iu[0] = SRP_OP_CMD;
	iu[1] = 0x02;
	iu[5] = buf_fmt;
	iu[6] = out_cnt;
	iu[7] = in_cnt;
	memcpy(iu + 8, TAG, 8);
	iu[21] = 0x01; /* LUN 1, peripheral addressing */
	iu[29] = 2;    /* ORDERED in SRP's encoding */
	iu[32] = 0x28;
	iu[40] = 8;
}

static enum srp_iu_err parse(const uint8_t *iu, size_t len, struct srp_cmd *c, enum srp_dir *bd)
{
	return srp_parse_cmd(iu, len, &LIM_ALL, c, bd);
}

Test(srp_iu, peek_needs_a_tag)
{
	uint8_t iu[16] = {SRP_OP_CMD};
	struct srp_tag t;
	uint8_t op;

	memcpy(iu + 8, TAG, 8);
	cr_assert_eq(srp_iu_peek(iu, 15, &op, &t), SRP_IU_NO_TAG);
	cr_assert_eq(srp_iu_peek(iu, 0, &op, &t), SRP_IU_NO_TAG);
	cr_assert_eq(srp_iu_peek(iu, 16, &op, &t), SRP_IU_OK);
	cr_assert_eq(op, SRP_OP_CMD);
	cr_assert_arr_eq(t.b, TAG, 8);
}

Test(srp_iu, login_req_rdma_layout)
{
	uint8_t p[92] = {0};
	struct srp_login_req r;

	memcpy(p, TAG, 8);
	p[8] = 0x00;
	p[9] = 0x06; /* DIRECT | INDIRECT */
	p[10] = SRP_REQ_IMMED | SRP_MCA_MULTI;
	p[11] = SRP_OP_LOGIN_REQ;
	srp_put32(p + 12, 8260);
	for (int i = 0; i < 16; i++) {
		p[16 + i] = (uint8_t)(0xa0 + i);
		p[32 + i] = (uint8_t)(0xb0 + i);
	}
	srp_put16(p + 48, 68);
	cr_assert_eq(srp_parse_login_rdma(p, sizeof(p), &r), SRP_IU_OK); /* padded: accepted */
	cr_assert_arr_eq(r.tag.b, TAG, 8);
	cr_assert_eq(r.req_buf_fmt, 6);
	cr_assert_eq(r.req_flags, SRP_REQ_IMMED | SRP_MCA_MULTI);
	cr_assert_eq(r.req_it_iu_len, 8260);
	cr_assert_eq(r.initiator_port_id[0], 0xa0);
	cr_assert_eq(r.initiator_port_id[15], 0xaf);
	cr_assert_eq(r.target_port_id[0], 0xb0);
	cr_assert_eq(r.target_port_id[15], 0xbf);
	cr_assert_eq(r.imm_data_offset, 68);
	cr_assert_eq(srp_parse_login_rdma(p, 55, &r), SRP_IU_SHORT);
	p[11] = SRP_OP_CMD;
	cr_assert_eq(srp_parse_login_rdma(p, 56, &r), SRP_IU_UNKNOWN_OP);
}

Test(srp_iu, login_req_rdma_round_trip)
{
	struct srp_login_req in = {
	    .req_it_iu_len = 276, .req_buf_fmt = 6, .req_flags = 1, .imm_data_offset = 0};
	struct srp_login_req out;
	uint8_t p[SRP_LOGIN_REQ_RDMA_LEN];

	memcpy(in.tag.b, TAG, 8);
	memset(in.initiator_port_id, 0x5a, 16);
	memset(in.target_port_id, 0xa5, 16);
	cr_assert_eq(srp_build_login_rdma(p, &in), 56);
	cr_assert_eq(p[11], SRP_OP_LOGIN_REQ);
	cr_assert_eq(srp_parse_login_rdma(p, 56, &out), SRP_IU_OK);
	cr_assert_eq(memcmp(&in, &out, sizeof(in)), 0);
}

Test(srp_iu, login_req_ib_layout)
{
	uint8_t p[64] = {SRP_OP_LOGIN_REQ};
	struct srp_login_req r;

	memcpy(p + 8, TAG, 8);
	srp_put32(p + 16, 4096);
	srp_put16(p + 24, 2);
	p[26] = 0;
	srp_put16(p + 28, 72);
	p[32] = 0xcc;
	p[48] = 0xdd;
	cr_assert_eq(srp_parse_login_ib(p, 64, &r), SRP_IU_OK);
	cr_assert_eq(r.req_it_iu_len, 4096);
	cr_assert_eq(r.req_buf_fmt, 2);
	cr_assert_eq(r.imm_data_offset, 72);
	cr_assert_eq(r.initiator_port_id[0], 0xcc);
	cr_assert_eq(r.target_port_id[0], 0xdd);
	cr_assert_eq(srp_parse_login_ib(p, 63, &r), SRP_IU_SHORT);
}

Test(srp_iu, login_rsp_and_rej_layout)
{
	struct srp_login_rsp rsp = {.req_lim_delta = 128,
				    .max_it_iu_len = 8260,
				    .max_ti_iu_len = 288,
				    .buf_fmt = 6,
				    .rsp_flags = 0x82};
	struct srp_login_rej rej = {.reason = SRP_REJ_IT_IU_LEN_TOO_LARGE, .buf_fmt = 6};
	struct srp_login_rsp r2;
	struct srp_login_rej j2;
	uint8_t b[64];

	memcpy(rsp.tag.b, TAG, 8);
	memset(b, 0xee, sizeof(b));
	cr_assert_eq(srp_build_login_rsp(b, &rsp), 52);
	cr_assert_eq(b[0], 0xc0);
	cr_assert_eq(srp_get32(b + 4), 128);
	cr_assert_arr_eq(b + 8, TAG, 8);
	cr_assert_eq(srp_get32(b + 16), 8260);
	cr_assert_eq(srp_get32(b + 20), 288);
	cr_assert_eq(srp_get16(b + 24), 6);
	cr_assert_eq(b[26], 0x82);
	for (int i = 27; i < 52; i++)
		cr_assert_eq(b[i], 0, "reserved byte %d", i);
	cr_assert_eq(b[52], 0xee, "nothing past 52 bytes");
	cr_assert_eq(srp_parse_login_rsp(b, 52, &r2), SRP_IU_OK);
	cr_assert_eq(r2.max_ti_iu_len, 288);
	cr_assert_eq(r2.rsp_flags, 0x82);

	memcpy(rej.tag.b, TAG, 8);
	cr_assert_eq(srp_build_login_rej(b, &rej), 32);
	cr_assert_eq(b[0], 0xc2);
	cr_assert_eq(srp_get32(b + 4), 0x00010002);
	cr_assert_arr_eq(b + 8, TAG, 8);
	cr_assert_eq(srp_get16(b + 24), 6);
	cr_assert_eq(srp_parse_login_rej(b, 32, &j2), SRP_IU_OK);
	cr_assert_eq(j2.reason, SRP_REJ_IT_IU_LEN_TOO_LARGE);
}

Test(srp_iu, cmd_direct_data_in)
{
	uint8_t iu[64];
	struct srp_cmd c;
	struct srp_desc d;
	enum srp_dir bd;

	cmd_hdr(iu, SRP_FMT_DIRECT, 0, 0);
	put_desc(iu + 48, 0x1122334455667788ull, 0xabcd, 4096);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_OK);
	cr_assert_arr_eq(c.tag.b, TAG, 8);
	cr_assert_eq(c.dir, SRP_DIR_IN);
	cr_assert_eq(c.fmt, SRP_FMT_DIRECT);
	cr_assert_eq(c.xfer_len, 4096);
	cr_assert_eq(c.ndesc, 1);
	cr_assert_eq(c.cdb_len, 16);
	cr_assert_eq(c.cdb[0], 0x28);
	cr_assert_eq(c.cdb[8], 8);
	cr_assert_eq(c.lun[1], 1);
	cr_assert_eq(c.task_attr, 2);
	cr_assert_eq(c.sol_not, 0x02);
	d = srp_cmd_desc(iu, &c, 0);
	cr_assert_eq(d.va, 0x1122334455667788ull);
	cr_assert_eq(d.key, 0xabcd);
	cr_assert_eq(d.len, 4096);
}

Test(srp_iu, cmd_direct_data_out_and_no_data)
{
	uint8_t iu[64];
	struct srp_cmd c;
	enum srp_dir bd;

	cmd_hdr(iu, SRP_FMT_DIRECT << 4, 0, 0);
	put_desc(iu + 48, 0x1000, 7, 512);
	cr_assert_eq(parse(iu, 64, &c, &bd), SRP_IU_OK);
	cr_assert_eq(c.dir, SRP_DIR_OUT);
	cr_assert_eq(c.xfer_len, 512);
	cmd_hdr(iu, 0, 0, 0);
	cr_assert_eq(parse(iu, 48, &c, &bd), SRP_IU_OK);
	cr_assert_eq(c.dir, SRP_DIR_NONE);
	cr_assert_eq(c.xfer_len, 0);
	cr_assert_eq(c.ndesc, 0);
}

Test(srp_iu, cmd_indirect_three_descriptors)
{
	uint8_t iu[48 + 20 + 3 * 16];
	struct srp_cmd c;
	enum srp_dir bd;

	cmd_hdr(iu, SRP_FMT_INDIRECT, 0, 3);
	put_desc(iu + 48, 0xfeed0000, 9, 48); /* table descriptor: 3 entries */
	srp_put32(iu + 64, 4096 + 8192 + 512);
	put_desc(iu + 68, 0x10000, 1, 4096);
	put_desc(iu + 84, 0x20000, 2, 8192);
	put_desc(iu + 100, 0x30000, 3, 512);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_OK);
	cr_assert_eq(c.dir, SRP_DIR_IN);
	cr_assert_eq(c.fmt, SRP_FMT_INDIRECT);
	cr_assert_eq(c.ndesc, 3);
	cr_assert_eq(c.xfer_len, 12800);
	cr_assert_eq(srp_cmd_desc(iu, &c, 0).va, 0x10000);
	cr_assert_eq(srp_cmd_desc(iu, &c, 1).key, 2);
	cr_assert_eq(srp_cmd_desc(iu, &c, 2).len, 512);
}

Test(srp_iu, cmd_immediate_data)
{
	uint8_t iu[68 + 512];
	struct srp_cmd c;
	enum srp_dir bd;
	struct srp_cmd_limits no_imm = LIM_ALL;

	cmd_hdr(iu, SRP_FMT_IMM << 4, 0, 0);
	iu[32] = 0x2a; /* WRITE(10) */
	srp_put32(iu + 48, 512);
	memset(iu + 68, 0x5c, 512);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_OK);
	cr_assert_eq(c.dir, SRP_DIR_OUT);
	cr_assert_eq(c.fmt, SRP_FMT_IMM);
	cr_assert_eq(c.xfer_len, 512);
	cr_assert_eq(c.imm_off, 68);
	cr_assert_eq(parse(iu, sizeof(iu) - 1, &c, &bd), SRP_IU_IMM_PAST_IU, "data cut short");
	cr_assert_eq(parse(iu, 51, &c, &bd), SRP_IU_IMM_PAST_IU, "no room for the length");
	no_imm.imm = false;
	cr_assert_eq(srp_parse_cmd(iu, sizeof(iu), &no_imm, &c, &bd), SRP_IU_BAD_FMT);
	cr_assert_eq(bd, SRP_DIR_OUT);
	/* the data may not start inside the immediate descriptor */
	no_imm.imm = true;
	no_imm.imm_data_offset = 50;
	cr_assert_eq(srp_parse_cmd(iu, sizeof(iu), &no_imm, &c, &bd), SRP_IU_IMM_PAST_IU);
	/* immediate data-in does not exist */
	cmd_hdr(iu, SRP_FMT_IMM, 0, 0);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_BAD_FMT);
	cr_assert_eq(bd, SRP_DIR_IN);
}

Test(srp_iu, cmd_additional_cdb)
{
	uint8_t iu[48 + 16 + 16];
	struct srp_cmd c;
	enum srp_dir bd;

	cmd_hdr(iu, SRP_FMT_DIRECT, 0, 0);
	iu[31] = 16; /* 16 more CDB bytes: a 32-byte CDB */
	iu[32] = 0x7f;
	iu[47 + 16] = 0x99;
	put_desc(iu + 64, 0x4000, 5, 4096);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_OK);
	cr_assert_eq(c.cdb_len, 32);
	cr_assert_eq(c.cdb[31], 0x99);
	cr_assert_eq(srp_cmd_desc(iu, &c, 0).va, 0x4000, "descriptor after the additional CDB");
	cr_assert_eq(parse(iu, 79, &c, &bd), SRP_IU_DESC_PAST_IU);
	cr_assert_eq(parse(iu, 63, &c, &bd), SRP_IU_SHORT, "CDB itself cut");
	iu[31] = 20;
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_CDB_TOO_LONG);
	iu[31] = 16 | 0x03; /* the two low bits are reserved */
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_OK);
	cr_assert_eq(c.cdb_len, 32);
}

Test(srp_iu, cmd_malformed_headers)
{
	uint8_t iu[64];
	struct srp_cmd c;
	enum srp_dir bd;

	cmd_hdr(iu, SRP_FMT_DIRECT, 0, 0);
	put_desc(iu + 48, 1, 1, 512);
	cr_assert_eq(parse(iu, 15, &c, &bd), SRP_IU_NO_TAG);
	cr_assert_eq(parse(iu, 16, &c, &bd), SRP_IU_SHORT);
	cr_assert_arr_eq(c.tag.b, TAG, 8, "the tag is known for the answer");
	cr_assert_eq(parse(iu, 47, &c, &bd), SRP_IU_SHORT);
	cr_assert_eq(parse(iu, 63, &c, &bd), SRP_IU_DESC_PAST_IU);
	cr_assert_eq(bd, SRP_DIR_IN);
	iu[0] = 0x77;
	cr_assert_eq(parse(iu, 64, &c, &bd), SRP_IU_UNKNOWN_OP);
}

Test(srp_iu, cmd_bad_formats)
{
	uint8_t iu[100] = {0};
	struct srp_cmd c;
	enum srp_dir bd;
	struct srp_cmd_limits indirect_only = LIM_ALL;

	for (int f = 4; f < 16; f++) {
		cmd_hdr(iu, (uint8_t)f, 0, 0);
		cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_BAD_FMT, "in fmt %d", f);
		cr_assert_eq(bd, SRP_DIR_IN);
		cmd_hdr(iu, (uint8_t)(f << 4), 0, 0);
		cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_BAD_FMT, "out fmt %d", f);
		cr_assert_eq(bd, SRP_DIR_OUT);
	}
	cmd_hdr(iu, 0x11, 0, 0);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_BIDI);
	cmd_hdr(iu, 0x15, 0, 0);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_BAD_FMT);
	cr_assert_eq(bd, SRP_DIR_IN);
	indirect_only.buf_fmt = SRP_BUF_FMT_INDIRECT;
	cmd_hdr(iu, SRP_FMT_DIRECT, 0, 0);
	cr_assert_eq(srp_parse_cmd(iu, sizeof(iu), &indirect_only, &c, &bd), SRP_IU_BAD_FMT);
}

Test(srp_iu, cmd_bad_indirect_tables)
{
	uint8_t iu[48 + 20 + 4 * 16];
	struct srp_cmd c;
	enum srp_dir bd;

	/* count 0 */
	cmd_hdr(iu, SRP_FMT_INDIRECT << 4, 0, 0);
	put_desc(iu + 48, 0, 0, 32);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_BAD_DESC_COUNT);
	cr_assert_eq(bd, SRP_DIR_OUT);
	/* count above what the table says */
	cmd_hdr(iu, SRP_FMT_INDIRECT << 4, 3, 0);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_BAD_DESC_COUNT);
	/* table length not a multiple of 16, or zero */
	put_desc(iu + 48, 0, 0, 33);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_BAD_TABLE);
	put_desc(iu + 48, 0, 0, 0);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_BAD_TABLE);
	/* descriptors past the IU: 4 announced, IU long enough for 3 */
	cmd_hdr(iu, SRP_FMT_INDIRECT, 0, 4);
	put_desc(iu + 48, 0, 0, 64);
	cr_assert_eq(parse(iu, sizeof(iu) - 16, &c, &bd), SRP_IU_DESC_PAST_IU);
	cr_assert_eq(bd, SRP_DIR_IN);
	/* header itself past the IU */
	cr_assert_eq(parse(iu, 60, &c, &bd), SRP_IU_DESC_PAST_IU);
	/* fewer in the IU than in the table: external table */
	cmd_hdr(iu, SRP_FMT_INDIRECT, 0, 2);
	put_desc(iu + 48, 0, 0, 64);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_EXT_TABLE);
	/* total length that is not the sum */
	cmd_hdr(iu, SRP_FMT_INDIRECT, 0, 2);
	put_desc(iu + 48, 0, 0, 32);
	srp_put32(iu + 64, 1000);
	put_desc(iu + 68, 1, 1, 500);
	put_desc(iu + 84, 2, 2, 499);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_LEN_MISMATCH);
	put_desc(iu + 84, 2, 2, 500);
	cr_assert_eq(parse(iu, sizeof(iu), &c, &bd), SRP_IU_OK);
	cr_assert_eq(c.xfer_len, 1000);
}

/* Random IUs: the parser never reads past len (ASan checks), and whatever it accepts keeps
 * every descriptor and the immediate data inside the IU. */
Test(srp_iu, cmd_random_bytes_stay_in_bounds)
{
	unsigned seed = 12345;

	for (int n = 0; n < 200000; n++) {
		size_t len = (size_t)(rand_r(&seed) % 200);
		uint8_t *iu = malloc(len ? len : 1);
		struct srp_cmd c;
		enum srp_dir bd;

		for (size_t i = 0; i < len; i++)
			iu[i] = (uint8_t)rand_r(&seed);
		if (len > 0 && rand_r(&seed) % 2)
			iu[0] = SRP_OP_CMD;
		if (len > 5 && rand_r(&seed) % 2)
			iu[5] = (uint8_t)(rand_r(&seed) % 4 << (rand_r(&seed) % 2 ? 4 : 0));
		if (len > 31 && rand_r(&seed) % 2)
			iu[31] &= 0x1c;
		if (parse(iu, len, &c, &bd) == SRP_IU_OK) {
			cr_assert_leq(SRP_CMD_HDR_LEN + (size_t)c.cdb_len - 16, len);
			if (c.fmt == SRP_FMT_IMM)
				cr_assert_leq((size_t)c.imm_off + c.xfer_len, len);
			else
				cr_assert_leq(c.desc_off + (size_t)c.ndesc * 16, len);
			for (unsigned i = 0; i < c.ndesc; i++)
				(void)srp_cmd_desc(iu, &c, i);
		}
		free(iu);
	}
}

Test(srp_iu, cmd_build_round_trip)
{
	struct srp_desc d[3] = {{0x1000, 1, 4096}, {0x9000, 2, 512}, {0x20000, 3, 8192}};
	uint8_t cdb[16] = {0x8a};
	struct srp_cmd_build b = {.cdb = cdb,
				  .cdb_len = 16,
				  .dir = SRP_DIR_OUT,
				  .fmt = SRP_FMT_INDIRECT,
				  .descs = d,
				  .ndesc = 3,
				  .table = {0xabc0, 77, 0}};
	uint8_t iu[256];
	struct srp_cmd c;
	enum srp_dir bd;
	size_t n;

	memcpy(b.tag.b, TAG, 8);
	b.lun[1] = 3;
	n = srp_build_cmd(iu, sizeof(iu), &b);
	cr_assert_eq(n, 48 + 20 + 48);
	cr_assert_eq(parse(iu, n, &c, &bd), SRP_IU_OK);
	cr_assert_eq(c.xfer_len, 4096 + 512 + 8192);
	cr_assert_eq(c.ndesc, 3);
	cr_assert_eq(c.lun[1], 3);
	cr_assert_eq(srp_cmd_desc(iu, &c, 2).va, 0x20000);
	cr_assert_eq(srp_get32(iu + 48 + 8), 77, "table key");

	b.fmt = SRP_FMT_DIRECT;
	b.ndesc = 1;
	b.dir = SRP_DIR_IN;
	n = srp_build_cmd(iu, sizeof(iu), &b);
	cr_assert_eq(n, 64);
	cr_assert_eq(parse(iu, n, &c, &bd), SRP_IU_OK);
	cr_assert_eq(c.dir, SRP_DIR_IN);
	cr_assert_eq(c.xfer_len, 4096);

	b.fmt = SRP_FMT_IMM;
	b.dir = SRP_DIR_OUT;
	b.imm_len = 100;
	b.imm_off = 68;
	n = srp_build_cmd(iu, sizeof(iu), &b);
	cr_assert_eq(n, 68);
	cr_assert_eq(parse(iu, 168, &c, &bd), SRP_IU_OK);
	cr_assert_eq(c.xfer_len, 100);
	cr_assert_eq(srp_build_cmd(iu, 60, &b), 0, "does not fit");
}

Test(srp_iu, tsk_mgmt_layout)
{
	uint8_t iu[48] = {SRP_OP_TSK_MGMT, 0x04};
	struct srp_tsk_mgmt t, t2;
	uint8_t out[48];

	memcpy(iu + 8, TAG, 8);
	iu[21] = 2;
	iu[30] = SRP_TMF_ABORT_TASK;
	memset(iu + 32, 0x3c, 8);
	cr_assert_eq(srp_parse_tsk_mgmt(iu, 48, &t), SRP_IU_OK);
	cr_assert_eq(t.func, SRP_TMF_ABORT_TASK);
	cr_assert_eq(t.lun[1], 2);
	cr_assert_eq(t.task_tag.b[7], 0x3c);
	cr_assert_eq(t.sol_not, 0x04);
	cr_assert_eq(srp_parse_tsk_mgmt(iu, 47, &t), SRP_IU_SHORT);
	cr_assert_eq(srp_parse_tsk_mgmt(iu, 10, &t), SRP_IU_NO_TAG);
	cr_assert_eq(srp_parse_tsk_mgmt(iu, 48, &t), SRP_IU_OK);
	srp_build_tsk_mgmt(out, &t);
	cr_assert_eq(srp_parse_tsk_mgmt(out, 48, &t2), SRP_IU_OK);
	cr_assert_eq(memcmp(&t, &t2, sizeof(t)), 0);
}

Test(srp_iu, rsp_layout)
{
	uint8_t sense[18] = {0x70, 0, 0x05, [12] = 0x24};
	struct srp_rsp_info r = {.req_lim_delta = 3,
				 .status = 2,
				 .resp_code = -1,
				 .sense = sense,
				 .sense_len = sizeof(sense)};
	struct srp_rsp_view v;
	uint8_t b[300];
	size_t n;

	memcpy(r.tag.b, TAG, 8);
	srp_rsp_set_resid(&r, SRP_DIR_IN, 1, 4096);
	n = srp_build_rsp(b, sizeof(b), &r);
	cr_assert_eq(n, 36 + 18);
	cr_assert_eq(b[0], 0xc1);
	cr_assert_eq(srp_get32(b + 4), 3);
	cr_assert_arr_eq(b + 8, TAG, 8);
	cr_assert_eq(b[18], SRP_RSP_F_SNSVALID | SRP_RSP_F_DIUNDER);
	cr_assert_eq(b[19], 2);
	cr_assert_eq(srp_get32(b + 20), 0);
	cr_assert_eq(srp_get32(b + 24), 4096);
	cr_assert_eq(srp_get32(b + 28), 18);
	cr_assert_eq(srp_get32(b + 32), 0);
	cr_assert_arr_eq(b + 36, sense, 18);
	cr_assert_eq(srp_parse_rsp(b, n, &v), SRP_IU_OK);
	cr_assert_eq(v.sense_len, 18);
	cr_assert_eq(v.sense[12], 0x24);
	cr_assert_eq(srp_parse_rsp(b, n - 1, &v), SRP_IU_DESC_PAST_IU);

	/* sense cut to the initiator's receive buffer */
	n = srp_build_rsp(b, 40, &r);
	cr_assert_eq(n, 40);
	cr_assert_eq(srp_get32(b + 28), 4);
	cr_assert_eq(srp_build_rsp(b, 35, &r), 0);

	/* task management answer: RSPVALID, 4 bytes of response data, code in byte 3 */
	r = (struct srp_rsp_info){.resp_code = SRP_RSP_CODE_NOT_SUPPORTED};
	n = srp_build_rsp(b, sizeof(b), &r);
	cr_assert_eq(n, 40);
	cr_assert_eq(b[18], SRP_RSP_F_RSPVALID);
	cr_assert_eq(srp_get32(b + 32), 4);
	cr_assert_eq(b[39], 4);
	cr_assert_eq(srp_parse_rsp(b, n, &v), SRP_IU_OK);
	cr_assert_eq(v.resp[3], 4);

	/* data-out overflow */
	r = (struct srp_rsp_info){.resp_code = -1};
	srp_rsp_set_resid(&r, SRP_DIR_OUT, 2, 512);
	srp_build_rsp(b, sizeof(b), &r);
	cr_assert_eq(b[18], SRP_RSP_F_DOOVER);
	cr_assert_eq(srp_get32(b + 20), 512);
}

Test(srp_iu, small_ius)
{
	uint8_t b[16];
	struct srp_tag t;

	memcpy(t.b, TAG, 8);
	srp_build_t_logout(b, SRP_TLO_BAD_IN_COUNT, t);
	cr_assert_eq(b[0], 0x80);
	cr_assert_eq(srp_get32(b + 4), 9);
	cr_assert_arr_eq(b + 8, TAG, 8);
	srp_build_cred_req(b, 17, t);
	cr_assert_eq(b[0], 0x81);
	cr_assert_eq(srp_get32(b + 4), 17);
	srp_build_cred_rsp(b, t);
	cr_assert_eq(b[0], 0x41);
	srp_build_aer_rsp(b, t);
	cr_assert_eq(b[0], 0x42);
	srp_build_i_logout(b, t);
	cr_assert_eq(b[0], 0x03);
	cr_assert_arr_eq(b + 8, TAG, 8);
}

Test(srp_iu, solicited_notification)
{
	cr_assert(srp_rsp_solicited(0x02, 0));
	cr_assert_not(srp_rsp_solicited(0x02, 2));
	cr_assert(srp_rsp_solicited(0x04, 2));
	cr_assert_not(srp_rsp_solicited(0x00, 0));
}

Test(srp_iu, error_actions)
{
	uint32_t reason;

	cr_assert(srp_iu_err_action(SRP_IU_NO_TAG, SRP_DIR_NONE, &reason));
	cr_assert_eq(reason, SRP_TLO_NO_REASON);
	cr_assert(srp_iu_err_action(SRP_IU_UNKNOWN_OP, SRP_DIR_NONE, &reason));
	cr_assert_eq(reason, SRP_TLO_INVALID_IU);
	cr_assert(srp_iu_err_action(SRP_IU_BAD_FMT, SRP_DIR_IN, &reason));
	cr_assert_eq(reason, SRP_TLO_BAD_IN_FMT);
	cr_assert(srp_iu_err_action(SRP_IU_BAD_FMT, SRP_DIR_OUT, &reason));
	cr_assert_eq(reason, SRP_TLO_BAD_OUT_FMT);
	cr_assert(srp_iu_err_action(SRP_IU_BAD_DESC_COUNT, SRP_DIR_OUT, &reason));
	cr_assert_eq(reason, SRP_TLO_BAD_OUT_COUNT);
	cr_assert(srp_iu_err_action(SRP_IU_DESC_PAST_IU, SRP_DIR_IN, &reason));
	cr_assert_eq(reason, SRP_TLO_BAD_IN_COUNT);
	cr_assert_not(srp_iu_err_action(SRP_IU_SHORT, SRP_DIR_NONE, &reason));
	cr_assert_not(srp_iu_err_action(SRP_IU_BIDI, SRP_DIR_NONE, &reason));
	cr_assert_not(srp_iu_err_action(SRP_IU_LEN_MISMATCH, SRP_DIR_IN, &reason));
	cr_assert_not(srp_iu_err_action(SRP_IU_EXT_TABLE, SRP_DIR_IN, &reason));
	cr_assert_not(srp_iu_err_action(SRP_IU_IMM_PAST_IU, SRP_DIR_OUT, &reason));
	cr_assert_not(srp_iu_err_action(SRP_IU_CDB_TOO_LONG, SRP_DIR_NONE, &reason));
	for (int e = 0; e < SRP_IU__COUNT; e++)
		cr_assert_str_neq(srp_iu_err_str((enum srp_iu_err)e), "?");
}
