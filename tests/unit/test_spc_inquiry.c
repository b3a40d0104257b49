/* scsi/spc_inquiry.c: standard INQUIRY data and CDB checks. */
#include "spc_fixture.h"

static struct th_result inquiry(struct th_nexus *n, uint64_t lun, uint8_t b1, uint8_t page,
				uint16_t alloc, uint8_t *buf, uint32_t exp)
{
	uint8_t cdb[6] = {0x12, b1, page, (uint8_t)(alloc >> 8), (uint8_t)alloc, 0};
	return th_exec(n, lun, cdb, 6, SCSI_DIR_READ, buf, exp);
}

BOTH_STORES(inquiry, standard_data)
{
	uint8_t b[256];
	struct th_result r;

	memset(b, 0xee, sizeof(b));
	r = inquiry(&fx_nx, 0, 0, 0, 255, b, 255);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 96);
	cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(r.resid, 255 - 96);
	cr_assert_eq(b[0], 0x00, "PQ 0, direct access");
	cr_assert_eq(b[1], 0x00, "not removable");
	cr_assert_eq(b[2], 0x06, "SPC-4");
	cr_assert_eq(b[3], 0x12, "HiSup, format 2");
	cr_assert_eq(b[4], 91);
	cr_assert_eq(b[5] & 0x30, 0x10, "TPGS implicit");
	cr_assert_eq(b[5] & 0x08, 0x08, "3PC");
	cr_assert_eq(b[7], 0x02, "CmdQue");
	cr_assert_eq(memcmp(b + 8, "UTGT    ", 8), 0);
	cr_assert_eq(memcmp(b + 16, "fx0             ", 16), 0);
	cr_assert_eq(memcmp(b + 32, "0100", 4), 0);
	cr_assert_eq(get_be16(b + 58), 0x00a0, "SAM-5");
	cr_assert_eq(get_be16(b + 60), 0x0460, "SPC-4");
	cr_assert_eq(get_be16(b + 62), 0x04c0, "SBC-3");
	cr_assert_eq(get_be16(b + 64), 0x0960, "iSCSI");
	cr_assert_eq(b[96], 0xee, "nothing past the data");
}

BOTH_STORES(inquiry, allocation_length_exact)
{
	uint8_t b[64];
	struct th_result r;

	memset(b, 0xee, sizeof(b));
	r = inquiry(&fx_nx, 0, 0, 0, 5, b, 64);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 5);
	cr_assert_eq(b[4], 91, "the additional length still says the full length");
	cr_assert_eq(b[5], 0xee);
	cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(r.resid, 59);
	/* allocation length 0: no data, GOOD */
	r = inquiry(&fx_nx, 0, 0, 0, 0, b, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 0);
	cr_assert_eq(r.resid_kind, SCSI_RESID_NONE);
	/* the transport expects less than the allocation length: overflow */
	r = inquiry(&fx_nx, 0, 0, 0, 96, b, 36);
	cr_assert_eq(r.data_len, 36);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 60);
}

BOTH_STORES(inquiry, cdb_errors)
{
	uint8_t b[64];
	struct th_result r;

	r = inquiry(&fx_nx, 0, 0x02, 0, 64, b, 64); /* CmdDt */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, 1, 1);
	r = inquiry(&fx_nx, 0, 0x00, 0x80, 64, b, 64); /* page code without EVPD */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, -1, 2);
	r = inquiry(&fx_nx, 0, 0x01, 0xc7, 64, b, 64); /* unknown VPD page */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, -1, 2);
	r = inquiry(&fx_nx, 0, 0x20, 0, 64, b, 64); /* reserved bit */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, 5, 1);
	cr_assert_eq(r.data_len, 0);
}

BOTH_STORES(inquiry, unknown_lun_and_ua)
{
	uint8_t b[96];
	struct th_result r;

	r = inquiry(&fx_nx, 7, 0, 0, 96, b, 96);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[0], 0x7f);
	cr_assert_eq(b[2], 0x06);
	r = inquiry(&fx_nx, 7, 1, 0, 96, b, 96);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x25, 0x00);
	/* INQUIRY neither reports nor clears the pending power-on UA */
	r = inquiry(&fx_nx, 0, 0, 0, 96, b, 96);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	uint8_t tur[6] = {0};
	r = th_exec(&fx_nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x00);
}

