/* iSCSI's admin listing (iscsi_show.c): the real transport on loopback, sessions logged in
 * with the harness's initiator, listed through iscsi_transport.show_sessions. */
#include "tests/unit/iscsi_harness.h"

#include "target/admin.h"
#include "target/tgt_jread.h"

static struct tgt_jv *list(const struct ih_target *t, struct scsi_io_stats *total)
{
	const struct tgt_driver *drv = tgt_config_driver(t->cfg, "iscsi");
	struct ut_json j;

	cr_assert_not_null(iscsi_transport.show_sessions);
	ut_json_init(&j);
	ut_json_arr(&j, NULL);
	iscsi_transport.show_sessions(drv, &j, total);
	ut_json_end_arr(&j);
	struct tgt_jv *v = tgt_jread(j.buf, NULL);
	cr_assert_not_null(v, "not JSON: %s", j.buf);
	ut_json_free(&j);
	return v;
}

static const struct tgt_jv *by_isid(const struct tgt_jv *v, const uint8_t isid[6])
{
	char hex[13];

	for (int i = 0; i < 6; i++)
		snprintf(hex + 2 * i, 3, "%02x", isid[i]);
	for (unsigned i = 0; i < v->n; i++)
		if (!strcmp(tgt_jv_str(&v->kids[i], "isid", ""), hex))
			return &v->kids[i];
	return NULL;
}

Test(iscsi_show, sessions_with_connection_keys_and_counters)
{
	struct ih_target t;
	struct ih_conn a, b, disc;
	struct ih_login_opts od = {0};
	struct scsi_io_stats total = {0};
	uint8_t buf[16384] = {0};

	ih_start(&t, NULL, NULL);
	struct tgt_jv *v = list(&t, &total);
	cr_assert_eq(v->n, 0, "nothing logged in yet");
	tgt_jv_free(v);

	cr_assert_eq(ih_login_normal(&a, t.port), 0);
	cr_assert_eq(ih_login_normal(&b, t.port), 0);
	ih_init(&disc, t.port);
	cr_assert_eq(ih_login(&disc, &od), 0, "discovery login");
	ih_clear_ua(&a, 0);
	ih_clear_ua(&b, 0);
	struct tgt_jv *before = list(&t, NULL);
	const struct tgt_jv *a0 = by_isid(before, a.isid);
	cr_assert_not_null(a0);
	uint64_t cmds0 = tgt_jv_u64(tgt_jv_get(a0, "counters"), "commands", 0);

	cr_assert_eq(ih_rw10(&a, true, 0, 32, buf, NULL).status, 0);  /* 16 KiB out */
	cr_assert_eq(ih_rw10(&a, false, 0, 8, buf, NULL).status, 0);  /* 4 KiB in */
	cr_assert_eq(ih_rw10(&b, false, 0, 16, buf, NULL).status, 0); /* 8 KiB in */

	v = list(&t, &total);
	cr_assert_eq(v->n, 2, "two normal sessions; the discovery session is not listed");
	const struct tgt_jv *sa = by_isid(v, a.isid), *sb = by_isid(v, b.isid);
	cr_assert_not_null(sa);
	cr_assert_not_null(sb);
	cr_assert_str_eq(tgt_jv_str(sa, "driver", ""), "iscsi");
	cr_assert_str_eq(tgt_jv_str(sa, "initiator", ""), IH_INITIATOR);
	cr_assert_str_eq(tgt_jv_str(sa, "target", ""), IH_TARGET);
	cr_assert_eq(tgt_jv_u64(sa, "tsih", 0), a.tsih);
	const struct tgt_jv *k = tgt_jv_get(sa, "counters");
	cr_assert_eq(tgt_jv_u64(k, "commands", 0) - cmds0, 2);
	cr_assert_eq(tgt_jv_u64(k, "bytes_written", 0), 16384);
	cr_assert_eq(tgt_jv_u64(k, "bytes_read", 0), 4096);
	cr_assert_eq(tgt_jv_u64(tgt_jv_get(sb, "counters"), "bytes_read", 0), 8192);
	const struct tgt_jv *c = &tgt_jv_get(sa, "connections")->kids[0];
	char local[32];
	snprintf(local, sizeof(local), "127.0.0.1:%u", t.port);
	cr_assert_str_eq(tgt_jv_str(c, "local", ""), local);
	cr_assert(!strncmp(tgt_jv_str(c, "peer", ""), "127.0.0.1:", 10));
	cr_assert_lt(tgt_jv_u64(c, "worker", 999), iscsit_global->nworkers);
	const struct tgt_jv *p = tgt_jv_get(sa, "params");
	cr_assert_not_null(p);
	cr_assert_str_eq(tgt_jv_str(p, "HeaderDigest", ""), "None");
	cr_assert_eq(tgt_jv_get(p, "InitialR2T")->type, JV_BOOL);
	cr_assert_gt(tgt_jv_u64(p, "MaxRecvDataSegmentLength_initiator", 0), 0);
	cr_assert_eq(total.write_bytes, 16384, "the totals add every listed session");
	tgt_jv_free(v);
	tgt_jv_free(before);

	ih_logout(&a);
	ih_close(&a);
	for (int i = 0; i < 1500; i++) { /* the session leaves the table once the socket closed */
		v = list(&t, NULL);
		unsigned n = v->n;
		tgt_jv_free(v);
		if (n == 1)
			break;
		usleep(20000);
	}
	v = list(&t, NULL);
	cr_assert_eq(v->n, 1);
	cr_assert_not_null(by_isid(v, b.isid));
	tgt_jv_free(v);
	ih_close(&b);
	ih_close(&disc);
	ih_stop(&t);
}

Test(iscsi_show, another_driver_lists_nothing)
{
	struct ih_target t;
	struct ih_conn a;
	struct tgt_driver other = {.name = "iscsi"};
	struct ut_json j;

	ih_start(&t, NULL, NULL);
	cr_assert_eq(ih_login_normal(&a, t.port), 0);
	ut_json_init(&j);
	ut_json_arr(&j, NULL);
	iscsi_transport.show_sessions(&other, &j, NULL);
	ut_json_end_arr(&j);
	cr_assert_str_eq(j.buf, "[]", "only the driver the transport was started for");
	ut_json_free(&j);
	ih_close(&a);
	ih_stop(&t);
	ut_json_init(&j);
	ut_json_arr(&j, NULL);
	iscsi_transport.show_sessions(&other, &j, NULL); /* stopped: nothing, no crash */
	ut_json_end_arr(&j);
	cr_assert_str_eq(j.buf, "[]");
	ut_json_free(&j);
}
