/* Internal model of the iSCSI target: the transport instance, its targets and portals, worker
 * threads, connections, sessions and tasks.  Shared by the iscsi_*.c files only.
 *
 * Threading: every connection belongs to one worker thread, which alone touches it (rx, tx,
 * login, its tasks); placement may hand it to another worker once, right after its login
 * (iscsi_place.c).  Other threads talk to a worker only by posting a struct ut_msg to
 * its inbox (a lock-free list plus an eventfd), which is how backstore completions come back.
 * The session table has a mutex used at login/logout only; the I/O path takes no global lock. */
#ifndef UTGT_ISCSI_INT_H
#define UTGT_ISCSI_INT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "common/ut_thread.h"
#include "scsi/scsi_task.h"
#include "transports/model/tgt_model.h"
#include "transports/iscsi/iscsi_params.h"
#include "transports/iscsi/iscsi_pdu.h"
#include "transports/iscsi/iscsi_rx.h"

struct iscsit_ctx;
struct iscsit_worker;
struct iscsit_conn;
struct iscsit_session;
struct iscsit_task;

/* ---------------------------------------------------------------- logging */
void iscsit_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int iscsit_debug; /* UTGT_ISCSI_DEBUG=1 in the environment */
#define iscsit_dbg(...)                                                                            \
	do {                                                                                       \
		if (iscsit_debug)                                                                  \
			iscsit_log(__VA_ARGS__);                                                   \
	} while (0)

/* ---------------------------------------------------------------- configuration */
struct iscsit_chap_user {
	char name[256];
	char secret[256];
};

struct iscsit_auth {
	struct iscsit_chap_user *in; /* IncomingUser: initiators we accept */
	unsigned nin;
	struct iscsit_chap_user out; /* OutgoingUser: how we answer a mutual challenge */
	bool has_out;
};

struct iscsit_portal {
	const struct iscsit_xport *xp; /* the transport its connections use */
	struct ut_watch watch;	       /* TCP: the listening socket, on worker 0, which accepts */
	struct iscsit_ctx *ctx;
	int fd;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char str[80];  /* "127.0.0.1:3260" / "[::1]:3260" as configured */
	bool wildcard; /* 0.0.0.0 or :: */
	uint16_t port;
	int family;
};

/* TCP tunables (driver level; a target may override). */
struct iscsit_sockopts {
	bool nodelay;
	int sndbuf, rcvbuf; /* 0 = kernel default */
};

struct iscsit_tgen;

/* A TARGET as the iSCSI front end serves it.  Built from one configuration and immutable
 * from then on, except t: live administration (iscsi_update.c) replaces the whole generation
 * of targets when the configuration changes, and sets t of the replaced ones to NULL.  So
 * t is read only under ctx->tgt_lock, and NULL there means "no longer configured as such";
 * everything else may be read by whoever holds a reference (iscsit_tgt_get). */
struct iscsit_tgt {
	const struct tgt_target *t;
	struct iscsit_tgen *gen; /* the generation this target belongs to (its references) */
	const char *name;
	char alias[256];
	struct iscsit_tgt_params params;
	struct iscsit_auth auth;
	char **allowed_portals; /* patterns on "addr" or "addr:port"; NULL = every portal */
	unsigned nallowed;
	uint16_t tpgt;
	uint16_t rel_tgt_id;
	unsigned max_sessions;		 /* 0 = unlimited */
	uint64_t sess_mem_limit;	 /* bytes of command buffers one session may hold */
	struct iscsit_sockopts sockopts; /* target override of the driver's TCP options */
	bool has_sockopts;
};

/* One configuration's targets: ctx->tgts while it is current, kept alive by the connections
 * and sessions that refer to its members (a login that began before a change, a session that
 * outlives it). */
struct iscsit_tgen {
	atomic_uint refs; /* the ctx's while current, one per c->tgt and s->tgt */
	char *name_buf;	  /* target names (a target's name outlives its configuration) */
	unsigned n;
	struct iscsit_tgt tgts[];
};

/* iscsi_place.c: connection placement.  The connections to one target gather on one worker
 * (the LU's shared state then stays on one core), up to ISCSIT_PLACE_GROUP_MAX of them; past
 * that they stay where accept spread them. */
#define ISCSIT_PLACE_GROUP_MAX 4
enum iscsit_placement {
	ISCSIT_PLACE_TARGET, /* default: gather by target as above */
	ISCSIT_PLACE_SPREAD, /* stay on the worker accept picked (least loaded) */
};

/* ---------------------------------------------------------------- the transport instance */
struct iscsit_ctx {
	const struct tgt_config *cfg;
	const struct tgt_driver *drv;
	/* The current generation of targets, replaced by live administration under tgt_lock
	 * (written there, read at login, discovery and session creation: never on the I/O
	 * path).  Lock order: tgt_lock before sess_lock. */
	pthread_rwlock_t tgt_lock;
	struct iscsit_tgen *gen;
	struct iscsit_tgt *tgts; /* gen->tgts */
	unsigned ntgts;
	struct iscsit_portal *portals; /* every transport's (each portal names its own) */
	unsigned nportals, portal_cap;
	struct iscsit_auth disc_auth; /* driver-level IncomingUser/OutgoingUser: discovery */
	struct iscsit_tgt_params disc_params;
	struct iscsit_sockopts sockopts;

