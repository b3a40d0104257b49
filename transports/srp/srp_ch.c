/* SRP channels on top of the verbs layer: the login carried in the RDMA/CM connect request,
 * receive dispatch by IU type with credit checks, SRP_CRED_REQ when earned credits have no
 * response to ride on, logout in both directions, and release once every request is done. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/ut_log.h"
#include "transports/srp/srp_int.h"
#include "transports/srp/srp_iu.h"

#define LOG(ch, prio, ...) srpt_log_ch(ch, prio, __VA_ARGS__)

static void srpt_log_ch(const struct srpt_ch *ch, int prio, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void srpt_log_ch(const struct srpt_ch *ch, int prio, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ut_log(prio, "ib_srpt: %s (%s): %s", ch->iname, srpt_io->name(ch->conn), buf);
}

static uint64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

/* ---- requests and credits ---- */

struct rdma_buf *srpt_ch_send_buf(struct srpt_ch *ch)
{
	return srpt_io->send_buf(ch->conn);
}

void srpt_ch_return_iu(struct srpt_ch *ch, struct srpt_req *r)
{
	if (r->iu_returned)
		return;
	r->iu_returned = true;
	srpt_io->repost(ch->conn, r->iu);
	srp_credit_done(&ch->cred);
}

static void maybe_finish(struct srpt_ch *ch);

void srpt_ch_req_free(struct srpt_ch *ch, struct srpt_req *r)
{
	srpt_ch_return_iu(ch, r);
	if (r->nsegs > 0)
		rdma_pool_put(srpt_io->pool(ch->conn), r->segs, (unsigned)r->nsegs);
	r->nsegs = 0;
	r->state = REQ_FREE;
	r->next = ch->free_reqs;
	ch->free_reqs = r;
	ch->active--;
	if (ch->state == SRPT_CH_DOWN) {
		maybe_finish(ch);
		return;
	}
	srpt_ch_maybe_cred_req(ch);
	srpt_ch_check_drained(ch);
}

static struct srpt_req *req_get(struct srpt_ch *ch, struct rdma_buf *b, uint32_t len)
{
	struct srpt_req *r = ch->free_reqs;

	if (!r)
		return NULL;
	ch->free_reqs = r->next;
	memset(r, 0, offsetof(struct srpt_req, segs));
	r->ch = ch;
	r->iu = b;
	r->iu_len = len;
	r->state = REQ_EXEC;
	ch->active++;
	return r;
}

void srpt_ch_sq_wait(struct srpt_ch *ch, struct srpt_req *r)
{
	r->next = NULL;
	if (ch->sq_tail)
		ch->sq_tail->next = r;
	else
		ch->sq_head = r;
	ch->sq_tail = r;
}

void srpt_ch_sq_remove(struct srpt_ch *ch, struct srpt_req *r)
{
	struct srpt_req *prev = NULL;

	for (struct srpt_req **pp = &ch->sq_head; *pp; prev = *pp, pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			if (ch->sq_tail == r)
				ch->sq_tail = prev;
			r->next = NULL;
			return;
		}
}

static void ctl_done(struct rdma_conn *c, struct rdma_op *op, bool ok)
{
	struct srpt_ch *ch = srpt_io->priv(c);

	(void)op;
	(void)ok;
	ch->ctl_inflight--;
	if (ch->state == SRPT_CH_DOWN) {
		maybe_finish(ch);
		return;
	}
	srpt_ch_check_drained(ch);
}

