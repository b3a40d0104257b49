/* vdisk_blockio on loop devices (the kernel here has no SCSI, but has loop): geometry from the
 * device, O_DIRECT with exclusive open, logical block size compatibility, read_only, UNMAP as a
 * zeroing deallocation, data round trips with aligned and misaligned buffers.  Without loop
 * devices (some sandboxes) the device tests skip; the non-device checks always run. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scsi/backstore/backstore.h"
#include "scsi/backstore/bs_aio.h"

static char backing[128];
static char loopdev[64];

/* Attach a sparse backing file of size bytes to a free loop device. */
static bool loop_attach(uint64_t size, unsigned sector)
{
	char cmd[256];
	FILE *p;
	int fd;

	snprintf(backing, sizeof(backing), "/tmp/utgt-blockio-%d.img", (int)getpid());
	fd = open(backing, O_CREAT | O_RDWR | O_TRUNC, 0600);
	cr_assert(fd >= 0);
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	close(fd);
	if (sector)
		snprintf(cmd, sizeof(cmd), "losetup -f --show --sector-size %u %s 2>/dev/null",
			 sector, backing);
	else
		snprintf(cmd, sizeof(cmd), "losetup -f --show %s 2>/dev/null", backing);
	p = popen(cmd, "r");
	if (!p)
		return false;
	if (!fgets(loopdev, sizeof(loopdev), p))
		loopdev[0] = 0;
	pclose(p);
	loopdev[strcspn(loopdev, "\n")] = 0;
	return loopdev[0] == '/';
}

static void need_loop(uint64_t size, unsigned sector)
{
	if (!loop_attach(size, sector)) {
		cr_log_warn("no loop device available here: skipping the device test");
		cr_skip_test();
	}
}

static void loop_detach(void)
{
	char cmd[128];

	if (loopdev[0]) {
		snprintf(cmd, sizeof(cmd), "losetup -d %s 2>/dev/null", loopdev);
		if (system(cmd) != 0)
			fprintf(stderr, "could not detach %s\n", loopdev);
		loopdev[0] = 0;
	}
	if (backing[0])
		unlink(backing);
}

TestSuite(bs_blockio, .fini = loop_detach);

static struct backstore *bb_new(const char *file, uint32_t bsz)
{
	struct backstore *bs = calloc(1, sizeof(*bs));

	bs->ops = backstore_find("vdisk_blockio");
	cr_assert_not_null(bs->ops);
	snprintf(bs->name, sizeof(bs->name), "b0");
	snprintf(bs->filename, sizeof(bs->filename), "%s", file);
	bs->block_size = bsz;
	bs->thin_provisioned = true; /* scsi_dev_configure's default for blockio */
	return bs;
}

static int bb_open(struct backstore *bs, char *err, size_t n)
{
	err[0] = 0;
	return bs->ops->open(bs, err, n);
}

static void bb_free(struct backstore *bs)
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

Test(bs_blockio, a_regular_file_is_rejected)
{
	struct backstore *bs;
	char err[256];
	int fd;

	snprintf(backing, sizeof(backing), "/tmp/utgt-blockio-%d.img", (int)getpid());
	fd = open(backing, O_CREAT | O_RDWR, 0600);
	cr_assert_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	bs = bb_new(backing, 512);
	cr_assert_eq(bb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "not a block device"), "%s", err);
	free(bs);
}

Test(bs_blockio, missing_device_and_no_filename)
{
	struct backstore *bs = bb_new("/dev/utgt-no-such-device", 512);
	char err[256];

	cr_assert_eq(bb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "No such file"), "%s", err);
	bs->filename[0] = 0;
	cr_assert_eq(bb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "needs a filename"), "%s", err);
	bs->block_size = 1024;
	snprintf(bs->filename, sizeof(bs->filename), "/dev/null");
	cr_assert_eq(bb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "blocksize 1024"), "%s", err);
	free(bs);
}

