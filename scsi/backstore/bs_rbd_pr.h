/* vdisk_rbd's persistent reservation store: the state of an LU shared by every gateway that
 * serves the image, in a RADOS object beside it (scsi/backstore/bs_rbd_pr.c). */
#ifndef UTGT_BS_RBD_PR_H
#define UTGT_BS_RBD_PR_H

#include <rados/librados.h>
#include <stddef.h>

struct pr_store;

/* The store of image image_id in pool, through the connected cluster (which must outlive
 * the store).  NULL with a reason in err. */
struct pr_store *bs_rbd_pr_open(rados_t cluster, const char *pool, const char *image_id,
				char *err, size_t errlen);

#endif
