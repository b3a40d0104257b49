/* vdisk_rbd's shared reservation store without a cluster: what it says when it cannot reach
 * one, and that vdisk_rbd offers it.  Against a real cluster, with two gateways, it runs in
 * `make rbdtest` (tests/rbd/rbd_pr.py). */
#include <criterion/criterion.h>
#include <string.h>

#include "scsi/backstore/backstore.h"

#ifdef UTGT_HAVE_RBD
#include "scsi/backstore/bs_rbd_pr.h"
#endif

Test(bs_rbd_pr, vdisk_rbd_offers_a_shared_store)
{
	if (bs_rbd_available)
		cr_assert_not_null(bs_rbd_ops.pr_store_open);
	else
		cr_assert_null(bs_rbd_ops.pr_store_open);
}

#ifdef UTGT_HAVE_RBD
Test(bs_rbd_pr, unconnected_cluster_is_a_clear_error)
{
	rados_t cl;
	char err[256] = "";

	cr_assert_eq(rados_create(&cl, "admin"), 0);
	cr_assert_null(bs_rbd_pr_open(cl, "rbd", "1234abcd", NULL, NULL, err, sizeof(err)));
	cr_assert(strstr(err, "pool rbd: "), "%s", err);
	rados_shutdown(cl);
}
#endif
