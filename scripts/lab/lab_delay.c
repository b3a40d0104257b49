/* lab-delay: a fixed one-way delay for the multipath lab's links where the kernel has no
 * netem (sch_netem is not built into this machine's kernel; tc would answer "Specified qdisc
 * kind is unknown").  iptables sends every packet leaving a lab link to NFQUEUE; this program
 * holds each one for the delay and then lets it go, so it stands in for netem's `delay D`.
 *
 * Only packet metadata crosses to userspace (NFQNL_COPY_META) and GSO packets stay whole
 * (NFQA_CFG_F_GSO), so the cost is one netlink message per (super)packet.  Every packet gets
 * the same delay, so they leave in arrival order and one VERDICT_BATCH (accept every id up to
 * N) releases all that are due at once.  On SIGTERM/SIGINT everything still held is accepted
 * before exiting, so stopping the helper never drops traffic.
 *
 * usage: lab-delay --queue N --delay-us D [--stats FILE]
 * Runs in the foreground inside the network namespace whose packets it delays. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RING_CAP	 (1u << 17) /* packets held at once; the kernel queue is capped below it */
#define KERNEL_QUEUE_MAX 100000u    /* NFQA_CFG_QUEUE_MAXLEN */

struct held {
	uint32_t id;
	uint64_t due_ns;
};

static struct held ring[RING_CAP];
static unsigned r_head, r_len;
static volatile sig_atomic_t stop;

static struct {
	uint64_t packets, batches, late_sum_ns, late_max_ns, overflow;
} st;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Append one attribute; the buffer is sized by the caller for what it sends. */
static void put_attr(struct nlmsghdr *nh, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((char *)a + NLA_HDRLEN, data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static struct nlmsghdr *msg_start(char *buf, uint8_t type, uint16_t flags, uint16_t queue)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct nfgenmsg *g;

	memset(buf, 0, NLMSG_SPACE(sizeof(*g)));
	nh->nlmsg_len = NLMSG_LENGTH(sizeof(*g));
	nh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | type;
	nh->nlmsg_flags = NLM_F_REQUEST | flags;
	g = NLMSG_DATA(nh);
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	g->res_id = htons(queue);
	return nh;
}

/* Send a configuration message and wait for its acknowledgement. */
static int config(int fd, struct nlmsghdr *nh, const char *what)
{
	char buf[4096];
	ssize_t n;

	if (send(fd, nh, nh->nlmsg_len, 0) < 0) {
		fprintf(stderr, "lab-delay: %s: send: %s\n", what, strerror(errno));
		return -1;
	}
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "lab-delay: %s: recv: %s\n", what, strerror(errno));
			return -1;
		}
		for (struct nlmsghdr *r = (struct nlmsghdr *)buf; NLMSG_OK(r, (unsigned)n);
		     r = NLMSG_NEXT(r, n)) {
			if (r->nlmsg_type != NLMSG_ERROR)
				continue;
			int err = ((struct nlmsgerr *)NLMSG_DATA(r))->error;
			if (err) {
				fprintf(stderr, "lab-delay: %s: %s\n", what, strerror(-err));
				return -1;
			}
			return 0;
		}
	}
}

static int bind_queue(int fd, uint16_t queue)
{
	char buf[256];
	struct nlmsghdr *nh;
	struct nfqnl_msg_config_cmd cmd = {.command = NFQNL_CFG_CMD_BIND};
	struct nfqnl_msg_config_params par = {.copy_range = htonl(0), .copy_mode = NFQNL_COPY_META};
	uint32_t maxlen = htonl(KERNEL_QUEUE_MAX);
	uint32_t flags = htonl(NFQA_CFG_F_GSO);

	nh = msg_start(buf, NFQNL_MSG_CONFIG, NLM_F_ACK, queue);
	put_attr(nh, NFQA_CFG_CMD, &cmd, sizeof(cmd));
	if (config(fd, nh, "bind queue"))
		return -1;
	nh = msg_start(buf, NFQNL_MSG_CONFIG, NLM_F_ACK, queue);
	put_attr(nh, NFQA_CFG_PARAMS, &par, sizeof(par));
	put_attr(nh, NFQA_CFG_QUEUE_MAXLEN, &maxlen, sizeof(maxlen));
	put_attr(nh, NFQA_CFG_MASK, &flags, sizeof(flags));
	put_attr(nh, NFQA_CFG_FLAGS, &flags, sizeof(flags));
	return config(fd, nh, "configure queue");
}

/* Accept every queued packet with an id up to and including `id`. */
static void release_upto(int fd, uint16_t queue, uint32_t id)
{
	char buf[128];
	struct nlmsghdr *nh = msg_start(buf, NFQNL_MSG_VERDICT_BATCH, 0, queue);
	struct nfqnl_msg_verdict_hdr vh = {.verdict = htonl(NF_ACCEPT), .id = htonl(id)};

	put_attr(nh, NFQA_VERDICT_HDR, &vh, sizeof(vh));
	while (send(fd, nh, nh->nlmsg_len, 0) < 0 && errno == EINTR)
		;
	st.batches++;
}

