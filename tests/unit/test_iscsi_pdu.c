/* iSCSI BHS builders and parsers: every field where RFC 7143 section 11 puts it. */
#include <criterion/criterion.h>
#include <string.h>

#include "transports/iscsi/iscsi_pdu.h"

static const struct iscsi_sn SN = {
    .stat_sn = 0x11223344, .exp_cmd_sn = 0x55667788, .max_cmd_sn = 0x99aabbcc};

static void assert_sn(const uint8_t *h)
{
	cr_assert_eq(iscsi_get32(h + 24), SN.stat_sn);
	cr_assert_eq(iscsi_get32(h + 28), SN.exp_cmd_sn);
	cr_assert_eq(iscsi_get32(h + 32), SN.max_cmd_sn);
}

Test(iscsi_pdu, field_helpers)
{
	uint8_t b[48] = {0};

	b[0] = 0x41; /* immediate SCSI command */
	b[4] = 3;    /* 12 bytes of AHS */
	iscsi_put24(b + 5, 0x012345);
	iscsi_put32(b + 16, 0xdeadbeef);
	cr_assert_eq(bhs_opcode(b), ISCSI_OP_SCSI_CMD);
	cr_assert(bhs_immediate(b));
	cr_assert_eq(bhs_ahs_len(b), 12);
	cr_assert_eq(bhs_dsl(b), 0x012345);
	cr_assert_eq(bhs_itt(b), 0xdeadbeef);
	cr_assert_eq(iscsi_pad4(0), 0);
	cr_assert_eq(iscsi_pad4(1), 3);
	cr_assert_eq(iscsi_pad4(4), 0);
	cr_assert_eq(iscsi_pad4(4097), 3);
}

Test(iscsi_pdu, serial_numbers_wrap)
{
	cr_assert(sn_lt(1, 2));
	cr_assert(!sn_lt(2, 1));
	cr_assert(sn_lt(0xfffffffe, 1)); /* across the wrap */
	cr_assert(!sn_lt(1, 0xfffffffe));
	cr_assert(sn_le(5, 5));
	cr_assert(!sn_lt(5, 5));
}

Test(iscsi_pdu, opcodes)
{
	cr_assert(iscsi_opcode_is_initiator(ISCSI_OP_DATA_OUT));
	cr_assert(iscsi_opcode_is_initiator(ISCSI_OP_SNACK_REQ));
	cr_assert(!iscsi_opcode_is_initiator(ISCSI_OP_DATA_IN));
	cr_assert(!iscsi_opcode_is_initiator(0x1c));
	cr_assert_str_eq(iscsi_opcode_name(ISCSI_OP_R2T), "R2T");
	cr_assert_str_eq(iscsi_opcode_name(0x1c), "unknown");
}

Test(iscsi_pdu, login_response_echoes_isid_and_itt)
{
	uint8_t req[48] = {0}, h[48];

	req[0] = 0x43;
	memcpy(req + 8, "\x80\x12\x34\x56\x78\x9a", 6);
	iscsi_put32(req + 16, 0xabcd0001);
	iscsi_bhs_login_rsp(h, req, ISCSI_LOGIN_TRANSIT | 0x04 | 3, 0x1234, 0x0201, &SN, 77);
	cr_assert_eq(h[0], ISCSI_OP_LOGIN_RSP);
	cr_assert_eq(h[1], 0x87);
	cr_assert_eq(h[2], 0);
	cr_assert_eq(h[3], 0);
	cr_assert_eq(bhs_dsl(h), 77);
	cr_assert_eq(memcmp(h + 8, req + 8, 6), 0);
	cr_assert_eq(iscsi_get16(h + 14), 0x1234);
	cr_assert_eq(bhs_itt(h), 0xabcd0001);
	assert_sn(h);
	cr_assert_eq(h[36], 0x02);
	cr_assert_eq(h[37], 0x01);
}

Test(iscsi_pdu, data_in_with_status_and_residual)
{
	uint8_t h[48], lun[8] = {0, 3, 0, 0, 0, 0, 0, 0};

	iscsi_bhs_data_in(h, lun, 7, ISCSI_FLAG_FINAL | ISCSI_DATAIN_STATUS | ISCSI_DATAIN_UNDER, 0,
			  2, 8192, 512, &SN, 4096);
	cr_assert_eq(h[0], ISCSI_OP_DATA_IN);
	cr_assert_eq(h[1], 0x83);
	cr_assert_eq(h[3], 0);
	cr_assert_eq(bhs_dsl(h), 4096);
	cr_assert_eq(memcmp(h + 8, lun, 8), 0);
	cr_assert_eq(bhs_itt(h), 7);
	cr_assert_eq(bhs_w20(h), ISCSI_RSVD_TAG);
	assert_sn(h);
	cr_assert_eq(bhs_w36(h), 2);
	cr_assert_eq(bhs_w40(h), 8192);
	cr_assert_eq(bhs_w44(h), 512);
}