/* Send one of our own 16-byte requests (SRP_CRED_REQ, SRP_T_LOGOUT). */
static int send_ctl(struct srpt_ch *ch, uint8_t op, uint32_t word)
{
	struct rdma_buf *b;
	struct rdma_op *o;
	struct srp_tag tag = srp_tag_of(0);
	size_t len;
	int rc;

	if (ch->ctl_inflight >= 2)
		return -EAGAIN;
	b = srpt_ch_send_buf(ch);
	if (!b)
		return -EAGAIN;
	o = ch->ctl_op[0].nwr || ch->ctl_op[0].send_buf ? &ch->ctl_op[1] : &ch->ctl_op[0];
	o->done = ctl_done;
	len = op == SRP_OP_CRED_REQ ? srp_build_cred_req(b->data, word, tag)
				    : srp_build_t_logout(b->data, word, tag);
	rc = srpt_io->send(ch->conn, b, (uint32_t)len, false, o);
	if (rc) {
		srpt_io->put_send_buf(ch->conn, b);
		return rc;
	}
	ch->ctl_inflight++;
	return 0;
}

void srpt_ch_maybe_cred_req(struct srpt_ch *ch)
{
	uint32_t delta;

	if (ch->state != SRPT_CH_LIVE || !srp_credit_want_cred_req(&ch->cred))
		return;
	delta = srp_credit_grant(&ch->cred);
	if (send_ctl(ch, SRP_OP_CRED_REQ, delta)) {
		srp_credit_ungrant(&ch->cred, delta);
		return;
	}
	srp_credit_cred_req_sent(&ch->cred);
}

/* ---- logout ---- */

static void set_drain_since(struct srpt_ch *ch)
{
	ch->drain_since = now_s();
}

void srpt_ch_check_drained(struct srpt_ch *ch)
{
	if (ch->state == SRPT_CH_DRAIN && !ch->active && !ch->ctl_inflight && !ch->tlogout_pending)
		srpt_io->disconnect(ch->conn);
}

static void try_tlogout(struct srpt_ch *ch)
{
	if (!ch->tlogout_pending)
		return;
	if (send_ctl(ch, SRP_OP_T_LOGOUT, ch->tlogout_reason) == -EAGAIN)
		return;
	ch->tlogout_pending = false; /* sent, or the connection is gone anyway */
}

void srpt_ch_logout(struct srpt_ch *ch, uint32_t reason)
{
	if (ch->state >= SRPT_CH_DRAIN)
		return;
	LOG(ch, LOG_INFO, "target logout (reason %u)", reason);
	ch->state = SRPT_CH_DRAIN;
	set_drain_since(ch);
	ch->tlogout_pending = true;
	ch->tlogout_reason = reason;
	try_tlogout(ch);
	srpt_ch_check_drained(ch);
}

static void kill_fn(struct ut_msg *m)
{
	struct srpt_ch *ch = (struct srpt_ch *)((char *)m - offsetof(struct srpt_ch, kill_msg));

	ch->kill_ran = true;
	if (!ch->conn) {
		free(ch); /* finished while this message was on its way */
		return;
	}
	srpt_ch_logout(ch, ch->kill_reason);
}

void srpt_ch_kill(struct srpt_ch *ch, uint32_t reason)
{
	if (atomic_exchange(&ch->kill_posted, true))
		return;
	ch->kill_reason = reason;
	ch->kill_msg.fn = kill_fn;
	srpt_io->call(ch->conn, &ch->kill_msg);
}

/* The CPU the commands of a nexus's channel n (1: its first) come from, for `pin auto`: Linux's
 * ib_srp maps each CPU's block queue to one channel, channel k (in login order) serving
 * CPU k when it has as many channels as CPUs (ch_count), and the initiator on this machine is
 * the case where that CPU matters (a software device does both sides' work on the CPU of
 * whoever posts). */
int srpt_ch_cpu(unsigned n)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1 || ncpu < 1)
		return -1;
	return (int)((n - 1) % (unsigned long)ncpu);
}

/* ---- connection callbacks ---- */

static void reject(struct rdma_conn *c, const struct srp_login_req *lr, uint32_t reason,
		   uint16_t buf_fmt)
{
	struct srp_login_rej rej = {.reason = reason, .buf_fmt = buf_fmt};
	uint8_t b[SRP_LOGIN_REJ_LEN];

	if (lr)
		rej.tag = lr->tag;
	srp_build_login_rej(b, &rej);
	srpt_io->reject(c, b, sizeof(b));
}

