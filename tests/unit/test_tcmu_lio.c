/* LIO configfs attributes of a user backstore (tcmu_lio.c) on a fake configfs tree. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "transports/tcmu/tcmu_lio.h"

static void attr(const char *root, const char *name, const char *val)
{
	char p[512];
	FILE *f;
	snprintf(p, sizeof(p), "%s/core/user_4/lio0/attrib/%s", root, name);
	f = fopen(p, "w");
	cr_assert_not_null(f, "%s", p);
	fputs(val, f);
	fclose(f);
}

Test(tcmu_lio, max_xfer_from_hw_max_sectors)
{
	char root[] = "/tmp/utgt-tcmu-cfs-XXXXXX", p[512];

	cr_assert_not_null(mkdtemp(root));
	cr_assert_eq(tcmu_lio_max_xfer(root, 4, "lio0"), 0, "no attributes: no limit");
	snprintf(p, sizeof(p), "%s/core", root), mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/core/user_4", root), mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/core/user_4/lio0", root), mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/core/user_4/lio0/attrib", root), mkdir(p, 0755);
	attr(root, "hw_max_sectors", "128\n");
	cr_assert_eq(tcmu_lio_max_xfer(root, 4, "lio0"), 0, "block size missing");
	attr(root, "hw_block_size", "512\n");
	cr_assert_eq(tcmu_lio_max_xfer(root, 4, "lio0"), 65536);
	attr(root, "hw_block_size", "4096\n");
	attr(root, "hw_max_sectors", "2048\n");
	cr_assert_eq(tcmu_lio_max_xfer(root, 4, "lio0"), 8u << 20);
	attr(root, "hw_max_sectors", "4294967295\n");
	cr_assert_eq(tcmu_lio_max_xfer(root, 4, "lio0"), 0, "past 4 GiB: no limit of ours");
	attr(root, "hw_max_sectors", "junk\n");
	cr_assert_eq(tcmu_lio_max_xfer(root, 4, "lio0"), 0);
	cr_assert_eq(tcmu_lio_max_xfer(root, 5, "lio0"), 0, "another HBA");
}
