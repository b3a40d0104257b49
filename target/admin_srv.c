/* The admin socket's server: a Unix stream socket served by one thread of its own, so a slow
 * or hostile client never touches an I/O worker.  Every client socket is non-blocking and has
 * a deadline (ADMIN_TIMEOUT_MS) for sending its line and taking its answer; a line longer
 * than ADMIN_LINE_MAX gets an error answer; ADMIN_MAX_CLIENTS are served at once, and a new
 * connection replaces the oldest one that has not sent its line yet.  One
 * request per connection: the answer ends with a newline and the server closes. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "target/admin.h"

struct client {
	int fd;
	char in[ADMIN_LINE_MAX];
	size_t inlen;
	struct ut_json out; /* the answer, once the line is in */
	size_t outoff;
	bool answering;
	bool draining;	    /* answered: discard input until the client closes (no RST) */
	long long deadline; /* ms, CLOCK_MONOTONIC */
};

struct admin_srv {
	int lfd, wake;
	char path[PATH_MAX];
	const struct admin_info *ai;
	pthread_t thr;
	bool running;
	struct client cl[ADMIN_MAX_CLIENTS];
	unsigned ncl;
	struct admin_req req; /* the one being answered (clients are answered one at a time) */
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void client_close(struct admin_srv *s, unsigned i)
{
	close(s->cl[i].fd);
	ut_json_free(&s->cl[i].out);
	s->cl[i] = s->cl[--s->ncl];
}

/* The line is complete (or refused): build the answer, newline-terminated. */
static void client_answer(struct admin_srv *s, struct client *c, const char *refusal)
{
	struct admin_req *req = &s->req;
	char err[256];

	ut_json_init(&c->out);
	if (refusal)
		admin_error(&c->out, refusal);
	else if (admin_req_parse(c->in, req, err, sizeof(err)) != 0)
		admin_error(&c->out, err);
	else
		admin_answer(s->ai, req, &c->out);
	if (c->out.oom) {
		ut_json_free(&c->out);
		ut_json_init(&c->out);
		admin_error(&c->out, "out of memory");
	}
	ut_json_raw(&c->out, "\n");
	if (c->out.oom) /* not even the error fits: close without an answer */
		c->out.len = 0;
	c->answering = true;
	c->outoff = 0;
	/* a change may take a while (it waits for in-flight commands): that was the daemon's
	 * time, the client gets its own to take the answer */
	c->deadline = now_ms() + ADMIN_TIMEOUT_MS;
}

/* false: the client is finished (answered, gone or broken) and must be closed. */
static bool client_io(struct admin_srv *s, struct client *c)
{
	while (c->draining) {
		char junk[4096];
		ssize_t r = recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (r < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		if (r == 0)
			return false;
	}
	while (!c->answering) {
		ssize_t r =
		    recv(c->fd, c->in + c->inlen, sizeof(c->in) - 1 - c->inlen, MSG_DONTWAIT);
		if (r < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		if (r == 0)
			return false; /* gone before its newline: nothing to answer */
		c->inlen += (size_t)r;
		c->in[c->inlen] = '\0';
		char *nl = memchr(c->in, '\n', c->inlen);
		/* a NUL before the newline, not only one without a newline: "show\0x\n"
		 * must not be read as "show" */
		if (memchr(c->in, '\0', nl ? (size_t)(nl - c->in) : c->inlen)) {
			client_answer(s, c, "NUL byte in request");
		} else if (nl) {
			*nl = '\0';
			client_answer(s, c, NULL);
		} else if (c->inlen == sizeof(c->in) - 1) {
			char msg[64];
			snprintf(msg, sizeof(msg), "request longer than %d bytes",
				 ADMIN_LINE_MAX - 1);
			client_answer(s, c, msg);
		}
	}
	while (c->outoff < c->out.len) {
		ssize_t w = send(c->fd, c->out.buf + c->outoff, c->out.len - c->outoff,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		c->outoff += (size_t)w;
	}
	/* Answered in full.  Closing now with unread input (the rest of an over-long line)
	 * would reset the connection and could destroy the answer in flight: send our FIN and
	 * read until the client's, for a second at most. */
	shutdown(c->fd, SHUT_WR);
	c->draining = true;
	if (c->deadline > now_ms() + 1000)
		c->deadline = now_ms() + 1000;
	return client_io(s, c);
}

/* The oldest client that has been sending its line for ADMIN_EVICT_MS or more without
 * finishing it (a slower one may still be a real client that connected before writing), or
 * -1. */
static int oldest_unanswered(const struct admin_srv *s, long long now)
{
	int best = -1;

	for (unsigned i = 0; i < s->ncl; i++)
		if (!s->cl[i].answering &&
		    s->cl[i].deadline - ADMIN_TIMEOUT_MS + ADMIN_EVICT_MS <= now &&
		    (best < 0 || s->cl[i].deadline < s->cl[best].deadline))
			best = (int)i;
	return best;
}

/* Accept while there is room.  When every slot is taken, a new connection replaces the
 * oldest client that has been silent for ADMIN_EVICT_MS: a crowd of silent clients must not
 * make a real request wait for their deadlines one slot at a time (1,000 of them would
 * make utgtadm time out);
 * otherwise the connection waits in the listen backlog. */
static void accept_all(struct admin_srv *s)
{
	for (;;) {
		int victim = -1;

		if (s->ncl == ADMIN_MAX_CLIENTS && (victim = oldest_unanswered(s, now_ms())) < 0)
			return;
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (victim >= 0)
			client_close(s, (unsigned)victim);
		struct client *c = &s->cl[s->ncl++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->deadline = now_ms() + ADMIN_TIMEOUT_MS;
	}
}

static void *srv_thread(void *arg)
{
	struct admin_srv *s = arg;
	struct pollfd p[2 + ADMIN_MAX_CLIENTS];

	for (;;) {
		long long now = now_ms(), next = now + 60000;
		unsigned n = 2;

		for (unsigned i = 0; i < s->ncl;) {
			if (s->cl[i].deadline <= now) {
				client_close(s, i); /* too slow: reading or taking the answer */
				continue;
			}
			if (s->cl[i].deadline < next)
				next = s->cl[i].deadline;
			i++;
		}
		p[0] = (struct pollfd){.fd = s->wake, .events = POLLIN};
		if (s->ncl == ADMIN_MAX_CLIENTS) {
			/* wake when the oldest silent client may be replaced */
			for (unsigned i = 0; i < s->ncl; i++) {
				long long at = s->cl[i].deadline - ADMIN_TIMEOUT_MS + ADMIN_EVICT_MS;

				if (!s->cl[i].answering && at > now && at < next)
					next = at;
			}
		}
		p[1] = (struct pollfd){.fd = s->lfd,
				       .events = s->ncl < ADMIN_MAX_CLIENTS ||
						 oldest_unanswered(s, now) >= 0
						     ? POLLIN
						     : 0};
		for (unsigned i = 0; i < s->ncl; i++)
			p[n++] = (struct pollfd){
			    .fd = s->cl[i].fd,
			    .events = s->cl[i].answering && !s->cl[i].draining ? POLLOUT : POLLIN};
		int r = poll(p, n, (int)(next - now) + 1);
		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0)
			continue;
		if (p[0].revents)
			break;
		/* clients first, by index from the end, since closing moves the last one down */
		for (unsigned k = n; k-- > 2;) {
			unsigned i = k - 2;
			if (p[k].revents && !client_io(s, &s->cl[i]))
				client_close(s, i);
		}
		if (p[1].revents & POLLIN)
			accept_all(s);
	}
	while (s->ncl)
		client_close(s, s->ncl - 1);
	return NULL;
}

/* A socket file at path: a live daemon answers a connect, a stale file refuses it. */
static int claim_path(const struct sockaddr_un *sa, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(sa->sun_path, &st) < 0)
		return errno == ENOENT ? 0
				       : (snprintf(err, errlen, "admin socket %s: %s", sa->sun_path,
						   strerror(errno)),
					  -1);
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "admin socket %s: exists and is not a socket", sa->sun_path);
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	int r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	int e = errno;
	close(fd);
	if (r == 0) {
		snprintf(err, errlen, "admin socket %s: another utgtd is running and answers on it",
			 sa->sun_path);
		return -1;
	}
	if (e != ECONNREFUSED) {
		snprintf(err, errlen, "admin socket %s: %s", sa->sun_path, strerror(e));
		return -1;
	}
	if (unlink(sa->sun_path) < 0 && errno != ENOENT) {
		snprintf(err, errlen, "admin socket %s: stale, cannot remove: %s", sa->sun_path,
			 strerror(errno));
		return -1;
	}
	return 0;
}

struct admin_srv *admin_srv_open(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct admin_srv *s;
	char cwd[PATH_MAX];
	mode_t old;

	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->lfd = s->wake = -1;
	/* absolute: the daemon changes to / before serving, and unlinks this at exit */
	int plen;
	if (path[0] != '/' && getcwd(cwd, sizeof(cwd)))
		plen = snprintf(s->path, sizeof(s->path), "%s/%s", cwd, path);
	else
		plen = snprintf(s->path, sizeof(s->path), "%s", path);
	if (plen < 0 || (size_t)plen >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "admin socket %s: path longer than %zu bytes", s->path,
			 sizeof(sa.sun_path) - 1);
		goto fail;
	}
	memcpy(sa.sun_path, s->path, strlen(s->path) + 1);
	if (claim_path(&sa, err, errlen) != 0)
		goto fail;
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	s->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->lfd < 0 || s->wake < 0) {
		snprintf(err, errlen, "admin socket: %s", strerror(errno));
		goto fail;
	}
	old = umask(0177); /* born 0600: no window where others may connect */
	int r = bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || listen(s->lfd, 64) < 0) {
		snprintf(err, errlen, "admin socket %s: %s", s->path, strerror(errno));
		goto fail;
	}
	if (chmod(s->path, 0600) < 0) {
		snprintf(err, errlen, "admin socket %s: chmod: %s", s->path, strerror(errno));
		unlink(s->path);
		goto fail;
	}
	return s;
fail:
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->wake >= 0)
		close(s->wake);
	free(s);
	return NULL;
}

int admin_srv_serve(struct admin_srv *s, const struct admin_info *ai, char *err, size_t errlen)
{
	s->ai = ai;
	if (pthread_create(&s->thr, NULL, srv_thread, s) != 0) {
		snprintf(err, errlen, "admin socket: cannot start its thread");
		return -1;
	}
	s->running = true;
	return 0;
}

const char *admin_srv_path(const struct admin_srv *s)
{
	return s->path;
}

void admin_srv_stop(struct admin_srv *s)
{
	uint64_t one = 1;

	if (!s)
		return;
	if (s->running) {
		ssize_t w = write(s->wake, &one, sizeof(one));
		(void)w;
		pthread_join(s->thr, NULL);
	}
	close(s->lfd);
	close(s->wake);
	unlink(s->path);
	free(s);
}
