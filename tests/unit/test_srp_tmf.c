/* SRP_TSK_MGMT (srp_tmf.c) on the stand-in verbs layer with the real SCSI core: response codes
 * for each function, unsupported and malformed requests, aborts of commands the core has not
 * seen yet (no SRP_RSP for them, their credits returned all the same). */
#include "tests/unit/srp_fake.h"

static void setup(void)
{
	fake_setup_conf("\tqueue_depth 8");
}

TestSuite(srp_tmf, .init = setup, .fini = fake_teardown);

static uint32_t next_tag = 1;

static struct srp_rsp_view tmf(uint8_t func, uint8_t lun, uint64_t task_tag)
{
	struct srp_tsk_mgmt t = {
	    .tag = tagn(0x80000000u | next_tag++), .func = func, .task_tag = srp_tag_of(task_tag)};
	uint8_t iu[48];
	unsigned before = fc.nsent;
	struct srp_rsp_view v;

	t.lun[1] = lun;
	srp_build_tsk_mgmt(iu, &t);
	fake_recv(iu, sizeof(iu));
	fake_wait_sent(before + 1);
	v = fake_last_rsp();
	cr_assert_eq(srp_tag_u64(v.tag), srp_tag_u64(t.tag));
	cr_assert(v.flags & SRP_RSP_F_RSPVALID);
	cr_assert_eq(v.resp_len, 4);
	return v;
}

static uint8_t code(struct srp_rsp_view v)
{
	return v.resp[3];
}

static void login(void)
{
	struct srp_login_rsp rsp;
	fake_login(&rsp);
}

Test(srp_tmf, functions_and_codes)
{
	login();
	cr_assert_eq(code(tmf(SRP_TMF_ABORT_TASK, 0, 12345)), SRP_RSP_CODE_COMPLETE,
		     "ABORT TASK of no task: function complete");
	cr_assert_eq(code(tmf(SRP_TMF_ABORT_TASK_SET, 0, 0)), SRP_RSP_CODE_COMPLETE);
	cr_assert_eq(code(tmf(SRP_TMF_CLEAR_TASK_SET, 0, 0)), SRP_RSP_CODE_COMPLETE);
	cr_assert_eq(code(tmf(SRP_TMF_LUN_RESET, 0, 0)), SRP_RSP_CODE_COMPLETE);
	cr_assert_eq(code(tmf(0x20, 0, 0)), SRP_RSP_CODE_NOT_SUPPORTED);
	cr_assert_eq(code(tmf(SRP_TMF_LUN_RESET, 7, 0)), SRP_RSP_CODE_INCORRECT_LUN);
	fake_settle();
}

