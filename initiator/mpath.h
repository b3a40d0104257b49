/* Multipath: one LU through several paths of one engine.  Checks before any I/O that every
 * path reaches the same LU (VPD 83) with the same geometry, picks a path per command by
 * policy, and hides path failures from the application: commands of a failed path are retried
 * on the others, the path reconnects in the background (and must again prove it reaches the
 * same LU), and every such event is recorded with its time for the report. */
#ifndef UB_MPATH_H
#define UB_MPATH_H

#include "initiator/engine.h"
#include "initiator/policy.h"
#include "initiator/scsi_info.h"

#define UB_MAX_PATHS 16

struct ub_mpath;
struct ub_mio;

struct ub_mio {
	struct ub_io io; /* the command; io.done/io.owner belong to multipath */
	void (*done)(struct ub_mio *m);
	void *owner;
	int path;	/* path that completed it (or last tried) */
	unsigned tries; /* retries so far */
	uint64_t submit_ns;
	uint64_t path_submit_ns;
	uint64_t done_ns;	/* when its completion was reaped (one time per batch, as fio) */
	uint64_t wait_since_ns; /* waiting for any path since (no-path timeout) */
	uint64_t not_before_ns; /* delayed retry (BUSY, ALUA transitioning) */
	char errmsg[200];	/* why it failed, when io.result != UB_IO_OK in done() */
	uint8_t param[24];	/* UNMAP parameter list when a trim goes as a CDB */
	struct iovec param_iov;
	struct ub_mio *next;
	struct ub_mpath *mp;
};

enum ub_mp_state { UB_MP_UP, UB_MP_DOWN, UB_MP_CONNECTING, UB_MP_CHECKING, UB_MP_DEAD };

struct ub_path_stats {
	uint64_t ios[2], bytes[2]; /* [0] read, [1] write */
	uint64_t lat_ns[2];
	uint64_t failures, reconnects, retried;
};

struct ub_path {
	char shown[600]; /* URL without secret */
	struct ub_epath *ep;
	enum ub_mp_state state;
	int alua;
	struct ub_lu_ident ident;
	struct ub_path_stats st;
	unsigned inflight;
	uint64_t down_since_ns, next_try_ns;
	unsigned backoff_ms, attempts;
	/* identity re-check after a reconnect */
	struct ub_io check;
	struct iovec check_iov;
	uint8_t check_buf[512];
	bool check_done;
};

struct ub_mpath_event {
	uint64_t t_ns; /* since ub_mpath_open finished */
	int path;      /* -1: not about one path */
	char msg[240];
};

struct ub_mpath_cfg {
	enum ub_policy policy;
	unsigned rr_iops;
	struct ub_eng_opts eng;
	unsigned reconnect_delay_ms; /* first reconnect attempt after a failure */
	unsigned no_path_timeout_ms; /* how long commands wait when every path is down */
	unsigned max_retries;
};

struct ub_mpath {
	const struct ub_engine *eng;
	struct ub_mpath_cfg cfg;
	struct ub_path path[UB_MAX_PATHS];
	unsigned n;
	struct ub_rr rr;
	uint32_t block_size;
	uint64_t nblocks;
	bool have_ident;
	char ident_str[160];
	bool alua;
	bool rtpg_stale, rtpg_busy;
	struct ub_io rtpg_io;
	struct iovec rtpg_iov;
	uint8_t rtpg_buf[1024];
	struct ub_mio *pend_head, *pend_tail; /* waiting for a path or a retry time */
	struct ub_mio *done_head, *done_tail; /* completed by an engine, to be processed */
	unsigned outstanding;		      /* submitted, not yet handed back */
	struct ub_mpath_event *ev;
	unsigned nev, evcap;
	uint64_t t0;
	uint64_t last_tick_ns;
	uint64_t reap_ns; /* set while ub_mpath_poll() takes completions from the engines */
	uint64_t retries, failovers;
};

/* Connect every path, check identity/geometry/ALUA.  false with a reason in err. */
bool ub_mpath_open(struct ub_mpath *m, const struct ub_engine *eng, const struct ub_mpath_cfg *cfg,
		   char *const *targets, unsigned n, char *err, size_t errlen);
void ub_mpath_close(struct ub_mpath *m);
/* Never fails synchronously; mio->done runs later from ub_mpath_poll(). */
void ub_mpath_submit(struct ub_mpath *m, struct ub_mio *mio);
/* Wait up to timeout_ms for events, service paths, deliver completions.  Returns the number
 * of completions delivered. */
unsigned ub_mpath_poll(struct ub_mpath *m, int timeout_ms);
void ub_mpath_reset_stats(struct ub_mpath *m);
void ub_mpath_event(struct ub_mpath *m, int path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *ub_mp_state_str(enum ub_mp_state s);
/* Does target (opened once, then closed) reach the same LU (VPD 83) as the paths?  false with
 * the reason in err. */
bool ub_mpath_same_lu(struct ub_mpath *m, const char *target, char *err, size_t errlen);
/* Test hook and operator action: fail a path now as if its connection dropped. */
void ub_mpath_fail_path(struct ub_mpath *m, unsigned idx, const char *why);

#endif
