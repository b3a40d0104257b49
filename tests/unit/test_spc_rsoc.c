/* scsi/spc_rsoc.c: REPORT SUPPORTED OPERATION CODES (all reporting options, RCTD) and REPORT
 * SUPPORTED TASK MANAGEMENT FUNCTIONS, checked against scsi_cmd_table. */
#include <stdlib.h>

#include "spc_fixture.h"

static struct th_result rsoc(uint8_t opts, uint8_t op, uint16_t sa, uint32_t alloc, uint8_t *buf)
{
	uint8_t cdb[12] = {0xa3, 0x0c, opts, op, (uint8_t)(sa >> 8), (uint8_t)sa};
	put_be32(cdb + 6, alloc);
	return th_exec(&fx_nx, 0, cdb, 12, SCSI_DIR_READ, buf, alloc);
}

BOTH_STORES(rsoc, all_commands)
{
	uint32_t alloc = 4 + scsi_cmd_table_len * 20 + 16;
	uint8_t *b = calloc(1, alloc);
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	r = rsoc(0, 0, 0, alloc, b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b), scsi_cmd_table_len * 8);
	cr_assert_eq(r.data_len, 4 + scsi_cmd_table_len * 8);
	for (unsigned i = 0; i < scsi_cmd_table_len; i++) {
		const uint8_t *d = b + 4 + 8 * i;
		const struct scsi_cmd_desc *c = &scsi_cmd_table[i];
		cr_assert_eq(d[0], c->opcode);
		cr_assert_eq(!!(d[5] & 1), !!(c->flags & SCSI_CF_SA), "%s SERVACTV", c->name);
		if (c->flags & SCSI_CF_SA)
			cr_assert_eq(get_be16(d + 2), c->sa);
		cr_assert_eq(get_be16(d + 6), c->cdb_len);
		cr_assert_eq(d[5] & 2, 0, "no CTDP without RCTD");
	}
	/* with RCTD: 20-byte descriptors, CTDP, timeouts descriptor length 0Ah */
	r = rsoc(0x80, 0, 0, alloc, b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b), scsi_cmd_table_len * 20);
	for (unsigned i = 0; i < scsi_cmd_table_len; i++) {
		const uint8_t *d = b + 4 + 20 * i;
		cr_assert_eq(d[0], scsi_cmd_table[i].opcode);
		cr_assert_eq(d[5] & 2, 2);
		cr_assert_eq(get_be16(d + 8), 0x0a);
	}
	/* allocation length cuts the list */
	r = rsoc(0, 0, 0, 12, b);
	cr_assert_eq(r.data_len, 12);
	cr_assert_eq(get_be32(b), scsi_cmd_table_len * 8);
	free(b);
}

BOTH_STORES(rsoc, one_command)
{
	uint8_t b[64];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	/* option 1: READ(10) */
	r = rsoc(1, 0x28, 0, sizeof(b), b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[1] & 7, 3, "supported");
	cr_assert_eq(get_be16(b + 2), 10);
	cr_assert_eq(r.data_len, 14);
	uint8_t c[16] = {0x28};
	cr_assert_eq(memcmp(b + 4, scsi_cmd_lookup(c)->usage, 10), 0);
	cr_assert_eq(b[4], 0x28, "byte 0 of the usage data is the opcode");
	/* option 1: an unsupported opcode */
	r = rsoc(1, 0x02, 0, sizeof(b), b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[1] & 7, 1, "not supported");
	cr_assert_eq(r.data_len, 4);
	/* option 1 on an opcode with service actions */
	r = rsoc(1, 0x9e, 0, sizeof(b), b);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, -1, 3);
	/* option 2: READ CAPACITY(16) */
	r = rsoc(2, 0x9e, 0x10, sizeof(b), b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[1] & 7, 3);
	cr_assert_eq(get_be16(b + 2), 16);
	cr_assert_eq(b[5] & 0x1f, 0x1f, "usage shows the service action bits");
	/* option 2: unknown service action */
	r = rsoc(2, 0x9e, 0x11, sizeof(b), b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[1] & 7, 1);
	/* option 2 on an opcode without service actions */
	r = rsoc(2, 0x28, 0, sizeof(b), b);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	/* option 3: both kinds */
	r = rsoc(3, 0x28, 0x1234, sizeof(b), b);
	cr_assert_eq(b[1] & 7, 3);
	r = rsoc(3, 0xa3, 0x0c, sizeof(b), b);
	cr_assert_eq(b[1] & 7, 3);
	cr_assert_eq(get_be16(b + 2), 12);
	/* RCTD on one command */
	r = rsoc(0x81, 0x28, 0, sizeof(b), b);
	cr_assert_eq(b[1] & 0x80, 0x80, "CTDP");
	cr_assert_eq(r.data_len, 4 + 10 + 12);
	cr_assert_eq(get_be16(b + 14), 0x0a);
	/* reserved reporting options */
	r = rsoc(4, 0, 0, sizeof(b), b);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, 2, 2);
}

BOTH_STORES(rsoc, task_management_functions)
{
	uint8_t cdb[12] = {0xa3, 0x0d, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0};
	uint8_t b[16];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	r = th_exec(&fx_nx, 0, cdb, 12, SCSI_DIR_READ, b, 16);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 4);
	cr_assert_eq(b[0], 0xde, "ATS ATSS CTSS LURS QTS TRS");
	cr_assert_eq(b[1], 0x07, "QAES QTSS ITNRS");
	cdb[2] = 0x80; /* REPD */
	r = th_exec(&fx_nx, 0, cdb, 12, SCSI_DIR_READ, b, 16);
	cr_assert_eq(r.data_len, 16);
	cr_assert_eq(b[3], 0x0c);
	cdb[9] = 3;
	r = th_exec(&fx_nx, 0, cdb, 12, SCSI_DIR_READ, b, 16);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, -1, 6);
}
