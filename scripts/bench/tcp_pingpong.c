/* The loopback floor under a QD1 4 KiB READ: one TCP connection, a 48-byte request (an iSCSI
 * basic header segment) answered by 4,144 bytes (a Data-In header and 4 KiB, status in it),
 * round trip after round trip.  What a target adds to QD1 latency is its figure minus this.
 *
 *   tcp_pingpong SECONDS      -> "rtt_us N round_trips M"
 *
 * The answering side is a forked child, so the two ends run as two processes the way an
 * initiator and a target do.  Built by scripts/bench/vs-tgtd.sh (cc -O2). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REQ 48
#define ANS 4144

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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static char buf[ANS];
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	double secs = argc > 1 ? atof(argv[1]) : 5, t0, t1;
	int one = 1, ls, fd;
	unsigned long n = 0;
	pid_t child;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &al)) {
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
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while (!full(c, buf, REQ, 0) && !full(c, buf, ANS, 1))
			;
		_exit(0);
	}
	close(ls);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("connect");
		kill(child, SIGKILL);
		return 1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	t0 = now();
	do {
		for (int i = 0; i < 100; i++, n++)
			if (full(fd, buf, REQ, 1) || full(fd, buf, ANS, 0)) {
				perror("round trip");
				kill(child, SIGKILL);
				return 1;
			}
		t1 = now();
	} while (t1 - t0 < secs);
	close(fd);
	waitpid(child, NULL, 0);
	printf("rtt_us %.1f round_trips %lu\n", (t1 - t0) * 1e6 / n, n);
	return 0;
}
