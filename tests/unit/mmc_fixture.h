/* A CD-ROM LU as utgtd builds it from `HANDLER vcdrom { DEVICE cd0 { filename ... } }`: a
 * 1 MiB "image" (512 blocks of 2048 bytes, block n filled with byte n) behind the real config
 * and fileio paths, seen by two nexuses. */
#ifndef UTGT_TEST_MMC_FIXTURE_H
#define UTGT_TEST_MMC_FIXTURE_H

#include <fcntl.h>

#include "scsi_harness.h"

#include "scsi/scsi_core.h"

#define MMC_BLOCKS 512u

static struct scsi_dev *cd_dev;
static struct th_nexus cd_nx, cd_nx2;
static char cd_iso[64], cd_iso2[64];

static void cd_make_image(char *path, size_t len, const char *tag, unsigned blocks)
{
	uint8_t blk[2048];
	int fd;

	snprintf(path, len, "/tmp/utgt-mmc-%d-%s.iso", (int)getpid(), tag);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	for (unsigned i = 0; i < blocks; i++) {
		memset(blk, (int)(i & 0xff), sizeof(blk));
		cr_assert_eq(write(fd, blk, sizeof(blk)), (ssize_t)sizeof(blk));
	}
	close(fd);
}

static void cd_open_with(const char *filename)
{
	struct utgt_attr a[] = {{.key = "filename", .value = filename, .line = 2}};
	struct diag d = {0};
	char err[256] = "";

	cd_dev = scsi_dev_configure("vcdrom", "cd0", a, 1, &d);
	cr_assert_not_null(cd_dev);
	cr_assert_eq(scsi_dev_open(cd_dev, err, sizeof(err)), 0, "%s", err);
	th_nexus_init(&cd_nx, "iqn.1994-05.com.example:init1", 1, &cd_dev, 1);
	th_nexus_init(&cd_nx2, "iqn.1994-05.com.example:init2", 2, &cd_dev, 1);
	th_clear_ua(&cd_nx, 0);
	th_clear_ua(&cd_nx2, 0);
}

static inline void cd_init(void)
{
	cd_make_image(cd_iso, sizeof(cd_iso), "a", MMC_BLOCKS);
	cd_make_image(cd_iso2, sizeof(cd_iso2), "b", 2 * MMC_BLOCKS);
	cd_open_with(cd_iso);
}

static inline void cd_init_empty(void)
{
	cd_make_image(cd_iso, sizeof(cd_iso), "a", MMC_BLOCKS);
	cd_make_image(cd_iso2, sizeof(cd_iso2), "b", 2 * MMC_BLOCKS);
	cd_open_with("none");
}

static void cd_fini(void)
{
	scsi_nexus_unregister(&cd_nx.nx);
	scsi_nexus_unregister(&cd_nx2.nx);
	scsi_dev_destroy(cd_dev);
	cd_dev = NULL;
	unlink(cd_iso);
	unlink(cd_iso2);
	scsi_core_shutdown();
}

/* A data-in command of cdb_len bytes on cd_nx, LUN 0. */
static struct th_result cd_in(const uint8_t *cdb, unsigned cdb_len, uint8_t *buf, uint32_t len)
{
	return th_exec(&cd_nx, 0, cdb, cdb_len, len ? SCSI_DIR_READ : SCSI_DIR_NONE, buf, len);
}

#endif
