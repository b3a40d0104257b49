/* SRP live administration (srp_update.c): a new configuration's targets replace the running
 * ones under the login lock; each nexus gets the LUN table its initiator now resolves to; a
 * nexus whose target went (or was disabled), or whose initiator lost its LUNs, gets an empty
 * table, is retired and its channels are logged out; close_session logs one nexus out. */
#include <criterion/criterion.h>

#include "tests/unit/conf_test_util.h"
#include "transports/srp/srp_int.h"

#define T1 "fe80:0000:0000:0000:0002:c903:000f:41a7"
#define T2 "fe80:0000:0000:0000:0002:c903:000f:8395"

static struct tgt_config *cfg, *next;
static struct srpt_ctx ctx;
static unsigned kills;

static void count_call(struct rdma_conn *c, struct ut_msg *m)
{
	(void)c;
	(void)m;
	kills++; /* srpt_ch_kill posts one call to the channel's thread */
}

static const struct rdma_io fake = {.call = count_call};

static struct tgt_config *load(const char *luns_t1, const char *t2)
{
	char text[2048];
	struct captured c;
	struct diag d;
	struct tgt_config *x;

	snprintf(text, sizeof(text),
		 "HANDLER vdisk_nullio {\n DEVICE d0 { size_mb 16 }\n DEVICE d1 { size_mb 16 }\n}\n"
		 "TARGET_DRIVER ib_srpt {\n TARGET " T1
		 " {\n  enabled 1\n  rel_tgt_id 7\n%s }\n%s}\n",
		 luns_t1, t2);
	x = load_str(text, &c, &d);
	cr_assert_not_null(x, "%s", cap_dump(&c));
	cr_assert_eq(tgt_config_open_devices(x, &d), 0);
	return x;
}

static void setup(void)
{
	cfg = load("  LUN 0 d0\n  GROUP g {\n   INITIATOR 0x*02\n   LUN 0 d1\n  }\n",
		   " TARGET " T2 " {\n  enabled 1\n  LUN 0 d1\n }\n");
	memset(&ctx, 0, sizeof(ctx));
	pthread_mutex_init(&ctx.lock, NULL);
	ctx.cfg = cfg;
	ctx.drv = tgt_config_driver(cfg, "ib_srpt");
	cr_assert_eq(srpt_opts_parse(ctx.drv, &ctx.o, NULL), 0);
	cr_assert_eq(srpt_targets_setup(&ctx, NULL), 0);
	srpt_io = &fake;
	kills = 0;
	next = NULL;
}

static void teardown(void)
{
	free(ctx.tgts);
	pthread_mutex_destroy(&ctx.lock);
	tgt_config_free(cfg);
	tgt_config_free(next);
	scsi_core_shutdown();
}

TestSuite(srp_update, .init = setup, .fini = teardown);

static struct srpt_nexus *login(struct srpt_ch *ch, uint8_t iport_last, unsigned tgt)
{
	struct srp_login_req r = {
	    .req_it_iu_len = 8260, .req_buf_fmt = 6, .req_flags = SRP_MCA_SINGLE};
	struct srp_login_decision dec;

	r.initiator_port_id[15] = iport_last;
	memcpy(r.target_port_id, ctx.tgts[tgt].id.port_id, 16);
	srpt_nexus_login(&ctx, ch, &r, &dec);
	cr_assert(dec.accept);
	return ch->nexus;
}

