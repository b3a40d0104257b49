/* Login phase against the running target: normal and discovery sessions, target, ACL and portal
 * checks, CHAP one-way and mutual, malformed and duplicated keys, versions, TSIH rules and
 * session reinstatement. */
#include "iscsi_harness.h"

static struct ih_target T;

static void teardown(void)
{
	ih_stop(&T);
}

Test(iscsi_login, normal_session, .fini = teardown)
{
	struct ih_conn c;

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	cr_assert_neq(c.tsih, 0, "final response carries the TSIH");
	/* what SCST's defaults give against a libiscsi-like offer */
	cr_assert_str_eq(ih_rkey(&c, "InitialR2T"), "No");
	cr_assert_str_eq(ih_rkey(&c, "ImmediateData"), "Yes");
	cr_assert_str_eq(ih_rkey(&c, "MaxBurstLength"), "262144");
	cr_assert_str_eq(ih_rkey(&c, "MaxOutstandingR2T"), "4");
	cr_assert_str_eq(ih_rkey(&c, "ErrorRecoveryLevel"), "0");
	cr_assert_eq(c.their_mrdsl, 1048576);
	cr_assert(ih_ping(&c));
	ih_logout(&c);
}

Test(iscsi_login, first_response_has_tpgt, .fini = teardown)
{
	struct ih_conn c;
	char text[512];
	uint8_t rsp[48];
	size_t tl;

	ih_start(&T, NULL, "tpgt 7\nTargetAlias disk-seven");
	ih_init(&c, T.port);
	tl = ih_keys(text,
		     "InitiatorName=" IH_INITIATOR "|TargetName=" IH_TARGET "|AuthMethod=None");
	cr_assert_eq(ih_login_pdu(&c, 0, 1, true, text, tl, rsp), 0);
	cr_assert_eq(rsp[36], 0);
	cr_assert_str_eq(ih_rkey(&c, "TargetPortalGroupTag"), "7");
	cr_assert_str_eq(ih_rkey(&c, "TargetAlias"), "disk-seven");
	cr_assert_str_eq(ih_rkey(&c, "AuthMethod"), "None");
	cr_assert_eq(rsp[1], 0x81, "T=1 CSG=0 NSG=1");
	ih_close(&c);
}

/* SCST writes the alias as `alias`: it is the TargetAlias sent at login. */
Test(iscsi_login, scst_alias_is_the_target_alias, .fini = teardown)
{
	struct ih_conn c;
	char text[512];
	uint8_t rsp[48];
	size_t tl;

	ih_start(&T, NULL, "alias \"lab disk\"");
	ih_init(&c, T.port);
	tl = ih_keys(text,
		     "InitiatorName=" IH_INITIATOR "|TargetName=" IH_TARGET "|AuthMethod=None");
	cr_assert_eq(ih_login_pdu(&c, 0, 1, true, text, tl, rsp), 0);
	cr_assert_eq(rsp[36], 0);
	cr_assert_str_eq(ih_rkey(&c, "TargetAlias"), "lab disk");
	ih_close(&c);
}

Test(iscsi_login, discovery_session, .fini = teardown)
{
	struct ih_conn c;
	struct ih_login_opts o = {0};

	ih_start(&T, NULL, NULL);
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), 0);
	cr_assert_str_eq(ih_rkey(&c, "MaxBurstLength"), "Irrelevant");
	ih_logout(&c);
}

Test(iscsi_login, unknown_target_and_missing_names, .fini = teardown)
{
	struct ih_conn c;
	struct ih_login_opts o = {.tname = "iqn.2026-12.org.utgt:nope"};
	char text[512];
	uint8_t rsp[48];
	size_t tl;

	ih_start(&T, NULL, NULL);
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), ISCSI_LOGIN_NOT_FOUND);
	cr_assert(ih_closed(&c), "the target closes after a failed login");
	ih_close(&c);

	ih_init(&c, T.port);
	tl = ih_keys(text, "TargetName=" IH_TARGET "|AuthMethod=None");
	cr_assert_eq(ih_login_pdu(&c, 0, 1, true, text, tl, rsp), 0);
	cr_assert_eq(iscsi_get16(rsp + 36), ISCSI_LOGIN_MISSING_PARAM, "no InitiatorName");
	ih_close(&c);

	ih_init(&c, T.port);
	tl = ih_keys(text, "InitiatorName=" IH_INITIATOR "|AuthMethod=None");
	cr_assert_eq(ih_login_pdu(&c, 0, 1, true, text, tl, rsp), 0);
	cr_assert_eq(iscsi_get16(rsp + 36), ISCSI_LOGIN_MISSING_PARAM, "normal without TargetName");
	ih_close(&c);
}

