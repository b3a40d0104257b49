/* scsi_dev_configure: every SCST device attribute, good and bad values, defaults per handler,
 * which handler takes which attribute, SCST-kernel-only and read-only attributes, messages
 * with the attribute's line. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "scsi/scsi_dev.h"

#define MAXMSG 64

struct cap {
	int n;
	bool err[MAXMSG];
	int line[MAXMSG];
	char msg[MAXMSG][512];
};

static struct cap cap;

static void emit(struct diag *d, bool error, int line, const char *msg)
{
	(void)d;
	if (cap.n < MAXMSG) {
		cap.err[cap.n] = error;
		cap.line[cap.n] = line;
		snprintf(cap.msg[cap.n], sizeof(cap.msg[0]), "%s", msg);
		cap.n++;
	}
}

static struct diag dg;

static void reset(void)
{
	memset(&cap, 0, sizeof(cap));
	memset(&dg, 0, sizeof(dg));
	dg.file = "test.conf";
	dg.emit = emit;
}

/* Configure from key/value pairs (NULL-terminated); attribute i is on line 10 + i. */
static struct scsi_dev *conf(const char *handler, const char *name, ...)
{
	struct utgt_attr a[32];
	unsigned n = 0;
	va_list ap;

	reset();
	va_start(ap, name);
	for (;;) {
		const char *k = va_arg(ap, const char *);
		if (!k)
			break;
		a[n].key = k;
		a[n].value = va_arg(ap, const char *);
		a[n].line = 10 + (int)n;
		n++;
	}
	va_end(ap);
	return scsi_dev_configure_at(handler, name, 5, a, n, &dg);
}

/* Is there a message of that kind on that line containing all of the given words? */
static bool has(bool error, int line, const char *w1, const char *w2)
{
	for (int i = 0; i < cap.n; i++) {
		if (cap.err[i] != error || (line >= 0 && cap.line[i] != line))
			continue;
		if (w1 && !strstr(cap.msg[i], w1))
			continue;
		if (w2 && !strstr(cap.msg[i], w2))
			continue;
		return true;
	}
	return false;
}

static void dump(void)
{
	for (int i = 0; i < cap.n; i++)
		fprintf(stderr, "  %s line %d: %s\n", cap.err[i] ? "error" : "warning", cap.line[i],
			cap.msg[i]);
}

#define assert_clean(dev)                                                                          \
	do {                                                                                       \
		if (cap.n)                                                                         \
			dump();                                                                    \
		cr_assert_not_null(dev);                                                           \
		cr_assert_eq(dg.errors, 0);                                                        \
		cr_assert_eq(dg.warnings, 0);                                                      \
	} while (0)

#define assert_error(dev, line, w1, w2)                                                            \
	do {                                                                                       \
		if (!has(true, line, w1, w2))                                                      \
			dump();                                                                    \
		cr_assert_null(dev);                                                               \
		cr_assert(has(true, line, w1, w2), "no error at line %d with '%s' '%s'", line,     \
			  w1 ? w1 : "", w2 ? w2 : "");                                             \
	} while (0)

static const char *F = "/tmp/utgt-config-test-never-created.img";

Test(scsi_dev_config, fileio_defaults)
{
	struct scsi_dev *dev = conf("vdisk_fileio", "disk01", "filename", F, NULL);

	assert_clean(dev);
	cr_assert_eq(dev->bs->ops, &bs_fileio_ops);
	cr_assert_str_eq(dev->bs->filename, F);
	cr_assert_str_eq(dev->bs->name, "disk01");
	cr_assert_eq(dev->bs->block_size, 512);
	cr_assert_eq(dev->bs->size, 0, "from the file at open");
	cr_assert_not(dev->bs->read_only);
	cr_assert_not(dev->bs->nv_cache);
	cr_assert_not(dev->bs->o_direct);
	cr_assert_not(dev->bs->write_through);
	cr_assert_not(dev->bs->thin_provisioned, "SCST: fileio thin only when asked");
	cr_assert(dev->p.rotational, "SCST DEF_ROTATIONAL 1");
	cr_assert_not(dev->p.removable);
	cr_assert_str_eq(dev->p.name, "disk01");
	cr_assert_eq(dev->p.naa_len, 0);
	cr_assert_eq(access(F, F_OK), -1, "configuring opens nothing");
	scsi_dev_destroy(dev);
}