Test(iscsi_pdu, data_in_without_status_has_no_statsn)
{
	uint8_t h[48];

	iscsi_bhs_data_in(h, NULL, 7, 0, 0x02, 0, 0, 99, &SN, 512);
	cr_assert_eq(h[1], 0);
	cr_assert_eq(h[3], 0, "status only with the S bit");
	cr_assert_eq(bhs_w24(h), 0, "StatSN reserved without S");
	cr_assert_eq(bhs_w28(h), SN.exp_cmd_sn);
	cr_assert_eq(bhs_w32(h), SN.max_cmd_sn);
	cr_assert_eq(bhs_w44(h), 0, "residual only with S");
}

Test(iscsi_pdu, scsi_response)
{
	uint8_t h[48];

	iscsi_bhs_scsi_rsp(h, 9, 0x02, ISCSI_RSP_OVER, 100, &SN, 3, 20);
	cr_assert_eq(h[0], ISCSI_OP_SCSI_RSP);
	cr_assert_eq(h[1], 0x84);
	cr_assert_eq(h[2], 0);
	cr_assert_eq(h[3], 0x02);
	cr_assert_eq(bhs_dsl(h), 20);
	cr_assert_eq(bhs_itt(h), 9);
	assert_sn(h);
	cr_assert_eq(bhs_w36(h), 3);
	cr_assert_eq(bhs_w44(h), 100);
}

Test(iscsi_pdu, r2t_tmf_logout_reject_async_nop)
{
	uint8_t h[48];

	iscsi_bhs_r2t(h, NULL, 1, 2, 3, 4096, 65536, &SN);
	cr_assert_eq(h[0], ISCSI_OP_R2T);
	cr_assert_eq(h[1], 0x80);
	cr_assert_eq(bhs_w20(h), 2);
	cr_assert_eq(bhs_w36(h), 3);
	cr_assert_eq(bhs_w40(h), 4096);
	cr_assert_eq(bhs_w44(h), 65536);
	assert_sn(h);

	iscsi_bhs_tmf_rsp(h, 5, ISCSI_TMF_RSP_NO_TASK, &SN);
	cr_assert_eq(h[0], ISCSI_OP_TMF_RSP);
	cr_assert_eq(h[2], 1);
	cr_assert_eq(bhs_itt(h), 5);

	iscsi_bhs_logout_rsp(h, 6, 0, 2, 20, &SN);
	cr_assert_eq(h[0], ISCSI_OP_LOGOUT_RSP);
	cr_assert_eq(iscsi_get16(h + 40), 2);
	cr_assert_eq(iscsi_get16(h + 42), 20);

	iscsi_bhs_reject(h, ISCSI_REJECT_PROTOCOL, &SN);
	cr_assert_eq(h[0], ISCSI_OP_REJECT);
	cr_assert_eq(h[2], 0x04);
	cr_assert_eq(bhs_dsl(h), 48, "the rejected header is the data");
	cr_assert_eq(bhs_itt(h), ISCSI_RSVD_TAG);

	iscsi_bhs_async(h, ISCSI_ASYNC_LOGOUT_REQ, 0, 0, 5, &SN, 0);
	cr_assert_eq(h[0], ISCSI_OP_ASYNC);
	cr_assert_eq(h[36], 1);
	cr_assert_eq(iscsi_get16(h + 42), 5);
	cr_assert_eq(bhs_itt(h), ISCSI_RSVD_TAG);

	iscsi_bhs_nop_in(h, NULL, ISCSI_RSVD_TAG, 0x77, &SN, 0);
	cr_assert_eq(h[0], ISCSI_OP_NOP_IN);
	cr_assert_eq(bhs_w20(h), 0x77);
}

static void login_hdr(uint8_t *h, uint8_t flags, uint8_t vmax, uint8_t vmin)
{
	memset(h, 0, 48);
	h[0] = 0x43;
	h[1] = flags;
	h[2] = vmax;
	h[3] = vmin;
}