Test(iscsi_login, acl_without_luns_is_authorization_failure, .fini = teardown)
{
	struct ih_conn c;
	struct ih_login_opts o = {.tname = IH_TARGET, .iname = "iqn.2026-12.org.utgt:outsider"};
	char text[2048];

	snprintf(
	    text, sizeof(text),
	    "HANDLER ramdisk {\n DEVICE rd0 {\n  size_mb 8\n }\n}\n"
	    "TARGET_DRIVER iscsi {\n listen 127.0.0.1:0\n"
	    " TARGET " IH_TARGET " {\n  enabled 1\n"
	    "  GROUP insiders {\n   INITIATOR iqn.2026-12.org.utgt:insider*\n   LUN 0 rd0\n  }\n"
	    " }\n}\n");
	ih_start_conf(&T, text);
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), ISCSI_LOGIN_AUTHZ_FAILED);
	ih_close(&c);
	o.iname = "iqn.2026-12.org.utgt:insider-1";
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), 0);
	ih_logout(&c);
}

Test(iscsi_login, allowed_portal, .fini = teardown)
{
	struct ih_conn c;
	struct ih_login_opts o = {.tname = IH_TARGET};

	ih_start(&T, NULL, "allowed_portal 10.9.9.9");
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), ISCSI_LOGIN_NOT_FOUND);
	ih_close(&c);
	ih_stop(&T);
	ih_start(&T, NULL, "allowed_portal 127.0.0.*");
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), 0);
	ih_logout(&c);
}

Test(iscsi_login, chap_one_way, .fini = teardown)
{
	struct ih_conn c;
	struct ih_login_opts o = {
	    .tname = IH_TARGET, .chap_user = "joe", .chap_secret = "joesecret1234"};

	ih_start(&T, NULL, "IncomingUser joe joesecret1234\nIncomingUser ann annsecret5678");
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), 0);
	ih_logout(&c);

	o.chap_secret = "wrongsecret!!";
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), ISCSI_LOGIN_AUTH_FAILED, "wrong secret: 0201");
	ih_close(&c);

	o.chap_user = "ann";
	o.chap_secret = "joesecret1234";
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), ISCSI_LOGIN_AUTH_FAILED, "another user's secret");
	ih_close(&c);

	o.chap_user = NULL; /* AuthMethod=None offered only */
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), ISCSI_LOGIN_AUTH_FAILED);
	ih_close(&c);
}

Test(iscsi_login, chap_skipping_security_stage_fails, .fini = teardown)
{
	struct ih_conn c;
	char text[512];
	uint8_t rsp[48];
	size_t tl;

	ih_start(&T, NULL, "IncomingUser joe joesecret1234");
	ih_init(&c, T.port);
	tl = ih_keys(text, "InitiatorName=" IH_INITIATOR "|TargetName=" IH_TARGET);
	cr_assert_eq(ih_login_pdu(&c, 1, 3, true, text, tl, rsp), 0);
	cr_assert_eq(iscsi_get16(rsp + 36), ISCSI_LOGIN_AUTH_FAILED);
	ih_close(&c);
}

Test(iscsi_login, chap_mutual, .fini = teardown)
{
	struct ih_conn c;
	struct ih_login_opts o = {.tname = IH_TARGET,
				  .chap_user = "joe",
				  .chap_secret = "joesecret1234",
				  .mutual_user = "tgtuser",
				  .mutual_secret = "targetsecret99"};

	ih_start(&T, NULL, "IncomingUser joe joesecret1234\nOutgoingUser tgtuser targetsecret99");
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), 0);
	ih_logout(&c);
}

