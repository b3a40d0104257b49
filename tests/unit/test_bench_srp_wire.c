/* utgt-bench's own SRP codec (initiator/srp_wire.c): byte images written out from T10's SRP
 * (r16a) and Linux ib_srp's RDMA/CM login layout, so the tester's encoding is pinned
 * independently of the target's; then a cross-check that the target's parser reads what the
 * tester writes and the tester reads what the target writes. */
#include <criterion/criterion.h>
#include <string.h>

#include "initiator/srp_wire.h"
#include "transports/srp/srp_iu.h"

Test(bench_srp_wire, login_request_byte_image)
{
	struct ub_srp_login l = {.it_iu_len = 8260, .multichannel = true, .imm_off = 68};
	uint8_t out[UB_SRP_LOGIN_REQ_LEN];
	uint8_t want[UB_SRP_LOGIN_REQ_LEN] = {
	    0, 0, 0, 0, 0, 0, 0, 0, /* tag */
	    0x00, 0x06,		    /* REQUIRED BUFFER FORMATS: direct + indirect */
	    0x81,		    /* immediate data requested, multichannel action 1 */
	    0x00,		    /* SRP_LOGIN_REQ */
	    0x00, 0x00, 0x20, 0x44, /* REQUESTED MAXIMUM INITIATOR TO TARGET IU LENGTH 8260 */
	};

	for (int i = 0; i < 16; i++) {
		l.initiator_port_id[i] = (uint8_t)(0x10 + i);
		l.target_port_id[i] = (uint8_t)(0x80 + i);
		want[16 + i] = (uint8_t)(0x10 + i);
		want[32 + i] = (uint8_t)(0x80 + i);
	}
	want[48] = 0x00, want[49] = 68; /* immediate data offset */
	ub_srp_login_req(out, &l);
	cr_assert_arr_eq(out, want, sizeof(want));

	l.multichannel = false, l.imm_off = 0;
	ub_srp_login_req(out, &l);
	cr_assert_eq(out[10], 0x00);
	cr_assert_eq(out[48] | out[49], 0);
}

Test(bench_srp_wire, login_response_and_reject)
{
	uint8_t rsp[52] = {0xc0, 0, 0, 0, 0, 0, 0, 64 /* REQUEST LIMIT DELTA */};
	uint8_t rej[32] = {0xc2, 0, 0, 0, 0x00, 0x01, 0x00, 0x02 /* reason */};
	struct ub_srp_login_rsp r;
	uint32_t reason = 0;

	rsp[16] = 0x00, rsp[17] = 0x00, rsp[18] = 0x20, rsp[19] = 0x44; /* max IT IU 8260 */
	rsp[20] = 0x00, rsp[21] = 0x00, rsp[22] = 0x10, rsp[23] = 0x00; /* max TI IU 4096 */
	rsp[26] = 0x80;							  /* immediate ok */
	cr_assert(ub_srp_login_rsp(rsp, sizeof(rsp), &r));
	cr_assert_eq(r.req_lim, 64);
	cr_assert_eq(r.max_it_iu_len, 8260);
	cr_assert_eq(r.max_ti_iu_len, 4096);
	cr_assert(r.imm);
	cr_assert_not(ub_srp_login_rsp(rsp, 51, &r), "short");
	cr_assert_not(ub_srp_login_rsp(rej, sizeof(rej), &r), "wrong opcode");
	cr_assert_not(ub_srp_login_rsp(NULL, 0, &r));
	cr_assert(ub_srp_login_rej(rej, sizeof(rej), &reason));
	cr_assert_eq(reason, 0x00010002);
	cr_assert_not(ub_srp_login_rej(rej, 31, &reason));
}

Test(bench_srp_wire, read_with_a_direct_descriptor)
{
	static const uint8_t cdb[16] = {0x88, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 8, 0, 0};
	struct ub_srp_buf b = {0x1122334455667788ull, 0xaabbccdd, 4096};
	struct ub_srp_cmd c = {.tag = 7, .lun = 3, .cdb = cdb, .cdb_len = 16, .dir = UB_SRP_IN,
			       .bufs = &b, .nbufs = 1};
	uint8_t out[128];
	uint8_t want[64] = {
	    0x02, 0, 0, 0, 0, 0x01, /* SRP_CMD; DATA-IN BUFFER DESCRIPTOR FORMAT direct */
	    0,    0,		    /* descriptor counts: none for a direct descriptor */
	    0,    0, 0, 0, 0, 0, 0, 7, /* tag */
	    0,    0, 0, 0,		/* reserved */
	    0,    3, 0, 0, 0, 0, 0, 0, /* LUN 3 (peripheral) */
	    0,    0, 0, 0,		/* task attribute SIMPLE, no additional CDB */
	};

	memcpy(want + 32, cdb, 16);
	memcpy(want + 48, (uint8_t[]){0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0xaa, 0xbb,
				      0xcc, 0xdd, 0x00, 0x00, 0x10, 0x00},
	       16);
	cr_assert_eq(ub_srp_cmd(out, sizeof(out), &c), 64);
	cr_assert_arr_eq(out, want, 64);
	c.lun = 300; /* flat space addressing above 255 */
	ub_srp_cmd(out, sizeof(out), &c);
	cr_assert_eq(out[20], 0x41);
	cr_assert_eq(out[21], 0x2c);
}

