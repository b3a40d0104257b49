/* The SRP target's internals (utgtd's ib_srpt driver): targets, I_T nexuses, channels and
 * requests.
 *
 * Threading: a channel lives on one event thread of the verbs layer and every field of it and
 * of its requests is touched there only; SCSI completions (any thread) come back as an
 * ut_msg.  Nexuses are shared by the channels of one initiator port on one target (SRP
 * multichannel), possibly on different threads: the nexus list and channel membership are
 * under ctx->lock, taken at login and release only. */
#ifndef UTGT_SRP_INT_H
#define UTGT_SRP_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/uio.h>

#include "scsi/scsi_task.h"
#include "transports/model/tgt_model.h"
#include "transports/rdma/rdma.h"
#include "transports/rdma/rdma_pool.h"
#include "transports/srp/srp_credit.h"
#include "transports/srp/srp_ident.h"
#include "transports/srp/srp_login.h"
#include "transports/srp/srp_proto.h"
#include "transports/rdma/rdma_io.h"

#define SRPT_DEFAULT_PORT    5555
#define SRPT_MAX_XFER	     (8u << 20) /* most data one SRP_CMD moves; VPD B0 says so per nexus */
#define SRPT_SEND_EXTRA	     4 /* send buffers beyond one per request: CRED_REQ, T_LOGOUT */
#define SRPT_RECV_EXTRA	     1 /* receive buffers beyond the credits: SRP_CRED_RSP */
#define SRPT_RDMA_WR_PER_CMD 4 /* send queue room per request for RDMA READ/WRITE */

/* t is the model while this configuration runs: read under ctx->lock only (live
 * administration replaces the whole array under it, srp_update.c). */
struct srpt_tgt {
	const struct tgt_target *t;
	struct srp_ident id;
	uint16_t rel_tgt_id;
};

struct srpt_opts {
	struct rdma_srv_cfg rdma;
	struct srp_login_limits lim;
	/* channels logged in at once, all initiators (0: no limit).  Each one holds its receive
	 * buffers (queue_depth + 1 of up to max_req_size, unless srq), its send buffers and
	 * request slots, whatever it sends: this is what bounds them (docs/security.md). */
	unsigned max_connections;
	unsigned logout_wait; /* seconds at shutdown before connections are closed */
};

struct srpt_nexus;

struct srpt_ctx {
	const struct tgt_config *cfg;
	const struct tgt_driver *drv;
	struct srpt_opts o;
	struct srpt_tgt *tgts;
	unsigned ntgts;
	struct rdma_srv *srv;
	pthread_mutex_t lock; /* nexuses and their channel lists */
	struct srpt_nexus *nexuses;
	unsigned nchans; /* channels logged in, all nexuses (max_connections) */
	atomic_bool stopping;
};

enum srpt_ch_state {
	SRPT_CH_LOGIN, /* accepted, waiting for the connection to be established */
	SRPT_CH_LIVE,
	SRPT_CH_DRAIN, /* logged out (either side): finish what runs, answer new commands BUSY */
	SRPT_CH_DOWN,  /* connection gone: wait for the core to finish, then release */
};

struct srpt_ch;

struct srpt_nexus {
	struct scsi_nexus nx;
	struct srpt_tgt *tgt;
	uint8_t i_port_id[16];
	bool retired; /* replaced by a newer single-channel login */
	unsigned nch;
	struct srpt_ch *chans;
	struct srpt_nexus *next;
};

enum srpt_req_state {
	REQ_FREE,
	REQ_WAIT_BUF,  /* waiting for data pool chunks */
	REQ_READ,      /* RDMA READ of the data-out in flight */
	REQ_EXEC,      /* in the SCSI core (task or TMF) */
	REQ_WAIT_SQ,   /* response ready, no send queue room or send buffer yet */
	REQ_RESPONDED, /* response (with its RDMA WRITEs) posted */
};

#define SRPT_MAX_SEGS (SRPT_MAX_XFER / 65536 + 2)

struct srpt_req {
	struct scsi_task st; /* first: done() gets it back */
	struct scsi_tmf tmf;
	bool is_tmf;
	struct srpt_ch *ch;
	enum srpt_req_state state;
	struct rdma_buf *iu;
	uint32_t iu_len;
	struct srp_cmd cmd;
	uint8_t tmf_code;  /* SRP response code of a TMF */
	bool iu_returned;  /* receive buffer posted again, credit earned */
	bool is_read_wait; /* waiting for send queue room to post its RDMA READ */
	bool aborted;	   /* by a TMF before it reached the core: dropped, no response */
	struct rdma_op op;
	struct rdma_pool_waiter pw;
	struct rdma_seg segs[SRPT_MAX_SEGS];
	int nsegs;
	struct iovec iov[SRPT_MAX_SEGS];
	struct ut_msg msg;
	struct srpt_req *next; /* free list, or the send-queue wait list */
};

