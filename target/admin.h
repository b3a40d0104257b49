/* utgtd's admin socket: one request line in, one JSON answer out (docs/admin.md).
 *
 *   admin_req.c   the request line parser (pure)
 *   admin_show.c  the answers: targets, devices and version from the configuration, sessions
 *                 from each started transport's show_sessions op; counters as JSON
 *   admin_srv.c   the Unix socket and the thread that serves it
 *
 * Nothing here includes a transport header: sessions are listed through struct
 * tgt_transport's show_sessions, which writes through this header's JSON helpers. */
#ifndef UTGT_ADMIN_H
#define UTGT_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "scsi/scsi_task.h"
#include "target/tgt_json.h"
#include "target/tgt_model.h"

#define ADMIN_LINE_MAX	  1024 /* longest request line, newline included */
#define ADMIN_TIMEOUT_MS  5000 /* a client has this long to send its line / take its answer */
#define ADMIN_MAX_CLIENTS 16   /* served at once; more wait in the listen backlog */

enum admin_cmd {
	ADMIN_SHOW_TARGETS,
	ADMIN_SHOW_SESSIONS,
	ADMIN_SHOW_DEVICES,
	ADMIN_VERSION,
	ADMIN_HELP,
};

/* Parse one request line (newline already removed; a trailing \r and blanks are ignored).
 * 0, or -1 with a one-line reason in err. */
int admin_req_parse(const char *line, enum admin_cmd *cmd, char *err, size_t errlen);

struct admin_info {
	const struct tgt_config *cfg;
	const char *version;
	time_t started;
	/* Drivers whose transport was started (only those are asked for sessions). */
	const struct tgt_driver *const *drivers;
	unsigned ndrivers;
};

/* The whole answer to cmd: {"ok":true,...}. */
void admin_answer(const struct admin_info *ai, enum admin_cmd cmd, struct tgt_json *j);
/* {"ok":false,"error":msg} */
void admin_error(struct tgt_json *j, const char *msg);

/* For show_sessions implementations: counters as an object named key.  lu: the LU form
 * (media read/write commands, open sessions) instead of the nexus form. */
void admin_json_counters(struct tgt_json *j, const char *key, const struct scsi_io_stats *s,
			 bool lu);
/* The common part of a session object: initiator, target, port names and counters; adds the
 * nexus's counters to total (may be NULL). */
void admin_json_nexus(struct tgt_json *j, const struct scsi_nexus *nx, struct scsi_io_stats *total);

struct admin_srv;
/* Bind path, mode 0600, replacing a stale socket file and refusing when a live daemon answers
 * on it (called early, so a second utgtd stops before opening anything).  NULL with a
 * message in err. */
struct admin_srv *admin_srv_open(const char *path, char *err, size_t errlen);
/* Start serving from a thread of its own; ai must stay valid until admin_srv_stop. */
int admin_srv_serve(struct admin_srv *s, const struct admin_info *ai, char *err, size_t errlen);
const char *admin_srv_path(const struct admin_srv *s); /* absolute */
/* Stop the thread, close every client, remove the socket file. */
void admin_srv_stop(struct admin_srv *s);

#endif