	struct iscsit_worker *workers;
	unsigned nworkers;
	unsigned poll_us; /* the workers' adaptive poll (driver attribute poll_us; 0: none) */
	enum iscsit_placement placement; /* driver attribute conn_placement */
	bool pin; /* driver attribute pin: worker i bound to CPU i */
	atomic_uint next_worker;

	pthread_mutex_t sess_lock; /* session table, TSIH allocation */
	struct iscsit_session *sessions;
	uint16_t next_tsih;
	atomic_uint nconns; /* connections alive, for the drain at stop */
	/* Bounds (docs/security.md): command buffer bytes held by every session together,
	 * sessions and connections alive; what is in use now. */
	uint64_t mem_limit;
	unsigned max_sessions, max_conns;
	atomic_uint_fast64_t mem_used;
	atomic_uint nsessions;
	atomic_uint accepting; /* accepted, not yet a connection on its worker */
	/* accept paused after EMFILE/ENFILE (worker 0 only) */
	struct ut_timer accept_timer;
	bool accept_paused;
	time_t accept_log_at;
	unsigned accept_log_suppressed;
	atomic_bool stopping;
	pthread_mutex_t drain_lock;
	pthread_cond_t drain_cv;
	atomic_uint_fast64_t next_conn_id;
};

/* ---------------------------------------------------------------- worker threads */
#define ISCSIT_BUF_CLASSES 13 /* cached data buffers 4 KiB .. 16 MiB (iscsi_buf.c) */
#define ISCSIT_BUF_CACHE_MAX (64u << 20) /* per worker, every class together */

/* A worker: one ut_thread (common/ut_thread.h) and the connections that live on it.  Each
 * round of its loop, after fd events and messages: staged input is processed, then every
 * connection with output is flushed, so many responses leave in one send; once a second,
 * NOP-In pings and timeouts. */
struct iscsit_worker {
	struct ut_thread ut;
	struct ut_poller round;
	struct ut_timer tick;
	struct iscsit_ctx *ctx;
	unsigned idx;
	struct iscsit_conn *conns; /* every connection this worker serves */
	struct iscsit_conn *ready; /* connections with staged input to process */
	struct iscsit_conn *dirty; /* connections with output to flush */
	atomic_uint nconns;
	/* counters */
	uint64_t pdus_in, pdus_out;
	/* data buffer cache, this thread only */
	void *bufs[ISCSIT_BUF_CLASSES];
	unsigned nbufs[ISCSIT_BUF_CLASSES];
	size_t cached; /* bytes in bufs[], at most ISCSIT_BUF_CACHE_MAX */
};

/* Seconds of the monotonic clock at the start of the worker's current round. */
static inline time_t iscsit_now(const struct iscsit_worker *w)
{
	return (time_t)(ut_thread_now_ms(&w->ut) / 1000);
}

/* iscsi_buf.c: page-aligned command buffers; w may be NULL (no caching). */
void *iscsit_buf_get(struct iscsit_worker *w, size_t len, size_t *cap);
void iscsit_buf_put(struct iscsit_worker *w, void *p, size_t cap);
void iscsit_buf_drain(struct iscsit_worker *w);

int iscsit_workers_start(struct iscsit_ctx *ctx, unsigned n, char *err, size_t errlen);
void iscsit_workers_stop(struct iscsit_ctx *ctx);
/* Ask every worker to close its oldest connection still in the login phase (descriptors ran
 * out). */
void iscsit_workers_shed_login(struct iscsit_ctx *ctx);
/* The least loaded worker (ties broken round-robin), counted as one connection busier. */
struct iscsit_worker *iscsit_worker_pick(struct iscsit_ctx *ctx);
/* Put c on w's list of connections; unlink it from w's lists (every connection, staged
 * input, output to flush). */
void iscsit_worker_link(struct iscsit_worker *w, struct iscsit_conn *c);
void iscsit_worker_unlink(struct iscsit_worker *w, struct iscsit_conn *c);

/* ---------------------------------------------------------------- transmit queue */
enum iscsit_txe_kind {
	TXE_PDU,    /* one prebuilt PDU: hdr + optional data */
	TXE_DATAIN, /* a read's data, up to t->din_len bytes of the task's buffer: Data-In
		     * PDUs generated lazily (TCP), or one RDMA WRITE before the response
		     * (iSER); with din_end, one piece of a READ sent in pieces */
};

struct iscsit_txe {
	struct iscsit_txe *next;
	enum iscsit_txe_kind kind;
	uint8_t hdr[ISCSI_BHS_LEN + ISCSI_DIGEST_LEN];
	const void *data;
	uint32_t dlen;
	void *owned;			    /* freed after the PDU went out */
	struct iscsit_task *task;	    /* TXE_DATAIN, or a response that ends a task */
	void (*sent)(struct iscsit_txe *e); /* once it went out (or was dropped) */
	/* TXE_DATAIN: 0, the data up to t->din_len, which ends the command's data (its F bit
	 * and the status when t->din_status); else a piece of a READ sent in pieces, from where
	 * the task's Data-In stands to this transfer offset */
	uint32_t din_end;
	bool close_after; /* close the connection once sent (Logout, login fail) */
	bool nodigest;	  /* login PDUs: digests start after the login phase */
	uint8_t inline_data[2 + SCSI_SENSE_MAX + 2];
};

