/* REPORT SUPPORTED OPERATION CODES and REPORT SUPPORTED TASK MANAGEMENT FUNCTIONS (SPC-4
 * 6.35, 6.36).  The command list is generated from scsi_cmd_table, the same table that
 * dispatches, so what we report is exactly what we execute; an entry's per-LU view
 * (scsi_cmd_desc.lu_support) leaves out what this LU does not offer (UNMAP on a fully
 * provisioned LU) and clears the usage bits of fields it refuses (WRITE SAME's UNMAP).
 *
 * Reporting options: 000b all commands; 001b one opcode (refused if it has service actions);
 * 010b opcode + service action (refused if it has none); 011b opcode + service action, the
 * service action ignored for an opcode without them.  RCTD adds a command timeouts descriptor
 * whose timeouts are 0 ("not specified"): we do not promise times we cannot know. */
#include <stdlib.h>
#include <string.h>

#include "scsi/scsi_core.h"

#define CTD_LEN 12 /* command timeouts descriptor */

static void put_ctd(uint8_t *p)
{
	memset(p, 0, CTD_LEN);
	put_be16(p, CTD_LEN - 2);
}

static bool opcode_has_sa(uint8_t op)
{
	for (unsigned i = 0; i < scsi_cmd_table_len; i++)
		if (scsi_cmd_table[i].opcode == op)
			return scsi_cmd_table[i].flags & SCSI_CF_SA;
	return false;
}

static enum scsi_sr report_all(struct scsi_task *t, bool rctd, uint32_t alloc)
{
	unsigned dlen = 8 + (rctd ? CTD_LEN : 0);
	uint32_t len = 4 + scsi_cmd_table_len * dlen;
	uint8_t *buf = calloc(1, len);
	uint8_t *p;

	if (!buf)
		return SR_NO_MEMORY;
	p = buf + 4;
	for (unsigned i = 0; i < scsi_cmd_table_len; i++) {
		const struct scsi_cmd_desc *d = &scsi_cmd_table[i];
		if (!scsi_cmd_on_lu(d, t->core.dev, NULL))
			continue;
		p[0] = d->opcode;
		if (d->flags & SCSI_CF_SA) {
			put_be16(p + 2, d->sa);
			p[5] |= 0x01; /* SERVACTV */
		}
		if (rctd) {
			p[5] |= 0x02; /* CTDP */
			put_ctd(p + 8);
		}
		put_be16(p + 6, d->cdb_len);
		p += dlen;
	}
	len = (uint32_t)(p - buf);
	put_be32(buf, len - 4);
	scsi_data_in(t, buf, len < alloc ? len : alloc);
	free(buf);
	return SR_OK;
}

static enum scsi_sr report_one(struct scsi_task *t, const struct scsi_cmd_desc *d, bool rctd,
			       uint32_t alloc)
{
	uint8_t buf[4 + 16 + CTD_LEN];
	uint32_t len = 4;

	uint8_t usage[16];

	memset(buf, 0, sizeof(buf));
	if (d)
		memcpy(usage, d->usage, sizeof(usage));
	if (!d || !scsi_cmd_on_lu(d, t->core.dev, usage)) {
		buf[1] = 0x01; /* not supported */
	} else {
		buf[1] = 0x03; /* supported, in conformance with a standard */
		put_be16(buf + 2, d->cdb_len);
		memcpy(buf + 4, usage, d->cdb_len);
		len += d->cdb_len;
		if (rctd) {
			buf[1] |= 0x80; /* CTDP */
			put_ctd(buf + len);
			len += CTD_LEN;
		}
	}
	scsi_data_in(t, buf, len < alloc ? len : alloc);
	return SR_OK;
}

enum scsi_sr spc_report_supported_opcodes(struct scsi_task *t)
{
	bool rctd = t->cdb[2] & 0x80;
	uint8_t opts = t->cdb[2] & 0x07, op = t->cdb[3];
	uint16_t sa = get_be16(t->cdb + 4);
	uint32_t alloc = get_be32(t->cdb + 6);
	bool has_sa;

	if (t->cdb[2] & 0x78)
		return scsi_invalid_cdb(t, 2, scsi_msb(t->cdb[2] & 0x78));
	switch (opts) {
	case 0:
		return report_all(t, rctd, alloc);
	case 1:
		if (opcode_has_sa(op))
			return scsi_invalid_cdb(t, 3, -1);
		return report_one(t, scsi_cmd_find(op, 0, false, t->core.dev), rctd, alloc);
	case 2:
		has_sa = opcode_has_sa(op);
		if (!has_sa && scsi_cmd_opcode_known(op))
			return scsi_invalid_cdb(t, 3, -1);
		return report_one(t, has_sa ? scsi_cmd_find(op, sa, true, t->core.dev) : NULL, rctd, alloc);
	case 3:
		return report_one(t, scsi_cmd_find(op, sa, opcode_has_sa(op), t->core.dev), rctd, alloc);
	default:
		return scsi_invalid_cdb(t, 2, 2);
	}
}

enum scsi_sr spc_report_supported_tmfs(struct scsi_task *t)
{
	bool repd = t->cdb[2] & 0x80;
	uint32_t alloc = get_be32(t->cdb + 6);
	uint8_t buf[16];
	uint32_t len = repd ? 16 : 4;

	if (alloc < 4)
		return scsi_invalid_cdb(t, 6, -1);
	memset(buf, 0, sizeof(buf));
	/* ABORT TASK, ABORT TASK SET, CLEAR TASK SET, LOGICAL UNIT RESET, QUERY TASK, TARGET RESET
	 * (CLEAR ACA and WAKEUP are not supported) */
	buf[0] = 0x80 | 0x40 | 0x10 | 0x08 | 0x04 | 0x02;
	/* QUERY ASYNCHRONOUS EVENT, QUERY TASK SET, I_T NEXUS RESET */
	buf[1] = 0x04 | 0x02 | 0x01;
	if (repd)
		buf[3] = 0x0c; /* additional data length; timeouts not specified */
	scsi_data_in(t, buf, len < alloc ? len : alloc);
	return SR_OK;
}
