/* SendTargets: which targets an initiator is told about (ACL, enabled, allowed_portal),
 * which addresses (a wildcard portal answers with the address the initiator reached), the
 * wire format, and long answers split over several Text Responses. */
#include "iscsi_harness.h"

static struct ih_target T;

static void teardown(void)
{
	ih_stop(&T);
}

static const char *CONF =
    "HANDLER ramdisk {\n DEVICE rd0 {\n  size_mb 4\n }\n}\n"
    "TARGET_DRIVER iscsi {\n listen 127.0.0.1:0\n listen 0.0.0.0:0\n listen [::1]:0\n"
    " TARGET iqn.2026-12.org.utgt:everyone {\n  enabled 1\n  tpgt 3\n  LUN 0 rd0\n }\n"
    " TARGET iqn.2026-12.org.utgt:disabled {\n  enabled 0\n  LUN 0 rd0\n }\n"
    " TARGET iqn.2026-12.org.utgt:nobody {\n  enabled 1\n }\n"
    " TARGET iqn.2026-12.org.utgt:group {\n  enabled 1\n"
    "  GROUP g {\n   INITIATOR iqn.2026-12.org.utgt:friend\n   LUN 0 rd0\n  }\n }\n"
    " TARGET iqn.2026-12.org.utgt:fenced {\n  enabled 1\n  allowed_portal 10.*\n  LUN 0 rd0\n }\n"
    " TARGET iqn.2026-12.org.utgt:perportal {\n  enabled 1\n  per_portal_acl 1\n"
    "  GROUP g {\n   INITIATOR iqn.2026-12.org.utgt:friend\\#10.9.9.9\n"
    "   INITIATOR iqn.2026-12.org.utgt:friend\\#[::1]\n   LUN 0 rd0\n  }\n }\n"
    "}\n";

static void local_v4(struct sockaddr_storage *ss, const char *ip, uint16_t port)
{
	struct sockaddr_in *a = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	inet_pton(AF_INET, ip, &a->sin_addr);
}

static int count(const struct iscsit_text *t, const char *kv)
{
	int n = 0;

	for (size_t off = 0; off < t->len; off += strlen(t->p + off) + 1)
		n += !strcmp(t->p + off, kv);
	return n;
}

Test(iscsi_text, sendtargets_lists_what_the_initiator_may_use, .fini = teardown)
{
	struct iscsit_text out = {0};
	struct sockaddr_storage local;
	char want[128];
	uint16_t p0, p1;

	ih_start_conf(&T, CONF);
	p0 = iscsit_global->portals[0].port;
	p1 = iscsit_global->portals[1].port;
	local_v4(&local, "127.0.0.1", p1);
	iscsit_sendtargets(iscsit_global, "All", "iqn.2026-12.org.utgt:stranger", &local,
			   &iscsit_global->portals[1], NULL, &out);
	cr_assert_eq(count(&out, "TargetName=iqn.2026-12.org.utgt:everyone"), 1);
	cr_assert_eq(count(&out, "TargetName=iqn.2026-12.org.utgt:disabled"), 0);
	cr_assert_eq(count(&out, "TargetName=iqn.2026-12.org.utgt:nobody"), 0, "no LUN");
	cr_assert_eq(count(&out, "TargetName=iqn.2026-12.org.utgt:group"), 0, "ACL");
	cr_assert_eq(count(&out, "TargetName=iqn.2026-12.org.utgt:fenced"), 0, "no allowed portal");
	/* 127.0.0.1:p0 as configured, the 0.0.0.0 wildcard as the address reached, no v6 */
	snprintf(want, sizeof(want), "TargetAddress=127.0.0.1:%u,3", p0);
	cr_assert_eq(count(&out, want), 1);
	snprintf(want, sizeof(want), "TargetAddress=127.0.0.1:%u,3", p1);
	cr_assert_eq(count(&out, want), 1);
	cr_assert_null(strstr(out.p, "0.0.0.0"), "never announce a wildcard");
	snprintf(want, sizeof(want), "TargetAddress=[::1]:%u,3", iscsit_global->portals[2].port);
	cr_assert_eq(count(&out, want), 1, "a specific IPv6 portal is listed as is");
	iscsit_text_free(&out);

	/* the friend sees the group target too */
	iscsit_sendtargets(iscsit_global, "All", "iqn.2026-12.org.utgt:friend", &local, NULL, NULL,
			   &out);
	cr_assert_eq(count(&out, "TargetName=iqn.2026-12.org.utgt:group"), 1);
	iscsit_text_free(&out);

	/* one named target */
	iscsit_sendtargets(iscsit_global, "iqn.2026-12.org.utgt:everyone", "x", &local, NULL, NULL,
			   &out);
	cr_assert_eq(count(&out, "TargetName=iqn.2026-12.org.utgt:everyone"), 1);
	cr_assert_eq(count(&out, "TargetName=iqn.2026-12.org.utgt:group"), 0);
	iscsit_text_free(&out);
}

