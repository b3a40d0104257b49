/* The loopback floor under a 4 KiB READ: one TCP connection, 48-byte requests (an iSCSI basic
 * header segment) each answered by 4,144 bytes (a Data-In header and 4 KiB, status in it).
 *
 *   tcp_pingpong SECONDS [DEPTH [STORE_MIB]]
 *     -> "rtt_us N round_trips M server_cpu_us C server_rounds_per_answer R"
 *
 * DEPTH (default 1) requests are kept outstanding.  At depth 1 rtt_us is the floor under QD1
 * latency: what a target adds is its figure minus this.  server_cpu_us is the answering
 * process's user+system CPU per answer: the least an event-loop target can spend on the same
 * socket work at the same depth, so at QD32 it is the floor under a target's CPU per I/O.
 * With STORE_MIB each answer's 4 KiB comes from a random page of a store that size (touched
 * before the run), as a READ of a RAM-backed LU's does; without it every answer sends the same
 * cached buffer.  The rounds (wake-ups) per answer say how well the client batched: the
 * floor holds for a target at the same figure, and falls as the rounds do.
 *
 * The answering side is a forked child, so the two ends run as two processes the way an
 * initiator and a target do.  It serves the way utgtd's workers do: a level-triggered epoll
 * wait, one non-blocking receive of whatever requests have arrived (stopping at a short read),
 * and the answers to all of them in one sendmsg().  Built by scripts/bench/vs-tgtd.sh. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REQ 48
#define ANS 4144
#define MAX_DEPTH 256

static int full(int fd, char *p, size_t n, int wr)
{
	while (n) {
		ssize_t r = wr ? write(fd, p, n) : read(fd, p, n);
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Write every byte of iov[0..n), resuming after a short write. */
static int send_all(int fd, struct iovec *iov, int n)
{
	while (n) {
		struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
		ssize_t r = sendmsg(fd, &m, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		while (n && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (char *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The target's side: answer every whole request received; the answer count is the exit
 * status's stand-in, written to the pipe wfd when the initiator closes. */
static void serve(int c, int wfd, size_t store_pages)
{
	static char in[MAX_DEPTH * REQ + REQ], ans[ANS];
	struct iovec iov[MAX_DEPTH];
	struct epoll_event ev = {.events = EPOLLIN};
	unsigned long counts[2] = {0, 0}; /* answers, rounds */
	unsigned seed = 1;
	size_t have = 0;
	char *store = NULL;
	int ep = epoll_create1(0);

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev))
		_exit(1);
	if (store_pages) {
		/* one page more: the last answer's 48 header bytes run past its page */
		store = malloc((store_pages + 1) * 4096);
		if (!store)
			_exit(1);
		memset(store, 1, (store_pages + 1) * 4096);
	}
	for (;;) {
		ssize_t r;
		int k;

		if (epoll_wait(ep, &ev, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		r = recv(c, in + have, sizeof(in) - have, MSG_DONTWAIT);
		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			break;
		}
		have += (size_t)r;
		k = (int)(have / REQ);
		have %= REQ;
		for (int i = 0; i < k; i++) {
			char *p = store ? store + (size_t)rand_r(&seed) % store_pages * 4096 : ans;
			iov[i] = (struct iovec){.iov_base = p, .iov_len = ANS};
		}
		if (k && send_all(c, iov, k))
			break;
		counts[0] += (unsigned long)k;
		counts[1]++;
	}
	if (write(wfd, counts, sizeof(counts)) != sizeof(counts))
		_exit(1);
	_exit(0);
}

int main(int argc, char **argv)
{
	static char req[MAX_DEPTH * REQ], buf[64 * 1024];
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	double secs = argc > 1 ? atof(argv[1]) : 5, t0, t1;
	int depth = argc > 2 ? atoi(argv[2]) : 1;
	size_t store_pages = argc > 3 ? (size_t)atol(argv[3]) * 256 : 0;
	int one = 1, ls, fd, pfd[2];
	unsigned long n = 0, counts[2] = {0, 0}; /* answers, rounds */
	size_t pending = 0; /* bytes of answers received past the last whole one */
	struct rusage ru;
	pid_t child;

	if (depth < 1 || depth > MAX_DEPTH) {
		fprintf(stderr, "depth must be 1..%d\n", MAX_DEPTH);
		return 2;
	}
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &al) || pipe(pfd)) {
		perror("listen");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		int c = accept(ls, NULL, NULL);
		if (c < 0)
			_exit(1);
		close(pfd[0]);
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		serve(c, pfd[1], store_pages);
	}
	close(ls);
	close(pfd[1]);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("connect");
		kill(child, SIGKILL);
		return 1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	t0 = now();
	if (full(fd, req, (size_t)depth * REQ, 1))
		goto fail;
	do {
		/* Each answer completed sends a new request: the queue stays depth deep. */
		ssize_t r = read(fd, buf, depth == 1 ? ANS - pending : sizeof(buf));
		size_t done;

		if (r <= 0)
			goto fail;
		pending += (size_t)r;
		done = pending / ANS;
		pending %= ANS;
		if (done && full(fd, req, done * REQ, 1))
			goto fail;
		n += done;
		t1 = now();
	} while (t1 - t0 < secs);
	shutdown(fd, SHUT_WR);
	while (read(fd, buf, sizeof(buf)) > 0) /* the answers still in flight */
		;
	close(fd);
	if (read(pfd[0], counts, sizeof(counts)) != sizeof(counts) ||
	    wait4(child, NULL, 0, &ru) != child || !counts[0]) {
		fprintf(stderr, "the answering side failed\n");
		return 1;
	}
	printf("rtt_us %.1f round_trips %lu server_cpu_us %.2f server_rounds_per_answer %.3f\n",
	       (t1 - t0) * 1e6 * depth / n, n,
	       ((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec +
		ru.ru_stime.tv_usec) / (double)counts[0],
	       (double)counts[1] / (double)counts[0]);
	return 0;
fail:
	perror("round trip");
	kill(child, SIGKILL);
	return 1;
}
