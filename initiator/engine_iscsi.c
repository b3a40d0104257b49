/* iSCSI engine over libiscsi's asynchronous API.  One iscsi_context (session, one
 * connection) per path; the tester's event loop polls iscsi_get_fd()/iscsi_which_events() and
 * calls iscsi_service().  libiscsi's own reconnect-and-replay is switched off: a failed path
 * hands its commands back (UB_IO_PATH_ERROR) so multipath can retry them on another path,
 * and reconnecting is a fresh context started by the caller.
 *
 * iser:// paths use libiscsi's iSER transport (iscsi_init_transport(ISER_TRANSPORT)).  What
 * Debian's libiscsi 1.19 does there, and what this engine does about it:
 *  - connecting blocks: rdma_resolve_addr/route/connect run on a thread of libiscsi's while
 *    iscsi_connect_async() waits on a semaphore, then calls our callback before returning;
 *  - the fd is the CQ's completion channel and iscsi_service() accepts exactly POLLIN
 *    ("revents is not POLLIN" otherwise), so timer ticks never reach libiscsi;
 *  - there are no command timeouts (TCP's timeout scan is not run) and a target's disconnect
 *    is not reported: a path with commands outstanding and no completion for io_timeout_s is
 *    failed here;
 *  - every PDU is posted at once, whatever the target's MaxCmdSN: commands beyond
 *    ISER_WINDOW in flight wait in this engine;
 *  - one command moves at most UB_ISER_MAX_XFER bytes (256 KiB);
 *  - no immediate or unsolicited data is ever sent (ImmediateData=No, InitialR2T=Yes). */
#include "initiator/engine.h"
#include "initiator/iscsi_url.h"
#include "initiator/tcp_batch.h"
#include "initiator/scsi_info.h"

#include <errno.h>
#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Connection setup runs as a chain of callbacks: TCP connect -> login -> TEST UNIT READY
 * (absorbing the UNIT ATTENTIONs a fresh nexus reports) -> READ CAPACITY(16) -> up. */
enum phase { PH_IDLE, PH_TCP, PH_LOGIN, PH_TUR, PH_READCAP, PH_UP };

/* Commands in flight on one iSER path: the smallest CmdSN window we know of (utgtd's
 * QueuedCommands default is 32; LIO offers 64, tgtd 128). */
#define ISER_WINDOW 32

struct iscsi_path {
	struct ub_iscsi_url url;
	char shown[600]; /* URL without the secret */
	char initiator[224];
	struct ub_eng_opts o;
	struct iscsi_context *ctx;
	enum phase phase;
	bool failed; /* set in libiscsi callbacks, acted on once iscsi_service() returned */
	char err[1400];
	uint64_t deadline;
	uint32_t block_size;
	uint64_t nblocks;
	unsigned inflight;
	uint8_t readcap[32];
	struct ub_io setup_io; /* TEST UNIT READY / READ CAPACITY(16) while connecting */
	struct iovec setup_iov;
	unsigned tur_tries;
	/* iSER: commands beyond ISER_WINDOW, linked through eng_task; last completion time */
	struct ub_io *wait_head, *wait_tail;
	unsigned nwait;
	uint64_t last_progress_ns;
	/* NOP-Out pings (TCP only): anything received since last_rx_ns shows the path alive */
	uint64_t last_rx_ns, ping_sent_ns;
	bool ping_out;
	unsigned unsent; /* commands handed to libiscsi since service() last wrote */
};

#define P(ep) ((struct iscsi_path *)(ep))

static void set_err(struct iscsi_path *p, const char *fmt, const char *detail)
{
	snprintf(p->err, sizeof(p->err), fmt, p->url.portal, detail ? detail : "");
}

/* libiscsi words a rejected login "Failed to log in to target. Status: <text>(<n>)" with
 * n = class << 8 | detail; turn that into the iSCSI status the user can look up. */
