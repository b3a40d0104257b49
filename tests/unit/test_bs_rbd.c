/* vdisk_rbd without a cluster: what open says when it cannot reach one.  The I/O path runs
 * against a real cluster in `make rbdtest` (tests/rbd/). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "scsi/backstore/backstore.h"

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
