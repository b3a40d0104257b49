/* One round's sends on a TCP connection leave together (TCP_CORK around the burst). */
#ifndef UB_TCP_BATCH_H
#define UB_TCP_BATCH_H

#include <stdbool.h>

/* Before a burst of `queued` separate send()s on fd: cork when there are at least two, so
 * they leave in as few segments as fit.  Returns whether it corked (pass to _end). */
bool ub_tcp_batch_begin(int fd, unsigned queued);
/* After the burst: uncork, which sends what the cork held at once. */
void ub_tcp_batch_end(int fd, bool corked);

#endif
