/* ramdisk: data round trips, WRITE SAME, UNMAP, range and read-only checks, geometry, map. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scsi/backstore/backstore.h"

static struct backstore *rd_make(uint64_t size, uint32_t bsz)
{
	struct backstore *bs = calloc(1, sizeof(*bs));
	char err[256] = "";

	bs->ops = backstore_find("ramdisk");
	cr_assert_not_null(bs->ops);
	snprintf(bs->name, sizeof(bs->name), "rd0");
	bs->size = size;
	bs->block_size = bsz;
	cr_assert_eq(bs->ops->open(bs, err, sizeof(err)), 0, "%s", err);
	return bs;
}

static void rd_free(struct backstore *bs)
{
	bs->ops->close(bs);
	free(bs);
}

static enum bs_status rw(struct backstore *bs, enum bs_op op, uint64_t off, void *buf, uint64_t len)
{
	struct iovec iov = {buf, len};
	struct bs_io io = {.op = op, .off = off, .len = len, .iov = &iov, .iovcnt = buf ? 1 : 0};
	return bs_submit_sync(bs, &io);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed);
}

Test(bs_ramdisk, fresh_store_reads_zeros)
{
	struct backstore *bs = rd_make(1 << 20, 512);
	uint8_t buf[4096];

	memset(buf, 0xaa, sizeof(buf));
	cr_assert_eq(rw(bs, BS_READ, 65536, buf, sizeof(buf)), BS_OK);
	for (size_t i = 0; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0);
	cr_assert(bs->can_unmap);
	cr_assert(bs->unmap_zeroes);
	rd_free(bs);
}

Test(bs_ramdisk, write_read_round_trip_at_odd_offsets)
{
	struct backstore *bs = rd_make(1 << 20, 512);
	uint8_t w[3 * 512], r[3 * 512];
	uint64_t offs[] = {0, 512, 4096 - 512, (1 << 20) - sizeof(w)};

	for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
		fill(w, sizeof(w), (unsigned)k);
		cr_assert_eq(rw(bs, BS_WRITE, offs[k], w, sizeof(w)), BS_OK);
		memset(r, 0, sizeof(r));
		cr_assert_eq(rw(bs, BS_READ, offs[k], r, sizeof(r)), BS_OK);
		cr_assert_arr_eq(r, w, sizeof(w), "offset %lu", (unsigned long)offs[k]);
	}
	rd_free(bs);
}

Test(bs_ramdisk, scattered_iovecs)
{
	struct backstore *bs = rd_make(1 << 20, 512);
	uint8_t src[2048], a[100], b[1000], c[948], flat[2048];
	struct iovec wv[3] = {{src, 7}, {src + 7, 1500}, {src + 1507, 541}};
	struct iovec rv[3] = {{a, sizeof(a)}, {b, sizeof(b)}, {c, sizeof(c)}};
	struct bs_io io = {.op = BS_WRITE, .off = 8192, .len = 2048, .iov = wv, .iovcnt = 3};

	fill(src, sizeof(src), 5);
	cr_assert_eq(bs_submit_sync(bs, &io), BS_OK);
	io = (struct bs_io){.op = BS_READ, .off = 8192, .len = 2048, .iov = rv, .iovcnt = 3};
	cr_assert_eq(bs_submit_sync(bs, &io), BS_OK);
	memcpy(flat, a, sizeof(a));
	memcpy(flat + sizeof(a), b, sizeof(b));
	memcpy(flat + sizeof(a) + sizeof(b), c, sizeof(c));
	cr_assert_arr_eq(flat, src, sizeof(src));
	rd_free(bs);
}

Test(bs_ramdisk, write_same_replicates_block_and_ndob_zeroes)
{
	struct backstore *bs = rd_make(1 << 20, 4096);
	uint8_t blk[4096], r[4 * 4096];
	struct iovec iov = {blk, sizeof(blk)};
	struct bs_io io = {
	    .op = BS_WRITE_SAME, .off = 4096, .len = 3 * 4096, .iov = &iov, .iovcnt = 1};

	fill(blk, sizeof(blk), 9);
	cr_assert_eq(bs_submit_sync(bs, &io), BS_OK);
	cr_assert_eq(rw(bs, BS_READ, 0, r, sizeof(r)), BS_OK);
	for (size_t i = 0; i < 4096; i++)
		cr_assert_eq(r[i], 0);
	for (int k = 1; k < 4; k++)
		cr_assert_arr_eq(r + k * 4096, blk, 4096, "block %d", k);
	/* no data buffer: the pattern is zeros */
	io = (struct bs_io){.op = BS_WRITE_SAME, .off = 8192, .len = 4096};
	cr_assert_eq(bs_submit_sync(bs, &io), BS_OK);
	cr_assert_eq(rw(bs, BS_READ, 0, r, sizeof(r)), BS_OK);
	for (size_t i = 8192; i < 12288; i++)
		cr_assert_eq(r[i], 0);
	cr_assert_arr_eq(r + 12288, blk, 4096);
	/* misaligned length is a core bug */
	io = (struct bs_io){.op = BS_WRITE_SAME, .off = 0, .len = 100, .iov = &iov, .iovcnt = 1};
	cr_assert_eq(bs_submit_sync(bs, &io), BS_ERANGE);
	rd_free(bs);
}

