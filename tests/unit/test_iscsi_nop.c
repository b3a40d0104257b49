/* NOP-Out/NOP-In: pings answered with their data echoed; the target's own pings at
 * NopInInterval; a silent initiator dropped after NopInTimeout. */
#include "iscsi_harness.h"

static struct ih_target T;

static void teardown(void)
{
	ih_stop(&T);
}

Test(iscsi_nop, ping_with_data_is_echoed, .fini = teardown)
{
	struct ih_conn c;
	uint8_t h[48] = {0}, rh[48], *d;
	uint32_t dl, sn_before;
	char data[1001];

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	for (int i = 0; i < 1000; i++)
		data[i] = (char)('a' + i % 26);
	h[0] = ISCSI_OP_NOP_OUT;
	h[1] = 0x80;
	h[9] = 3;
	iscsi_put32(h + 16, 0x1234);
	iscsi_put32(h + 20, ISCSI_RSVD_TAG);
	iscsi_put32(h + 24, c.cmd_sn++);
	sn_before = c.exp_stat_sn;
	cr_assert_eq(ih_send(&c, h, data, 1000), 0);
	cr_assert_eq(ih_recv(&c, rh, &d, &dl), 0);
	cr_assert_eq(bhs_opcode(rh), ISCSI_OP_NOP_IN);
	cr_assert_eq(bhs_itt(rh), 0x1234);
	cr_assert_eq(bhs_w20(rh), ISCSI_RSVD_TAG);
	cr_assert_eq(rh[9], 3, "LUN echoed");
	cr_assert_eq(dl, 1000);
	cr_assert_eq(memcmp(d, data, 1000), 0);
	cr_assert_eq(bhs_w24(rh), sn_before, "StatSN of the answer");
	free(d);
	/* ExpCmdSN advanced past the non-immediate ping */
	cr_assert_eq(bhs_w28(rh), c.cmd_sn);
	ih_logout(&c);
}

Test(iscsi_nop, one_way_ping_gets_no_answer, .fini = teardown)
{
	struct ih_conn c;
	uint8_t h[48] = {0};

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	h[0] = 0x40 | ISCSI_OP_NOP_OUT;
	h[1] = 0x80;
	iscsi_put32(h + 16, ISCSI_RSVD_TAG);
	iscsi_put32(h + 20, ISCSI_RSVD_TAG);
	iscsi_put32(h + 24, c.cmd_sn);
	cr_assert_eq(ih_send(&c, h, NULL, 0), 0);
	/* the next PDU we see answers the next ping, not that one */
	cr_assert(ih_ping(&c));
	ih_logout(&c);
}

Test(iscsi_nop, target_pings_and_drops_silent_initiator, .fini = teardown, .timeout = 60)
{
	struct ih_conn c;
	uint8_t rh[48], h[48] = {0};

	/* NopInTimeout 6: the answer below must beat it; 2 s was a race on a loaded machine */
	ih_start(&T, NULL, "NopInInterval 1\nNopInTimeout 6");
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	/* within a few seconds of silence the target pings (TTT set, ITT reserved) */
	cr_assert_eq(ih_recv(&c, rh, NULL, NULL), 0);
	cr_assert_eq(bhs_opcode(rh), ISCSI_OP_NOP_IN);
	cr_assert_eq(bhs_itt(rh), ISCSI_RSVD_TAG);
	cr_assert_neq(bhs_w20(rh), ISCSI_RSVD_TAG);
	/* answer it: the connection stays */
	h[0] = 0x40 | ISCSI_OP_NOP_OUT;
	h[1] = 0x80;
	iscsi_put32(h + 16, ISCSI_RSVD_TAG);
	iscsi_put32(h + 20, bhs_w20(rh));
	iscsi_put32(h + 24, c.cmd_sn);
	cr_assert_eq(ih_send(&c, h, NULL, 0), 0);
	cr_assert_eq(ih_recv(&c, rh, NULL, NULL), 0, "pinged again later");
	cr_assert_eq(bhs_opcode(rh), ISCSI_OP_NOP_IN);
	/* now stay silent: dropped after NopInTimeout */
	cr_assert(ih_closed(&c));
	ih_close(&c);
}
