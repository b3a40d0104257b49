/* SRP channels (srp_ch.c) on a stand-in verbs layer (srp_fake.h) with the real SCSI core:
 * login applied (LOGIN_RSP values, buffer sizes, rejection), IU dispatch and its protocol
 * errors (target logout with r16a's reasons), credits and SRP_CRED_REQ, initiator logout,
 * drain and release. */
#include <unistd.h>

#include "tests/unit/srp_fake.h"

static void setup(void)
{
	fake_setup_conf("\tqueue_depth 4");
}

TestSuite(srp_ch, .init = setup, .fini = fake_teardown);

/* The target's last IU: its type and (for 16-byte IUs) the word at offset 4. */
static uint8_t last_type(uint32_t *word)
{
	const struct fake_sent *s = &fc.sent[fc.nsent - 1];

	cr_assert_gt(fc.nsent, 0);
	if (word)
		*word = srp_get32(s->b + 4);
	return s->b[0];
}

Test(srp_ch, login_applied)
{
	struct srp_login_rsp rsp;
	struct srpt_ch *ch;

	fake_login(&rsp);
	cr_assert_arr_eq(rsp.tag.b, "LOGINTAG", 8);
	cr_assert_eq(rsp.req_lim_delta, 4, "queue_depth 4");
	cr_assert_eq(rsp.max_it_iu_len, 8260);
	cr_assert_eq(rsp.max_ti_iu_len, 288);
	cr_assert_eq(rsp.rsp_flags, SRP_RSP_IMMED_SUPPORTED | SRP_RSP_MCR_NO_CHAN);
	/* receive buffers: one per credit plus one for SRP_CRED_RSP, each the IU length */
	cr_assert_eq(fc.params.recv_depth, 5);
	cr_assert_eq(fc.params.recv_size, 8260);
	cr_assert_eq(fc.params.send_size, 288);
	cr_assert_geq(fc.params.send_depth, 5);
	cr_assert_gt(fc.params.rdma_wrs, 0);
	ch = fc.priv;
	cr_assert_not_null(ch);
	cr_assert_eq(ch->state, SRPT_CH_LIVE);
	cr_assert_str_eq(ch->iname, "0x00000000000000010000000000000042");
	cr_assert_not_null(ch->nexus);
	cr_assert_eq(ch->nexus->nx.rel_tgt_id, 3);
}

/* pin auto: channel k of a nexus (login order) serves CPU k-1, as Linux's ib_srp maps its
 * per-CPU queues to channels */
Test(srp_ch, a_channel_names_the_cpu_its_commands_come_from)
{
	struct srp_login_rsp rsp;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	fc.cpu = -2;
	fake_login(&rsp);
	cr_assert_eq(fc.cpu, 0, "the nexus's first channel: CPU 0");
	cr_assert_eq(srpt_ch_cpu(2), (int)(1 % ncpu));
	cr_assert_eq(srpt_ch_cpu((unsigned)ncpu + 1), 0, "modulo the CPUs online");
	cr_assert_eq(srpt_ch_cpu(0), -1);
}

Test(srp_ch, login_rejected_with_a_reason)
{
	struct srp_login_req r = fake_login_req(SRP_MCA_SINGLE);
	uint8_t priv[SRP_LOGIN_REQ_RDMA_LEN];
	struct rdma_conn_req req = {.priv = priv, .priv_len = sizeof(priv)};
	struct srp_login_rej rej;

	r.req_it_iu_len = 70000; /* above max_req_size */
	srp_build_login_rdma(priv, &r);
	srpt_conn_ops.request(FC, &req);
	cr_assert(fc.rejected);
	cr_assert_not(fc.accepted);
	cr_assert_eq(srp_parse_login_rej(fc.reject_priv, fc.reject_len, &rej), SRP_IU_OK);
	cr_assert_eq(rej.reason, SRP_REJ_IT_IU_LEN_TOO_LARGE);
	cr_assert_arr_eq(rej.tag.b, "LOGINTAG", 8);
	cr_assert_null(fc.priv);
	cr_assert_null(fake_ctx.nexuses);
}

Test(srp_ch, connect_without_a_login_request)
{
	uint8_t priv[20] = {1, 2, 3};
	struct rdma_conn_req req = {.priv = priv, .priv_len = sizeof(priv)};
	struct srp_login_rej rej;

	srpt_conn_ops.request(FC, &req);
	cr_assert(fc.rejected);
	cr_assert_eq(srp_parse_login_rej(fc.reject_priv, fc.reject_len, &rej), SRP_IU_OK);
	cr_assert_eq(rej.reason, SRP_REJ_UNABLE_ESTABLISH_CHANNEL);
}