Test(bench_srp_wire, write_with_an_indirect_table)
{
	static const uint8_t cdb[10] = {0x2a};
	struct ub_srp_buf b[3] = {{0x1000, 1, 512}, {0x3000, 1, 1024}, {0x9000, 2, 2560}};
	struct ub_srp_cmd c = {.tag = 1, .cdb = cdb, .cdb_len = 10, .dir = UB_SRP_OUT, .bufs = b,
			       .nbufs = 3, .table_va = 0xabc0, .table_key = 0x55};
	uint8_t out[256];

	cr_assert_eq(ub_srp_cmd(out, sizeof(out), &c), 48 + 20 + 3 * 16);
	cr_assert_eq(out[5], 0x20, "DATA-OUT format indirect in the high nibble");
	cr_assert_eq(out[6], 3, "DATA-OUT DESCRIPTOR COUNT");
	cr_assert_eq(out[7], 0);
	/* the table's own descriptor: its address, key and 3 x 16 bytes */
	cr_assert_arr_eq(out + 48,
			 ((uint8_t[]){0, 0, 0, 0, 0, 0, 0xab, 0xc0, 0, 0, 0, 0x55, 0, 0, 0, 48}), 16);
	/* TOTAL LENGTH 4096, then the descriptors in order */
	cr_assert_arr_eq(out + 64, ((uint8_t[]){0, 0, 0x10, 0}), 4);
	cr_assert_arr_eq(out + 68 + 32,
			 ((uint8_t[]){0, 0, 0, 0, 0, 0, 0x90, 0, 0, 0, 0, 2, 0, 0, 0x0a, 0}), 16);
	cr_assert_eq(ub_srp_cmd(out, 100, &c), 0, "does not fit");
	c.nbufs = 0;
	cr_assert_eq(ub_srp_cmd(out, sizeof(out), &c), 0, "data without a buffer");
}

Test(bench_srp_wire, write_with_immediate_data)
{
	static const uint8_t cdb[16] = {0x8a};
	struct ub_srp_cmd c = {.tag = 2, .cdb = cdb, .cdb_len = 16, .dir = UB_SRP_OUT,
			       .imm_len = 4096, .imm_off = 68};
	uint8_t out[128];

	cr_assert_eq(ub_srp_cmd(out, sizeof(out), &c), 68 + 4096);
	cr_assert_eq(out[5], 0x30, "DATA-OUT format immediate");
	cr_assert_arr_eq(out + 48, ((uint8_t[]){0, 0, 0x10, 0}), 4, "immediate data length");
	c.imm_off = 50;
	cr_assert_eq(ub_srp_cmd(out, sizeof(out), &c), 0, "offset inside the header");
}

Test(bench_srp_wire, response_with_sense_and_residual)
{
	uint8_t rsp[36 + 4 + 18] = {0xc1, 0, 0, 0, 0, 0, 0, 2 /* delta */, 0, 0, 0, 0, 0, 0, 0, 9};
	struct ub_srp_rsp r;

	rsp[18] = 0x01 | 0x02 | 0x20; /* RSPVALID, SNSVALID, DIUNDER */
	rsp[19] = 0x02;		      /* CHECK CONDITION */
	rsp[27] = 0x40;		      /* data-in residual 64 */
	rsp[31] = 18;		      /* sense length */
	rsp[35] = 4;		      /* response data length */
	rsp[40] = 0x70, rsp[42] = 0x05, rsp[52] = 0x24;
	cr_assert(ub_srp_rsp(rsp, sizeof(rsp), &r));
	cr_assert_eq(r.tag, 9);
	cr_assert_eq(r.req_lim_delta, 2);
	cr_assert_eq(r.status, 2);
	cr_assert(r.di_under && !r.do_under);
	cr_assert_eq(r.di_resid, 64);
	cr_assert_eq(r.sense_len, 18);
	cr_assert_eq(r.sense, rsp + 40, "sense follows the response data");
	cr_assert_not(ub_srp_rsp(rsp, sizeof(rsp) - 1, &r), "sense runs past the IU");
	rsp[0] = 0xc0;
	cr_assert_not(ub_srp_rsp(rsp, sizeof(rsp), &r));
}

Test(bench_srp_wire, target_requests_and_answers)
{
	uint8_t req[20] = {0x81, 0, 0, 0, 0, 0, 0, 5, 1, 2, 3, 4, 5, 6, 7, 8};
	uint8_t out[UB_SRP_TARGET_RSP_LEN];
	uint64_t tag;
	uint32_t delta, reason;
	uint8_t op;

	cr_assert(ub_srp_target_req(req, 16, &op, &tag, &delta));
	cr_assert_eq(op, UB_SRP_CRED_REQ);
	cr_assert_eq(delta, 5);
	cr_assert_eq(tag, 0x0102030405060708ull);
	cr_assert_not(ub_srp_target_req(req, 15, &op, &tag, &delta));
	ub_srp_target_rsp(out, op, tag);
	cr_assert_arr_eq(out, ((uint8_t[]){0x41, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}), 16);
	ub_srp_target_rsp(out, UB_SRP_AER_REQ, tag);
	cr_assert_eq(out[0], 0x42);
	req[0] = 0x80, req[19] = 3;
	cr_assert(ub_srp_t_logout(req, 20, &reason));
	cr_assert_eq(reason, 3);
	cr_assert_not(ub_srp_t_logout(req, 19, &reason));
}

