/* UNMAP: deallocate the ranges of a parameter list.
 *
 * Only a thin LU (LBPME, VPD B2 LBPU=1) supports it; elsewhere the command does not exist for
 * the LU: INVALID COMMAND OPERATION CODE, as LIO answers and as VPD B2 announces.
 * The whole list is validated before anything is deallocated, so a bad list changes nothing:
 *   PARAMETER LIST LENGTH 0: nothing to do, GOOD (SBC);
 *   a list shorter than its 8-byte header, or a BLOCK DESCRIPTOR DATA LENGTH running past the
 *     data received: PARAMETER LIST LENGTH ERROR 1A/00;
 *   more descriptors than MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT, or more blocks in total than
 *     MAXIMUM UNMAP LBA COUNT: INVALID FIELD IN PARAMETER LIST 26/00 with the field pointed at;
 *   a descriptor past the end of the medium: LBA OUT OF RANGE 21/00;
 *   ANCHOR: INVALID FIELD IN CDB (ANC_SUP=0).
 * A trailing partial descriptor (length not a multiple of 16) is ignored, as SBC says. */
#include <stdlib.h>

#include "scsi/sbc.h"

#define HDR 8
#define DESC 16

static enum scsi_sr unmap_work(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint16_t plen = get_be16(t->cdb + 7);
	uint8_t *list = malloc(plen);
	uint32_t ndesc;
	enum bs_status st = BS_OK;

	if (!list)
		return SR_NO_MEMORY;
	scsi_data_out(t, list, plen);
	ndesc = get_be16(list + 2) / DESC;
	for (uint32_t i = 0; i < ndesc && st == BS_OK; i++) {
		const uint8_t *d = list + HDR + i * DESC;
		uint32_t n = get_be32(d + 8);

		if (n)
			st = sbc_unmap_sync(dev, get_be64(d), n);
	}
	free(list);
	return st == BS_OK ? SR_OK : scsi_sr_from_bs(st, true);
}

enum scsi_sr sbc_unmap(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint16_t plen = get_be16(t->cdb + 7);
	uint64_t lo = UINT64_MAX, hi = 0, total = 0;
	struct sbc_limits lim;
	uint32_t have, bd_len, ndesc;
	uint8_t *list;
	enum scsi_sr sr = SR_OK;

	if (!sbc_thin(dev))
		return SR_INVALID_OPCODE;
	if (t->cdb[1] & 0x01)
		return scsi_invalid_cdb(t, 1, 0);
	sr = sbc_check_medium(t);
	if (sr != SR_OK || plen == 0)
		return sr;
	list = malloc(plen);
	if (!list)
		return SR_NO_MEMORY;
	have = scsi_data_out(t, list, plen);
	sbc_task_limits(t, &lim);
	if (have < HDR) {
		sr = SR_PARAM_LIST_LENGTH_ERROR;
		goto out;
	}
	bd_len = get_be16(list + 2);
	if (bd_len > have - HDR) {
		sr = SR_PARAM_LIST_LENGTH_ERROR;
		goto out;
	}
	ndesc = bd_len / DESC;
	if (ndesc > lim.max_unmap_descriptors) {
		sr = scsi_invalid_param(t, 2, -1);
		goto out;
	}
	for (uint32_t i = 0; i < ndesc; i++) {
		const uint8_t *d = list + HDR + i * DESC;
		uint64_t lba = get_be64(d);
		uint32_t n = get_be32(d + 8);

		sr = sbc_check_range(t, lba, n);
		if (sr != SR_OK)
			goto out;
		total += n;
		if (total > lim.max_unmap_lba_count) {
			sr = scsi_invalid_param(t, (uint16_t)(HDR + i * DESC + 8), -1);
			goto out;
		}
		if (n && lba < lo)
			lo = lba;
		if (n && lba + n > hi)
			hi = lba + n;
	}
out:
	free(list);
	if (sr != SR_OK || total == 0)
		return sr;
	/* one shared lock over the span of all the ranges: a COMPARE AND WRITE in between waits */
	return sbc_locked_work(t, lo, hi - lo, false, unmap_work);
}