static bool login_failure(struct iscsi_path *p, const char *lib)
{
	const char *s = strstr(lib, "Status: ");
	const char *paren;
	int st;

	if (!s || !strstr(lib, "log in"))
		return false;
	paren = strrchr(s, '(');
	if (!paren || sscanf(paren, "(%d)", &st) != 1)
		return false;
	snprintf(p->err, sizeof(p->err),
		 "login to %s at %s rejected: status class 0x%02x (%s), detail 0x%02x: %s",
		 p->url.target, p->url.portal, (st >> 8) & 0xff, ub_login_class_str(st >> 8),
		 st & 0xff, ub_login_status_str(st));
	return true;
}

/* libiscsi stacks its layers' prefixes ("Failed to connect to iSCSI socket. iscsi_service:
 * socket error Connection refused(111)."); keep the part that says what happened. */
static const char *lib_reason(const char *lib)
{
	static const char *const prefixes[] = {"Failed to connect to iSCSI socket. ",
					       "iscsi_service: ", "socket error "};
	bool again = true;

	while (again) {
		again = false;
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
			if (!strncmp(lib, prefixes[i], strlen(prefixes[i]))) {
				lib += strlen(prefixes[i]);
				again = true;
			}
	}
	return lib;
}

static void fail(struct iscsi_path *p, const char *why)
{
	if (p->failed)
		return;
	p->failed = true;
	if (why)
		snprintf(p->err, sizeof(p->err), "%s", why);
}

/* Abandon the session's TCP connection with a reset, not a FIN.  A path is given up while
 * its socket may still hold unsent write PDUs; closed gracefully, the kernel keeps
 * retransmitting them, and when the link comes back the target executes those writes
 * after the multipath layer has retried them elsewhere and newer data has landed: a lost
 * write.  SO_LINGER {1, 0} makes close() discard the send queue and send RST, so nothing
 * of the old session reaches the target after the failover. */
static void abort_connection(struct iscsi_context *ctx)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	int fd = iscsi_get_fd(ctx);

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

static void teardown(struct iscsi_path *p, bool abortive)
{
	struct iscsi_context *ctx = p->ctx;
	struct ub_io *io;

	if (!ctx)
		return;
	/* over iSER the queue-pair is destroyed with the context: nothing is left to send */
	if (abortive && !p->url.iser)
		abort_connection(ctx);
	/* Destroying the context calls back every outstanding task with CANCELLED, which
	 * io_cb turns into UB_IO_PATH_ERROR; p->ctx is cleared first so nothing new is
	 * queued on the dying session from those callbacks. */
	p->ctx = NULL;
	p->phase = PH_IDLE;
	iscsi_destroy_context(ctx);
	/* iSER commands that never left this engine fail the same way. */
	while ((io = p->wait_head)) {
		p->wait_head = io->eng_task;
		p->nwait--;
		io->eng_task = NULL;
		io->result = UB_IO_PATH_ERROR;
		io->done(io);
	}
	p->wait_tail = NULL;
}

/* What libiscsi 1.19's iSER transport cannot do, refused before anything connects. */
static bool iser_opts_ok(const struct ub_iscsi_url *u, const struct ub_eng_opts *o, char *err,
			 size_t errlen)
{
	if (u->user[0]) {
		/* Seen in the guest against LIO's ib_isert and utgtd alike: after the CHAP
		 * challenge the next login response fails libiscsi's own receive (work request
		 * status 2, local QP operation error) and the login dies with "CQ handle Failed". */
		snprintf(err, errlen,
			 "CHAP is not available over iser://: libiscsi 1.19's iSER transport fails "
			 "the login after the CHAP challenge (against any target); use iscsi:// or "
			 "a kernel initiator for CHAP over iSER");
		return false;
	}
	if (o->max_io_bytes > UB_ISER_MAX_XFER) {
		snprintf(
		    err, errlen,
		    "bs=%llu is too large for iSER through libiscsi 1.19: its iSER transport "
		    "moves at most %u bytes (256 KiB) per command (it says \"supports messages "
		    "smaller than 512k\", but its buffers are 256 KiB); use bs<=256k",
		    (unsigned long long)o->max_io_bytes, UB_ISER_MAX_XFER);
		return false;
	}
	if (o->header_digest > 0) {
		snprintf(err, errlen,
			 "digests do not exist on iSER (RFC 7145): drop --header-digest");
		return false;
	}
	if (o->immediate_data > 0 || o->initial_r2t == 0) {
		snprintf(err, errlen,
			 "libiscsi 1.19's iSER transport sends no immediate or unsolicited data: "
			 "--immediate-data=1 and --initial-r2t=0 are not available on iser://");
		return false;
	}
	return true;
}

