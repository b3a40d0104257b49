/* scsi/spc_vpd.c: VPD pages 00, 80, 83, 86, B0, B1, B2 and the NAA identifier. */
#include "spc_fixture.h"

static struct th_result vpd(uint8_t page, uint16_t alloc, uint8_t *buf, uint32_t exp)
{
	uint8_t cdb[6] = {0x12, 0x01, page, (uint8_t)(alloc >> 8), (uint8_t)alloc, 0};
	return th_exec(&fx_nx, 0, cdb, 6, SCSI_DIR_READ, buf, exp);
}

BOTH_STORES(vpd, supported_pages)
{
	uint8_t b[64];
	static const uint8_t want[] = {0x00, 0x80, 0x83, 0x86, 0xb0, 0xb1, 0xb2};
	struct th_result r = vpd(0x00, 64, b, 64);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[0], 0);
	cr_assert_eq(b[1], 0x00);
	cr_assert_eq(get_be16(b + 2), sizeof(want));
	cr_assert_eq(memcmp(b + 4, want, sizeof(want)), 0);
	cr_assert_eq(r.data_len, 4 + sizeof(want));
	/* every listed page answers */
	for (unsigned i = 0; i < sizeof(want); i++) {
		uint8_t p[255];
		r = vpd(want[i], 255, p, 255);
		cr_assert_eq(r.status, SAM_STAT_GOOD, "page %#x", want[i]);
		cr_assert_eq(p[1], want[i]);
		cr_assert_eq(r.data_len, 4u + get_be16(p + 2), "page %#x length", want[i]);
	}
}

BOTH_STORES(vpd, unit_serial_number)
{
	uint8_t b[64];
	struct th_result r = vpd(0x80, 64, b, 64);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be16(b + 2), strlen(fx_dev->p.usn));
	cr_assert_eq(memcmp(b + 4, fx_dev->p.usn, strlen(fx_dev->p.usn)), 0);
	cr_assert_eq(strlen(fx_dev->p.usn), 16, "default usn: 16 hex digits");
}

/* Find the designator of (assoc, type) in a VPD 83 page; NULL when absent. */
static const uint8_t *find_desig(const uint8_t *b, uint8_t assoc, uint8_t type)
{
	unsigned len = get_be16(b + 2), off = 4;

	while (off + 4 <= 4 + len) {
		const uint8_t *d = b + off;
		if (((d[1] >> 4) & 3) == assoc && (d[1] & 0xf) == type)
			return d;
		off += 4 + d[3];
	}
	return NULL;
}

BOTH_STORES(vpd, device_identification)
{
	uint8_t b[512], naa[16];
	const uint8_t *d;
	struct th_result r = vpd(0x83, 512, b, 512);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 4u + get_be16(b + 2));
	/* NAA 6, binary, LU */
	d = find_desig(b, 0, 3);
	cr_assert_not_null(d);
	cr_assert_eq(d[0] & 0xf, 1);
	cr_assert_eq(d[3], 16);
	cr_assert_eq(d[4] >> 4, 6);
	scsi_dev_naa(fx_dev, naa);
	cr_assert_eq(memcmp(d + 4, naa, 16), 0);
	cr_assert_eq(((d[4] & 0xf) << 20 | d[5] << 12 | d[6] << 4 | d[7] >> 4), 0x0a5547);
	/* T10 vendor id, ASCII */
	d = find_desig(b, 0, 1);
	cr_assert_not_null(d);
	cr_assert_eq(d[0] & 0xf, 2);
	cr_assert_eq(d[3], 8 + strlen("fx0"));
	cr_assert_eq(memcmp(d + 4, "UTGT    fx0", 11), 0);
	/* relative target port, target port association, PIV + iSCSI */
	d = find_desig(b, 1, 4);
	cr_assert_not_null(d);
	cr_assert_eq(d[0] >> 4, SCSI_PROTO_ISCSI);
	cr_assert(d[1] & 0x80);
	cr_assert_eq(get_be16(d + 6), 1);
	/* target port group: the implicit group 0 */
	d = find_desig(b, 1, 5);
	cr_assert_not_null(d);
	cr_assert_eq(get_be16(d + 6), SCSI_DEFAULT_TPG_ID);
	/* SCSI name strings: target port and target device */
	d = find_desig(b, 1, 8);
	cr_assert_not_null(d);
	cr_assert_eq(d[0] & 0xf, 3);
	cr_assert_eq(d[3] % 4, 0);
	cr_assert_str_eq((const char *)d + 4, "iqn.2026-12.org.utgt:test,t,0x0001");
	d = find_desig(b, 2, 8);
	cr_assert_not_null(d);
	cr_assert_str_eq((const char *)d + 4, "iqn.2026-12.org.utgt:test");

	/* the other nexus sees its own relative port */
	r = th_exec(&fx_nx2, 0, (uint8_t[6]){0x12, 1, 0x83, 2, 0, 0}, 6, SCSI_DIR_READ, b, 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	d = find_desig(b, 1, 4);
	cr_assert_eq(get_be16(d + 6), 2);
}