Test(srp_ch, accept_failure_rejects_and_leaves_no_nexus)
{
	struct srp_login_req r = fake_login_req(SRP_MCA_SINGLE);
	uint8_t priv[SRP_LOGIN_REQ_RDMA_LEN];
	struct rdma_conn_req req = {.priv = priv, .priv_len = sizeof(priv)};
	struct srp_login_rej rej;

	fc.accept_rc = -ENOMEM;
	srp_build_login_rdma(priv, &r);
	srpt_conn_ops.request(FC, &req);
	cr_assert(fc.rejected);
	cr_assert_eq(srp_parse_login_rej(fc.reject_priv, fc.reject_len, &rej), SRP_IU_OK);
	cr_assert_eq(rej.reason, SRP_REJ_INSUFFICIENT_RESOURCES);
	cr_assert_null(fake_ctx.nexuses);
}

static void expect_logout(uint32_t reason)
{
	int found = -1;

	fake_settle();
	for (unsigned i = 0; i < fc.nsent; i++)
		if (fc.sent[i].b[0] == SRP_OP_T_LOGOUT) {
			cr_assert_eq(found, -1, "two SRP_T_LOGOUTs");
			found = (int)i;
		}
	cr_assert_geq(found, 0, "no SRP_T_LOGOUT");
	cr_assert_eq(srp_get32(fc.sent[found].b + 4), reason);
	cr_assert(fc.disconnected, "channel not disconnected after the logout");
	cr_assert(fc.released);
	cr_assert_null(fake_ctx.nexuses);
}

Test(srp_ch, unknown_iu_type_logs_out)
{
	struct srp_login_rsp rsp;
	uint8_t iu[48] = {0x7e};

	fake_login(&rsp);
	fake_recv(iu, sizeof(iu));
	expect_logout(SRP_TLO_INVALID_IU);
}

Test(srp_ch, iu_without_a_tag_logs_out)
{
	struct srp_login_rsp rsp;
	uint8_t iu[10] = {SRP_OP_CMD};

	fake_login(&rsp);
	fake_recv(iu, sizeof(iu));
	expect_logout(SRP_TLO_NO_REASON);
}

Test(srp_ch, unexpected_responses_log_out)
{
	struct srp_login_rsp rsp;
	uint8_t iu[16];

	fake_login(&rsp);
	srp_build_cred_rsp(iu, tagn(9));
	fake_recv(iu, sizeof(iu));
	expect_logout(SRP_TLO_UNEXPECTED_RSP);
}

Test(srp_ch, aer_response_without_request_logs_out)
{
	struct srp_login_rsp rsp;
	uint8_t iu[16];

	fake_login(&rsp);
	srp_build_aer_rsp(iu, tagn(9));
	fake_recv(iu, sizeof(iu));
	expect_logout(SRP_TLO_UNEXPECTED_RSP);
}

static const uint8_t TUR[16] = {0x00};

static size_t tur_iu(uint8_t *iu, uint32_t tag)
{
	struct srp_cmd_build b = {.tag = tagn(tag), .cdb = TUR, .cdb_len = 6};
	return srp_build_cmd(iu, 64, &b);
}

Test(srp_ch, responses_return_credits)
{
	struct srp_login_rsp rsp;
	uint8_t iu[64];
	uint32_t total = 0;

	fake_login(&rsp);
	for (uint32_t i = 0; i < 12; i++) { /* three times the request limit, one at a time */
		struct srp_rsp_view v;
		unsigned before = fc.nsent;

		fake_recv(iu, (uint32_t)tur_iu(iu, 100 + i));
		fake_wait_sent(before + 1);
		v = fake_last_rsp();
		cr_assert_eq(srp_tag_u64(v.tag), 100 + i);
		cr_assert_eq(v.req_lim_delta, 1, "each response gives its credit back");
		total += v.req_lim_delta;
	}
	fake_settle();
	cr_assert_eq(total, 12);
	cr_assert_eq(fc.reposted, 12, "every receive buffer posted again");
}

Test(srp_ch, request_beyond_the_limit_logs_out)
{
	struct srp_login_rsp rsp;
	uint8_t iu[64];

	fake_login(&rsp);
	/* five requests on a limit of four, before any answer is processed: the responses the
	 * core has finished wait in the call queue (nothing runs until fake_settle) */
	for (uint32_t i = 0; i < 5; i++)
		fake_recv(iu, (uint32_t)tur_iu(iu, 200 + i));
	expect_logout(SRP_TLO_NO_REASON);
}

/* A response's credit goes back when it is posted; its request context only when the send
 * completes.  On a real HCA the initiator's next commands, sent with those credits, can be
 * received before the send completions are reaped: every one must still find a context. */
