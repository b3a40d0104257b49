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

/* The entries this LU offers, in table order (UNMAP only on a thin LU). */
static unsigned offered(const struct scsi_cmd_desc **out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < scsi_cmd_table_len; i++)
		if (scsi_cmd_on_lu(&scsi_cmd_table[i], fx_dev, NULL))
			out[n++] = &scsi_cmd_table[i];
	return n;
}

BOTH_STORES(rsoc, all_commands)
{
	uint32_t alloc = 4 + scsi_cmd_table_len * 20 + 16;
	uint8_t *b = calloc(1, alloc);
	const struct scsi_cmd_desc **list = calloc(scsi_cmd_table_len, sizeof(*list));
	unsigned n = offered(list);
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	r = rsoc(0, 0, 0, alloc, b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b), n * 8);
	cr_assert_eq(r.data_len, 4 + n * 8);
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *d = b + 4 + 8 * i;
		const struct scsi_cmd_desc *c = list[i];
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
	cr_assert_eq(get_be32(b), n * 20);
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *d = b + 4 + 20 * i;
		cr_assert_eq(d[0], list[i]->opcode);
		cr_assert_eq(d[5] & 2, 2);
		cr_assert_eq(get_be16(d + 8), 0x0a);
	}
	/* allocation length cuts the list */
	r = rsoc(0, 0, 0, 12, b);
	cr_assert_eq(r.data_len, 12);
	cr_assert_eq(get_be32(b), n * 8);
	free(list);
	free(b);
}

/* Is opcode op in the REPORT SUPPORTED OPERATION CODES list of all commands? */
static bool listed(uint8_t op)
{
	uint32_t alloc = 4 + scsi_cmd_table_len * 8;
	uint8_t *b = calloc(1, alloc);
	struct th_result r = rsoc(0, 0, 0, alloc, b);
	bool found = false;

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	for (uint32_t off = 4; off < 4 + get_be32(b); off += 8)
		found |= b[off] == op;
	free(b);
	return found;
}

/* Is (opcode, service action) in the list of all commands? */
static bool listed_sa(uint8_t op, uint16_t sa)
{
	uint32_t alloc = 4 + scsi_cmd_table_len * 8;
	uint8_t *b = calloc(1, alloc);
	struct th_result r = rsoc(0, 0, 0, alloc, b);
	bool found = false;

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	for (uint32_t off = 4; off < 4 + get_be32(b); off += 8)
		found |= b[off] == op && (b[off + 5] & 1) && get_be16(b + off + 2) == sa;
	free(b);
	return found;
}

/* UNMAP (and WRITE SAME's UNMAP bit) follow logical block provisioning: a fully provisioned
 * LU answers UNMAP with INVALID COMMAND OPERATION CODE, so RSOC must not offer it there. */
BOTH_STORES(rsoc, unmap_follows_provisioning)
{
	uint8_t b[64];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	for (int thin = 0; thin <= 1; thin++) {
		fx_dev->bs->thin_provisioned = thin;
		cr_assert_eq(sbc_thin(fx_dev), (bool)thin, "both stores can deallocate");
		cr_assert_eq(listed(0x42), (bool)thin, "UNMAP listed: thin %d", thin);
		cr_assert(listed(0x41) && listed(0x93), "WRITE SAME is always listed");
		r = rsoc(1, 0x42, 0, sizeof(b), b);
		cr_assert_eq(r.status, SAM_STAT_GOOD);
		cr_assert_eq(b[1] & 7, thin ? 3 : 1, "UNMAP support thin %d", thin);
		/* SANITIZE BLOCK ERASE deallocates everything: thin LUs only */
		cr_assert_eq(listed_sa(0x48, 0x02), (bool)thin, "BLOCK ERASE listed: thin %d",
			     thin);
		cr_assert(listed_sa(0x48, 0x01) && listed_sa(0x48, 0x03),
			  "OVERWRITE, CRYPTO ERASE");
		r = rsoc(2, 0x48, 0x02, sizeof(b), b);
		cr_assert_eq(r.status, SAM_STAT_GOOD);
		cr_assert_eq(b[1] & 7, thin ? 3 : 1, "BLOCK ERASE support thin %d", thin);
		for (int i = 0; i < 2; i++) {
			uint8_t op = i ? 0x93 : 0x41;
			r = rsoc(1, op, 0, sizeof(b), b);
			cr_assert_eq(r.status, SAM_STAT_GOOD);
			cr_assert_eq(b[1] & 7, 3);
			cr_assert_eq(!!(b[5] & 0x08), thin, "WRITE SAME %#x UNMAP bit thin %d", op,
				     thin);
			cr_assert_eq(b[5] & ~0x08, i ? 0xf3 : 0xf2, "other bits kept %#x", b[5]);
		}
	}
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