Test(iscsi_text, allowed_portal_patterns, .fini = teardown)
{
	struct sockaddr_storage local;
	const struct iscsit_tgt *fenced;

	ih_start_conf(&T, CONF);
	fenced = &iscsit_global->tgts[4];
	cr_assert_str_eq(fenced->name, "iqn.2026-12.org.utgt:fenced");
	local_v4(&local, "10.1.2.3", 3260);
	cr_assert(iscsit_portal_allowed(fenced, &iscsit_global->portals[1], &local),
		  "wildcard portal reached at 10.1.2.3");
	local_v4(&local, "127.0.0.1", 3260);
	cr_assert(!iscsit_portal_allowed(fenced, &iscsit_global->portals[1], &local));
	cr_assert(!iscsit_portal_allowed(fenced, &iscsit_global->portals[0], &local));
	cr_assert(
	    iscsit_portal_allowed(&iscsit_global->tgts[0], &iscsit_global->portals[0], &local),
	    "no allowed_portal: every portal");
}

static void local_v6(struct sockaddr_storage *ss, const char *ip)
{
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	a->sin6_family = AF_INET6;
	a->sin6_port = htons(3260);
	inet_pton(AF_INET6, ip, &a->sin6_addr);
}

/* per_portal_acl 1: the ACL name is "<initiator>#<address the connection reached>", IPv6 in
 * brackets and IPv4-mapped addresses as IPv4, as iSCSI-SCST names such sessions. */
Test(iscsi_text, per_portal_acl_uses_the_local_address, .fini = teardown)
{
	const char *friend = "iqn.2026-12.org.utgt:friend";
	struct sockaddr_storage local;
	const struct iscsit_tgt *pp;
	struct iscsit_text out = {0};

	ih_start_conf(&T, CONF);
	pp = &iscsit_global->tgts[5];
	cr_assert_str_eq(pp->name, "iqn.2026-12.org.utgt:perportal");
	local_v4(&local, "10.9.9.9", 3260);
	cr_assert_eq(iscsit_acl_luns(pp, friend, &local)->n, 1);
	local_v4(&local, "10.9.9.8", 3260);
	cr_assert_eq(iscsit_acl_luns(pp, friend, &local)->n, 0, "another portal: no LUN");
	local_v6(&local, "::1");
	cr_assert_eq(iscsit_acl_luns(pp, friend, &local)->n, 1, "IPv6 in brackets");
	local_v6(&local, "::ffff:10.9.9.9");
	cr_assert_eq(iscsit_acl_luns(pp, friend, &local)->n, 1, "IPv4-mapped is IPv4");
	/* discovery follows: listed through the right portal only */
	local_v4(&local, "10.9.9.9", 3260);
	iscsit_sendtargets(iscsit_global, "All", friend, &local, NULL, NULL, &out);
	cr_assert_eq(count(&out, "TargetName=iqn.2026-12.org.utgt:perportal"), 1);
	iscsit_text_free(&out);
	local_v4(&local, "127.0.0.1", 3260);
	iscsit_sendtargets(iscsit_global, "All", friend, &local, NULL, NULL, &out);
	cr_assert_eq(count(&out, "TargetName=iqn.2026-12.org.utgt:perportal"), 0);
	iscsit_text_free(&out);
}

