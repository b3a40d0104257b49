/* CDB length and data direction from the opcode (tcmu_cdb.c). */
#include <criterion/criterion.h>

#include "transports/tcmu/tcmu_cdb.h"

Test(tcmu_cdb, length_by_group_code)
{
	uint8_t c[32] = {0};
	static const struct {
		uint8_t op;
		unsigned len;
	} t[] = {{0x00, 6},  {0x12, 6},	 {0x28, 10}, {0x5f, 10}, {0xa0, 12},
		 {0xa8, 12}, {0x88, 16}, {0x9e, 16}, {0xc0, 10}, {0xe0, 10}};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		c[0] = t[i].op;
		cr_assert_eq(tcmu_cdb_len(c), t[i].len, "opcode 0x%02x", t[i].op);
	}
	c[0] = 0x7f;
	c[7] = 0x18;
	cr_assert_eq(tcmu_cdb_len(c), 32, "variable length: 8 + additional CDB length");
}

Test(tcmu_cdb, direction)
{
	uint8_t c[32] = {0};
	static const uint8_t out[] = {0x0a, 0x2a, 0xaa, 0x8a, 0x2e, 0x41, 0x93, 0x42, 0x89,
				      0x15, 0x55, 0x5f, 0x83, 0x2f, 0x8f, 0x9c, 0x8b, 0xa4};
	static const uint8_t in[] = {0x08, 0x28, 0xa8, 0x88, 0x12, 0x25, 0x9e, 0x1a,
				     0x5a, 0x5e, 0xa0, 0xa3, 0x84, 0x00, 0x35, 0x91};

	for (size_t i = 0; i < sizeof(out); i++) {
		c[0] = out[i];
		cr_assert(tcmu_cdb_data_out(c), "0x%02x is data-out", out[i]);
	}
	for (size_t i = 0; i < sizeof(in); i++) {
		c[0] = in[i];
		cr_assert_not(tcmu_cdb_data_out(c), "0x%02x is not data-out", in[i]);
	}
	c[0] = 0x7f;
	c[9] = 0x0b; /* WRITE(32) */
	cr_assert(tcmu_cdb_data_out(c));
	c[9] = 0x09; /* READ(32) */
	cr_assert_not(tcmu_cdb_data_out(c));
}
