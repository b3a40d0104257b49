/* iSCSI text keys: parsing, and the negotiation rules of RFC 7143 section 13 key by key. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "transports/iscsi/iscsi_params.h"
#include "transports/iscsi/iscsi_pdu.h"

/* Build "k=v\0k=v\0..." from a string where '|' separates pairs. */
static size_t mk(char *buf, const char *spec)
{
	size_t n = strlen(spec);

	memcpy(buf, spec, n + 1);
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '|')
			buf[i] = '\0';
	buf[n] = '\0';
	return n + 1;
}

/* Value of key in a response text, or NULL. */
static const char *rsp(const struct iscsit_text *t, const char *key)
{
	size_t kl = strlen(key);

	for (size_t off = 0; off < t->len; off += strlen(t->p + off) + 1)
		if (!strncmp(t->p + off, key, kl) && t->p[off + kl] == '=')
			return t->p + off + kl + 1;
	return NULL;
}

static int count_keys(const struct iscsit_text *t)
{
	int n = 0;

	for (size_t off = 0; off < t->len; off += strlen(t->p + off) + 1)
		n++;
	return n;
}

struct negfix {
	struct iscsit_tgt_params tp;
	struct iscsit_sess_params res;
	struct iscsit_neg n;
	struct iscsit_text out;
	char buf[4096];
	struct iscsit_kv kv[64];
	unsigned nkv, sec[64], nsec;
};

static void fix_free(struct negfix *f)
{
	iscsit_text_free(&f->out);
}

/* Fixtures are declared with NEGFIX so their text buffer is freed when the test ends. */
#define NEGFIX(name) struct negfix name __attribute__((cleanup(fix_free))) = {0}

static void fix_init(struct negfix *f)
{
	iscsit_text_free(&f->out);
	memset(f, 0, sizeof(*f));
	iscsit_tgt_params_default(&f->tp);
	iscsit_sess_params_rfc_default(&f->res);
	iscsit_neg_init(&f->n, &f->tp, &f->res, true);
}

static uint16_t run(struct negfix *f, const char *spec, unsigned stage)
{
	size_t len = mk(f->buf, spec);

	cr_assert_eq(iscsit_kv_parse(f->buf, len, f->kv, 64, &f->nkv), ISCSIT_KV_OK);
	iscsit_text_free(&f->out);
	return iscsit_neg_login(&f->n, f->kv, f->nkv, stage, &f->out, f->sec, &f->nsec);
}

/* ---------------------------------------------------------------- parsing */

Test(iscsi_params, kv_parse_pairs_and_missing_last_nul)
{
	char buf[64];
	struct iscsit_kv kv[8];
	unsigned n;
	const char s[] = "A=1\0B=two\0C=";

	memcpy(buf, s, sizeof(s)); /* "C=" is last and has its NUL from the literal */
	cr_assert_eq(iscsit_kv_parse(buf, sizeof(s) - 1, kv, 8, &n), ISCSIT_KV_OK);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(kv[0].key, "A");
	cr_assert_str_eq(kv[0].val, "1");
	cr_assert_str_eq(kv[1].val, "two");
	cr_assert_str_eq(kv[2].key, "C");
	cr_assert_str_eq(kv[2].val, "");
}

Test(iscsi_params, kv_parse_value_may_contain_equals)
{
	char buf[64];
	struct iscsit_kv kv[4];
	unsigned n;
	size_t len = mk(buf, "TargetAddress=a=b");

	cr_assert_eq(iscsit_kv_parse(buf, len, kv, 4, &n), ISCSIT_KV_OK);
	cr_assert_str_eq(kv[0].val, "a=b");
}

