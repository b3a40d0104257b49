/* iSER login keys: the Minimum answers to the lengths iscsid sends, MaxOutstandingUnexpectedPDUs,
 * what is left to the iSCSI engine, RDMAExtensions never sent, and the login failures for
 * malformed or duplicate values and RDMAExtensions=No. */
#include <criterion/criterion.h>
#include <string.h>

#include "transports/iscsi/iscsi_pdu.h"
#include "transports/iser/iser_keys.h"

static struct iser_key_cfg cfg;
static struct iser_keys k;
static struct iscsit_text out;
static uint16_t st;

static void setup(void)
{
	iser_key_cfg_default(&cfg);
	iser_keys_init(&k, &cfg);
	memset(&out, 0, sizeof(out));
	st = 0xffff;
}

static void teardown(void)
{
	iscsit_text_free(&out);
}

/* out as "a=b;c=d;" for readable comparisons */
static const char *text(void)
{
	static char s[512];
	size_t j = 0;

	for (size_t i = 0; i < out.len && j + 1 < sizeof(s); i++)
		s[j++] = out.p[i] ? out.p[i] : ';';
	s[j] = 0;
	return s;
}

TestSuite(iser_keys, .init = setup, .fini = teardown);

Test(iser_keys, defaults_before_any_key)
{
	cr_assert_eq(k.irdsl, 8192);
	cr_assert_eq(k.trdsl, 8192);
	cr_assert_eq(k.mou, 0);
	cr_assert_eq(k.ext, ISER_EXT_UNSEEN);
	cr_assert_eq(cfg.trdsl, 8192);
}

/* What open-iscsi's iscsid sends on an iser iface (max_recv_dlength 256 KiB here). */
Test(iser_keys, iscsid_iser_keys_are_answered_with_the_minimum)
{
	cr_assert_eq(iser_keys_take(&k, "InitiatorRecvDataSegmentLength", "262144", &out, &st),
		     ISER_KEY_TAKEN);
	cr_assert_eq(iser_keys_take(&k, "TargetRecvDataSegmentLength", "262144", &out, &st),
		     ISER_KEY_TAKEN);
	cr_assert_eq(iser_keys_take(&k, "RDMAExtensions", "Yes", &out, &st), ISER_KEY_TAKEN);
	cr_assert_str_eq(text(), "InitiatorRecvDataSegmentLength=8192;"
				 "TargetRecvDataSegmentLength=8192;RDMAExtensions=Yes;");
	cr_assert_eq(k.irdsl, 8192, "bounded by our send buffers");
	cr_assert_eq(k.trdsl, 8192, "bounded by our receive buffers");
	cr_assert_eq(iser_keys_finish(&k, &out, &st), 0);
	cr_assert_str_eq(text(),
			 "InitiatorRecvDataSegmentLength=8192;"
			 "TargetRecvDataSegmentLength=8192;RDMAExtensions=Yes;",
			 "finish adds nothing");
}

Test(iser_keys, smaller_initiator_values_win)
{
	cfg.trdsl = 65536;
	cfg.max_send_dsl = 65536;
	cr_assert_eq(iser_keys_take(&k, "InitiatorRecvDataSegmentLength", "0x1000", &out, &st),
		     ISER_KEY_TAKEN);
	cr_assert_eq(iser_keys_take(&k, "TargetRecvDataSegmentLength", "512", &out, &st),
		     ISER_KEY_TAKEN);
	cr_assert_str_eq(text(), "InitiatorRecvDataSegmentLength=4096;"
				 "TargetRecvDataSegmentLength=512;");
	cr_assert_eq(k.irdsl, 4096);
	cr_assert_eq(k.trdsl, 512);
}

Test(iser_keys, max_outstanding_unexpected_pdus_min_or_zero)
{
	cr_assert_eq(iser_keys_take(&k, "MaxOutstandingUnexpectedPDUs", "8", &out, &st),
		     ISER_KEY_TAKEN);
	cr_assert_eq(k.mou, 8, "ours is 0 (no limit): theirs stands");
	cr_assert_str_eq(text(), "MaxOutstandingUnexpectedPDUs=8;");
	iser_keys_init(&k, &cfg);
	cfg.max_unexpected = 4;
	cr_assert_eq(iser_keys_take(&k, "MaxOutstandingUnexpectedPDUs", "0", &out, &st),
		     ISER_KEY_TAKEN);
	cr_assert_eq(k.mou, 4);
	iser_keys_init(&k, &cfg);
	cr_assert_eq(iser_keys_take(&k, "MaxOutstandingUnexpectedPDUs", "16", &out, &st),
		     ISER_KEY_TAKEN);
	cr_assert_eq(k.mou, 4);
}