static struct ub_epath *isc_create(const char *target, const struct ub_eng_opts *o, char *err,
				   size_t errlen)
{
	struct iscsi_path *p;

	if (o->data_digest > 0) {
		snprintf(err, errlen,
			 "data digests are not available: libiscsi 1.19 always offers "
			 "DataDigest=None");
		return NULL;
	}
	if (o->max_recv_dsl) {
		snprintf(err, errlen,
			 "MaxRecvDataSegmentLength cannot be set: libiscsi 1.19 has no setter "
			 "(it always offers 262144)");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (!ub_iscsi_url_parse(target, &p->url, err, errlen)) {
		free(p);
		return NULL;
	}
	if (p->url.iser && !iser_opts_ok(&p->url, o, err, errlen)) {
		free(p);
		return NULL;
	}
	ub_iscsi_url_redact(target, p->shown, sizeof(p->shown));
	snprintf(p->initiator, sizeof(p->initiator), "%s",
		 o->initiator_name && *o->initiator_name ? o->initiator_name
							 : "iqn.2024-01.org.utgt:bench");
	p->o = *o;
	p->o.initiator_name = p->initiator;
	return (struct ub_epath *)p;
}

static void isc_destroy(struct ub_epath *ep)
{
	struct iscsi_path *p = P(ep);

	/* an idle, healthy session at the end of a run closes gracefully */
	teardown(p, p->failed || (p->ctx && iscsi_queue_length(p->ctx) > 0));
	free(ep);
}

static int send_io(struct iscsi_path *p, struct ub_io *io);
static void setup_done(struct ub_io *io);

static void setup_cmd(struct iscsi_path *p, enum phase ph)
{
	struct ub_io *io = &p->setup_io;

	memset(io, 0, sizeof(*io));
	p->phase = ph;
	if (ph == PH_TUR) {
		io->cdb_len = 6; /* TEST UNIT READY: all zero */
	} else {
		ub_cdb_readcap16(io->cdb, sizeof(p->readcap));
		io->cdb_len = 16;
		io->xfer_len = sizeof(p->readcap);
		p->setup_iov.iov_base = p->readcap;
		p->setup_iov.iov_len = sizeof(p->readcap);
		io->iov = &p->setup_iov;
		io->iovcnt = 1;
	}
	io->done = setup_done;
	io->owner = p;
	if (send_io(p, io) < 0)
		fail(p, ph == PH_TUR ? "cannot send TEST UNIT READY" : "cannot send READ CAPACITY");
}

static void setup_done(struct ub_io *io)
{
	struct iscsi_path *p = io->owner;
	const uint8_t *b = p->readcap;
	uint64_t last = 0;

	if (io->result == UB_IO_PATH_ERROR) {
		fail(p, "connection lost while setting up");
		return;
	}
	if (p->phase == PH_TUR) {
		/* A new nexus starts with UNIT ATTENTIONs (power on, reset...): consume them. */
		if (io->result == UB_IO_SCSI_ERROR && io->sense_key == 6 && ++p->tur_tries < 16) {
			setup_cmd(p, PH_TUR);
			return;
		}
		if (io->result == UB_IO_SCSI_ERROR && io->sense_key != 6) {
			snprintf(p->err, sizeof(p->err),
				 "LUN %d at %s refused TEST UNIT READY: %s, ASC/ASCQ %02x/%02x%s",
				 p->url.lun, p->url.portal, ub_sense_key_str(io->sense_key),
				 io->asc, io->ascq,
				 io->asc == 0x25   ? " (logical unit not supported)"
				 : io->asc == 0x04 ? " (logical unit not ready)"
						   : "");
			p->failed = true;
			return;
		}
		setup_cmd(p, PH_READCAP);
		return;
	}
	if (io->result != UB_IO_OK) {
		snprintf(p->err, sizeof(p->err),
			 "READ CAPACITY(16) on %s LUN %d failed: %s, ASC/ASCQ %02x/%02x",
			 p->url.portal, p->url.lun, ub_sense_key_str(io->sense_key), io->asc,
			 io->ascq);
		p->failed = true;
		return;
	}
	for (int i = 0; i < 8; i++)
		last = last << 8 | b[i];
	p->nblocks = last + 1;
	p->block_size = (uint32_t)b[8] << 24 | (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11];
	if (!p->block_size || p->block_size > (1u << 20)) {
		snprintf(p->err, sizeof(p->err), "READ CAPACITY(16): implausible block size %u",
			 p->block_size);
		p->failed = true;
		return;
	}
	p->phase = PH_UP;
	p->last_rx_ns = ub_now_ns();
	p->ping_out = false;
}

static void login_cb(struct iscsi_context *ctx, int status, void *data, void *priv)
{
	struct iscsi_path *p = priv;

	(void)data;
	if (ctx != p->ctx)
		return;
	if (status != SCSI_STATUS_GOOD) {
		const char *lib = iscsi_get_error(ctx);
		if (!login_failure(p, lib))
			snprintf(p->err, sizeof(p->err), "login to %s at %s failed: %s",
				 p->url.target, p->url.portal, lib_reason(lib));
		p->failed = true;
		return;
	}
	p->tur_tries = 0;
	setup_cmd(p, PH_TUR);
}

static void tcp_cb(struct iscsi_context *ctx, int status, void *data, void *priv)
{
	struct iscsi_path *p = priv;

	(void)data;
	if (ctx != p->ctx)
		return;
	if (status != SCSI_STATUS_GOOD) {
		if (p->phase == PH_TCP)
			snprintf(p->err, sizeof(p->err), "cannot connect to %s (target %s): %s",
				 p->url.portal, p->url.target, lib_reason(iscsi_get_error(ctx)));
		else
			fail(p, "connection lost");
		p->failed = true;
		return;
	}
	p->phase = PH_LOGIN;
	if (iscsi_login_async(ctx, login_cb, p) != 0) {
		snprintf(p->err, sizeof(p->err), "cannot start login to %s: %s", p->url.portal,
			 iscsi_get_error(ctx));
		p->failed = true;
	}
}

/* libiscsi's iSER connect errors say which step failed, not what it means. */
static void iser_connect_error(struct iscsi_path *p, const char *lib_raw)
{
	char lib[400];
	const char *why;
	size_t n;

	snprintf(lib, sizeof(lib), "%s", lib_raw);
	n = strlen(lib);
	while (n && (lib[n - 1] == '\n' || lib[n - 1] == ' '))
		lib[--n] = '\0'; /* libiscsi's iSER errors end in a newline */
	why = lib;

	if (strstr(lib, "Event Channel") || strstr(lib, "channel_id"))
		why = "no RDMA CM here (/dev/infiniband/rdma_cm: load rdma_ucm, and an RDMA device "
		      "such as soft-RoCE: rdma link add rxe0 type rxe netdev eth0)";
	else if (strstr(lib, "Conn Error") || strstr(lib, "resolve address"))
		why = "RDMA CM could not connect (no iSER listener on that address and port, or "
		      "no RDMA device reaches it)";
	else if (strstr(lib, "disconnected"))
		why = "the target closed the RDMA connection while it was being set up";
	snprintf(p->err, sizeof(p->err), "no iSER connection to %s (target %s): %s [libiscsi: %s]",
		 p->url.portal, p->url.target, why, lib);
}

static int isc_connect(struct ub_epath *ep)
{
	static unsigned seq;
	struct iscsi_path *p = P(ep);
	struct iscsi_context *ctx;
	const struct ub_eng_opts *o = &p->o;

	teardown(p, true);
	p->failed = false;
	p->err[0] = '\0';
	ctx = iscsi_create_context(p->initiator);
	if (!ctx) {
		set_err(p, "%s: cannot create iSCSI context%s", NULL);
		return -1;
	}
	if (p->url.iser && iscsi_init_transport(ctx, ISER_TRANSPORT) != 0) {
		snprintf(p->err, sizeof(p->err), "%s: libiscsi cannot use iSER here: %s",
			 p->url.portal, iscsi_get_error(ctx));
		iscsi_destroy_context(ctx);
		return -1;
	}
	/* Every session gets its own ISID: two sessions from one initiator with the same ISID
	 * would reinstate (kill) each other at the target. */
	seq++;
	iscsi_set_isid_random(ctx, ((unsigned)getpid() * 2654435761u ^ seq * 40503u) & 0xffffff,
			      seq & 0xffff);
	iscsi_set_session_type(ctx, ISCSI_SESSION_NORMAL);
	iscsi_set_targetname(ctx, p->url.target);
	if (o->header_digest >= 0)
		iscsi_set_header_digest(ctx, (enum iscsi_header_digest)o->header_digest);
	if (p->url.user[0])
		iscsi_set_initiator_username_pwd(ctx, p->url.user, p->url.secret);
	if (p->url.iser) {
		/* its iSER transport never sends the data these would let it send */
		iscsi_set_initial_r2t(ctx, ISCSI_INITIAL_R2T_YES);
		iscsi_set_immediate_data(ctx, ISCSI_IMMEDIATE_DATA_NO);
	} else {
		if (o->initial_r2t >= 0)
			iscsi_set_initial_r2t(ctx, o->initial_r2t ? ISCSI_INITIAL_R2T_YES
								  : ISCSI_INITIAL_R2T_NO);
		if (o->immediate_data >= 0)
			iscsi_set_immediate_data(ctx, o->immediate_data ? ISCSI_IMMEDIATE_DATA_YES
									: ISCSI_IMMEDIATE_DATA_NO);
	}
	iscsi_set_noautoreconnect(ctx, 1);
	if (o->io_timeout_s)
		iscsi_set_timeout(ctx, (int)o->io_timeout_s);
	p->ctx = ctx;
	p->phase = PH_TCP;
	p->deadline = ub_now_ns() +
		      (uint64_t)(o->connect_timeout_ms ? o->connect_timeout_ms : 5000) * 1000000ull;
	/* Not iscsi_full_connect_async(): its bookkeeping leaks when a context is destroyed
	 * mid-login (a connect timeout), and its TEST UNIT READY is one we do ourselves.
	 * Over iSER this call blocks until RDMA CM connected or failed, and tcp_cb (which
	 * starts the login) has run when it returns. */
	if (iscsi_connect_async(ctx, p->url.portal, tcp_cb, p) != 0) {
		if (p->url.iser)
			iser_connect_error(p, iscsi_get_error(ctx));
		else
			snprintf(p->err, sizeof(p->err), "cannot connect to %s: %s", p->url.portal,
				 iscsi_get_error(ctx));
		teardown(p, true);
		return -1;
	}
	if (p->url.iser)
		return p->failed ? (teardown(p, true), -1) : 0;
	if (o->nodelay >= 0) {
		/* libiscsi always sets TCP_NODELAY; --nodelay=0 turns Nagle back on to measure
		 * what it costs. */
		int v = o->nodelay;
		setsockopt(iscsi_get_fd(ctx), IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v));
	}
	return 0;
}

