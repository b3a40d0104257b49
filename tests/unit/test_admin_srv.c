/* The admin socket's server (admin_srv.c): a real Unix socket in a temp directory. */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "target/admin.h"
#include "target/tgt_jread.h"
#include "tests/unit/conf_test_util.h"

static char dir[40], path[64];
static struct tgt_config *cfg;
static struct admin_info ai;
static struct tgt_run run;

static void setup(void)
{
	struct captured cap;
	struct diag d;

	snprintf(dir, sizeof(dir), "/tmp/utgt-admin-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	cfg = load_str("HANDLER ramdisk {\n\tDEVICE r {\n\t\tsize_mb 1\n\t}\n}\n", &cap, &d);
	cr_assert_not_null(cfg);
	tgt_run_init(&run, cfg, "t.conf", "");
	ai = (struct admin_info){.run = &run, .version = "1.2.3", .started = time(NULL)};
}

static void teardown(void)
{
	unlink(path);
	rmdir(dir);
	tgt_config_free(cfg);
}

TestSuite(admin_srv, .init = setup, .fini = teardown);

static int conn(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "%s", strerror(errno));
	return fd;
}

/* Everything up to EOF (or "" after 8 s). */
static char *drain(int fd)
{
	static char buf[65536];
	size_t n = 0;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 8000) <= 0)
			break;
		ssize_t r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	close(fd);
	return buf;
}

static char *ask(const char *req, size_t len)
{
	int fd = conn();
	cr_assert_eq(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len);
	return drain(fd);
}

static struct admin_srv *start(void)
{
	char err[256] = "";
	struct admin_srv *s = admin_srv_open(path, err, sizeof(err));
	cr_assert_not_null(s, "%s", err);
	cr_assert_eq(admin_srv_serve(s, &ai, err, sizeof(err)), 0, "%s", err);
	return s;
}

Test(admin_srv, answers_one_line_with_one_json_line)
{
	struct admin_srv *s = start();
	struct stat st;

	cr_assert_eq(stat(path, &st), 0);
	cr_assert(S_ISSOCK(st.st_mode));
	cr_assert_eq(st.st_mode & 0777, 0600);
	char *a = ask("version\n", 8);
	cr_assert_eq(a[strlen(a) - 1], '\n', "%s", a);
	struct tgt_jv *v = tgt_jread(a, NULL);
	cr_assert_not_null(v, "%s", a);
	cr_assert_str_eq(tgt_jv_str(v, "version", ""), "1.2.3");
	tgt_jv_free(v);
	a = ask("nope\r\n", 6);
	cr_assert(strstr(a, "\"ok\":false") && strstr(a, "unknown command 'nope'"), "%s", a);
	admin_srv_stop(s);
	cr_assert_eq(access(path, F_OK), -1, "the socket file is removed at stop");
}

Test(admin_srv, an_over_long_line_gets_an_error_not_a_reset)
{
	struct admin_srv *s = start();
	char big[8000];

	memset(big, 'x', sizeof(big));
	char *a = ask(big, sizeof(big));
	cr_assert(strstr(a, "longer than 1023 bytes"), "%s", a);
	/* the documented message, not "show what?" */
	a = ask("show\0devices\n", 13);
	cr_assert(strstr(a, "\"ok\":false") && strstr(a, "NUL byte in request"), "%s", a);
	a = ask("show\0", 5); /* no newline at all */
	cr_assert(strstr(a, "NUL byte in request"), "%s", a);
	admin_srv_stop(s);
}

Test(admin_srv, a_silent_client_does_not_block_others_and_is_cut_off)
{
	struct admin_srv *s = start();
	int slow = conn();
	struct timespec t0, t1;

	cr_assert_eq(send(slow, "show", 4, 0), 4);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	char *a = ask("help\n", 5);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert(strstr(a, "show targets|sessions|devices"), "%s", a);
	/* not held up by the slow client: answered well before its deadline (a loaded machine
	 * can take a second or two; it was < 2 s) */
	cr_assert_lt(t1.tv_sec - t0.tv_sec, ADMIN_TIMEOUT_MS / 1000 - 1);
	a = drain(slow); /* EOF after ADMIN_TIMEOUT_MS, with no answer */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_str_eq(a, "");
	cr_assert_geq(t1.tv_sec - t0.tv_sec, ADMIN_TIMEOUT_MS / 1000 - 1);
	admin_srv_stop(s);
}

/* 24 silent clients, more than the 16 slots: a request is answered once they have been
 * silent for ADMIN_EVICT_MS (1 s), not after their 5 s deadlines (otherwise 1,000 silent
 * clients make utgtadm time out).  The oldest silent ones are closed to make
 * room. */
Test(admin_srv, silent_clients_do_not_starve_a_request)
{
	struct admin_srv *s = start();
	int silent[24];
	struct timespec t0, t1;

	for (int i = 0; i < 24; i++)
		silent[i] = conn();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	char *a = ask("version\n", 8);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert(strstr(a, "1.2.3"), "no answer behind 24 silent clients: '%s'", a);
	cr_assert_lt(t1.tv_sec - t0.tv_sec, ADMIN_TIMEOUT_MS / 1000 - 1,
		     "answered before any silent client's deadline");
	/* the first silent client was replaced: EOF, no answer */
	cr_assert_str_eq(drain(silent[0]), "");
	for (int i = 1; i < 24; i++)
		close(silent[i]);
	admin_srv_stop(s);
}

Test(admin_srv, a_client_gone_mid_answer_is_harmless)
{
	struct admin_srv *s = start();

	for (int i = 0; i < 50; i++) {
		int fd = conn();
		cr_assert_eq(send(fd, "show devices\n", 13, 0), 13);
		close(fd);
	}
	cr_assert(strstr(ask("version\n", 8), "1.2.3"));
	admin_srv_stop(s);
}

Test(admin_srv, a_live_socket_is_refused_a_stale_one_replaced)
{
	struct admin_srv *s = start();
	char err[256] = "";

	cr_assert_null(admin_srv_open(path, err, sizeof(err)));
	cr_assert(strstr(err, "another utgtd is running"), "%s", err);
	admin_srv_stop(s);

	/* a socket file nobody listens on: what a killed daemon leaves */
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	s = start();
	cr_assert(strstr(ask("version\n", 8), "1.2.3"));
	admin_srv_stop(s);

	/* a regular file is not ours to remove */
	FILE *f = fopen(path, "w");
	fclose(f);
	cr_assert_null(admin_srv_open(path, err, sizeof(err)));
	cr_assert(strstr(err, "not a socket"), "%s", err);
}

Test(admin_srv, a_path_too_long_is_refused)
{
	char longp[200], err[256] = "";

	memset(longp, 'p', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	cr_assert_null(admin_srv_open(longp, err, sizeof(err)));
	cr_assert(strstr(err, "path longer than"), "%s", err);
}
