/* scsi/spc_pr_tid.c: TransportID parsing (iSCSI formats 00 and 01, SRP) and encoding, with the
 * malformed cases SPEC_I_PT and REGISTER AND MOVE must refuse. */
#include <criterion/criterion.h>
#include <string.h>

#include "scsi/spc_pr.h"

static uint32_t iscsi_tid(uint8_t *p, uint8_t format, const char *s, uint16_t add)
{
	memset(p, 0, 4u + add);
	p[0] = (uint8_t)(format << 6 | SCSI_PROTO_ISCSI);
	put_be16(p + 2, add);
	memcpy(p + 4, s, strlen(s));
	return 4u + add;
}

Test(pr_tid, iscsi_format_00_names_every_port)
{
	uint8_t b[64];
	struct pr_port p;
	uint32_t len = iscsi_tid(b, 0, "iqn.2026-01.org.example:x", 28);

	cr_assert_eq(pr_tid_parse(b, len, &p), (int)len);
	cr_assert_eq(p.proto, SCSI_PROTO_ISCSI);
	cr_assert(p.name_only);
	cr_assert_str_eq(p.id, "iqn.2026-01.org.example:x");
}

Test(pr_tid, iscsi_format_01_one_port_isid_lowercased)
{
	uint8_t b[64];
	struct pr_port p;
	uint32_t len = iscsi_tid(b, 1, "iqn.2026-01.org.example:x,I,0X23000000ABCD", 44);

	cr_assert_eq(pr_tid_parse(b, len, &p), (int)len);
	cr_assert_not(p.name_only);
	cr_assert_str_eq(p.id, "iqn.2026-01.org.example:x,i,0x23000000abcd");
}

Test(pr_tid, iscsi_malformed)
{
	uint8_t b[128];
	struct pr_port p;
	uint32_t len;

	/* additional length not a multiple of 4 */
	len = iscsi_tid(b, 0, "iqn.x", 21);
	cr_assert_eq(pr_tid_parse(b, len, &p), 0);
	/* shorter than the 24-byte minimum */
	len = iscsi_tid(b, 0, "iqn.x", 16);
	cr_assert_eq(pr_tid_parse(b, len, &p), 0);
	/* no NUL inside */
	len = iscsi_tid(b, 0, "iqn.2026-01.org.example:abcdefgh", 32);
	cr_assert_eq(pr_tid_parse(b, len, &p), 0);
	/* empty name */
	len = iscsi_tid(b, 0, "", 20);
	cr_assert_eq(pr_tid_parse(b, len, &p), 0);
	/* a space in the name */
	len = iscsi_tid(b, 0, "iqn.x y", 20);
	cr_assert_eq(pr_tid_parse(b, len, &p), 0);
	/* format 01 without separator, with a short ISID, with a non-hex ISID */
	len = iscsi_tid(b, 1, "iqn.2026-01.org.example:x", 28);
	cr_assert_eq(pr_tid_parse(b, len, &p), 0);
	len = iscsi_tid(b, 1, "iqn.x,i,0x1234", 20);
	cr_assert_eq(pr_tid_parse(b, len, &p), 0);
	len = iscsi_tid(b, 1, "iqn.x,i,0x12345678901g", 24);
	cr_assert_eq(pr_tid_parse(b, len, &p), 0);
	/* formats 10 and 11 */
	len = iscsi_tid(b, 2, "iqn.x", 20);
	cr_assert_eq(pr_tid_parse(b, len, &p), 0);
	len = iscsi_tid(b, 3, "iqn.x", 20);
	cr_assert_eq(pr_tid_parse(b, len, &p), 0);
}

Test(pr_tid, overrun_is_reported_apart)
{
	uint8_t b[64];
	struct pr_port p;
	uint32_t len = iscsi_tid(b, 0, "iqn.2026-01.org.example:x", 28);

	cr_assert_eq(pr_tid_parse(b, len - 1, &p), -1);
	cr_assert_eq(pr_tid_parse(b, 3, &p), -1);
	b[0] = SCSI_PROTO_SRP;
	cr_assert_eq(pr_tid_parse(b, 23, &p), -1);
}

Test(pr_tid, srp)
{
	uint8_t b[24] = {SCSI_PROTO_SRP};
	struct pr_port p;

	for (int i = 0; i < 16; i++)
		b[8 + i] = (uint8_t)(0xf0 + i);
	cr_assert_eq(pr_tid_parse(b, sizeof(b), &p), 24);
	cr_assert_eq(p.proto, SCSI_PROTO_SRP);
	cr_assert_str_eq(p.id, "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
	b[0] = 0x40 | SCSI_PROTO_SRP; /* SRP has only format 00 */
	cr_assert_eq(pr_tid_parse(b, sizeof(b), &p), 0);
}

Test(pr_tid, unknown_protocols)
{
	uint8_t b[24] = {0};

	for (uint8_t proto = 0; proto < 16; proto++) {
		struct pr_port p;
		if (proto == SCSI_PROTO_ISCSI || proto == SCSI_PROTO_SRP)
			continue;
		b[0] = proto;
		cr_assert_eq(pr_tid_parse(b, sizeof(b), &p), 0, "protocol %u", proto);
	}
}

Test(pr_tid, encode_roundtrip)
{
	static const struct pr_port ports[] = {
	    {SCSI_PROTO_ISCSI, true, "iqn.2026-01.org.example:host"},
	    {SCSI_PROTO_ISCSI, false, "iqn.2026-01.org.example:host,i,0x230000000001"},
	    {SCSI_PROTO_ISCSI, true, "iqn.a"},
	    {SCSI_PROTO_SRP, false, "0123456789abcdeffedcba9876543210"},
	};

	for (unsigned i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		uint8_t b[300];
		struct pr_port back;
		uint32_t len = pr_tid_encode(&ports[i], b, sizeof(b));

		cr_assert_eq(len % 4, 0);
		cr_assert_geq(len, 24);
		cr_assert_eq(pr_tid_parse(b, len, &back), (int)len, "port %u", i);
		cr_assert_eq(back.proto, ports[i].proto);
		cr_assert_eq(back.name_only, ports[i].name_only);
		cr_assert_str_eq(back.id, ports[i].id);
	}
}

Test(pr_tid, encode_reports_full_length_when_cut)
{
	struct pr_port p = {SCSI_PROTO_ISCSI, true, "iqn.2026-01.org.example:a-rather-long-name"};
	uint8_t b[8];

	memset(b, 0xee, sizeof(b));
	cr_assert_eq(pr_tid_encode(&p, b, sizeof(b)), 4 + 44);
	cr_assert_eq(b[0], SCSI_PROTO_ISCSI);
	cr_assert_eq(get_be16(b + 2), 44);
}
