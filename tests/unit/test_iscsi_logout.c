/* Logout: session and connection close, the recovery reason we do not support, an unknown
 * CID, and a logout that waits for a command still in flight. */
#include "iscsi_harness.h"

static struct ih_target T;

static void teardown(void)
{
	ih_stop(&T);
}

static int logout_rsp(struct ih_conn *c, uint8_t reason, uint16_t cid)
{
	uint8_t h[48] = {0}, rh[48];

	h[0] = 0x40 | ISCSI_OP_LOGOUT_REQ;
	h[1] = 0x80 | reason;
	iscsi_put32(h + 16, c->itt++);
	iscsi_put16(h + 20, cid);
	iscsi_put32(h + 24, c->cmd_sn);
	iscsi_put32(h + 28, c->exp_stat_sn);
	if (ih_send(c, h, NULL, 0))
		return -1;
	for (;;) {
		if (ih_recv(c, rh, NULL, NULL))
			return -1;
		if (bhs_opcode(rh) == ISCSI_OP_LOGOUT_RSP)
			return rh[2];
	}
}

Test(iscsi_logout, reasons, .fini = teardown)
{
	struct ih_conn c;

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	cr_assert_eq(logout_rsp(&c, ISCSI_LOGOUT_RECOVERY, 0), ISCSI_LOGOUT_RSP_NO_RECOVERY);
	cr_assert_eq(logout_rsp(&c, ISCSI_LOGOUT_CONN, 99), ISCSI_LOGOUT_RSP_NO_CID);
	cr_assert(ih_ping(&c), "still in full feature phase");
	cr_assert_eq(logout_rsp(&c, ISCSI_LOGOUT_CONN, 0), ISCSI_LOGOUT_RSP_OK);
	cr_assert(ih_closed(&c));
	ih_close(&c);
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	cr_assert_eq(logout_rsp(&c, ISCSI_LOGOUT_SESSION, 0), ISCSI_LOGOUT_RSP_OK);
	cr_assert(ih_closed(&c));
	ih_close(&c);
}

Test(iscsi_logout, answers_after_commands_in_flight, .fini = teardown)
{
	struct ih_conn c;
	uint8_t h[48] = {0}, rh[48], *d;
	uint32_t dl;
	bool saw_read = false;

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	ih_clear_ua(&c, 0);
	/* a 1 MiB read and, right behind it, the logout */
	h[0] = ISCSI_OP_SCSI_CMD;
	h[1] = 0x80 | 0x40 | 1;
	iscsi_put32(h + 16, 0x4444);
	iscsi_put32(h + 20, 1 << 20);
	iscsi_put32(h + 24, c.cmd_sn++);
	h[32] = 0x28;
	h[39] = 0x08;
	cr_assert_eq(ih_send(&c, h, NULL, 0), 0);
	memset(h, 0, 48);
	h[0] = 0x40 | ISCSI_OP_LOGOUT_REQ;
	h[1] = 0x80;
	iscsi_put32(h + 16, 0x4445);
	iscsi_put32(h + 24, c.cmd_sn);
	cr_assert_eq(ih_send(&c, h, NULL, 0), 0);
	for (;;) {
		cr_assert_eq(ih_recv(&c, rh, &d, &dl), 0);
		free(d);
		if (bhs_opcode(rh) == ISCSI_OP_DATA_IN && (rh[1] & ISCSI_DATAIN_STATUS))
			saw_read = true;
		if (bhs_opcode(rh) == ISCSI_OP_LOGOUT_RSP)
			break;
	}
	cr_assert(saw_read, "the read completed before the Logout Response");
	cr_assert(ih_closed(&c));
	ih_close(&c);
}
