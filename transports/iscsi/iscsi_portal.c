/* Listening portals: the driver attribute `listen ADDR:PORT` (repeatable; default 0.0.0.0:3260
 * and [::]:3260), TCP options, and accepting connections (on worker 0, which hands each one
 * to the least loaded worker). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "transports/iscsi/iscsi_int.h"

int iscsit_parse_portal(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[128];
	const char *port_s = NULL;
	unsigned long port = 3260;
	size_t n = strlen(s);

	memset(ss, 0, sizeof(*ss));
	if (n == 0 || n >= sizeof(host))
		return -1;
	if (s[0] == '[') {
		const char *e = strchr(s, ']');

		if (!e || e == s + 1)
			return -1;
		memcpy(host, s + 1, (size_t)(e - s - 1));
		host[e - s - 1] = '\0';
		if (e[1] == ':')
			port_s = e + 2;
		else if (e[1] != '\0')
			return -1;
	} else {
		const char *c = strchr(s, ':');

		if (c && strchr(c + 1, ':')) {
			/* bare IPv6 address without brackets and without a port */
			snprintf(host, sizeof(host), "%s", s);
		} else if (c) {
			memcpy(host, s, (size_t)(c - s));
			host[c - s] = '\0';
			port_s = c + 1;
		} else {
			snprintf(host, sizeof(host), "%s", s);
		}
	}
	if (port_s) {
		char *end;

		if (!*port_s)
			return -1;
		errno = 0;
		port = strtoul(port_s, &end, 10);
		if (errno || *end || port > 65535)
			return -1;
	}
	if (!strcmp(host, "*"))
		snprintf(host, sizeof(host), "0.0.0.0");
	{
		struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
			in4->sin_family = AF_INET;
			in4->sin_port = htons((uint16_t)port);
			*len = sizeof(*in4);
			return 0;
		}
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons((uint16_t)port);
			*len = sizeof(*in6);
			return 0;
		}
	}
	return -1;
}

void iscsit_sockaddr_str(const struct sockaddr_storage *ss, char *buf, size_t len, bool port)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in4 = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &in4->sin_addr, a, sizeof(a));
		if (port)
			snprintf(buf, len, "%s:%u", a, ntohs(in4->sin_port));
		else
			snprintf(buf, len, "%s", a);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], a, sizeof(a));
			if (port)
				snprintf(buf, len, "%s:%u", a, ntohs(in6->sin6_port));
			else
				snprintf(buf, len, "%s", a);
			return;
		}
		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		if (port)
			snprintf(buf, len, "[%s]:%u", a, ntohs(in6->sin6_port));
		else
			snprintf(buf, len, "%s", a);
	} else {
		snprintf(buf, len, "?");
	}
}

void iscsit_apply_sockopts(int fd, const struct iscsit_sockopts *o)
{
	int one = o->nodelay ? 1 : 0;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (o->sndbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o->sndbuf, sizeof(o->sndbuf));
	if (o->rcvbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &o->rcvbuf, sizeof(o->rcvbuf));
}

static bool is_wildcard(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
	return false;
}

