/* READ/WRITE 6/10/12/16 through the core on ramdisk and fileio: data, status, sense, field
 * pointers, residuals (libiscsi's READ10/WRITE10 residual cases), scattered iovecs, FUA/WCE
 * to durable writes, MEDIUM ERROR from a failing store. */
#include "tests/unit/sbc_test.h"

static void pattern(uint8_t *b, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(i * 7 + seed * 13 + (i >> 9));
}

/* Write with one CDB size, read back with another, compare. */
static void roundtrip(struct sbc_fx *fx, uint8_t wop, uint8_t rop, uint64_t lba, uint32_t n)
{
	size_t len = (size_t)n * fx->bsz;
	uint8_t *w = malloc(len), *r = malloc(len), c[16];
	struct th_result res;

	pattern(w, len, wop ^ rop ^ (unsigned)lba);
	memset(r, 0xee, len);
	switch (cdb_len_of(wop)) {
	case 6:
		memset(c, 0, 16);
		c[0] = wop;
		put_be24(c + 1, (uint32_t)lba);
		c[4] = (uint8_t)n;
		break;
	case 10:
		cdb10(c, wop, 0, (uint32_t)lba, (uint16_t)n);
		break;
	case 12:
		cdb12(c, wop, 0, (uint32_t)lba, n);
		break;
	default:
		cdb16(c, wop, 0, lba, n);
	}
	res = fx_exec(fx, c, SCSI_DIR_WRITE, w, (uint32_t)len);
	cr_assert_eq(res.status, SAM_STAT_GOOD, "write op %#x", wop);
	cr_assert_eq(res.resid_kind, SCSI_RESID_NONE);
	switch (cdb_len_of(rop)) {
	case 6:
		memset(c, 0, 16);
		c[0] = rop;
		put_be24(c + 1, (uint32_t)lba);
		c[4] = (uint8_t)n;
		break;
	case 10:
		cdb10(c, rop, 0, (uint32_t)lba, (uint16_t)n);
		break;
	case 12:
		cdb12(c, rop, 0, (uint32_t)lba, n);
		break;
	default:
		cdb16(c, rop, 0, lba, n);
	}
	res = fx_exec(fx, c, SCSI_DIR_READ, r, (uint32_t)len);
	cr_assert_eq(res.status, SAM_STAT_GOOD, "read op %#x", rop);
	cr_assert_eq(res.data_len, len);
	cr_assert_eq(res.resid_kind, SCSI_RESID_NONE);
	cr_assert(!memcmp(w, r, len), "data differs (write %#x read %#x)", wop, rop);
	free(w);
	free(r);
}

SBC_TEST(rw, every_cdb_size_round_trips)
{
	roundtrip(fx, 0x0a, 0x08, 5, 3);      /* WRITE(6) / READ(6) */
	roundtrip(fx, 0x2a, 0xa8, 100, 17);   /* WRITE(10) / READ(12) */
	roundtrip(fx, 0xaa, 0x88, 1000, 64);  /* WRITE(12) / READ(16) */
	roundtrip(fx, 0x8a, 0x28, FX_BLOCKS - 9, 9); /* WRITE(16) / READ(10), last blocks */
	roundtrip(fx, 0x8a, 0x88, 0, 1);
}

SBC_TEST(rw, read6_length_zero_means_256_blocks)
{
	uint8_t c[16] = {0x08, 0, 0, 0, 0, 0};
	uint8_t *b = malloc(256 * 512);
	struct th_result r;

	fx_fill(fx, 0, 256, 0x5a);
	memset(b, 0, 256 * 512);
	r = fx_exec(fx, c, SCSI_DIR_READ, b, 256 * 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 256 * 512);
	cr_assert_eq(r.resid_kind, SCSI_RESID_NONE);
	for (size_t i = 0; i < 256 * 512; i++)
		cr_assert_eq(b[i], 0x5a);
	free(b);
}

SBC_TEST(rw, zero_blocks_is_good_but_range_checked)
{
	uint8_t c[16];
	struct th_result r;

	cdb10(c, 0x28, 0, 0, 0);
	r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cdb10(c, 0x2a, 0, FX_BLOCKS, 0); /* just past the last LBA, nothing moved */
	r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cdb10(c, 0x28, 0, FX_BLOCKS + 1, 0);
	r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
}