static void isc_disconnect(struct ub_epath *ep, const char *why)
{
	struct iscsi_path *p = P(ep);

	if (why && p->ctx)
		snprintf(p->err, sizeof(p->err), "%s", why);
	teardown(p, true);
}

static enum ub_path_state isc_state(struct ub_epath *ep)
{
	struct iscsi_path *p = P(ep);

	if (!p->ctx)
		return UB_PS_DOWN;
	return p->phase == PH_UP ? UB_PS_UP : UB_PS_CONNECTING;
}

static const char *isc_last_error(struct ub_epath *ep)
{
	return P(ep)->err;
}

static int isc_pollfd(struct ub_epath *ep, struct pollfd *pfd)
{
	struct iscsi_path *p = P(ep);
	int ev;

	if (!p->ctx)
		return 0;
	if (p->url.iser) {
		/* the CQ's completion channel: POLLIN only */
		pfd->fd = iscsi_get_fd(p->ctx);
		pfd->events = POLLIN;
		pfd->revents = 0;
		return pfd->fd >= 0;
	}
	ev = iscsi_which_events(p->ctx);
	if (!ev)
		return 0;
	pfd->fd = iscsi_get_fd(p->ctx);
	pfd->events = (short)(ev | (p->phase == PH_TCP ? 0 : POLLRDHUP));
	pfd->revents = 0;
	return pfd->fd >= 0;
}

