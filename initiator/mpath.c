/* Multipath core: path choice, failover, background reconnect, ALUA tracking. */
#include "initiator/mpath.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>

#include "initiator/iscsi_url.h"

#define SENSE_NOT_READY	      0x2
#define SENSE_UNIT_ATTENTION  0x6
#define SENSE_ABORTED_COMMAND 0xb
#define STATUS_BUSY	      0x08
#define STATUS_TASK_SET_FULL  0x28
#define STATUS_TASK_ABORTED   0x40
#define MS		      1000000ull

const char *ub_mp_state_str(enum ub_mp_state s)
{
	switch (s) {
	case UB_MP_UP:
		return "up";
	case UB_MP_DOWN:
		return "down";
	case UB_MP_CONNECTING:
		return "connecting";
	case UB_MP_CHECKING:
		return "checking";
	case UB_MP_DEAD:
		return "dead";
	}
	return "?";
}

void ub_mpath_event(struct ub_mpath *m, int path, const char *fmt, ...)
{
	va_list ap;
	struct ub_mpath_event *e;

	if (m->nev == m->evcap) {
		unsigned cap = m->evcap ? m->evcap * 2 : 16;
		struct ub_mpath_event *ne = realloc(m->ev, cap * sizeof(*ne));
		if (!ne)
			return;
		m->ev = ne;
		m->evcap = cap;
	}
	e = &m->ev[m->nev++];
	e->t_ns = m->t0 ? ub_now_ns() - m->t0 : 0;
	e->path = path;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

static void list_push(struct ub_mio **head, struct ub_mio **tail, struct ub_mio *mio)
{
	mio->next = NULL;
	if (*tail)
		(*tail)->next = mio;
	else
		*head = mio;
	*tail = mio;
}

static struct ub_mio *list_pop(struct ub_mio **head, struct ub_mio **tail)
{
	struct ub_mio *mio = *head;

	if (mio) {
		*head = mio->next;
		if (!*head)
			*tail = NULL;
		mio->next = NULL;
	}
	return mio;
}

/* Engine completion: only queue; all decisions happen in ub_mpath_poll(), outside any
 * engine callback, so failover may disconnect and resubmit freely.  The path's inflight
 * count drops when the completion is processed, so a failure reports how many commands
 * it caught in flight. */
static void eng_done(struct ub_io *io)
{
	struct ub_mio *mio = io->owner;
	struct ub_mpath *m = mio->mp;

	mio->done_ns = m->reap_ns ? m->reap_ns : ub_now_ns();
	list_push(&m->done_head, &m->done_tail, mio);
}

static void schedule_reconnect(struct ub_mpath *m, struct ub_path *p)
{
	if (!p->backoff_ms)
		p->backoff_ms = m->cfg.reconnect_delay_ms ? m->cfg.reconnect_delay_ms : 500;
	p->next_try_ns = ub_now_ns() + p->backoff_ms * MS;
}

void ub_mpath_fail_path(struct ub_mpath *m, unsigned idx, const char *why)
{
	struct ub_path *p = &m->path[idx];
	unsigned lost = p->inflight;

	if (p->state == UB_MP_DOWN || p->state == UB_MP_DEAD)
		return;
	if (p->state == UB_MP_UP) {
		p->st.failures++;
		m->failovers++;
		p->down_since_ns = ub_now_ns();
		ub_mpath_event(m, (int)idx,
			       "path %u failed: %s (%u commands in flight move to other "
			       "paths)",
			       idx, why, lost);
	}
	p->state = UB_MP_DOWN;
	p->backoff_ms = 0;
	p->attempts = 0;
	/* Completes the path's outstanding commands with UB_IO_PATH_ERROR into the done list. */
	m->eng->disconnect(p->ep, why);
	schedule_reconnect(m, p);
}

static int pick(struct ub_mpath *m)
{
	struct ub_path_view v[UB_MAX_PATHS];

	for (unsigned i = 0; i < m->n; i++) {
		v[i].usable = m->path[i].state == UB_MP_UP;
		v[i].alua = m->path[i].alua;
		v[i].inflight = m->path[i].inflight;
	}
	return ub_policy_pick(m->cfg.policy, m->cfg.rr_iops, &m->rr, v, m->n);
}

static void deliver(struct ub_mpath *m, struct ub_mio *mio)
{
	m->outstanding--;
	mio->done(mio);
}

static void dispatch(struct ub_mpath *m, struct ub_mio *mio)
{
	int idx = pick(m);
	struct ub_path *p;
	int rc;

	if (idx < 0) {
		if (!mio->wait_since_ns)
			mio->wait_since_ns = ub_now_ns();
		list_push(&m->pend_head, &m->pend_tail, mio);
		return;
	}
	p = &m->path[idx];
	mio->path = idx;
	mio->wait_since_ns = 0;
	mio->io.done = eng_done;
	mio->io.owner = mio;
	mio->path_submit_ns = ub_now_ns();
	rc = m->eng->submit(p->ep, &mio->io);
	if (rc < 0) {
		char why[300];
		snprintf(why, sizeof(why), "submit refused: %s",
			 m->eng->last_error(p->ep)[0] ? m->eng->last_error(p->ep) : strerror(-rc));
		ub_mpath_fail_path(m, (unsigned)idx, why);
		list_push(&m->pend_head, &m->pend_tail, mio);
		return;
	}
	p->inflight++;
}

/* Flushes and trims go to engines without native support as SYNCHRONIZE CACHE(16) and UNMAP. */
static void ops_as_cdbs(struct ub_mpath *m, struct ub_mio *mio)
{
	struct ub_io *io = &mio->io;

	if (m->eng->native_ops || io->op == UB_OP_RW || io->cdb_len)
		return;
	if (io->op == UB_OP_FLUSH) {
		ub_cdb_sync16(io->cdb, 0, 0);
		io->cdb_len = 16;
		io->xfer_len = 0;
		io->write = false;
		io->iovcnt = 0;
		return;
	}
	ub_cdb_unmap(io->cdb, mio->param, io->lba, io->nblocks);
	io->cdb_len = 10;
	mio->param_iov.iov_base = mio->param;
	mio->param_iov.iov_len = sizeof(mio->param);
	io->iov = &mio->param_iov;
	io->iovcnt = 1;
	io->xfer_len = sizeof(mio->param);
	io->write = true;
}

void ub_mpath_submit(struct ub_mpath *m, struct ub_mio *mio)
{
	ops_as_cdbs(m, mio);
	mio->mp = m;
	mio->tries = 0;
	mio->path = -1;
	mio->wait_since_ns = 0;
	mio->not_before_ns = 0;
	mio->errmsg[0] = '\0';
	m->outstanding++;
	dispatch(m, mio);
}

static void fail_final(struct ub_mpath *m, struct ub_mio *mio, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_final(struct ub_mpath *m, struct ub_mio *mio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(mio->errmsg, sizeof(mio->errmsg), fmt, ap);
	va_end(ap);
	if (mio->io.result == UB_IO_OK)
		mio->io.result = UB_IO_PATH_ERROR;
	deliver(m, mio);
}

static void retry_later(struct ub_mpath *m, struct ub_mio *mio, unsigned delay_ms)
{
	mio->tries++;
	m->retries++;
	mio->not_before_ns = delay_ms ? ub_now_ns() + delay_ms * MS : 0;
	list_push(&m->pend_head, &m->pend_tail, mio);
}

static void set_alua(struct ub_mpath *m, unsigned idx, int state)
{
	if (m->path[idx].alua != state) {
		ub_mpath_event(m, (int)idx, "path %u ALUA %s -> %s", idx,
			       ub_alua_state_str(m->path[idx].alua), ub_alua_state_str(state));
		m->path[idx].alua = state;
	}
}

static void completed(struct ub_mpath *m, struct ub_mio *mio)
{
	struct ub_io *io = &mio->io;
	struct ub_path *p = mio->path >= 0 ? &m->path[mio->path] : NULL;
	unsigned maxr = m->cfg.max_retries ? m->cfg.max_retries : 32;

	if (p && io->result == UB_IO_PATH_ERROR) {
		p->st.retried++;
		ub_mpath_fail_path(m, (unsigned)mio->path,
				   m->eng->last_error(p->ep)[0] ? m->eng->last_error(p->ep)
								: "connection failed");
	}
	if (p && p->inflight)
		p->inflight--;
	if (io->result == UB_IO_OK) {
		if (p && !io->cdb_len) {
			int d = io->write ? 1 : 0;
			p->st.ios[d]++;
			p->st.bytes[d] += (uint64_t)io->nblocks * m->block_size;
			p->st.lat_ns[d] += mio->done_ns - mio->path_submit_ns;
		}
		deliver(m, mio);
		return;
	}
	if (mio->tries >= maxr) {
		fail_final(m, mio, "gave up after %u retries (last: %s)", mio->tries,
			   io->result == UB_IO_PATH_ERROR ? "path error" : "SCSI error");
		return;
	}
	if (io->result == UB_IO_PATH_ERROR) {
		retry_later(m, mio, 0);
		return;
	}
	/* SCSI status: retry what a real multipath layer retries, fail the rest. */
	if (io->status == STATUS_BUSY || io->status == STATUS_TASK_SET_FULL ||
	    io->status == STATUS_TASK_ABORTED) {
		retry_later(m, mio, 5);
		return;
	}
	if (io->status == 2 && io->sense_key == SENSE_UNIT_ATTENTION) {
		if (io->asc == 0x2a && io->ascq == 0x06)
			m->rtpg_stale = true; /* ASYMMETRIC ACCESS STATE CHANGED */
		retry_later(m, mio, 0);
		return;
	}
	if (io->status == 2 && io->sense_key == SENSE_NOT_READY && io->asc == 0x04 &&
	    (io->ascq == 0x0a || io->ascq == 0x0b || io->ascq == 0x0c)) {
		/* ALUA: transitioning waits; standby/unavailable move to another port. */
		if (p && io->ascq != 0x0a)
			set_alua(m, (unsigned)mio->path,
				 io->ascq == 0x0b ? UB_ALUA_STANDBY : UB_ALUA_UNAVAILABLE);
		m->rtpg_stale = m->alua;
		retry_later(m, mio, io->ascq == 0x0a ? 100 : 0);
		return;
	}
	if (io->status == 2 && io->sense_key == SENSE_ABORTED_COMMAND) {
		retry_later(m, mio, 0);
		return;
	}
	if (io->sys_errno) /* the block engine: the kernel's own reason, as fio reports it */
		snprintf(mio->errmsg, sizeof(mio->errmsg), "%s (errno %d) via path %d",
			 strerror(io->sys_errno), io->sys_errno, mio->path);
	else if (io->status == 2)
		snprintf(mio->errmsg, sizeof(mio->errmsg),
			 "CHECK CONDITION %s ASC/ASCQ %02x/%02x via path %d",
			 ub_sense_key_str(io->sense_key), io->asc, io->ascq, mio->path);
	else if (io->residual)
		snprintf(mio->errmsg, sizeof(mio->errmsg),
			 "short transfer (%u bytes missing) via "
			 "path %d",
			 io->residual, mio->path);
	else
		snprintf(mio->errmsg, sizeof(mio->errmsg), "SCSI status 0x%02x via path %d",
			 io->status, mio->path);
	deliver(m, mio);
}

static void check_done(struct ub_io *io)
{
	((struct ub_path *)io->owner)->check_done = true;
}

static void start_check(struct ub_mpath *m, unsigned idx)
{
	struct ub_path *p = &m->path[idx];

	memset(&p->check, 0, sizeof(p->check));
	ub_cdb_inquiry_vpd(p->check.cdb, 0x83, sizeof(p->check_buf));
	p->check.cdb_len = 6;
	p->check.xfer_len = sizeof(p->check_buf);
	p->check_iov.iov_base = p->check_buf;
	p->check_iov.iov_len = sizeof(p->check_buf);
	p->check.iov = &p->check_iov;
	p->check.iovcnt = 1;
	p->check.done = check_done;
	p->check.owner = p;
	p->check_done = false;
	p->state = UB_MP_CHECKING;
	if (m->eng->submit(p->ep, &p->check) < 0) {
		p->state = UB_MP_DOWN;
		m->eng->disconnect(p->ep, "cannot send INQUIRY");
		schedule_reconnect(m, p);
	}
}

static void finish_check(struct ub_mpath *m, unsigned idx)
{
	struct ub_path *p = &m->path[idx];
	struct ub_lu_ident id;
	char err[128], a[160];

	p->check_done = false;
	if (p->check.result == UB_IO_OK &&
	    (!m->have_ident ||
	     (ub_vpd83_parse(p->check_buf, sizeof(p->check_buf) - p->check.residual, &id, err,
			     sizeof(err)) &&
	      ub_lu_ident_same(&id, &p->ident)))) {
		p->state = UB_MP_UP;
		p->st.reconnects++;
		p->backoff_ms = 0;
		ub_mpath_event(m, (int)idx, "path %u restored after %.3fs (%u attempts)", idx,
			       (double)(ub_now_ns() - p->down_since_ns) / 1e9, p->attempts);
		m->rtpg_stale = m->alua;
		return;
	}
	if (p->check.result == UB_IO_OK) {
		ub_lu_ident_str(&id, a, sizeof(a));
		p->state = UB_MP_DEAD;
		ub_mpath_event(m, (int)idx,
			       "path %u now reaches a different LU (%s, expected %s): "
			       "kept offline",
			       idx, a, m->ident_str);
		m->eng->disconnect(p->ep, "different LU");
		return;
	}
	p->state = UB_MP_DOWN;
	m->eng->disconnect(p->ep, "identity check failed");
	schedule_reconnect(m, p);
	ub_mpath_event(m, (int)idx,
		       "path %u reconnect attempt %u failed: identity check (next in %u ms)", idx,
		       p->attempts, p->backoff_ms);
}

static void rtpg_done(struct ub_io *io)
{
	struct ub_mpath *m = io->owner;

	m->rtpg_busy = false;
	if (io->result == UB_IO_OK) {
		struct ub_rtpg r;
		char err[128];
		if (ub_rtpg_parse(m->rtpg_buf, sizeof(m->rtpg_buf) - io->residual, &r, err,
				  sizeof(err)))
			for (unsigned i = 0; i < m->n; i++)
				set_alua(m, i, (int)ub_rtpg_state_for(&r, &m->path[i].ident));
	} else if (io->result == UB_IO_PATH_ERROR) {
		m->rtpg_stale = true; /* ask again through another path */
	}
}

static void refresh_rtpg(struct ub_mpath *m)
{
	int idx = -1;

	for (unsigned i = 0; i < m->n && idx < 0; i++)
		if (m->path[i].state == UB_MP_UP)
			idx = (int)i;
	if (idx < 0)
		return;
	memset(&m->rtpg_io, 0, sizeof(m->rtpg_io));
	ub_cdb_rtpg(m->rtpg_io.cdb, sizeof(m->rtpg_buf));
	m->rtpg_io.cdb_len = 12;
	m->rtpg_io.xfer_len = sizeof(m->rtpg_buf);
	m->rtpg_iov.iov_base = m->rtpg_buf;
	m->rtpg_iov.iov_len = sizeof(m->rtpg_buf);
	m->rtpg_io.iov = &m->rtpg_iov;
	m->rtpg_io.iovcnt = 1;
	m->rtpg_io.done = rtpg_done;
	m->rtpg_io.owner = m;
	if (m->eng->submit(m->path[idx].ep, &m->rtpg_io) == 0) {
		m->rtpg_busy = true;
		m->rtpg_stale = false;
	}
}

/* Paths whose connection went away while idle, connects that finished, reconnect timers. */
static void path_housekeeping(struct ub_mpath *m, uint64_t now)
{
	for (unsigned i = 0; i < m->n; i++) {
		struct ub_path *p = &m->path[i];
		enum ub_path_state es = m->eng->state(p->ep);

		switch (p->state) {
		case UB_MP_UP:
			if (es == UB_PS_DOWN)
				ub_mpath_fail_path(m, i,
						   m->eng->last_error(p->ep)[0]
						       ? m->eng->last_error(p->ep)
						       : "connection lost");
			break;
		case UB_MP_DOWN:
			if (now < p->next_try_ns)
				break;
			p->attempts++;
			ub_mpath_event(m, (int)i, "path %u reconnect attempt %u (after %u ms backoff)",
				       i, p->attempts, p->backoff_ms);
			if (m->eng->connect(p->ep) == 0) {
				p->state = UB_MP_CONNECTING;
				break;
			}
			/* fall through: the connect failed at once */
			es = UB_PS_DOWN;
			p->state = UB_MP_CONNECTING;
			/* fall through */
		case UB_MP_CONNECTING:
			if (es == UB_PS_UP) {
				start_check(m, i);
			} else if (es == UB_PS_DOWN) {
				p->state = UB_MP_DOWN;
				p->backoff_ms = p->backoff_ms * 2 > 4000 ? 4000 : p->backoff_ms * 2;
				schedule_reconnect(m, p);
				ub_mpath_event(m, (int)i,
					       "path %u reconnect attempt %u failed: %s (next in %u ms)",
					       i, p->attempts, m->eng->last_error(p->ep),
					       p->backoff_ms);
			}
			break;
		case UB_MP_CHECKING:
			if (p->check_done)
				finish_check(m, i);
			else if (es == UB_PS_DOWN) {
				p->state = UB_MP_DOWN;
				schedule_reconnect(m, p);
				ub_mpath_event(m, (int)i,
					       "path %u reconnect attempt %u failed: %s during the "
					       "identity check (next in %u ms)",
					       i, p->attempts, m->eng->last_error(p->ep),
					       p->backoff_ms);
			}
			break;
		case UB_MP_DEAD:
			break;
		}
	}
}

static bool any_path_possible(struct ub_mpath *m)
{
	for (unsigned i = 0; i < m->n; i++)
		if (m->path[i].state != UB_MP_DEAD)
			return true;
	return false;
}

static void run_pending(struct ub_mpath *m, uint64_t now)
{
	struct ub_mio *head = m->pend_head, *mio;
	uint64_t limit = (m->cfg.no_path_timeout_ms ? m->cfg.no_path_timeout_ms : 15000) * MS;

	m->pend_head = m->pend_tail = NULL;
	while ((mio = head)) {
		head = mio->next;
		mio->next = NULL;
		if (mio->not_before_ns > now) {
			list_push(&m->pend_head, &m->pend_tail, mio);
			continue;
		}
		if (mio->wait_since_ns &&
		    (now - mio->wait_since_ns > limit || !any_path_possible(m))) {
			fail_final(m, mio, "no path available for %.1fs",
				   (double)(now - mio->wait_since_ns) / 1e9);
			continue;
		}
		dispatch(m, mio);
	}
}

unsigned ub_mpath_poll(struct ub_mpath *m, int timeout_ms)
{
	struct pollfd pfd[UB_MAX_PATHS];
	int map[UB_MAX_PATHS];
	unsigned nfd = 0, delivered = 0;
	uint64_t now = ub_now_ns();
	struct ub_mio *mio;

	run_pending(m, now);
	path_housekeeping(m, now);
	for (unsigned i = 0; i < m->n; i++)
		if (m->eng->pollfd(m->path[i].ep, &pfd[nfd]) > 0)
			map[nfd++] = (int)i;
	/* Engines keep their own timers (libiscsi task timeouts, connect deadlines): tick at
	 * least every 100 ms.  Pending retries and reconnects shorten the wait. */
	if (timeout_ms < 0 || timeout_ms > 100)
		timeout_ms = 100;
	if (m->done_head)
		timeout_ms = 0;
	for (mio = m->pend_head; mio; mio = mio->next) {
		int ms = mio->not_before_ns > now ? (int)((mio->not_before_ns - now) / MS) : 0;
		if (ms < timeout_ms)
			timeout_ms = ms;
	}
	/* Completions reaped in one go share the time they were reaped at (fio's icd->time):
	 * the tester's own work on earlier ones in the batch is not the device's latency. */
	if (m->n == 1 && m->eng->wait) {
		short rev = m->eng->wait(m->path[0].ep, timeout_ms) > 0 ? POLLIN : 0;
		m->reap_ns = ub_now_ns();
		if (rev)
			m->eng->service(m->path[0].ep, rev);
	} else {
		if (nfd)
			poll(pfd, nfd, timeout_ms);
		else if (timeout_ms > 0) {
			struct timespec ts = {0, (long)timeout_ms * 1000000};
			nanosleep(&ts, NULL);
		}
		m->reap_ns = ub_now_ns();
		for (unsigned k = 0; k < nfd; k++)
			if (pfd[k].revents)
				m->eng->service(m->path[map[k]].ep, pfd[k].revents);
	}
	/* Timer ticks (revents 0) only every 10 ms: they walk the engine's queues, which costs
	 * real time per command at high rates. */
	now = m->reap_ns;
	if (now - m->last_tick_ns >= 10 * MS) {
		m->last_tick_ns = now;
		for (unsigned i = 0; i < m->n; i++)
			m->eng->service(m->path[i].ep, 0);
	}
	m->reap_ns = 0;
	while ((mio = list_pop(&m->done_head, &m->done_tail))) {
		unsigned before = m->outstanding;
		completed(m, mio);
		delivered += before != m->outstanding;
	}
	now = ub_now_ns();
	path_housekeeping(m, now);
	if (m->rtpg_stale && !m->rtpg_busy)
		refresh_rtpg(m);
	run_pending(m, now);
	return delivered;
}

static bool setup_identity(struct ub_mpath *m, char *err, size_t errlen)
{
	uint8_t cdb[12], buf[1024];
	struct ub_io io;
	char e[160], a[160];

	for (unsigned i = 0; i < m->n; i++) {
		struct ub_path *p = &m->path[i];
		enum ub_io_result r;

		ub_cdb_inquiry_vpd(cdb, 0x83, sizeof(buf));
		memset(buf, 0, sizeof(buf));
		r = ub_epath_scsi_in(m->eng, p->ep, cdb, 6, buf, sizeof(buf), &io, 10000 * MS);
		if (r == UB_IO_NOT_SUPPORTED) {
			if (m->n > 1) {
				snprintf(err, errlen,
					 "multipath needs LU identity (VPD 83), which "
					 "the %s engine cannot query",
					 m->eng->name);
				return false;
			}
			return true;
		}
		if (r != UB_IO_OK) {
			snprintf(err, errlen, "path %u (%s): INQUIRY VPD 83 failed: %s", i,
				 p->shown,
				 r == UB_IO_PATH_ERROR ? m->eng->last_error(p->ep)
						       : ub_sense_key_str(io.sense_key));
			return false;
		}
		if (!ub_vpd83_parse(buf, sizeof(buf) - io.residual, &p->ident, e, sizeof(e))) {
			snprintf(err, errlen, "path %u (%s): %s", i, p->shown, e);
			return false;
		}
		if (i && !ub_lu_ident_same(&p->ident, &m->path[0].ident)) {
			ub_lu_ident_str(&p->ident, a, sizeof(a));
			ub_lu_ident_str(&m->path[0].ident, e, sizeof(e));
			snprintf(err, errlen,
				 "path %u (%s) reaches LU %s but path 0 (%s) reaches "
				 "LU %s: refusing to run multipath over different LUs",
				 i, p->shown, a, m->path[0].shown, e);
			return false;
		}
	}
	m->have_ident = true;
	ub_lu_ident_str(&m->path[0].ident, m->ident_str, sizeof(m->ident_str));
	/* ALUA: REPORT TARGET PORT GROUPS once through path 0; an ILLEGAL REQUEST means the
	 * target does not do ALUA and every path counts as optimized. */
	ub_cdb_rtpg(cdb, sizeof(buf));
	if (ub_epath_scsi_in(m->eng, m->path[0].ep, cdb, 12, buf, sizeof(buf), &io, 10000 * MS) ==
	    UB_IO_OK) {
		struct ub_rtpg r;
		if (ub_rtpg_parse(buf, sizeof(buf) - io.residual, &r, e, sizeof(e)) && r.ngroups) {
			m->alua = true;
			for (unsigned i = 0; i < m->n; i++)
				m->path[i].alua = (int)ub_rtpg_state_for(&r, &m->path[i].ident);
		}
	}
	return true;
}

bool ub_mpath_open(struct ub_mpath *m, const struct ub_engine *eng, const struct ub_mpath_cfg *cfg,
		   char *const *targets, unsigned n, char *err, size_t errlen)
{
	uint64_t deadline;
	char e[512];

	memset(m, 0, sizeof(*m));
	m->eng = eng;
	m->cfg = *cfg;
	m->rr.cur = -1;
	if (!n || n > UB_MAX_PATHS) {
		snprintf(err, errlen, "need 1..%d paths, got %u", UB_MAX_PATHS, n);
		return false;
	}
	for (unsigned i = 0; i < n; i++) {
		struct ub_path *p = &m->path[i];
		ub_iscsi_url_redact(targets[i], p->shown, sizeof(p->shown));
		p->alua = UB_ALUA_UNKNOWN;
		p->state = UB_MP_CONNECTING;
		p->ep = eng->create(targets[i], &cfg->eng, e, sizeof(e));
		if (!p->ep) {
			snprintf(err, errlen, "path %u (%s): %s", i, p->shown, e);
			ub_mpath_close(m);
			return false;
		}
		m->n++;
		if (eng->connect(p->ep) != 0) {
			snprintf(err, errlen, "path %u: %s", i, eng->last_error(p->ep));
			ub_mpath_close(m);
			return false;
		}
	}
	/* Connect all paths concurrently. */
	deadline = ub_now_ns() +
		   ((cfg->eng.connect_timeout_ms ? cfg->eng.connect_timeout_ms : 5000) + 1000) * MS;
	for (;;) {
		struct pollfd pfd[UB_MAX_PATHS];
		int map[UB_MAX_PATHS];
		unsigned nfd = 0, pending = 0;

		for (unsigned i = 0; i < n; i++) {
			enum ub_path_state s = eng->state(m->path[i].ep);
			if (s == UB_PS_DOWN) {
				snprintf(err, errlen, "path %u: %s", i,
					 eng->last_error(m->path[i].ep));
				ub_mpath_close(m);
				return false;
			}
			pending += s == UB_PS_CONNECTING;
		}
		if (!pending)
			break;
		if (ub_now_ns() > deadline) {
			snprintf(err, errlen, "timed out connecting the paths");
			ub_mpath_close(m);
			return false;
		}
		for (unsigned i = 0; i < n; i++)
			if (eng->pollfd(m->path[i].ep, &pfd[nfd]) > 0)
				map[nfd++] = (int)i;
		poll(pfd, nfd, 50);
		for (unsigned k = 0; k < nfd; k++)
			eng->service(m->path[map[k]].ep, pfd[k].revents);
		for (unsigned i = 0; i < n; i++)
			eng->service(m->path[i].ep, 0);
	}
	for (unsigned i = 0; i < n; i++) {
		uint32_t bs;
		uint64_t nb;
		eng->geometry(m->path[i].ep, &bs, &nb);
		if (!i) {
			m->block_size = bs;
			m->nblocks = nb;
		} else if (bs != m->block_size || nb != m->nblocks) {
			snprintf(err, errlen,
				 "path %u reports %llu blocks of %u bytes, path 0 "
				 "%llu of %u: not the same LU",
				 i, (unsigned long long)nb, bs, (unsigned long long)m->nblocks,
				 m->block_size);
			ub_mpath_close(m);
			return false;
		}
		m->path[i].state = UB_MP_UP;
	}
	if (!setup_identity(m, err, errlen)) {
		ub_mpath_close(m);
		return false;
	}
	m->t0 = ub_now_ns();
	for (unsigned i = 0; i < n; i++)
		ub_mpath_event(m, (int)i, "path %u up: %s%s%s%s%s", i, m->path[i].shown,
			       m->have_ident ? " LU " : "", m->have_ident ? m->ident_str : "",
			       m->alua ? ", ALUA " : "",
			       m->alua ? ub_alua_state_str(m->path[i].alua) : "");
	return true;
}

void ub_mpath_close(struct ub_mpath *m)
{
	struct ub_mio *mio;

	for (unsigned i = 0; i < m->n; i++)
		if (m->path[i].ep)
			m->eng->destroy(m->path[i].ep);
	/* Anything the engines handed back while being destroyed is dropped: close() is only
	 * called with no application I/O outstanding, or on the way out after an error. */
	while ((mio = list_pop(&m->done_head, &m->done_tail)))
		;
	free(m->ev);
	m->ev = NULL;
	m->nev = m->evcap = 0;
	m->n = 0;
}

void ub_mpath_reset_stats(struct ub_mpath *m)
{
	for (unsigned i = 0; i < m->n; i++) {
		struct ub_path_stats *s = &m->path[i].st;
		memset(s->ios, 0, sizeof(s->ios));
		memset(s->bytes, 0, sizeof(s->bytes));
		memset(s->lat_ns, 0, sizeof(s->lat_ns));
	}
}

bool ub_mpath_same_lu(struct ub_mpath *m, const char *target, char *err, size_t errlen)
{
	char shown[600], e[512];
	struct ub_epath *ep;
	struct ub_lu_ident id;
	uint8_t cdb[6], buf[512];
	struct ub_io io;
	uint64_t deadline;
	bool same = false;

	ub_iscsi_url_redact(target, shown, sizeof(shown));
	for (unsigned i = 0; i < m->n; i++)
		if (!strcmp(shown, m->path[i].shown))
			return true;
	if (!m->have_ident) {
		snprintf(err, errlen,
			 "--filename=%s is not one of --paths, and the %s engine cannot check "
			 "that it is the same LU",
			 shown, m->eng->name);
		return false;
	}
	ep = m->eng->create(target, &m->cfg.eng, e, sizeof(e));
	if (!ep) {
		snprintf(err, errlen, "--filename=%s: %s", shown, e);
		return false;
	}
	deadline = ub_now_ns() + (m->cfg.eng.connect_timeout_ms + 1000ull) * MS;
	if (m->eng->connect(ep) == 0)
		while (m->eng->state(ep) == UB_PS_CONNECTING && ub_now_ns() < deadline) {
			struct pollfd pfd = {.fd = -1};
			if (m->eng->pollfd(ep, &pfd) > 0)
				poll(&pfd, 1, 50);
			m->eng->service(ep, pfd.revents);
		}
	if (m->eng->state(ep) != UB_PS_UP) {
		snprintf(err, errlen, "--filename=%s: %s", shown, m->eng->last_error(ep));
		m->eng->destroy(ep);
		return false;
	}
	ub_cdb_inquiry_vpd(cdb, 0x83, sizeof(buf));
	if (ub_epath_scsi_in(m->eng, ep, cdb, 6, buf, sizeof(buf), &io, 10000 * MS) == UB_IO_OK &&
	    ub_vpd83_parse(buf, sizeof(buf) - io.residual, &id, e, sizeof(e)))
		same = ub_lu_ident_same(&id, &m->path[0].ident);
	m->eng->destroy(ep);
	if (!same) {
		ub_lu_ident_str(&id, e, sizeof(e));
		snprintf(err, errlen,
			 "--filename=%s reaches LU %s, not the LU of --paths (%s): give one or "
			 "the other",
			 shown, e, m->ident_str);
	}
	return same;
}