/* ---------------------------------------------------------------- tasks */
enum iscsit_task_state {
	TS_DATA_OUT,   /* collecting write data (immediate, unsolicited, R2T) */
	TS_CMDSN_WAIT, /* waiting for its CmdSN turn */
	TS_EXEC,       /* in the SCSI core */
	TS_RESPOND,    /* response queued for transmission */
};

struct iscsit_r2t {
	uint32_t ttt, off, len, rcvd, next_sn;
};

struct iscsit_task {
	struct scsi_task st;
	struct ut_msg msg; /* completion, posted back from the core's thread */
	struct iscsit_conn *conn;
	struct iscsit_task *hnext; /* ITT hash chain */
	struct iscsit_task *qnext; /* CmdSN wait queue */
	enum iscsit_task_state state;
	uint32_t itt, cmd_sn, edtl;
	time_t started; /* entered the core (RspTimeout) */
	uint8_t lun_raw[8];
	bool immediate;
	bool imm_counted; /* an immediate command counted in the session's nimm */
	uint32_t charged; /* buffer bytes charged to the memory budget */
	bool counted; /* occupies a slot of the CmdSN window */
	bool in_hash;
	bool local_abort; /* aborted before reaching the core: no response */
	bool sn_ready;	  /* its CmdSN turn came */
	bool in_waitq;	  /* in the session's CmdSN queue */
	bool data_ready;  /* all write data is in (or none was needed) */
	bool failed;	  /* answer with fail_sr instead of executing */
	int fail_sr;	  /* enum scsi_sr */
	/* the data buffer, from the transport (xp->buf_get): niov pieces, buflen bytes */
	struct iovec *iov;
	unsigned niov;
	uint32_t buflen;
	struct iovec iov1; /* room for a buffer in one piece */
	/* write data */
	uint32_t rcvd;	    /* data-out bytes placed */
	uint32_t unsol_len; /* unsolicited bytes expected (immediate + Data-Out burst) */
	uint32_t unsol_rcvd;
	uint32_t unsol_next_sn;
	bool unsol_open;   /* unsolicited Data-Out still expected */
	uint32_t r2t_next; /* first offset not yet solicited */
	uint32_t r2t_sn;
	struct iscsit_r2t *r2ts;
	unsigned nr2t, r2t_cap;
	bool fetching; /* the transport is fetching write data (xp->solicit, not R2Ts) */
	/* data-in */
	uint32_t din_len, din_off, din_sn;
	/* a READ sent in pieces (ISCSIT_XP_DIN_PIECES, scsi_task.h "Data-in in pieces"): the
	 * core hands pieces over from its thread (din_upto, din_msg posted once), the worker
	 * queues them (din_queued) and gives each back once its txe went out */
	struct ut_msg din_msg;
	_Atomic uint32_t din_upto;
	atomic_bool din_posted;
	uint32_t din_queued;
	uint32_t din_pdus;   /* Data-In PDUs of the pieces queued */
	unsigned din_txes;   /* piece txes not yet gone */
	bool din_stopped;    /* scsi_task_din_stop() called: nothing more goes to the core */
	bool done_deferred;  /* done() came while a piece message was still posted */
	uint32_t stat_sn;     /* reserved when the Data-In stream with status is queued */
	bool din_status;      /* status rides in the last Data-In */
	uint32_t exp_data_sn; /* for the SCSI Response: Data-In PDUs + R2Ts sent */
	uint8_t cdb_ext[ISCSI_CDB_MAX];
	/* xp->task_priv bytes of the transport's follow (iscsit_task_xp) */
};

static inline void *iscsit_task_xp(struct iscsit_task *t)
{
	return t + 1;
}

/* ---------------------------------------------------------------- connections */
enum iscsit_conn_state {
	CONN_LOGIN,
	CONN_LOGIN_WAIT, /* final login step waits for an old session to go (reinstatement) */
	CONN_FFP,
	CONN_LOGOUT,  /* Logout received: answering once in-flight commands are done */
	CONN_CLOSING, /* socket shut; waiting for tasks in the core to come back */
};

struct iscsit_login;
struct ut_json;

/* ---------------------------------------------------------------- connection transports */
/* How a connection moves PDUs and data.  TCP (iscsi_tcp.c) and iSER (transports/iser/) are
 * peer implementations of this table, as LIO's iscsit_transport and tgt's iscsi_transport
 * make them; the iSCSI code above never asks which one a connection uses.  Every op runs on
 * the connection's worker. */
