/* scsi/scsi_opcodes.c: invariants of the opcode table that dispatch, admission and REPORT
 * SUPPORTED OPERATION CODES rely on. */
#include "scsi_harness.h"

static unsigned group_len(uint8_t op)
{
	switch (op >> 5) {
	case 0:
		return 6;
	case 1:
	case 2:
		return 10;
	case 4:
		return 16;
	case 5:
		return 12;
	}
	return 0;
}

Test(opcodes, usage_bitmaps_match_cdb_length)
{
	for (unsigned i = 0; i < scsi_cmd_table_len; i++) {
		const struct scsi_cmd_desc *d = &scsi_cmd_table[i];
		cr_assert_eq(d->usage[0], d->opcode, "%s: byte 0 is the opcode", d->name);
		cr_assert_eq(d->cdb_len, group_len(d->opcode), "%s: CDB length", d->name);
		/* NACA, LINK (and the obsolete FLAG); the vendor-specific bits 7-6 only where the
		 * handler reads them (READ TOC's SFF-8020 format) */
		cr_assert_eq(d->usage[d->cdb_len - 1] & 0x3f, 0x07, "%s: control byte at %u",
			     d->name, d->cdb_len - 1);
		if (d->opcode != 0x43)
			cr_assert_eq(d->usage[d->cdb_len - 1], 0x07, "%s: vendor bits", d->name);
		for (unsigned k = d->cdb_len; k < 16; k++)
			cr_assert_eq(d->usage[k], 0, "%s: usage past the CDB at %u", d->name, k);
		if (d->flags & SCSI_CF_SA) {
			cr_assert_eq(d->usage[1] & 0x1f, 0x1f, "%s: SA bits in byte 1", d->name);
			cr_assert_leq(d->sa, 0x1f);
		}
	}
}

Test(opcodes, rows_are_grouped_unique_and_complete)
{
	for (unsigned i = 0; i < scsi_cmd_table_len; i++) {
		const struct scsi_cmd_desc *d = &scsi_cmd_table[i];
		cr_assert_not_null(d->fn, "%s", d->name);
		cr_assert_not_null(d->name);
		cr_assert_not((d->flags & SCSI_CF_DATA_IN) && (d->flags & SCSI_CF_DATA_OUT), "%s",
			      d->name);
		cr_assert_leq(d->pr_class, PRC_PROUT);
		if (i) {
			const struct scsi_cmd_desc *p = &scsi_cmd_table[i - 1];
			cr_assert_geq(d->opcode, p->opcode, "table sorted by opcode at %s", d->name);
			if (d->opcode == p->opcode && !(d->flags & SCSI_CF_SA)) {
				/* one opcode, two device types (42h: UNMAP / READ SUB-CHANNEL):
				 * the rows must never both apply to one LU */
				const struct scsi_dev disk = {0};
				const struct scsi_dev cd = {.p.type = SCSI_TYPE_CDROM};
				cr_assert_not(p->flags & SCSI_CF_SA, "%s", d->name);
				cr_assert_not(scsi_cmd_for_type(d, &disk) && scsi_cmd_for_type(p, &disk),
					      "%s / %s both on a disk", p->name, d->name);
				cr_assert_not(scsi_cmd_for_type(d, &cd) && scsi_cmd_for_type(p, &cd),
					      "%s / %s both on a CD-ROM", p->name, d->name);
			} else if (d->opcode == p->opcode) {
				cr_assert(d->flags & SCSI_CF_SA);
				cr_assert(p->flags & SCSI_CF_SA);
				cr_assert_gt(d->sa, p->sa, "%s: service actions ascending", d->name);
			}
		}
		if (d->flags & SCSI_CF_WRITE)
			cr_assert_neq(d->pr_class, PRC_ALLOWED, "%s writes", d->name);
	}
}

Test(opcodes, commands_without_lu_neither_report_nor_clear_ua)
{
	for (unsigned i = 0; i < scsi_cmd_table_len; i++) {
		const struct scsi_cmd_desc *d = &scsi_cmd_table[i];
		if (d->flags & SCSI_CF_NO_LU)
			cr_assert(d->flags & SCSI_CF_NO_UA, "%s", d->name);
	}
}