Test(iscsi_params, kv_parse_errors)
{
	char buf[9000];
	struct iscsit_kv kv[2];
	unsigned n;
	size_t len;

	len = mk(buf, "NoEquals");
	cr_assert_eq(iscsit_kv_parse(buf, len, kv, 2, &n), ISCSIT_KV_SYNTAX);
	len = mk(buf, "=value");
	cr_assert_eq(iscsit_kv_parse(buf, len, kv, 2, &n), ISCSIT_KV_SYNTAX);
	len = mk(buf, "Bad Key=1");
	cr_assert_eq(iscsit_kv_parse(buf, len, kv, 2, &n), ISCSIT_KV_SYNTAX);
	len = mk(buf, "A=1|B=2|C=3");
	cr_assert_eq(iscsit_kv_parse(buf, len, kv, 2, &n), ISCSIT_KV_TOO_MANY);
	memset(buf, 'k', 64);
	buf[64] = '=';
	buf[65] = 'v';
	buf[66] = '\0';
	cr_assert_eq(iscsit_kv_parse(buf, 67, kv, 2, &n), ISCSIT_KV_SYNTAX, "64-char key");
	memcpy(buf, "K=", 2);
	memset(buf + 2, 'v', 8193);
	buf[8195] = '\0';
	cr_assert_eq(iscsit_kv_parse(buf, 8196, kv, 2, &n), ISCSIT_KV_TOO_LONG);
}

Test(iscsi_params, numbers)
{
	uint64_t v;

	cr_assert(iscsit_parse_num("8192", 16777215, &v) && v == 8192);
	cr_assert(iscsit_parse_num("0x2000", 16777215, &v) && v == 8192);
	cr_assert(!iscsit_parse_num("16777216", 16777215, &v));
	cr_assert(!iscsit_parse_num("", 10, &v));
	cr_assert(!iscsit_parse_num("0x", 10, &v));
	cr_assert(!iscsit_parse_num("-1", 10, &v));
	cr_assert(!iscsit_parse_num("12a", 100, &v));
	cr_assert(!iscsit_parse_num("99999999999999999999999", UINT64_MAX, &v));
}

Test(iscsi_params, key_table)
{
	cr_assert_eq(iscsit_key_lookup("MaxBurstLength"), IK_MaxBurstLength);
	cr_assert_eq(iscsit_key_lookup("maxburstlength"), IK_UNKNOWN, "keys are case-sensitive");
	cr_assert_eq(iscsit_key_lookup("X-com.example.foo"), IK_UNKNOWN);
	cr_assert(iscsit_key_is_security(IK_CHAP_R));
	cr_assert(iscsit_key_is_security(IK_AuthMethod));
	cr_assert(!iscsit_key_is_security(IK_HeaderDigest));
	cr_assert_str_eq(iscsit_key_name(IK_DataDigest), "DataDigest");
}

/* ---------------------------------------------------------------- negotiation rules */

Test(iscsi_params, boolean_or_and)
{
	NEGFIX(f);

	fix_init(&f);
	/* InitialR2T is OR: ours No, theirs Yes -> Yes; ImmediateData AND: ours Yes, theirs No ->
	 * No */
	cr_assert_eq(run(&f, "InitialR2T=Yes|ImmediateData=No", 1), 0);
	cr_assert_str_eq(rsp(&f.out, "InitialR2T"), "Yes");
	cr_assert_str_eq(rsp(&f.out, "ImmediateData"), "No");
	cr_assert(f.res.initial_r2t);
	cr_assert(!f.res.immediate_data);

	fix_init(&f);
	cr_assert_eq(
	    run(&f, "InitialR2T=No|ImmediateData=Yes|DataPDUInOrder=No|DataSequenceInOrder=No", 1),
	    0);
	cr_assert_str_eq(rsp(&f.out, "InitialR2T"), "No");
	cr_assert_str_eq(rsp(&f.out, "ImmediateData"), "Yes");
	/* ours are Yes (OR) */
	cr_assert_str_eq(rsp(&f.out, "DataPDUInOrder"), "Yes");
	cr_assert_str_eq(rsp(&f.out, "DataSequenceInOrder"), "Yes");
	cr_assert(!f.res.initial_r2t);

	fix_init(&f);
	f.tp.data_pdu_inorder = false;
	cr_assert_eq(run(&f, "DataPDUInOrder=No", 1), 0);
	cr_assert_str_eq(rsp(&f.out, "DataPDUInOrder"), "No");
	cr_assert(!f.res.data_pdu_inorder);
}