Test(bs_ramdisk, unmap_zeroes_partial_and_whole_pages)
{
	struct backstore *bs = rd_make(1 << 20, 512);
	static uint8_t w[65536], r[65536];
	struct bs_io io = {.op = BS_UNMAP, .off = 512, .len = 40960};

	memset(w, 0x5a, sizeof(w));
	cr_assert_eq(rw(bs, BS_WRITE, 0, w, sizeof(w)), BS_OK);
	cr_assert_eq(bs_submit_sync(bs, &io), BS_OK);
	cr_assert_eq(rw(bs, BS_READ, 0, r, sizeof(r)), BS_OK);
	for (size_t i = 0; i < sizeof(r); i++)
		cr_assert_eq(r[i], (i >= 512 && i < 512 + 40960) ? 0 : 0x5a, "byte %zu", i);
	rd_free(bs);
}

Test(bs_ramdisk, out_of_range_and_short_buffers)
{
	struct backstore *bs = rd_make(1 << 20, 512);
	uint8_t buf[1024];
	struct iovec iov = {buf, 512};
	struct bs_io io = {.op = BS_READ, .off = 0, .len = 1024, .iov = &iov, .iovcnt = 1};

	cr_assert_eq(rw(bs, BS_READ, (1 << 20) - 512, buf, 1024), BS_ERANGE);
	cr_assert_eq(rw(bs, BS_WRITE, 1 << 20, buf, 512), BS_ERANGE);
	cr_assert_eq(rw(bs, BS_READ, UINT64_MAX - 100, buf, 512), BS_ERANGE);
	cr_assert_eq(bs_submit_sync(bs, &io), BS_ERANGE);
	cr_assert_eq(rw(bs, BS_READ, (1 << 20) - 512, buf, 512), BS_OK);
	rd_free(bs);
}

Test(bs_ramdisk, read_only_refuses_writes)
{
	struct backstore *bs = calloc(1, sizeof(*bs));
	char err[128];
	uint8_t buf[512] = {1};
	struct bs_io io = {.op = BS_UNMAP, .off = 0, .len = 512};

	bs->ops = &bs_ramdisk_ops;
	bs->size = 65536;
	bs->block_size = 512;
	bs->read_only = true;
	cr_assert_eq(bs->ops->open(bs, err, sizeof(err)), 0);
	cr_assert_eq(rw(bs, BS_WRITE, 0, buf, 512), BS_EROFS);
	cr_assert_eq(bs_submit_sync(bs, &io), BS_EROFS);
	io.op = BS_WRITE_SAME;
	cr_assert_eq(bs_submit_sync(bs, &io), BS_EROFS);
	cr_assert_eq(rw(bs, BS_READ, 0, buf, 512), BS_OK);
	cr_assert_eq(buf[0], 0);
	io = (struct bs_io){.op = BS_FLUSH};
	cr_assert_eq(bs_submit_sync(bs, &io), BS_OK);
	rd_free(bs);
}

