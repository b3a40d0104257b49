/* Target identity from the port GID, and the add_target strings for Linux's ib_srp. */
#include <criterion/criterion.h>
#include <string.h>

#include "transports/srp/srp_ident.h"

/* The seed's scst.conf names its ib_srpt targets this way. */
static const char *SEED_GID = "fe80:0000:0000:0000:0002:c903:000f:41a7";

Test(srp_ident, scst_gid_form)
{
	uint8_t gid[16];
	char s[40];

	cr_assert_eq(srp_gid_parse(SEED_GID, gid), 0);
	cr_assert_eq(gid[0], 0xfe);
	cr_assert_eq(gid[1], 0x80);
	cr_assert_eq(gid[9], 0x02);
	cr_assert_eq(gid[10], 0xc9);
	cr_assert_eq(gid[15], 0xa7);
	srp_gid_format(gid, s);
	cr_assert_str_eq(s, SEED_GID);
}

Test(srp_ident, other_spellings)
{
	uint8_t a[16], b[16], c[16];

	cr_assert_eq(srp_gid_parse("fe80::2:c903:f:41a7", a), 0);
	cr_assert_eq(srp_gid_parse("FE80:0:0:0:2:C903:F:41A7", b), 0);
	cr_assert_eq(srp_gid_parse("0002:c903:000f:41a7", c), 0, "bare GUID");
	cr_assert_arr_eq(a, b, 16);
	cr_assert_arr_eq(a, c, 16);
}

Test(srp_ident, rejects_garbage)
{
	uint8_t g[16];

	cr_assert_eq(srp_gid_parse("", g), -1);
	cr_assert_eq(srp_gid_parse(NULL, g), -1);
	cr_assert_eq(srp_gid_parse("fe80:0000:0000:0000:0002:c903:000f", g), -1);
	cr_assert_eq(srp_gid_parse("fe80:0000:0000:0000:0002:c903:000f:41a7:1", g), -1);
	cr_assert_eq(srp_gid_parse("fe80:00000:0000:0000:0002:c903:000f:41a7", g), -1);
	cr_assert_eq(srp_gid_parse("iqn.2024-01.org.utgt:x", g), -1);
	cr_assert_eq(srp_gid_parse("0002:c903:000f:41ag", g), -1);
}

Test(srp_ident, identity_from_the_interface_id)
{
	struct srp_ident id;
	uint8_t gid[16];

	srp_gid_parse(SEED_GID, gid);
	srp_ident_from_gid(gid, &id);
	cr_assert_eq(id.id_ext, 0x0002c903000f41a7ull);
	cr_assert_eq(id.ioc_guid, 0x0002c903000f41a7ull);
	cr_assert_eq(id.service_id, 0x0002c903000f41a7ull);
	/* What ib_srp puts in SRP_LOGIN_REQ: id_ext then ioc_guid, big-endian (r16a order). */
	static const uint8_t want[16] = {0x00, 0x02, 0xc9, 0x03, 0x00, 0x0f, 0x41, 0xa7,
					 0x00, 0x02, 0xc9, 0x03, 0x00, 0x0f, 0x41, 0xa7};
	cr_assert_arr_eq(id.port_id, want, 16);
}

Test(srp_ident, distinct_ports_distinct_targets)
{
	struct srp_ident a, b;
	uint8_t g[16];

	srp_gid_parse("fe80:0000:0000:0000:0002:c903:000f:41a7", g);
	srp_ident_from_gid(g, &a);
	srp_gid_parse("fe80:0000:0000:0000:0002:c903:000f:8395", g);
	srp_ident_from_gid(g, &b);
	cr_assert_neq(memcmp(a.port_id, b.port_id, 16), 0);
}

Test(srp_ident, port_id_hex)
{
	uint8_t id[16];
	char s[35];

	for (int i = 0; i < 16; i++)
		id[i] = (uint8_t)(i * 17);
	srp_port_id_hex(id, s);
	cr_assert_str_eq(s, "0x00112233445566778899aabbccddeeff");
}

Test(srp_ident, add_target_strings)
{
	struct srp_ident id;
	uint8_t gid[16];
	char s[256];

	srp_gid_parse("fe80:0000:0000:0000:5054:00ff:fe12:3456", gid);
	srp_ident_from_gid(gid, &id);
	srp_add_target_rdma(&id, "10.0.2.15:5555", s, sizeof(s));
	cr_assert_str_eq(s,
			 "id_ext=505400fffe123456,ioc_guid=505400fffe123456,dest=10.0.2.15:5555");
	srp_add_target_ib(&id, 0xffff, s, sizeof(s));
	cr_assert_str_eq(s, "id_ext=505400fffe123456,ioc_guid=505400fffe123456,"
			    "dgid=fe80000000000000505400fffe123456,pkey=ffff,"
			    "service_id=505400fffe123456");
}