Test(srp_ch, credits_spent_before_send_completions_are_reaped)
{
	struct srp_login_rsp rsp;
	uint8_t iu[64];
	bool seen[8] = {false};

	fake_login(&rsp);
	fc.hold_ops = true;
	for (uint32_t i = 0; i < 4; i++)
		fake_recv(iu, (uint32_t)tur_iu(iu, 300 + i));
	fake_wait_sent(4);
	for (uint32_t i = 4; i < 8; i++) /* the four credits those responses returned */
		fake_recv(iu, (uint32_t)tur_iu(iu, 300 + i));
	fake_wait_sent(8);
	fc.hold_ops = false;
	fake_settle();
	cr_assert_not(fc.disconnected, "the channel was logged out");
	cr_assert_eq(fc.nsent, 8);
	for (unsigned i = 0; i < fc.nsent; i++) {
		struct srp_rsp_view v;
		uint64_t tag;

		cr_assert_eq(srp_parse_rsp(fc.sent[i].b, fc.sent[i].len, &v), SRP_IU_OK,
			     "IU %u is not an SRP_RSP (type 0x%02x)", i, fc.sent[i].b[0]);
		tag = srp_tag_u64(v.tag);
		cr_assert(tag >= 300 && tag < 308 && !seen[tag - 300], "tag %llu",
			  (unsigned long long)tag);
		/* GOOD, or the first command's power-on unit attention; never BUSY */
		cr_assert(v.status == 0 || v.status == 2, "tag %llu status 0x%02x",
			  (unsigned long long)tag, v.status);
		seen[tag - 300] = true;
	}
}

Test(srp_ch, initiator_logout_drains_and_releases)
{
	struct srp_login_rsp rsp;
	uint8_t iu[64];

	fake_login(&rsp);
	fake_recv(iu, (uint32_t)tur_iu(iu, 1));
	srp_build_i_logout(iu, tagn(2));
	fake_recv(iu, 16);
	fake_settle();
	cr_assert(fc.disconnected, "no disconnect after SRP_I_LOGOUT");
	cr_assert(fc.released);
	/* the command received before the logout was still answered */
	cr_assert_geq(fc.nsent, 1);
	cr_assert_eq(srp_tag_u64(fake_last_rsp().tag), 1);
}

Test(srp_ch, target_logout_answers_busy_then_disconnects)
{
	struct srp_login_rsp rsp;
	struct srpt_ch *ch;
	uint8_t iu[64];
	uint32_t w;

	fake_login(&rsp);
	ch = fc.priv;
	fc.eagain = 0;
	/* keep one command in flight so the channel cannot disconnect at once */
	fake_recv(iu, (uint32_t)tur_iu(iu, 1));
	srpt_ch_logout(ch, SRP_TLO_INACTIVE);
	cr_assert_eq(last_type(&w), SRP_OP_T_LOGOUT);
	cr_assert_eq(w, SRP_TLO_INACTIVE);
	/* a command after the logout: BUSY, so the initiator keeps its credit flow */
	fake_recv(iu, (uint32_t)tur_iu(iu, 2));
	fake_settle();
	cr_assert(fc.disconnected);
	bool busy = false;
	for (unsigned i = 0; i < fc.nsent; i++) {
		struct srp_rsp_view v;
		if (srp_parse_rsp(fc.sent[i].b, fc.sent[i].len, &v) == SRP_IU_OK &&
		    srp_tag_u64(v.tag) == 2)
			busy = v.status == SAM_STAT_BUSY;
	}
	cr_assert(busy, "command during the logout not answered BUSY");
}

Test(srp_ch, down_with_commands_in_the_core_waits_for_them)
{
	struct srp_login_rsp rsp;
	uint8_t iu[64];

	fake_login(&rsp);
	for (uint32_t i = 0; i < 3; i++)
		fake_recv(iu, (uint32_t)tur_iu(iu, 10 + i));
	fk_disconnect(FC); /* the connection drops with three commands in the core */
	cr_assert_not(fc.released, "released before the core finished");
	fake_settle();
	cr_assert(fc.released);
	cr_assert_null(fake_ctx.nexuses);
}

Test(srp_ch, send_queue_full_then_room)
{
	struct srp_login_rsp rsp;
	uint8_t iu[64];
	unsigned before;

	fake_login(&rsp);
	fc.eagain = 1;
	before = fc.nsent;
	fake_recv(iu, (uint32_t)tur_iu(iu, 5));
	/* the response waits for room */
	struct timespec ts = {0, 50 * 1000 * 1000};
	for (int i = 0; i < 20 && fc.nsent == before; i++) {
		fake_step();
		nanosleep(&ts, NULL);
	}
	cr_assert_eq(fc.nsent, before, "sent despite -EAGAIN");
	srpt_conn_ops.sq_space(FC);
	fake_wait_sent(before + 1);
	cr_assert_eq(srp_tag_u64(fake_last_rsp().tag), 5);
	cr_assert_eq(fake_last_rsp().req_lim_delta, 1, "the credit was not lost on -EAGAIN");
}