Test(scsi_dev_config, handler_defaults)
{
	struct scsi_dev *dev = conf("vdisk_blockio", "b", "filename", "/dev/loop7", NULL);

	assert_clean(dev);
	cr_assert_eq(dev->bs->ops, &bs_blockio_ops);
	cr_assert(dev->bs->thin_provisioned, "SCST enables it for blockio when it can discard");
	cr_assert(dev->p.rotational);
	scsi_dev_destroy(dev);
	dev = conf("vdisk_nullio", "n", NULL);
	assert_clean(dev);
	cr_assert_eq(dev->bs->ops, &bs_nullio_ops);
	cr_assert_eq(dev->bs->size, 0, "SCST's 2.5 TiB at open");
	cr_assert(dev->bs->read_zero);
	cr_assert_not(dev->bs->dummy);
	cr_assert_not(dev->bs->thin_provisioned);
	scsi_dev_destroy(dev);
	dev = conf("ramdisk", "r", "size_mb", "64", NULL);
	assert_clean(dev);
	cr_assert_eq(dev->bs->ops, &bs_ramdisk_ops);
	cr_assert_eq(dev->bs->size, 64 << 20);
	cr_assert(dev->bs->thin_provisioned, "a ramdisk deallocates");
	cr_assert_not(dev->p.rotational);
	scsi_dev_destroy(dev);
}

Test(scsi_dev_config, every_boolean_attribute)
{
	static const char *bools[] = {"read_only",	  "nv_cache",	"o_direct", "write_through",
				      "thin_provisioned", "rotational", "removable"};

	for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
		struct scsi_dev *dev =
		    conf("vdisk_fileio", "d", "filename", F, bools[i], "1", NULL);
		assert_clean(dev);
		bool v[] = {dev->bs->read_only,	    dev->bs->nv_cache,	       dev->bs->o_direct,
			    dev->bs->write_through, dev->bs->thin_provisioned, dev->p.rotational,
			    dev->p.removable};
		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
			bool expect = k == i || k == 5; /* rotational defaults on */
			cr_assert_eq(v[k], expect, "%s 1: field %zu is %d", bools[i], k, v[k]);
		}
		scsi_dev_destroy(dev);
		dev = conf("vdisk_fileio", "d", "filename", F, bools[i], "0", NULL);
		assert_clean(dev);
		scsi_dev_destroy(dev);
		dev = conf("vdisk_fileio", "d", "filename", F, bools[i], "2", NULL);
		assert_error(dev, 11, bools[i], "'2'");
		dev = conf("vdisk_fileio", "d", "filename", F, bools[i], "", NULL);
		assert_error(dev, 11, bools[i], "expected 0 or 1");
	}
	{
		struct scsi_dev *dev =
		    conf("vdisk_fileio", "d", "filename", F, "rotational", "0", NULL);
		assert_clean(dev);
		cr_assert_not(dev->p.rotational);
		scsi_dev_destroy(dev);
	}
}

Test(scsi_dev_config, nullio_booleans)
{
	struct scsi_dev *dev = conf("vdisk_nullio", "n", "dummy", "1", "read_zero", "0", NULL);

	assert_clean(dev);
	cr_assert(dev->bs->dummy);
	cr_assert_not(dev->bs->read_zero);
	scsi_dev_destroy(dev);
	dev = conf("vdisk_nullio", "n", "dummy", "yes please", NULL);
	assert_error(dev, 10, "dummy", "yes please");
	dev = conf("vdisk_nullio", "n", "read_zero", "-1", NULL);
	assert_error(dev, 10, "read_zero", NULL);
}

Test(scsi_dev_config, blocksize)
{
	struct scsi_dev *dev = conf("vdisk_fileio", "d", "filename", F, "blocksize", "4096", NULL);

	assert_clean(dev);
	cr_assert_eq(dev->bs->block_size, 4096);
	scsi_dev_destroy(dev);
	dev = conf("vdisk_fileio", "d", "filename", F, "blocksize", "1024", NULL);
	assert_error(dev, 11, "blocksize", "512 or 4096");
	dev = conf("ramdisk", "r", "size", "1M", "blocksize", "4k", NULL);
	assert_error(dev, 11, "blocksize", "'4k'");
	dev = conf("vdisk_nullio", "n", "blocksize", "", NULL);
	assert_error(dev, 10, "blocksize", NULL);
}

Test(scsi_dev_config, filename_rules)
{
	struct scsi_dev *dev = conf("vdisk_fileio", "d", NULL);

	assert_error(dev, 5, "needs a filename", NULL);
	dev = conf("vdisk_blockio", "d", "read_only", "1", NULL);
	assert_error(dev, 5, "needs a filename", NULL);
	dev = conf("vdisk_fileio", "d", "filename", "disk.img", NULL);
	assert_error(dev, 10, "filename", "absolute");
	dev = conf("vdisk_fileio", "d", "filename", "", NULL);
	assert_error(dev, 10, "filename", "empty");
	dev = conf("vdisk_nullio", "d", "filename", F, NULL);
	assert_error(dev, 10, "filename", "not valid for handler vdisk_nullio");
	dev = conf("ramdisk", "d", "size", "1M", "filename", F, NULL);
	assert_error(dev, 11, "filename", "not valid for handler ramdisk");
	{
		char longp[5000];
		memset(longp, 'a', sizeof(longp));
		longp[0] = '/';
		longp[sizeof(longp) - 1] = 0;
		dev = conf("vdisk_fileio", "d", "filename", longp, NULL);
		assert_error(dev, 10, "filename", "too long");
	}
}