enum {
	ISCSIT_XP_PHASE_COLLAPSE = 1u << 0, /* status may ride in a read's last Data-In PDU */
	ISCSIT_XP_DIGESTS = 1u << 1,	    /* HeaderDigest / DataDigest can be negotiated */
	ISCSIT_XP_UNSOLICITED = 1u << 2,    /* unsolicited Data-Out PDUs (InitialR2T=No) */
	ISCSIT_XP_DIN_PIECES = 1u << 3,	    /* a long READ may be sent in pieces (TXE_DATAIN
					     * with din_end) from a ring of ISCSIT_DIN_ROOM */
	ISCSIT_XP_DIN_LEND = 1u << 4,	    /* a READ may be sent from the store's memory
					     * (scsi_task.h "Lent data-in"): sendmsg() copies */
};

/* The room of a READ sent in pieces: what one such command holds, however long. */
#define ISCSIT_DIN_ROOM SCSI_DIN_ROOM_MIN

struct iscsit_xport {
	const char *name; /* "tcp", "iser": for logs and the admin listing */
	unsigned caps;
	size_t task_priv;  /* bytes kept after every struct iscsit_task (iscsit_task_xp) */
	uint32_t max_xfer; /* most bytes one command may move */
	/* May target t be reached over this transport (its configuration allows it)? */
	bool (*target_allowed)(const struct iscsit_tgt *t);
	/* Input: receive and run what arrived; iscsit_conn_input calls it unless input is
	 * paused or the connection closes. */
	void (*input)(struct iscsit_conn *c);
	/* Input was paused or resumed (c->rx_paused): adjust what is watched (may be NULL). */
	void (*rx_changed)(struct iscsit_conn *c);
	/* Output, in order: a prebuilt PDU (TXE_PDU), or a read's data (TXE_DATAIN), with its
	 * status in the last Data-In when e->task->din_status (only with PHASE_COLLAPSE), else
	 * followed by the SCSI Response as its own TXE_PDU.  The op owns e: once e is done with
	 * (sent, or dropped because the connection closes) it calls iscsit_txe_done(c, e). */
	void (*queue)(struct iscsit_conn *c, struct iscsit_txe *e);
	/* The worker flushes the connections marked dirty (iscsit_conn_mark_dirty). */
	void (*output)(struct iscsit_conn *c);
	/* Ask for the rest of a write's data, from t->r2t_next to t->edtl: R2Ts (TCP), or
	 * reading it (iSER: RDMA READ, t->fetching until iscsit_task_data_placed, which must
	 * not be called from inside this op).  0, or -1: the command fails (data phase). */
	int (*solicit)(struct iscsit_task *t);
	/* A SCSI Command PDU with imm bytes of immediate data made task t (its buffer not yet
	 * allocated): the transport's own per-task state.  0, or -1 with *why: a protocol
	 * error that drops the connection.  May be NULL. */
	int (*task_init)(struct iscsit_task *t, uint32_t imm, const char **why);
	/* The task's data buffer of len bytes (t->iov, t->niov, t->buflen).  0 or -errno
	 * (-EAGAIN: none free now). */
	int (*buf_get)(struct iscsit_task *t, uint32_t len);
	void (*buf_put)(struct iscsit_task *t);
	/* Login: take the transport's own keys out of a request's kv[0..n) (answers go to
	 * out; the others stay in order at the front).  Returns how many are left for the
	 * negotiation engine, or -1 with *status.  May be NULL. */
	int (*login_keys)(struct iscsit_conn *c, struct iscsit_kv *kv, unsigned n,
			  struct iscsit_text *out, uint16_t *status);
	/* Login: an answer the engine built (final: the login moves to full feature phase).
	 * 0, or -1 with *status.  May be NULL. */
	int (*login_answer)(struct iscsit_conn *c, struct iscsit_text *out, bool final,
			    uint16_t *status);
	/* The login's last response is queued: the negotiated limits take effect. */
	void (*enter_ffp)(struct iscsit_conn *c);
	/* The connection closes: stop input, drop queued output (iscsit_txe_done on each
	 * entry), and let go of the link. */
	void (*close)(struct iscsit_conn *c);
	/* Something of c still runs in the transport (work posted to the link): not yet. */
	bool (*busy)(const struct iscsit_conn *c);
	/* c is freed: release the transport's state. */
	void (*release)(struct iscsit_conn *c);
	/* The admin listing: the transport's own fields of c (may be NULL). */
	void (*show)(const struct iscsit_conn *c, struct ut_json *j);
	/* Moving a connection to another worker (iscsi_place.c), its output all sent and its
	 * input paused: detach stops watching the link on c->w's loop (on that worker), attach
	 * watches it on the new c->w's (on that one).  attach returns 0 or -errno.  NULL: the
	 * transport's connections stay on the worker that accepted them. */
	void (*detach)(struct iscsit_conn *c);
	int (*attach)(struct iscsit_conn *c);
};

#define ISCSIT_ITT_BUCKETS 256