static void iser_service(struct iscsi_path *p, short revents)
{
	uint64_t now = ub_now_ns();

	if (p->phase != PH_UP && now > p->deadline && !p->failed) {
		snprintf(p->err, sizeof(p->err),
			 "cannot log in to %s over iSER (target %s): timed out", p->url.portal,
			 p->url.target);
		p->failed = true;
	}
	if (!p->failed && p->inflight && p->o.io_timeout_s &&
	    now - p->last_progress_ns > (uint64_t)p->o.io_timeout_s * 1000000000ull) {
		snprintf(p->err, sizeof(p->err),
			 "%s: no completion over iSER for %u s with %u command(s) outstanding "
			 "(libiscsi's iSER transport reports neither timeouts nor a target's "
			 "disconnect)",
			 p->url.portal, p->o.io_timeout_s, p->inflight);
		p->failed = true;
	}
	if (!p->failed && (revents & (POLLERR | POLLHUP | POLLNVAL)))
		fail(p, "iSER completion channel error");
	if (!p->failed && (revents & POLLIN) && iscsi_service(p->ctx, POLLIN) < 0 && !p->failed) {
		if (!login_failure(p, iscsi_get_error(p->ctx)))
			snprintf(p->err, sizeof(p->err), "%s: %s", p->url.portal,
				 iscsi_get_error(p->ctx));
		p->failed = true;
	}
	if (p->failed)
		teardown(p, true);
}

