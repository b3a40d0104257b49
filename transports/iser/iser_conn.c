/* One iSER connection on the verbs layer: the CM request (iSER CM header in, REP out), every
 * received SEND checked before anything above sees it (framing, iSER header, negotiated
 * length, phase), PDUs sent behind the iSER header, and the way down.  Input that breaks the
 * protocol drops the connection with a log line; the daemon and the other connections go on. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "common/ut_log.h"
#include "transports/iscsi/iscsi_pdu.h"
#include "transports/iser/iser_int.h"

void iser_conn_cfg_default(struct iser_conn_cfg *c)
{
	iser_key_cfg_default(&c->keys);
	c->queue_depth = 32;
	c->unexpected = 4; /* as isert: 2 NOP-Out, 1 TMF, 1 Logout/Text beyond the window */
}

static uint32_t max32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

void iser_conn_params(const struct iser_conn_cfg *cfg, struct rdma_conn_params *p,
		      uint8_t rep[ISER_CM_HDR_LEN])
{
	memset(p, 0, sizeof(*p));
	/* a receive buffer takes a login PDU (8 KiB of data) or a full-feature one (TRDSL) */
	p->recv_depth = cfg->queue_depth + cfg->unexpected;
	p->recv_size = ISER_HEADERS_LEN + max32(ISER_LOGIN_DSL, cfg->keys.trdsl);
	p->send_depth = cfg->queue_depth + cfg->unexpected;
	p->send_size = ISER_HEADERS_LEN + max32(ISER_LOGIN_DSL, cfg->keys.max_send_dsl);
	/* an RDMA READ or WRITE per command in the window (a buffer's chunks fit the SGEs) */
	p->rdma_wrs = cfg->queue_depth * 2;
	iser_cm_rep_build(rep);
	p->priv = rep;
	p->priv_len = ISER_CM_HDR_LEN;
}

static void on_request(struct rdma_conn *c, const struct rdma_conn_req *req)
{
	struct iser_srv_ctx *ctx = iser_io->ctx(c);
	struct rdma_conn_params p;
	uint8_t rep[ISER_CM_HDR_LEN];
	struct iser_conn *ic;
	int rc;

	ic = calloc(1, sizeof(*ic));
	if (!ic) {
		iser_io->reject(c, NULL, 0);
		return;
	}
	rc = iser_cm_req_parse(req->priv, req->priv_len, &ic->cm);
	if (rc) {
		ut_log(LOG_WARNING, "iser: %s: connect request refused: %s (%u bytes)",
			iser_io->name(c), iser_strerror(rc), req->priv_len);
		free(ic);
		iser_io->reject(c, NULL, 0);
		return;
	}
	ic->c = c;
	ic->ctx = ctx;
	ic->state = ISER_CONN_LOGIN;
	ic->recv_dsl = ISER_LOGIN_DSL;
	ic->send_dsl = ISER_LOGIN_DSL;
	iser_conn_params(&ctx->cfg, &p, rep);
	iser_io->set_priv(c, ic);
	rc = iser_io->accept(c, &p);
	if (rc) {
		ut_log(LOG_WARNING, "iser: %s: accept failed: %s", iser_io->name(c),
			strerror(-rc));
		iser_io->set_priv(c, NULL);
		free(ic);
		/* the request still needs its answer (the rdma_conn_ops contract), as SRP does */
		iser_io->reject(c, NULL, 0);
		return;
	}
	ut_log(LOG_INFO, "iser: %s: connection accepted (zbva %s, send with invalidate %s)",
		iser_io->name(c), ic->cm.zbva_not_sup ? "no" : "yes",
		ic->cm.send_w_inv_not_sup ? "no" : "yes");
	/* the upper layer last: a failure there takes the accepted connection down the usual
	 * way (its down() then finds nothing of its own and releases) */
	if (ctx->up->accept && ctx->up->accept(ic, req))
		iser_conn_drop(ic, "cannot set up the iSCSI connection");
}

static void on_established(struct rdma_conn *c)
{
	(void)c;
}

void iser_conn_drop(struct iser_conn *ic, const char *why)
{
	if (ic->state == ISER_CONN_CLOSING)
		return;
	ic->state = ISER_CONN_CLOSING;
	snprintf(ic->why_buf, sizeof(ic->why_buf), "%s", why);
	ic->why = ic->why_buf;
	ut_log(LOG_WARNING, "iser: %s: dropping the connection: %s", iser_io->name(ic->c), why);
	iser_io->disconnect(ic->c);
}

void iser_conn_repost(struct iser_conn *ic, struct rdma_buf *b)
{
	iser_io->repost(ic->c, b);
}

/* Which PDUs the phase allows. */
static const char *phase_error(const struct iser_conn *ic, uint8_t op)
{
	if (ic->state == ISER_CONN_LOGIN && op != ISCSI_OP_LOGIN_REQ)
		return "PDU before login";
	if (ic->state == ISER_CONN_FFP && op == ISCSI_OP_LOGIN_REQ)
		return "Login Request in full feature phase";
	if (op & 0x20)
		return "target opcode from the initiator";
	return NULL;
}

