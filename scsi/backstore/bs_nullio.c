/* vdisk_nullio: a device with no data, for measuring everything but the medium.  Writes are
 * dropped; reads return zeros unless read_zero is off, in which case the buffer is left as
 * the transport handed it (fastest; SCST's kernel default).  Every verb completes before
 * submit returns. */
#include <stdio.h>

#include "scsi/backstore/backstore.h"
#include "scsi/backstore/bs_util.h"

/* SCST's default nullio capacity: 2.5 TiB. */
#define NULLIO_DEFAULT_SIZE (5ull * 1024 * 1024 * 1024 * 1024 / 2)

static int null_open(struct backstore *bs, char *err, size_t errlen)
{
	if (!bs_open_block_size(bs, err, errlen))
		return -1;
	if (!bs->size)
		bs->size = NULLIO_DEFAULT_SIZE;
	bs->size -= bs->size % bs->block_size;
	if (!bs->size) {
		snprintf(err, errlen, "%s: size is smaller than one block", bs->name);
		return -1;
	}
	/* Nothing is stored, so "deallocated" blocks read back like every other block. */
	bs->can_unmap = true;
	bs->unmap_zeroes = bs->read_zero;
	return 0;
}

static void null_close(struct backstore *bs)
{
	(void)bs;
}

static void null_submit(struct backstore *bs, struct bs_io *io)
{
	enum bs_status st = bs_check_io(bs, io);

	if (st == BS_OK && io->op == BS_READ && bs->read_zero)
		bs_iov_zero(io->iov, io->iovcnt, 0, io->len);
	io->cb(io, st);
}

/* No medium: any size will do; 0 (resync) keeps the current one. */
static int null_resize(struct backstore *bs, uint64_t bytes, char *err, size_t errlen)
{
	return bs_set_size(bs, bytes ? bytes : bs->size, err, errlen);
}

static const char *const null_attrs[] = {"size",  "size_mb",   "blocksize", "read_only",
					 "dummy", "read_zero", NULL};

const struct backstore_ops bs_nullio_ops = {
    .name = "vdisk_nullio",
    .attrs = null_attrs,
    .open = null_open,
    .resize = null_resize,
    .close = null_close,
    .submit = null_submit,
};