static void release_due(int fd, uint16_t queue, uint64_t now)
{
	uint32_t last = 0;
	bool any = false;

	while (r_len && ring[r_head].due_ns <= now) {
		uint64_t late = now - ring[r_head].due_ns;

		st.late_sum_ns += late;
		if (late > st.late_max_ns)
			st.late_max_ns = late;
		last = ring[r_head].id;
		any = true;
		r_head = (r_head + 1) % RING_CAP;
		r_len--;
	}
	if (any)
		release_upto(fd, queue, last);
}

static void take(const struct nlmsghdr *nh, uint64_t due)
{
	int len = (int)nh->nlmsg_len - NLMSG_SPACE(sizeof(struct nfgenmsg));
	const struct nlattr *a = (const struct nlattr *)((const char *)NLMSG_DATA(nh) +
							 NLMSG_ALIGN(sizeof(struct nfgenmsg)));

	while (len >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		if ((a->nla_type & NLA_TYPE_MASK) == NFQA_PACKET_HDR) {
			const struct nfqnl_msg_packet_hdr *ph =
			    (const void *)((const char *)a + NLA_HDRLEN);

			if (r_len == RING_CAP) {
				/* Cannot happen while the kernel queue is capped below RING_CAP;
				 * if it does, the next batch verdict releases this packet early. */
				st.overflow++;
				return;
			}
			ring[(r_head + r_len) % RING_CAP] =
			    (struct held){.id = ntohl(ph->packet_id), .due_ns = due};
			r_len++;
			st.packets++;
			return;
		}
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: lab-delay --queue N --delay-us MICROSECONDS [--stats FILE]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"queue", required_argument, NULL, 'q'},
	    {"delay-us", required_argument, NULL, 'd'},
	    {"stats", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {0, 0, 0, 0},
	};
	long queue = -1, delay_us = -1;
	const char *stats = NULL;
	static char buf[1 << 16];
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	int fd, one = 1, rcvbuf = 16 << 20, c;
	struct sigaction sig = {.sa_handler = on_signal};

	while ((c = getopt_long(argc, argv, "q:d:s:h", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'q':
			queue = strtol(optarg, &end, 10);
			if (*end || queue < 0 || queue > 65535)
				queue = -2;
			break;
		case 'd':
			delay_us = strtol(optarg, &end, 10);
			if (*end || delay_us < 0 || delay_us > 10000000)
				delay_us = -2;
			break;
		case 's':
			stats = optarg;
			break;
		default:
			usage();
			return c == 'h' ? 0 : 2;
		}
	}
	if (queue < 0 || delay_us < 0 || optind != argc) {
		usage();
		return 2;
	}
	sigaction(SIGTERM, &sig, NULL);
	sigaction(SIGINT, &sig, NULL);
	/* Sleep as close to the deadline as the timer allows (default slack is 50 us). */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "lab-delay: netlink socket: %s\n", strerror(errno));
		return 1;
	}
	/* A lost notification would leave its packet queued until the next batch verdict;
	 * a deep socket buffer keeps that from happening, NO_ENOBUFS keeps recv() quiet if it
	 * does anyway. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));
	if (bind_queue(fd, (uint16_t)queue))
		return 1;
	fprintf(stderr, "lab-delay: queue %ld, delay %ld us\n", queue, delay_us);

	while (!stop) {
		uint64_t now = now_ns();
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		struct timespec ts, *tsp = NULL;

		release_due(fd, (uint16_t)queue, now);
		if (r_len) {
			uint64_t wait = ring[r_head].due_ns - now;

			ts.tv_sec = (time_t)(wait / 1000000000ull);
			ts.tv_nsec = (long)(wait % 1000000000ull);
			tsp = &ts;
		}
		if (ppoll(&pfd, 1, tsp, NULL) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "lab-delay: poll: %s\n", strerror(errno));
			break;
		}
		if (!(pfd.revents & POLLIN))
			continue;
		for (;;) {
			ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
			uint64_t due;

			if (n <= 0)
				break;
			due = now_ns() + (uint64_t)delay_us * 1000ull;
			for (struct nlmsghdr *nh = (struct nlmsghdr *)buf;
			     NLMSG_OK(nh, (unsigned)n); nh = NLMSG_NEXT(nh, n))
				if (nh->nlmsg_type == ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET))
					take(nh, due);
		}
	}
	/* Let everything still held go rather than have the kernel drop it with the queue. */
	if (r_len)
		release_upto(fd, (uint16_t)queue, ring[(r_head + r_len - 1) % RING_CAP].id);
	if (stats) {
		FILE *f = fopen(stats, "w");

		if (f) {
			fprintf(f,
				"packets %llu batches %llu late_mean_us %.1f late_max_us %.1f "
				"overflow %llu\n",
				(unsigned long long)st.packets, (unsigned long long)st.batches,
				st.packets ? (double)st.late_sum_ns / (double)st.packets / 1e3
					   : 0.0,
				(double)st.late_max_ns / 1e3, (unsigned long long)st.overflow);
			fclose(f);
		}
	}
	close(fd);
	return 0;
}