Test(vpd, naa_is_deterministic_and_unique)
{
	struct scsi_dev_params p;
	uint8_t a[16], b[16], c[16];
	struct scsi_dev *d1, *d2, *d3;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "disk1");
	d1 = scsi_dev_new(&p, NULL);
	d2 = scsi_dev_new(&p, NULL);
	snprintf(p.name, sizeof(p.name), "disk2");
	d3 = scsi_dev_new(&p, NULL);
	scsi_dev_naa(d1, a);
	scsi_dev_naa(d2, b);
	scsi_dev_naa(d3, c);
	cr_assert_eq(memcmp(a, b, 16), 0, "same config, same id");
	cr_assert_neq(memcmp(a, c, 16), 0, "different devices, different ids");
	/* an explicit naa_id is used as the extension */
	d3->p.naa_id = 0x0123456789abcdefull;
	scsi_dev_naa(d3, c);
	cr_assert_eq(get_be64(c + 8), 0x0123456789abcdefull);
	cr_assert_eq(c[0], 0x60);
	/* usn drives the default id */
	snprintf(d2->p.usn, sizeof(d2->p.usn), "other");
	scsi_dev_naa(d2, b);
	cr_assert_neq(memcmp(a, b, 16), 0);
	scsi_dev_destroy(d1);
	scsi_dev_destroy(d2);
	scsi_dev_destroy(d3);
}

BOTH_STORES(vpd, extended_inquiry)
{
	uint8_t b[64];
	struct th_result r = vpd(0x86, 64, b, 64);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be16(b + 2), 60);
	cr_assert_eq(b[5], 0x07, "HEADSUP ORDSUP SIMPSUP");
	cr_assert_eq(b[6], 0x01, "V_SUP");
}

BOTH_STORES(vpd, block_limits)
{
	uint8_t b[64];
	struct sbc_limits l;
	struct th_result r = vpd(0xb0, 64, b, 64);

	memset(&l, 0, sizeof(l));
	sbc_get_limits(fx_dev, &l);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be16(b + 2), 0x3c);
	cr_assert_eq(b[5], l.max_compare_write_blocks > 255 ? 255 : l.max_compare_write_blocks);
	cr_assert_eq(get_be16(b + 6), 8, "4096-byte granularity in 512-byte blocks");
	cr_assert_eq(get_be32(b + 8), l.max_xfer_blocks);
	cr_assert_eq(get_be32(b + 12), l.opt_xfer_blocks);
	cr_assert_eq(get_be64(b + 36), l.max_write_same_blocks);
	cr_assert_eq(get_be32(b + 44), l.max_atomic_blocks);
	cr_assert_eq(b[4] & 1, l.wsnz);
	if (sbc_thin(fx_dev)) {
		cr_assert_eq(get_be32(b + 28), l.unmap_granularity);
		cr_assert_eq(get_be32(b + 20), l.max_unmap_lba_count);
		cr_assert_eq(get_be32(b + 24), l.max_unmap_descriptors);
		cr_assert_eq(get_be32(b + 32), 0x80000000u, "UGAVALID");
	} else {
		cr_assert_eq(get_be32(b + 20), 0);
		cr_assert_eq(get_be32(b + 24), 0);
	}
}