Test(bs_blockio, geometry_exclusive_direct_round_trip)
{
	struct backstore *bs, *again;
	char err[256];
	uint8_t *w, *r;
	struct bs_engine_stats s;

	need_loop(32 << 20, 0);
	bs = bb_new(loopdev, 512);
	cr_assert_eq(bb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->size, 32 << 20, "size from BLKGETSIZE64");
	cr_assert_eq(bs->phys_block_size, 512, "a loop device's physical block (BLKPBSZGET)");
	cr_assert(fcntl(bs_aio_fd(bs_aio_of(bs)), F_GETFL) & O_DIRECT);
	again = bb_new(loopdev, 512);
	cr_assert_eq(bb_open(again, err, sizeof(err)), -1, "second exclusive open");
	cr_assert(strstr(err, "in use"), "%s", err);
	free(again);

	cr_assert_eq(posix_memalign((void **)&w, 4096, (1 << 20) + 64), 0);
	cr_assert_eq(posix_memalign((void **)&r, 4096, (1 << 20) + 64), 0);
	for (int i = 0; i < (1 << 20) + 64; i++)
		w[i] = (uint8_t)(i * 5 + (i >> 12));
	cr_assert_eq(rw(bs, BS_WRITE, 0, w, 1 << 20), BS_OK);
	cr_assert_eq(rw(bs, BS_WRITE, (31 << 20), w + 3, 1 << 20), BS_OK); /* bounced */
	cr_assert_eq(rw(bs, BS_READ, 0, r + 1, 1 << 20), BS_OK);	   /* bounced */
	cr_assert_arr_eq(r + 1, w, 1 << 20);
	cr_assert_eq(rw(bs, BS_READ, (31 << 20), r, 1 << 20), BS_OK);
	cr_assert_arr_eq(r, w + 3, 1 << 20);
	bs_aio_get_stats(bs_aio_of(bs), &s);
	cr_assert_eq(s.bounced, 2);
	{
		struct bs_io fl = {.op = BS_FLUSH};
		cr_assert_eq(bs_submit_sync(bs, &fl), BS_OK);
	}
	bb_free(bs);
	/* what went to the device is in the backing file */
	{
		int fd = open(backing, O_RDONLY);
		cr_assert_eq(pread(fd, r, 4096, 0), 4096);
		cr_assert_arr_eq(r, w, 4096);
		close(fd);
	}
	free(w);
	free(r);
}

Test(bs_blockio, size_attribute_and_4k_blocks)
{
	struct backstore *bs;
	char err[256];

	need_loop(16 << 20, 0);
	bs = bb_new(loopdev, 4096);
	bs->size = 8 << 20;
	cr_assert_eq(bb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->size, 8 << 20);
	bs->ops->close(bs);
	bs->size = 32 << 20;
	cr_assert_eq(bb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "larger"), "%s", err);
	free(bs);
}

Test(bs_blockio, blocksize_below_the_logical_block_size_is_refused)
{
	struct backstore *bs;
	char err[256];

	need_loop(16 << 20, 4096);
	bs = bb_new(loopdev, 512);
	cr_assert_eq(bb_open(bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, "logical block size 4096"), "%s", err);
	bs->block_size = 4096;
	cr_assert_eq(bb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->phys_block_size, 4096, "a 4096-byte-sector loop device's physical block");
	bb_free(bs);
}

