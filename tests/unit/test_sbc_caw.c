/* COMPARE AND WRITE on ramdisk and fileio: success, miscompare with INFORMATION and nothing
 * written, zero blocks, limits, range, protection, Data-Out size, FUA, MEDIUM ERROR, and
 * atomicity under concurrent COMPARE AND WRITEs and WRITEs (no lost update). */
#include "scsi/backstore/bs_util.h"
#include "tests/unit/sbc_test.h"

static void caw_cdb(uint8_t *c, uint64_t lba, uint8_t n, uint8_t b1)
{
	memset(c, 0, 16);
	c[0] = 0x89;
	c[1] = b1;
	put_be64(c + 2, lba);
	c[13] = n;
}

static struct th_result caw(struct sbc_fx *fx, uint64_t lba, uint8_t n, const uint8_t *cmp,
			    const uint8_t *wr)
{
	size_t len = (size_t)n * fx->bsz;
	uint8_t c[16], *b = malloc(2 * len + 1);
	struct th_result r;

	memcpy(b, cmp, len);
	memcpy(b + len, wr, len);
	caw_cdb(c, lba, n, 0);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, (uint32_t)(2 * len));
	free(b);
	return r;
}

SBC_TEST(caw, matching_data_is_replaced)
{
	uint8_t a[3 * 512], b[3 * 512];
	struct th_result r;

	memset(a, 'A', sizeof(a));
	memset(b, 'B', sizeof(b));
	fx_fill(fx, 40, 3, 'A');
	r = caw(fx, 40, 3, a, b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_NONE);
	fx_expect(fx, 40, 3, 'B');
	fx_expect(fx, 39, 1, 0);
	fx_expect(fx, 43, 1, 0);
	/* the same again no longer matches */
	r = caw(fx, 40, 3, a, b);
	th_assert_sense(r, SK_MISCOMPARE, 0x1d, 0x00);
}

SBC_TEST(caw, miscompare_reports_offset_and_writes_nothing)
{
	uint8_t a[3 * 512], b[3 * 512];
	uint64_t info = 0;
	struct th_result r;

	fx_fill(fx, FX_BLOCKS - 3, 3, 'A');
	memset(a, 'A', sizeof(a));
	a[sizeof(a) - 27] = 'C'; /* libiscsi's choice: byte 27 from the end */
	memset(b, 'B', sizeof(b));
	r = caw(fx, FX_BLOCKS - 3, 3, a, b);
	th_assert_sense(r, SK_MISCOMPARE, 0x1d, 0x00);
	cr_assert(th_info(&r, &info), "no INFORMATION");
	cr_assert_eq(info, sizeof(a) - 27);
	fx_expect(fx, FX_BLOCKS - 3, 3, 'A');

	a[sizeof(a) - 27] = 'A';
	a[0] = 0;
	r = caw(fx, FX_BLOCKS - 3, 3, a, b);
	th_assert_sense(r, SK_MISCOMPARE, 0x1d, 0x00);
	cr_assert(th_info(&r, &info));
	cr_assert_eq(info, 0);
}

SBC_TEST(caw, zero_blocks_and_limits)
{
	struct sbc_limits lim;
	uint8_t c[16], *b;
	struct th_result r;

	caw_cdb(c, 0, 0, 0);
	r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);

	sbc_get_limits(fx->dev, &lim);
	cr_assert(lim.max_compare_write_blocks >= 1 && lim.max_compare_write_blocks < 255);
	b = calloc(2, (lim.max_compare_write_blocks + 1) * 512);
	caw_cdb(c, 0, (uint8_t)(lim.max_compare_write_blocks + 1), 0);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 2 * (lim.max_compare_write_blocks + 1) * 512);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 13, -1);
	/* the largest allowed works */
	caw_cdb(c, 0, (uint8_t)lim.max_compare_write_blocks, 0);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 2 * lim.max_compare_write_blocks * 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	free(b);
}