BOTH_STORES(inquiry, identity_from_params)
{
	uint8_t b[96];
	struct th_result r;

	fx_dev->p.removable = true;
	snprintf(fx_dev->p.vendor, sizeof(fx_dev->p.vendor), "ACME");
	snprintf(fx_dev->p.product, sizeof(fx_dev->p.product), "Roadrunner");
	r = inquiry(&fx_nx, 0, 0, 0, 96, b, 96);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[1], 0x80, "RMB");
	cr_assert_eq(memcmp(b + 8, "ACME    ", 8), 0);
	cr_assert_eq(memcmp(b + 16, "Roadrunner      ", 16), 0, "space padded");
}

Test(inquiry, srp_version_descriptor)
{
	struct scsi_dev *dev = th_make_dev("ramdisk", "srp0", 1 << 20, 512);
	struct th_nexus n;
	uint8_t b[96];

	th_nexus_init(&n, "0x00112233445566778899aabbccddeeff", 3, &dev, 1);
	n.nx.proto = SCSI_PROTO_SRP;
	struct th_result r = inquiry(&n, 0, 0, 0, 96, b, 96);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be16(b + 64), 0x0940, "SRP");
	scsi_nexus_unregister(&n.nx);
	scsi_dev_destroy(dev);
	scsi_core_shutdown();
}

/* nullio `dummy 1` (SCST): the LUN answers INQUIRY, standard and VPD, with peripheral
 * qualifier 001b and device type 1Fh; everything else is still the nullio disk underneath, as
 * in SCST, whose dummy flag changes nothing but that byte. */
Test(inquiry, nullio_dummy_reports_pq1_type_1f)
{
	struct scsi_dev *dev = th_make_dev("vdisk_nullio", "dummy0", 1 << 20, 512);
	uint8_t b[96], data[512], rc[8];
	uint8_t rd[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0};
	uint8_t wr[10] = {0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0};
	uint8_t cap[10] = {0x25};
	struct th_nexus n;
	struct th_result r;

	th_nexus_init(&n, "iqn.1994-05.com.example:init1", 1, &dev, 1);
	r = inquiry(&n, 0, 0, 0, 96, b, 96);
	cr_assert_eq(b[0], 0x00, "a plain nullio LU is a connected disk");
	dev->bs->dummy = true;
	r = inquiry(&n, 0, 0, 0, 96, b, 96);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[0], 0x3f, "PQ 001b, type 1Fh: %#x", b[0]);
	for (unsigned i = 0; i < 3; i++) {
		static const uint8_t pages[] = {0x00, 0x80, 0x83};
		r = inquiry(&n, 0, 1, pages[i], 96, b, 96);
		cr_assert_eq(r.status, SAM_STAT_GOOD);
		cr_assert_eq(b[0], 0x3f, "VPD %#x byte 0 %#x", pages[i], b[0]);
		cr_assert_eq(b[1], pages[i]);
	}
	th_clear_ua(&n, 0);
	memset(data, 0x5a, sizeof(data));
	r = th_exec(&n, 0, wr, 10, SCSI_DIR_WRITE, data, sizeof(data));
	cr_assert_eq(r.status, SAM_STAT_GOOD, "writes are dropped, as any nullio");
	r = th_exec(&n, 0, rd, 10, SCSI_DIR_READ, data, sizeof(data));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(data[0], 0, "read_zero");
	cr_assert_eq(data[511], 0);
	r = th_exec(&n, 0, cap, 10, SCSI_DIR_READ, rc, sizeof(rc));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(rc), 2047, "last LBA of 1 MiB");
	scsi_nexus_unregister(&n.nx);
	scsi_dev_destroy(dev);
	scsi_core_shutdown();
}