struct iscsit_conn {
	uint64_t id;
	struct iscsit_ctx *ctx;
	struct iscsit_worker *w;
	const struct iscsit_xport *xp;
	void *xp_priv;			   /* the transport's per-connection state */
	struct iscsit_conn *wprev, *wnext; /* worker's list */
	struct iscsit_conn *ready_next, *dirty_next;
	bool on_ready, on_dirty;
	struct iscsit_portal *portal;
	struct sockaddr_storage peer, local;
	char peer_str[80], local_str[80];
	enum iscsit_conn_state state;
	atomic_int refs;       /* messages in flight that name this connection */
	bool rx_paused;	       /* a handler paused input (login wait, logout) */
	bool tx_full;	       /* the transport's transmit backlog is over its share: the
				* receive handlers stop after the current PDU (backpressure) */
	uint64_t rx_throttled; /* times input stopped for tx_full */
	uint32_t login_cmd_sn; /* ExpCmdSN before a session exists */
	unsigned ntasks;       /* tasks alive (any state) */
	void *task_cache;      /* freed tasks kept for reuse (iscsi_cmd.c) */
	unsigned ntask_cache;
	unsigned ntmf;	       /* TMFs in the core */
	struct iscsit_rx rx;
	uint64_t tx_pdus, tx_bytes; /* counted by the transport */
	struct iscsit_login *login;
	struct iscsit_session *sess;
	struct iscsit_tgt *tgt; /* NULL for discovery */
	uint16_t cid;
	uint32_t stat_sn;
	uint32_t exp_stat_sn;
	uint32_t next_ttt;
	struct iscsit_task *itt[ISCSIT_ITT_BUCKETS];
	unsigned nexec; /* tasks inside the SCSI core */
	/* the PDU between on_header and on_pdu */
	struct iscsit_task *cur_task;
	int cur_r2t;	    /* index in cur_task->r2ts, -1 for unsolicited data */
	uint8_t cur_reject; /* reject reason for the PDU being received, 0 = none */
	bool cur_ignore;    /* Data-Out for a task that is gone: drop quietly */
	/* recently finished or refused ITTs whose Data-Out we drop quietly */
	uint32_t gone_itt[16];
	unsigned gone_pos;
	/* Text continuation (long SendTargets answers) */
	struct iscsit_text text_rsp;
	size_t text_off;
	uint32_t text_ttt, text_itt;
	/* liveness */
	time_t last_rx, login_start, nop_sent;
	uint32_t nop_ttt; /* outstanding target ping, or ISCSI_RSVD_TAG */
	/* Logout */
	uint32_t logout_itt;
	uint8_t logout_reason;
	bool close_after_flush; /* a Logout/login-failure answer went out: close now */
	const char *close_why;
	/* reinstatement */
	struct iscsit_session *wait_for;
	struct ut_msg resume_msg;
	struct ut_msg close_msg;
	bool close_msg_busy;
	bool async_logout_sent;
	/* placement (iscsi_place.c): the worker c moves to once its login answer is out, and
	 * the message that carries it there; move_to is written under ctx->sess_lock */
	struct iscsit_worker *move_to;
	struct ut_msg move_msg;
};

/* iscsi_conn.c */
/* A connection on worker w (which counted it already: iscsit_worker_pick), arrived through
 * portal p over transport xp, whose state for it is xp_priv; NULL when out of memory. */
struct iscsit_conn *iscsit_conn_new(struct iscsit_worker *w, const struct iscsit_xport *xp,
				    void *xp_priv, struct iscsit_portal *p,
				    const struct sockaddr_storage *peer,
				    const struct sockaddr_storage *local);
void iscsit_conn_input(struct iscsit_conn *c);	/* input arrived / staged data */
void iscsit_conn_output(struct iscsit_conn *c); /* flush queued output */
/* The receive state machine's handlers, for transports that run it (iscsit_rx_run/feed). */
extern const struct iscsit_rx_ops iscsit_conn_rx_ops;
void iscsit_conn_close(struct iscsit_conn *c, const char *why);
void iscsit_conn_put(struct iscsit_conn *c); /* drop a reference; may free */
void iscsit_conn_maybe_free(struct iscsit_conn *c);
void iscsit_conn_pause(struct iscsit_conn *c);
void iscsit_conn_resume(struct iscsit_conn *c);
void iscsit_conn_tick(struct iscsit_conn *c, time_t now); /* NOP-In, timeouts */
void iscsit_conn_mark_dirty(struct iscsit_conn *c);
void iscsit_conn_mark_ready(struct iscsit_conn *c);
/* A PDU received whole by a message transport (iSER SEND: BHS + AHS + data, no digests, no
 * padding): run it through the handlers the stream receive path feeds.  Returns RX_CB_OK,
 * RX_CB_PAUSE (hold further PDUs until xp->input runs) or RX_CB_FATAL (the connection was
 * closed). */
int iscsit_conn_feed(struct iscsit_conn *c, const uint8_t *pdu, size_t len);
/* Ask c's worker (from any thread) to close c. */
void iscsit_conn_close_async(struct iscsit_conn *c, const char *why);
/* Digests and limits take effect (end of login). */
void iscsit_conn_enter_ffp(struct iscsit_conn *c);
/* The StatSN/ExpCmdSN/MaxCmdSN a response carries; advance: consume a StatSN. */
void iscsit_conn_sn(struct iscsit_conn *c, struct iscsi_sn *sn, bool advance);
/* Queue a Reject for the PDU whose header is bhs. */
void iscsit_send_reject(struct iscsit_conn *c, const uint8_t *bhs, uint8_t reason);
/* Send an Async Message asking the initiator to log out within `secs`. */
void iscsit_conn_request_logout(struct iscsit_conn *c, unsigned secs);