Test(iscsi_params, numeric_min_max)
{
	NEGFIX(f);

	fix_init(&f);
	cr_assert_eq(run(&f,
			 "MaxBurstLength=16776192|FirstBurstLength=262144|MaxOutstandingR2T=1|"
			 "DefaultTime2Wait=0|DefaultTime2Retain=0|ErrorRecoveryLevel=2|"
			 "MaxConnections=8",
			 1),
		     0);
	cr_assert_str_eq(rsp(&f.out, "MaxBurstLength"), "1048576"); /* min */
	cr_assert_str_eq(rsp(&f.out, "FirstBurstLength"), "65536"); /* min */
	cr_assert_str_eq(rsp(&f.out, "MaxOutstandingR2T"), "1");    /* min */
	cr_assert_str_eq(rsp(&f.out, "DefaultTime2Wait"), "2");	    /* max */
	cr_assert_str_eq(rsp(&f.out, "DefaultTime2Retain"), "0");
	cr_assert_str_eq(rsp(&f.out, "ErrorRecoveryLevel"), "0"); /* we do ERL 0 only */
	cr_assert_str_eq(rsp(&f.out, "MaxConnections"), "1");
	cr_assert_eq(f.res.max_burst, 1048576);
	cr_assert_eq(f.res.first_burst, 65536);
	cr_assert_eq(f.res.max_outstanding_r2t, 1);
	cr_assert_eq(f.res.erl, 0);
}

Test(iscsi_params, reject_bad_values)
{
	NEGFIX(f);

	fix_init(&f);
	cr_assert_eq(run(&f, "InitialR2T=yes|MaxBurstLength=100|FirstBurstLength=abc", 1), 0);
	cr_assert_str_eq(rsp(&f.out, "InitialR2T"), "Reject", "booleans are exactly Yes/No");
	cr_assert_str_eq(rsp(&f.out, "MaxBurstLength"), "Reject", "below 512");
	cr_assert_str_eq(rsp(&f.out, "FirstBurstLength"), "Reject");
	/* rejected keys keep the RFC defaults */
	cr_assert(f.res.initial_r2t);
	cr_assert_eq(f.res.max_burst, 262144);
}

/* An out-of-range MaxRecvDataSegmentLength fails the login (it was
 * answered "Reject" and then our own declaration of the same key, which initiators read as
 * the answer, so the bad value went unnoticed). */
Test(iscsi_params, mrdsl_out_of_range_fails_login)
{
	static const char *const bad[] = {"0", "1", "-1", "511", "16777216",
					  "18446744073709551617", "abc", ""};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char spec[80];
		NEGFIX(f);

		fix_init(&f);
		snprintf(spec, sizeof(spec), "MaxRecvDataSegmentLength=%s", bad[i]);
		cr_assert_eq(run(&f, spec, 1), ISCSI_LOGIN_INITIATOR_ERROR, "'%s'", bad[i]);
	}
	for (unsigned i = 0; i < 2; i++) {
		NEGFIX(f);

		fix_init(&f);
		cr_assert_eq(run(&f, i ? "MaxRecvDataSegmentLength=16777215"
				       : "MaxRecvDataSegmentLength=512",
				 1),
			     0);
		cr_assert_eq(f.res.max_xmit_dsl, i ? f.tp.max_xmit_dsl : 512);
	}
}

Test(iscsi_params, not_understood_and_private_keys)
{
	NEGFIX(f);

	fix_init(&f);
	cr_assert_eq(run(&f, "X-com.example.Foo=1|X#NodeArchitecture=Linux|Frobnicate=9", 1), 0);
	cr_assert_str_eq(rsp(&f.out, "X-com.example.Foo"), "NotUnderstood");
	cr_assert_str_eq(rsp(&f.out, "X#NodeArchitecture"), "NotUnderstood");
	cr_assert_str_eq(rsp(&f.out, "Frobnicate"), "NotUnderstood");
}

