/* scsi/scsi_dev.c: building, opening, sizing and destroying an LU. */
#include <fcntl.h>

#include "scsi_harness.h"

#include "scsi/scsi_core.h"

static struct backstore *ram(uint64_t size, uint32_t bs)
{
	struct backstore *b = calloc(1, sizeof(*b));
	b->ops = backstore_find("ramdisk");
	snprintf(b->name, sizeof(b->name), "r");
	b->size = size;
	b->block_size = bs;
	return b;
}

Test(dev, identity_defaults_are_stable)
{
	struct scsi_dev_params p;
	struct scsi_dev *a, *b;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "disk07");
	a = scsi_dev_new(&p, NULL);
	b = scsi_dev_new(&p, NULL);
	cr_assert_str_eq(a->p.vendor, "UTGT");
	cr_assert_str_eq(a->p.product, "disk07");
	cr_assert_str_eq(a->p.revision, "0100");
	cr_assert_str_eq(a->p.t10_dev_id, "disk07");
	cr_assert_eq(strlen(a->p.usn), 16);
	cr_assert_str_eq(a->p.usn, b->p.usn, "same name, same serial");
	cr_assert_not(a->open);
	/* configured values are kept */
	snprintf(p.vendor, sizeof(p.vendor), "ACME");
	snprintf(p.usn, sizeof(p.usn), "SN1");
	scsi_dev_destroy(b);
	b = scsi_dev_new(&p, NULL);
	cr_assert_str_eq(b->p.vendor, "ACME");
	cr_assert_str_eq(b->p.usn, "SN1");
	scsi_dev_destroy(a);
	scsi_dev_destroy(b);
}

Test(dev, open_sizes_the_lu)
{
	struct scsi_dev_params p;
	struct scsi_dev *d;
	char err[128];

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "d4k");
	p.d_sense = true;
	p.tas = true;
	d = scsi_dev_new(&p, ram(8 << 20, 4096));
	cr_assert_eq(scsi_dev_open(d, err, sizeof(err)), 0, "%s", err);
	cr_assert(d->open);
	cr_assert_eq(d->block_size, 4096);
	cr_assert_eq(d->block_shift, 12);
	cr_assert_eq(d->nr_blocks, 2048);
	cr_assert(d->mode.wce, "write-back by default");
	cr_assert(d->mode.d_sense);
	cr_assert(d->mode.tas);
	cr_assert_not_null(d->ua);
	cr_assert_not_null(d->ts);
	cr_assert_eq(scsi_dev_open(d, err, sizeof(err)), 0, "opening twice is harmless");
	scsi_dev_destroy(d);

	struct backstore *b = ram(1 << 20, 512);
	b->write_through = true;
	d = scsi_dev_new(&p, b);
	cr_assert_eq(scsi_dev_open(d, err, sizeof(err)), 0, "%s", err);
	cr_assert_not(d->mode.wce, "write_through: WCE 0");
	cr_assert_eq(d->block_shift, 9);
	scsi_dev_destroy(d);
}

Test(dev, open_errors)
{
	struct scsi_dev_params p;
	struct scsi_dev *d;
	char err[128] = "";

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "bad");
	d = scsi_dev_new(&p, ram(1 << 20, 1000));
	cr_assert_neq(scsi_dev_open(d, err, sizeof(err)), 0);
	cr_assert(strstr(err, "1000"), "message names the block size: %s", err);
	cr_assert_not(d->open);
	scsi_dev_destroy(d);

	d = scsi_dev_new(&p, NULL);
	err[0] = 0;
	cr_assert_neq(scsi_dev_open(d, err, sizeof(err)), 0);
	cr_assert(strstr(err, "bad"), "%s", err);
	scsi_dev_destroy(d);
}

/* alua_follow_lock announces this gateway's port group: without a DEVICE_GROUP holding one of
 * its targets there is none, and open says so before touching the store. */
Test(dev, follow_lock_needs_a_local_target_port_group)
{
	struct scsi_dev_params p;
	struct scsi_tpg tpg = {.group_id = 7, .local = false};
	struct scsi_alua_group g = {.ntpgs = 1, .tpgs = &tpg};
	struct backstore *b = ram(1 << 20, 512);
	struct scsi_dev *d;
	char err[256] = "";

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "shared");
	b->ceph.alua_follow_lock = true;
	d = scsi_dev_new(&p, b);
	cr_assert_neq(scsi_dev_open(d, err, sizeof(err)), 0);
	cr_assert(strstr(err, "shared: alua_follow_lock needs the device in a DEVICE_GROUP"), "%s",
		  err);
	d->alua = &g; /* only a peer's group */
	cr_assert_neq(scsi_dev_open(d, err, sizeof(err)), 0);
	tpg.local = true;
	cr_assert_eq(scsi_dev_open(d, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(b->local_group, 7);
	d->alua = NULL;
	scsi_dev_destroy(d);
}

/* A fileio LU on an existing file of `file_size` bytes, `size` configured (0: none). */
static struct scsi_dev *file_dev(const char *path, uint64_t file_size, uint64_t size)
{
	struct backstore *b = calloc(1, sizeof(*b));
	struct scsi_dev_params p;
	struct scsi_dev *d;
	char err[256] = "";
	int fd;

	unlink(path);
	fd = open(path, O_CREAT | O_RDWR, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)file_size), 0);
	close(fd);
	b->ops = backstore_find("vdisk_fileio");
	snprintf(b->name, sizeof(b->name), "f");
	snprintf(b->filename, sizeof(b->filename), "%s", path);
	b->size = size;
	b->block_size = 512;
	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "resize0");
	d = scsi_dev_new(&p, b);
	cr_assert_eq(scsi_dev_open(d, err, sizeof(err)), 0, "%s", err);
	return d;
}

/* scsi_dev_resize() re-reads what can change (the file's length) and keeps what was
 * configured: an LU given `size` smaller than its file stays that size while the file is long
 * enough, follows the file when it shrinks below it, and returns to it when the file grows. */
Test(dev, resize_keeps_configured_size)
{
	char path[64];
	struct scsi_dev *d;

	snprintf(path, sizeof(path), "/tmp/utgt-test-%d-resize.img", (int)getpid());
	d = file_dev(path, 4 << 20, 1 << 20);
	cr_assert_eq(d->nr_blocks, 2048, "configured 1 MiB of a 4 MiB file");
	scsi_dev_resize(d);
	cr_assert_eq(d->nr_blocks, 2048, "nothing changed: still the configured size");
	cr_assert_eq(truncate(path, 8 << 20), 0);
	scsi_dev_resize(d);
	cr_assert_eq(d->nr_blocks, 2048, "a longer file does not grow a configured LU");
	cr_assert_eq(truncate(path, 512 << 10), 0);
	scsi_dev_resize(d);
	cr_assert_eq(d->nr_blocks, 1024, "a file shorter than the configured size bounds the LU");
	cr_assert_eq(truncate(path, 4 << 20), 0);
	scsi_dev_resize(d);
	cr_assert_eq(d->nr_blocks, 2048, "back to the configured size, not the file's");
	scsi_dev_destroy(d);

	/* without `size` the LU is the file, whatever its length */
	d = file_dev(path, 1 << 20, 0);
	cr_assert_eq(d->nr_blocks, 2048);
	cr_assert_eq(truncate(path, 3 << 20), 0);
	scsi_dev_resize(d);
	cr_assert_eq(d->nr_blocks, 6144);
	scsi_dev_destroy(d);
	unlink(path);
}
