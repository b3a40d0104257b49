/* scsi/spc_report_luns.c: REPORT LUNS select reports, encoding, allocation length. */
#include "spc_fixture.h"

static struct th_result report_luns(struct th_nexus *n, uint64_t lun, uint8_t select,
				    uint32_t alloc, uint8_t *buf, uint32_t exp)
{
	uint8_t cdb[12] = {0xa0, 0, select};
	put_be32(cdb + 6, alloc);
	return th_exec(n, lun, cdb, 12, SCSI_DIR_READ, buf, exp);
}

BOTH_STORES(report_luns, lists_the_nexus_luns)
{
	uint8_t b[256];
	struct th_result r;

	/* REPORT LUNS neither reports nor clears the power-on UA */
	r = report_luns(&fx_nx, 0, 0, sizeof(b), b, sizeof(b));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b), 8);
	cr_assert_eq(get_be32(b + 4), 0);
	uint8_t zero[8] = {0};
	cr_assert_eq(memcmp(b + 8, zero, 8), 0, "LUN 0");
	cr_assert_eq(r.data_len, 16);
	cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(r.resid, sizeof(b) - 16);
	r = th_exec(&fx_nx, 0, (uint8_t[6]){0}, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x00);
	/* select report 02h: the same; 01h and 10h-12h: none of those LUs here */
	r = report_luns(&fx_nx, 0, 2, sizeof(b), b, sizeof(b));
	cr_assert_eq(get_be32(b), 8);
	for (uint8_t s = 0x01; s <= 0x12; s = s == 1 ? 0x10 : s + 1) {
		r = report_luns(&fx_nx, 0, s, sizeof(b), b, sizeof(b));
		cr_assert_eq(r.status, SAM_STAT_GOOD, "select %#x", s);
		cr_assert_eq(get_be32(b), 0, "select %#x", s);
		cr_assert_eq(r.data_len, 8);
	}
}

BOTH_STORES(report_luns, errors)
{
	uint8_t b[64];
	struct th_result r;

	r = report_luns(&fx_nx, 0, 0, 15, b, 15);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, -1, 6);
	r = report_luns(&fx_nx, 0, 3, 64, b, 64);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, -1, 2);
	r = report_luns(&fx_nx, 0, 0xff, 64, b, 64);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
}

Test(report_luns, many_luns_sam5_encoding)
{
	struct scsi_dev *dev = th_make_dev("ramdisk", "rl0", 1 << 20, 512);
	struct th_nexus n;
	uint8_t b[64];
	static const uint64_t luns[4] = {0, 7, 300, 16383};

	th_nexus_init(&n, "iqn.1994-05.com.example:rl", 1, &dev, 1);
	for (unsigned i = 0; i < 4; i++) {
		n.ents[i].lun = luns[i];
		n.ents[i].dev = dev;
	}
	n.table.n = 4;
	struct th_result r = report_luns(&n, 300, 0, sizeof(b), b, sizeof(b));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b), 32);
	cr_assert_eq(b[8 + 8 + 1], 7);
	cr_assert_eq(b[8 + 16], 0x41, "flat space 300");
	cr_assert_eq(b[8 + 16 + 1], 0x2c);
	cr_assert_eq(b[8 + 24], 0x7f);
	cr_assert_eq(b[8 + 24 + 1], 0xff);
	for (unsigned i = 0; i < 4; i++)
		cr_assert_eq(scsi_lun_decode(b + 8 + 8 * i), luns[i]);
	/* allocation length 16: the header says 32, one LUN fits */
	r = report_luns(&n, 0, 0, 16, b, 64);
	cr_assert_eq(r.data_len, 16);
	cr_assert_eq(get_be32(b), 32);
	/* an unknown LUN can still ask */
	r = report_luns(&n, 55, 0, sizeof(b), b, sizeof(b));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b), 32);
	scsi_nexus_unregister(&n.nx);
	scsi_dev_destroy(dev);
	scsi_core_shutdown();
}