/* iscsi_place.c (the policy: ISCSIT_PLACE_GROUP_MAX above).
 * The worker for a connection now on worker `cur`, given how many connections of its group
 * each of the n workers serves (itself not counted): the one with the most below `max`, cur
 * on a tie; cur when no worker has one below max. */
unsigned iscsit_place_pick(const unsigned *group_on, unsigned n, unsigned cur, unsigned max);
/* After the final login answer is queued (c in full feature phase): decide where c runs.
 * true when it moves: its input is paused until it runs on the new worker. */
bool iscsit_place_decide(struct iscsit_conn *c);
/* The transport sent all of c's output and c->move_to is set: hand c over (or, when
 * something names c on this worker after all, stay and resume). */
void iscsit_place_move(struct iscsit_conn *c);
/* c closes before it moved: give the count back to its worker. */
void iscsit_place_cancel(struct iscsit_conn *c);

/* ---------------------------------------------------------------- sessions */
struct iscsit_session {
	struct iscsit_session *next;
	struct iscsit_ctx *ctx;
	struct iscsit_tgt *tgt; /* NULL for discovery */
	uint8_t isid[6];
	uint16_t tsih;
	struct iscsit_sess_params p;
	struct scsi_nexus nexus;
	bool nexus_registered;
	bool in_table;
	pthread_mutex_t lock; /* CmdSN state below (connections of a session may be on 2 workers) */
	uint32_t exp_cmd_sn;
	uint32_t inflight;	    /* non-immediate commands accepted and not yet answered */
	uint32_t queued_cmds;	    /* window size */
	struct iscsit_task *waitq;  /* out-of-order SCSI commands, sorted by CmdSN */
	struct iscsit_conn *conn;   /* MaxConnections is 1: the one connection */
	struct iscsit_conn *waiter; /* a login waiting for this session to go (reinstatement) */
	bool closing;
	time_t created;
	struct sockaddr_storage local; /* the address the login reached (per_portal_acl) */
	const struct iscsit_portal *portal;
	/* memory budget (iscsit_mem_charge): command buffer bytes held, the limit */
	atomic_uint_fast64_t mem_used;
	uint64_t mem_limit;
	atomic_uint nimm; /* immediate commands alive (at most queued_cmds) */
	atomic_uint_fast64_t started; /* commands handed to the SCSI core, for the listing */
	atomic_uint_fast64_t refused_mem, rejected_imm; /* counters for the admin listing */
};

/* iscsi_session.c */
/* Find a session by TSIH. Caller holds ctx->sess_lock. */
struct iscsit_session *iscsit_session_by_tsih(struct iscsit_ctx *ctx, uint16_t tsih);
/* Same I_T nexus name (ISID + initiator + target): reinstatement candidate. */
struct iscsit_session *iscsit_session_by_isid(struct iscsit_ctx *ctx, const uint8_t isid[6],
					      const char *iname, const struct iscsit_tgt *t,
					      bool discovery);
/* A session for c's login: the LUN table comes from the target as configured now (a change
 * during the login counts).  NULL, with *status the login status to answer. */
struct iscsit_session *iscsit_session_create(struct iscsit_conn *c,
					     const struct iscsit_sess_params *p,
					     const uint8_t isid[6], uint32_t cmd_sn,
					     uint16_t *status);
/* Normal sessions of the target named `name` (MaxSessions).  Takes sess_lock. */
unsigned iscsit_session_count(struct iscsit_ctx *ctx, const char *name);
/* The connection is gone and its tasks are done: end the session. */
void iscsit_session_release(struct iscsit_session *s);
/* MaxCmdSN as of now. */
uint32_t iscsit_session_max_cmd_sn(struct iscsit_session *s);
uint32_t iscsit_session_exp_cmd_sn(struct iscsit_session *s);

enum iscsit_cmdsn_verdict {
	CMDSN_ACCEPT, /* in order: process now */
	CMDSN_QUEUE,  /* in the window but ahead of a gap: wait */
	CMDSN_DROP,   /* outside the window: silently ignore (RFC 7143 4.2.2.1) */
};
/* Check and consume a CmdSN (non-immediate PDUs advance ExpCmdSN; commands count against the
 * window until answered). */
enum iscsit_cmdsn_verdict iscsit_cmdsn_check(struct iscsit_session *s, uint32_t cmd_sn,
					     bool immediate, bool counts);
/* Memory budget: charge n bytes of command buffer to session s and the global budget.
 * false (nothing charged) when either is over: *global says which.  A session holding
 * nothing may always take one command (up to the transport's max_xfer) if the global budget
 * has room, so a limit below one command's size never starves a session. */
