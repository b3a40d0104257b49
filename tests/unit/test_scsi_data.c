/* scsi/scsi_data.c: copying to and from the task's iovecs, and the residual rule (the libiscsi
 * READ10/WRITE10 residual scenarios, run end to end on ramdisk and fileio). */
#include "spc_fixture.h"

static void task_init(struct scsi_task *t, enum scsi_data_dir dir, struct iovec *iov, int n,
		      uint32_t exp)
{
	memset(t, 0, sizeof(*t));
	t->dir = dir;
	t->iov = iov;
	t->iovcnt = n;
	t->exp_xfer_len = exp;
}

Test(data, data_in_spans_iovecs_and_stops_at_exp)
{
	uint8_t a[3], b[5], src[10];
	struct iovec iov[2] = {{a, 3}, {b, 5}};
	struct scsi_task t;

	for (int i = 0; i < 10; i++)
		src[i] = (uint8_t)(i + 1);
	task_init(&t, SCSI_DIR_READ, iov, 2, 7);
	memset(b, 0, sizeof(b));
	scsi_data_in(&t, src, 10);
	cr_assert_eq(t.data_len, 7);
	cr_assert(a[0] == 1 && a[2] == 3 && b[0] == 4 && b[3] == 7 && b[4] == 0);
	scsi_resid_compute(&t, true);
	cr_assert_eq(t.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(t.resid, 3);
	cr_assert_eq(t.data_len, 7);
}

Test(data, data_out_reads_what_was_sent)
{
	uint8_t a[2] = {1, 2}, b[4] = {3, 4, 5, 6}, dst[8];
	struct iovec iov[2] = {{a, 2}, {b, 4}};
	struct scsi_task t;

	task_init(&t, SCSI_DIR_WRITE, iov, 2, 6);
	memset(dst, 0, sizeof(dst));
	cr_assert_eq(scsi_data_out(&t, dst, 8), 6);
	cr_assert_eq(dst[5], 6);
	scsi_resid_compute(&t, true);
	cr_assert_eq(t.resid_kind, SCSI_RESID_OVER, "the command wanted 8");
	cr_assert_eq(t.resid, 2);
	/* a data-out command on a task that carries no data-out gets nothing */
	task_init(&t, SCSI_DIR_READ, iov, 2, 6);
	cr_assert_eq(scsi_data_out(&t, dst, 4), 0);
}

Test(data, xfer_len_and_failures)
{
	struct scsi_task t;

	task_init(&t, SCSI_DIR_READ, NULL, 0, 1000);
	scsi_xfer_wanted(&t, 4096);
	cr_assert_eq(scsi_xfer_len(&t), 1000);
	scsi_xfer_wanted(&t, 512);
	cr_assert_eq(scsi_xfer_len(&t), 512);
	scsi_resid_compute(&t, true);
	cr_assert_eq(t.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(t.resid, 488);
	cr_assert_eq(t.data_len, 512);
	scsi_resid_compute(&t, false);
	cr_assert_eq(t.data_len, 0);
	cr_assert_eq(t.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(t.resid, 1000);
	task_init(&t, SCSI_DIR_NONE, NULL, 0, 0);
	scsi_resid_compute(&t, false);
	cr_assert_eq(t.resid_kind, SCSI_RESID_NONE);
	/* wanted beyond 32 bits */
	scsi_xfer_wanted(&t, 1ull << 40);
	scsi_resid_compute(&t, true);
	cr_assert_eq(t.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(t.resid, UINT32_MAX);
}

static struct th_result rw10(uint8_t op, uint32_t lba, uint16_t nblocks, void *buf, uint32_t exp)
{
	uint8_t cdb[10] = {op, 0, 0, 0, 0, 0, 0, (uint8_t)(nblocks >> 8), (uint8_t)nblocks, 0};
	put_be32(cdb + 2, lba);
	return th_exec(&fx_nx, 0, cdb, 10, op == 0x28 ? SCSI_DIR_READ : SCSI_DIR_WRITE, buf, exp);
}

BOTH_STORES(data, read10_residuals)
{
	uint8_t buf[10000];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	r = rw10(0x28, 0, 1, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 512);
	r = rw10(0x28, 0, 1, buf, 10000);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 512);
	cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(r.resid, 10000 - 512);
	r = rw10(0x28, 0, 1, buf, 200);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 200);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 312);
	r = rw10(0x28, 0, 2, buf, 512);
	cr_assert_eq(r.data_len, 512);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 512);
}

BOTH_STORES(data, write10_residuals_write_only_what_both_allow)
{
	uint8_t buf[2048];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	memset(buf, 'a', sizeof(buf));
	r = rw10(0x2a, 0, 2, buf, 1024);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	/* one block of 'b', EDTL two blocks: underflow, second block untouched */
	memset(buf, 'b', sizeof(buf));
	r = rw10(0x2a, 0, 1, buf, 1024);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(r.resid, 512);
	r = rw10(0x28, 0, 2, buf, 1024);
	cr_assert_eq(buf[0], 'b');
	cr_assert_eq(buf[511], 'b');
	cr_assert_eq(buf[512], 'a', "EDTL > SCSI length writes only the SCSI length");
	/* two blocks of 'c', EDTL one block: overflow, only the first block written */
	memset(buf, 'a', sizeof(buf));
	r = rw10(0x2a, 0, 2, buf, 1024);
	memset(buf, 'c', sizeof(buf));
	r = rw10(0x2a, 0, 2, buf, 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 512);
	r = rw10(0x28, 0, 2, buf, 1024);
	cr_assert_eq(buf[0], 'c');
	cr_assert_eq(buf[512], 'a', "EDTL < SCSI length writes only what EDTL covers");
	/* one block, EDTL 0: nothing to write, overflow by the block */
	r = rw10(0x2a, 0, 1, NULL, 0);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 512);
}

/* An expected length that ends inside a block: refused before anything is written, with the
 * OVERFLOW residual still reported (GOOD would claim a block written that was not). */
BOTH_STORES(data, write_ending_inside_a_block_is_refused_and_writes_nothing)
{
	static const uint8_t ops[] = {0x2a, 0x2e}; /* WRITE(10), WRITE AND VERIFY(10) */
	uint8_t buf[1024];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	for (unsigned i = 0; i < sizeof(ops); i++) {
		memset(buf, 'a', sizeof(buf));
		r = rw10(0x2a, 4, 2, buf, 1024);
		cr_assert_eq(r.status, SAM_STAT_GOOD);
		memset(buf, 'b', sizeof(buf));
		r = rw10(ops[i], 4, 2, buf, 700);
		cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION, "op %#x", ops[i]);
		cr_assert_eq(r.sense[2] & 0x0f, 0x05);
		cr_assert(r.sense[12] == 0x0e && r.sense[13] == 0x03,
			  "INVALID FIELD IN COMMAND INFORMATION UNIT, got %02x/%02x", r.sense[12],
			  r.sense[13]);
		cr_assert_eq(r.data_len, 0);
		cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
		cr_assert_eq(r.resid, 1024 - 700);
		r = rw10(0x28, 4, 2, buf, 1024);
		for (unsigned k = 0; k < sizeof(buf); k++)
			cr_assert_eq(buf[k], 'a', "op %#x wrote byte %u", ops[i], k);
	}
	/* a WRITE of one block with EDTL 200: the libiscsi Write10Residuals case */
	r = rw10(0x2a, 4, 1, buf, 200);
	cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 312);
}