Test(iscsi_params, duplicate_key_is_an_initiator_error)
{
	NEGFIX(f);

	fix_init(&f);
	cr_assert_eq(run(&f, "MaxBurstLength=65536|MaxBurstLength=65536", 1),
		     ISCSI_LOGIN_INITIATOR_ERROR);
	/* also across two PDUs of the same login */
	fix_init(&f);
	cr_assert_eq(run(&f, "HeaderDigest=None", 0), 0);
	cr_assert_eq(run(&f, "HeaderDigest=None", 1), ISCSI_LOGIN_INITIATOR_ERROR);
}

Test(iscsi_params, digest_lists)
{
	NEGFIX(f);

	fix_init(&f);
	cr_assert_eq(run(&f, "HeaderDigest=CRC32C,None|DataDigest=None,CRC32C", 1), 0);
	cr_assert_str_eq(rsp(&f.out, "HeaderDigest"), "CRC32C", "first acceptable of theirs");
	cr_assert_str_eq(rsp(&f.out, "DataDigest"), "None");
	cr_assert(f.res.header_digest);
	cr_assert(!f.res.data_digest);

	fix_init(&f);
	f.tp.hdigest_crc = false; /* target configured HeaderDigest None */
	cr_assert_eq(run(&f, "HeaderDigest=CRC32C|DataDigest=MD5,Bogus", 1), 0);
	cr_assert_str_eq(rsp(&f.out, "HeaderDigest"), "Reject");
	cr_assert_str_eq(rsp(&f.out, "DataDigest"), "Reject");
	cr_assert(!f.res.header_digest);
}

Test(iscsi_params, auth_method)
{
	NEGFIX(f);

	fix_init(&f);
	f.n.auth_chap_allowed = true;
	f.n.auth_none_allowed = false;
	cr_assert_eq(run(&f, "AuthMethod=None,CHAP", 0), 0);
	cr_assert_str_eq(rsp(&f.out, "AuthMethod"), "CHAP");
	cr_assert_str_eq(f.n.auth_method, "CHAP");

	fix_init(&f);
	f.n.auth_chap_allowed = true;
	f.n.auth_none_allowed = false;
	cr_assert_eq(run(&f, "AuthMethod=None", 0), ISCSI_LOGIN_AUTH_FAILED);

	fix_init(&f);
	cr_assert_eq(run(&f, "AuthMethod=SRP,None", 0), 0);
	cr_assert_str_eq(rsp(&f.out, "AuthMethod"), "None");

	/* AuthMethod belongs to the security stage */
	fix_init(&f);
	cr_assert_eq(run(&f, "AuthMethod=None", 1), ISCSI_LOGIN_INITIATOR_ERROR);
}

Test(iscsi_params, security_keys_handed_to_caller)
{
	NEGFIX(f);

	fix_init(&f);
	cr_assert_eq(run(&f, "CHAP_A=5|CHAP_N=joe|InitiatorName=iqn.x", 0), 0);
	cr_assert_eq(f.nsec, 2);
	cr_assert_str_eq(f.kv[f.sec[0]].key, "CHAP_A");
	cr_assert_str_eq(f.kv[f.sec[1]].key, "CHAP_N");
	cr_assert_null(rsp(&f.out, "CHAP_A"));
}