BOTH_STORES(vpd, characteristics_and_provisioning)
{
	uint8_t b[64];
	struct th_result r = vpd(0xb1, 64, b, 64);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be16(b + 2), 0x3c);
	cr_assert_eq(get_be16(b + 4), 1, "non-rotating");
	fx_dev->p.rotational = true;
	r = vpd(0xb1, 64, b, 64);
	cr_assert_eq(get_be16(b + 4), 0);

	r = vpd(0xb2, 64, b, 64);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be16(b + 2), 4);
	if (sbc_thin(fx_dev)) {
		cr_assert_eq(b[5] & 0xe0, 0xe0, "LBPU LBPWS LBPWS10");
		cr_assert_eq(b[6] & 7, 2, "thin");
		cr_assert_eq(!!(b[5] & 0x04), sbc_lbprz(fx_dev), "LBPRZ");
	} else {
		cr_assert_eq(b[5], 0);
		cr_assert_eq(b[6] & 7, 0);
	}
}

BOTH_STORES(vpd, allocation_length_cuts_pages)
{
	uint8_t b[8];
	struct th_result r;

	memset(b, 0xee, sizeof(b));
	r = vpd(0x83, 6, b, 8);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 6);
	cr_assert_eq(b[6], 0xee);
	cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(r.resid, 2);
}

