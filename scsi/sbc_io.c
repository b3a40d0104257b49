/* Synchronous backstore I/O for SBC commands that run on a core worker (VERIFY, COMPARE AND
 * WRITE, WRITE SAME, UNMAP, SANITIZE, ...), and walking the task's data-out iovecs without
 * copying them. */
#include <stdlib.h>

#include "scsi/sbc.h"

/* Long fills and deallocations go to the store in pieces this big, so one command never
 * holds a backstore thread for an unbounded time. */
#define FILL_CHUNK_BYTES  (32ull << 20)
#define UNMAP_CHUNK_BYTES (1ull << 30)

enum bs_status sbc_iov_sync(struct scsi_dev *dev, enum bs_op op, uint64_t lba, uint64_t n,
			    struct iovec *iov, int iovcnt, bool fua)
{
	struct bs_io io;

	memset(&io, 0, sizeof(io));
	io.op = op;
	io.off = lba * dev->block_size;
	io.len = n * dev->block_size;
	io.iov = iov;
	io.iovcnt = iovcnt;
	io.fua = fua;
	return bs_submit_sync(dev->bs, &io);
}

enum bs_status sbc_io_sync(struct scsi_dev *dev, enum bs_op op, uint64_t lba, uint64_t n,
			   void *buf, bool fua)
{
	struct iovec iov = {buf, (size_t)(n * dev->block_size)};

	return sbc_iov_sync(dev, op, lba, n, buf ? &iov : NULL, buf ? 1 : 0, fua);
}

/* Plain writes of a buffer holding the block many times over: for stores without
 * BS_WRITE_SAME. */
static enum bs_status fill_by_writes(struct scsi_dev *dev, uint64_t lba, uint64_t n,
				     const void *block, bool fua)
{
	uint32_t bsz = dev->block_size;
	uint64_t per = SBC_CHUNK_BYTES / bsz;
	enum bs_status st = BS_OK;
	uint8_t *buf;

	if (per > n)
		per = n;
	buf = malloc(per * bsz);
	if (!buf)
		return BS_ENOMEM;
	for (uint64_t i = 0; i < per; i++)
		memcpy(buf + i * bsz, block, bsz);
	while (n && st == BS_OK) {
		uint64_t k = n < per ? n : per;

		st = sbc_io_sync(dev, BS_WRITE, lba, k, buf, fua);
		lba += k;
		n -= k;
	}
	free(buf);
	return st;
}

enum bs_status sbc_fill_sync(struct scsi_dev *dev, uint64_t lba, uint64_t n, const void *block,
			     bool fua)
{
	uint64_t per = FILL_CHUNK_BYTES / dev->block_size;
	struct iovec iov = {(void *)block, dev->block_size};

	while (n) {
		uint64_t k = n < per ? n : per;
		enum bs_status st = sbc_iov_sync(dev, BS_WRITE_SAME, lba, k, &iov, 1, fua);

		if (st == BS_ENOTSUP)
			return fill_by_writes(dev, lba, n, block, fua);
		if (st != BS_OK)
			return st;
		lba += k;
		n -= k;
	}
	return BS_OK;
}

enum bs_status sbc_unmap_sync(struct scsi_dev *dev, uint64_t lba, uint64_t n)
{
	uint64_t per = UNMAP_CHUNK_BYTES / dev->block_size;

	while (n) {
		uint64_t k = n < per ? n : per;
		enum bs_status st = sbc_io_sync(dev, BS_UNMAP, lba, k, NULL, false);

		if (st != BS_OK)
			return st;
		lba += k;
		n -= k;
	}
	return BS_OK;
}

size_t sbc_iov_cmp(const struct scsi_task *t, size_t skip, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t done = 0;

	for (int i = 0; i < t->iovcnt && done < len; i++) {
		const uint8_t *seg = t->iov[i].iov_base;
		size_t l = t->iov[i].iov_len, n;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		n = l - skip < len - done ? l - skip : len - done;
		if (memcmp(seg + skip, p + done, n)) {
			for (size_t j = 0; j < n; j++)
				if (seg[skip + j] != p[done + j])
					return done + j;
		}
		done += n;
		skip = 0;
	}
	return done; /* == len unless the data-out ran short, which callers rule out */
}

int sbc_iov_slice(const struct scsi_task *t, size_t skip, size_t len, struct iovec *out, int max)
{
	int n = 0;

	for (int i = 0; i < t->iovcnt && len; i++) {
		size_t l = t->iov[i].iov_len, k;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		if (n == max)
			return -1;
		k = l - skip < len ? l - skip : len;
		out[n].iov_base = (uint8_t *)t->iov[i].iov_base + skip;
		out[n].iov_len = k;
		n++;
		len -= k;
		skip = 0;
	}
	return len ? -1 : n;
}
