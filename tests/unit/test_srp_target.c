/* SRP targets from the config (identity, rel_tgt_id, errors) and I_T nexuses at login: one per
 * initiator port and target, shared by that initiator's channels, replaced by a single-channel
 * login, gone with its last channel. */
#include <criterion/criterion.h>

#include "tests/unit/conf_test_util.h"
#include "transports/srp/srp_int.h"

static const char *CONF = "HANDLER vdisk_nullio {\n\tDEVICE d0 {\n\t\tsize_mb 16\n\t}\n}\n"
			  "TARGET_DRIVER ib_srpt {\n"
			  "\tmax_channels 2\n"
			  "\tTARGET fe80:0000:0000:0000:0002:c903:000f:41a7 {\n"
			  "\t\tenabled 1\n\t\trel_tgt_id 7\n\t\tLUN 0 d0\n\t}\n"
			  "\tTARGET fe80:0000:0000:0000:0002:c903:000f:8395 {\n"
			  "\t\tenabled 1\n\t\tLUN 0 d0\n\t}\n"
			  "\tTARGET fe80:0000:0000:0000:0002:c903:000f:9999 {\n"
			  "\t\tenabled 0\n\t}\n"
			  "}\n";

static struct tgt_config *cfg;
static struct srpt_ctx ctx;

static void setup(void)
{
	struct captured c;
	struct diag d;

	cfg = load_str(CONF, &c, &d);
	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	memset(&ctx, 0, sizeof(ctx));
	pthread_mutex_init(&ctx.lock, NULL);
	ctx.cfg = cfg;
	ctx.drv = tgt_config_driver(cfg, "ib_srpt");
	cr_assert_eq(srpt_opts_parse(ctx.drv, &ctx.o, NULL), 0);
	cr_assert_eq(srpt_targets_setup(&ctx, NULL), 0);
}

static void teardown(void)
{
	free(ctx.tgts);
	pthread_mutex_destroy(&ctx.lock);
	tgt_config_free(cfg);
}

static struct srp_login_req req(uint8_t iport_last, const struct srpt_tgt *t, uint8_t mca)
{
	struct srp_login_req r = {.req_it_iu_len = 8260, .req_buf_fmt = 6, .req_flags = mca};

	r.initiator_port_id[15] = iport_last;
	memcpy(r.target_port_id, t->id.port_id, 16);
	return r;
}

TestSuite(srp_target, .init = setup, .fini = teardown);

Test(srp_target, targets_and_identity)
{
	cr_assert_eq(ctx.ntgts, 2, "the disabled one is not served");
	cr_assert_eq(ctx.tgts[0].rel_tgt_id, 7);
	cr_assert_eq(ctx.tgts[0].id.ioc_guid, 0x0002c903000f41a7ull);
	cr_assert_eq(ctx.tgts[1].id.ioc_guid, 0x0002c903000f8395ull);
	cr_assert_neq(ctx.tgts[1].rel_tgt_id, 0);
	cr_assert_eq(srpt_find_target(&ctx, ctx.tgts[1].id.port_id), &ctx.tgts[1]);
	uint8_t other[16] = {1};
	cr_assert_null(srpt_find_target(&ctx, other));
}

Test(srp_target, duplicate_identity_refused)
{
	static const char *dup = "HANDLER vdisk_nullio {\n\tDEVICE d0 {\n\t\tsize_mb 16\n\t}\n}\n"
				 "TARGET_DRIVER ib_srpt {\n"
				 "\tTARGET fe80::2:c903:f:41a7 {\n\t\tenabled 1\n\t}\n"
				 "\tTARGET 0002:c903:000f:41a7 {\n\t\tenabled 1\n\t}\n}\n";
	struct captured c;
	struct diag d;
	struct tgt_config *bad = load_str(dup, &c, &d);
	int line;

	cr_assert_null(bad);
	cr_assert_str_eq(cap_first_error(&c, &line),
			 "ib_srpt: TARGET '0002:c903:000f:41a7' has the same identity as "
			 "'fe80::2:c903:f:41a7'");
	cr_assert_eq(line, 10);
}

