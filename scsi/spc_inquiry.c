/* INQUIRY (SPC-4 6.6): standard data here, VPD pages in spc_vpd.c. */
#include <string.h>

#include "scsi/scsi_core.h"

#define STD_INQ_LEN 96

/* Copy s into a fixed-width, space-padded ASCII field. */
void scsi_put_ascii(uint8_t *dst, size_t width, const char *s)
{
	size_t n = strlen(s);

	memset(dst, ' ', width);
	memcpy(dst, s, n < width ? n : width);
}

/* 000b/00h: a connected direct-access LU.  011b/1Fh: no LU at this LUN.  001b/1Fh for a nullio
 * device configured `dummy 1`: SCST's placeholder LUN, a device "not connected" whose type is
 * unknown (SCST changes nothing else for it: it stays a nullio disk underneath). */
uint8_t scsi_inquiry_peripheral(const struct scsi_dev *dev)
{
	if (!dev)
		return 0x03 << 5 | 0x1f;
	if (dev->bs && dev->bs->dummy)
		return 0x01 << 5 | 0x1f;
	return dev->p.type; /* 00h direct access, 05h CD-ROM */
}

static void standard_inquiry(struct scsi_task *t, uint8_t *b)
{
	struct scsi_dev *dev = t->core.dev;
	const struct scsi_dev_params *p = dev ? &dev->p : NULL;
	bool cd = p && p->type == SCSI_TYPE_CDROM;
	unsigned vd = 58;

	memset(b, 0, STD_INQ_LEN);
	b[0] = scsi_inquiry_peripheral(dev);
	b[1] = (p && p->removable) ? 0x80 : 0; /* RMB */
	b[2] = 0x06;                           /* SPC-4 */
	b[3] = 0x10 | 0x02;                    /* HISUP, response data format 2 */
	b[4] = STD_INQ_LEN - 5;
	/* TPGS 01b: implicit ALUA (see spc_alua.c), 11b where SET TARGET PORT GROUPS moves the
	 * owner; 3PC: EXTENDED COPY is offered (to disks) */
	b[5] = cd ? 0x10 : 0x10 | 0x08;
	if (scsi_dev_explicit_alua(dev))
		b[5] |= 0x20;
	b[7] = 0x02; /* CMDQUE */
	scsi_put_ascii(b + 8, 8, p ? p->vendor : "UTGT");
	scsi_put_ascii(b + 16, 16, p ? p->product : "");
	scsi_put_ascii(b + 32, 4, p ? p->revision : "0100");
	/* version descriptors */
	put_be16(b + vd, 0x00a0); /* SAM-5 */
	vd += 2;
	put_be16(b + vd, 0x0460); /* SPC-4 */
	vd += 2;
	put_be16(b + vd, cd ? 0x0420 : 0x04c0); /* MMC-5 or SBC-3 */
	vd += 2;
	if (t->nexus && t->nexus->proto == SCSI_PROTO_ISCSI)
		put_be16(b + vd, 0x0960); /* iSCSI */
	else if (t->nexus && t->nexus->proto == SCSI_PROTO_SRP)
		put_be16(b + vd, 0x0940); /* SRP */
}

enum scsi_sr spc_inquiry(struct scsi_task *t)
{
	bool evpd = t->cdb[1] & 0x01;
	uint8_t page = t->cdb[2];
	uint16_t alloc = get_be16(t->cdb + 3);
	uint8_t b[STD_INQ_LEN];

	if (t->cdb[1] & 0x02) /* CmdDt: obsolete, not supported */
		return scsi_invalid_cdb(t, 1, 1);
	if (t->cdb[1] & 0xfc)
		return scsi_invalid_cdb(t, 1, scsi_msb(t->cdb[1] & 0xfc));
	if (evpd) {
		enum scsi_sr sr;

		if (!t->core.dev)
			return SR_LUN_NOT_SUPPORTED;
		pthread_rwlock_rdlock(&t->core.dev->ident_lock);
		sr = spc_vpd_page(t, page, alloc);
		pthread_rwlock_unlock(&t->core.dev->ident_lock);
		return sr;
	}
	if (page)
		return scsi_invalid_cdb(t, 2, -1);
	if (t->core.dev)
		pthread_rwlock_rdlock(&t->core.dev->ident_lock);
	standard_inquiry(t, b);
	if (t->core.dev)
		pthread_rwlock_unlock(&t->core.dev->ident_lock);
	scsi_data_in(t, b, STD_INQ_LEN < alloc ? STD_INQ_LEN : alloc);
	return SR_OK;
}
