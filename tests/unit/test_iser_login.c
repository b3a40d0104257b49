/* Login glue: a login request as iscsid sends it on an iser iface is split between iSER's
 * keys (answered here) and the engine's (left in order); a failing iSER key fails the split;
 * the engine's MaxRecvDataSegmentLength declaration is capped to what a receive buffer holds. */
#include <criterion/criterion.h>
#include <string.h>

#include "transports/iscsi/iscsi_pdu.h"
#include "transports/iser/iser_login.h"

static struct iser_key_cfg cfg;
static struct iser_keys k;
static struct iscsit_text out;
static uint16_t st;

static void setup(void)
{
	iser_key_cfg_default(&cfg);
	iser_keys_init(&k, &cfg);
	memset(&out, 0, sizeof(out));
	st = 0;
}

static void teardown(void)
{
	iscsit_text_free(&out);
}

static const char *text(const struct iscsit_text *t)
{
	static char s[1024];
	size_t j = 0;

	for (size_t i = 0; i < t->len && j + 1 < sizeof(s); i++)
		s[j++] = t->p[i] ? t->p[i] : ';';
	s[j] = 0;
	return s;
}

TestSuite(iser_login, .init = setup, .fini = teardown);

Test(iser_login, iscsid_operational_request_is_split)
{
	char buf[] = "HeaderDigest=None\0DataDigest=None\0InitiatorRecvDataSegmentLength=262144\0"
		     "TargetRecvDataSegmentLength=262144\0RDMAExtensions=Yes\0MaxBurstLength="
		     "16776192\0FirstBurstLength=262144\0";
	struct iscsit_kv kv[16];
	unsigned n;

	cr_assert_eq(iscsit_kv_parse(buf, sizeof(buf) - 1, kv, 16, &n), ISCSIT_KV_OK);
	cr_assert_eq(n, 7);
	int left = iser_login_split_keys(&k, kv, n, &out, &st);
	cr_assert_eq(left, 4);
	cr_assert_str_eq(kv[0].key, "HeaderDigest");
	cr_assert_str_eq(kv[1].key, "DataDigest");
	cr_assert_str_eq(kv[2].key, "MaxBurstLength");
	cr_assert_str_eq(kv[3].key, "FirstBurstLength");
	cr_assert_str_eq(kv[3].val, "262144");
	cr_assert_str_eq(text(&out), "InitiatorRecvDataSegmentLength=8192;"
				     "TargetRecvDataSegmentLength=8192;RDMAExtensions=Yes;");
	cr_assert_eq(k.ext, ISER_EXT_YES);
}

Test(iser_login, failing_iser_key_fails_the_split)
{
	char buf[] = "InitiatorRecvDataSegmentLength=100\0HeaderDigest=None\0";
	struct iscsit_kv kv[4];
	unsigned n;

	cr_assert_eq(iscsit_kv_parse(buf, sizeof(buf) - 1, kv, 4, &n), ISCSIT_KV_OK);
	cr_assert_eq(iser_login_split_keys(&k, kv, n, &out, &st), -1);
	cr_assert_eq(st, ISCSI_LOGIN_INITIATOR_ERROR);
}

Test(iser_login, no_iser_keys_leaves_everything)
{
	char buf[] = "InitiatorName=iqn.x\0SessionType=Normal\0";
	struct iscsit_kv kv[4];
	unsigned n;

	cr_assert_eq(iscsit_kv_parse(buf, sizeof(buf) - 1, kv, 4, &n), ISCSIT_KV_OK);
	cr_assert_eq(iser_login_split_keys(&k, kv, n, &out, &st), 2);
	cr_assert_str_eq(kv[0].key, "InitiatorName");
	cr_assert_str_eq(kv[1].val, "Normal");
	cr_assert_eq(out.len, 0);
}

Test(iser_login, engine_mrdsl_declaration_is_capped)
{
	iscsit_text_add(&out, "MaxRecvDataSegmentLength", "1048576");
	iscsit_text_add(&out, "HeaderDigest", "None");
	iscsit_text_add(&out, "MaxRecvDataSegmentLengthX", "99999999");
	iscsit_text_add(&out, "TargetRecvDataSegmentLength", "8192");
	iscsit_text_add(&out, "MaxRecvDataSegmentLength", "0x100000");
	iscsit_text_add(&out, "MaxRecvDataSegmentLength", "4096");
	cr_assert_eq(iser_login_fix_answer(&out, 8192), 2);
	cr_assert_str_eq(text(&out),
			 "MaxRecvDataSegmentLength=8192;HeaderDigest=None;"
			 "MaxRecvDataSegmentLengthX=99999999;"
			 "TargetRecvDataSegmentLength=8192;MaxRecvDataSegmentLength=8192;"
			 "MaxRecvDataSegmentLength=4096;");
}

Test(iser_login, fix_on_empty_and_unterminated_text)
{
	struct iscsit_text t = {0};

	cr_assert_eq(iser_login_fix_answer(&t, 8192), 0);
	iscsit_text_add(&out, "A", "1");
	iscsit_text_add(&out, "MaxRecvDataSegmentLength", "16777215");
	out.len--; /* last entry without its NUL */
	cr_assert_eq(iser_login_fix_answer(&out, 16777215), 0);
	cr_assert_eq(out.len, strlen("A=1") + 1 + strlen("MaxRecvDataSegmentLength=16777215"));
	cr_assert_eq(iser_login_fix_answer(&out, 8192), 1);
	cr_assert_str_eq(text(&out), "A=1;MaxRecvDataSegmentLength=8192", "still unterminated");
	cr_assert_eq(out.len, strlen("A=1") + 1 + strlen("MaxRecvDataSegmentLength=8192"));
}
