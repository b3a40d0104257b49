/* READ DEFECT DATA (10) and (12): our media have no defects, so the answer is an empty list in
 * the format asked for, with PLISTV/GLISTV saying that the primary/grown lists requested are
 * valid (and empty).  The header is 4 bytes for (10) and 8 for (12) (SBC-3); the allocation
 * length cuts it like any other data-in. */
#include "scsi/sbc.h"

enum scsi_sr sbc_read_defect_data(struct scsi_task *t)
{
	bool twelve = t->cdb[0] == 0xb7;
	uint8_t req = twelve ? t->cdb[1] : t->cdb[2];
	uint32_t alloc = twelve ? get_be32(t->cdb + 6) : get_be16(t->cdb + 7);
	uint8_t b[8] = {0};
	uint32_t len = twelve ? 8 : 4;

	/* byte 1: PLISTV (bit 4) and GLISTV (bit 3) mirror REQ_PLIST/REQ_GLIST; the defect list
	 * format (bits 2-0) is the one requested: an empty list is valid in every format. */
	b[1] = req & 0x1f;
	/* DEFECT LIST LENGTH: 0 (bytes 2-3 in (10), 4-7 in (12)) */
	scsi_data_in(t, b, alloc < len ? alloc : len);
	return SR_OK;
}
