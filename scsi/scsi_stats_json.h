/* The I/O counters of the core (struct scsi_io_stats) and a nexus's identity as JSON, for
 * utgtd's admin socket: the target layer writes LU counters, each transport's show_sessions
 * writes its sessions with scsi_nexus_json(), so every answer names the fields alike. */
#ifndef UTGT_SCSI_STATS_JSON_H
#define UTGT_SCSI_STATS_JSON_H

#include <stdbool.h>

#include "common/ut_json.h"
#include "scsi/scsi_task.h"

/* Counters as an object named key.  lu: the LU form (media read/write commands) instead of
 * the nexus form (which adds task_mgmt). */
void scsi_stats_json(struct ut_json *j, const char *key, const struct scsi_io_stats *s, bool lu);
/* The common part of a session object: initiator, target, port names, nexus id, LU count and
 * counters; adds the nexus's counters to total (may be NULL). */
void scsi_nexus_json(struct ut_json *j, const struct scsi_nexus *nx, struct scsi_io_stats *total);

#endif
