/* vdisk_rbd's persistent reservation store: the state of an LU shared by every gateway that
 * serves the image, in a RADOS object beside it (scsi/backstore/bs_rbd_pr.c). */
#ifndef UTGT_BS_RBD_PR_H
#define UTGT_BS_RBD_PR_H

#include <rados/librados.h>
#include <stddef.h>

struct pr_store;

/* Called first thing when the core closes the store: the backstore must not reconnect it
 * any more (and waits for a reconnect in progress to end). */
typedef void (*bs_rbd_pr_closing_fn)(void *arg);

/* The store of image image_id in pool, through the connected cluster (which must outlive
 * the store, or the store be moved off it first).  NULL with a reason in err. */
struct pr_store *bs_rbd_pr_open(rados_t cluster, const char *pool, const char *image_id,
				bs_rbd_pr_closing_fn closing, void *closing_arg, char *err,
				size_t errlen);
/* This gateway was fenced and reconnected with a new client: move the store to cluster
 * before the gateway serves again (its old client may then be shut down): a new I/O
 * context, this client's address recorded, the watch made again, and the state reloaded
 * into the core (changes made meanwhile never reached it).  0 (a failure to record or watch
 * is logged: PR IN still reloads first), or a negative errno when no I/O context could be
 * had on cluster: nothing moved, the old client must stay open. */
int bs_rbd_pr_reconnect(struct pr_store *s, rados_t cluster);

#endif
