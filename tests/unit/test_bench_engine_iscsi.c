/* utgt-bench iSCSI engine: option limits of libiscsi, and the errors a user sees for an
 * unreachable portal, a silent one, and a rejected login (a scripted loopback peer). */
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "initiator/engine.h"

static struct ub_eng_opts opts(void)
{
	return (struct ub_eng_opts){.header_digest = -1,
				    .data_digest = -1,
				    .nodelay = -1,
				    .initial_r2t = -1,
				    .immediate_data = -1,
				    .connect_timeout_ms = 400};
}

Test(bench_engine_iscsi, what_libiscsi_cannot_negotiate_is_refused_up_front)
{
	struct ub_eng_opts o = opts();
	char err[256];

	o.data_digest = 1;
	cr_assert_null(ub_engine_iscsi.create("iscsi://127.0.0.1/iqn.a/0", &o, err, sizeof(err)));
	cr_assert(strstr(err, "DataDigest"), "%s", err);
	o = opts();
	o.max_recv_dsl = 65536;
	cr_assert_null(ub_engine_iscsi.create("iscsi://127.0.0.1/iqn.a/0", &o, err, sizeof(err)));
	cr_assert(strstr(err, "MaxRecvDataSegmentLength"), "%s", err);
	o = opts();
	cr_assert_null(ub_engine_iscsi.create("iscsi://127.0.0.1/iqn.a", &o, err, sizeof(err)));
	cr_assert(strstr(err, "LUN") || strstr(err, "lun"), "%s", err);
}

/* A listening socket on a free loopback port; keep_listening=false closes it so the port
 * refuses connections. */