SBC_TEST(caw, range_protection_and_data_out_size)
{
	uint8_t c[16], b[4 * 512] = {0};
	struct th_result r;

	caw_cdb(c, FX_BLOCKS, 1, 0);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 1024);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	caw_cdb(c, UINT64_MAX, 1, 0);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 1024);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	caw_cdb(c, 0, 1, 0x20); /* WRPROTECT */
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, 1024);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 1, 7);
	/* libiscsi InvalidDataOutSize: 4 blocks for n=1, and 4 blocks for n=3 */
	memset(b + 512, 'X', 512);
	caw_cdb(c, 0, 1, 0);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, sizeof(b));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	caw_cdb(c, 0, 3, 0);
	r = fx_exec(fx, c, SCSI_DIR_WRITE, b, sizeof(b));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_expect(fx, 0, 3, 0);
}

Test(caw, fua_reaches_the_store)
{
	struct sbc_fx fx;
	uint8_t c[16], b[1024] = {0};

	fx_init_ops(&fx, &spy_ops);
	caw_cdb(c, 0, 1, 0x08);
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_WRITE, b, 1024).status, SAM_STAT_GOOD);
	cr_assert(atomic_load(&spy.last_fua));
	caw_cdb(c, 0, 1, 0);
	cr_assert_eq(fx_exec(&fx, c, SCSI_DIR_WRITE, b, 1024).status, SAM_STAT_GOOD);
	cr_assert_not(atomic_load(&spy.last_fua));
	fx_fini(&fx);
}

Test(caw, failing_store_is_medium_error)
{
	struct sbc_fx fx;
	uint8_t c[16], b[1024] = {0};
	struct th_result r;

	fx_init_ops(&fx, &failing_ops);
	caw_cdb(c, 0, 1, 0);
	r = fx_exec(&fx, c, SCSI_DIR_WRITE, b, 1024);
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x11, 0x00);
	fx_fini(&fx);
}

/* ---- a store that compares and writes itself (vdisk_rbd's shape: one 512-byte block) ---- */

static struct {
	uint8_t mem[FX_BLOCKS * 512];
	atomic_int compares, reads;
	bool fua;
} cws;

static int cws_open(struct backstore *bs, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	bs->compare_write_max = 512;
	memset(&cws, 0, sizeof(cws));
	return 0;
}

static void cws_submit(struct backstore *bs, struct bs_io *io)
{
	enum bs_status st = bs_check_io(bs, io);
	uint8_t *cmp;

	if (st != BS_OK) {
		io->cb(io, st);
		return;
	}
	switch (io->op) {
	case BS_READ:
		atomic_fetch_add(&cws.reads, 1);
		bs_buf_to_iov(io->iov, io->iovcnt, 0, cws.mem + io->off, io->len);
		break;
	case BS_WRITE:
		bs_iov_to_buf(cws.mem + io->off, io->iov, io->iovcnt, 0, io->len);
		break;
	case BS_COMPARE_WRITE:
		atomic_fetch_add(&cws.compares, 1);
		cws.fua = io->fua;
		cmp = malloc(2 * io->len);
		bs_iov_to_buf(cmp, io->iov, io->iovcnt, 0, 2 * io->len);
		for (uint64_t i = 0; i < io->len; i++) {
			if (cmp[i] != cws.mem[io->off + i]) {
				io->miscompare_at = i;
				free(cmp);
				io->cb(io, BS_MISCOMPARE);
				return;
			}
		}
		memcpy(cws.mem + io->off, cmp + io->len, io->len);
		free(cmp);
		break;
	default:
		break;
	}
	io->cb(io, BS_OK);
}

static const struct backstore_ops cws_ops = {
    .name = "cw_store",
    .open = cws_open,
    .submit = cws_submit,
};