Test(scsi_dev_config, rbd_attributes)
{
	struct scsi_dev *dev = conf("vdisk_rbd", "r", "pool", "rbd", "image", "img1", "ceph_conf",
				    "/etc/ceph/ceph.conf", "ceph_user", "gw", "ceph_keyring",
				    "/etc/ceph/gw.keyring", "size_mb", "64", NULL);

	assert_clean(dev);
	cr_assert_eq(dev->bs->ops, &bs_rbd_ops);
	cr_assert_str_eq(dev->bs->ceph.pool, "rbd");
	cr_assert_str_eq(dev->bs->ceph.image, "img1");
	cr_assert_str_eq(dev->bs->ceph.conf, "/etc/ceph/ceph.conf");
	cr_assert_str_eq(dev->bs->ceph.user, "gw");
	cr_assert_str_eq(dev->bs->ceph.keyring, "/etc/ceph/gw.keyring");
	cr_assert_eq(dev->bs->size, 64u << 20, "checked against the image at open");
	cr_assert(dev->bs->thin_provisioned, "RBD images are thin");
	cr_assert(dev->bs->write_through, "librbd's cache is off: WCE 0");
	cr_assert_eq(dev->bs->filename[0], 0);
	scsi_dev_destroy(dev);

	dev = conf("vdisk_rbd", "r", "pool", "rbd", "image", "i", NULL);
	assert_clean(dev);
	cr_assert_eq(dev->bs->ceph.user[0], 0, "admin by default (at open)");
	scsi_dev_destroy(dev);

	dev = conf("vdisk_rbd", "r", "pool", "rbd", NULL);
	assert_error(dev, 5, "needs pool and image", NULL);
	dev = conf("vdisk_rbd", "r", "pool", "rbd", "image", "i", "ceph_user", "client.gw", NULL);
	assert_error(dev, 12, "ceph_user", "without 'client.'");
	dev = conf("vdisk_rbd", "r", "pool", "rbd", "image", "a/b", NULL);
	assert_error(dev, 11, "image", "'/'");
	dev = conf("vdisk_rbd", "r", "pool", "", "image", "i", NULL);
	assert_error(dev, 10, "pool", "characters");
	dev = conf("vdisk_rbd", "r", "pool", "p", "image", "i", "ceph_conf", "ceph.conf", NULL);
	assert_error(dev, 12, "ceph_conf", "absolute");
	dev = conf("vdisk_rbd", "r", "pool", "p", "image", "i", "filename", F, NULL);
	assert_error(dev, 12, "filename", "not valid for handler vdisk_rbd");
	dev = conf("vdisk_fileio", "d", "filename", F, "pool", "p", NULL);
	assert_error(dev, 11, "pool", "not valid for handler vdisk_fileio");
}

Test(scsi_dev_config, rbd_gateway_attributes)
{
	struct scsi_dev *dev = conf("vdisk_rbd", "r", "pool", "rbd", "image", "i", "alua_follow_lock",
				    "1", "alua_nonowner_state", "standby", "alua_lock_grace", "7",
				    "alua_explicit", "1", NULL);

	assert_clean(dev);
	cr_assert(dev->bs->ceph.alua_follow_lock);
	cr_assert(dev->bs->ceph.nonowner_standby);
	cr_assert_eq(dev->bs->ceph.lock_grace_ms, 7000);
	cr_assert(dev->bs->ceph.alua_explicit);
	scsi_dev_destroy(dev);

	dev = conf("vdisk_rbd", "r", "pool", "rbd", "image", "i", NULL);
	assert_clean(dev);
	cr_assert(!dev->bs->ceph.alua_follow_lock, "one gateway by default");
	cr_assert(!dev->bs->ceph.nonowner_standby, "non-owners active/non-optimized by default");
	cr_assert(!dev->bs->ceph.alua_explicit, "implicit ALUA only by default");
	cr_assert_eq(dev->bs->ceph.lock_grace_ms, 0, "0: the store's default (15 s)");
	scsi_dev_destroy(dev);

	dev = conf("vdisk_rbd", "r", "pool", "rbd", "image", "i", "alua_nonowner_state", "active",
		   NULL);
	assert_error(dev, 12, "alua_nonowner_state", "nonoptimized or standby");
	dev = conf("vdisk_rbd", "r", "pool", "rbd", "image", "i", "alua_lock_grace", "1", NULL);
	assert_error(dev, 12, "alua_lock_grace", "2 to 3600");
	dev = conf("vdisk_fileio", "d", "filename", F, "alua_follow_lock", "1", NULL);
	assert_error(dev, 11, "alua_follow_lock", "not valid for handler vdisk_fileio");
}