/* The two sides agree: the target's parser reads the tester's IUs as meant. */
Test(bench_srp_wire, the_target_reads_what_the_tester_writes)
{
	static const uint8_t cdb[16] = {0x88};
	struct ub_srp_login l = {.it_iu_len = 8260, .imm_off = 68};
	struct ub_srp_buf b[2] = {{0x1000, 7, 4096}, {0x8000, 7, 8192}};
	struct ub_srp_cmd c = {.tag = 11, .lun = 5, .cdb = cdb, .cdb_len = 16, .dir = UB_SRP_IN,
			       .bufs = b, .nbufs = 2, .table_va = 0x4000, .table_key = 9};
	struct srp_cmd_limits lim = {.imm = true, .imm_data_offset = 68,
				     .buf_fmt = SRP_BUF_FMT_DIRECT | SRP_BUF_FMT_INDIRECT};
	uint8_t login[UB_SRP_LOGIN_REQ_LEN], iu[256];
	struct srp_login_req lr;
	struct srp_cmd sc;
	enum srp_dir bad;
	size_t n;

	ub_srp_login_req(login, &l);
	cr_assert_eq(srp_parse_login_rdma(login, sizeof(login), &lr), SRP_IU_OK);
	cr_assert_eq(lr.req_it_iu_len, 8260);
	cr_assert_eq(lr.imm_data_offset, 68);

	n = ub_srp_cmd(iu, sizeof(iu), &c);
	cr_assert_eq(srp_parse_cmd(iu, n, &lim, &sc, &bad), SRP_IU_OK);
	cr_assert_eq(sc.dir, SRP_DIR_IN);
	cr_assert_eq(sc.fmt, SRP_FMT_INDIRECT);
	cr_assert_eq(sc.ndesc, 2);
	cr_assert_eq(sc.xfer_len, 12288);
	cr_assert_eq(srp_cmd_desc(iu, &sc, 1).va, 0x8000);
	cr_assert_eq(sc.lun[1], 5);

	c.nbufs = 1;
	n = ub_srp_cmd(iu, sizeof(iu), &c);
	cr_assert_eq(srp_parse_cmd(iu, n, &lim, &sc, &bad), SRP_IU_OK);
	cr_assert_eq(sc.fmt, SRP_FMT_DIRECT);
	cr_assert_eq(sc.xfer_len, 4096);

	c.dir = UB_SRP_OUT, c.nbufs = 0, c.imm_len = 512, c.imm_off = 68;
	n = ub_srp_cmd(iu, sizeof(iu), &c);
	cr_assert_eq(n, 68 + 512);
	cr_assert_eq(srp_parse_cmd(iu, n, &lim, &sc, &bad), SRP_IU_OK);
	cr_assert_eq(sc.fmt, SRP_FMT_IMM);
	cr_assert_eq(sc.xfer_len, 512);
	cr_assert_eq(sc.imm_off, 68);
}

/* ... and the tester reads the target's responses as meant. */
Test(bench_srp_wire, the_tester_reads_what_the_target_writes)
{
	static const uint8_t sense[18] = {0x70, 0, 0x06, [7] = 10, [12] = 0x29};
	struct srp_rsp_info ri = {.tag = srp_tag_of(0x42), .req_lim_delta = 1, .status = 2,
				  .resp_code = -1, .sense = sense, .sense_len = sizeof(sense)};
	struct srp_login_rsp lr = {.req_lim_delta = 32, .max_it_iu_len = 8260,
				   .max_ti_iu_len = 4096, .rsp_flags = SRP_RSP_IMMED_SUPPORTED};
	uint8_t buf[256];
	struct ub_srp_rsp r;
	struct ub_srp_login_rsp l;
	size_t n;

	srp_rsp_set_resid(&ri, SRP_DIR_IN, 1, 512);
	n = srp_build_rsp(buf, sizeof(buf), &ri);
	cr_assert(ub_srp_rsp(buf, n, &r));
	cr_assert_eq(r.status, 2);
	cr_assert(r.di_under);
	cr_assert_eq(r.di_resid, 512);
	cr_assert_eq(r.sense_len, 18);
	cr_assert_eq(r.sense[12], 0x29);

	n = srp_build_login_rsp(buf, &lr);
	cr_assert(ub_srp_login_rsp(buf, n, &l));
	cr_assert_eq(l.req_lim, 32);
	cr_assert_eq(l.max_it_iu_len, 8260);
	cr_assert(l.imm);
}
