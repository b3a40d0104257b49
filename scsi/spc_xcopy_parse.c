/* EXTENDED COPY(LID1) parameter list (SPC-4 6.4): header, CSCD descriptors (identification
 * descriptor E4h only), segment descriptors (block to block 02h only), inline data (none
 * accepted: no segment type we implement uses it).  Errors name the offending parameter-list
 * byte through the sense-key-specific field pointer.
 *
 * CSCD lookup follows the rule in spc_xcopy.h: only among the requesting nexus's LUs. */
#include <string.h>

#include "scsi/spc_xcopy.h"

#define XC_HDR_LEN 16

/* Designation descriptor header inside an E4h descriptor (bytes 4..7). */
#define DESIG_CODE_SET_BINARY 0x1
#define DESIG_ASSOC_LU	      0x0
#define DESIG_TYPE_EUI64      0x2
#define DESIG_TYPE_NAA	      0x3

static enum scsi_sr resolve_cscd(struct scsi_task *t, const uint8_t *d, uint32_t off,
				 struct xc_target *out)
{
	const struct scsi_lun_table *luns = t->core.luns;
	uint8_t code_set = d[4] & 0x0f, assoc = (d[5] >> 4) & 0x3, type = d[5] & 0x0f;
	uint8_t dlen = d[7];
	uint32_t block_len = get_be24(d + 29);

	if (d[1] & 0x20) /* NUL: a null device we do not offer */
		return scsi_invalid_param(t, (uint16_t)(off + 1), 5);
	if ((d[1] & 0x1f) != 0) /* only direct-access block devices */
		return scsi_invalid_param(t, (uint16_t)(off + 1), 4);
	if (dlen > 20)
		return scsi_invalid_param(t, (uint16_t)(off + 7), -1);
	/* An LU is named by a designator VPD 83 reports for it (NAA, or EUI-64 when configured):
	 * anything else cannot name one of our LUs, which for a copy manager means the copy
	 * target is unreachable. */
	if (code_set != DESIG_CODE_SET_BINARY || assoc != DESIG_ASSOC_LU ||
	    (type != DESIG_TYPE_NAA && type != DESIG_TYPE_EUI64) || dlen > 16)
		return SR_COPY_TARGET_UNREACHABLE;
	for (unsigned i = 0; luns && i < luns->n; i++) {
		struct scsi_dev *dev = luns->e[i].dev;

		if (!dev || !scsi_dev_has_lu_designator(dev, type, d + 8, dlen))
			continue;
		if (block_len != dev->block_size)
			return scsi_invalid_param(t, (uint16_t)(off + 29), -1);
		out->dev = dev;
		out->ent = &luns->e[i];
		return SR_OK;
	}
	return SR_COPY_TARGET_UNREACHABLE;
}

static enum scsi_sr parse_segment(struct scsi_task *t, const uint8_t *d, uint32_t off,
				  uint32_t room, const struct xc_list *l, struct xc_segment *s,
				  uint32_t *used)
{
	uint32_t dlen;

	if (room < 4)
		return SR_PARAM_LIST_LENGTH_ERROR;
	if (d[0] != XC_SEG_BLOCK_TO_BLOCK) {
		(void)scsi_invalid_param(t, (uint16_t)off, -1); /* the field pointer only */
		return SR_UNSUPPORTED_SEGMENT_DESCRIPTOR;
	}
	dlen = 4u + get_be16(d + 2);
	if (dlen != XC_SEG_B2B_LEN)
		return scsi_invalid_param(t, (uint16_t)(off + 2), -1);
	if (dlen > room)
		return SR_PARAM_LIST_LENGTH_ERROR;
	s->src = get_be16(d + 4);
	s->dst = get_be16(d + 6);
	/* An index past the CSCD list names no copy target: COPY ABORTED, with the field
	 * pointer (segment pointer format, relative to the parameter list) on the index. */
	if (s->src >= l->ntargets) {
		(void)scsi_invalid_param(t, (uint16_t)(off + 4), -1);
		return SR_COPY_TARGET_UNREACHABLE;
	}
	if (s->dst >= l->ntargets) {
		(void)scsi_invalid_param(t, (uint16_t)(off + 6), -1);
		return SR_COPY_TARGET_UNREACHABLE;
	}
	s->dc = d[1] & 0x02;
	s->nblocks = get_be16(d + 10);
	s->src_lba = get_be64(d + 12);
	s->dst_lba = get_be64(d + 20);
	s->desc_off = off;
	*used = dlen;
	return SR_OK;
}

enum scsi_sr xc_parse(struct scsi_task *t, const uint8_t *buf, uint32_t len, struct xc_list *l)
{
	uint32_t tdl, sdl, inl, off, end;
	enum scsi_sr sr;

	memset(l, 0, sizeof(*l));
	if (len < XC_HDR_LEN)
		return SR_PARAM_LIST_LENGTH_ERROR;
	l->list_id = buf[0];
	l->list_id_usage = (buf[1] >> 3) & 0x3;
	if (l->list_id_usage == 1)
		return scsi_invalid_param(t, 1, 4);
	if (l->list_id_usage == XC_LID_NONE && l->list_id != 0)
		return scsi_invalid_param(t, 0, -1);
	tdl = get_be16(buf + 2);
	sdl = get_be32(buf + 8);
	inl = get_be32(buf + 12);
	if ((uint64_t)XC_HDR_LEN + tdl + sdl + inl > len)
		return SR_PARAM_LIST_LENGTH_ERROR;
	/* longer than OPERATING PARAMETERS' MAXIMUM DESCRIPTOR LIST LENGTH: a length error, before
	 * the per-kind counts (what libiscsi's ExtendedCopy.DescrLimits expects) */
	if ((uint64_t)tdl + sdl > XC_MAX_DESC_LIST_LEN)
		return SR_PARAM_LIST_LENGTH_ERROR;
	if (tdl % XC_TARGET_DESC_LEN)
		return scsi_invalid_param(t, 2, -1);
	if (tdl / XC_TARGET_DESC_LEN > XC_MAX_TARGETS)
		return SR_TOO_MANY_TARGET_DESCRIPTORS;
	if (inl)
		return scsi_invalid_param(t, 12, -1); /* MAXIMUM INLINE DATA LENGTH is 0 */

	/* Every descriptor's type is checked before any LU is looked up, so an unsupported
	 * descriptor is reported as such even when an earlier one names an unknown LU. */
	for (off = XC_HDR_LEN; off < XC_HDR_LEN + tdl; off += XC_TARGET_DESC_LEN)
		if (buf[off] != XC_CSCD_ID) {
			(void)scsi_invalid_param(t, (uint16_t)off, -1); /* the field pointer only */
			return SR_UNSUPPORTED_TARGET_DESCRIPTOR;
		}

	off = XC_HDR_LEN + tdl;
	end = off + sdl;
	l->ntargets = tdl / XC_TARGET_DESC_LEN;
	while (off < end) {
		uint32_t used = 0;
		if (l->nsegs == XC_MAX_SEGMENTS)
			return SR_TOO_MANY_SEGMENT_DESCRIPTORS;
		sr = parse_segment(t, buf + off, off, end - off, l, &l->seg[l->nsegs], &used);
		if (sr != SR_OK)
			return sr;
		l->nsegs++;
		off += used;
	}

	for (unsigned i = 0; i < l->ntargets; i++) {
		uint32_t doff = XC_HDR_LEN + i * XC_TARGET_DESC_LEN;
		sr = resolve_cscd(t, buf + doff, doff, &l->tgt[i]);
		if (sr != SR_OK)
			return sr;
	}
	return SR_OK;
}
