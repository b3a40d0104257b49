/* utgt-bench VPD 83 / REPORT TARGET PORT GROUPS decoding, CDBs, status names. */
#include <criterion/criterion.h>
#include <string.h>

#include "initiator/scsi_info.h"

/* VPD 83 with: NAA (LU), T10 vendor id (LU), relative target port 2 (port), TPG 7 (port). */
static size_t vpd83(uint8_t *b, uint8_t naa_last, uint16_t relport, uint16_t tpg)
{
	size_t o = 4;

	memset(b, 0, 128);
	b[1] = 0x83;
	b[o] = 0x01, b[o + 1] = 0x03, b[o + 3] = 16; /* binary, LU, NAA */
	b[o + 4] = 0x60;
	for (int i = 1; i < 15; i++)
		b[o + 4 + i] = (uint8_t)i;
	b[o + 4 + 15] = naa_last;
	o += 20;
	b[o] = 0x02, b[o + 1] = 0x01, b[o + 3] = 12; /* ascii, LU, T10 */
	memcpy(b + o + 4, "UTGT    ram0", 12);
	o += 16;
	b[o] = 0x01, b[o + 1] = 0x14, b[o + 3] = 4; /* port, relative port */
	b[o + 6] = (uint8_t)(relport >> 8), b[o + 7] = (uint8_t)relport;
	o += 8;
	b[o] = 0x01, b[o + 1] = 0x15, b[o + 3] = 4; /* port, target port group */
	b[o + 6] = (uint8_t)(tpg >> 8), b[o + 7] = (uint8_t)tpg;
	o += 8;
	b[2] = (uint8_t)((o - 4) >> 8), b[3] = (uint8_t)(o - 4);
	return o;
}

Test(bench_scsi_info, vpd83_identity_and_ports)
{
	uint8_t b[128];
	struct ub_lu_ident id, id2;
	char err[128], s[128];
	size_t n = vpd83(b, 0xaa, 2, 7);

	cr_assert(ub_vpd83_parse(b, n, &id, err, sizeof(err)), "%s", err);
	cr_assert_eq(id.ndesig, 2);
	cr_assert_eq(id.rel_port, 2);
	cr_assert_eq(id.port_group, 7);
	ub_lu_ident_str(&id, s, sizeof(s));
	cr_assert_str_eq(s, "naa.600102030405060708090a0b0c0d0eaa");
	/* the same LU seen through another port: same identity, other port fields */
	n = vpd83(b, 0xaa, 5, 8);
	cr_assert(ub_vpd83_parse(b, n, &id2, err, sizeof(err)));
	cr_assert(ub_lu_ident_same(&id, &id2));
	n = vpd83(b, 0xab, 2, 7);
	cr_assert(ub_vpd83_parse(b, n, &id2, err, sizeof(err)));
	cr_assert_not(ub_lu_ident_same(&id, &id2), "another LU");
}

Test(bench_scsi_info, vpd83_malformed)
{
	uint8_t b[128];
	struct ub_lu_ident id;
	char err[128];
	size_t n = vpd83(b, 1, 1, 1);

	cr_assert_not(ub_vpd83_parse(b, 3, &id, err, sizeof(err)));
	b[1] = 0x80;
	cr_assert_not(ub_vpd83_parse(b, n, &id, err, sizeof(err)));
	cr_assert(strstr(err, "0x80"), "%s", err);
	n = vpd83(b, 1, 1, 1);
	b[7] = 200; /* first designator claims 200 bytes */
	cr_assert_not(ub_vpd83_parse(b, n, &id, err, sizeof(err)));
	cr_assert(strstr(err, "overruns"), "%s", err);
	memset(b, 0, sizeof(b));
	b[1] = 0x83;
	cr_assert_not(ub_vpd83_parse(b, 4, &id, err, sizeof(err)), "no LU designator");
}

