/* Applying a plan (target/tgt_plan.h): the next configuration becomes the running one while
 * initiators keep working.
 *
 *   1. plan; refuse the whole change on any error (nothing touched);
 *   2. open the devices that are new (or re-created); refuse the whole change when one fails;
 *   3. devices that keep running move into the next configuration as they are (their LUN
 *      table entries and ALUA group re-pointed), taking identity, size, medium and ALUA state
 *      changes live with their UNIT ATTENTIONs;
 *   4. drivers stop, rebind (tgt_transport.update: targets added and removed, every session's
 *      LUN table re-resolved and published, sessions whose access is gone closed), start;
 *   5. the next configuration is the running one;
 *   6. a grace period (scsi_srcu_synchronize): every command that could still see an old LUN
 *      table, a removed device or an old ALUA group has completed;
 *   7. removed devices are flushed and closed, the old configuration freed. */
#ifndef UTGT_TGT_APPLY_H
#define UTGT_TGT_APPLY_H

#include <stddef.h>

#include "target/tgt_run.h"

/* With run->mu held.  next is consumed.  0 with what changed in msg ("no change" included),
 * or -1: the reasons are on d (FILE:LINE where they have one) and the running state is as it
 * was. */
int tgt_apply(struct tgt_run *run, struct tgt_config *next, struct diag *d, char *msg,
	      size_t msglen);

#endif
