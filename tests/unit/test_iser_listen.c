/* Where iSER is served: listen_iser (default 0.0.0.0:3260, `none`), its checks, connection
 * sizes from the targets that allow iSER, no listener when none does, and a config written the
 * way SCST writes an iSER setup (RDMAExtensions and the iSER keys in TARGET_DRIVER iscsi). */
#include <criterion/criterion.h>
#include <string.h>

#include "iscsi_harness.h"
#include "transports/iser/iser_iscsi.h"

static struct tgt_config *parse(const char *text, int *errors, int *warnings);

static int nerr, nwarn;
static char last_msg[512];

static void count(struct diag *d, bool error, int line, const char *msg)
{
	(void)d, (void)line;
	if (error)
		nerr++;
	else
		nwarn++;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

static struct tgt_config *parse(const char *text, int *errors, int *warnings)
{
	struct diag d = {.file = "unit", .emit = count};
	struct tgt_config *cfg;

	nerr = nwarn = 0;
	cfg = tgt_config_parse(text, strlen(text), "unit.conf", &d); /* validates the drivers */
	*errors = nerr;
	*warnings = nwarn;
	return cfg;
}

#define DRV(x)                                                                                     \
	"TARGET_DRIVER iscsi {\n" x "\n TARGET iqn.2026-12.org.utgt:t {\n  enabled 1\n }\n}\n"

Test(iser_listen, portals_default_explicit_none)
{
	const char *v[8];
	struct tgt_config *c;
	int e, w;

	c = parse(DRV(" enabled 1"), &e, &w);
	cr_assert_eq(iser_listen_portals(tgt_config_driver(c, "iscsi"), v, 8), 1);
	cr_assert_str_eq(v[0], "0.0.0.0:3260", "SCST's isert listens on every RDMA port at 3260");
	tgt_config_free(c);
	c = parse(DRV(" listen_iser 10.0.0.1:3260\n listen_iser 10.0.1.1"), &e, &w);
	cr_assert_eq(e, 0);
	cr_assert_eq(iser_listen_portals(tgt_config_driver(c, "iscsi"), v, 8), 2);
	cr_assert_str_eq(v[1], "10.0.1.1");
	tgt_config_free(c);
	c = parse(DRV(" listen_iser none"), &e, &w);
	cr_assert_eq(e, 0);
	cr_assert_eq(iser_listen_portals(tgt_config_driver(c, "iscsi"), v, 8), 0);
	tgt_config_free(c);
}

Test(iser_listen, bad_portals_are_config_errors)
{
	struct tgt_config *c;
	int e, w;

	c = parse(DRV(" listen_iser 10.0.0.1:99999"), &e, &w);
	cr_assert_eq(e, 1, "%s", last_msg);
	cr_assert(strstr(last_msg, "listen_iser"), "%s", last_msg);
	tgt_config_free(c);
	c = parse(DRV(" listen_iser none\n listen_iser 10.0.0.1"), &e, &w);
	cr_assert_geq(e, 1, "none and a portal");
	tgt_config_free(c);
	c = parse(DRV(" listen_iser 10.0.0.1:1\n listen_iser 10.0.0.1:2\n listen_iser 10.0.0.1:3\n"
		      " listen_iser 10.0.0.1:4\n listen_iser 10.0.0.1:5\n listen_iser 10.0.0.1:6\n"
		      " listen_iser 10.0.0.1:7\n listen_iser 10.0.0.1:8\n listen_iser 10.0.0.1:9"),
		  &e, &w);
	cr_assert_geq(e, 1, "more than 8 portals");
	tgt_config_free(c);
}

Test(iser_listen, scst_written_iser_keys_load_and_are_honoured)
{
	struct tgt_config *c;
	int e, w;

	c = parse("TARGET_DRIVER iscsi {\n enabled 1\n TARGET iqn.2026-12.org.utgt:t {\n"
		  "  enabled 1\n  RDMAExtensions Yes\n  TargetRecvDataSegmentLength 65536\n"
		  "  InitiatorRecvDataSegmentLength 32768\n  iSERHelloRequired No\n"
		  "  QueuedCommands 128\n }\n}\n",
		  &e, &w);
	cr_assert_not_null(c);
	cr_assert_eq(e, 0, "%s", last_msg);
	cr_assert_eq(w, 0, "%s", last_msg);
	tgt_config_free(c);
	c = parse("TARGET_DRIVER iscsi {\n TARGET iqn.2026-12.org.utgt:t {\n"
		  "  TargetRecvDataSegmentLength 4096\n  RDMAExtensions maybe\n }\n}\n",
		  &e, &w);
	cr_assert_eq(e, 2, "below 8192, and not a boolean: %s", last_msg);
	tgt_config_free(c);
	c = parse("TARGET_DRIVER iscsi {\n TARGET iqn.2026-12.org.utgt:t {\n"
		  "  enabled 1\n  iSERHelloRequired Yes\n }\n}\n",
		  &e, &w);
	cr_assert_eq(e, 0);
	cr_assert_eq(w, 1, "iWARP only: a warning (%d: %s)", w, last_msg);
	cr_assert(strstr(last_msg, "iWARP"), "%s", last_msg);
	tgt_config_free(c);
}

static struct ih_target T;

Test(iser_listen, connections_are_sized_for_the_largest_target)
{
	struct iser_conn_cfg cfg;

	ih_start(&T, "listen_iser none",
		 "QueuedCommands 128\n  TargetRecvDataSegmentLength 65536\n"
		 "  InitiatorRecvDataSegmentLength 16384\n }\n TARGET " IH_TARGET "-2 {\n"
		 "  enabled 1\n  RDMAExtensions No\n  QueuedCommands 512\n  LUN 0 rd1");
	iser_listen_conn_cfg(iscsit_global, &cfg);
	cr_assert_eq(cfg.queue_depth, 128, "the target without iSER does not count");
	cr_assert_eq(cfg.keys.trdsl, 65536);
	cr_assert_eq(cfg.keys.max_send_dsl, 16384);
	ih_stop(&T);
}

Test(iser_listen, no_iser_portal_when_no_target_allows_it)
{
	ih_start(&T, NULL, "RDMAExtensions No");
	for (unsigned i = 0; i < iscsit_global->nportals; i++)
		cr_assert_neq(iscsit_global->portals[i].xp, &iser_xport);
	ih_stop(&T);
	ih_start(&T, "listen_iser none", NULL);
	for (unsigned i = 0; i < iscsit_global->nportals; i++)
		cr_assert_neq(iscsit_global->portals[i].xp, &iser_xport);
	ih_stop(&T);
	ih_start(&T, "listen_iser 127.0.0.1:3260", NULL);
	cr_assert_eq(iscsit_global->nportals, 2);
	cr_assert_eq(iscsit_global->portals[1].xp, &iser_xport);
	cr_assert_str_eq(iscsit_global->portals[1].str, "127.0.0.1:3260");
	ih_stop(&T);
}