static void on_request(struct rdma_conn *c, const struct rdma_conn_req *req)
{
	struct srpt_ctx *ctx = srpt_io->ctx(c);
	struct srp_login_decision dec;
	struct rdma_conn_params p = {0};
	struct srp_login_req lr;
	uint8_t rsp[SRP_LOGIN_RSP_LEN];
	struct srpt_ch *ch;
	char iname[35];
	int rc;

	if (srp_parse_login_rdma(req->priv, req->priv_len, &lr)) {
		ut_log(LOG_WARNING, "ib_srpt: %s: connect request without an SRP_LOGIN_REQ",
			srpt_io->name(c));
		reject(c, NULL, SRP_REJ_UNABLE_ESTABLISH_CHANNEL, ctx->o.lim.buf_fmt);
		return;
	}
	srp_port_id_hex(lr.initiator_port_id, iname);
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		reject(c, &lr, SRP_REJ_INSUFFICIENT_RESOURCES, ctx->o.lim.buf_fmt);
		return;
	}
	ch->ctx = ctx;
	ch->conn = c;
	memcpy(ch->iname, iname, sizeof(iname));
	srpt_nexus_login(ctx, ch, &lr, &dec);
	if (!dec.accept) {
		char tp[35];

		srp_port_id_hex(lr.target_port_id, tp);
		ut_log(LOG_WARNING,
			"ib_srpt: login from %s (%s) to %s rejected: reason 0x%08x (it_iu_len %u, "
			"flags 0x%02x)",
			iname, srpt_io->name(c), tp, dec.rej_reason, lr.req_it_iu_len,
			lr.req_flags);
		free(ch);
		reject(c, &lr, dec.rej_reason, ctx->o.lim.buf_fmt);
		return;
	}
	ch->it_iu_len = dec.it_iu_len;
	ch->ti_iu_len = ctx->o.lim.max_ti_iu_len;
	ch->lim = (struct srp_cmd_limits){
	    .imm = dec.imm, .imm_data_offset = dec.imm_data_offset, .buf_fmt = ctx->o.lim.buf_fmt};
	srp_credit_init(&ch->cred, (int32_t)ctx->o.lim.req_lim);
	/* A response returns its credit when it is posted but keeps its context until the send
	 * completes, and the initiator may spend that credit first (on a real HCA its next
	 * command can be reaped before our send completion): contexts for every request the
	 * initiator may have outstanding plus every response the send queue can hold. */
	ch->nreqs = ctx->o.lim.req_lim + ctx->o.lim.req_lim + SRPT_SEND_EXTRA;
	ch->reqs = calloc(ch->nreqs, sizeof(*ch->reqs));
	if (!ch->reqs)
		goto fail;
	for (unsigned i = ch->nreqs; i-- > 0;) {
		ch->reqs[i].next = ch->free_reqs;
		ch->free_reqs = &ch->reqs[i];
	}
	srp_build_login_rsp(rsp, &dec.rsp);
	p.recv_depth = ctx->o.lim.req_lim + SRPT_RECV_EXTRA;
	p.recv_size = ch->it_iu_len;
	p.send_depth = ctx->o.lim.req_lim + SRPT_SEND_EXTRA;
	p.send_size = ch->ti_iu_len;
	p.rdma_wrs = ctx->o.lim.req_lim * SRPT_RDMA_WR_PER_CMD;
	p.pool_bytes = (uint64_t)ctx->o.lim.req_lim * ctx->o.rdma.pool_chunk;
	p.priv = rsp;
	p.priv_len = sizeof(rsp);
	srpt_io->set_priv(c, ch);
	rc = srpt_io->accept(c, &p);
	if (rc) {
		ut_log(LOG_ERR, "ib_srpt: login from %s (%s): cannot set up the channel: %s",
			iname, srpt_io->name(c), strerror(-rc));
		srpt_io->set_priv(c, NULL);
		goto fail;
	}
	ch->state = SRPT_CH_LOGIN;
	srpt_io->set_cpu(c, srpt_ch_cpu(ch->nexus->nch));
	LOG(ch, LOG_INFO,
	    "login to %s accepted: it_iu_len %u, ti_iu_len %u, req_lim %u, immediate data %s, "
	    "%s, channel %u of the nexus",
	    ch->nexus->nx.target_name, ch->it_iu_len, ch->ti_iu_len, ctx->o.lim.req_lim,
	    dec.imm ? "yes" : "no",
	    (lr.req_flags & SRP_MCA_MASK) == SRP_MCA_MULTI ? "multichannel" : "single channel",
	    ch->nexus->nch);
	return;
