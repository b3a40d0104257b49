/* vdisk_nullio: SCST's default size, reads of zeros (or of nothing with read_zero off), writes
 * dropped, range and read-only checks, blocksize. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scsi/backstore/backstore.h"

static struct backstore *nb_new(uint64_t size, uint32_t bsz)
{
	struct backstore *bs = calloc(1, sizeof(*bs));

	bs->ops = backstore_find("vdisk_nullio");
	cr_assert_not_null(bs->ops);
	snprintf(bs->name, sizeof(bs->name), "n0");
	bs->size = size;
	bs->block_size = bsz;
	bs->read_zero = true;
	return bs;
}

static struct backstore *nb_make(uint64_t size, uint32_t bsz)
{
	struct backstore *bs = nb_new(size, bsz);
	char err[128] = "";

	cr_assert_eq(bs->ops->open(bs, err, sizeof(err)), 0, "%s", err);
	return bs;
}

static void nb_free(struct backstore *bs)
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

Test(bs_nullio, default_size_is_scst_2_5_tib)
{
	struct backstore *bs = nb_make(0, 0);

	cr_assert_eq(bs->size, 5ull * 1024 * 1024 * 1024 * 1024 / 2);
	cr_assert_eq(bs->block_size, 512);
	nb_free(bs);
}

Test(bs_nullio, size_and_blocksize)
{
	struct backstore *bs = nb_make((1 << 20) + 1000, 4096);
	char err[128];

	cr_assert_eq(bs->size, 1 << 20, "rounded down to whole blocks");
	nb_free(bs);
	bs = nb_new(1 << 20, 2048);
	cr_assert_eq(bs->ops->open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "blocksize 2048"), "%s", err);
	bs->block_size = 4096;
	bs->size = 100;
	cr_assert_eq(bs->ops->open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "smaller than one block"), "%s", err);
	free(bs);
}

Test(bs_nullio, reads_return_zeros_and_writes_are_dropped)
{
	struct backstore *bs = nb_make(1 << 30, 512);
	uint8_t buf[8192];

	memset(buf, 0xaa, sizeof(buf));
	cr_assert_eq(rw(bs, BS_WRITE, 4096, buf, sizeof(buf)), BS_OK);
	cr_assert_eq(rw(bs, BS_READ, 4096, buf, sizeof(buf)), BS_OK);
	for (size_t i = 0; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0, "byte %zu", i);
	cr_assert(bs->unmap_zeroes);
	nb_free(bs);
}

Test(bs_nullio, read_zero_off_leaves_the_buffer_alone)
{
	struct backstore *bs = nb_new(1 << 20, 512);
	char err[128];
	uint8_t buf[512];

	bs->read_zero = false;
	cr_assert_eq(bs->ops->open(bs, err, sizeof(err)), 0, "%s", err);
	memset(buf, 0x5a, sizeof(buf));
	cr_assert_eq(rw(bs, BS_READ, 0, buf, sizeof(buf)), BS_OK);
	for (size_t i = 0; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0x5a);
	cr_assert_not(bs->unmap_zeroes, "nothing promises what deallocated blocks read");
	nb_free(bs);
}

Test(bs_nullio, every_verb_and_the_checks)
{
	struct backstore *bs = nb_make(1 << 20, 512);
	uint8_t buf[1024];
	struct bs_io io = {.op = BS_UNMAP, .off = 0, .len = 1 << 20};

	cr_assert_eq(bs_submit_sync(bs, &io), BS_OK);
	io = (struct bs_io){.op = BS_FLUSH};
	cr_assert_eq(bs_submit_sync(bs, &io), BS_OK);
	io = (struct bs_io){.op = BS_WRITE_SAME, .off = 512, .len = 2048};
	cr_assert_eq(bs_submit_sync(bs, &io), BS_OK);
	cr_assert_eq(rw(bs, BS_READ, (1 << 20) - 512, buf, 1024), BS_ERANGE);
	nb_free(bs);
	bs = nb_new(1 << 20, 512);
	bs->read_only = true;
	bs->dummy = true;
	{
		char err[128];
		cr_assert_eq(bs->ops->open(bs, err, sizeof(err)), 0);
	}
	cr_assert(bs->dummy, "dummy is the INQUIRY's business; the store keeps it");
	cr_assert_eq(rw(bs, BS_WRITE, 0, buf, 512), BS_EROFS);
	cr_assert_eq(rw(bs, BS_READ, 0, buf, 512), BS_OK);
	nb_free(bs);
}

Test(bs_nullio, resize)
{
	struct backstore *bs = nb_make(1 << 20, 512);
	char err[128] = "";
	uint8_t b[512];

	cr_assert_eq(bs->ops->resize(bs, (8 << 20) + 7, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->size, 8 << 20);
	cr_assert_eq(rw(bs, BS_READ, (8 << 20) - 512, b, 512), BS_OK);
	cr_assert_eq(bs->ops->resize(bs, 0, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->size, 8 << 20, "resync keeps the size: there is no medium");
	cr_assert_eq(bs->ops->resize(bs, 1, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "n0: a size smaller than one 512-byte block");
	nb_free(bs);
}