Test(iscsi_login, chap_discovery_at_driver_level, .fini = teardown)
{
	struct ih_conn c;
	struct ih_login_opts o = {0};

	ih_start(&T, "IncomingUser disco discosecret12", NULL);
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), ISCSI_LOGIN_AUTH_FAILED, "discovery needs CHAP");
	ih_close(&c);
	o.chap_user = "disco";
	o.chap_secret = "discosecret12";
	ih_init(&c, T.port);
	cr_assert_eq(ih_login(&c, &o), 0);
	ih_logout(&c);
	/* the target itself has no IncomingUser: normal sessions need none */
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	ih_logout(&c);
}

Test(iscsi_login, duplicate_and_garbage_keys, .fini = teardown)
{
	struct ih_conn c;
	char text[512];
	uint8_t rsp[48];
	size_t tl;

	ih_start(&T, NULL, NULL);
	ih_init(&c, T.port);
	tl = ih_keys(text, "InitiatorName=" IH_INITIATOR "|TargetName=" IH_TARGET
			   "|AuthMethod=None|AuthMethod=None");
	cr_assert_eq(ih_login_pdu(&c, 0, 1, true, text, tl, rsp), 0);
	cr_assert_eq(iscsi_get16(rsp + 36), ISCSI_LOGIN_INITIATOR_ERROR);
	cr_assert(ih_closed(&c));
	ih_close(&c);

	ih_init(&c, T.port);
	memcpy(text, "InitiatorName\0garbage\0\xff\xfe", 24);
	cr_assert_eq(ih_login_pdu(&c, 0, 1, true, text, 24, rsp), 0);
	cr_assert_eq(iscsi_get16(rsp + 36), ISCSI_LOGIN_INITIATOR_ERROR);
	ih_close(&c);

	/* the target still serves others */
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	ih_logout(&c);
}

Test(iscsi_login, unsupported_version_and_bad_stages, .fini = teardown)
{
	struct ih_conn c;
	uint8_t h[48] = {0}, rh[48];
	char text[256];
	size_t tl;

	ih_start(&T, NULL, NULL);
	ih_init(&c, T.port);
	tl = ih_keys(text, "InitiatorName=" IH_INITIATOR "|TargetName=" IH_TARGET);
	h[0] = 0x43;
	h[1] = 0x81;
	h[2] = 2; /* Version-max */
	h[3] = 1; /* Version-min */
	cr_assert_eq(ih_send(&c, h, text, (uint32_t)tl), 0);
	cr_assert_eq(ih_recv(&c, rh, NULL, NULL), 0);
	cr_assert_eq(iscsi_get16(rh + 36), ISCSI_LOGIN_UNSUPPORTED_VERSION);
	ih_close(&c);

	ih_init(&c, T.port);
	memset(h, 0, 48);
	h[0] = 0x43;
	h[1] = 0x80 | 0x40 | 0x01; /* T and C */
	cr_assert_eq(ih_send(&c, h, text, (uint32_t)tl), 0);
	cr_assert_eq(ih_recv(&c, rh, NULL, NULL), 0);
	cr_assert_eq(iscsi_get16(rh + 36), ISCSI_LOGIN_INITIATOR_ERROR);
	ih_close(&c);
}

Test(iscsi_login, non_login_pdu_before_login_closes, .fini = teardown)
{
	struct ih_conn c;
	uint8_t h[48] = {0};

	ih_start(&T, NULL, NULL);
	ih_init(&c, T.port);
	h[0] = ISCSI_OP_SCSI_CMD;
	h[1] = 0x80;
	cr_assert_eq(ih_send(&c, h, NULL, 0), 0);
	cr_assert(ih_closed(&c));
	ih_close(&c);
}

Test(iscsi_login, unknown_tsih, .fini = teardown)
{
	struct ih_conn c;
	struct ih_login_opts o = {.tname = IH_TARGET};

	ih_start(&T, NULL, NULL);
	ih_init(&c, T.port);
	c.tsih = 0x4242;
	cr_assert_eq(ih_login(&c, &o), ISCSI_LOGIN_NO_SESSION);
	ih_close(&c);
}