static void on_recv(struct rdma_conn *c, struct rdma_buf *b, uint32_t len)
{
	struct iser_conn *ic = iser_io->priv(c);
	struct iser_hdr h;
	uint32_t dsl, off;
	const char *why;
	int rc;

	if (!ic || ic->state == ISER_CONN_CLOSING) {
		iser_io->repost(c, b);
		return;
	}
	rc = iser_pdu_check(b->data, len, ic->recv_dsl, &h, &dsl, &off);
	if (rc) {
		char msg[96];

		snprintf(msg, sizeof(msg), "%s (SEND of %u bytes, limit %u)", iser_strerror(rc),
			 len, ic->recv_dsl);
		iser_io->repost(c, b);
		iser_conn_drop(ic, msg);
		return;
	}
	why = phase_error(ic, b->data[ISER_HDR_LEN] & 0x3f);
	if (why) {
		iser_io->repost(c, b);
		iser_conn_drop(ic, why);
		return;
	}
	ic->rx_pdus++;
	ic->ctx->up->pdu(ic, &h, b->data + ISER_HDR_LEN, b->data + off, dsl, b);
}

/* A send buffer holding the iSER header, the BHS and the data segment; NULL: none free. */
static struct rdma_buf *pdu_buf(struct iser_conn *ic, const uint8_t *bhs, const void *data,
				uint32_t dsl)
{
	struct rdma_buf *b = iser_io->send_buf(ic->c);

	if (!b)
		return NULL;
	iser_hdr_encode_tgt(b->data);
	memcpy(b->data + ISER_HDR_LEN, bhs, ISER_BHS_LEN);
	if (dsl)
		memcpy(b->data + ISER_HEADERS_LEN, data, dsl);
	return b;
}

int iser_conn_send_pdu(struct iser_conn *ic, const uint8_t *bhs, const void *data, uint32_t dsl,
		       struct rdma_op *op)
{
	struct rdma_buf *b;
	int rc;

	if (ic->state == ISER_CONN_CLOSING)
		return -ENOTCONN;
	if (dsl > ic->send_dsl)
		return -EMSGSIZE;
	b = pdu_buf(ic, bhs, data, dsl);
	if (!b)
		return -EAGAIN;
	rc = iser_io->send(ic->c, b, ISER_HEADERS_LEN + dsl, false, op);
	if (rc) {
		iser_io->put_send_buf(ic->c, b);
		return rc;
	}
	ic->tx_pdus++;
	return 0;
}

int iser_conn_write_rsp(struct iser_conn *ic, const struct rdma_rseg *rem,
			const struct rdma_seg *loc, unsigned nloc, uint32_t bytes,
			const uint8_t *bhs, const void *data, uint32_t dsl, struct rdma_op *op)
{
	struct rdma_buf *b;
	int rc;

	if (ic->state == ISER_CONN_CLOSING)
		return -ENOTCONN;
	if (bytes > rem->len)
		return -EINVAL; /* never write past the STag the initiator registered */
	if (dsl > ic->send_dsl)
		return -EMSGSIZE;
	b = pdu_buf(ic, bhs, data, dsl);
	if (!b)
		return -EAGAIN;
	if (bytes)
		rc = iser_io->write_send(ic->c, rem, 1, loc, nloc, bytes, b, ISER_HEADERS_LEN + dsl,
					 false, op);
	else
		rc = iser_io->send(ic->c, b, ISER_HEADERS_LEN + dsl, false, op);
	if (rc) {
		iser_io->put_send_buf(ic->c, b);
		return rc;
	}
	ic->tx_pdus++;
	return 0;
}

int iser_conn_read(struct iser_conn *ic, const struct rdma_rseg *rem, const struct rdma_seg *loc,
		   unsigned nloc, uint32_t bytes, struct rdma_op *op)
{
	if (ic->state == ISER_CONN_CLOSING)
		return -ENOTCONN;
	if (!bytes || bytes > rem->len)
		return -EINVAL; /* never read past the STag the initiator registered */
	return iser_io->read(ic->c, rem, 1, loc, nloc, bytes, op);
}

void iser_conn_enter_ffp(struct iser_conn *ic, const struct iser_keys *k)
{
	if (ic->state != ISER_CONN_LOGIN)
		return;
	ic->state = ISER_CONN_FFP;
	ic->recv_dsl = k->trdsl;
	ic->send_dsl = k->irdsl;
}

static void on_sq_space(struct rdma_conn *c)
{
	struct iser_conn *ic = iser_io->priv(c);

	if (ic && ic->ctx->up->sq_space)
		ic->ctx->up->sq_space(ic);
}

static void on_down(struct rdma_conn *c)
{
	struct iser_conn *ic = iser_io->priv(c);

	if (!ic) {
		iser_io->release(c);
		return;
	}
	ic->state = ISER_CONN_CLOSING;
	ut_log(LOG_INFO, "iser: %s: connection down (%llu PDUs in, %llu out)%s%s",
		iser_io->name(c), (unsigned long long)ic->rx_pdus, (unsigned long long)ic->tx_pdus,
		ic->why ? ": " : "", ic->why ? ic->why : "");
	if (ic->ctx->up->down)
		ic->ctx->up->down(ic); /* calls iser_conn_release, now or later */
	else
		iser_conn_release(ic);
}

void iser_conn_release(struct iser_conn *ic)
{
	struct rdma_conn *c = ic->c;

	iser_io->set_priv(c, NULL);
	free(ic);
	iser_io->release(c);
}

static void on_tick(struct rdma_conn *c)
{
	(void)c;
}

const struct rdma_conn_ops iser_conn_ops = {
    .request = on_request,
    .established = on_established,
    .recv = on_recv,
    .sq_space = on_sq_space,
    .down = on_down,
    .tick = on_tick,
};