Test(scsi_dev_config, size_and_size_mb)
{
	struct scsi_dev *dev = conf("vdisk_fileio", "d", "filename", F, "size", "10G", NULL);

	assert_clean(dev);
	cr_assert_eq(dev->bs->size, 10ull << 30);
	scsi_dev_destroy(dev);
	dev = conf("vdisk_nullio", "d", "size_mb", "100", NULL);
	assert_clean(dev);
	cr_assert_eq(dev->bs->size, 100ull << 20);
	scsi_dev_destroy(dev);
	/* scstadmin -write_config -nonkey writes both */
	dev = conf("vdisk_fileio", "d", "filename", F, "size", "10737418752", "size_mb", "10240",
		   NULL);
	assert_clean(dev);
	cr_assert_eq(dev->bs->size, 10737418752ull, "size is the precise one");
	scsi_dev_destroy(dev);
	dev = conf("vdisk_fileio", "d", "filename", F, "size", "1048576", "size_mb", "2", NULL);
	assert_error(dev, 12, "size_mb", "disagrees");
	dev = conf("vdisk_nullio", "d", "size", "0", NULL);
	assert_error(dev, 10, "size", "'0'");
	dev = conf("vdisk_nullio", "d", "size", "12x", NULL);
	assert_error(dev, 10, "size", "'12x'");
	dev = conf("vdisk_nullio", "d", "size", "-5", NULL);
	assert_error(dev, 10, "size", NULL);
	dev = conf("vdisk_nullio", "d", "size_mb", "1.5", NULL);
	assert_error(dev, 10, "size_mb", NULL);
	dev = conf("vdisk_nullio", "d", "size_mb", "99999999999999999999", NULL);
	assert_error(dev, 10, "size_mb", NULL);
	dev = conf("vdisk_nullio", "d", "size", "100", NULL);
	assert_error(dev, 10, "smaller than one", NULL);
	dev = conf("ramdisk", "d", NULL);
	assert_error(dev, 5, "ramdisk needs size", NULL);
	/* sizes that cannot be served: errors for --check, not a start that fails with a
	 * misleading "out of memory" */
	dev = conf("ramdisk", "d", "size", "18446744073709551615", NULL);
	assert_error(dev, 10, "largest offset", NULL);
	dev = conf("vdisk_fileio", "d", "filename", F, "size", "18446744073709551615", NULL);
	assert_error(dev, 11, "largest offset", NULL);
	dev = conf("vdisk_nullio", "d", "size_mb", "8796093022208", NULL); /* 2^63 bytes */
	assert_error(dev, 10, "largest offset", NULL);
	dev = conf("ramdisk", "d", "size", "1024T", NULL);
	assert_error(dev, 10, "larger than this machine's memory", NULL);
	dev = conf("vdisk_nullio", "d", "size", "1024T", NULL); /* no memory behind it */
	assert_clean(dev);
	scsi_dev_destroy(dev);
}

Test(scsi_dev_config, identity_strings_and_scst_limits)
{
	struct scsi_dev *dev =
	    conf("vdisk_fileio", "d", "filename", F, "t10_vend_id", "ACME1234", "prod_id",
		 "0123456789abcdef", "prod_rev_lvl", "1.2a", "usn", "01234567890123456789",
		 "t10_dev_id", "0123456789012345678901234", NULL);

	assert_clean(dev);
	cr_assert_str_eq(dev->p.vendor, "ACME1234");
	cr_assert_str_eq(dev->p.product, "0123456789abcdef");
	cr_assert_str_eq(dev->p.revision, "1.2a");
	cr_assert_str_eq(dev->p.usn, "01234567890123456789");
	cr_assert_str_eq(dev->p.t10_dev_id, "0123456789012345678901234");
	scsi_dev_destroy(dev);

	dev = conf("vdisk_fileio", "d", "filename", F, "t10_vend_id", "ACME12345", NULL);
	assert_error(dev, 11, "t10_vend_id", "longer than 8");
	dev = conf("vdisk_fileio", "d", "filename", F, "prod_id", "0123456789abcdefX", NULL);
	assert_error(dev, 11, "prod_id", "longer than 16");
	dev = conf("vdisk_fileio", "d", "filename", F, "prod_rev_lvl", "12345", NULL);
	assert_error(dev, 11, "prod_rev_lvl", "longer than 4");
	dev = conf("vdisk_fileio", "d", "filename", F, "usn", "012345678901234567890", NULL);
	assert_error(dev, 11, "usn", "longer than 20");
	dev = conf("vdisk_fileio", "d", "filename", F, "t10_dev_id", "01234567890123456789012345",
		   NULL);
	assert_error(dev, 11, "t10_dev_id", "longer than 25");
	dev = conf("vdisk_fileio", "d", "filename", F, "prod_id", "bad\tname", NULL);
	assert_error(dev, 11, "prod_id", "printable");
	dev = conf("vdisk_nullio", "d", "t10_vend_id", "caf\xc3\xa9", NULL);
	assert_error(dev, 10, "t10_vend_id", "printable");
}