struct srpt_ch {
	struct srpt_ctx *ctx;
	struct rdma_conn *conn;
	struct srpt_nexus *nexus;
	enum srpt_ch_state state;
	struct srp_cmd_limits lim;
	uint32_t it_iu_len, ti_iu_len;
	struct srp_credit cred;
	struct srpt_req *reqs;
	unsigned nreqs;
	struct srpt_req *free_reqs;
	unsigned active; /* requests not free */
	struct srpt_req *sq_head, *sq_tail;
	bool tlogout_pending; /* T_LOGOUT not posted yet (no room) */
	uint32_t tlogout_reason;
	unsigned ctl_inflight; /* our own requests (CRED_REQ, T_LOGOUT) being sent */
	struct rdma_op ctl_op[2];
	struct ut_msg kill_msg;
	atomic_bool kill_posted;
	bool kill_ran;
	uint32_t kill_reason;
	struct ut_msg finish_msg;
	bool finish_posted;
	uint64_t drain_since; /* CLOCK_MONOTONIC seconds when logout began */
	char iname[35];
	struct srpt_ch *nx_next;
	/* counters, for the log at logout */
	uint64_t ncmds, bytes_in, bytes_out;
};

extern struct srpt_ctx *srpt_global;
/* srp_admin.c: the admin socket's session listing (struct tgt_transport show_sessions). */
struct ut_json;
void srpt_show_sessions(const struct tgt_driver *drv, struct ut_json *j,
			struct scsi_io_stats *total);

/* The verbs layer's connection calls, as the SRP code makes them (srp_io.c): the real ones, or
 * a test's stand-ins. */
extern const struct rdma_io *srpt_io;

/* srp_transport.c: the driver attributes (d: report errors there) */
int srpt_opts_parse(const struct tgt_driver *drv, struct srpt_opts *o, struct diag *d);
#define SRPT_MAX_DEFAULT_THREADS 4
unsigned srpt_default_threads(void); /* `threads` when not set: one per CPU, up to the max */

/* srp_target.c: targets and nexuses */
int srpt_targets_setup(struct srpt_ctx *ctx, struct diag *d);
struct srpt_tgt *srpt_find_target(struct srpt_ctx *ctx, const uint8_t port_id[16]);
/* srp_update.c: live administration (struct tgt_transport's update and close_session).  The
 * _ctx forms take the context (tests); the ops use srpt_global. */
int srpt_ctx_update(struct srpt_ctx *ctx, const struct tgt_config *cfg,
		    const struct tgt_driver *drv, char *err, size_t errlen);
int srpt_update(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
		size_t errlen);
int srpt_ctx_close_session(struct srpt_ctx *ctx, uint64_t nexus_id, char *err, size_t errlen);
int srpt_close_session(uint64_t nexus_id, char *err, size_t errlen);
/* Decide a login under the nexus lock; on acceptance the channel joins its nexus (a new one
 * when SINGLE replaced the old, whose channels are told to go). */
void srpt_nexus_login(struct srpt_ctx *ctx, struct srpt_ch *ch, const struct srp_login_req *req,
		      struct srp_login_decision *dec);
void srpt_nexus_leave(struct srpt_ctx *ctx, struct srpt_ch *ch);

/* srp_ch.c: channels */
extern const struct rdma_conn_ops srpt_conn_ops;
void srpt_ch_logout(struct srpt_ch *ch, uint32_t reason); /* on its thread */
void srpt_ch_kill(struct srpt_ch *ch, uint32_t reason);	  /* from any thread */
struct rdma_buf *srpt_ch_send_buf(struct srpt_ch *ch);
void srpt_ch_req_free(struct srpt_ch *ch, struct srpt_req *r);
void srpt_ch_return_iu(struct srpt_ch *ch, struct srpt_req *r);
void srpt_ch_sq_wait(struct srpt_ch *ch, struct srpt_req *r);
void srpt_ch_sq_remove(struct srpt_ch *ch, struct srpt_req *r);
void srpt_ch_maybe_cred_req(struct srpt_ch *ch);
void srpt_ch_check_drained(struct srpt_ch *ch);
int srpt_ch_cpu(unsigned n); /* the CPU channel n (1-based) of a nexus serves, -1 none */

/* srp_cmd.c: SRP_CMD */
void srpt_cmd_start(struct srpt_ch *ch, struct srpt_req *r);
void srpt_req_respond(struct srpt_req *r); /* (re)try sending the response */
void srpt_req_retry(struct srpt_req *r);   /* send queue room came back */
void srpt_req_abandon(struct srpt_req *r); /* channel down: drop whatever it waits for */
/* An immediate answer without execution: sr with no data, or BUSY. */
void srpt_cmd_fail(struct srpt_ch *ch, struct srpt_req *r, int sr);
void srpt_cmd_busy(struct srpt_ch *ch, struct srpt_req *r);

/* srp_tmf.c: SRP_TSK_MGMT */
void srpt_tmf_start(struct srpt_ch *ch, struct srpt_req *r);

#endif