fail:
	srpt_nexus_leave(ctx, ch);
	free(ch->reqs);
	ch->reqs = NULL;
	ch->state = SRPT_CH_DOWN;
	ch->conn = NULL;
	if (!atomic_load(&ch->kill_posted)) /* else kill_fn frees it */
		free(ch);
	reject(c, &lr, SRP_REJ_INSUFFICIENT_RESOURCES, ctx->o.lim.buf_fmt);
}

static void on_established(struct rdma_conn *c)
{
	struct srpt_ch *ch = srpt_io->priv(c);

	if (ch && ch->state == SRPT_CH_LOGIN)
		ch->state = SRPT_CH_LIVE;
}

static void protocol_error(struct srpt_ch *ch, struct rdma_buf *b, uint32_t reason,
			   const char *what)
{
	LOG(ch, LOG_WARNING, "%s", what);
	srpt_io->repost(ch->conn, b);
	srpt_ch_logout(ch, reason);
}

static void on_recv(struct rdma_conn *c, struct rdma_buf *b, uint32_t len)
{
	struct srpt_ch *ch = srpt_io->priv(c);
	struct srp_tag tag;
	struct srpt_req *r;
	uint8_t op;

	if (ch->state == SRPT_CH_LOGIN)
		ch->state = SRPT_CH_LIVE;
	if (srp_iu_peek(b->data, len, &op, &tag)) {
		protocol_error(ch, b, SRP_TLO_NO_REASON, "IU shorter than 16 bytes");
		return;
	}
	switch (op) {
	case SRP_OP_CMD:
	case SRP_OP_TSK_MGMT:
	case SRP_OP_I_LOGOUT:
		if (!srp_credit_take(&ch->cred)) {
			protocol_error(ch, b, SRP_TLO_NO_REASON,
				       "request beyond the request limit");
			return;
		}
		r = req_get(ch, b, len);
		if (!r) { /* cannot happen while credits are honoured (nreqs) */
			srp_credit_done(&ch->cred);
			protocol_error(ch, b, SRP_TLO_NO_REASON, "no request context left");
			return;
		}
		if (op == SRP_OP_I_LOGOUT) {
			LOG(ch, LOG_INFO, "initiator logout");
			if (ch->state < SRPT_CH_DRAIN) {
				ch->state = SRPT_CH_DRAIN;
				set_drain_since(ch);
			}
			srpt_ch_req_free(ch, r);
		} else if (ch->state >= SRPT_CH_DRAIN) {
			srpt_cmd_busy(ch, r);
		} else if (op == SRP_OP_CMD) {
			srpt_cmd_start(ch, r);
		} else {
			srpt_tmf_start(ch, r);
		}
		return;
	case SRP_OP_CRED_RSP:
		if (!srp_credit_cred_rsp(&ch->cred)) {
			protocol_error(ch, b, SRP_TLO_UNEXPECTED_RSP,
				       "SRP_CRED_RSP without a request");
			return;
		}
		srpt_io->repost(c, b);
		srpt_ch_maybe_cred_req(ch);
		return;
	case SRP_OP_AER_RSP:
		protocol_error(ch, b, SRP_TLO_UNEXPECTED_RSP, "SRP_AER_RSP without a request");
		return;
	default: {
		char what[64];

		snprintf(what, sizeof(what), "unknown IU type 0x%02x", op);
		protocol_error(ch, b, SRP_TLO_INVALID_IU, what);
		return;
	}
	}
}