Test(scsi_dev_config, identity_defaults_follow_the_name)
{
	struct scsi_dev *dev = conf("vdisk_nullio", "a-rather-long-device-name", NULL);

	assert_clean(dev);
	cr_assert_str_eq(dev->p.vendor, "UTGT");
	cr_assert_str_eq(dev->p.product, "a-rather-long-de", "SCST: prod_id is the device name");
	cr_assert_neq(dev->p.usn[0], 0);
	cr_assert_neq(dev->p.t10_dev_id[0], 0);
	scsi_dev_destroy(dev);
}

Test(scsi_dev_config, naa_id)
{
	struct scsi_dev *dev =
	    conf("vdisk_nullio", "d", "naa_id", "0x6001405a5b6c7d8e9f0011223344556a", NULL);

	assert_clean(dev);
	cr_assert_eq(dev->p.naa_len, 16);
	cr_assert_eq(dev->p.naa_bytes[0], 0x60);
	cr_assert_eq(dev->p.naa_bytes[15], 0x6a);
	cr_assert_eq(dev->p.naa_id, 0x9f0011223344556aull);
	scsi_dev_destroy(dev);
	dev = conf("vdisk_nullio", "d", "naa_id", "5000c50012345678", NULL);
	assert_clean(dev);
	cr_assert_eq(dev->p.naa_len, 8);
	cr_assert_eq(dev->p.naa_id, 0x5000c50012345678ull);
	scsi_dev_destroy(dev);
	dev = conf("vdisk_nullio", "d", "naa_id", "", NULL);
	assert_clean(dev);
	cr_assert_eq(dev->p.naa_len, 0);
	scsi_dev_destroy(dev);
	dev = conf("vdisk_nullio", "d", "naa_id", "1000c50012345678", NULL);
	assert_error(dev, 10, "naa_id", "'1000c50012345678'");
	dev = conf("vdisk_nullio", "d", "naa_id", "0x5001405a5b6c7d8e9f0011223344556a", NULL);
	assert_error(dev, 10, "naa_id", NULL);
	dev = conf("vdisk_nullio", "d", "naa_id", "6001405", NULL);
	assert_error(dev, 10, "naa_id", NULL);
	dev = conf("vdisk_nullio", "d", "naa_id", "5000c5001234567g", NULL);
	assert_error(dev, 10, "naa_id", NULL);
}

Test(scsi_dev_config, scst_identity_attributes_are_kept)
{
	static const uint8_t eui[8] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77};
	struct scsi_dev *dev = conf("vdisk_fileio", "d", "filename", F, "eui64_id",
				    "0x0011223344556677", "vend_specific_id", "x-disk",
				    "scsi_device_name", "iqn.2026-12.org.example:lu1", NULL);

	assert_clean(dev);
	cr_assert_eq(dev->p.eui64_len, 8);
	cr_assert_eq(memcmp(dev->p.eui64, eui, 8), 0);
	cr_assert_str_eq(dev->p.vend_specific_id, "x-disk");
	cr_assert_str_eq(dev->p.scsi_device_name, "iqn.2026-12.org.example:lu1");
	scsi_dev_destroy(dev);
	dev = conf("vdisk_fileio", "d", "filename", F, "eui64_id",
		   "00112233445566778899aabbccddeeff", NULL);
	assert_clean(dev);
	cr_assert_eq(dev->p.eui64_len, 16);
	scsi_dev_destroy(dev);
	dev = conf("vdisk_fileio", "d", "filename", F, "eui64_id", "0x0011", NULL);
	assert_error(dev, 11, "eui64_id", NULL);
	dev = conf("vdisk_fileio", "d", "filename", F, "eui64_id", "", "scsi_device_name", "",
		   "inq_vend_specific", "", NULL);
	assert_clean(dev); /* empty = unset, as scstadmin writes them */
	cr_assert_eq(dev->p.eui64_len, 0);
	scsi_dev_destroy(dev);
}