static int open_one(struct iscsit_portal *p, char *err, size_t errlen)
{
	int one = 1;
	int fd = socket(p->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		snprintf(err, errlen, "listen %s: socket: %s", p->str, strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (p->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&p->addr, p->addrlen) < 0 || listen(fd, 128) < 0) {
		snprintf(err, errlen, "listen %s: %s", p->str, strerror(errno));
		close(fd);
		return -1;
	}
	p->fd = fd;
	if (!p->port) {
		/* port 0: the kernel chose one (tests); learn which */
		socklen_t len = sizeof(p->addr);

		getsockname(fd, (struct sockaddr *)&p->addr, &len);
		p->addrlen = len;
		p->port =
		    ntohs(p->family == AF_INET ? ((struct sockaddr_in *)&p->addr)->sin_port
					       : ((struct sockaddr_in6 *)&p->addr)->sin6_port);
	}
	return 0;
}

static void portal_ready(struct ut_watch *w, uint32_t events)
{
	struct iscsit_portal *p =
	    (struct iscsit_portal *)((char *)w - offsetof(struct iscsit_portal, watch));

	(void)events;
	iscsit_portal_accept(p->ctx, p);
}

struct iscsit_portal *iscsit_portal_add(struct iscsit_ctx *ctx, const char *str,
					const struct iscsit_xport *xp, char *err, size_t errlen)
{
	struct iscsit_portal *p;

	if (ctx->nportals == ctx->portal_cap) {
		snprintf(err, errlen, "portal %s: no room", str);
		return NULL;
	}
	p = &ctx->portals[ctx->nportals];
	memset(p, 0, sizeof(*p));
	p->xp = xp;
	p->ctx = ctx;
	p->fd = -1;
	if (iscsit_parse_portal(str, &p->addr, &p->addrlen)) {
		snprintf(err, errlen, "portal '%s': not ADDR:PORT", str);
		return NULL;
	}
	snprintf(p->str, sizeof(p->str), "%s", str);
	p->wildcard = is_wildcard(&p->addr);
	p->family = p->addr.ss_family;
	p->port = ntohs(p->family == AF_INET ? ((struct sockaddr_in *)&p->addr)->sin_port
					     : ((struct sockaddr_in6 *)&p->addr)->sin6_port);
	ctx->nportals++;
	return p;
}

int iscsit_portals_open(struct iscsit_ctx *ctx, unsigned extra, char *err, size_t errlen)
{
	const char *vals[64];
	unsigned n = tgt_attr_get_all(&ctx->drv->attrs, "listen", vals, 64);
	bool defaults = n == 0;

	if (defaults) {
		vals[0] = "0.0.0.0:3260";
		vals[1] = "[::]:3260";
		n = 2;
	}
	ctx->portals = calloc(n + extra, sizeof(*ctx->portals));
	if (!ctx->portals) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ctx->portal_cap = n + extra;
	for (unsigned i = 0; i < n; i++) {
		struct iscsit_portal *p =
		    iscsit_portal_add(ctx, vals[i], &iscsit_tcp_xport, err, errlen);

		if (!p) {
			snprintf(err, errlen, "listen '%s': not ADDR:PORT", vals[i]);
			return -1;
		}
		if (open_one(p, err, errlen)) {
			/* The default [::] may fail on a host without IPv6: not fatal then. */
			if (defaults && p->family == AF_INET6) {
				iscsit_log("%s (continuing without IPv6)", err);
				err[0] = '\0';
				ctx->nportals--;
				continue;
			}
			return -1;
		}
	}
	for (unsigned i = 0; i < ctx->nportals; i++) {
		struct iscsit_portal *p = &ctx->portals[i];
		int rc;

		p->watch.fn = portal_ready;
		p->watch.fd = p->fd;
		rc = ut_thread_watch(&ctx->workers[0].ut, &p->watch, EPOLLIN);
		if (rc) {
			snprintf(err, errlen, "listen %s: epoll: %s", p->str, strerror(-rc));
			return -1;
		}
		iscsit_log("listening on %s", p->str);
	}
	return 0;
}

static void portals_close_here(struct iscsit_ctx *ctx)
{
	for (unsigned i = 0; i < ctx->nportals; i++) {
		if (ctx->portals[i].fd >= 0) {
			if (ctx->nworkers)
				ut_thread_unwatch(&ctx->workers[0].ut, &ctx->portals[i].watch);
			close(ctx->portals[i].fd);
			ctx->portals[i].fd = -1;
		}
	}
}

static void close_fn(void *ctx)
{
	portals_close_here(ctx);
}

/* Worker 0 accepts on the portals, so it is the one that closes them: closed from another
 * thread, a portal's fd could be closed (and its number reused) while worker 0 is inside
 * accept4() on it.  The caller waits until they are closed. */
void iscsit_portals_close(struct iscsit_ctx *ctx)
{
	if (!ctx->nworkers) {
		portals_close_here(ctx);
		return;
	}
	ut_thread_call_sync(&ctx->workers[0].ut, close_fn, ctx);
}

/* One log line per interval for a condition that repeats (EMFILE, connections refused), with
 * how many were not logged: a flood of them must not become a flood of log. */
#define ACCEPT_LOG_INTERVAL 10 /* seconds */
#define ACCEPT_PAUSE_MS	    500

static void accept_log(struct iscsit_ctx *ctx, const char *fmt, const char *portal,
		       const char *what)
{
	time_t now = iscsit_now(&ctx->workers[0]);

	if (ctx->accept_log_at && now - ctx->accept_log_at < ACCEPT_LOG_INTERVAL) {
		ctx->accept_log_suppressed++;
		return;
	}
	if (ctx->accept_log_suppressed)
		iscsit_log("accept: %u more like the next in the last %d s",
			   ctx->accept_log_suppressed, ACCEPT_LOG_INTERVAL);
	ctx->accept_log_suppressed = 0;
	ctx->accept_log_at = now;
	iscsit_log(fmt, portal, what);
}

static void portals_arm(struct iscsit_ctx *ctx, bool on)
{
	for (unsigned i = 0; i < ctx->nportals; i++)
		if (ctx->portals[i].fd >= 0 && ctx->portals[i].xp == &iscsit_tcp_xport)
			ut_thread_modify(&ctx->workers[0].ut, &ctx->portals[i].watch,
					 on ? EPOLLIN : 0);
}

static void accept_resume(struct ut_timer *tm)
{
	struct iscsit_ctx *ctx =
	    (struct iscsit_ctx *)((char *)tm - offsetof(struct iscsit_ctx, accept_timer));

	ut_thread_del_timer(&ctx->workers[0].ut, tm);
	ctx->accept_paused = false;
	if (!atomic_load(&ctx->stopping))
		portals_arm(ctx, true);
}

/* Out of descriptors: stop accepting for a moment (the kernel keeps the backlog), and free
 * one descriptor per worker by dropping its oldest connection still logging in. */
static void accept_pause(struct iscsit_ctx *ctx)
{
	if (ctx->accept_paused)
		return;
	ctx->accept_paused = true;
	portals_arm(ctx, false);
	ctx->accept_timer.fn = accept_resume;
	ctx->accept_timer.period_ms = ACCEPT_PAUSE_MS;
	ut_thread_add_timer(&ctx->workers[0].ut, &ctx->accept_timer);
	iscsit_workers_shed_login(ctx);
}

void iscsit_portal_accept(struct iscsit_ctx *ctx, struct iscsit_portal *p)
{
	for (int i = 0; i < 64 && !ctx->accept_paused; i++) {
		int fd = accept4(p->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				accept_log(ctx, "accept on %s: %s: pausing accept, dropping the "
						"oldest logins",
					   p->str, strerror(errno));
				accept_pause(ctx);
			} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
				   errno != ECONNABORTED) {
				accept_log(ctx, "accept on %s: %s", p->str, strerror(errno));
			}
			return;
		}
		if (atomic_load(&ctx->stopping)) {
			close(fd);
			continue;
		}
		if (ctx->max_conns &&
		    atomic_load(&ctx->nconns) + atomic_load(&ctx->accepting) >= ctx->max_conns) {
			close(fd);
			accept_log(ctx, "accept on %s: %s: connection refused", p->str,
				   "max_connections reached");
			continue;
		}
		iscsit_apply_sockopts(fd, &ctx->sockopts);
		iscsit_tcp_adopt(ctx, fd, p);
	}
}
