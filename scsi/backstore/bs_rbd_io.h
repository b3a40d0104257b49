/* vdisk_rbd's I/O path, the parts that need no cluster (bs_rbd.c; unit-tested without one). */
#ifndef UTGT_BS_RBD_IO_H
#define UTGT_BS_RBD_IO_H

#include <stdbool.h>
#include <sys/types.h>

#include "scsi/backstore/backstore.h"

/* After a librbd step of a command ended with ret: true when the command goes on with another
 * librbd call (the flush that makes a FUA write durable; `durable` is FUA on a store without a
 * non-volatile cache), false when this step was its last and it can complete where it is. */
bool bs_rbd_step_continues(enum bs_op op, bool io_step, bool durable, ssize_t ret);

#ifdef UTGT_HAVE_RBD
#include <rados/librados.h>

/* The options every vdisk_rbd client runs with, set on cl after ceph.conf was read: some
 * whatever it says (the cache off, discards that zero), some only where it kept librados's
 * default (op timeouts, the completion thread count); 0 or librados's negative errno. */
int bs_rbd_client_conf(rados_t cl);
#endif

#endif
