/* vdisk_blockio: a logical unit on a block device, O_DIRECT through the asynchronous engine.
 *
 * The device is opened exclusively (O_EXCL: refused while mounted or claimed by another
 * store).  The LU block size must be a multiple of the device's logical block size so every
 * I/O is aligned for O_DIRECT; only misaligned transport buffers are bounced.  UNMAP is a
 * zeroing deallocation (fallocate PUNCH_HOLE -> REQ_OP_WRITE_ZEROES with unmap) when the device
 * has one, else BLKDISCARD, after which SCST and we make no promise about what reads return. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "scsi/backstore/backstore.h"
#include "scsi/backstore/bs_aio.h"
#include "scsi/backstore/bs_util.h"

/* A queue limit of the device from sysfs (0 when absent). */
static uint64_t blk_queue_limit(dev_t rdev, const char *what)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/%s", major(rdev), minor(rdev),
		 what);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

static int blockio_open(struct backstore *bs, char *err, size_t errlen)
{
	struct bs_aio_opts o = {.name = bs->name, .fd = -1, .fd_buffered = -1};
	int flags = (bs->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_DIRECT | O_EXCL;
	struct bs_aio *a;
	struct stat st;
	uint64_t devsize;
	int lbs = 0;
	unsigned int pbs = 0;

	if (!bs->filename[0]) {
		snprintf(err, errlen, "%s: vdisk_blockio needs a filename (a block device)",
			 bs->name);
		return -1;
	}
	if (!bs_open_block_size(bs, err, errlen))
		return -1;
	if (stat(bs->filename, &st) < 0) {
		snprintf(err, errlen, "%s: %s: %s", bs->name, bs->filename, strerror(errno));
		return -1;
	}
	if (!S_ISBLK(st.st_mode)) {
		snprintf(err, errlen, "%s: %s is not a block device (use vdisk_fileio for files)",
			 bs->name, bs->filename);
		return -1;
	}
	if (bs->write_through && !bs->nv_cache)
		flags |= O_DSYNC;
	o.fd = open(bs->filename, flags);
	if (o.fd < 0) {
		snprintf(err, errlen, "%s: cannot open %s: %s", bs->name, bs->filename,
			 errno == EBUSY ? "device is in use (mounted or claimed)"
					: strerror(errno));
		return -1;
	}
	if (ioctl(o.fd, BLKGETSIZE64, &devsize) < 0 || ioctl(o.fd, BLKSSZGET, &lbs) < 0 ||
	    lbs <= 0) {
		snprintf(err, errlen, "%s: %s: cannot read the device geometry: %s", bs->name,
			 bs->filename, strerror(errno));
		goto fail;
	}
	if (bs->block_size % (uint32_t)lbs) {
		snprintf(err, errlen,
			 "%s: blocksize %u is not a multiple of %s's logical block size %d",
			 bs->name, bs->block_size, bs->filename, lbs);
		goto fail;
	}
	if (bs->size > devsize) {
		snprintf(err, errlen, "%s: size %llu is larger than %s (%llu bytes)", bs->name,
			 (unsigned long long)bs->size, bs->filename, (unsigned long long)devsize);
		goto fail;
	}
	if (!bs->size)
		bs->size = devsize;
	bs->size -= bs->size % bs->block_size;
	if (!bs->size) {
		snprintf(err, errlen, "%s: %s is smaller than one %u-byte block", bs->name,
			 bs->filename, bs->block_size);
		goto fail;
	}
	/* lb_per_pb_exp reports the device's physical block (as SCST does for vdisk_blockio) */
	if (ioctl(o.fd, BLKPBSZGET, &pbs) < 0)
		pbs = 0;
	bs->phys_block_size = pbs;
	bs_dio_align(o.fd, (uint32_t)lbs, &o.dio_mem_align, &o.dio_off_align);
	if (!o.dio_mem_align || !o.dio_off_align)
		o.dio_mem_align = o.dio_off_align = (uint32_t)lbs;

	/* thin_provisioned is on unless configured off (SCST enables it automatically when the
	 * device can discard); it only takes effect when the device can deallocate. */
	bs->can_unmap = false;
	bs->unmap_zeroes = false;
	if (bs->thin_provisioned && !bs->read_only) {
		bool zeroes = blk_queue_limit(st.st_rdev, "write_zeroes_max_bytes") > 0;
		bool discard = blk_queue_limit(st.st_rdev, "discard_max_bytes") > 0;

		bs->can_unmap = zeroes || discard;
		bs->unmap_zeroes = zeroes;
	}
	o.block_size = bs->block_size;
	o.nv_cache = bs->nv_cache;
	o.blockdev = true;
	a = bs_aio_create(&o, err, errlen);
	if (!a)
		return -1;
	bs->priv = a;
	return 0;
fail:
	close(o.fd);
	return -1;
}

/* The device's capacity is the limit; 0 takes all of it (after the device itself grew). */
static int blockio_resize(struct backstore *bs, uint64_t bytes, char *err, size_t errlen)
{
	uint64_t devsize;

	if (ioctl(bs_aio_fd(bs->priv), BLKGETSIZE64, &devsize) < 0) {
		snprintf(err, errlen, "%s: %s: %s", bs->name, bs->filename, strerror(errno));
		return -1;
	}
	if (bytes > devsize) {
		snprintf(err, errlen, "%s: size %llu is larger than %s (%llu bytes)", bs->name,
			 (unsigned long long)bytes, bs->filename, (unsigned long long)devsize);
		return -1;
	}
	return bs_set_size(bs, bytes ? bytes : devsize, err, errlen);
}

static const char *const blockio_attrs[] = {
    "filename", "size",		 "size_mb",	     "blocksize", "read_only",
    "nv_cache", "write_through", "thin_provisioned", NULL,
};

const struct backstore_ops bs_blockio_ops = {
    .name = "vdisk_blockio",
    .attrs = blockio_attrs,
    .open = blockio_open,
    .close = bs_aio_store_close,
    .submit = bs_aio_store_submit,
    .engine_stats = bs_aio_store_stats,
    .resize = blockio_resize,
};
