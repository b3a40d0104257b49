/* REPORT LUNS (SPC-4 6.33): the LUs this I_T nexus may address, SAM-5 encoded.
 *
 * SELECT REPORT 00h and 02h list every LU (we have no well-known LUs, so they are the same);
 * 01h (well-known LUs only) and SPC-5's 10h-12h (administrative LUs and their subsidiaries)
 * return an empty list because we have none of those; other values are invalid. */
#include <stdlib.h>
#include <string.h>

#include "scsi/scsi_core.h"

enum scsi_sr spc_report_luns(struct scsi_task *t)
{
	const struct scsi_lun_table *tbl = t->core.luns;
	uint8_t select = t->cdb[2];
	uint32_t alloc = get_be32(t->cdb + 6);
	unsigned n = 0;
	uint32_t len;
	uint8_t *buf;

	if (alloc < 16)
		return scsi_invalid_cdb(t, 6, -1);
	switch (select) {
	case 0x00:
	case 0x02:
		n = tbl ? tbl->n : 0;
		break;
	case 0x01:
	case 0x10:
	case 0x11:
	case 0x12:
		break;
	default:
		return scsi_invalid_cdb(t, 2, -1);
	}
	len = 8 + 8 * n;
	buf = calloc(1, len);
	if (!buf)
		return SR_NO_MEMORY;
	put_be32(buf, 8 * n);
	for (unsigned i = 0; i < n; i++)
		scsi_lun_encode(tbl->e[i].lun, buf + 8 + 8 * i);
	scsi_data_in(t, buf, len < alloc ? len : alloc);
	free(buf);
	return SR_OK;
}