static void on_sq_space(struct rdma_conn *c)
{
	struct srpt_ch *ch = srpt_io->priv(c);

	try_tlogout(ch);
	while (ch->sq_head && ch->state != SRPT_CH_DOWN) {
		struct srpt_req *r = ch->sq_head;

		ch->sq_head = r->next;
		if (!ch->sq_head)
			ch->sq_tail = NULL;
		r->next = NULL;
		srpt_req_retry(r);
		if (r->state == REQ_WAIT_SQ && ch->sq_tail == r) {
			/* still no room: it went back to the end; first in line again */
			struct srpt_req **pp = &ch->sq_head;

			while (*pp != r)
				pp = &(*pp)->next;
			*pp = NULL;
			ch->sq_tail = NULL;
			for (struct srpt_req *x = ch->sq_head; x; x = x->next)
				ch->sq_tail = x;
			r->next = ch->sq_head;
			ch->sq_head = r;
			if (!ch->sq_tail)
				ch->sq_tail = r;
			break;
		}
	}
	srpt_ch_check_drained(ch);
}

static void finish_fn(struct ut_msg *m)
{
	struct srpt_ch *ch = (struct srpt_ch *)((char *)m - offsetof(struct srpt_ch, finish_msg));
	struct rdma_conn *c = ch->conn;

	LOG(ch, LOG_INFO, "channel released: %llu commands, %llu bytes in, %llu bytes out",
	    (unsigned long long)ch->ncmds, (unsigned long long)ch->bytes_in,
	    (unsigned long long)ch->bytes_out);
	srpt_nexus_leave(ch->ctx, ch);
	free(ch->reqs);
	ch->reqs = NULL;
	ch->conn = NULL;
	srpt_io->set_priv(c, NULL);
	srpt_io->release(c);
	/* a kill posted before the nexus let go of us and not run yet frees us */
	if (!atomic_load(&ch->kill_posted) || ch->kill_ran)
		free(ch);
}

/* Once down and nothing is left in flight, the channel goes, from a clean stack: callers of
 * srpt_ch_req_free and friends may still be looking at it. */
static void maybe_finish(struct srpt_ch *ch)
{
	if (ch->state != SRPT_CH_DOWN || ch->active || ch->ctl_inflight || ch->finish_posted)
		return;
	ch->finish_posted = true;
	ch->finish_msg.fn = finish_fn;
	srpt_io->call(ch->conn, &ch->finish_msg);
}

static void on_down(struct rdma_conn *c)
{
	struct srpt_ch *ch = srpt_io->priv(c);

	if (!ch)
		return;
	ch->state = SRPT_CH_DOWN;
	ch->tlogout_pending = false;
	/* what waits for buffers or send queue room will never get it */
	while (ch->sq_head) {
		struct srpt_req *r = ch->sq_head;
		ch->sq_head = r->next;
		srpt_req_abandon(r);
	}
	ch->sq_tail = NULL;
	for (unsigned i = 0; i < ch->nreqs; i++)
		if (ch->reqs[i].state == REQ_WAIT_BUF)
			srpt_req_abandon(&ch->reqs[i]);
	maybe_finish(ch);
}

static void on_tick(struct rdma_conn *c)
{
	struct srpt_ch *ch = srpt_io->priv(c);

	if (!ch)
		return;
	if (ch->state == SRPT_CH_DRAIN && now_s() - ch->drain_since >= ch->ctx->o.logout_wait) {
		LOG(ch, LOG_NOTICE, "logout did not complete in %u s: disconnecting",
		    ch->ctx->o.logout_wait);
		srpt_io->disconnect(c);
		return;
	}
	try_tlogout(ch);
	srpt_ch_maybe_cred_req(ch);
}

const struct rdma_conn_ops srpt_conn_ops = {
    .request = on_request,
    .established = on_established,
    .recv = on_recv,
    .sq_space = on_sq_space,
    .down = on_down,
    .tick = on_tick,
};