SBC_TEST(rw, beyond_end_is_lba_out_of_range)
{
	uint8_t c[16], b[4096];
	struct th_result r;

	cdb16(c, 0x88, 0, FX_BLOCKS - 1, 2);
	r = fx_exec(fx, c, SCSI_DIR_READ, b, 1024);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	cr_assert_eq(r.data_len, 0);
	cdb16(c, 0x8a, 0, UINT64_MAX, 2); /* lba + n overflows */
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 1024);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	cdb10(c, 0x2a, 0, 0xffffffffu, 1);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 512);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	cdb12(c, 0xa8, 0, FX_BLOCKS, 1);
	r = fx_exec(fx, c, SCSI_DIR_READ, b, 512);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
}

SBC_TEST(rw, protection_fields_are_refused_with_field_pointer)
{
	uint8_t c[16], b[512];
	struct th_result r;

	for (uint8_t prot = 1; prot < 8; prot++) {
		cdb10(c, 0x28, (uint8_t)(prot << 5), 0, 1);
		r = fx_exec(fx, c, SCSI_DIR_READ, b, 512);
		th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
		th_assert_field(r, true, 1, 7);
		cdb16(c, 0x8a, (uint8_t)(prot << 5), 0, 1);
		r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 512);
		th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
		th_assert_field(r, true, 1, 7);
	}
	/* DPO and FUA are fine */
	cdb12(c, 0xaa, 0x18, 0, 1);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
}

SBC_TEST(rw, transfer_length_above_block_limits_is_refused)
{
	struct sbc_limits lim;
	uint8_t c[16];
	struct th_result r;

	sbc_get_limits(fx->dev, &lim);
	cdb16(c, 0x88, 0, 0, lim.max_xfer_blocks + 1);
	r = fx_exec(fx, c, SCSI_DIR_READ, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 10, -1);
	cdb12(c, 0xaa, 0, 0, lim.max_xfer_blocks + 1);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 6, -1);
}

/* libiscsi test_read10_residuals */
SBC_TEST(rw, read_residuals)
{
	uint8_t c[16], *b = calloc(1, 10000), blk[1024];
	struct th_result r;

	pattern(blk, sizeof(blk), 3);
	cr_assert_eq(fx_write(fx, 0, 2, blk).status, SAM_STAT_GOOD);

	cdb10(c, 0x28, 0, 0, 1); /* expected length 0 */
	r = fx_exec(fx, c, SCSI_DIR_READ, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 512);
	cr_assert_eq(r.data_len, 0);

	r = fx_exec(fx, c, SCSI_DIR_READ, b, 10000); /* longer than one block */
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 512);
	cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(r.resid, 10000 - 512);
	cr_assert(!memcmp(b, blk, 512));

	memset(b, 0, 10000);
	r = fx_exec(fx, c, SCSI_DIR_READ, b, 200); /* part of a block */
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 200);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 512 - 200);
	cr_assert(!memcmp(b, blk, 200));
	cr_assert_eq(b[200], 0, "wrote past the expected length");

	memset(b, 0, 10000);
	cdb10(c, 0x28, 0, 0, 2); /* two blocks, room for one */
	r = fx_exec(fx, c, SCSI_DIR_READ, b, 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 512);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 512);
	cr_assert(!memcmp(b, blk, 512));
	cr_assert_eq(b[512], 0);
	free(b);
}

/* libiscsi test_write10_residuals */
SBC_TEST(rw, write_residuals)
{
	uint8_t c[16], *b = malloc(10000);
	struct th_result r;

	cdb10(c, 0x2a, 0, 0, 1); /* expected length 0: nothing written */
	fx_fill(fx, 0, 2, 'a');
	r = fx_exec(fx, c, SCSI_DIR_WRITE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 512);
	fx_expect(fx, 0, 2, 'a');

	memset(b, 'b', 10000);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 10000); /* more than the CDB: only the CDB's block */
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(r.resid, 10000 - 512);
	fx_expect(fx, 0, 1, 'b');
	fx_expect(fx, 1, 1, 'a');

	fx_fill(fx, 0, 2, 'a');
	/* part of a block: refused (INVALID FIELD IN COMMAND IU), nothing written, the
	 * residual still reported (libiscsi accepts either GOOD or this) */
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 200);
	cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION);
	cr_assert(r.sense[12] == 0x0e && r.sense[13] == 0x03);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 512 - 200);
	fx_expect(fx, 0, 2, 'a');

	cdb10(c, 0x2a, 0, 0, 2); /* two blocks, data for one */
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 512);
	fx_expect(fx, 0, 1, 'b');
	fx_expect(fx, 1, 1, 'a');
	free(b);
}

