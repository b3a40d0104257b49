/* LUN addressing (SAM-5 4.7) and the per-nexus LUN table lookup. */
#include "scsi/scsi_lun.h"

#include <stddef.h>
#include <string.h>

const struct scsi_lun_entry *scsi_lun_lookup(const struct scsi_lun_table *t, uint64_t lun)
{
	size_t lo = 0, hi;

	if (!t || !t->e)
		return NULL;
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->e[mid].lun == lun)
			return &t->e[mid];
		if (t->e[mid].lun < lun)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Same LUN numbers, same LUs behind them, same LUN-level read_only. */
bool scsi_lun_tables_equal(const struct scsi_lun_table *a, const struct scsi_lun_table *b)
{
	unsigned na = a ? a->n : 0, nb = b ? b->n : 0;

	if (na != nb)
		return false;
	for (unsigned i = 0; i < na; i++)
		if (a->e[i].lun != b->e[i].lun || a->e[i].dev != b->e[i].dev ||
		    a->e[i].read_only != b->e[i].read_only)
			return false;
	return true;
}

/* Single-level LUNs only: peripheral device addressing (bus 0, LUN 0..255), flat space
 * (0..16383) and extended flat space (0xD2, 24-bit).  Anything else (hierarchical levels,
 * logical unit addressing, a non-zero bus) decodes to a number no table holds, so the
 * command gets LOGICAL UNIT NOT SUPPORTED rather than aliasing another LU. */
uint64_t scsi_lun_decode(const uint8_t lun[8])
{
	static const uint8_t zero[6];
	uint8_t method = lun[0] >> 6;

	if (lun[0] == 0xd2) {
		if (lun[4] || lun[5] || lun[6] || lun[7])
			return SCSI_LUN_INVALID;
		return (uint64_t)lun[1] << 16 | (uint64_t)lun[2] << 8 | lun[3];
	}
	if (memcmp(lun + 2, zero, 6) != 0)
		return SCSI_LUN_INVALID;
	if (method == 0) {
		if (lun[0] & 0x3f) /* bus identifier: we have one bus */
			return SCSI_LUN_INVALID;
		return lun[1];
	}
	if (method == 1)
		return (uint64_t)(lun[0] & 0x3f) << 8 | lun[1];
	return SCSI_LUN_INVALID;
}

void scsi_lun_encode(uint64_t lun, uint8_t out[8])
{
	memset(out, 0, 8);
	if (lun < 256) {
		out[1] = (uint8_t)lun;
	} else if (lun < 16384) {
		out[0] = 0x40 | (uint8_t)(lun >> 8);
		out[1] = (uint8_t)lun;
	} else {
		out[0] = 0xd2;
		out[1] = (uint8_t)(lun >> 16);
		out[2] = (uint8_t)(lun >> 8);
		out[3] = (uint8_t)lun;
	}
}