Test(srp_update, luns_follow_the_new_configuration)
{
	struct srpt_ch a = {0}, b = {0};
	struct srpt_nexus *na = login(&a, 1, 0), *nb = login(&b, 2, 0);
	char err[128] = "";

	cr_assert_eq(na->nx.luns->n, 1);
	cr_assert_str_eq(na->nx.luns->e[0].dev->p.name, "d0");
	cr_assert_str_eq(nb->nx.luns->e[0].dev->p.name, "d1", "0x...02 is in GROUP g");
	/* T1 gets LUN 5; the group loses its initiator pattern */
	next = load("  LUN 0 d0\n  LUN 5 d1\n  GROUP g {\n   LUN 0 d1\n  }\n",
		    " TARGET " T2 " {\n  enabled 1\n  LUN 0 d1\n }\n");
	cr_assert_eq(
	    srpt_ctx_update(&ctx, next, tgt_config_driver(next, "ib_srpt"), err, sizeof(err)), 0,
	    "%s", err);
	cr_assert_eq(ctx.drv, tgt_config_driver(next, "ib_srpt"));
	cr_assert_eq(na->nx.luns, &tgt_driver_target(ctx.drv, T1)->table, "next's table");
	cr_assert_eq(na->nx.luns->n, 2);
	cr_assert_eq(nb->nx.luns->n, 2, "b falls back to the target's LUNs");
	cr_assert_str_eq(nb->nx.luns->e[0].dev->p.name, "d0");
	cr_assert_not(na->retired);
	cr_assert_eq(na->tgt, &ctx.tgts[0], "re-pointed into the new array");
	cr_assert_eq(kills, 0);
	srpt_nexus_leave(&ctx, &a);
	srpt_nexus_leave(&ctx, &b);
}

Test(srp_update, target_gone_retires_its_nexuses)
{
	struct srpt_ch a = {0}, b = {0};
	struct srpt_nexus *na = login(&a, 1, 0), *nb = login(&b, 3, 1);
	char err[128] = "";

	/* T2 disabled: not served, its nexus retired with an empty table */
	next = load("  LUN 0 d0\n", " TARGET " T2 " {\n  enabled 0\n  LUN 0 d1\n }\n");
	cr_assert_eq(
	    srpt_ctx_update(&ctx, next, tgt_config_driver(next, "ib_srpt"), err, sizeof(err)), 0,
	    "%s", err);
	cr_assert_eq(ctx.ntgts, 1);
	cr_assert(nb->retired);
	cr_assert_null(nb->tgt);
	cr_assert_eq(nb->nx.luns->n, 0, "no command of it reaches an LU");
	cr_assert_eq(kills, 1, "its channel is logged out");
	cr_assert_not(na->retired);
	cr_assert_eq(na->nx.luns->n, 1);
	/* a later change leaves the retired nexus alone */
	cr_assert_eq(
	    srpt_ctx_update(&ctx, next, tgt_config_driver(next, "ib_srpt"), err, sizeof(err)), 0);
	cr_assert_eq(kills, 1);
	srpt_nexus_leave(&ctx, &a);
	srpt_nexus_leave(&ctx, &b);
}

Test(srp_update, initiator_without_luns_is_logged_out)
{
	struct srpt_ch a = {0};
	struct srpt_nexus *na = login(&a, 2, 0);
	char err[128] = "";

	/* T1 has no LUN of its own any more; 0x...02 is still in GROUP g, which has none */
	next = load("  GROUP g {\n   INITIATOR 0x*02\n  }\n", "");
	cr_assert_eq(
	    srpt_ctx_update(&ctx, next, tgt_config_driver(next, "ib_srpt"), err, sizeof(err)), 0,
	    "%s", err);
	cr_assert(na->retired);
	cr_assert_eq(na->nx.luns->n, 0);
	cr_assert_eq(kills, 1);
	srpt_nexus_leave(&ctx, &a);
}

Test(srp_update, close_session_by_nexus_id)
{
	struct srpt_ch a = {0};
	struct srpt_nexus *na = login(&a, 1, 0);
	char err[128] = "";

	cr_assert_eq(srpt_ctx_close_session(&ctx, na->nx.id + 1000, err, sizeof(err)), -1);
	cr_assert(strstr(err, "no SRP nexus with id"), "%s", err);
	cr_assert_eq(kills, 0);
	cr_assert_eq(srpt_ctx_close_session(&ctx, na->nx.id, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(kills, 1);
	srpt_nexus_leave(&ctx, &a);
}