SBC_TEST(rw, scattered_iovecs)
{
	uint8_t w[3 * 512], r1[100], r2[1000], r3[436], c[16];
	struct iovec wiov[3] = {{w, 1}, {w + 1, 1000}, {w + 1001, 535}};
	struct iovec riov[3] = {{r1, 100}, {r2, 1000}, {r3, 436}};
	struct th_result r;

	pattern(w, sizeof(w), 11);
	cdb16(c, 0x8a, 0, 77, 3);
	r = fx_exec_iov(fx, c, SCSI_DIR_WRITE, wiov, 3, sizeof(w));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cdb16(c, 0x88, 0, 77, 3);
	r = fx_exec_iov(fx, c, SCSI_DIR_READ, riov, 3, sizeof(w));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, sizeof(w));
	cr_assert(!memcmp(r1, w, 100));
	cr_assert(!memcmp(r2, w + 100, 1000));
	cr_assert(!memcmp(r3, w + 1100, 436));

	/* 2.5 blocks of room over 3 iovecs for a 3-block READ: exactly that much arrives */
	memset(r1, 0, sizeof(r1));
	memset(r2, 0, sizeof(r2));
	memset(r3, 0, sizeof(r3));
	riov[2].iov_len = 180;
	r = fx_exec_iov(fx, c, SCSI_DIR_READ, riov, 3, 1280);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 1280);
	cr_assert_eq(r.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(r.resid, 256);
	cr_assert(!memcmp(r3, w + 1100, 180));
	cr_assert_eq(r3[180], 0);
}

Test(rw, block_size_4096)
{
	struct sbc_fx fx;

	fx_init_bs(&fx, "vdisk_fileio", 4096, 1024);
	roundtrip(&fx, 0x2a, 0x28, 1023, 1);
	roundtrip(&fx, 0x8a, 0x88, 10, 33);
	fx_fini(&fx);
	fx_init_bs(&fx, "ramdisk", 4096, 1024);
	roundtrip(&fx, 0xaa, 0xa8, 500, 7);
	fx_fini(&fx);
}

Test(rw, fua_and_write_cache_make_writes_durable)
{
	struct sbc_fx fx;
	uint8_t c[16], b[512] = {0};

	fx_init_ops(&fx, &spy_ops);
	cdb10(c, 0x2a, 0, 0, 1);
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_WRITE, b, 512).status, SAM_STAT_GOOD);
	cr_assert_not(atomic_load(&spy.last_fua), "WCE=1, no FUA: cached write");
	cdb10(c, 0x2a, 0x08, 0, 1);
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_WRITE, b, 512).status, SAM_STAT_GOOD);
	cr_assert(atomic_load(&spy.last_fua), "FUA: durable write");
	fx.dev->mode.wce = false;
	cdb10(c, 0x2a, 0, 0, 1);
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_WRITE, b, 512).status, SAM_STAT_GOOD);
	cr_assert(atomic_load(&spy.last_fua), "WCE=0: durable write");
	fx.dev->bs->nv_cache = true;
	cdb10(c, 0x2a, 0x08, 0, 1);
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_WRITE, b, 512).status, SAM_STAT_GOOD);
	cr_assert_not(atomic_load(&spy.last_fua), "nv_cache: FUA needs nothing");
	cr_assert_eq(atomic_load(&spy.writes), 4);
	fx_fini(&fx);
}

Test(rw, failing_store_is_medium_error)
{
	struct sbc_fx fx;
	uint8_t c[16], b[1024] = {0};
	struct th_result r;

	fx_init_ops(&fx, &failing_ops);
	cdb10(c, 0x28, 0, 0, 2);
	r = fx_exec(&fx, c, SCSI_DIR_READ, b, 1024);
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x11, 0x00);
	cr_assert_eq(r.data_len, 0);
	cdb16(c, 0x8a, 0, 0, 2);
	r = fx_exec(&fx, c, SCSI_DIR_WRITE, b, 1024);
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x0c, 0x00);
	fx_fini(&fx);
}

SBC_TEST(rw, sanitize_failure_mode_refuses_medium_access)
{
	uint8_t b[512];
	struct th_result r;

	fx->dev->sanitize_failed = true;
	r = fx_read(fx, 0, 1, b);
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x31, 0x03);
	r = fx_write(fx, 0, 1, b);
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x31, 0x03);
	fx->dev->sanitize_failed = false;
	cr_assert_eq(fx_read(fx, 0, 1, b).status, SAM_STAT_GOOD);
}