Test(iser_keys, other_keys_go_to_the_iscsi_engine)
{
	cr_assert_eq(iser_keys_take(&k, "MaxRecvDataSegmentLength", "8192", &out, &st),
		     ISER_KEY_NOT_MINE);
	cr_assert_eq(iser_keys_take(&k, "HeaderDigest", "None", &out, &st), ISER_KEY_NOT_MINE);
	cr_assert_eq(iser_keys_take(&k, "rdmaextensions", "Yes", &out, &st), ISER_KEY_NOT_MINE,
		     "keys are case sensitive");
	cr_assert_eq(out.len, 0);
}

Test(iser_keys, unseen_rdma_extensions_is_accepted_without_offer)
{
	/* open-iscsi's discovery sessions over iSER never send it */
	cr_assert_eq(iser_keys_finish(&k, &out, &st), 0);
	cr_assert_eq(out.len, 0, "no offer: iscsid fails logins on keys it does not expect");
}

Test(iser_keys, rdma_extensions_no_fails_the_login)
{
	cr_assert_eq(iser_keys_take(&k, "RDMAExtensions", "No", &out, &st), ISER_KEY_TAKEN);
	cr_assert_str_eq(text(), "RDMAExtensions=No;");
	cr_assert_eq(iser_keys_finish(&k, &out, &st), -1);
	cr_assert_eq(st, ISCSI_LOGIN_INITIATOR_ERROR);
}

Test(iser_keys, bad_rdma_extensions_value_is_rejected)
{
	cr_assert_eq(iser_keys_take(&k, "RDMAExtensions", "Maybe", &out, &st), ISER_KEY_TAKEN);
	cr_assert_str_eq(text(), "RDMAExtensions=Reject;");
	cr_assert_eq(iser_keys_finish(&k, &out, &st), 0);
}

Test(iser_keys, duplicates_fail)
{
	cr_assert_eq(iser_keys_take(&k, "RDMAExtensions", "Yes", &out, &st), ISER_KEY_TAKEN);
	cr_assert_eq(iser_keys_take(&k, "RDMAExtensions", "Yes", &out, &st), ISER_KEY_FAIL);
	cr_assert_eq(iser_keys_take(&k, "InitiatorRecvDataSegmentLength", "8192", &out, &st),
		     ISER_KEY_TAKEN);
	st = 0;
	cr_assert_eq(iser_keys_take(&k, "InitiatorRecvDataSegmentLength", "8192", &out, &st),
		     ISER_KEY_FAIL);
	cr_assert_eq(st, ISCSI_LOGIN_INITIATOR_ERROR);
	cr_assert_eq(iser_keys_take(&k, "MaxOutstandingUnexpectedPDUs", "8", &out, &st),
		     ISER_KEY_TAKEN);
	cr_assert_eq(iser_keys_take(&k, "MaxOutstandingUnexpectedPDUs", "8", &out, &st),
		     ISER_KEY_FAIL);
}

Test(iser_keys, out_of_range_values_fail)
{
	const char *bad[] = {"511", "16777216", "0", "", "12x", "-1", "0xffffffff"};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		iser_keys_init(&k, &cfg);
		st = 0;
		cr_assert_eq(
		    iser_keys_take(&k, "InitiatorRecvDataSegmentLength", bad[i], &out, &st),
		    ISER_KEY_FAIL, "IRDSL=%s", bad[i]);
		cr_assert_eq(st, ISCSI_LOGIN_INITIATOR_ERROR);
		cr_assert_eq(iser_keys_take(&k, "TargetRecvDataSegmentLength", bad[i], &out, &st),
			     ISER_KEY_FAIL, "TRDSL=%s", bad[i]);
	}
	iser_keys_init(&k, &cfg);
	cr_assert_eq(iser_keys_take(&k, "InitiatorRecvDataSegmentLength", "512", &out, &st),
		     ISER_KEY_TAKEN);
	cr_assert_eq(k.irdsl, 512);
	iser_keys_init(&k, &cfg);
	cr_assert_eq(iser_keys_take(&k, "InitiatorRecvDataSegmentLength", "16777215", &out, &st),
		     ISER_KEY_TAKEN);
	cr_assert_eq(k.irdsl, 8192, "accepted, answered with our smaller value");
	cr_assert_eq(iser_keys_take(&k, "MaxOutstandingUnexpectedPDUs", "1", &out, &st),
		     ISER_KEY_FAIL, "1 is outside 0 | 2..2^32-1");
	cr_assert_eq(iser_keys_take(&k, "MaxOutstandingUnexpectedPDUs", "4294967296", &out, &st),
		     ISER_KEY_FAIL);
}