/* Text request over a discovery session; returns the full answer (continuations followed). */
static size_t sendtargets_wire(struct ih_conn *c, const char *what, char *out, size_t max,
			       int *pdus)
{
	char kv[256];
	size_t tl, got = 0;
	uint32_t ttt = ISCSI_RSVD_TAG, itt = c->itt++;

	*pdus = 0;
	snprintf(kv, sizeof(kv), "SendTargets=%s", what);
	tl = strlen(kv) + 1;
	for (;;) {
		uint8_t h[48] = {0}, rh[48], *d;
		uint32_t dl;

		h[0] = 0x40 | ISCSI_OP_TEXT_REQ;
		h[1] = 0x80;
		iscsi_put32(h + 16, itt);
		iscsi_put32(h + 20, ttt);
		iscsi_put32(h + 24, c->cmd_sn);
		iscsi_put32(h + 28, c->exp_stat_sn);
		cr_assert_eq(ih_send(c, h, ttt == ISCSI_RSVD_TAG ? kv : NULL,
				     ttt == ISCSI_RSVD_TAG ? (uint32_t)tl : 0),
			     0);
		cr_assert_eq(ih_recv(c, rh, &d, &dl), 0);
		cr_assert_eq(bhs_opcode(rh), ISCSI_OP_TEXT_RSP);
		cr_assert(dl <= c->their_mrdsl);
		cr_assert(got + dl <= max);
		if (dl)
			memcpy(out + got, d, dl);
		got += dl;
		free(d);
		(*pdus)++;
		if (rh[1] & ISCSI_FLAG_FINAL) {
			cr_assert_eq(bhs_w20(rh), ISCSI_RSVD_TAG);
			return got;
		}
		cr_assert(rh[1] & ISCSI_TEXT_CONTINUE);
		ttt = bhs_w20(rh);
		cr_assert_neq(ttt, ISCSI_RSVD_TAG);
	}
}

Test(iscsi_text, long_answer_in_pieces, .fini = teardown)
{
	char conf[65536], *p = conf, out[65536];
	struct ih_conn c;
	struct ih_login_opts o = {.op_keys = "MaxRecvDataSegmentLength=512"};
	size_t n;
	int pdus, names = 0;

	p += sprintf(p, "HANDLER ramdisk {\n DEVICE rd0 {\n  size_mb 4\n }\n}\n"
			"TARGET_DRIVER iscsi {\n listen 127.0.0.1:0\n");
	for (int i = 0; i < 60; i++)
		p += sprintf(
		    p, " TARGET iqn.2026-12.org.utgt:many-%02d {\n  enabled 1\n  LUN 0 rd0\n }\n",
		    i);
	sprintf(p, "}\n");
	ih_start_conf(&T, conf);
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), 0);
	c.their_mrdsl = 512; /* what we declared: the target's pieces must fit it */
	n = sendtargets_wire(&c, "All", out, sizeof(out), &pdus);
	cr_assert(pdus > 1, "split over %d PDUs", pdus);
	for (size_t off = 0; off < n; off += strlen(out + off) + 1)
		names += !strncmp(out + off, "TargetName=", 11);
	cr_assert_eq(names, 60);
	cr_assert_eq(out[n - 1], '\0');
	ih_logout(&c);
}

Test(iscsi_text, sendtargets_in_normal_session_names_its_target, .fini = teardown)
{
	struct ih_conn c;
	char out[4096];
	int pdus;
	size_t n;

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	n = sendtargets_wire(&c, "", out, sizeof(out), &pdus);
	cr_assert(n > 0);
	cr_assert_str_eq(out, "TargetName=" IH_TARGET);
	n = sendtargets_wire(&c, "All", out, sizeof(out), &pdus);
	cr_assert_eq(n, 0, "SendTargets=All is for discovery sessions");
	ih_logout(&c);
}

Test(iscsi_text, unknown_keys_and_bad_continuation, .fini = teardown)
{
	struct ih_conn c;
	struct ih_login_opts o = {0};
	uint8_t h[48] = {0}, rh[48], *d;
	uint32_t dl;
	const char kv[] = "X-foo=1\0MaxBurstLength=512";

	ih_start(&T, NULL, NULL);
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), 0);
	h[0] = 0x40 | ISCSI_OP_TEXT_REQ;
	h[1] = 0x80;
	iscsi_put32(h + 16, 0x10);
	iscsi_put32(h + 20, ISCSI_RSVD_TAG);
	cr_assert_eq(ih_send(&c, h, kv, sizeof(kv)), 0);
	cr_assert_eq(ih_recv(&c, rh, &d, &dl), 0);
	cr_assert_str_eq(ih_key((char *)d, dl, "X-foo"), "NotUnderstood");
	cr_assert_str_eq(ih_key((char *)d, dl, "MaxBurstLength"), "Reject");
	free(d);
	/* a TTT we never handed out */
	iscsi_put32(h + 20, 0x12345);
	cr_assert_eq(ih_send(&c, h, NULL, 0), 0);
	cr_assert_eq(ih_recv(&c, rh, NULL, NULL), 0);
	cr_assert_eq(bhs_opcode(rh), ISCSI_OP_REJECT);
	ih_logout(&c);
}
