/* READ DEFECT DATA (10) and (12): an empty list in the requested format. */
#include "tests/unit/sbc_test.h"

SBC_TEST(defect, read_defect_data10)
{
	uint8_t c[16] = {0x37}, b[32];
	struct th_result r;

	for (uint8_t req = 0; req < 0x20; req++) {
		c[2] = req;
		put_be16(c + 7, sizeof(b));
		memset(b, 0xee, sizeof(b));
		r = fx_exec(fx, c, SCSI_DIR_READ, b, sizeof(b));
		cr_assert_eq(r.status, SAM_STAT_GOOD);
		cr_assert_eq(r.data_len, 4);
		cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
		cr_assert_eq(b[0], 0);
		cr_assert_eq(b[1], req, "PLISTV/GLISTV/format echo the request");
		cr_assert_eq(get_be16(b + 2), 0, "no defects");
		cr_assert_eq(b[4], 0xee);
	}
	put_be16(c + 7, 2); /* allocation length cuts the header */
	r = fx_exec(fx, c, SCSI_DIR_READ, b, 2);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 2);
	put_be16(c + 7, 0);
	r = fx_exec(fx, c, SCSI_DIR_READ, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 0);
}

SBC_TEST(defect, read_defect_data12)
{
	uint8_t c[16] = {0xb7, 0x18 | 0x05}, b[32];
	struct th_result r;

	put_be32(c + 6, sizeof(b));
	memset(b, 0xee, sizeof(b));
	r = fx_exec(fx, c, SCSI_DIR_READ, b, sizeof(b));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 8);
	cr_assert_eq(b[1], 0x1d);
	cr_assert_eq(get_be32(b + 4), 0);
	cr_assert_eq(b[8], 0xee);
}