Test(scsi_dev_config, kernel_only_attributes_warn)
{
	static const char *k[] = {"threads_num",	"threads_pool_type", "async",
				  "numa_node_id",	"dif_mode",	     "dif_type",
				  "dif_static_app_tag", "dif_filename",	     "max_tgt_dev_commands",
				  "pr_file_name",	"zero_copy"};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct scsi_dev *dev = conf("vdisk_fileio", "d", "filename", F, k[i], "1", NULL);
		char want[96];

		snprintf(want, sizeof(want), "attribute %s is SCST-kernel only; ignored", k[i]);
		cr_assert_not_null(dev, "%s", k[i]);
		cr_assert_eq(dg.errors, 0);
		cr_assert_eq(dg.warnings, 1);
		cr_assert(has(false, 11, want, NULL), "%s", want);
		scsi_dev_destroy(dev);
	}
}

Test(scsi_dev_config, read_only_attributes_written_by_nonkey_are_quiet)
{
	/* what scstadmin -write_config -nonkey writes for a vdisk_fileio device */
	struct scsi_dev *dev =
	    conf("vdisk_fileio", "disk01", "filename", F, "blocksize", "512", "cluster_mode", "0",
		 "expl_alua", "0", "nv_cache", "0", "o_direct", "0", "opt_trans_len", "524288",
		 "read_only", "0", "removable", "0", "rotational", "1", "size", "10737418240",
		 "size_mb", "10240", "t10_dev_id", "5c8c3b8e-disk01", "t10_vend_id", "SCST_FIO",
		 "thin_provisioned", "0", "tst", "1", "type", "0", "usn", "5c8c3b8e", "prod_id",
		 "disk01", "prod_rev_lvl", " 370", "write_through", "0", "resync_size", "",
		 "exported", "", "handler", "vdisk_fileio", NULL);

	assert_clean(dev);
	cr_assert_str_eq(dev->p.vendor, "SCST_FIO", "identity carried over from SCST");
	cr_assert_str_eq(dev->p.revision, " 370");
	cr_assert_eq(dev->bs->size, 10737418240ull);
	scsi_dev_destroy(dev);
	dev = conf("vdisk_blockio", "b", "filename", "/dev/sdb", "active", "1", "bind_alua_state",
		   "1", NULL);
	assert_clean(dev);
	scsi_dev_destroy(dev);
}

Test(scsi_dev_config, read_only_attribute_values_are_checked)
{
	struct scsi_dev *dev = conf("vdisk_fileio", "d", "filename", F, "type", "5", NULL);

	assert_error(dev, 11, "type", "type 0");
	dev = conf("vdisk_fileio", "d", "filename", F, "tst", "3", NULL);
	assert_error(dev, 11, "tst", NULL);
	dev = conf("vdisk_fileio", "d", "filename", F, "opt_trans_len", "lots", NULL);
	assert_error(dev, 11, "opt_trans_len", NULL);
	dev = conf("vdisk_fileio", "d", "filename", F, "tst", "0", NULL);
	cr_assert_not_null(dev);
	cr_assert(has(false, 11, "tst 0", NULL));
	scsi_dev_destroy(dev);
	dev = conf("vdisk_fileio", "d", "filename", F, "cluster_mode", "1", NULL);
	cr_assert_not_null(dev);
	cr_assert(has(false, 11, "cluster_mode 1", "not supported"));
	scsi_dev_destroy(dev);
	dev = conf("vdisk_blockio", "d", "filename", "/dev/x", "active", "0", NULL);
	cr_assert_not_null(dev);
	cr_assert(has(false, 11, "active 0", NULL));
	scsi_dev_destroy(dev);
}

Test(scsi_dev_config, attributes_follow_the_scst_handler)
{
	struct scsi_dev *dev =
	    conf("vdisk_blockio", "d", "filename", "/dev/x", "o_direct", "1", NULL);

	assert_error(dev, 11, "o_direct", "not valid for handler vdisk_blockio");
	dev = conf("vdisk_fileio", "d", "filename", F, "dummy", "1", NULL);
	assert_error(dev, 11, "dummy", "not valid for handler vdisk_fileio");
	dev = conf("vdisk_fileio", "d", "filename", F, "read_zero", "1", NULL);
	assert_error(dev, 11, "read_zero", "not valid");
	dev = conf("vdisk_nullio", "d", "nv_cache", "1", NULL);
	assert_error(dev, 10, "nv_cache", "not valid for handler vdisk_nullio");
	dev = conf("vdisk_nullio", "d", "thin_provisioned", "1", NULL);
	assert_error(dev, 10, "thin_provisioned", "not valid");
	dev = conf("ramdisk", "d", "size", "1M", "write_through", "1", NULL);
	assert_error(dev, 11, "write_through", "not valid for handler ramdisk");
	dev = conf("vdisk_nullio", "d", "active", "1", NULL);
	assert_error(dev, 10, "active", "not valid");
}