static void nop_in(struct iscsi_context *ctx, int status, void *data, void *priv)
{
	struct iscsi_path *p = priv;

	(void)data;
	if (ctx != p->ctx) /* the context is being destroyed */
		return;
	p->ping_out = false;
	if (status == SCSI_STATUS_GOOD)
		p->last_rx_ns = ub_now_ns();
}

/* A path whose packets vanish (a cut link, a dropping firewall) sends no RST: without pings
 * it is noticed only when a command times out, and an idle path not at all.  Ping when
 * nothing came back for nop_interval; no NOP-In within nop_timeout fails the path. */
static void ping(struct iscsi_path *p, uint64_t now)
{
	const uint64_t ms = 1000000ull;

	if (!p->o.nop_interval_ms || p->phase != PH_UP || p->failed || p->url.iser)
		return;
	if (!p->ping_out) {
		if (now - p->last_rx_ns < p->o.nop_interval_ms * ms)
			return;
		if (iscsi_nop_out_async(p->ctx, nop_in, NULL, 0, p) == 0) {
			p->ping_out = true;
			p->ping_sent_ns = now;
		}
		return;
	}
	if (now - p->ping_sent_ns < p->o.nop_timeout_ms * ms)
		return;
	/* An answer may be waiting unread after this process was descheduled: read first. */
	{
		struct pollfd pfd = {.fd = iscsi_get_fd(p->ctx), .events = POLLIN};
		if (poll(&pfd, 1, 0) > 0 && iscsi_service(p->ctx, POLLIN) < 0)
			fail(p, iscsi_get_error(p->ctx));
	}
	if (p->ping_out && !p->failed) {
		snprintf(p->err, sizeof(p->err),
			 "%s: no NOP-In answer to a NOP-Out ping within %u ms (nothing received "
			 "for %.1f s): the path is silent",
			 p->url.portal, p->o.nop_timeout_ms,
			 (double)(now - p->last_rx_ns) / 1e9);
		p->failed = true;
	}
}

