/* LIO configfs attributes of a user backstore (tcmu_lio.c) on a fake configfs tree. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static void mkdirs(const char *root, const char *rel)
{
	char p[1024], *s;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

/* lun_dir/<name> -> a relative path to core/user_<hba>/<dev>, as configfs shows the link */
static void link_lun(const char *root, const char *lun_dir, const char *name, const char *target)
{
	char p[1024];

	mkdirs(root, lun_dir);
	snprintf(p, sizeof(p), "%s/%s/%s", root, lun_dir, name);
	cr_assert_eq(symlink(target, p), 0, "%s", p);
}

Test(tcmu_lio, fabric_of_the_luns)
{
	char root[] = "/tmp/utgt-tcmu-fab-XXXXXX", fab[64];

	cr_assert_not_null(mkdtemp(root));
	mkdirs(root, "core/user_0/lio0/attrib");
	mkdirs(root, "core/user_0/lio1");
	mkdirs(root, "srpt/discovery_auth");
	cr_assert_eq(tcmu_lio_fabric(root, 0, "lio0", fab, sizeof(fab)), SCSI_PROTO_SAS);
	cr_assert_str_eq(fab, "", "no LUN links to it yet");
	/* ib_srpt names its TPG after the port; another device's LUN next to ours */
	link_lun(root, "srpt/fe80::1/fe80::1/lun/lun_1", "lio1",
		 "../../../../../../target/core/user_0/lio1");
	cr_assert_eq(tcmu_lio_fabric(root, 0, "lio0", fab, sizeof(fab)), SCSI_PROTO_SAS);
	link_lun(root, "srpt/fe80::1/fe80::1/lun/lun_0", "lio0",
		 "../../../../../../target/core/user_0/lio0");
	cr_assert_eq(tcmu_lio_fabric(root, 0, "lio0", fab, sizeof(fab)), SCSI_PROTO_SRP);
	cr_assert_str_eq(fab, "srpt");
	cr_assert_eq(tcmu_lio_fabric(root, 1, "lio0", fab, sizeof(fab)), SCSI_PROTO_SAS,
		     "user_1/lio0 is another device");
	cr_assert_eq(tcmu_lio_fabric(root, 0, "lio", fab, sizeof(fab)), SCSI_PROTO_SAS,
		     "a prefix of the name is not the device");
	link_lun(root, "iscsi/iqn.2026-12.org.x:t/tpgt_1/lun/lun_0", "lio1",
		 "../../../../../../target/core/user_0/lio1");
	cr_assert_eq(tcmu_lio_fabric(root, 0, "lio1", fab, sizeof(fab)), SCSI_PROTO_SAS,
		     "two fabrics: no one protocol");
	cr_assert(!strcmp(fab, "srpt iscsi") || !strcmp(fab, "iscsi srpt"), "%s", fab);
	link_lun(root, "iscsi/iqn.2026-12.org.x:t/tpgt_1/lun/lun_5", "x",
		 "../../../../../../target/core/user_0/lio2");
	mkdirs(root, "core/user_0/lio2");
	cr_assert_eq(tcmu_lio_fabric(root, 0, "lio2", fab, sizeof(fab)), SCSI_PROTO_ISCSI);
	link_lun(root, "loopback/naa.5001405000000001/tpgt_1/lun/lun_0", "lio3",
		 "../../../../../../target/core/user_0/lio3");
	cr_assert_eq(tcmu_lio_fabric(root, 0, "lio3", fab, sizeof(fab)), SCSI_PROTO_SAS);
	cr_assert_str_eq(fab, "loopback");
	cr_assert_str_eq(tcmu_lio_proto_name(SCSI_PROTO_SRP), "srp");
	cr_assert_str_eq(tcmu_lio_proto_name(SCSI_PROTO_SAS), "sas");
	cr_assert_eq(tcmu_lio_fabric("/nonexistent", 0, "lio0", fab, sizeof(fab)), SCSI_PROTO_SAS);
}

Test(tcmu_lio, wants_reply)
{
	char root[] = "/tmp/utgt-tcmu-nlr-XXXXXX", p[512];

	cr_assert_not_null(mkdtemp(root));
	cr_assert(tcmu_lio_wants_reply(root, 4, "lio0"), "unreadable: reply, as tcmu-runner");
	snprintf(p, sizeof(p), "%s/core", root), mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/core/user_4", root), mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/core/user_4/lio0", root), mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/core/user_4/lio0/attrib", root), mkdir(p, 0755);
	attr(root, "nl_reply_supported", "-1\n");
	cr_assert_not(tcmu_lio_wants_reply(root, 4, "lio0"));
	attr(root, "nl_reply_supported", "0\n");
	cr_assert_not(tcmu_lio_wants_reply(root, 4, "lio0"));
	attr(root, "nl_reply_supported", "1\n");
	cr_assert(tcmu_lio_wants_reply(root, 4, "lio0"));
}
