/* ramdisk: the store lives in anonymous memory.  Pages are mapped lazily (MAP_NORESERVE), so
 * a large, mostly unwritten ramdisk costs only what is written; UNMAP hands whole pages back
 * to the kernel.  A bitmap of written pages answers GET LBA STATUS.  Every verb completes
 * synchronously, before submit returns.  READs may send straight from the mapping (map). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scsi/backstore/backstore.h"
#include "scsi/backstore/bs_util.h"

struct ramdisk {
	char *mem;
	size_t len;
	size_t page;
	unsigned long *mapped; /* one bit per page: written since created or last dropped */
};

#define BITS_PER_WORD (8 * sizeof(unsigned long))

static void rd_mark(struct ramdisk *rd, size_t off, size_t len, bool set)
{
	size_t first = off / rd->page, last = (off + len - 1) / rd->page;

	for (size_t pg = first; pg <= last; pg++) {
		unsigned long bit = 1ul << (pg % BITS_PER_WORD);
		unsigned long *w = &rd->mapped[pg / BITS_PER_WORD];

		/* writers of neighbouring pages share words: atomic read-modify-write */
		if (set) {
			if (!(__atomic_load_n(w, __ATOMIC_RELAXED) & bit))
				__atomic_fetch_or(w, bit, __ATOMIC_RELAXED);
		} else {
			__atomic_fetch_and(w, ~bit, __ATOMIC_RELAXED);
		}
	}
}

static bool rd_page_mapped(const struct ramdisk *rd, size_t pg)
{
	return __atomic_load_n(&rd->mapped[pg / BITS_PER_WORD], __ATOMIC_RELAXED) &
	       (1ul << (pg % BITS_PER_WORD));
}

static int rd_open(struct backstore *bs, char *err, size_t errlen)
{
	struct ramdisk *rd;

	if (!bs_open_block_size(bs, err, errlen))
		return -1;
	bs->size -= bs->size % bs->block_size;
	if (!bs->size) {
		snprintf(err, errlen, "%s: ramdisk needs a size of at least one block", bs->name);
		return -1;
	}
	if (bs->size > SIZE_MAX) {
		snprintf(err, errlen, "%s: size too large", bs->name);
		return -1;
	}
	rd = calloc(1, sizeof(*rd));
	if (!rd) {
		snprintf(err, errlen, "%s: out of memory", bs->name);
		return -1;
	}
	rd->len = bs->size;
	rd->page = (size_t)sysconf(_SC_PAGESIZE);
	rd->mapped =
	    calloc((rd->len / rd->page + BITS_PER_WORD) / BITS_PER_WORD, sizeof(unsigned long));
	if (!rd->mapped) {
		snprintf(err, errlen, "%s: out of memory", bs->name);
		free(rd);
		return -1;
	}
	rd->mem = mmap(NULL, rd->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (rd->mem == MAP_FAILED) {
		snprintf(err, errlen, "%s: cannot map %zu bytes: %s", bs->name, rd->len,
			 strerror(errno));
		free(rd->mapped);
		free(rd);
		return -1;
	}
	bs->priv = rd;
	bs->can_unmap = true;
	bs->unmap_zeroes = true;
	return 0;
}

static void rd_close(struct backstore *bs)
{
	struct ramdisk *rd = bs->priv;

	if (!rd)
		return;
	munmap(rd->mem, rd->len);
	free(rd->mapped);
	free(rd);
	bs->priv = NULL;
}

/* Zero [off, off+len): whole pages are dropped (they read back as zeros and free memory),
 * the ragged edges are cleared by hand. */
static void rd_zero(struct ramdisk *rd, size_t off, size_t len)
{
	size_t first = (off + rd->page - 1) / rd->page * rd->page;
	size_t end = off + len;
	size_t last = end / rd->page * rd->page;

	if (first >= last) {
		memset(rd->mem + off, 0, len);
		return;
	}
	memset(rd->mem + off, 0, first - off);
	if (madvise(rd->mem + first, last - first, MADV_DONTNEED))
		memset(rd->mem + first, 0, last - first);
	else
		rd_mark(rd, first, last - first, false);
	memset(rd->mem + last, 0, end - last);
}

static void rd_write_same(struct backstore *bs, struct ramdisk *rd, struct bs_io *io)
{
	char *blk = rd->mem + io->off;
	uint64_t done;

	bs_write_same_block(bs, io, blk);
	for (done = bs->block_size; done < io->len; done += bs->block_size)
		memcpy(rd->mem + io->off + done, blk, bs->block_size);
}

static void rd_submit(struct backstore *bs, struct bs_io *io)
{
	struct ramdisk *rd = bs->priv;
	enum bs_status st = bs_check_io(bs, io);

	if (st != BS_OK) {
		io->cb(io, st);
		return;
	}
	switch (io->op) {
	case BS_READ:
		bs_buf_to_iov(io->iov, io->iovcnt, 0, rd->mem + io->off, io->len);
		break;
	case BS_WRITE:
		if (!io->len)
			break;
		rd_mark(rd, io->off, io->len, true);
		bs_iov_to_buf(rd->mem + io->off, io->iov, io->iovcnt, 0, io->len);
		break;
	case BS_WRITE_SAME:
		if (!io->len)
			break;
		rd_mark(rd, io->off, io->len, true);
		rd_write_same(bs, rd, io);
		break;
	case BS_UNMAP:
		rd_zero(rd, io->off, io->len);
		break;
	case BS_FLUSH:
		break;
	case BS_COMPARE_WRITE: /* refused by bs_check_io: compare_write_max is 0 */
		io->cb(io, BS_ENOTSUP);
		return;
	}
	io->cb(io, BS_OK);
}

/* The store is one mapping: any range of it is one piece, valid until close.  A READ of a
 * page never written sees the kernel's zero page, as a copy would. */
static void *rd_map(struct backstore *bs, uint64_t off, uint64_t len)
{
	struct ramdisk *rd = bs->priv;

	if (!rd || off > rd->len || len > rd->len - off)
		return NULL;
	return rd->mem + off;
}

/* GET LBA STATUS: a block is mapped when its page has been written and not dropped since. */
static enum bs_status rd_lba_status(struct backstore *bs, uint64_t off, uint64_t len, bool *mapped,
				    uint64_t *run)
{
	struct ramdisk *rd = bs->priv;
	size_t pg = off / rd->page;
	uint64_t end = off + len, edge;
	bool m = rd_page_mapped(rd, pg);

	while ((uint64_t)(pg + 1) * rd->page < end && rd_page_mapped(rd, pg + 1) == m)
		pg++;
	edge = (uint64_t)(pg + 1) * rd->page;
	if (edge > end)
		edge = end;
	*mapped = m;
	*run = edge - off;
	return BS_OK;
}

static const char *const rd_attrs[] = {"size", "size_mb", "blocksize", "read_only", NULL};

const struct backstore_ops bs_ramdisk_ops = {
    .name = "ramdisk",
    .attrs = rd_attrs,
    .open = rd_open,
    .close = rd_close,
    .submit = rd_submit,
    .lba_status = rd_lba_status,
    .map = rd_map,
};