static void isc_service(struct ub_epath *ep, short revents)
{
	struct iscsi_path *p = P(ep);
	bool corked;
	int fd;

	if (!p->ctx)
		return;
	if (p->url.iser) {
		iser_service(p, revents);
		return;
	}
	if (p->phase != PH_UP && ub_now_ns() > p->deadline && !p->failed) {
		snprintf(p->err, sizeof(p->err), "cannot connect to %s (target %s): timed out",
			 p->url.portal, p->url.target);
		p->failed = true;
	}
	/* libiscsi writes the queued PDUs one send() each: cork the burst (tcp_batch.c). */
	fd = iscsi_get_fd(p->ctx);
	corked = !p->failed && (revents & POLLOUT) && ub_tcp_batch_begin(fd, p->unsent);
	if (revents & POLLOUT)
		p->unsent = 0;
	if (!p->failed && iscsi_service(p->ctx, revents & ~POLLRDHUP) < 0 && !p->failed) {
		if (!login_failure(p, iscsi_get_error(p->ctx)))
			snprintf(p->err, sizeof(p->err), "%s: %s", p->url.portal,
				 iscsi_get_error(p->ctx));
		p->failed = true;
	}
	if (p->ctx)
		ub_tcp_batch_end(fd, corked);
	if (!p->failed && p->ctx && (revents & (POLLRDHUP | POLLHUP | POLLERR)))
		fail(p, "connection closed by the target");
	if (!p->failed && p->ctx)
		ping(p, ub_now_ns());
	if (p->failed)
		teardown(p, true);
}

static void iser_pump(struct iscsi_path *p);

static void io_cb(struct iscsi_context *ctx, int status, void *data, void *priv)
{
	struct ub_io *io = priv;
	struct iscsi_path *p = P(io->eng_path);
	struct scsi_task *task = io->eng_task;

	(void)ctx;
	(void)data;
	p->inflight--;
	p->last_progress_ns = p->last_rx_ns = ub_now_ns();
	io->residual = 0;
	switch (status) {
	case SCSI_STATUS_GOOD:
		io->result = UB_IO_OK;
		if (task->residual_status == SCSI_RESIDUAL_UNDERFLOW)
			io->residual = (uint32_t)task->residual;
		if (!io->cdb_len && io->residual) {
			/* A data command that moved fewer bytes than asked is not a success. */
			io->result = UB_IO_SCSI_ERROR;
			io->status = 0;
		}
		break;
	case SCSI_STATUS_CHECK_CONDITION:
		io->result = UB_IO_SCSI_ERROR;
		io->status = SCSI_STATUS_CHECK_CONDITION;
		io->sense_key = (uint8_t)task->sense.key;
		io->asc = (uint8_t)(task->sense.ascq >> 8);
		io->ascq = (uint8_t)task->sense.ascq;
		break;
	case SCSI_STATUS_CANCELLED:
	case SCSI_STATUS_ERROR:
	case SCSI_STATUS_TIMEOUT:
		io->result = UB_IO_PATH_ERROR;
		if (p->ctx)
			fail(p, status == SCSI_STATUS_TIMEOUT ? "command timed out"
							      : "connection failed");
		break;
	default:
		io->result = UB_IO_SCSI_ERROR;
		io->status = (uint8_t)status;
		io->sense_key = io->asc = io->ascq = 0;
		break;
	}
	scsi_free_scsi_task(task);
	io->eng_task = NULL;
	io->done(io);
	if (p->url.iser)
		iser_pump(p);
}