Test(iscsi_pdu, parse_login_request)
{
	uint8_t h[48];
	struct iscsi_login_req lr;

	login_hdr(h, 0x80 | 0x00 | 0x01, 0, 0); /* T, CSG 0 -> NSG 1 */
	memcpy(h + 8, "\x40\x00\x01\x37\x00\x01", 6);
	iscsi_put16(h + 14, 0);
	iscsi_put32(h + 16, 0x10);
	iscsi_put16(h + 20, 2);
	iscsi_put32(h + 24, 1000);
	iscsi_put32(h + 28, 55);
	cr_assert_eq(iscsi_parse_login_req(h, &lr), 0);
	cr_assert(lr.transit);
	cr_assert_eq(lr.csg, 0);
	cr_assert_eq(lr.nsg, 1);
	cr_assert_eq(lr.cid, 2);
	cr_assert_eq(lr.cmd_sn, 1000);
	cr_assert_eq(lr.exp_stat_sn, 55);
	cr_assert_eq(memcmp(lr.isid, h + 8, 6), 0);

	login_hdr(h, 0x80 | 0x40 | 0x01, 0, 0); /* T and C together */
	cr_assert_eq(iscsi_parse_login_req(h, &lr), ISCSI_LOGIN_INITIATOR_ERROR);
	login_hdr(h, 0x0c, 0, 0); /* CSG 3 */
	cr_assert_eq(iscsi_parse_login_req(h, &lr), ISCSI_LOGIN_INITIATOR_ERROR);
	login_hdr(h, 0x80 | 0x04 | 0x00, 0, 0); /* transit backwards 1 -> 0 */
	cr_assert_eq(iscsi_parse_login_req(h, &lr), ISCSI_LOGIN_INITIATOR_ERROR);
	login_hdr(h, 0x80 | 0x02, 0, 0); /* NSG 2 does not exist */
	cr_assert_eq(iscsi_parse_login_req(h, &lr), ISCSI_LOGIN_INITIATOR_ERROR);
	login_hdr(h, 0x00, 5, 1); /* only version 0 */
	cr_assert_eq(iscsi_parse_login_req(h, &lr), ISCSI_LOGIN_UNSUPPORTED_VERSION);
	login_hdr(h, 0x00, 5, 0); /* max above ours is fine */
	cr_assert_eq(iscsi_parse_login_req(h, &lr), 0);
}

Test(iscsi_pdu, parse_scsi_command_basic)
{
	uint8_t h[48] = {0}, buf[ISCSI_CDB_MAX];
	struct iscsi_scsi_cmd c;

	h[0] = 0x01;
	h[1] = 0x80 | 0x40 | 2; /* F, R, ORDERED */
	h[9] = 4;
	iscsi_put32(h + 16, 42);
	iscsi_put32(h + 20, 4096);
	iscsi_put32(h + 24, 7);
	h[32] = 0x28;
	cr_assert(iscsi_parse_scsi_cmd(h, NULL, 0, buf, sizeof(buf), &c));
	cr_assert(c.final && c.read && !c.write);
	cr_assert_eq(c.attr, 2);
	cr_assert_eq(c.lun[1], 4);
	cr_assert_eq(c.itt, 42);
	cr_assert_eq(c.edtl, 4096);
	cr_assert_eq(c.cmd_sn, 7);
	cr_assert_eq(c.cdb_len, 16);
	cr_assert_eq(c.cdb[0], 0x28);
}

Test(iscsi_pdu, parse_scsi_command_extended_cdb)
{
	uint8_t h[48] = {0}, ahs[24] = {0}, buf[ISCSI_CDB_MAX];
	struct iscsi_scsi_cmd c;

	/* 32-byte CDB: 16 in the BHS, 16 in an Extended CDB AHS (length 17 = reserved + 16) */
	h[0] = 0x01;
	h[4] = 5;
	for (int i = 0; i < 16; i++)
		h[32 + i] = (uint8_t)i;
	iscsi_put16(ahs, 17);
	ahs[2] = 1;
	for (int i = 0; i < 16; i++)
		ahs[4 + i] = (uint8_t)(16 + i);
	cr_assert(iscsi_parse_scsi_cmd(h, ahs, 20, buf, sizeof(buf), &c));
	cr_assert_eq(c.cdb_len, 32);
	for (int i = 0; i < 32; i++)
		cr_assert_eq(c.cdb[i], i);

	/* an AHS claiming more than is there */
	iscsi_put16(ahs, 100);
	cr_assert(!iscsi_parse_scsi_cmd(h, ahs, 20, buf, sizeof(buf), &c));
	/* an unknown AHS type */
	iscsi_put16(ahs, 17);
	ahs[2] = 9;
	cr_assert(!iscsi_parse_scsi_cmd(h, ahs, 20, buf, sizeof(buf), &c));
	/* truncated AHS header */
	cr_assert(!iscsi_parse_scsi_cmd(h, ahs, 2, buf, sizeof(buf), &c));
	/* a CDB larger than the caller's buffer */
	ahs[2] = 1;
	cr_assert(!iscsi_parse_scsi_cmd(h, ahs, 20, buf, 20, &c));
}