Test(iscsi_params, declarations)
{
	NEGFIX(f);

	fix_init(&f);
	cr_assert_eq(run(&f,
			 "InitiatorName=iqn.2000-01.x:y|InitiatorAlias=host1|"
			 "TargetName=iqn.2026-12.t:z|MaxRecvDataSegmentLength=65536",
			 1),
		     0);
	cr_assert_str_eq(f.res.initiator_name, "iqn.2000-01.x:y");
	cr_assert_str_eq(f.res.initiator_alias, "host1");
	cr_assert_str_eq(f.res.target_name, "iqn.2026-12.t:z");
	cr_assert_eq(f.res.max_xmit_dsl, 65536);
	/* declarations get no answer; our own MaxRecvDataSegmentLength is declared once */
	cr_assert_null(rsp(&f.out, "InitiatorName"));
	cr_assert_str_eq(rsp(&f.out, "MaxRecvDataSegmentLength"), "1048576");
	cr_assert_eq(count_keys(&f.out), 1);

	/* what the initiator may receive is capped by MaxXmitDataSegmentLength */
	fix_init(&f);
	f.tp.max_xmit_dsl = 32768;
	cr_assert_eq(run(&f, "MaxRecvDataSegmentLength=262144", 1), 0);
	cr_assert_eq(f.res.max_xmit_dsl, 32768);

	/* keys only a target declares are refused from an initiator */
	fix_init(&f);
	cr_assert_eq(run(&f, "TargetPortalGroupTag=1|TargetAddress=1.2.3.4", 1), 0);
	cr_assert_str_eq(rsp(&f.out, "TargetPortalGroupTag"), "Reject");
	cr_assert_str_eq(rsp(&f.out, "TargetAddress"), "Reject");

	fix_init(&f);
	cr_assert_eq(run(&f, "InitiatorName=", 0), ISCSI_LOGIN_MISSING_PARAM);
}

Test(iscsi_params, session_type)
{
	NEGFIX(f);

	fix_init(&f);
	cr_assert_eq(run(&f,
			 "MaxBurstLength=4096|SessionType=Discovery|InitialR2T=No|"
			 "HeaderDigest=None",
			 1),
		     0);
	cr_assert(f.res.discovery);
	/* session-wide keys of normal sessions are Irrelevant in discovery (RFC 7143 13) */
	cr_assert_str_eq(rsp(&f.out, "MaxBurstLength"), "Irrelevant");
	cr_assert_str_eq(rsp(&f.out, "InitialR2T"), "Irrelevant");
	cr_assert_str_eq(rsp(&f.out, "HeaderDigest"), "None");

	fix_init(&f);
	cr_assert_eq(run(&f, "SessionType=Bogus", 0), ISCSI_LOGIN_SESSION_TYPE_UNSUP);
	fix_init(&f);
	cr_assert_eq(run(&f, "SessionType=Normal", 0), 0);
	cr_assert_eq(run(&f, "SessionType=Normal", 1), ISCSI_LOGIN_INITIATOR_ERROR);
}

Test(iscsi_params, leading_only_keys_on_other_connections)
{
	NEGFIX(f);

	fix_init(&f);
	iscsit_neg_init(&f.n, &f.tp, &f.res, false);
	cr_assert_eq(run(&f, "MaxBurstLength=65536|HeaderDigest=None", 1), 0);
	cr_assert_str_eq(rsp(&f.out, "MaxBurstLength"), "Irrelevant");
	cr_assert_str_eq(rsp(&f.out, "HeaderDigest"), "None");
}

Test(iscsi_params, markers_and_iser_keys)
{
	NEGFIX(f);

	fix_init(&f);
	cr_assert_eq(
	    run(&f,
		"OFMarker=Yes|IFMarker=No|OFMarkInt=2048~8192|RDMAExtensions=Yes|"
		"TargetRecvDataSegmentLength=8192|SendTargets=All|TaskReporting=FastAbort,RFC3720",
		1),
	    0);
	cr_assert_str_eq(rsp(&f.out, "OFMarker"), "No");
	cr_assert_str_eq(rsp(&f.out, "IFMarker"), "No");
	cr_assert_str_eq(rsp(&f.out, "OFMarkInt"), "Irrelevant");
	cr_assert_str_eq(rsp(&f.out, "RDMAExtensions"), "No");
	cr_assert_str_eq(rsp(&f.out, "TargetRecvDataSegmentLength"), "Irrelevant");
	cr_assert_str_eq(rsp(&f.out, "SendTargets"), "Irrelevant");
	cr_assert_str_eq(rsp(&f.out, "TaskReporting"), "RFC3720");
}

