/* utgt-bench TCP batching: a corked burst of small sends leaves in one segment, in order,
 * and a lone send is not corked at all (no extra system calls, nothing held back). */
#include <criterion/criterion.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "initiator/tcp_batch.h"

/* A connected loopback pair with Nagle off on the sender, as libiscsi sets it. */
static void pair(int *snd, int *rcv)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	cr_assert_geq(l, 0);
	cr_assert_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(l, 1), 0);
	cr_assert_eq(getsockname(l, (struct sockaddr *)&a, &len), 0);
	*snd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_eq(connect(*snd, (struct sockaddr *)&a, sizeof(a)), 0);
	*rcv = accept(l, NULL, NULL);
	cr_assert_geq(*rcv, 0);
	close(l);
	cr_assert_eq(setsockopt(*snd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)), 0);
}

static unsigned segs_out(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	cr_assert_eq(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len), 0);
	return ti.tcpi_segs_out;
}

static int corked(int fd)
{
	int v = -1;
	socklen_t len = sizeof(v);

	cr_assert_eq(getsockopt(fd, IPPROTO_TCP, TCP_CORK, &v, &len), 0);
	return v;
}

/* Read exactly n bytes (the peer's data may arrive in pieces). */
static void read_all(int fd, uint8_t *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = recv(fd, buf + got, n - got, 0);
		cr_assert_gt(r, 0, "peer closed after %zu of %zu bytes", got, n);
		got += (size_t)r;
	}
}

Test(bench_tcp_batch, a_corked_burst_leaves_in_one_segment_in_order)
{
	int s, r;
	uint8_t pdu[48], in[8 * 48];
	unsigned before;
	bool c;

	pair(&s, &r);
	before = segs_out(s);
	c = ub_tcp_batch_begin(s, 8);
	cr_assert(c);
	cr_assert_eq(corked(s), 1);
	for (int i = 0; i < 8; i++) {
		memset(pdu, 'a' + i, sizeof(pdu));
		cr_assert_eq(send(s, pdu, sizeof(pdu), 0), (ssize_t)sizeof(pdu));
	}
	ub_tcp_batch_end(s, c);
	cr_assert_eq(corked(s), 0);
	read_all(r, in, sizeof(in));
	/* One; two if the machine stalled past the cork's 200 ms timer mid-burst. */
	cr_assert_leq(segs_out(s) - before, 2, "8 corked sends took %u segments",
		      segs_out(s) - before);
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 48; k++)
			cr_assert_eq(in[i * 48 + k], 'a' + i, "byte %d of send %d", k, i);
	close(s);
	close(r);
}

Test(bench_tcp_batch, one_send_is_not_corked)
{
	int s, r;
	uint8_t pdu[48] = {7}, in[48];

	pair(&s, &r);
	cr_assert_not(ub_tcp_batch_begin(s, 1));
	cr_assert_not(ub_tcp_batch_begin(s, 0));
	cr_assert_eq(corked(s), 0);
	cr_assert_eq(send(s, pdu, sizeof(pdu), 0), (ssize_t)sizeof(pdu));
	read_all(r, in, sizeof(in)); /* sent at once: nothing waits for an uncork */
	cr_assert_eq(in[0], 7);
	ub_tcp_batch_end(s, false);
	cr_assert_eq(corked(s), 0);
	close(s);
	close(r);
}

Test(bench_tcp_batch, a_closed_connection_is_not_an_error)
{
	cr_assert_not(ub_tcp_batch_begin(-1, 8));
	ub_tcp_batch_end(-1, true); /* nothing to do, and no crash */
}