BOTH_STORES(vpd, configured_naa)
{
	uint8_t b[512];
	const uint8_t *d;
	static const uint8_t naa6[16] = {0x60, 0x01, 0x40, 0x51, 1, 2,	3,  4,
					 5,    6,    7,	   8,	 9, 10, 11, 12};
	static const uint8_t naa5[8] = {0x50, 0x01, 0x40, 0x51, 9, 8, 7, 6};

	memcpy(fx_dev->p.naa_bytes, naa6, 16);
	fx_dev->p.naa_len = 16;
	struct th_result r = vpd(0x83, 512, b, 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	d = find_desig(b, 0, 3);
	cr_assert_eq(d[3], 16);
	cr_assert_eq(memcmp(d + 4, naa6, 16), 0, "configured NAA 6 used as given");

	memset(fx_dev->p.naa_bytes, 0, 16);
	memcpy(fx_dev->p.naa_bytes, naa5, 8);
	fx_dev->p.naa_len = 8;
	r = vpd(0x83, 512, b, 512);
	d = find_desig(b, 0, 3);
	cr_assert_eq(d[3], 8, "the configured 8-byte NAA, as SCST reports it");
	cr_assert_eq(memcmp(d + 4, naa5, 8), 0);
	d += 4 + d[3];
	cr_assert_neq(d[1] & 0x3f, 0x03, "and no NAA of ours after it: the WWID stays SCST's");
	cr_assert(scsi_dev_has_lu_designator(fx_dev, 3, naa5, 8));
	cr_assert_not(scsi_dev_has_lu_designator(fx_dev, 3, naa6, 16));
}

/* eui64_id, vend_specific_id and scsi_device_name as SCST's vdisk_dev_id_vpd() reports them:
 * the target device's SCSI name string (UTF-8, no PIV, 1-4 NULs of padding), the T10 vendor
 * designator carrying vend_specific_id, the EUI-64 designator and no NAA of ours. */
BOTH_STORES(vpd, scst_identity_attributes)
{
	static const uint8_t eui[8] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77};
	static const uint8_t name_desig[] = {0x03, 0x28, 0x00, 0x0c, 'i', 'q', 'n', '.',
					     'x',  ':',	 'l',  'u',  '1', 0,   0,   0};
	uint8_t b[512];
	const uint8_t *d;
	unsigned n = 0;

	memcpy(fx_dev->p.eui64, eui, 8);
	fx_dev->p.eui64_len = 8;
	snprintf(fx_dev->p.vend_specific_id, sizeof(fx_dev->p.vend_specific_id), "vsid-7");
	snprintf(fx_dev->p.scsi_device_name, sizeof(fx_dev->p.scsi_device_name), "iqn.x:lu1");
	struct th_result r = vpd(0x83, 512, b, 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(memcmp(b + 4, name_desig, sizeof(name_desig)), 0,
		     "the configured target device name first, exactly as SCST writes it");
	d = find_desig(b, 0, 2);
	cr_assert_not_null(d);
	cr_assert_eq(d[0], 0x01, "binary");
	cr_assert_eq(d[3], 8);
	cr_assert_eq(memcmp(d + 4, eui, 8), 0);
	cr_assert_null(find_desig(b, 0, 3), "no derived NAA next to SCST's EUI-64");
	d = find_desig(b, 0, 1);
	cr_assert_eq(d[3], 8 + 6);
	cr_assert_eq(memcmp(d + 4, "UTGT    vsid-7", 14), 0);
	/* only one target device name: the configured one */
	for (unsigned off = 4; off < 4u + get_be16(b + 2); off += 4 + b[off + 3])
		n += (b[off + 1] & 0x3f) == 0x28;
	cr_assert_eq(n, 1);
	cr_assert(scsi_dev_has_lu_designator(fx_dev, 2, eui, 8), "EXTENDED COPY finds it");
	/* a name of a multiple of 4 characters still gets NULs: 4 of them */
	snprintf(fx_dev->p.scsi_device_name, sizeof(fx_dev->p.scsi_device_name), "abcd");
	r = vpd(0x83, 512, b, 512);
	cr_assert_eq(b[7], 8);
	cr_assert_eq(memcmp(b + 8, "abcd\0\0\0\0", 8), 0);
}

/* VPD B1 byte 7: WABEREQ and WACEREQ 01b promise that a read of a block sanitized by BLOCK
 * ERASE / CRYPTOGRAPHIC ERASE and not written since completes with GOOD (libiscsi's Sanitize
 * BlockErase/CryptoErase check them); hold the LU to that promise. */
BOTH_STORES(vpd, characteristics_read_after_erase)
{
	uint8_t b[64], data[512];
	struct th_result r = vpd(0xb1, 64, b, 64);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq((b[7] >> 4) & 3, 1, "WACEREQ %u", (b[7] >> 4) & 3);
	cr_assert_eq(b[7] & 0x0f, 0, "WCEREQ/FUAB/VBULS not claimed");
	/* WABEREQ is 00b where BLOCK ERASE is not offered (libiscsi: "WABEREQ is not 0 but
	 * SANITIZE BLOCK ERASE opcode is not supported"): fully provisioned LUs */
	fx_dev->bs->thin_provisioned = false;
	r = vpd(0xb1, 64, b, 64);
	cr_assert_eq(b[7] >> 6, 0, "WABEREQ %u without BLOCK ERASE", b[7] >> 6);
	cr_assert_eq((b[7] >> 4) & 3, 1);
	fx_dev->bs->thin_provisioned = true; /* BLOCK ERASE is offered on thin LUs only */
	r = vpd(0xb1, 64, b, 64);
	cr_assert_eq(b[7] >> 6, 1, "WABEREQ %u", b[7] >> 6);
	for (uint8_t sa = 2; sa <= 3; sa++) {
		uint8_t san[10] = {0x48, sa, 0, 0, 0, 0, 0, 0, 0, 0};
		uint8_t rd[10] = {0x28, 0, 0, 0, 0, 7, 0, 0, 1, 0};

		th_clear_ua(&fx_nx, 0);
		r = th_exec(&fx_nx, 0, san, 10, SCSI_DIR_NONE, NULL, 0);
		cr_assert_eq(r.status, SAM_STAT_GOOD, "SANITIZE sa %u", sa);
		memset(data, 0xa5, sizeof(data));
		r = th_exec(&fx_nx, 0, rd, 10, SCSI_DIR_READ, data, sizeof(data));
		cr_assert_eq(r.status, SAM_STAT_GOOD, "READ after erase sa %u", sa);
		for (unsigned i = 0; i < sizeof(data); i++)
			cr_assert_eq(data[i], 0, "byte %u after erase", i);
	}
}