bool iscsit_mem_charge(struct iscsit_session *s, uint64_t n, bool *global);
void iscsit_mem_uncharge(struct iscsit_ctx *ctx, struct iscsit_session *s, uint64_t n);
/* A command's response was queued: its window slot frees up. */
void iscsit_cmdsn_release(struct iscsit_session *s);
/* Queue a SCSI command task behind a CmdSN gap; tasks whose turn came are returned. */
void iscsit_cmdsn_enqueue(struct iscsit_session *s, struct iscsit_task *t);
struct iscsit_task *iscsit_cmdsn_ready(struct iscsit_session *s);

/* ---------------------------------------------------------------- per-PDU handlers */
/* iscsi_login.c */
int iscsit_login_pdu(struct iscsit_conn *c, struct iscsit_rx *rx);
void iscsit_login_free(struct iscsit_conn *c);
void iscsit_login_resume(struct iscsit_conn *c); /* the old session went: finish the login */
/* iscsi_text.c */
int iscsit_text_pdu(struct iscsit_conn *c, struct iscsit_rx *rx);
/* Build the SendTargets answer (also used by the unit tests). */
void iscsit_sendtargets(struct iscsit_ctx *ctx, const char *what, const char *iname,
			const struct sockaddr_storage *local, const struct iscsit_portal *via,
			const struct iscsit_tgt *session_tgt, struct iscsit_text *out);
/* ---------------------------------------------------------------- targets, live changes */
/* iscsi_transport.c: the generation of targets drv configures (references: 1, the caller's);
 * NULL with err. */
struct iscsit_tgen *iscsit_tgen_build(struct iscsit_ctx *ctx, const struct tgt_driver *drv,
				      char *err, size_t errlen);
void iscsit_tgen_put(struct iscsit_tgen *g);
/* A reference to t (and its generation) for a connection or session; drop with _put. */
void iscsit_tgt_get(struct iscsit_tgt *t);
void iscsit_tgt_put(struct iscsit_tgt *t);
/* The current target of that name; caller holds ctx->tgt_lock. */
struct iscsit_tgt *iscsit_tgt_find(struct iscsit_ctx *ctx, const char *name);
/* iscsi_update.c: struct tgt_transport's update and close_session. */
int iscsit_update(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
		  size_t errlen);
int iscsit_close_session(uint64_t nexus_id, char *err, size_t errlen);

/* Does this target accept logins through portal p reached at local address `local`? */
bool iscsit_portal_allowed(const struct iscsit_tgt *t, const struct iscsit_portal *p,
			   const struct sockaddr_storage *local);
/* The LUN set initiator iname sees on t through a connection to local address `local` (the
 * target's ACL; with per_portal_acl 1 the portal address is part of the name matched).
 * Caller holds ctx->tgt_lock and t is current (t->t set). */
const struct scsi_lun_table *iscsit_acl_luns(const struct iscsit_tgt *t, const char *iname,
					     const struct sockaddr_storage *local);
/* iscsi_cmd.c */
int iscsit_cmd_header(struct iscsit_conn *c, struct iscsit_rx *rx);
int iscsit_cmd_pdu(struct iscsit_conn *c, struct iscsit_rx *rx);
int iscsit_dataout_header(struct iscsit_conn *c, struct iscsit_rx *rx);
int iscsit_dataout_pdu(struct iscsit_conn *c, struct iscsit_rx *rx);
void iscsit_task_free(struct iscsit_task *t);
/* Free the tasks a connection kept for reuse (when the connection goes). */
void iscsit_task_cache_free(struct iscsit_conn *c);
void iscsit_task_submit(struct iscsit_task *t); /* its CmdSN turn came */
struct iscsit_task *iscsit_task_find(struct iscsit_conn *c, uint32_t itt);
void iscsit_conn_drop_tasks(struct iscsit_conn *c); /* closing: free tasks not in the core */
void iscsit_task_gone(struct iscsit_conn *c, uint32_t itt);
/* xp->solicit's completion: len bytes of t's write data are in its buffer (ok), or the
 * transfer failed (!ok: the command ends with a data phase error). */
void iscsit_task_data_placed(struct iscsit_task *t, uint32_t len, bool ok);
/* R2Ts for the rest of a write, up to MaxOutstandingR2T (the stream transports' solicit). */
int iscsit_r2t_solicit(struct iscsit_task *t);
/* Pieces of t's buffer covering [off, off + len) into iov (room for max).  The count, or -1
 * when they do not fit max or the range is outside the buffer. */
int iscsit_task_slice(const struct iscsit_task *t, uint32_t off, uint32_t len, struct iovec *iov,
		      int max);
/* iscsi_tmf.c */
int iscsit_tmf_pdu(struct iscsit_conn *c, struct iscsit_rx *rx);
/* iscsi_nop.c */
int iscsit_nop_pdu(struct iscsit_conn *c, struct iscsit_rx *rx);
void iscsit_nop_ping(struct iscsit_conn *c);
/* iscsi_logout.c */
int iscsit_logout_pdu(struct iscsit_conn *c, struct iscsit_rx *rx);
void iscsit_logout_maybe_answer(struct iscsit_conn *c);

/* ---------------------------------------------------------------- transmit (iscsi_tx.c) */
struct iscsit_txe *iscsit_txe_new(void);
void iscsit_tx_queue(struct iscsit_conn *c, struct iscsit_txe *e);
/* Build a header-only or small PDU and queue it.  data is copied when copy is set.  0, or -1
 * when out of memory. */