Test(bs_ramdisk, geometry_checks)
{
	struct backstore bs = {.ops = &bs_ramdisk_ops, .size = 0, .block_size = 512};
	char err[128] = "";

	cr_assert_eq(bs.ops->open(&bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "size"), "%s", err);
	bs.size = 1 << 20;
	bs.block_size = 1024;
	cr_assert_eq(bs.ops->open(&bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "blocksize 1024"), "%s", err);
	bs.block_size = 0; /* default 512 */
	bs.size = 4096 + 100;
	cr_assert_eq(bs.ops->open(&bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs.block_size, 512);
	cr_assert_eq(bs.size, 4096, "rounded down to whole blocks");
	bs.ops->close(&bs);
}

struct async_count {
	int done;
	enum bs_status st;
};

static void count_cb(struct bs_io *io, enum bs_status st)
{
	struct async_count *c = io->priv;
	c->done++;
	c->st = st;
}

Test(bs_ramdisk, completes_before_submit_returns_exactly_once)
{
	struct backstore *bs = rd_make(65536, 512);
	uint8_t buf[512];
	struct iovec iov = {buf, sizeof(buf)};
	struct async_count c = {0, BS_EIO};
	struct bs_io io = {.op = BS_READ,
			   .off = 0,
			   .len = 512,
			   .iov = &iov,
			   .iovcnt = 1,
			   .cb = count_cb,
			   .priv = &c};

	bs->ops->submit(bs, &io);
	cr_assert_eq(c.done, 1);
	cr_assert_eq(c.st, BS_OK);
	rd_free(bs);
}

Test(bs_ramdisk, lba_status_tracks_written_and_dropped_pages)
{
	struct backstore *bs = rd_make(1 << 20, 512);
	uint8_t w[8192];
	bool mapped;
	uint64_t run;
	struct bs_io um = {.op = BS_UNMAP, .off = 65536, .len = 4096};

	cr_assert_not_null(bs->ops->lba_status);
	cr_assert_eq(bs->ops->lba_status(bs, 0, 1 << 20, &mapped, &run), BS_OK);
	cr_assert_not(mapped);
	cr_assert_eq(run, 1 << 20, "nothing written yet");
	memset(w, 1, sizeof(w));
	cr_assert_eq(rw(bs, BS_WRITE, 65536 + 512, w, 512), BS_OK);
	cr_assert_eq(rw(bs, BS_WRITE, 65536 + 4096, w, 4096), BS_OK);
	cr_assert_eq(bs->ops->lba_status(bs, 0, 1 << 20, &mapped, &run), BS_OK);
	cr_assert_not(mapped);
	cr_assert_eq(run, 65536);
	cr_assert_eq(bs->ops->lba_status(bs, 65536, (1 << 20) - 65536, &mapped, &run), BS_OK);
	cr_assert(mapped);
	cr_assert_eq(run, 8192, "two written pages");
	cr_assert_eq(bs->ops->lba_status(bs, 65536 + 1024, 512, &mapped, &run), BS_OK);
	cr_assert(mapped);
	cr_assert_eq(run, 512, "clamped to len");
	cr_assert_eq(bs_submit_sync(bs, &um), BS_OK);
	cr_assert_eq(bs->ops->lba_status(bs, 65536, (1 << 20) - 65536, &mapped, &run), BS_OK);
	cr_assert_not(mapped, "the first page was dropped");
	cr_assert_eq(run, 4096);
	cr_assert_eq(bs->ops->lba_status(bs, 65536 + 4096, 1 << 16, &mapped, &run), BS_OK);
	cr_assert(mapped);
	cr_assert_eq(run, 4096);
	rd_free(bs);
}

/* map: a pointer into the store itself, the bytes a READ would copy; never past the end. */
Test(bs_ramdisk, map_lends_the_store_in_place)
{
	struct backstore *bs = rd_make(1 << 20, 512);
	uint8_t w[8192], *p;

	cr_assert_not_null(bs->ops->map);
	fill(w, sizeof(w), 9);
	cr_assert_eq(rw(bs, BS_WRITE, 4096, w, sizeof(w)), BS_OK);
	p = bs->ops->map(bs, 4096, sizeof(w));
	cr_assert_not_null(p);
	cr_assert_eq(memcmp(p, w, sizeof(w)), 0);
	/* a later write shows through the same pointer: it is the store, not a copy */
	w[0] ^= 0xff;
	cr_assert_eq(rw(bs, BS_WRITE, 4096, w, 512), BS_OK);
	cr_assert_eq(p[0], w[0]);
	p = bs->ops->map(bs, 0, 4096); /* never written: zeros */
	cr_assert_not_null(p);
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(p[i], 0);
	cr_assert_not_null(bs->ops->map(bs, 0, 1 << 20));
	cr_assert_null(bs->ops->map(bs, 512, 1 << 20), "past the end");
	cr_assert_null(bs->ops->map(bs, (1 << 20) + 512, 0), "beyond the store");
	rd_free(bs);
}
