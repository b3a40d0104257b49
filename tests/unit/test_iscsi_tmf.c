/* Task management over the wire: ABORT TASK of unknown, finished and data-waiting tasks,
 * LUN RESET (and the UNIT ATTENTION it leaves), TARGET RESETs, unsupported functions. */
#include "iscsi_harness.h"

static struct ih_target T;

static void teardown(void)
{
	ih_stop(&T);
}

Test(iscsi_tmf, abort_task_unknown_and_finished, .fini = teardown)
{
	struct ih_conn c;
	uint8_t tur[6] = {0};

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	ih_clear_ua(&c, 0);
	/* a task that completed already: RefCmdSN behind the window */
	cr_assert_eq(ih_cmd(&c, 0, tur, 6, false, false, NULL, 0, NULL).status, 0);
	cr_assert_eq(ih_tmf(&c, ISCSI_TMF_ABORT_TASK, 0, c.itt - 1, c.cmd_sn - 1),
		     ISCSI_TMF_RSP_NO_TASK);
	/* never seen, RefCmdSN inside the window: "consider it received", complete */
	cr_assert_eq(ih_tmf(&c, ISCSI_TMF_ABORT_TASK, 0, 0x5555, c.cmd_sn), ISCSI_TMF_RSP_COMPLETE);
	ih_logout(&c);
}

Test(iscsi_tmf, abort_task_waiting_for_data, .fini = teardown)
{
	struct ih_conn c;
	struct ih_login_opts o = {.tname = IH_TARGET,
				  .op_keys = "InitialR2T=Yes|ImmediateData=No|MaxBurstLength=65536|"
					     "DefaultTime2Retain=0"};
	uint8_t h[48] = {0}, rh[48], data[512] = {0};
	uint32_t itt, ttt;

	ih_start(&T, NULL, NULL);
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), 0);
	ih_clear_ua(&c, 0);
	itt = c.itt++;
	h[0] = ISCSI_OP_SCSI_CMD;
	h[1] = 0x80 | 0x20 | 1;
	iscsi_put32(h + 16, itt);
	iscsi_put32(h + 20, 65536);
	iscsi_put32(h + 24, c.cmd_sn++);
	h[32] = 0x2a;
	h[40] = 128;
	cr_assert_eq(ih_send(&c, h, NULL, 0), 0);
	cr_assert_eq(ih_recv(&c, rh, NULL, NULL), 0);
	cr_assert_eq(bhs_opcode(rh), ISCSI_OP_R2T);
	ttt = bhs_w20(rh);
	cr_assert_eq(ih_tmf(&c, ISCSI_TMF_ABORT_TASK, 0, itt, c.cmd_sn - 1),
		     ISCSI_TMF_RSP_COMPLETE);
	/* late data for the aborted task is dropped quietly, no response ever comes for it */
	memset(h, 0, 48);
	h[0] = ISCSI_OP_DATA_OUT;
	h[1] = 0x80;
	iscsi_put32(h + 16, itt);
	iscsi_put32(h + 20, ttt);
	cr_assert_eq(ih_send(&c, h, data, sizeof(data)), 0);
	cr_assert(ih_ping(&c), "nothing but the NOP-In answer arrives");
	ih_logout(&c);
}

Test(iscsi_tmf, lun_reset_leaves_unit_attention, .fini = teardown)
{
	struct ih_conn c;
	uint8_t tur[6] = {0};
	struct ih_result r;

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	ih_clear_ua(&c, 0);
	cr_assert_eq(ih_tmf(&c, ISCSI_TMF_LUN_RESET, 0, ISCSI_RSVD_TAG, 0), ISCSI_TMF_RSP_COMPLETE);
	cr_assert_eq(ih_tmf(&c, ISCSI_TMF_LUN_RESET, 9, ISCSI_RSVD_TAG, 0), ISCSI_TMF_RSP_NO_LUN);
	cr_assert_eq(ih_tmf(&c, ISCSI_TMF_ABORT_TASK_SET, 0, ISCSI_RSVD_TAG, 0),
		     ISCSI_TMF_RSP_COMPLETE);
	cr_assert_eq(ih_tmf(&c, ISCSI_TMF_CLEAR_TASK_SET, 0, ISCSI_RSVD_TAG, 0),
		     ISCSI_TMF_RSP_COMPLETE);
	r = ih_cmd(&c, 0, tur, 6, false, false, NULL, 0, NULL);
	(void)r; /* a UA (29/xx) may or may not be reported to the issuer; the core decides */
	ih_clear_ua(&c, 0);
	cr_assert_eq(ih_cmd(&c, 0, tur, 6, false, false, NULL, 0, NULL).status, 0);
	ih_logout(&c);
}

Test(iscsi_tmf, target_resets, .fini = teardown)
{
	struct ih_conn a, b;

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&a, T.port), 0);
	cr_assert_eq(ih_login_normal(&b, T.port), 0);
	cr_assert_eq(ih_tmf(&a, ISCSI_TMF_TARGET_WARM_RESET, 0, ISCSI_RSVD_TAG, 0),
		     ISCSI_TMF_RSP_COMPLETE);
	cr_assert(ih_ping(&a), "warm reset keeps sessions");
	cr_assert(ih_ping(&b));
	cr_assert_eq(ih_tmf(&a, ISCSI_TMF_TARGET_COLD_RESET, 0, ISCSI_RSVD_TAG, 0),
		     ISCSI_TMF_RSP_COMPLETE);
	/* cold reset: every connection of the target is dropped */
	cr_assert(ih_closed(&a));
	cr_assert(ih_closed(&b));
	ih_close(&a);
	ih_close(&b);
	cr_assert_eq(ih_login_normal(&a, T.port), 0, "and the target takes new logins");
	ih_logout(&a);
}

Test(iscsi_tmf, unsupported_functions, .fini = teardown)
{
	struct ih_conn c;

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	cr_assert_eq(ih_tmf(&c, ISCSI_TMF_TASK_REASSIGN, 0, 1, 0), ISCSI_TMF_RSP_NO_REASSIGN);
	cr_assert_eq(ih_tmf(&c, 0x55, 0, 1, 0), ISCSI_TMF_RSP_REJECTED);
	cr_assert_eq(ih_tmf(&c, ISCSI_TMF_QUERY_TASK_SET, 0, 0, 0), ISCSI_TMF_RSP_COMPLETE,
		     "nothing running");
	cr_assert_eq(ih_tmf(&c, ISCSI_TMF_I_T_NEXUS_RESET, 0, 0, 0), ISCSI_TMF_RSP_COMPLETE);
	cr_assert(ih_ping(&c));
	ih_logout(&c);
}