Test(caw, store_that_compares_gets_one_verb)
{
	struct sbc_fx fx;
	uint8_t a[512], b[512];
	struct sbc_limits lim;
	struct th_result r;
	uint64_t info = 0;

	fx_init_ops(&fx, &cws_ops);
	sbc_get_limits(fx.dev, &lim);
	cr_assert_eq(lim.max_compare_write_blocks, 1, "no longer than the store does atomically");
	memset(a, 0, sizeof(a));
	memset(b, 'B', sizeof(b));
	r = caw(&fx, 7, 1, a, b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(atomic_load(&cws.compares), 1);
	cr_assert_eq(atomic_load(&cws.reads), 0, "the core read nothing itself");
	cr_assert_eq(cws.mem[7 * 512 + 511], 'B');
	a[300] = 'X';
	memset(a, 'B', 300);
	r = caw(&fx, 7, 1, a, b);
	th_assert_sense(r, SK_MISCOMPARE, 0x1d, 0x00);
	cr_assert(th_info(&r, &info), "no INFORMATION");
	cr_assert_eq(info, 300, "the store's offset reaches the sense data");
	/* two blocks are more than the store compares: refused, not done half-atomically */
	{
		uint8_t c[16], d[2048] = {0};

		caw_cdb(c, 0, 2, 0);
		r = fx_exec(&fx, c, SCSI_DIR_WRITE, d, sizeof(d));
		th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	}
	cr_assert_eq(atomic_load(&cws.compares), 2);
	fx_fini(&fx);
}

/* ---- atomicity ----
 * Blocks 0 and 1 form one COMPARE AND WRITE unit: block 0 a counter the CAW threads increment
 * (read, then CAW old -> old+1, retry on miscompare), block 1 a sequence number one WRITE
 * thread raises 1, 2, 3, ... with plain WRITEs.  Every CAW writes back block 1 as it read it.
 * If a WRITE could land between a CAW's read and its write, that CAW would put an old
 * sequence number back: a lost update.  The writer checks after each WRITE that its value is
 * there, and at the end the counter must equal the number of successful CAWs. */

#define CAW_THREADS 3
#define CAW_INCREMENTS 150
#define WRITES 300

struct hammer {
	struct sbc_fx *fx;
	atomic_int errors, lost, ok;
};

static uint64_t blk_val(const uint8_t *b)
{
	return get_be64(b);
}

static void *caw_thread(void *arg)
{
	struct hammer *h = arg;
	uint8_t cur[1024], next[1024];

	for (int i = 0; i < CAW_INCREMENTS;) {
		struct th_result r = fx_read(h->fx, 0, 2, cur);

		if (r.status != SAM_STAT_GOOD) {
			atomic_fetch_add(&h->errors, 1);
			return NULL;
		}
		memcpy(next, cur, sizeof(next));
		put_be64(next, blk_val(cur) + 1);
		r = caw(h->fx, 0, 2, cur, next);
		if (r.status == SAM_STAT_GOOD) {
			atomic_fetch_add(&h->ok, 1);
			i++;
		} else if (th_sense_key(&r) != SK_MISCOMPARE) {
			atomic_fetch_add(&h->errors, 1);
			return NULL;
		}
	}
	return NULL;
}

static void *write_thread(void *arg)
{
	struct hammer *h = arg;
	uint8_t b[512], r2[1024];
	uint8_t c[16];

	memset(b, 0, sizeof(b));
	for (uint64_t k = 1; k <= WRITES; k++) {
		struct th_result r;

		put_be64(b, k);
		cdb10(c, 0x2a, 0, 1, 1);
		r = fx_exec(h->fx, c, SCSI_DIR_WRITE, b, 512);
		if (r.status != SAM_STAT_GOOD) {
			atomic_fetch_add(&h->errors, 1);
			return NULL;
		}
		r = fx_read(h->fx, 0, 2, r2);
		if (r.status != SAM_STAT_GOOD)
			atomic_fetch_add(&h->errors, 1);
		else if (blk_val(r2 + 512) != k)
			atomic_fetch_add(&h->lost, 1);
	}
	return NULL;
}

SBC_TEST(caw, concurrent_caw_and_write_lose_no_update)
{
	struct hammer h = {.fx = fx};
	pthread_t th[CAW_THREADS + 1];
	uint8_t fin[1024];

	for (int i = 0; i < CAW_THREADS; i++)
		pthread_create(&th[i], NULL, caw_thread, &h);
	pthread_create(&th[CAW_THREADS], NULL, write_thread, &h);
	for (int i = 0; i <= CAW_THREADS; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(atomic_load(&h.errors), 0);
	cr_assert_eq(atomic_load(&h.lost), 0, "a WRITE was undone by a COMPARE AND WRITE");
	cr_assert_eq(atomic_load(&h.ok), CAW_THREADS * CAW_INCREMENTS);
	cr_assert_eq(fx_read(fx, 0, 2, fin).status, SAM_STAT_GOOD);
	cr_assert_eq(blk_val(fin), (uint64_t)CAW_THREADS * CAW_INCREMENTS, "lost increments");
	cr_assert_eq(blk_val(fin + 512), WRITES);
}