Test(iscsi_login, second_connection_is_refused, .fini = teardown)
{
	struct ih_conn a, b;
	struct ih_login_opts o = {.tname = IH_TARGET};

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&a, T.port), 0);
	ih_init(&b, T.port);
	memcpy(b.isid, a.isid, 6);
	b.tsih = a.tsih;
	o.sec_extra = NULL;
	cr_assert_eq(ih_login_cid(&b, &o, 1), ISCSI_LOGIN_TOO_MANY_CONNS, "MaxConnections is 1");
	ih_close(&b);
	cr_assert(ih_ping(&a));
	/* the same CID again: connection reinstatement ends the old connection (ERL 0) */
	ih_init(&b, T.port);
	memcpy(b.isid, a.isid, 6);
	b.tsih = a.tsih;
	cr_assert_eq(ih_login_cid(&b, &o, 0), ISCSI_LOGIN_NO_SESSION);
	ih_close(&b);
	cr_assert(ih_closed(&a));
	ih_close(&a);
	cr_assert_eq(ih_login_normal(&b, T.port), 0, "a new session is welcome");
	ih_logout(&b);
}

Test(iscsi_login, session_reinstatement, .fini = teardown)
{
	struct ih_conn a, b;
	struct ih_login_opts o = {.tname = IH_TARGET};
	uint8_t buf[512];
	struct ih_result r;

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&a, T.port), 0);
	ih_clear_ua(&a, 0);
	memset(buf, 0xab, sizeof(buf));
	r = ih_rw10(&a, true, 9, 1, buf, NULL);
	cr_assert_eq(r.status, 0);
	/* same ISID, TSIH 0: the old session goes, the new one is a fresh session */
	ih_init(&b, T.port);
	memcpy(b.isid, a.isid, 6);
	cr_assert_eq(ih_login(&b, &o), 0);
	cr_assert_neq(b.tsih, a.tsih);
	cr_assert(ih_closed(&a), "the old connection was closed");
	ih_close(&a);
	memset(buf, 0, sizeof(buf));
	ih_clear_ua(&b, 0);
	r = ih_rw10(&b, false, 9, 1, buf, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert_eq(buf[0], 0xab);
	cr_assert_eq(buf[511], 0xab);
	ih_logout(&b);
}

Test(iscsi_login, text_split_with_continue_bit, .fini = teardown)
{
	struct ih_conn c;
	char text[512];
	uint8_t rsp[48];
	size_t tl;

	ih_start(&T, NULL, NULL);
	ih_init(&c, T.port);
	/* first half with C=1: the target answers empty and waits for the rest */
	tl = ih_keys(text, "InitiatorName=" IH_INITIATOR "|TargetNa");
	{
		uint8_t h[48] = {0};
		uint8_t *d;
		uint32_t dl;

		h[0] = 0x43;
		h[1] = 0x40; /* C, CSG 0 */
		memcpy(h + 8, c.isid, 6);
		cr_assert_eq(ih_send(&c, h, text, (uint32_t)tl - 1), 0);
		cr_assert_eq(ih_recv(&c, rsp, &d, &dl), 0);
		cr_assert_eq(iscsi_get16(rsp + 36), 0);
		cr_assert_eq(dl, 0);
		free(d);
	}
	tl = ih_keys(text, "me=" IH_TARGET "|AuthMethod=None");
	cr_assert_eq(ih_login_pdu(&c, 0, 1, true, text, tl, rsp), 0);
	cr_assert_eq(iscsi_get16(rsp + 36), 0);
	cr_assert_str_eq(ih_rkey(&c, "AuthMethod"), "None");
	ih_close(&c);
}

Test(iscsi_login, max_sessions, .fini = teardown)
{
	struct ih_conn a, b;

	ih_start(&T, NULL, "MaxSessions 1");
	cr_assert_eq(ih_login_normal(&a, T.port), 0);
	cr_assert_eq(ih_login_normal(&b, T.port), ISCSI_LOGIN_OUT_OF_RESOURCES);
	ih_close(&b);
	ih_logout(&a);
}
