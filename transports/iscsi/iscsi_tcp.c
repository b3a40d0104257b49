/* iSCSI over TCP as a connection transport (struct iscsit_xport): the socket on the worker's
 * loop, the stream receive state machine fed by readv(), the transmit ring flushed once per
 * round (iscsi_tcp_tx.c), backpressure, R2Ts for write data, buffers from the worker's cache,
 * and the per-target socket options that apply once the login is done. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transports/iscsi/iscsi_tcp.h"

#define RX_PDU_BUDGET 64 /* PDUs per connection per loop round, for fairness */

static ssize_t tcp_recv(void *src, const struct iovec *iov, int iovcnt)
{
	struct iscsit_conn *c = src;

	return readv(iscsit_tcp_of(c)->fd, iov, iovcnt);
}

/* Watch for input unless paused, backlogged or closing; for output while a send blocked. */
static void update_events(struct iscsit_conn *c)
{
	struct iscsit_tcp *tc = iscsit_tcp_of(c);
	bool off = c->rx_paused || tc->tx_backlog || c->state == CONN_CLOSING;
	uint32_t ev = 0;

	if (tc->fd < 0)
		return;
	if (!off)
		ev |= EPOLLIN | EPOLLRDHUP;
	if (tc->tx.blocked)
		ev |= EPOLLOUT;
	if (off != tc->rx_off || tc->tx.blocked != tc->want_out) {
		tc->rx_off = off;
		tc->want_out = tc->tx.blocked;
		ut_thread_modify(&c->w->ut, &tc->watch, ev);
	}
}

static void tcp_input(struct iscsit_conn *c)
{
	enum iscsit_rx_result r;

	if (iscsit_tcp_of(c)->tx_backlog)
		return;
	r = iscsit_rx_run(&c->rx, tcp_recv, c, &iscsit_conn_rx_ops, c, RX_PDU_BUDGET);
	switch (r) {
	case RX_WOULD_BLOCK:
	case RX_PAUSED:
		break;
	case RX_BUDGET:
		iscsit_conn_mark_ready(c);
		break;
	case RX_EOF:
	case RX_ERROR:
		if (c->state != CONN_CLOSING)
			iscsit_conn_close(c, c->rx.why ? c->rx.why : "receive failed");
		return;
	}
	if (c->state != CONN_CLOSING && !c->rx_paused && iscsit_rx_staged(&c->rx))
		iscsit_conn_mark_ready(c);
}

static void tcp_output(struct iscsit_conn *c)
{
	struct iscsit_tcp *tc = iscsit_tcp_of(c);
	uint64_t before = c->tx_pdus;

	if (iscsit_tcp_flush(c) < 0) {
		iscsit_conn_close(c, "send failed");
		return;
	}
	c->w->pdus_out += c->tx_pdus - before;
	if (c->close_after_flush && !tc->tx.head && !tc->tx.s_count) {
		iscsit_conn_close(c, c->close_why ? c->close_why : "logged out");
		return;
	}
	if (c->move_to && !tc->tx.head && !tc->tx.s_count) {
		iscsit_place_move(c); /* the login answer is out: to the worker placement chose */
		return;
	}
	/* Backpressure: an initiator that does not read must not make us queue forever. */
	if (iscsit_tcp_backlog_update(c) && !tc->tx_backlog)
		iscsit_conn_mark_ready(c);
	update_events(c);
}

static int tcp_buf_get(struct iscsit_task *t, uint32_t len)
{
	struct iscsit_tcp_task *tt = iscsit_task_xp(t);
	void *p = iscsit_buf_get(t->conn->w, len, &tt->bufcap);

	if (!p)
		return -ENOMEM;
	/* page-aligned and rounded up, so an O_DIRECT backstore can use it as is */
	t->iov1.iov_base = p;
	t->iov1.iov_len = len;
	t->iov = &t->iov1;
	t->niov = 1;
	t->buflen = len;
	return 0;
}

static void tcp_buf_put(struct iscsit_task *t)
{
	struct iscsit_tcp_task *tt = iscsit_task_xp(t);

	iscsit_buf_put(t->conn->w, t->iov1.iov_base, tt->bufcap);
	t->niov = 0;
}

static void tcp_enter_ffp(struct iscsit_conn *c)
{
	if (c->tgt && c->tgt->has_sockopts)
		iscsit_apply_sockopts(iscsit_tcp_of(c)->fd, &c->tgt->sockopts);
}

static void tcp_close(struct iscsit_conn *c)
{
	struct iscsit_tcp *tc = iscsit_tcp_of(c);

	if (tc->fd >= 0) {
		ut_thread_unwatch(&c->w->ut, &tc->watch);
		shutdown(tc->fd, SHUT_RDWR);
		close(tc->fd);
		tc->fd = -1;
	}
	iscsit_tcp_discard(c);
}

static void tcp_detach(struct iscsit_conn *c)
{
	ut_thread_unwatch(&c->w->ut, &iscsit_tcp_of(c)->watch);
}

