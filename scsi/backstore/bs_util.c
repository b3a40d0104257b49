/* Helpers shared by the backstore implementations. */
#include "scsi/backstore/bs_util.h"

#include <stdio.h>
#include <string.h>

size_t bs_iov_total(const struct iovec *iov, int iovcnt)
{
	size_t n = 0;

	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* Walk the iovecs from byte `skip`, calling fn on each piece of at most len bytes. */
static size_t iov_walk(const struct iovec *iov, int iovcnt, size_t skip, size_t len,
		       void (*fn)(void *seg, size_t n, size_t done, void *arg), void *arg)
{
	size_t done = 0;

	for (int i = 0; i < iovcnt && done < len; i++) {
		size_t l = iov[i].iov_len;
		size_t n;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		n = l - skip;
		if (n > len - done)
			n = len - done;
		fn((char *)iov[i].iov_base + skip, n, done, arg);
		done += n;
		skip = 0;
	}
	return done;
}

static void seg_out(void *seg, size_t n, size_t done, void *buf)
{
	memcpy((char *)buf + done, seg, n);
}

static void seg_in(void *seg, size_t n, size_t done, void *buf)
{
	memcpy(seg, (const char *)buf + done, n);
}

static void seg_zero(void *seg, size_t n, size_t done, void *arg)
{
	(void)done;
	(void)arg;
	memset(seg, 0, n);
}

size_t bs_iov_to_buf(void *buf, const struct iovec *iov, int iovcnt, size_t skip, size_t len)
{
	return iov_walk(iov, iovcnt, skip, len, seg_out, buf);
}

size_t bs_buf_to_iov(const struct iovec *iov, int iovcnt, size_t skip, const void *buf, size_t len)
{
	return iov_walk(iov, iovcnt, skip, len, seg_in, (void *)buf);
}

size_t bs_iov_zero(const struct iovec *iov, int iovcnt, size_t skip, size_t len)
{
	return iov_walk(iov, iovcnt, skip, len, seg_zero, NULL);
}

bool bs_valid_block_size(uint32_t bsz)
{
	return bsz == 512 || bsz == 4096;
}

enum bs_status bs_check_io(const struct backstore *bs, const struct bs_io *io)
{
	if (io->off > bs->size || io->len > bs->size - io->off)
		return BS_ERANGE;
	switch (io->op) {
	case BS_READ:
		if (bs_iov_total(io->iov, io->iovcnt) < io->len)
			return BS_ERANGE;
		return BS_OK;
	case BS_WRITE:
		if (bs->read_only)
			return BS_EROFS;
		if (bs_iov_total(io->iov, io->iovcnt) < io->len)
			return BS_ERANGE;
		return BS_OK;
	case BS_WRITE_SAME:
		if (bs->read_only)
			return BS_EROFS;
		if (io->len % bs->block_size || io->off % bs->block_size)
			return BS_ERANGE;
		if (io->iovcnt && bs_iov_total(io->iov, io->iovcnt) < bs->block_size)
			return BS_ERANGE;
		return BS_OK;
	case BS_UNMAP:
		if (bs->read_only)
			return BS_EROFS;
		return BS_OK;
	case BS_FLUSH:
		return BS_OK;
	case BS_COMPARE_WRITE:
		if (io->len > bs->compare_write_max)
			return BS_ENOTSUP;
		if (bs->read_only)
			return BS_EROFS;
		if (bs_iov_total(io->iov, io->iovcnt) < 2 * io->len)
			return BS_ERANGE;
		return BS_OK;
	}
	return BS_ENOTSUP;
}

void bs_write_same_block(const struct backstore *bs, const struct bs_io *io, void *buf)
{
	if (io->iovcnt > 0 && io->iov)
		bs_iov_to_buf(buf, io->iov, io->iovcnt, 0, bs->block_size);
	else
		memset(buf, 0, bs->block_size);
}

bool bs_open_block_size(struct backstore *bs, char *err, size_t errlen)
{
	if (!bs->block_size)
		bs->block_size = 512;
	/* a CD-ROM image (vcdrom) has 2048-byte blocks; disks 512 or 4096 */
	if (bs->ops == &bs_vcdrom_ops ? bs->block_size != 2048
				      : !bs_valid_block_size(bs->block_size)) {
		snprintf(err, errlen, "%s: blocksize %u not supported (512 or 4096)", bs->name,
			 bs->block_size);
		return false;
	}
	return true;
}

int bs_set_size(struct backstore *bs, uint64_t bytes, char *err, size_t errlen)
{
	uint32_t bsz = bs->block_size ? bs->block_size : 512;

	bytes -= bytes % bsz;
	if (!bytes) {
		snprintf(err, errlen, "%s: a size smaller than one %u-byte block", bs->name, bsz);
		return -1;
	}
	__atomic_store_n(&bs->size, bytes, __ATOMIC_RELAXED);
	return 0;
}
