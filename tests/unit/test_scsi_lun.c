/* scsi/scsi_lun.c: binary search in the per-nexus table; SAM-5 single-level LUN encoding. */
#include "scsi_harness.h"

Test(lun, table_lookup_and_encoding)
{
	struct scsi_lun_entry e[4] = {{.lun = 0}, {.lun = 3}, {.lun = 300}, {.lun = 70000}};
	struct scsi_lun_table tbl = {4, e};
	uint8_t enc[8];

	cr_assert_eq(scsi_lun_lookup(&tbl, 3), &e[1]);
	cr_assert_eq(scsi_lun_lookup(&tbl, 70000), &e[3]);
	cr_assert_null(scsi_lun_lookup(&tbl, 4));
	cr_assert_null(scsi_lun_lookup(NULL, 0));
	scsi_lun_encode(5, enc);
	cr_assert(enc[0] == 0 && enc[1] == 5);
	cr_assert_eq(scsi_lun_decode(enc), 5);
	scsi_lun_encode(300, enc);
	cr_assert(enc[0] == 0x41 && enc[1] == 0x2c, "%#x %#x", enc[0], enc[1]);
	cr_assert_eq(scsi_lun_decode(enc), 300);
	scsi_lun_encode(70000, enc);
	cr_assert_eq(enc[0], 0xd2);
	cr_assert_eq(scsi_lun_decode(enc), 70000);
	uint8_t two_level[8] = {0, 1, 0, 2, 0, 0, 0, 0};
	cr_assert_eq(scsi_lun_decode(two_level), SCSI_LUN_INVALID);
	uint8_t bus[8] = {0x01, 1, 0, 0, 0, 0, 0, 0};
	cr_assert_eq(scsi_lun_decode(bus), SCSI_LUN_INVALID);
}

Test(lun, table_of_one_and_empty)
{
	struct scsi_lun_entry e[1] = {{.lun = 4}};
	struct scsi_lun_table one = {1, e}, none = {0, NULL};
	cr_assert_eq(scsi_lun_lookup(&one, 4), &e[0]);
	cr_assert_null(scsi_lun_lookup(&one, 3));
	cr_assert_null(scsi_lun_lookup(&one, 5));
	cr_assert_null(scsi_lun_lookup(&none, 0));
}

Test(lun, decode_rejects_what_we_do_not_serve)
{
	uint8_t lu_addr[8] = {0x80, 1, 0, 0, 0, 0, 0, 0};    /* logical unit addressing */
	uint8_t ext_junk[8] = {0xd2, 0, 0, 1, 0, 0, 0, 1};   /* extended flat + trailing bytes */
	uint8_t flat_max[8] = {0x7f, 0xff, 0, 0, 0, 0, 0, 0};
	cr_assert_eq(scsi_lun_decode(lu_addr), SCSI_LUN_INVALID);
	cr_assert_eq(scsi_lun_decode(ext_junk), SCSI_LUN_INVALID);
	cr_assert_eq(scsi_lun_decode(flat_max), 16383);
	/* round trip over the whole encodable range boundaries */
	static const uint64_t v[] = {0, 1, 255, 256, 16383, 16384, 0xffffff};
	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t enc[8];
		scsi_lun_encode(v[i], enc);
		cr_assert_eq(scsi_lun_decode(enc), v[i], "lun %llu", (unsigned long long)v[i]);
	}
}