Test(srp_tmf, lun_reset_raises_a_unit_attention)
{
	uint8_t cdb[16] = {0x00};
	struct srp_cmd_build b = {.tag = tagn(1), .cdb = cdb, .cdb_len = 6};
	struct srp_rsp_view v;

	login();
	v = fake_cmd(&b, NULL); /* POWER ON unit attention of the new nexus */
	cr_assert_eq(v.status, SAM_STAT_CHECK_CONDITION);
	b.tag = tagn(2);
	cr_assert_eq(fake_cmd(&b, NULL).status, SAM_STAT_GOOD);
	cr_assert_eq(code(tmf(SRP_TMF_LUN_RESET, 0, 0)), SRP_RSP_CODE_COMPLETE);
	b.tag = tagn(3);
	v = fake_cmd(&b, NULL);
	cr_assert_eq(v.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(v.sense[2] & 0x0f, 0x6);
	cr_assert_eq(v.sense[12], 0x29, "BUS DEVICE RESET FUNCTION OCCURRED family");
}

Test(srp_tmf, short_request)
{
	uint8_t iu[40] = {SRP_OP_TSK_MGMT};
	struct srp_rsp_view v;

	login();
	srp_put64(iu + 8, 0xabc);
	fake_recv(iu, sizeof(iu));
	fake_wait_sent(1);
	v = fake_last_rsp();
	cr_assert_arr_eq(v.tag.b, iu + 8, 8);
	cr_assert_eq(v.resp[3], SRP_RSP_CODE_FIELDS_INVALID);
	fake_settle();
}

Test(srp_tmf, during_logout_it_fails)
{
	login();
	/* keep the channel from disconnecting at once: a command in flight */
	uint8_t iu[64], cdb[16] = {0x00};
	struct srp_cmd_build b = {.tag = tagn(50), .cdb = cdb, .cdb_len = 6};
	fake_recv(iu, (uint32_t)srp_build_cmd(iu, sizeof(iu), &b));
	srpt_ch_logout(fc.priv, SRP_TLO_INACTIVE);
	cr_assert_eq(code(tmf(SRP_TMF_LUN_RESET, 0, 0)), SRP_RSP_CODE_FAILED);
	fake_settle();
}

/* Three 8 MiB writes: the first two take the whole 16 MiB pool and wait for their RDMA READs
 * (the fake completes nothing until told), the third waits for chunks.  ABORT TASK on the
 * waiting one and on one whose data is being read: neither gets an SRP_RSP, and the initiator
 * gets all four credits back (three commands and the TMF). */
Test(srp_tmf, abort_commands_the_core_has_not_seen)
{
	const size_t n = 8u << 20;
	uint8_t *buf = malloc(n);
	uint8_t iu[128], cdb[16] = {0x2a};
	uint32_t credits = 0;
	unsigned before;

	login();
	srp_put16(cdb + 7, (uint16_t)(n / 512));
	before = fc.nsent;
	for (uint32_t i = 0; i < 3; i++) {
		struct srp_desc d = {.va = (uintptr_t)buf, .key = FAKE_RKEY, .len = (uint32_t)n};
		struct srp_cmd_build b = {.tag = tagn(100 + i),
					  .cdb = cdb,
					  .cdb_len = 10,
					  .dir = SRP_DIR_OUT,
					  .fmt = SRP_FMT_DIRECT,
					  .descs = &d,
					  .ndesc = 1};
		fake_recv(iu, (uint32_t)srp_build_cmd(iu, sizeof(iu), &b));
	}
	cr_assert_eq(fc.nops, 2, "two RDMA READs posted, the third waits for chunks");
	/* ABORT TASK for the waiting one (tag 102), answered without touching the queue */
	{
		struct srp_tsk_mgmt t = {
		    .tag = tagn(0x80000001), .func = SRP_TMF_ABORT_TASK, .task_tag = tagn(102)};
		uint8_t tiu[48];

		srp_build_tsk_mgmt(tiu, &t);
		fake_recv(tiu, sizeof(tiu));
		t.tag = tagn(0x80000002);
		t.task_tag = tagn(101); /* its data is being read */
		srp_build_tsk_mgmt(tiu, &t);
		fake_recv(tiu, sizeof(tiu));
	}
	fake_settle();
	for (unsigned i = before; i < fc.nsent; i++) {
		struct srp_rsp_view v;
		uint8_t t = fc.sent[i].b[0];

		if (t == SRP_OP_CRED_REQ) {
			credits += srp_get32(fc.sent[i].b + 4);
			continue;
		}
		cr_assert_eq(srp_parse_rsp(fc.sent[i].b, fc.sent[i].len, &v), SRP_IU_OK);
		credits += v.req_lim_delta;
		cr_assert_neq(srp_tag_u64(v.tag), 101, "aborted command answered");
		cr_assert_neq(srp_tag_u64(v.tag), 102, "aborted command answered");
		if (srp_tag_u64(v.tag) & 0x80000000u)
			cr_assert_eq(v.resp[3], SRP_RSP_CODE_COMPLETE);
	}
	cr_assert_eq(credits, 5, "3 commands + 2 TMFs, every credit back");
	cr_assert_eq(rdma_pool_free_bytes(fc.pool), rdma_pool_capacity(fc.pool));
	free(buf);
}