Test(srp_target, channels_share_a_nexus)
{
	struct srpt_ch a = {0}, b = {0}, x = {0};
	struct srp_login_req r = req(1, &ctx.tgts[0], SRP_MCA_SINGLE);
	struct srp_login_decision dec;
	struct srpt_nexus *n;

	srpt_nexus_login(&ctx, &a, &r, &dec);
	cr_assert(dec.accept);
	cr_assert_eq(dec.rsp.rsp_flags & SRP_MCA_MASK, SRP_RSP_MCR_NO_CHAN);
	n = a.nexus;
	cr_assert_not_null(n);
	cr_assert_eq(n->nx.proto, SCSI_PROTO_SRP);
	cr_assert_str_eq(n->nx.initiator_name, "0x00000000000000000000000000000001");
	cr_assert_str_eq(n->nx.initiator_port, n->nx.initiator_name);
	cr_assert_str_eq(n->nx.target_name, "fe80:0000:0000:0000:0002:c903:000f:41a7");
	cr_assert_str_eq(n->nx.target_port, "0x0002c903000f41a70002c903000f41a7");
	cr_assert_eq(n->nx.rel_tgt_id, 7);
	cr_assert_eq(n->nx.max_xfer_bytes, SRPT_MAX_XFER, "VPD B0 on this nexus: what SRP_CMD takes");
	cr_assert_not_null(n->nx.luns);
	cr_assert_eq(n->nx.luns->n, 1);

	r.req_flags = SRP_MCA_MULTI;
	srpt_nexus_login(&ctx, &b, &r, &dec);
	cr_assert(dec.accept);
	cr_assert_eq(b.nexus, n, "same initiator port, same target: same nexus");
	cr_assert_eq(dec.rsp.rsp_flags & SRP_MCA_MASK, SRP_RSP_MCR_MAINTAINED);
	cr_assert_eq(n->nch, 2);

	srpt_nexus_login(&ctx, &x, &r, &dec);
	cr_assert_not(dec.accept, "max_channels 2");
	cr_assert_eq(dec.rej_reason, SRP_REJ_CHANNEL_LIMIT_REACHED);

	srpt_nexus_leave(&ctx, &a);
	cr_assert_eq(n->nch, 1);
	cr_assert_eq(ctx.nexuses, n);
	srpt_nexus_leave(&ctx, &b);
	cr_assert_null(ctx.nexuses, "gone with its last channel");
}

Test(srp_target, other_initiator_other_target)
{
	struct srpt_ch a = {0}, b = {0}, c = {0};
	struct srp_login_req r1 = req(1, &ctx.tgts[0], SRP_MCA_MULTI);
	struct srp_login_req r2 = req(2, &ctx.tgts[0], SRP_MCA_MULTI);
	struct srp_login_req r3 = req(1, &ctx.tgts[1], SRP_MCA_MULTI);
	struct srp_login_decision dec;

	srpt_nexus_login(&ctx, &a, &r1, &dec);
	cr_assert(dec.accept);
	srpt_nexus_login(&ctx, &b, &r2, &dec);
	cr_assert(dec.accept);
	srpt_nexus_login(&ctx, &c, &r3, &dec);
	cr_assert(dec.accept);
	cr_assert_neq(a.nexus, b.nexus);
	cr_assert_neq(a.nexus, c.nexus);
	cr_assert_eq(c.nexus->nx.rel_tgt_id, ctx.tgts[1].rel_tgt_id);
	srpt_nexus_leave(&ctx, &a);
	srpt_nexus_leave(&ctx, &b);
	srpt_nexus_leave(&ctx, &c);
	cr_assert_null(ctx.nexuses);
}

