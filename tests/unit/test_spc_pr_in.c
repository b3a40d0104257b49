/* scsi/spc_pr_in.c: READ KEYS, READ RESERVATION, REPORT CAPABILITIES, READ FULL STATUS --
 * contents, allocation-length truncation, and bad service actions. */
#include "pr_harness.h"

static struct pr_env e;

static void up_ram(void)
{
	pr_env_up(&e, "ramdisk", false);
}
static void up_file_persist(void)
{
	pr_env_up(&e, "vdisk_fileio", true);
}
static void down(void)
{
	pr_env_down(&e);
}

#define KA 0x0102030405060708ull
#define KB 0x1112131415161718ull

Test(pr_in, read_keys_empty, .init = up_ram, .fini = down)
{
	uint8_t buf[16];
	struct th_result r = prin(&e.a, PRI_READ_KEYS, buf, sizeof(buf));

	assert_good(r);
	cr_assert_eq(r.data_len, 8);
	cr_assert_eq(get_be32(buf + 4), 0);
	cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(r.resid, 8);
}

Test(pr_in, read_keys_truncated_keeps_full_length, .init = up_ram, .fini = down)
{
	uint8_t buf[12];
	struct th_result r;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KB));
	r = prin(&e.a, PRI_READ_KEYS, buf, sizeof(buf));
	assert_good(r);
	cr_assert_eq(r.data_len, 12);
	cr_assert_eq(get_be32(buf), 2, "generation");
	cr_assert_eq(get_be32(buf + 4), 16,
		     "ADDITIONAL LENGTH is not cut by the allocation length");
	cr_assert_eq(get_be32(buf + 8), (uint32_t)(KA >> 32));
}

Test(pr_in, read_reservation_none_and_held, .init = up_ram, .fini = down)
{
	uint8_t buf[24];
	struct th_result r;

	r = prin(&e.b, PRI_READ_RESERVATION, buf, sizeof(buf));
	assert_good(r);
	cr_assert_eq(r.data_len, 8);
	cr_assert_eq(get_be32(buf + 4), 0);
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA_RO, KA, 0));
	r = prin(&e.b, PRI_READ_RESERVATION, buf, sizeof(buf));
	assert_good(r);
	cr_assert_eq(r.data_len, 24);
	cr_assert_eq(get_be32(buf + 4), 16);
	cr_assert_eq(get_be64(buf + 8), KA);
	cr_assert_eq(buf[21], PR_TYPE_EA_RO);
}

Test(pr_in, report_capabilities_without_persistence, .init = up_ram, .fini = down)
{
	uint8_t buf[8];
	struct th_result r = prin(&e.a, PRI_REPORT_CAPABILITIES, buf, sizeof(buf));

	assert_good(r);
	cr_assert_eq(r.data_len, 8);
	cr_assert_eq(get_be16(buf), 8);
	cr_assert_eq(buf[2], 0x10 | 0x08 | 0x04, "CRH SIP_C ATP_C, no PTPL_C");
	cr_assert_eq(buf[3], 0x80 | 0x10, "TMV, ALLOW COMMANDS 001b, no PTPL_A");
	cr_assert_eq(buf[4], 0xea);
	cr_assert_eq(buf[5], 0x01);
}

Test(pr_in, report_capabilities_with_persistence, .init = up_file_persist, .fini = down)
{
	uint8_t buf[8];
	struct th_result r = prin(&e.a, PRI_REPORT_CAPABILITIES, buf, sizeof(buf));

	assert_good(r);
	cr_assert_eq(buf[2] & 0x01, 0x01, "PTPL_C");
	cr_assert_eq(buf[3] & 0x01, 0, "PTPL_A before any APTPL registration");
	assert_good(prout_flags(&e.a, PRO_REGISTER, 0, 0, KA, 0x01));
	r = prin(&e.a, PRI_REPORT_CAPABILITIES, buf, sizeof(buf));
	cr_assert_eq(buf[3] & 0x01, 0x01, "PTPL_A");
	/* the last REGISTER decides: APTPL=0 turns it off */
	assert_good(prout_flags(&e.a, PRO_REGISTER, 0, KA, KB, 0x00));
	r = prin(&e.a, PRI_REPORT_CAPABILITIES, buf, sizeof(buf));
	cr_assert_eq(buf[3] & 0x01, 0);
}

Test(pr_in, read_full_status, .init = up_ram, .fini = down)
{
	uint8_t buf[512];
	struct th_result r;
	uint32_t off, dlen;
	const char *tid_a = PR_A ",i,0x230000000001";

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout_flags(&e.c, PRO_REGISTER, 0, 0, KB, 0x04)); /* ALL_TG_PT */
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	r = prin(&e.b, PRI_READ_FULL_STATUS, buf, sizeof(buf));
	assert_good(r);
	cr_assert_eq(get_be32(buf), 2);
	cr_assert_eq(get_be32(buf + 4) + 8, r.data_len);

	/* a: holder, registered through port 1, TransportID format 01 with its ISID */
	off = 8;
	cr_assert_eq(get_be64(buf + off), KA);
	cr_assert_eq(buf[off + 12], 0x01, "R_HOLDER, not ALL_TG_PT");
	cr_assert_eq(buf[off + 13], PR_TYPE_WE);
	cr_assert_eq(get_be16(buf + off + 18), 1);
	dlen = get_be32(buf + off + 20);
	cr_assert_eq(dlen % 4, 0);
	cr_assert_eq(buf[off + 24], 0x40 | SCSI_PROTO_ISCSI);
	cr_assert_eq(get_be16(buf + off + 26), dlen - 4);
	cr_assert_str_eq((char *)buf + off + 28, tid_a);

	/* c: not holder, ALL_TG_PT */
	off += 24 + dlen;
	cr_assert_eq(get_be64(buf + off), KB);
	cr_assert_eq(buf[off + 12], 0x02);
	cr_assert_eq(buf[off + 13], 0);
	cr_assert_eq(get_be16(buf + off + 18), 2);
	dlen = get_be32(buf + off + 20);
	cr_assert_eq(off + 24 + dlen, r.data_len);
}

Test(pr_in, read_full_status_all_registrants_holders, .init = up_ram, .fini = down)
{
	uint8_t buf[512];
	struct th_result r;
	uint32_t off = 8;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KB));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA_AR, KA, 0));
	r = prin(&e.c, PRI_READ_FULL_STATUS, buf, sizeof(buf));
	assert_good(r);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(buf[off + 12] & 0x01, 0x01, "every registrant holds it");
		cr_assert_eq(buf[off + 13], PR_TYPE_EA_AR);
		off += 24 + get_be32(buf + off + 20);
	}
	cr_assert_eq(off, r.data_len);
}

Test(pr_in, invalid_service_action, .init = up_ram, .fini = down)
{
	uint8_t buf[8];
	struct th_result r = prin(&e.a, 0x04, buf, sizeof(buf));

	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
}

Test(pr_in, allowed_for_strangers_under_exclusive_access, .init = up_ram, .fini = down)
{
	uint8_t buf[64];

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA, KA, 0));
	assert_good(prin(&e.c, PRI_READ_KEYS, buf, sizeof(buf)));
	assert_good(prin(&e.c, PRI_READ_FULL_STATUS, buf, sizeof(buf)));
}
