/* vdisk_rbd without a cluster: what open says when it cannot reach one, which completions end
 * on librbd's thread, and the client options.  The I/O path runs against a real cluster in
 * `make rbdtest` (tests/rbd/). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scsi/backstore/backstore.h"
#include "scsi/backstore/bs_rbd_io.h"

static struct backstore rbd_store(const char *conf)
{
	struct backstore bs;

	memset(&bs, 0, sizeof(bs));
	bs.ops = &bs_rbd_ops;
	snprintf(bs.name, sizeof(bs.name), "r0");
	snprintf(bs.ceph.pool, sizeof(bs.ceph.pool), "rbd");
	snprintf(bs.ceph.image, sizeof(bs.ceph.image), "img");
	snprintf(bs.ceph.conf, sizeof(bs.ceph.conf), "%s", conf);
	return bs;
}

Test(bs_rbd, registered_under_its_scst_style_name)
{
	cr_assert_eq(backstore_find("vdisk_rbd"), &bs_rbd_ops);
	cr_assert_not_null(bs_rbd_ops.attrs);
}

Test(bs_rbd, missing_ceph_conf_is_a_clear_error)
{
	struct backstore bs = rbd_store("/nonexistent/utgt-test/ceph.conf");
	char err[256] = "";

	cr_assert_eq(bs.ops->open(&bs, err, sizeof(err)), -1);
	if (bs_rbd_available)
		cr_assert(strstr(err, "r0: cannot read the Ceph configuration "
				      "/nonexistent/utgt-test/ceph.conf"),
			  "%s", err);
	else
		cr_assert(strstr(err, "built without librbd"), "%s", err);
	cr_assert_null(bs.priv);
}

Test(bs_rbd, pool_and_image_are_required)
{
	struct backstore bs = rbd_store("/etc/ceph/ceph.conf");
	char err[256] = "";

	bs.ceph.image[0] = '\0';
	cr_assert_eq(bs.ops->open(&bs, err, sizeof(err)), -1);
	cr_assert(strstr(err, bs_rbd_available ? "needs pool and image" : "without librbd"), "%s",
		  err);
}

/* Only the flush after a FUA write needs librbd again; everything else ends where librbd
 * reports it. */
Test(bs_rbd, only_a_fua_write_goes_on_after_its_io_step)
{
	const enum bs_op writes[] = {BS_WRITE, BS_WRITE_SAME, BS_COMPARE_WRITE};
	const enum bs_op others[] = {BS_READ, BS_FLUSH, BS_UNMAP};

	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		cr_assert(bs_rbd_step_continues(writes[i], true, true, 4096), "op %d", writes[i]);
		cr_assert(bs_rbd_step_continues(writes[i], true, true, 0), "op %d", writes[i]);
		/* without FUA (or with a non-volatile cache), after the flush, or failed: over */
		cr_assert_not(bs_rbd_step_continues(writes[i], true, false, 4096));
		cr_assert_not(bs_rbd_step_continues(writes[i], false, true, 0));
		cr_assert_not(bs_rbd_step_continues(writes[i], true, true, -EIO));
		cr_assert_not(bs_rbd_step_continues(writes[i], true, true, -ETIMEDOUT));
	}
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		cr_assert_not(bs_rbd_step_continues(others[i], true, true, 4096), "op %d",
			      others[i]);
}

#ifdef UTGT_HAVE_RBD
#include <rados/librados.h>

/* A rados handle configured from a ceph.conf holding `extra` (no cluster is contacted), then
 * given vdisk_rbd's options. */
static rados_t conf_client(const char *extra)
{
	char path[] = "/tmp/utgt-test-rbdconf.XXXXXX";
	int fd = mkstemp(path);
	rados_t cl;

	cr_assert_geq(fd, 0);
	cr_assert_eq(dprintf(fd, "[global]\nmon host = 127.0.0.1:1\n%s", extra) > 0, true);
	close(fd);
	cr_assert_eq(rados_create(&cl, "admin"), 0);
	cr_assert_eq(rados_conf_read_file(cl, path), 0);
	unlink(path);
	cr_assert_eq(bs_rbd_client_conf(cl), 0);
	return cl;
}

static void assert_conf(rados_t cl, const char *opt, const char *want)
{
	char v[64] = "";

	cr_assert_eq(rados_conf_get(cl, opt, v, sizeof(v)), 0, "%s", opt);
	cr_assert_eq(strtod(v, NULL), strtod(want, NULL), "%s = %s, want %s", opt, v, want);
	if (strtod(want, NULL) == 0 && want[0] != '0')
		cr_assert_str_eq(v, want, "%s", opt);
}

Test(bs_rbd, client_options_where_ceph_conf_says_nothing)
{
	rados_t cl = conf_client("");

	assert_conf(cl, "rbd_cache", "false");
	assert_conf(cl, "rbd_skip_partial_discard", "false");
	assert_conf(cl, "rbd_disable_zero_copy_writes", "true");
	assert_conf(cl, "librados_thread_count", "1");
	assert_conf(cl, "rados_osd_op_timeout", "30");
	assert_conf(cl, "rados_mon_op_timeout", "30");
	rados_shutdown(cl);
}

/* The cache stays off and writes are copied whatever ceph.conf says; a thread count or a
 * timeout it chose is kept. */
Test(bs_rbd, client_options_ceph_conf_may_choose)
{
	rados_t cl = conf_client("rbd cache = true\nlibrados thread count = 4\n"
				 "rados osd op timeout = 7\nrbd disable zero copy writes = false\n");

	assert_conf(cl, "rbd_cache", "false");
	assert_conf(cl, "rbd_disable_zero_copy_writes", "true");
	assert_conf(cl, "librados_thread_count", "4");
	assert_conf(cl, "rados_osd_op_timeout", "7");
	assert_conf(cl, "rados_mon_op_timeout", "30");
	rados_shutdown(cl);
}
#endif