int iscsit_tx_pdu(struct iscsit_conn *c, const uint8_t *hdr, const void *data, uint32_t dlen,
		  bool copy);
/* Queue a header-only PDU after which the connection closes (why: for the log). */
void iscsit_tx_pdu_then_close(struct iscsit_conn *c, const uint8_t *hdr, const char *why);
/* The transport is done with e (sent, or dropped): its sent() runs, a close_after entry
 * marks the connection to close once its output is out (c->close_after_flush), e is freed. */
void iscsit_txe_done(struct iscsit_conn *c, struct iscsit_txe *e);

/* ---------------------------------------------------------------- portals (iscsi_portal.c) */
/* Parse "ADDR:PORT", "[v6]:PORT", "ADDR" (port 3260). */
int iscsit_parse_portal(const char *s, struct sockaddr_storage *ss, socklen_t *len);
/* Make room for the TCP portals plus `extra` of other transports, then open the TCP ones
 * (driver attribute `listen`; default 0.0.0.0:3260 and [::]:3260) on worker 0. */
int iscsit_portals_open(struct iscsit_ctx *ctx, unsigned extra, char *err, size_t errlen);
/* Append a portal "ADDR[:PORT]" of transport xp (within the room made); NULL with err. */
struct iscsit_portal *iscsit_portal_add(struct iscsit_ctx *ctx, const char *str,
					const struct iscsit_xport *xp, char *err, size_t errlen);
void iscsit_portals_close(struct iscsit_ctx *ctx);
/* Accept every pending connection on portal p (called on worker 0). */
void iscsit_portal_accept(struct iscsit_ctx *ctx, struct iscsit_portal *p);
/* The TCP transport (iscsi_tcp.c); tcp_adopt hands an accepted socket to the least loaded
 * worker. */
extern const struct iscsit_xport iscsit_tcp_xport;
void iscsit_tcp_adopt(struct iscsit_ctx *ctx, int fd, struct iscsit_portal *portal);
/* The iSER transport's portals on RDMA/CM (transports/iser/iser_listen.c): the driver
 * attribute listen_iser (how many of them, into vals), its checks, start (portals added,
 * the verbs layer on the workers), close (no new connections), stop (after the last
 * connection went). */
#define ISCSIT_ISER_PORTALS_MAX 8
unsigned iser_listen_portals(const struct tgt_driver *drv, const char **vals, unsigned max);
void iser_listen_validate(const struct tgt_driver *drv, struct diag *d);
int iser_listen_start(struct iscsit_ctx *ctx, char *err, size_t errlen);
void iser_listen_close(struct iscsit_ctx *ctx);
void iser_listen_stop(struct iscsit_ctx *ctx);
void iscsit_sockaddr_str(const struct sockaddr_storage *ss, char *buf, size_t len, bool port);
void iscsit_apply_sockopts(int fd, const struct iscsit_sockopts *o);

/* ---------------------------------------------------------------- CHAP (iscsi_chap.c) */
struct iscsit_chap;
struct iscsit_chap *iscsit_chap_new(const struct iscsit_auth *auth);
void iscsit_chap_free(struct iscsit_chap *ch);
enum iscsit_chap_result {
	CHAP_CONTINUE, /* more exchange needed */
	CHAP_DONE,     /* authenticated (and answered mutual CHAP if asked) */
	CHAP_FAIL,     /* authentication failure: login status 0201 */
	CHAP_PROTO,    /* malformed exchange: login status 0200 */
};
/* Feed the CHAP_* keys of one login request; appends our keys to out. */
enum iscsit_chap_result iscsit_chap_step(struct iscsit_chap *ch, struct iscsit_kv *kv,
					 const unsigned *idx, unsigned n, struct iscsit_text *out);
/* Test hooks: fixed challenge/identifier instead of random ones. */
void iscsit_chap_set_challenge(struct iscsit_chap *ch, uint8_t id, const uint8_t *c, size_t len);
/* The CHAP response H(id || secret || challenge) for algorithm alg (5, 6, 7); returns its
 * length or 0 for an unknown algorithm. */
size_t iscsit_chap_response(int alg, uint8_t id, const char *secret, const uint8_t *chal,
			    size_t chal_len, uint8_t *out);
/* Decode a CHAP binary value: 0x hex or 0b base64.  Returns length or -1. */
long iscsit_chap_decode(const char *s, uint8_t *out, size_t max);
const char *iscsit_chap_name(const struct iscsit_chap *ch); /* authenticated user */

/* ---------------------------------------------------------------- configuration
 * (iscsi_transport.c) */
int iscsit_auth_parse(struct iscsit_auth *a, const struct tgt_attrs *as, struct diag *d);
void iscsit_auth_free(struct iscsit_auth *a);
extern struct iscsit_ctx *iscsit_global;
/* iscsi_show.c: the admin socket's session listing (struct tgt_transport show_sessions). */
struct ut_json;
void iscsit_show_sessions(const struct tgt_driver *drv, struct ut_json *j,
			  struct scsi_io_stats *total);

#endif
