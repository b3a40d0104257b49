/* utgtd's admin socket: one request line in, one JSON answer out (docs/admin.md).
 *
 *   admin_req.c   the request line parser (pure)
 *   admin_show.c  the answers: targets, devices and version from the configuration, sessions
 *                 from each started transport's show_sessions op; counters as JSON
 *   admin_verbs.c the answers that change things: live administration through the
 *                 diff/apply engine (target/tgt_edit.c, tgt_plan.c, tgt_apply.c)
 *   admin_srv.c   the Unix socket and the thread that serves it
 *
 * Nothing here includes a transport header: sessions are listed through struct
 * tgt_transport's show_sessions, which writes through scsi/scsi_stats_json.h. */
#ifndef UTGT_ADMIN_H
#define UTGT_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "scsi/scsi_stats_json.h"
#include "scsi/scsi_task.h"
#include "target/tgt_edit.h"
#include "common/ut_json.h"
#include "target/tgt_config.h"
#include "target/tgt_run.h"

#define ADMIN_LINE_MAX	  1024 /* longest request line, newline included */
#define ADMIN_TIMEOUT_MS  5000 /* a client has this long to send its line / take its answer */
#define ADMIN_MAX_CLIENTS 16   /* served at once; a new one replaces the oldest silent one */
#define ADMIN_EVICT_MS    1000 /* ... silent this long: full slots, so it may be replaced */

#define ADMIN_MAX_OPTS 32 /* KEY=VALUE words in one request */

enum admin_cmd {
	ADMIN_SHOW_TARGETS,
	ADMIN_SHOW_SESSIONS,
	ADMIN_SHOW_DEVICES,
	ADMIN_VERSION,
	ADMIN_HELP,
	/* live administration (admin_verbs.c) */
	ADMIN_EDIT,	     /* add / remove / set / enable / disable OBJECT NAME [KEY=VALUE]... */
	ADMIN_RESYNC,	     /* resync device NAME: the medium's size again */
	ADMIN_CLOSE_SESSION, /* close session NEXUS_ID */
	ADMIN_RELOAD,	     /* reload [FILE]: re-read scst.conf (or FILE), apply the difference */
	ADMIN_WRITE_CONFIG,  /* write-config [FILE]: the running configuration, SCST's format */
};

/* A parsed request.  Words are split at blanks; "..." quotes blanks, a backslash the next
 * character (as in scst.conf), so a value may hold anything but control bytes. */
struct admin_req {
	enum admin_cmd cmd;
	struct tgt_edit edit; /* ADMIN_EDIT (and resize, which is `set device NAME size=`) */
	const char *arg;      /* the device, nexus id or file; NULL when none was given */
	struct tgt_edit_opt opts[ADMIN_MAX_OPTS];
	char buf[ADMIN_LINE_MAX];
};

/* Parse one request line (newline already removed; a trailing \r and blanks are ignored).
 * 0, or -1 with a one-line reason in err. */
int admin_req_parse(const char *line, struct admin_req *req, char *err, size_t errlen);

struct admin_info {
	struct tgt_run *run; /* its lock is held while an answer is built */
	const char *version;
	time_t started;
};

/* The whole answer to req: {"ok":true,...} or {"ok":false,"error":...}.  Takes run->mu. */
void admin_answer(const struct admin_info *ai, const struct admin_req *req, struct ut_json *j);
/* The answers that change things (admin_verbs.c), with run->mu held. */
void admin_verb(const struct admin_info *ai, const struct admin_req *req, struct ut_json *j);
/* {"ok":false,"error":msg} */
void admin_error(struct ut_json *j, const char *msg);

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