static int tcp_attach(struct iscsit_conn *c)
{
	struct iscsit_tcp *tc = iscsit_tcp_of(c);

	/* what update_events will find registered: input (resumed next), no output wait */
	tc->rx_off = false;
	tc->want_out = false;
	return ut_thread_watch(&c->w->ut, &tc->watch, EPOLLIN | EPOLLRDHUP);
}

static void tcp_release(struct iscsit_conn *c)
{
	free(c->xp_priv);
	c->xp_priv = NULL;
}

static bool tcp_target_allowed(const struct iscsit_tgt *t)
{
	(void)t;
	return true;
}

/* A READ's data is sent from the store's memory where the store lends it; not under
 * AddressSanitizer, whose builds keep every READ in a buffer of its own, so that an overrun
 * of it is caught. */
#if defined(__SANITIZE_ADDRESS__)
#define TCP_LEND 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TCP_LEND 0
#endif
#endif
#ifndef TCP_LEND
#define TCP_LEND ISCSIT_XP_DIN_LEND
#endif

const struct iscsit_xport iscsit_tcp_xport = {
    .name = "tcp",
    .caps = ISCSIT_XP_PHASE_COLLAPSE | ISCSIT_XP_DIGESTS | ISCSIT_XP_UNSOLICITED |
	    ISCSIT_XP_DIN_PIECES | TCP_LEND,
    .task_priv = sizeof(struct iscsit_tcp_task),
    .max_xfer = 128u << 20,
    .target_allowed = tcp_target_allowed,
    .input = tcp_input,
    .rx_changed = update_events,
    .queue = iscsit_tcp_queue,
    .output = tcp_output,
    .solicit = iscsit_r2t_solicit,
    .buf_get = tcp_buf_get,
    .buf_put = tcp_buf_put,
    .enter_ffp = tcp_enter_ffp,
    .close = tcp_close,
    .release = tcp_release,
    .detach = tcp_detach,
    .attach = tcp_attach,
};

/* ---------------------------------------------------------------- accepted sockets */

static void sock_ready(struct ut_watch *w, uint32_t events)
{
	struct iscsit_tcp *tc =
	    (struct iscsit_tcp *)((char *)w - offsetof(struct iscsit_tcp, watch));
	struct iscsit_conn *c = tc->conn;

	if ((events & (EPOLLERR | EPOLLHUP)) && (tc->tx_backlog || c->rx_paused) &&
	    c->state != CONN_CLOSING) {
		/* Input is stopped (output backlogged, or the receiver paused: budget, logout,
		 * reinstatement), so the receive path would not see the reset, and the
		 * level-triggered error would wake this loop for nothing, over and over, until
		 * something else flushed the connection: the peer is gone, close now. */
		iscsit_conn_close(c, tc->tx_backlog
					 ? "connection reset while its output was backlogged"
					 : "connection reset while its input was paused");
		return;
	}
	if (events & EPOLLOUT)
		iscsit_conn_mark_dirty(c);
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP))
		iscsit_conn_input(c);
}

struct adopt_msg {
	struct ut_msg m;
	struct iscsit_worker *w;
	int fd;
	struct iscsit_portal *portal;
};

static void adopt_fn(struct ut_msg *m)
{
	struct adopt_msg *am = (struct adopt_msg *)m;
	struct sockaddr_storage peer = {0}, local = {0};
	socklen_t len;
	struct iscsit_tcp *tc = calloc(1, sizeof(*tc));
	struct iscsit_conn *c = NULL;

	len = sizeof(peer);
	getpeername(am->fd, (struct sockaddr *)&peer, &len);
	len = sizeof(local);
	getsockname(am->fd, (struct sockaddr *)&local, &len);
	if (tc) {
		tc->fd = am->fd;
		c = iscsit_conn_new(am->w, &iscsit_tcp_xport, tc, am->portal, &peer, &local);
	}
	if (c) {
		tc->watch.fn = sock_ready;
		tc->watch.fd = am->fd;
		tc->conn = c;
		if (ut_thread_watch(&am->w->ut, &tc->watch, EPOLLIN | EPOLLRDHUP))
			iscsit_conn_close(c, "cannot watch the socket");
	} else {
		free(tc);
		close(am->fd);
	}
	atomic_fetch_sub(&am->w->ctx->accepting, 1);
	free(am);
}

void iscsit_tcp_adopt(struct iscsit_ctx *ctx, int fd, struct iscsit_portal *portal)
{
	struct adopt_msg *am = calloc(1, sizeof(*am));

	if (!am) {
		close(fd);
		return;
	}
	am->m.fn = adopt_fn;
	atomic_fetch_add(&ctx->accepting, 1);
	am->w = iscsit_worker_pick(ctx);
	am->fd = fd;
	am->portal = portal;
	ut_thread_post(&am->w->ut, &am->m);
}
