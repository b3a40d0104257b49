/* SRP's admin listing (srp_admin.c): nexuses made by real logins (srpt_nexus_login), listed
 * with their channels through srpt_show_sessions. */
#include <criterion/criterion.h>

#include "target/admin.h"
#include "target/tgt_jread.h"
#include "tests/unit/conf_test_util.h"
#include "transports/srp/srp_int.h"

static const char *CONF = "HANDLER vdisk_nullio {\n\tDEVICE d0 {\n\t\tsize_mb 16\n\t}\n}\n"
			  "TARGET_DRIVER ib_srpt {\n"
			  "\tTARGET fe80:0000:0000:0000:0002:c903:000f:41a7 {\n"
			  "\t\tenabled 1\n\t\trel_tgt_id 7\n\t\tLUN 0 d0\n\t}\n"
			  "}\n";

static struct tgt_config *cfg;
static struct srpt_ctx ctx;

static const char *peer_name(const struct rdma_conn *c)
{
	return (const char *)c; /* the tests' "connections" are their peer names */
}

static const struct rdma_io name_only = {.name = peer_name};

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
	srpt_global = &ctx;
	srpt_io = &name_only;
}

static void teardown(void)
{
	srpt_global = NULL;
	free(ctx.tgts);
	pthread_mutex_destroy(&ctx.lock);
	tgt_config_free(cfg);
}

TestSuite(srp_admin, .init = setup, .fini = teardown);

static struct tgt_jv *list(const struct tgt_driver *drv, struct scsi_io_stats *total)
{
	struct ut_json j;

	ut_json_init(&j);
	ut_json_arr(&j, NULL);
	srpt_show_sessions(drv, &j, total);
	ut_json_end_arr(&j);
	struct tgt_jv *v = tgt_jread(j.buf, NULL);
	cr_assert_not_null(v, "not JSON: %s", j.buf);
	ut_json_free(&j);
	return v;
}

Test(srp_admin, a_nexus_with_its_channels_and_counters)
{
	static char peer_a[] = "10.0.0.1:5001", peer_b[] = "10.0.0.1:5002";
	struct srpt_ch a = {0}, b = {0};
	struct srp_login_req r = {
	    .req_it_iu_len = 8260, .req_buf_fmt = 6, .req_flags = SRP_MCA_MULTI};
	struct srp_login_decision dec;
	struct scsi_io_stats total = {0};

	r.initiator_port_id[15] = 9;
	memcpy(r.target_port_id, ctx.tgts[0].id.port_id, 16);
	a.conn = (struct rdma_conn *)peer_a;
	b.conn = (struct rdma_conn *)peer_b;
	srpt_nexus_login(&ctx, &a, &r, &dec);
	cr_assert(dec.accept);
	srpt_nexus_login(&ctx, &b, &r, &dec);
	cr_assert(dec.accept);
	a.it_iu_len = 8260;
	a.ti_iu_len = 260;
	a.nexus->nx.stats.cmds = 5;
	a.nexus->nx.stats.write_bytes = 4096;
	scsi_nexus_count_tmf(&a.nexus->nx);

	struct tgt_jv *v = list(ctx.drv, &total);
	cr_assert_eq(v->n, 1, "two channels, one nexus");
	const struct tgt_jv *s = &v->kids[0], *cs = tgt_jv_get(s, "connections");
	cr_assert_str_eq(tgt_jv_str(s, "driver", ""), "ib_srpt");
	cr_assert_str_eq(tgt_jv_str(s, "initiator", ""), "0x00000000000000000000000000000009");
	cr_assert_str_eq(tgt_jv_str(s, "target", ""), "fe80:0000:0000:0000:0002:c903:000f:41a7");
	cr_assert_eq(tgt_jv_u64(s, "rel_tgt_id", 0), 7);
	cr_assert_not(tgt_jv_bool(s, "retired", true));
	cr_assert_eq(cs->n, 2);
	bool seen_a = false;
	for (unsigned i = 0; i < cs->n; i++)
		if (!strcmp(tgt_jv_str(&cs->kids[i], "peer", ""), peer_a)) {
			seen_a = true;
			cr_assert_eq(tgt_jv_u64(&cs->kids[i], "it_iu_len", 0), 8260);
			cr_assert_eq(tgt_jv_u64(&cs->kids[i], "ti_iu_len", 0), 260);
		}
	cr_assert(seen_a);
	const struct tgt_jv *k = tgt_jv_get(s, "counters");
	cr_assert_eq(tgt_jv_u64(k, "commands", 0), 5);
	cr_assert_eq(tgt_jv_u64(k, "bytes_written", 0), 4096);
	cr_assert_eq(tgt_jv_u64(k, "task_mgmt", 0), 1);
	cr_assert_eq(total.cmds, 5);
	tgt_jv_free(v);

	struct tgt_driver other = {.name = "ib_srpt"};
	v = list(&other, NULL);
	cr_assert_eq(v->n, 0, "only the driver the transport was started for");
	tgt_jv_free(v);

	srpt_nexus_leave(&ctx, &a);
	srpt_nexus_leave(&ctx, &b);
	v = list(ctx.drv, NULL);
	cr_assert_eq(v->n, 0, "gone with its last channel");
	tgt_jv_free(v);
	srpt_global = NULL;
	v = list(ctx.drv, NULL);
	cr_assert_eq(v->n, 0, "not started: nothing");
	tgt_jv_free(v);
}