static int listener(int *port, bool keep_listening)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(fd, 4), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	if (!keep_listening) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct ub_epath *connect_to(int port, enum ub_path_state *final)
{
	struct ub_eng_opts o = opts();
	char url[128], err[256];
	struct ub_epath *p;
	bool never = false;

	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%d/iqn.2026-12.org.utgt:t/0", port);
	p = ub_engine_iscsi.create(url, &o, err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	if (ub_engine_iscsi.connect(p) == 0)
		ub_epath_wait(&ub_engine_iscsi, p, &never, ub_now_ns() + 3000000000ull);
	*final = ub_engine_iscsi.state(p);
	return p;
}

Test(bench_engine_iscsi, unreachable_portal)
{
	int port;
	enum ub_path_state st;
	struct ub_epath *p;

	listener(&port, false);
	p = connect_to(port, &st);
	cr_assert_eq(st, UB_PS_DOWN);
	cr_assert(strstr(ub_engine_iscsi.last_error(p), "cannot connect to 127.0.0.1:") &&
		      strstr(ub_engine_iscsi.last_error(p), "refused"),
		  "%s", ub_engine_iscsi.last_error(p));
	ub_engine_iscsi.destroy(p);
}

Test(bench_engine_iscsi, silent_portal_times_out)
{
	int port, fd = listener(&port, true);
	enum ub_path_state st;
	struct ub_epath *p = connect_to(port, &st);

	cr_assert_eq(st, UB_PS_DOWN);
	cr_assert(strstr(ub_engine_iscsi.last_error(p), "timed out"), "%s",
		  ub_engine_iscsi.last_error(p));
	ub_engine_iscsi.destroy(p);
	close(fd);
}

/* Answers the first login request with status class 2, detail 1. */
static void *reject_login(void *arg)
{
	int lfd = *(int *)arg, c = accept(lfd, NULL, NULL);
	uint8_t req[48], rsp[48] = {0}, skip[8192];
	size_t dlen;

	if (c < 0)
		return NULL;
	if (recv(c, req, 48, MSG_WAITALL) != 48)
		goto out;
	dlen = (size_t)req[5] << 16 | (size_t)req[6] << 8 | req[7];
	dlen = (dlen + 3) & ~(size_t)3;
	if (dlen > sizeof(skip) || recv(c, skip, dlen, MSG_WAITALL) != (ssize_t)dlen)
		goto out;
	rsp[0] = 0x23;		       /* Login Response */
	rsp[2] = req[2], rsp[3] = 0;   /* version-max/active */
	memcpy(rsp + 8, req + 8, 8);   /* ISID, TSIH */
	memcpy(rsp + 16, req + 16, 4); /* ITT */
	rsp[31] = 1, rsp[35] = 1;      /* ExpCmdSN, MaxCmdSN */
	rsp[36] = 0x02, rsp[37] = 0x01;
	if (send(c, rsp, 48, 0) != 48)
		goto out;
	/* wait for the initiator to hang up */
	while (recv(c, skip, sizeof(skip), 0) > 0)
		;
out:
	close(c);
	return NULL;
}

Test(bench_engine_iscsi, rejected_login_names_the_status)
{
	int port, fd = listener(&port, true);
	pthread_t t;
	enum ub_path_state st;
	struct ub_epath *p;

	cr_assert_eq(pthread_create(&t, NULL, reject_login, &fd), 0);
	p = connect_to(port, &st);
	cr_assert_eq(st, UB_PS_DOWN);
	cr_assert(strstr(ub_engine_iscsi.last_error(p),
			 "rejected: status class 0x02 (initiator error), detail 0x01: "
			 "Authentication failure"),
		  "%s", ub_engine_iscsi.last_error(p));
	ub_engine_iscsi.destroy(p);
	pthread_join(t, NULL);
	close(fd);
}

/* A path given up is reset, not closed with a FIN: a graceful close would leave its unsent
 * PDUs to the kernel, which delivers them when the link comes back, after multipath has
 * retried the writes on another path (the lab's failover saw exactly that lost write). */
Test(bench_engine_iscsi, a_failed_path_is_reset_not_closed)
{
	int port, lfd = listener(&port, true), c;
	struct ub_eng_opts o = opts();
	char url[128], err[256];
	uint8_t req[48], rest[8192];
	struct ub_epath *p;
	bool never = false;
	ssize_t n;

	o.connect_timeout_ms = 5000;
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%d/iqn.2026-12.org.utgt:t/0", port);
	p = ub_engine_iscsi.create(url, &o, err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	cr_assert_eq(ub_engine_iscsi.connect(p), 0);
	c = accept(lfd, NULL, NULL);
	cr_assert_geq(c, 0);
	/* drive the engine until its login request is on the wire, then read it */
	ub_epath_wait(&ub_engine_iscsi, p, &never, ub_now_ns() + 300000000ull);
	cr_assert_eq(recv(c, req, 48, MSG_WAITALL), 48, "no login request");
	cr_assert_eq(req[0] & 0x3f, 0x03, "opcode %#x is not a login request", req[0]);
	ub_engine_iscsi.disconnect(p, "test gives the path up");
	do
		n = recv(c, rest, sizeof(rest), 0);
	while (n > 0);
	cr_assert_eq(n, -1, "the peer saw an orderly close (FIN), not a reset");
	cr_assert_eq(errno, ECONNRESET, "recv: %s", strerror(errno));
	ub_engine_iscsi.destroy(p);
	close(c);
	close(lfd);
}

/* iser://: what libiscsi 1.19's iSER transport cannot do is refused before connecting. */
Test(bench_engine_iscsi, iser_limits_are_refused_up_front)
{
	const char *url = "iser://127.0.0.1/iqn.2026-12.org.utgt:iser/0";
	struct ub_eng_opts o = opts();
	struct ub_epath *p;
	char err[512];

	o.max_io_bytes = 512 * 1024;
	cr_assert_null(ub_engine_iscsi.create(url, &o, err, sizeof(err)));
	cr_assert(strstr(err, "bs=524288") && strstr(err, "256 KiB"), "%s", err);
	o = opts();
	o.header_digest = 1;
	cr_assert_null(ub_engine_iscsi.create(url, &o, err, sizeof(err)));
	cr_assert(strstr(err, "digest"), "%s", err);
	o = opts();
	o.immediate_data = 1;
	cr_assert_null(ub_engine_iscsi.create(url, &o, err, sizeof(err)));
	cr_assert(strstr(err, "immediate"), "%s", err);
	o = opts();
	o.initial_r2t = 0;
	cr_assert_null(ub_engine_iscsi.create(url, &o, err, sizeof(err)));
	cr_assert(strstr(err, "initial-r2t"), "%s", err);
	o = opts();
	cr_assert_null(ub_engine_iscsi.create("iser://u%secret123456@127.0.0.1/iqn.a/0", &o, err,
					      sizeof(err)));
	cr_assert(strstr(err, "CHAP is not available over iser://"), "%s", err);
	o.max_io_bytes = 256 * 1024; /* the largest libiscsi moves */
	p = ub_engine_iscsi.create(url, &o, err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	ub_engine_iscsi.destroy(p);
	/* the same limits do not apply over TCP */
	o.max_io_bytes = 1 << 20;
	p = ub_engine_iscsi.create("iscsi://127.0.0.1/iqn.a/0", &o, err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	ub_engine_iscsi.destroy(p);
}

/* Without an iSER listener (on this host: without RDMA at all) connecting fails at once with a
 * message naming the portal, never a hang. */
Test(bench_engine_iscsi, iser_without_listener_fails_with_a_reason, .timeout = 30)
{
	struct ub_eng_opts o = opts();
	struct ub_epath *p;
	char err[512];
	bool never = false;
	uint64_t t0 = ub_now_ns();

	p = ub_engine_iscsi.create("iser://127.0.0.1:1/iqn.2026-12.org.utgt:iser/0", &o, err,
				   sizeof(err));
	cr_assert_not_null(p, "%s", err);
	if (ub_engine_iscsi.connect(p) == 0)
		ub_epath_wait(&ub_engine_iscsi, p, &never, ub_now_ns() + 10000000000ull);
	cr_assert_eq(ub_engine_iscsi.state(p), UB_PS_DOWN);
	cr_assert(strstr(ub_engine_iscsi.last_error(p), "no iSER connection to 127.0.0.1:1"), "%s",
		  ub_engine_iscsi.last_error(p));
	cr_assert_lt(ub_now_ns() - t0, 15000000000ull);
	ub_engine_iscsi.destroy(p);
}