static int send_now(struct iscsi_path *p, struct ub_io *io);

/* iSER: start waiting commands while the window has room (never from inside submit). */
static void iser_pump(struct iscsi_path *p)
{
	struct ub_io *io;

	while (p->ctx && !p->failed && p->inflight < ISER_WINDOW && (io = p->wait_head)) {
		p->wait_head = io->eng_task;
		p->nwait--;
		if (!p->wait_head)
			p->wait_tail = NULL;
		io->eng_task = NULL;
		if (send_now(p, io) < 0) {
			io->result = UB_IO_PATH_ERROR;
			io->done(io);
		}
	}
}

static int send_io(struct iscsi_path *p, struct ub_io *io)
{
	if (p->url.iser && (p->inflight >= ISER_WINDOW || p->wait_head)) {
		io->eng_path = (struct ub_epath *)p;
		io->eng_task = NULL;
		if (p->wait_tail)
			p->wait_tail->eng_task = io;
		else
			p->wait_head = io;
		p->wait_tail = io;
		p->nwait++;
		return 0;
	}
	return send_now(p, io);
}

static int send_now(struct iscsi_path *p, struct ub_io *io)
{
	struct scsi_task *task;
	uint8_t cdb[16];

	if (io->cdb_len) {
		task = scsi_create_task(io->cdb_len, io->cdb,
					!io->xfer_len ? SCSI_XFER_NONE
					: io->write   ? SCSI_XFER_WRITE
						      : SCSI_XFER_READ,
					(int)io->xfer_len);
	} else {
		ub_cdb_rw16(cdb, io->write, io->lba, io->nblocks);
		cdb[1] |= io->fua ? 0x08 : 0;
		task = scsi_create_task(16, cdb, io->write ? SCSI_XFER_WRITE : SCSI_XFER_READ,
					(int)(io->nblocks * p->block_size));
	}
	if (!task)
		return -ENOMEM;
	if (io->write)
		scsi_task_set_iov_out(task, (struct scsi_iovec *)io->iov, io->iovcnt);
	else if (io->iovcnt)
		scsi_task_set_iov_in(task, (struct scsi_iovec *)io->iov, io->iovcnt);
	io->eng_path = (struct ub_epath *)p;
	io->eng_task = task;
	if (iscsi_scsi_command_async(p->ctx, p->url.lun, task, io_cb, NULL, io) != 0) {
		scsi_free_scsi_task(task);
		io->eng_task = NULL;
		fail(p, iscsi_get_error(p->ctx));
		return -EIO;
	}
	if (!p->inflight++)
		p->last_progress_ns = ub_now_ns(); /* the stall clock starts with the first */
	p->unsent++;
	return 0;
}

static int isc_submit(struct ub_epath *ep, struct ub_io *io)
{
	struct iscsi_path *p = P(ep);

	if (!p->ctx || p->phase != PH_UP || p->failed)
		return -EAGAIN;
	return send_io(p, io);
}

static void isc_geometry(struct ub_epath *ep, uint32_t *bs, uint64_t *nblocks)
{
	*bs = P(ep)->block_size;
	*nblocks = P(ep)->nblocks;
}

static unsigned isc_inflight(struct ub_epath *ep)
{
	return P(ep)->inflight + P(ep)->nwait;
}

const struct ub_engine ub_engine_iscsi = {
    .name = "iscsi",
    .create = isc_create,
    .destroy = isc_destroy,
    .connect = isc_connect,
    .disconnect = isc_disconnect,
    .state = isc_state,
    .last_error = isc_last_error,
    .pollfd = isc_pollfd,
    .service = isc_service,
    .submit = isc_submit,
    .geometry = isc_geometry,
    .inflight = isc_inflight,
};