Test(bs_blockio, read_only)
{
	struct backstore *bs;
	char err[256];
	uint8_t *buf;

	need_loop(8 << 20, 0);
	bs = bb_new(loopdev, 512);
	bs->read_only = true;
	cr_assert_eq(bb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(fcntl(bs_aio_fd(bs_aio_of(bs)), F_GETFL) & O_ACCMODE, O_RDONLY);
	cr_assert_not(bs->can_unmap);
	cr_assert_eq(posix_memalign((void **)&buf, 4096, 4096), 0);
	cr_assert_eq(rw(bs, BS_WRITE, 0, buf, 4096), BS_EROFS);
	cr_assert_eq(rw(bs, BS_READ, 0, buf, 4096), BS_OK);
	free(buf);
	bb_free(bs);
}

Test(bs_blockio, unmap_deallocates_and_reads_zeros)
{
	struct backstore *bs;
	char err[256];
	uint8_t *w;
	struct stat before, after;
	struct bs_io um = {.op = BS_UNMAP, .off = 1 << 20, .len = 4 << 20};
	struct bs_io fl = {.op = BS_FLUSH};

	need_loop(8 << 20, 0);
	bs = bb_new(loopdev, 512);
	cr_assert_eq(bb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert(bs->can_unmap, "loop devices discard");
	cr_assert(bs->unmap_zeroes, "loop devices have a zeroing deallocation (write zeroes)");
	cr_assert_eq(posix_memalign((void **)&w, 4096, 8 << 20), 0);
	memset(w, 0x3c, 8 << 20);
	cr_assert_eq(rw(bs, BS_WRITE, 0, w, 8 << 20), BS_OK);
	cr_assert_eq(bs_submit_sync(bs, &fl), BS_OK);
	cr_assert_eq(stat(backing, &before), 0);
	cr_assert_eq(bs_submit_sync(bs, &um), BS_OK);
	cr_assert_eq(stat(backing, &after), 0);
	cr_assert_leq(after.st_blocks * 512 + (4 << 20), before.st_blocks * 512,
		      "the loop's backing file lost 4 MiB: %ld -> %ld blocks",
		      (long)before.st_blocks, (long)after.st_blocks);
	cr_assert_eq(rw(bs, BS_READ, 0, w, 8 << 20), BS_OK);
	for (size_t i = 0; i < (8u << 20); i += 4093)
		cr_assert_eq(w[i], (i >= (1u << 20) && i < (5u << 20)) ? 0 : 0x3c, "byte %zu", i);
	free(w);
	bb_free(bs);
}

Test(bs_blockio, thin_provisioning_off_refuses_unmap)
{
	struct backstore *bs;
	char err[256];

	need_loop(8 << 20, 0);
	bs = bb_new(loopdev, 512);
	bs->thin_provisioned = false;
	cr_assert_eq(bb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_not(bs->can_unmap);
	{
		struct bs_io um = {.op = BS_UNMAP, .off = 0, .len = 4096};
		cr_assert_eq(bs_submit_sync(bs, &um), BS_ENOTSUP);
	}
	bb_free(bs);
}

Test(bs_blockio, thread_pool_round_trip)
{
	struct backstore *bs;
	char err[256];
	uint8_t *w, *r;

	setenv("UTGT_NO_IO_URING", "1", 1);
	need_loop(8 << 20, 0);
	bs = bb_new(loopdev, 512);
	cr_assert_eq(bb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(bs_aio_mode(bs_aio_of(bs)), "threads");
	cr_assert_eq(posix_memalign((void **)&w, 4096, 65536), 0);
	cr_assert_eq(posix_memalign((void **)&r, 4096, 65536), 0);
	memset(w, 0x71, 65536);
	cr_assert_eq(rw(bs, BS_WRITE, 4096, w, 65536), BS_OK);
	cr_assert_eq(rw(bs, BS_READ, 4096, r, 65536), BS_OK);
	cr_assert_arr_eq(r, w, 65536);
	{
		struct bs_io um = {.op = BS_UNMAP, .off = 4096, .len = 65536};
		cr_assert_eq(bs_submit_sync(bs, &um), BS_OK);
	}
	cr_assert_eq(rw(bs, BS_READ, 4096, r, 65536), BS_OK);
	for (int i = 0; i < 65536; i++)
		cr_assert_eq(r[i], 0);
	free(w);
	free(r);
	bb_free(bs);
}

Test(bs_blockio, resize_within_the_device)
{
	struct backstore *bs;
	char err[256];

	need_loop(16 << 20, 0);
	bs = bb_new(loopdev, 512);
	bs->size = 4 << 20;
	cr_assert_eq(bb_open(bs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->ops->resize(bs, 8 << 20, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->size, 8 << 20);
	cr_assert_eq(bs->ops->resize(bs, 32 << 20, err, sizeof(err)), -1);
	cr_assert(strstr(err, "size 33554432 is larger than"), "%s", err);
	cr_assert_eq(bs->size, 8 << 20);
	cr_assert_eq(bs->ops->resize(bs, 0, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(bs->size, 16 << 20, "resync: the whole device");
	bb_free(bs);
}
