/* vdisk_fileio: a logical unit in a regular file, through the asynchronous engine (bs_aio).
 *
 * SCST semantics: the LU is the file (its size, rounded down to whole blocks).  Our addition:
 * a file that does not exist is created sparse when a size is configured.  read_only opens
 * O_RDONLY; write_through opens O_DSYNC (unless nv_cache); o_direct opens O_DIRECT, with a
 * second buffered descriptor for I/O the file cannot take directly; nv_cache makes FLUSH and
 * FUA no-ops; thin_provisioned lets UNMAP punch holes (reads of a hole return zeros).  A file
 * that is not thin provisioned does not deallocate: UNMAP is refused (BS_ENOTSUP). */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ut_flock.h"
#include "common/ut_log.h"
#include "scsi/backstore/backstore.h"
#include "scsi/backstore/bs_aio.h"
#include "scsi/backstore/bs_util.h"

#define DIO_FALLBACK_ALIGN 4096

/* One process serves a file: a second daemon (or a second DEVICE on the same file) would
 * split reservations and caches between them, and a second daemon with another port
 * would serve it unnoticed.  Writers lock it
 * exclusively, read-only devices shared. */
static int lock_file(struct backstore *bs, int fd, char *err, size_t errlen)
{
	long pid;

	if (ut_flock_try(fd, bs->read_only ? LOCK_SH : LOCK_EX, &pid) == 0)
		return 0;
	if (errno != EWOULDBLOCK) {
		snprintf(err, errlen, "%s: cannot lock %s: %s", bs->name, bs->filename,
			 strerror(errno));
		return -1;
	}
	if (pid > 0)
		snprintf(err, errlen, "%s: %s is in use by process %ld (locked)", bs->name,
			 bs->filename, pid);
	else
		snprintf(err, errlen, "%s: %s is in use by another process (locked)", bs->name,
			 bs->filename);
	return -1;
}

/* Open (creating when allowed) and size the file.  Returns the fd or -1 with err set. */
static int fileio_open_sized(struct backstore *bs, int flags, char *err, size_t errlen)
{
	struct stat st;
	uint64_t fsize;
	int fd;

	if (stat(bs->filename, &st) < 0) {
		if (errno != ENOENT) {
			snprintf(err, errlen, "%s: %s: %s", bs->name, bs->filename,
				 strerror(errno));
			return -1;
		}
		if (!bs->size) {
			snprintf(err, errlen,
				 "%s: %s does not exist and no size is set to create it", bs->name,
				 bs->filename);
			return -1;
		}
		if (bs->read_only) {
			snprintf(err, errlen, "%s: %s does not exist (read_only: not creating it)",
				 bs->name, bs->filename);
			return -1;
		}
		fd = open(bs->filename, flags | O_CREAT | O_EXCL, 0600);
		if (fd < 0) {
			snprintf(err, errlen, "%s: cannot create %s: %s", bs->name, bs->filename,
				 strerror(errno));
			return -1;
		}
		if (ftruncate(fd, (off_t)bs->size) < 0) {
			snprintf(err, errlen, "%s: cannot size %s to %llu bytes: %s", bs->name,
				 bs->filename, (unsigned long long)bs->size, strerror(errno));
			close(fd);
			unlink(bs->filename);
			return -1;
		}
		ut_log(LOG_NOTICE, "%s: created %s (%llu bytes, sparse)", bs->name, bs->filename,
		       (unsigned long long)bs->size);
		return fd;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: %s is a directory", bs->name, bs->filename);
		return -1;
	}
	fd = open(bs->filename, flags);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open %s: %s", bs->name, bs->filename,
			 strerror(errno));
		return -1;
	}
	fsize = (uint64_t)st.st_size;
	if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, &fsize) < 0) {
		snprintf(err, errlen, "%s: %s: cannot read the device size: %s", bs->name,
			 bs->filename, strerror(errno));
		close(fd);
		return -1;
	}
	if (bs->size > fsize) {
		snprintf(
		    err, errlen,
		    "%s: size %llu is larger than %s (%llu bytes); existing files are not grown",
		    bs->name, (unsigned long long)bs->size, bs->filename,
		    (unsigned long long)fsize);
		close(fd);
		return -1;
	}
	if (!bs->size)
		bs->size = fsize;
	return fd;
}

/* Does the file deallocate?  Punch a hole past the end of the data, which changes nothing. */
static bool fileio_can_punch(int fd, uint64_t size)
{
	uint64_t at = (size + 65535) & ~65535ull;

	return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)at, 65536) == 0;
}

