/* One gateway among several serving an RBD image (vdisk_rbd with alua_follow_lock): the lock
 * policy of bs_rbd_lock.h run against librbd on a thread of its own, one tick a second, plus
 * the cluster's health for utgtadm.  bs_rbd.c asks it whether a write may go to the image.
 * Every other RBD device runs it as an observer: the lock owner and the health, nothing
 * more. */
#ifndef UTGT_BS_RBD_GW_H
#define UTGT_BS_RBD_GW_H

#include <rados/librados.h>
#include <rbd/librbd.h>

#include "scsi/backstore/backstore.h"

struct rbd_gw;

/* A fenced gateway's way back: connect a new client (a new address, not blocklisted), open
 * the image again, move the I/O path to it and close the old one.  0 and the new handles,
 * or a negative errno (tried again at the next tick). */
typedef int (*bs_rbd_reopen_fn)(struct backstore *bs, rados_t *cluster, rados_ioctx_t *ioctx,
				rbd_image_t *image);

/* follow: run the policy, deciding the first state (one tick) before returning, so the LU
 * starts with one.  !follow: only observe the lock owner and the cluster's health for
 * utgtadm (bs_rbd_gw_status); bs_rbd_gw_role and bs_rbd_gw_takeover are not for it. */
struct rbd_gw *bs_rbd_gw_start(struct backstore *bs, rados_t cluster, rados_ioctx_t ioctx,
			       rbd_image_t image, bool follow, bs_rbd_reopen_fn reopen, char *err,
			       size_t errlen);
void bs_rbd_gw_stop(struct rbd_gw *gw);
/* The I/O path: this gateway's role now (a relaxed read). */
enum bs_lock_role bs_rbd_gw_role(const struct rbd_gw *gw);
void bs_rbd_gw_status(struct rbd_gw *gw, struct bs_lock_status *out);
/* SET TARGET PORT GROUPS: take over at once (fencing the owner). */
void bs_rbd_gw_takeover(struct rbd_gw *gw);

#endif