Test(scsi_dev_config, unknown_things)
{
	struct scsi_dev *dev = conf("vdisk_fileio", "d", "filename", F, "colour", "blue", NULL);

	assert_error(dev, 11, "unknown attribute 'colour'", NULL);
	dev = conf("vdisk", "d", NULL);
	assert_error(dev, 5, "unknown handler 'vdisk'", NULL);
	dev = conf("dev_disk", "d", NULL);
	assert_error(dev, 5, "unknown handler", NULL);
	dev = conf(NULL, "d", NULL);
	assert_error(dev, 5, "unknown handler", NULL);
	dev = conf("vdisk_nullio", "", NULL);
	assert_error(dev, 5, "name", NULL);
	dev = conf("vdisk_nullio",
		   "0123456789012345678901234567890123456789012345678901234567890123", NULL);
	assert_error(dev, 5, "1 to 63 characters", NULL);
}

Test(scsi_dev_config, every_error_is_reported_not_just_the_first)
{
	struct scsi_dev *dev =
	    conf("vdisk_fileio", "d", "filename", F, "blocksize", "7", "read_only", "maybe",
		 "colour", "red", "threads_num", "2", NULL);

	cr_assert_null(dev);
	cr_assert_eq(dg.errors, 3);
	cr_assert_eq(dg.warnings, 1);
	cr_assert(has(true, 11, "blocksize", NULL));
	cr_assert(has(true, 12, "read_only", NULL));
	cr_assert(has(true, 13, "colour", NULL));
}

Test(scsi_dev_config, repeated_attribute_warns_and_the_last_wins)
{
	struct scsi_dev *dev =
	    conf("vdisk_fileio", "d", "filename", F, "blocksize", "512", "blocksize", "4096", NULL);

	cr_assert_not_null(dev);
	cr_assert_eq(dg.errors, 0);
	cr_assert(has(false, 11, "blocksize", "line 12"));
	cr_assert_eq(dev->bs->block_size, 4096);
	scsi_dev_destroy(dev);
}

Test(scsi_dev_config, keys_are_case_insensitive_as_in_scst)
{
	struct scsi_dev *dev = conf("vdisk_fileio", "d", "FileName", F, "READ_ONLY", "1", NULL);

	assert_clean(dev);
	cr_assert(dev->bs->read_only);
	scsi_dev_destroy(dev);
}

Test(scsi_dev_config, plain_wrapper_uses_the_first_attribute_line)
{
	struct utgt_attr a[] = {{"read_only", "1", 42}};

	reset();
	cr_assert_null(scsi_dev_configure("vdisk_fileio", "d", a, 1, &dg));
	cr_assert(has(true, 42, "needs a filename", NULL));
}

/* utgt's own: sanitize_rate_mb paces SANITIZE's writes (MiB/s, 0 = as fast as the store). */
Test(scsi_dev_config, sanitize_rate_mb)
{
	struct scsi_dev *dev = conf("ramdisk", "r", "size", "1M", NULL);

	assert_clean(dev);
	cr_assert_eq(dev->p.sanitize_rate_mb, 0, "unpaced by default");
	scsi_dev_destroy(dev);
	dev = conf("vdisk_fileio", "d", "filename", F, "sanitize_rate_mb", "200", NULL);
	assert_clean(dev);
	cr_assert_eq(dev->p.sanitize_rate_mb, 200);
	scsi_dev_destroy(dev);
	dev = conf("vdisk_nullio", "n", "sanitize_rate_mb", "0", NULL);
	assert_clean(dev);
	scsi_dev_destroy(dev);
	dev = conf("ramdisk", "r", "size", "1M", "sanitize_rate_mb", "fast", NULL);
	assert_error(dev, 11, "sanitize_rate_mb", "MiB per second");
	dev = conf("ramdisk", "r", "size", "1M", "sanitize_rate_mb", "-1", NULL);
	assert_error(dev, 11, "sanitize_rate_mb", NULL);
	dev = conf("ramdisk", "r", "size", "1M", "sanitize_rate_mb", "99999999999", NULL);
	assert_error(dev, 11, "sanitize_rate_mb", "MiB per second");
}

/* SCST's lb_per_pb_exp is a switch (a one-bit field there): 1 reports the physical block in
 * READ CAPACITY(16), 0 does not.  utgt's default is 0; any other value is refused, since SCST
 * would keep only its low bit. */
