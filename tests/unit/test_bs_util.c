/* The backstores' shared helpers: iovec copies and the common io checks. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "scsi/backstore/bs_util.h"

Test(bs_util, iovec_copies_with_skip)
{
	char a[3], b[5], c[4], flat[12];
	struct iovec v[3] = {{a, 3}, {b, 5}, {c, 4}};

	cr_assert_eq(bs_iov_total(v, 3), 12);
	cr_assert_eq(bs_buf_to_iov(v, 3, 0, "abcdefghijkl", 12), 12);
	cr_assert_arr_eq(a, "abc", 3);
	cr_assert_arr_eq(b, "defgh", 5);
	cr_assert_arr_eq(c, "ijkl", 4);
	memset(flat, 0, sizeof(flat));
	cr_assert_eq(bs_iov_to_buf(flat, v, 3, 2, 7), 7);
	cr_assert_arr_eq(flat, "cdefghi", 7);
	cr_assert_eq(bs_iov_to_buf(flat, v, 3, 10, 7), 2, "ran out of iovecs");
	cr_assert_eq(bs_iov_zero(v, 3, 4, 5), 5);
	cr_assert_arr_eq(b, "d\0\0\0\0", 5);
	cr_assert_eq(c[0], 0);
	cr_assert_eq(c[1], 'j');
	cr_assert_eq(bs_buf_to_iov(v, 3, 12, "x", 1), 0);
}

Test(bs_util, check_io)
{
	char buf[4096];
	struct iovec iov = {buf, sizeof(buf)};
	struct backstore bs = {.size = 1 << 20, .block_size = 512};
	struct bs_io io = {.op = BS_READ, .off = 0, .len = 4096, .iov = &iov, .iovcnt = 1};

	cr_assert_eq(bs_check_io(&bs, &io), BS_OK);
	io.len = 8192;
	cr_assert_eq(bs_check_io(&bs, &io), BS_ERANGE, "buffer shorter than len");
	io.len = 4096;
	io.off = (1 << 20) - 2048;
	cr_assert_eq(bs_check_io(&bs, &io), BS_ERANGE);
	io.off = UINT64_MAX - 10;
	cr_assert_eq(bs_check_io(&bs, &io), BS_ERANGE, "no wrap-around");
	io.off = 0;
	bs.read_only = true;
	io.op = BS_WRITE;
	cr_assert_eq(bs_check_io(&bs, &io), BS_EROFS);
	io.op = BS_UNMAP;
	cr_assert_eq(bs_check_io(&bs, &io), BS_EROFS);
	io.op = BS_WRITE_SAME;
	cr_assert_eq(bs_check_io(&bs, &io), BS_EROFS);
	io.op = BS_FLUSH;
	cr_assert_eq(bs_check_io(&bs, &io), BS_OK);
	io.op = BS_READ;
	cr_assert_eq(bs_check_io(&bs, &io), BS_OK);
	bs.read_only = false;
	io.op = BS_WRITE_SAME;
	io.len = 1000;
	cr_assert_eq(bs_check_io(&bs, &io), BS_ERANGE, "WRITE SAME in whole blocks");
	io.len = 4096;
	iov.iov_len = 100;
	cr_assert_eq(bs_check_io(&bs, &io), BS_ERANGE, "pattern shorter than a block");
	io.iovcnt = 0;
	cr_assert_eq(bs_check_io(&bs, &io), BS_OK, "no data: zeros");
	cr_assert(bs_valid_block_size(512));
	cr_assert(bs_valid_block_size(4096));
	cr_assert_not(bs_valid_block_size(1024));
	cr_assert_not(bs_valid_block_size(0));
}

Test(bs_util, write_same_block)
{
	char pat[512], out[512];
	struct iovec v[2] = {{pat, 200}, {pat + 200, 312}};
	struct backstore bs = {.block_size = 512};
	struct bs_io io = {.op = BS_WRITE_SAME, .iov = v, .iovcnt = 2};

	for (int i = 0; i < 512; i++)
		pat[i] = (char)i;
	bs_write_same_block(&bs, &io, out);
	cr_assert_arr_eq(out, pat, 512);
	io.iovcnt = 0;
	bs_write_same_block(&bs, &io, out);
	for (int i = 0; i < 512; i++)
		cr_assert_eq(out[i], 0);
}

Test(bs_util, set_size_rounds_to_blocks_and_refuses_nothing)
{
	struct backstore bs = {.block_size = 4096, .size = 8192};
	char err[128] = "";

	snprintf(bs.name, sizeof(bs.name), "d");
	cr_assert_eq(bs_set_size(&bs, 3 * 4096 + 5, err, sizeof(err)), 0);
	cr_assert_eq(bs.size, 3 * 4096);
	cr_assert_eq(bs_set_size(&bs, 4095, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "d: a size smaller than one 4096-byte block");
	cr_assert_eq(bs.size, 3 * 4096);
}