Test(bench_scsi_info, vpd83_truncated_by_allocation_length_still_parses)
{
	uint8_t b[128];
	struct ub_lu_ident id;
	char err[128];

	vpd83(b, 1, 1, 1);
	cr_assert(ub_vpd83_parse(b, 24, &id, err, sizeof(err)), "%s", err);
	cr_assert_eq(id.ndesig, 1);
}

Test(bench_scsi_info, t10_only_identity_string)
{
	uint8_t b[64] = {0, 0x83, 0, 16, 0x02, 0x01, 0, 12};
	struct ub_lu_ident id;
	char err[64], s[64];

	memcpy(b + 8, "IET     0001", 12);
	cr_assert(ub_vpd83_parse(b, 20, &id, err, sizeof(err)), "%s", err);
	ub_lu_ident_str(&id, s, sizeof(s));
	cr_assert_str_eq(s, "t10.IET     0001");
}

Test(bench_scsi_info, rtpg)
{
	uint8_t b[64] = {0};
	struct ub_rtpg r;
	struct ub_lu_ident id = {.port_group = -1, .rel_port = -1};
	char err[64];

	/* group 1: preferred, AO, ports 1,2; group 2: standby, port 3 */
	b[4] = 0x80 | 0x0, b[7] = 1, b[11] = 2;
	b[15] = 1, b[19] = 2;
	b[20] = 0x02, b[23] = 2, b[27] = 1;
	b[31] = 3;
	b[3] = 28;
	cr_assert(ub_rtpg_parse(b, 32, &r, err, sizeof(err)), "%s", err);
	cr_assert_eq(r.ngroups, 2);
	cr_assert(r.group[0].pref);
	cr_assert_eq(r.group[0].id, 1);
	cr_assert_eq(r.group[0].nports, 2);
	cr_assert_eq(r.group[1].state, UB_ALUA_STANDBY);
	id.port_group = 2;
	cr_assert_eq(ub_rtpg_state_for(&r, &id), UB_ALUA_STANDBY);
	id.port_group = -1;
	id.rel_port = 2;
	cr_assert_eq(ub_rtpg_state_for(&r, &id), UB_ALUA_AO);
	id.rel_port = 9;
	cr_assert_eq(ub_rtpg_state_for(&r, &id), UB_ALUA_UNKNOWN);
	b[27] = 9; /* port count past the end */
	cr_assert_not(ub_rtpg_parse(b, 32, &r, err, sizeof(err)));
}

Test(bench_scsi_info, cdbs)
{
	uint8_t c[16];

	ub_cdb_rw16(c, true, 0x0102030405060708ull, 0x0a0b0c0d);
	cr_assert_eq(c[0], 0x8a);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(c[2 + i], i + 1);
	cr_assert(c[10] == 0x0a && c[13] == 0x0d);
	ub_cdb_rw16(c, false, 0, 1);
	cr_assert_eq(c[0], 0x88);
	ub_cdb_inquiry_vpd(c, 0x83, 0x1234);
	cr_assert(c[0] == 0x12 && c[1] == 1 && c[2] == 0x83 && c[3] == 0x12 && c[4] == 0x34);
	ub_cdb_rtpg(c, 1024);
	cr_assert(c[0] == 0xa3 && c[1] == 0x0a && c[8] == 4 && c[9] == 0);
	ub_cdb_readcap16(c, 32);
	cr_assert(c[0] == 0x9e && c[1] == 0x10 && c[13] == 32);
}

Test(bench_scsi_info, names)
{
	cr_assert_str_eq(ub_login_status_str(0x0201), "Authentication failure");
	cr_assert_str_eq(ub_login_class_str(2), "initiator error");
	cr_assert_str_eq(ub_login_status_str(0x0203), "Target not found");
	cr_assert_str_eq(ub_sense_key_str(6), "UNIT ATTENTION");
	cr_assert_str_eq(ub_alua_state_str(UB_ALUA_ANO), "active/non-optimized");
}