Test(scsi_dev_config, lb_per_pb_exp)
{
	static const char *handlers[] = {"vdisk_fileio", "vdisk_blockio", "vdisk_nullio",
					 "ramdisk"};

	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++) {
		const char *h = handlers[i];
		const char *k0 = !strcmp(h, "ramdisk") ? "size_mb" : "filename";
		const char *v0 = !strcmp(h, "ramdisk")	       ? "8"
				 : !strcmp(h, "vdisk_blockio") ? "/dev/loop7"
							       : F;
		struct scsi_dev *dev;

		if (!strcmp(h, "vdisk_nullio"))
			k0 = "size_mb", v0 = "8";
		dev = conf(h, "d", k0, v0, NULL);
		assert_clean(dev);
		/* SCST's vdisk default (512e); ramdisk, utgt's own, 512n */
		cr_assert_eq(dev->p.lb_per_pb_exp, strcmp(h, "ramdisk") != 0, "%s: default", h);
		scsi_dev_destroy(dev);
		dev = conf(h, "d", k0, v0, "lb_per_pb_exp", "1", NULL);
		assert_clean(dev);
		cr_assert(dev->p.lb_per_pb_exp, "%s", h);
		scsi_dev_destroy(dev);
		dev = conf(h, "d", k0, v0, "lb_per_pb_exp", "0", NULL);
		assert_clean(dev);
		cr_assert_not(dev->p.lb_per_pb_exp, "%s", h);
		scsi_dev_destroy(dev);
	}
	for (const char *const *v = (const char *const[]){"2", "3", "-1", "yes", "", NULL}; *v;
	     v++) {
		struct scsi_dev *dev =
		    conf("ramdisk", "r", "size_mb", "8", "lb_per_pb_exp", *v, NULL);

		assert_error(dev, 11, "lb_per_pb_exp", "expected 0 or 1");
	}
}

/* Newer SCST writes these for every vdisk device; each one loads, with one warning line. */
Test(scsi_dev_config, newer_scst_attributes_load_with_one_warning_each)
{
	struct scsi_dev *dev =
	    conf("vdisk_fileio", "d", "filename", F, "active", "1", "bind_alua_state", "1",
		 "gen_tp_soft_threshold_reached_UA", "0", "block", "0 0", "pr_state", "none",
		 "dif_filename", "/var/lib/scst/dif_tags/d", NULL);

	cr_assert_not_null(dev);
	cr_assert_eq(dg.errors, 0);
	cr_assert_eq(dg.warnings, 4, "gen_tp, block, pr_state, dif_filename");
	cr_assert(
	    has(false, 13, "attribute gen_tp_soft_threshold_reached_UA is SCST-kernel only", NULL));
	cr_assert(has(false, 14, "attribute block is SCST-kernel only; ignored", NULL));
	cr_assert(has(false, 15, "attribute pr_state is read-only state of SCST; ignored", NULL));
	cr_assert(has(false, 16, "attribute dif_filename is SCST-kernel only", NULL));
	scsi_dev_destroy(dev);
	for (unsigned i = 0; i < 3; i++) {
		const char *h = (const char *[]){"vdisk_blockio", "vdisk_nullio", "ramdisk"}[i];

		dev = conf(h, "d", i ? "size_mb" : "filename", i ? "1" : "/dev/x", "block", "0 0",
			   "pr_state", "none", "dif_filename", "/x", NULL);
		cr_assert_not_null(dev, "%s", h);
		cr_assert_eq(dg.warnings, 3, "%s", h);
		scsi_dev_destroy(dev);
	}
}

/* A size -write_config -nonkey wrote is checked against the file: a warning naming both. */
Test(scsi_dev_config, size_that_disagrees_with_the_file_warns)
{
	char path[] = "/tmp/utgt-size-check-XXXXXX";
	int fd = mkstemp(path);
	struct scsi_dev *dev;

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	dev = conf("vdisk_fileio", "d", "filename", path, "size", "1048576", "size_mb", "1", NULL);
	assert_clean(dev);
	scsi_dev_destroy(dev);

	dev = conf("vdisk_fileio", "d", "filename", path, "size", "524288", NULL);
	cr_assert_not_null(dev);
	cr_assert_eq(dg.warnings, 1);
	char want[256];
	snprintf(want, sizeof(want),
		 "DEVICE d: size 524288 disagrees with %s (1048576 bytes); the LU is the "
		 "configured size",
		 path);
	cr_assert(has(false, 11, want, NULL), "%s", cap.msg[0]);
	scsi_dev_destroy(dev);

	dev = conf("vdisk_fileio", "d", "filename", path, "size_mb", "2", NULL);
	cr_assert_not_null(dev);
	snprintf(want, sizeof(want),
		 "DEVICE d: size 2097152 disagrees with %s (1048576 bytes); the file is not "
		 "grown, so it cannot be opened",
		 path);
	cr_assert(has(false, 11, want, NULL), "%s", cap.msg[0]);
	scsi_dev_destroy(dev);
	unlink(path);
}