Test(iscsi_params, target_offers_what_defaults_would_break)
{
	NEGFIX(f);
	bool offered;

	fix_init(&f);
	f.tp.max_burst = 65536;	     /* below the RFC default 262144: must be offered */
	f.tp.first_burst = 16384;    /* below 65536 */
	f.tp.immediate_data = false; /* default Yes: must be offered */
	f.tp.initial_r2t = false;    /* default Yes already wins (OR): nothing to offer */
	cr_assert_eq(run(&f, "MaxRecvDataSegmentLength=8192", 1), 0);
	iscsit_text_free(&f.out);
	offered = iscsit_neg_offer(&f.n, &f.out);
	cr_assert(offered);
	cr_assert(iscsit_neg_pending(&f.n));
	cr_assert_str_eq(rsp(&f.out, "MaxBurstLength"), "65536");
	cr_assert_str_eq(rsp(&f.out, "FirstBurstLength"), "16384");
	cr_assert_str_eq(rsp(&f.out, "ImmediateData"), "No");
	cr_assert_null(rsp(&f.out, "InitialR2T"));
	cr_assert_str_eq(rsp(&f.out, "DefaultTime2Retain"), "0", "ERL 0 keeps no state");
	cr_assert_null(rsp(&f.out, "MaxRecvDataSegmentLength"), "declared once only");

	/* the initiator answers; an answer the min function forbids is an error */
	cr_assert_eq(run(&f,
			 "MaxBurstLength=32768|FirstBurstLength=16384|ImmediateData=No|"
			 "DefaultTime2Retain=0",
			 1),
		     0);
	cr_assert(!iscsit_neg_pending(&f.n));
	cr_assert_eq(f.res.max_burst, 32768);
	cr_assert_eq(f.res.first_burst, 16384);
	cr_assert(!f.res.immediate_data);
	cr_assert_eq(count_keys(&f.out), 0, "answers are not answered");

	fix_init(&f);
	f.tp.max_burst = 65536;
	iscsit_neg_offer(&f.n, &f.out);
	cr_assert_eq(run(&f, "MaxBurstLength=131072", 1), ISCSI_LOGIN_INITIATOR_ERROR);
}

Test(iscsi_params, finish_clamps_first_burst)
{
	NEGFIX(f);

	fix_init(&f);
	f.tp.max_burst = 8192;
	f.tp.first_burst = 65536;
	cr_assert_eq(run(&f, "MaxBurstLength=16384|FirstBurstLength=65536", 1), 0);
	/* the answer itself keeps FirstBurstLength <= MaxBurstLength (RFC 7143 13.14;
	 * it said 65536 next to 8192, so the initiator would send 65536 unsolicited) */
	cr_assert_str_eq(rsp(&f.out, "MaxBurstLength"), "8192");
	cr_assert_str_eq(rsp(&f.out, "FirstBurstLength"), "8192");
	iscsit_neg_finish(&f.n);
	cr_assert_eq(f.res.max_burst, 8192);
	cr_assert_eq(f.res.first_burst, 8192);
	cr_assert_eq(f.res.max_recv_dsl, f.tp.max_recv_dsl);
}

Test(iscsi_params, first_burst_answer_bounded_by_max_burst)
{
	/* the initiator proposes MaxBurstLength below FirstBurstLength, FirstBurst first */
	{
		NEGFIX(f);

		fix_init(&f);
		cr_assert_eq(run(&f, "FirstBurstLength=65536|MaxBurstLength=16384", 1), 0);
		cr_assert_str_eq(rsp(&f.out, "MaxBurstLength"), "16384");
		cr_assert_str_eq(rsp(&f.out, "FirstBurstLength"), "16384");
		cr_assert_eq(f.res.first_burst, 16384);
	}
	/* MaxBurstLength agreed in an earlier request */
	{
		NEGFIX(f);

		fix_init(&f);
		cr_assert_eq(run(&f, "MaxBurstLength=4096", 1), 0);
		cr_assert_eq(run(&f, "FirstBurstLength=65536", 1), 0);
		cr_assert_str_eq(rsp(&f.out, "FirstBurstLength"), "4096");
	}
	/* FirstBurstLength alone: bounded by our MaxBurstLength */
	{
		NEGFIX(f);

		fix_init(&f);
		f.tp.max_burst = 32768;
		cr_assert_eq(run(&f, "FirstBurstLength=65536", 1), 0);
		cr_assert_str_eq(rsp(&f.out, "FirstBurstLength"), "32768");
	}
}

