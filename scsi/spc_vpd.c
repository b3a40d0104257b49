/* Vital product data pages (SPC-4 7.8, SBC-3 6.5) and the LU's NAA identifier.
 *
 * Pages: 00 supported pages, 80 unit serial number, 83 device identification, 86 extended
 * INQUIRY data, B0 block limits, B1 block device characteristics, B2 logical block
 * provisioning. */
#include <string.h>

#include "scsi/scsi_core.h"

/* The NAA IEEE Registered Extended identifier needs a 24-bit IEEE company id.  utgt has no
 * OUI of its own, so it uses 0A5547h: a value in the IEEE CID space (the ZYXM bits of the
 * first octet are 1010b), which by construction never equals a vendor's MA-L OUI, so our
 * identifiers cannot collide with real hardware.  The 100 bits after it are the vendor
 * specific identifier (36) and its extension (64), taken from the device's naa_id attribute
 * when set (a configured 16-byte NAA 6 naa_id is used exactly as given; an 8-byte NAA 2/3/5 one
 * is reported in VPD 83 in front of ours), else from two independent hashes of its unit serial
 * number, which is unique per device (by default derived from the device name) and stable
 * across restarts. */
#define UTGT_NAA_COMPANY_ID 0x0a5547u

static uint64_t fnv1a(const char *s, uint64_t h)
{
	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

void scsi_dev_naa(const struct scsi_dev *dev, uint8_t out[16])
{
	uint64_t vsid, ext;

	if (dev->p.naa_len == 16) { /* an NAA 6 identifier configured as it is (SCST naa_id) */
		memcpy(out, dev->p.naa_bytes, 16);
		return;
	}
	if (dev->p.naa_id) {
		vsid = 0;
		ext = dev->p.naa_id;
	} else {
		vsid = fnv1a(dev->p.usn, 0xcbf29ce484222325ull);
		ext = fnv1a(dev->p.usn, 0x84222325cbf29ce4ull ^ vsid);
	}
	vsid &= 0xfffffffffull; /* 36 bits */
	/* 4 bits NAA 6 | 24 bits company id | 36 bits vsid | 64 bits extension */
	out[0] = (uint8_t)(0x60 | (UTGT_NAA_COMPANY_ID >> 20));
	out[1] = (uint8_t)(UTGT_NAA_COMPANY_ID >> 12);
	out[2] = (uint8_t)(UTGT_NAA_COMPANY_ID >> 4);
	out[3] = (uint8_t)((UTGT_NAA_COMPANY_ID & 0xf) << 4 | (vsid >> 32));
	put_be32(out + 4, (uint32_t)vsid);
	put_be64(out + 8, ext);
}

#define VPD_MAX		 1024
#define DESIG_TYPE_EUI64 0x2
#define DESIG_TYPE_NAA	 0x3

/* The block device pages (B0h-B2h) exist for disks only, as in SCST. */
static bool block_device(const struct scsi_task *t)
{
	return t->core.dev->p.type == SCSI_TYPE_DISK;
}

static unsigned page_supported(struct scsi_task *t, uint8_t *b)
{
	static const uint8_t pages[] = {0x00, 0x80, 0x83, 0x86, 0xb0, 0xb1, 0xb2};
	unsigned n = block_device(t) ? sizeof(pages) : 4;

	memcpy(b + 4, pages, n);
	return n;
}

static unsigned page_serial(struct scsi_task *t, uint8_t *b)
{
	const char *usn = t->core.dev->p.usn;
	size_t n = strlen(usn);

	memcpy(b + 4, usn, n);
	return (unsigned)n;
}

/* Designation descriptor header; returns the offset of its body. */
static uint8_t *desig(uint8_t *p, uint8_t proto, uint8_t code_set, bool piv, uint8_t assoc,
		      uint8_t type, uint8_t len)
{
	p[0] = (uint8_t)(proto << 4 | code_set);
	p[1] = (uint8_t)((piv ? 0x80 : 0) | assoc << 4 | type);
	p[2] = 0;
	p[3] = len;
	return p + 4;
}

/* SCSI name string designator: UTF-8, NUL terminated, padded to a multiple of 4. */
static unsigned name_string(uint8_t *p, uint8_t proto, uint8_t assoc, const char *name)
{
	size_t n = strlen(name) + 1;
	size_t padded = (n + 3) & ~(size_t)3;

	if (padded > 252)
		padded = 252, n = 252;
	uint8_t *d = desig(p, proto, 3, true, assoc, 8, (uint8_t)padded);
	memset(d, 0, padded);
	memcpy(d, name, n - 1);
	return 4 + (unsigned)padded;
}

/* SCST's own identifiers win: a device with eui64_id or naa_id reports exactly those as its
 * LU designators (EUI-64, then NAA, as SCST does), so the WWID an initiator derives from them
 * (Linux and dm-multipath prefer NAA, then EUI-64) stays the one it had under SCST.  A device
 * with neither reports utgt's derived NAA 6. */
static bool scst_identity(const struct scsi_dev *dev)
{
	return dev->p.eui64_len || dev->p.naa_len;
}

static bool has_lu_designator(const struct scsi_dev *dev, uint8_t type, const uint8_t *id,
			      uint8_t len)
{
	uint8_t naa[16];

	if (type == DESIG_TYPE_EUI64)
		return dev->p.eui64_len && len == dev->p.eui64_len &&
		       !memcmp(id, dev->p.eui64, len);
	if (type != DESIG_TYPE_NAA)
		return false;
	if (scst_identity(dev))
		return dev->p.naa_len && len == dev->p.naa_len &&
		       !memcmp(id, dev->p.naa_bytes, len);
	scsi_dev_naa(dev, naa);
	return len == 16 && !memcmp(id, naa, 16);
}

bool scsi_dev_has_lu_designator(const struct scsi_dev *dev, uint8_t type, const uint8_t *id,
				uint8_t len)
{
	pthread_rwlock_t *l = (pthread_rwlock_t *)&dev->ident_lock; /* identity may change live */
	bool has;

	pthread_rwlock_rdlock(l);
	has = has_lu_designator(dev, type, id, len);
	pthread_rwlock_unlock(l);
	return has;
}

/* SCST's target device name: code set UTF-8, no PIV, padded with 1 to 4 NULs to a multiple of
 * 4 (scst_vdisk.c), at most the 252 bytes a designator can hold. */
static unsigned scst_device_name(uint8_t *p, const char *name)
{
	size_t n = strlen(name);
	size_t padded = n + 4 - n % 4;
	uint8_t *d;

	if (padded > 252)
		padded = 252, n = 251;
	d = desig(p, 0, 3, false, 2, 8, (uint8_t)padded);
	memset(d, 0, padded);
	memcpy(d, name, n);
	return 4 + (unsigned)padded;
}

static unsigned page_devid(struct scsi_task *t, uint8_t *b)
{
	struct scsi_dev *dev = t->core.dev;
	const struct scsi_nexus *nx = t->nexus;
	uint8_t proto = nx ? (uint8_t)nx->proto : SCSI_PROTO_ISCSI;
	const char *vsid = dev->p.vend_specific_id[0] ? dev->p.vend_specific_id : dev->p.t10_dev_id;
	const struct scsi_tpg *tpg;
	uint8_t *p = b + 4, *d;
	size_t idlen;

	if (dev->p.scsi_device_name[0])
		p += scst_device_name(p, dev->p.scsi_device_name);
	if (scst_identity(dev)) {
		if (dev->p.eui64_len) {
			d = desig(p, 0, 1, false, 0, DESIG_TYPE_EUI64, dev->p.eui64_len);
			memcpy(d, dev->p.eui64, dev->p.eui64_len);
			p = d + dev->p.eui64_len;
		}
		if (dev->p.naa_len) {
			d = desig(p, 0, 1, false, 0, DESIG_TYPE_NAA, dev->p.naa_len);
			memcpy(d, dev->p.naa_bytes, dev->p.naa_len);
			p = d + dev->p.naa_len;
		}
	} else {
		d = desig(p, 0, 1, false, 0, DESIG_TYPE_NAA, 16);
		scsi_dev_naa(dev, d);
		p = d + 16;
	}
	/* LU: T10 vendor id (ASCII): vendor, then vend_specific_id (SCST), else t10_dev_id */
	idlen = strlen(vsid);
	if (idlen > 128)
		idlen = 128;
	d = desig(p, 0, 2, false, 0, 1, (uint8_t)(8 + idlen));
	scsi_put_ascii(d, 8, dev->p.vendor);
	memcpy(d + 8, vsid, idlen);
	p = d + 8 + idlen;
	if (nx) {
		/* target port: relative target port identifier */
		d = desig(p, proto, 1, true, 1, 4, 4);
		d[0] = d[1] = 0;
		put_be16(d + 2, nx->rel_tgt_id);
		p = d + 4;
		/* target port: its target port group */
		tpg = scsi_dev_tpg(dev, nx->rel_tgt_id);
		d = desig(p, proto, 1, true, 1, 5, 4);
		d[0] = d[1] = 0;
		put_be16(d + 2, tpg ? tpg->group_id : SCSI_DEFAULT_TPG_ID);
		p = d + 4;
		/* target port and target device: SCSI name strings (a configured
		 * scsi_device_name is the target device's) */
		if (nx->target_port[0])
			p += name_string(p, proto, 1, nx->target_port);
		if (nx->target_name[0] && !dev->p.scsi_device_name[0])
			p += name_string(p, proto, 2, nx->target_name);
	}
	return (unsigned)(p - (b + 4));
}

static unsigned page_ext_inquiry(struct scsi_task *t, uint8_t *b)
{
	struct scsi_dev *dev = t->core.dev;

	b[5] = 0x07; /* HEADSUP, ORDSUP, SIMPSUP */
	/* V_SUP: a volatile cache exists (SYNCHRONIZE CACHE matters); NV_SUP: a non-volatile one */
	b[6] = dev->bs && dev->bs->nv_cache ? 0x02 : 0x01;
	return 60;
}

static unsigned page_block_limits(struct scsi_task *t, uint8_t *b)
{
	struct scsi_dev *dev = t->core.dev;
	struct sbc_limits l;

	memset(&l, 0, sizeof(l));
	sbc_task_limits(t, &l);
	b[4] = l.wsnz ? 0x01 : 0;
	b[5] = (uint8_t)(l.max_compare_write_blocks > 255 ? 255 : l.max_compare_write_blocks);
	put_be16(b + 6, (uint16_t)l.opt_xfer_granularity);
	put_be32(b + 8, l.max_xfer_blocks);
	put_be32(b + 12, l.opt_xfer_blocks);
	put_be32(b + 16, 0); /* maximum prefetch length: not reported */
	if (sbc_thin(dev)) {
		put_be32(b + 20, l.max_unmap_lba_count);
		put_be32(b + 24, l.max_unmap_descriptors);
		put_be32(b + 28, l.unmap_granularity);
		put_be32(b + 32, 0x80000000u); /* UGAVALID, alignment 0 */
	}
	put_be64(b + 36, l.max_write_same_blocks);
	put_be32(b + 44, l.max_atomic_blocks);
	put_be32(b + 48, l.atomic_alignment);
	put_be32(b + 52, l.atomic_granularity);
	return 60;
}

/* Does this LU offer SANITIZE with that service action (the opcode table's answer)? */
static bool sanitize_offered(const struct scsi_dev *dev, uint8_t sa)
{
	uint8_t cdb[16] = {0x48, sa};
	const struct scsi_cmd_desc *d = scsi_cmd_lookup_dev(cdb, dev);

	return d && scsi_cmd_on_lu(d, dev, NULL);
}

static unsigned page_characteristics(struct scsi_task *t, uint8_t *b)
{
	struct scsi_dev *dev = t->core.dev;

	/* medium rotation rate: 0001h non-rotating; 0 "not reported" for rotating media */
	put_be16(b + 4, dev->p.rotational ? 0 : 1);
	/* WABEREQ and WACEREQ 01b: a read of a block sanitized by BLOCK ERASE or CRYPTOGRAPHIC
	 * ERASE, not written since, completes with GOOD status (it reads zeros: sbc_sanitize.c
	 * deallocates or zero-fills).  SBC-4 says 00b would leave it unspecified, which libiscsi's
	 * Sanitize tests refuse once those service actions are reported, and want where one is
	 * not (BLOCK ERASE on a fully provisioned LU). */
	b[7] = (uint8_t)((sanitize_offered(dev, 0x02) ? 0x01 << 6 : 0) |
			 (sanitize_offered(dev, 0x03) ? 0x01 << 4 : 0));
	return 60;
}

static unsigned page_provisioning(struct scsi_task *t, uint8_t *b)
{
	struct scsi_dev *dev = t->core.dev;

	/* one provisioning answer for READ CAPACITY(16), this page, UNMAP and WRITE SAME */
	if (sbc_thin(dev)) {
		/* LBPU (UNMAP), LBPWS (WRITE SAME 16 + UNMAP), LBPWS10; LBPRZ when unmapped blocks
		 * read back as zeros */
		b[5] = 0x80 | 0x40 | 0x20 | (sbc_lbprz(dev) ? 0x04 : 0);
		b[6] = 0x02; /* provisioning type: thin */
	}
	return 4;
}

enum scsi_sr spc_vpd_page(struct scsi_task *t, uint8_t page, uint16_t alloc)
{
	uint8_t b[VPD_MAX];
	unsigned len;

	memset(b, 0, sizeof(b));
	if (page >= 0xb0 && !block_device(t))
		return scsi_invalid_cdb(t, 2, -1);
	switch (page) {
	case 0x00:
		len = page_supported(t, b);
		break;
	case 0x80:
		len = page_serial(t, b);
		break;
	case 0x83:
		len = page_devid(t, b);
		break;
	case 0x86:
		len = page_ext_inquiry(t, b);
		break;
	case 0xb0:
		len = page_block_limits(t, b);
		break;
	case 0xb1:
		len = page_characteristics(t, b);
		break;
	case 0xb2:
		len = page_provisioning(t, b);
		break;
	default:
		return scsi_invalid_cdb(t, 2, -1);
	}
	b[0] = scsi_inquiry_peripheral(t->core.dev);
	b[1] = page;
	put_be16(b + 2, (uint16_t)len);
	len += 4;
	scsi_data_in(t, b, len < alloc ? len : alloc);
	return SR_OK;
}