static int fileio_open(struct backstore *bs, char *err, size_t errlen)
{
	struct bs_aio_opts o = {.name = bs->name, .fd = -1, .fd_buffered = -1};
	int flags = (bs->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_LARGEFILE;
	struct bs_aio *a;

	if (!bs->filename[0]) {
		snprintf(err, errlen, "%s: vdisk_fileio needs a filename", bs->name);
		return -1;
	}
	if (!bs_open_block_size(bs, err, errlen))
		return -1;
	if (bs->write_through && !bs->nv_cache)
		flags |= O_DSYNC;
	o.fd = fileio_open_sized(bs, flags, err, errlen);
	if (o.fd < 0)
		return -1;
	if (lock_file(bs, o.fd, err, errlen)) {
		close(o.fd);
		return -1;
	}
	bs->size -= bs->size % bs->block_size;
	if (!bs->size) {
		snprintf(err, errlen, "%s: %s is smaller than one %u-byte block", bs->name,
			 bs->filename, bs->block_size);
		close(o.fd);
		return -1;
	}
	if (bs->o_direct) {
		int dfd = open(bs->filename, flags | O_DIRECT);

		if (dfd < 0) {
			snprintf(err, errlen, "%s: %s cannot be opened O_DIRECT: %s", bs->name,
				 bs->filename, strerror(errno));
			close(o.fd);
			return -1;
		}
		o.fd_buffered = o.fd;
		o.fd = dfd;
		bs_dio_align(dfd, DIO_FALLBACK_ALIGN, &o.dio_mem_align, &o.dio_off_align);
		if (!o.dio_mem_align || !o.dio_off_align)
			o.dio_mem_align = o.dio_off_align = DIO_FALLBACK_ALIGN;
	}
	bs->can_unmap = false;
	bs->unmap_zeroes = false;
	if (bs->thin_provisioned && !bs->read_only) {
		if (fileio_can_punch(o.fd, bs->size)) {
			bs->can_unmap = true;
			bs->unmap_zeroes = true;
		} else {
			ut_log(LOG_WARNING, "%s: %s cannot punch holes; thin provisioning disabled",
			       bs->name, bs->filename);
		}
	}
	o.block_size = bs->block_size;
	o.nv_cache = bs->nv_cache;
	a = bs_aio_create(&o, err, errlen);
	if (!a)
		return -1;
	bs->priv = a;
	return 0;
}

/* GET LBA STATUS: holes are deallocated.  A block partly in a hole counts as mapped. */
static enum bs_status fileio_lba_status(struct backstore *bs, uint64_t off, uint64_t len,
					bool *mapped, uint64_t *run)
{
	int fd = bs_aio_fd(bs->priv);
	uint64_t bsz = bs->block_size, end = off + len, edge;
	off_t data = lseek(fd, (off_t)off, SEEK_DATA);

	if (data < 0 && errno != ENXIO)
		return errno == EINVAL ? BS_ENOTSUP : BS_EIO;
	if (data >= 0 && (uint64_t)data == off) {
		off_t hole = lseek(fd, (off_t)off, SEEK_HOLE);
		if (hole < 0)
			return BS_EIO;
		edge = ((uint64_t)hole + bsz - 1) / bsz * bsz;
		*mapped = true;
	} else {
		/* a hole up to the next data (or the end of the file) */
		edge = data < 0 ? end : (uint64_t)data / bsz * bsz;
		*mapped = false;
		if (edge <= off) {
			/* data starts inside this block: the block is mapped */
			*mapped = true;
			edge = off + bsz;
		}
	}
	if (edge > end)
		edge = end;
	*run = edge - off;
	return BS_OK;
}

/* A file grows sparsely (ftruncate) and is never shrunk: a smaller LU leaves its tail alone. */
static int fileio_resize(struct backstore *bs, uint64_t bytes, char *err, size_t errlen)
{
	int fd = bs_aio_fd(bs->priv);
	struct stat st;

	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s: %s", bs->name, bs->filename, strerror(errno));
		return -1;
	}
	if (!bytes)
		bytes = (uint64_t)st.st_size;
	if (bytes > (uint64_t)st.st_size) {
		if (bs->read_only) {
			snprintf(err, errlen, "%s: %s is read-only and holds %llu bytes", bs->name,
				 bs->filename, (unsigned long long)st.st_size);
			return -1;
		}
		if (ftruncate(fd, (off_t)bytes) < 0) {
			snprintf(err, errlen, "%s: cannot grow %s to %llu bytes: %s", bs->name,
				 bs->filename, (unsigned long long)bytes, strerror(errno));
			return -1;
		}
	}
	return bs_set_size(bs, bytes, err, errlen);
}

static const char *const fileio_attrs[] = {
    "filename", "size",	    "size_mb",	     "blocksize",	 "read_only",
    "nv_cache", "o_direct", "write_through", "thin_provisioned", NULL,
};

const struct backstore_ops bs_fileio_ops = {
    .name = "vdisk_fileio",
    .attrs = fileio_attrs,
    .open = fileio_open,
    .close = bs_aio_store_close,
    .submit = bs_aio_store_submit,
    .engine_stats = bs_aio_store_stats,
    .lba_status = fileio_lba_status,
    .resize = fileio_resize,
};

/* SCST's vcdrom: an ISO image behind the same engine, read-only, 2048-byte blocks (the
 * configuration sets both). */
static const char *const vcdrom_attrs[] = {"filename", NULL};

const struct backstore_ops bs_vcdrom_ops = {
    .name = "vcdrom",
    .attrs = vcdrom_attrs,
    .open = fileio_open,
    .close = bs_aio_store_close,
    .submit = bs_aio_store_submit,
    .engine_stats = bs_aio_store_stats,
};