static int nerr;
static void count_emit(struct diag *d, bool error, int line, const char *msg)
{
	(void)d;
	(void)line;
	(void)msg;
	if (error)
		nerr++;
}

Test(iscsi_params, scst_attributes)
{
	struct iscsit_tgt_params p;
	struct diag d = {.file = "t", .emit = count_emit};
	struct utgt_attr a[] = {
	    {"InitialR2T", "Yes", 1},	    {"ImmediateData", "no", 2},
	    {"MaxBurstLength", "65536", 3}, {"FirstBurstLength", "4096", 4},
	    {"HeaderDigest", "CRC32C", 5},  {"DataDigest", "CRC32C,None", 6},
	    {"QueuedCommands", "64", 7},    {"MaxRecvDataSegmentLength", "262144", 8},
	    {"NopInInterval", "0", 9},	    {"SomethingElse", "ignored", 10},
	};

	nerr = 0;
	iscsit_tgt_params_default(&p);
	cr_assert_eq(p.max_burst, 1048576, "SCST default");
	cr_assert_eq(p.first_burst, 65536);
	cr_assert_eq(p.max_outstanding_r2t, 32);
	cr_assert_eq(p.queued_cmds, 32);
	cr_assert(!p.initial_r2t && p.immediate_data);
	iscsit_tgt_params_from_attrs(&p, a, sizeof(a) / sizeof(a[0]), &d);
	cr_assert_eq(nerr, 0);
	cr_assert(p.initial_r2t);
	cr_assert(!p.immediate_data);
	cr_assert_eq(p.max_burst, 65536);
	cr_assert_eq(p.first_burst, 4096);
	cr_assert(p.hdigest_crc && !p.hdigest_none);
	cr_assert(p.ddigest_crc && p.ddigest_none);
	cr_assert_eq(p.queued_cmds, 64);
	cr_assert_eq(p.max_recv_dsl, 262144);
	cr_assert_eq(p.nop_in_interval, 0);
}

Test(iscsi_params, scst_attribute_errors)
{
	struct iscsit_tgt_params p;
	struct diag d = {.file = "t", .emit = count_emit};
	struct utgt_attr a[] = {
	    {"InitialR2T", "maybe", 1}, {"MaxBurstLength", "100", 2},
	    {"HeaderDigest", "MD5", 3}, {"ErrorRecoveryLevel", "1", 4},
	    {"QueuedCommands", "0", 5}, {"MaxOutstandingR2T", "x", 6},
	};

	nerr = 0;
	iscsit_tgt_params_default(&p);
	iscsit_tgt_params_from_attrs(&p, a, sizeof(a) / sizeof(a[0]), &d);
	cr_assert_eq(nerr, 6);
	cr_assert_eq(p.max_burst, 1048576, "bad values leave defaults");
	cr_assert_eq(p.erl, 0);
}

Test(iscsi_params, text_buffer)
{
	struct iscsit_text t = {0};

	iscsit_text_add(&t, "A", "1");
	iscsit_text_addf(&t, "B", "%d", 22);
	cr_assert_eq(t.len, 4 + 5);
	cr_assert_eq(memcmp(t.p, "A=1\0B=22\0", 9), 0);
	for (int i = 0; i < 1000; i++)
		iscsit_text_add(&t, "Key", "Value");
	cr_assert_eq(t.len, 9 + 1000 * 10);
	iscsit_text_free(&t);
	cr_assert_null(t.p);
}