Test(srp_target, single_channel_login_replaces_the_nexus)
{
	struct srpt_ch a = {0}, b = {0};
	struct srp_login_req r = req(1, &ctx.tgts[0], SRP_MCA_SINGLE);
	struct srp_login_decision dec;
	struct srpt_nexus *old;

	srpt_nexus_login(&ctx, &a, &r, &dec);
	old = a.nexus;
	/* a kill for a is "already on its way": the test has no event thread to post to */
	atomic_store(&a.kill_posted, true);
	srpt_nexus_login(&ctx, &b, &r, &dec);
	cr_assert(dec.accept);
	cr_assert(dec.terminate_others);
	cr_assert_eq(dec.rsp.rsp_flags & SRP_MCA_MASK, SRP_RSP_MCR_TERMINATED);
	cr_assert_neq(b.nexus, old, "a new I_T nexus");
	cr_assert(old->retired);
	/* a MULTI login now joins the new nexus, not the retired one */
	struct srpt_ch c = {0};
	r.req_flags = SRP_MCA_MULTI;
	srpt_nexus_login(&ctx, &c, &r, &dec);
	cr_assert_eq(c.nexus, b.nexus);
	srpt_nexus_leave(&ctx, &a);
	srpt_nexus_leave(&ctx, &b);
	srpt_nexus_leave(&ctx, &c);
	cr_assert_null(ctx.nexuses);
}

Test(srp_target, unknown_target_and_stopping)
{
	struct srpt_ch a = {0};
	struct srp_login_req r = req(1, &ctx.tgts[0], SRP_MCA_SINGLE);
	struct srp_login_decision dec;

	r.target_port_id[0] ^= 0xff;
	srpt_nexus_login(&ctx, &a, &r, &dec);
	cr_assert_not(dec.accept);
	cr_assert_eq(dec.rej_reason, SRP_REJ_UNABLE_ASSOCIATE_CHANNEL);
	cr_assert_null(a.nexus);
	r.target_port_id[0] ^= 0xff;
	atomic_store(&ctx.stopping, true);
	srpt_nexus_login(&ctx, &a, &r, &dec);
	cr_assert_not(dec.accept, "no logins while stopping");
	cr_assert_null(ctx.nexuses);
}

/* max_connections: channels of all initiators together (each holds its receive buffers,
 * whatever it sends); past it a login is refused before a nexus exists. */
Test(srp_target, max_connections_bounds_channels_of_all_initiators)
{
	struct srpt_ch a = {0}, b = {0}, c = {0};
	struct srp_login_req r1 = req(1, &ctx.tgts[0], SRP_MCA_MULTI);
	struct srp_login_req r2 = req(2, &ctx.tgts[1], SRP_MCA_MULTI);
	struct srp_login_req r3 = req(3, &ctx.tgts[0], SRP_MCA_SINGLE);
	struct srp_login_decision dec;

	cr_assert_eq(ctx.o.max_connections, 64, "the default");
	ctx.o.max_connections = 2;
	srpt_nexus_login(&ctx, &a, &r1, &dec);
	cr_assert(dec.accept);
	srpt_nexus_login(&ctx, &b, &r2, &dec);
	cr_assert(dec.accept);
	cr_assert_eq(ctx.nchans, 2);
	srpt_nexus_login(&ctx, &c, &r3, &dec);
	cr_assert_not(dec.accept, "a third channel, another initiator");
	cr_assert_eq(dec.rej_reason, SRP_REJ_INSUFFICIENT_RESOURCES);
	cr_assert_null(c.nexus);
	cr_assert_eq(ctx.nchans, 2);
	srpt_nexus_leave(&ctx, &a);
	cr_assert_eq(ctx.nchans, 1);
	srpt_nexus_login(&ctx, &c, &r3, &dec);
	cr_assert(dec.accept, "room again once a channel left");
	srpt_nexus_leave(&ctx, &b);
	srpt_nexus_leave(&ctx, &c);
	cr_assert_eq(ctx.nchans, 0);
	cr_assert_null(ctx.nexuses);
}
