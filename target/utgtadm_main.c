/* utgtadm: ask a running utgtd what it serves, over its admin socket (docs/admin.md).
 *
 *   utgtadm [-s SOCKET] [--json] show sessions|devices|targets
 *   utgtadm [-s SOCKET] [--json] version|help
 *
 * One request line out, one JSON answer back; printed as tables, or raw with --json.
 * Exit: 0 answered, 1 the daemon answered with an error, 2 usage, cannot connect, no or
 * malformed answer. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "target/admin.h"
#include "target/tgt_jread.h"

#define DEFAULT_SOCKET	 "/var/lib/utgt/utgtd.sock"
#define CLIENT_TIMEOUT_S 10
#define ANSWER_MAX	 (64u << 20)

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "NAME\n"
	    "    utgtadm - query a running utgtd over its admin socket\n"
	    "\n"
	    "SYNOPSIS\n"
	    "    utgtadm [-s SOCKET] [--json] show sessions|devices|targets\n"
	    "    utgtadm [-s SOCKET] [--json] version|help\n"
	    "\n"
	    "DESCRIPTION\n"
	    "    show sessions  every logged-in I_T nexus: driver, target, initiator name and\n"
	    "                   port (ISID), connections (local and peer address, serving\n"
	    "                   worker), negotiated iSCSI keys, and counters: commands, bytes\n"
	    "                   read and written, errors (CHECK CONDITION), task management\n"
	    "    show devices   every LU device: handler, size, block size, sessions that\n"
	    "                   address it, media read/write commands and bytes, errors\n"
	    "    show targets   drivers, their portals, targets, LUNs and the devices behind them\n"
	    "    version        the daemon's version, pid, uptime and configuration file\n"
	    "\n"
	    "OPTIONS\n"
	    "    -s, --socket PATH  the daemon's admin socket (default " DEFAULT_SOCKET ",\n"
	    "                       i.e. <state-dir>/utgtd.sock; see utgtd --admin-socket)\n"
	    "    -j, --json         print the daemon's JSON answer as it came (for jq)\n"
	    "    -h, --help         this text\n"
	    "\n"
	    "EXIT STATUS\n"
	    "    0  answered\n"
	    "    1  the daemon answered with an error (unknown request, ...)\n"
	    "    2  usage error, cannot connect, no answer within %d s, malformed answer\n"
	    "\n"
	    "SEE ALSO\n"
	    "    utgtd(8), docs/admin.md (the protocol and every field of the answers)\n",
	    CLIENT_TIMEOUT_S);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Send the request, read the answer up to EOF.  NULL on failure (message printed). */
static char *ask(const char *path, const char *req)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	long long deadline = now_ms() + CLIENT_TIMEOUT_S * 1000LL;
	size_t len = 0, cap = 65536;
	char *buf;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "utgtadm: socket path too long: %s\n", path);
		return NULL;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "utgtadm: cannot connect to %s: %s (is utgtd running? -s SOCKET)\n",
			path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	size_t rl = strlen(req), off = 0;
	while (off < rl) {
		ssize_t w = send(fd, req + off, rl - off, MSG_NOSIGNAL);
		if (w < 0) {
			fprintf(stderr, "utgtadm: %s: %s\n", path, strerror(errno));
			close(fd);
			return NULL;
		}
		off += (size_t)w;
	}
	buf = malloc(cap);
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		long long left = deadline - now_ms();
		if (!buf || left <= 0 || poll(&p, 1, (int)left) <= 0) {
			fprintf(stderr, "utgtadm: %s: no answer within %d s\n", path,
				CLIENT_TIMEOUT_S);
			break;
		}
		if (len + 1 == cap) {
			char *b = cap < ANSWER_MAX ? realloc(buf, cap *= 2) : NULL;
			if (!b) {
				fprintf(stderr, "utgtadm: answer too long\n");
				break;
			}
			buf = b;
		}
		ssize_t r = recv(fd, buf + len, cap - 1 - len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "utgtadm: %s: %s\n", path, strerror(errno));
			break;
		}
		if (r == 0) {
			close(fd);
			buf[len] = '\0';
			if (len == 0) {
				fprintf(stderr, "utgtadm: %s closed without an answer\n", path);
				free(buf);
				return NULL;
			}
			return buf;
		}
		len += (size_t)r;
	}
	close(fd);
	free(buf);
	return NULL;
}

/* ---- tables ---- */

#define MAXCOLS 12

struct table {
	unsigned ncols, nrows, cap;
	char **cells; /* row-major, ncols per row */
};

static void t_row(struct table *t, ...)
{
	va_list ap;

	if (t->nrows == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->cells = realloc(t->cells, (size_t)t->cap * t->ncols * sizeof(char *));
		if (!t->cells) {
			perror("utgtadm");
			exit(2);
		}
	}
	va_start(ap, t);
	for (unsigned c = 0; c < t->ncols; c++) {
		const char *s = va_arg(ap, const char *);
		t->cells[t->nrows * t->ncols + c] = strdup(s ? s : "-");
	}
	va_end(ap);
	t->nrows++;
}

static void t_print(struct table *t)
{
	size_t w[MAXCOLS] = {0};

	for (unsigned r = 0; r < t->nrows; r++)
		for (unsigned c = 0; c < t->ncols; c++) {
			size_t l = strlen(t->cells[r * t->ncols + c]);
			if (l > w[c])
				w[c] = l;
		}
	for (unsigned r = 0; r < t->nrows; r++) {
		for (unsigned c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			if (c + 1 == t->ncols)
				printf("%s\n", s);
			else
				printf("%-*s  ", (int)w[c], s);
			free((char *)s);
		}
	}
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

static const char *num(char *b, uint64_t v)
{
	sprintf(b, "%llu", (unsigned long long)v);
	return b;
}

static const char *human(char *b, uint64_t v)
{
	static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double d = (double)v;
	int i = 0;

	while (d >= 1024 && i < 5) {
		d /= 1024;
		i++;
	}
	if (i == 0)
		sprintf(b, "%llu B", (unsigned long long)v);
	else
		sprintf(b, "%.1f %s", d, u[i]);
	return b;
}

static void show_sessions(const struct tgt_jv *a)
{
	const struct tgt_jv *ss = tgt_jv_get(a, "sessions");
	struct table t = {.ncols = 10};
	char b[8][48];

	if (!ss || ss->type != JV_ARR || ss->n == 0) {
		printf("no sessions\n");
		return;
	}
	t_row(&t, "DRIVER", "TARGET", "INITIATOR", "ISID", "CONNECTION (local <- peer)", "WORKER",
	      "CMDS", "READ", "WRITTEN", "ERR/TMF");
	for (unsigned i = 0; i < ss->n; i++) {
		const struct tgt_jv *s = &ss->kids[i], *k = tgt_jv_get(s, "counters");
		const struct tgt_jv *cs = tgt_jv_get(s, "connections");
		char conn[200] = "-", worker[16] = "-";
		if (cs && cs->type == JV_ARR && cs->n > 0) {
			snprintf(conn, sizeof(conn), "%s <- %s",
				 tgt_jv_str(&cs->kids[0], "local", "?"),
				 tgt_jv_str(&cs->kids[0], "peer", "?"));
			snprintf(worker, sizeof(worker), "%llu",
				 (unsigned long long)tgt_jv_u64(&cs->kids[0], "worker", 0));
		}
		snprintf(b[4], sizeof(b[4]), "%llu/%llu",
			 (unsigned long long)tgt_jv_u64(k, "errors", 0),
			 (unsigned long long)tgt_jv_u64(k, "task_mgmt", 0));
		t_row(&t, tgt_jv_str(s, "driver", "?"), tgt_jv_str(s, "target", "?"),
		      tgt_jv_str(s, "initiator", "?"), tgt_jv_str(s, "isid", "-"), conn, worker,
		      num(b[0], tgt_jv_u64(k, "commands", 0)),
		      human(b[1], tgt_jv_u64(k, "bytes_read", 0)),
		      human(b[2], tgt_jv_u64(k, "bytes_written", 0)), b[4]);
	}
	t_print(&t);
	/* the negotiated keys, one line per session, in the table's order */
	for (unsigned i = 0; i < ss->n; i++) {
		const struct tgt_jv *p = tgt_jv_get(&ss->kids[i], "params");
		if (!p)
			continue;
		printf("%s,i,0x%s: MaxRecvDataSegmentLength target %llu initiator %llu, "
		       "MaxBurstLength %llu, FirstBurstLength %llu, InitialR2T %s, "
		       "ImmediateData %s, HeaderDigest %s, DataDigest %s\n",
		       tgt_jv_str(&ss->kids[i], "initiator", "?"),
		       tgt_jv_str(&ss->kids[i], "isid", "?"),
		       (unsigned long long)tgt_jv_u64(p, "MaxRecvDataSegmentLength_target", 0),
		       (unsigned long long)tgt_jv_u64(p, "MaxRecvDataSegmentLength_initiator", 0),
		       (unsigned long long)tgt_jv_u64(p, "MaxBurstLength", 0),
		       (unsigned long long)tgt_jv_u64(p, "FirstBurstLength", 0),
		       tgt_jv_bool(p, "InitialR2T", false) ? "Yes" : "No",
		       tgt_jv_bool(p, "ImmediateData", false) ? "Yes" : "No",
		       tgt_jv_str(p, "HeaderDigest", "?"), tgt_jv_str(p, "DataDigest", "?"));
	}
}

static void show_devices(const struct tgt_jv *a)
{
	const struct tgt_jv *ds = tgt_jv_get(a, "devices");
	struct table t = {.ncols = 11};
	char b[9][48];

	if (!ds || ds->type != JV_ARR || ds->n == 0) {
		printf("no devices\n");
		return;
	}
	t_row(&t, "DEVICE", "HANDLER", "SIZE", "BLOCK", "SESSIONS", "READS", "READ", "WRITES",
	      "WRITTEN", "CMDS", "ERRORS");
	for (unsigned i = 0; i < ds->n; i++) {
		const struct tgt_jv *d = &ds->kids[i], *k = tgt_jv_get(d, "counters");
		t_row(&t, tgt_jv_str(d, "name", "?"), tgt_jv_str(d, "handler", "?"),
		      tgt_jv_bool(d, "open", false) ? human(b[0], tgt_jv_u64(d, "size", 0))
						    : "(not open)",
		      num(b[1], tgt_jv_u64(d, "block_size", 0)),
		      num(b[2], tgt_jv_u64(d, "sessions", 0)),
		      num(b[3], tgt_jv_u64(k, "read_commands", 0)),
		      human(b[4], tgt_jv_u64(k, "bytes_read", 0)),
		      num(b[5], tgt_jv_u64(k, "write_commands", 0)),
		      human(b[6], tgt_jv_u64(k, "bytes_written", 0)),
		      num(b[7], tgt_jv_u64(k, "commands", 0)),
		      num(b[8], tgt_jv_u64(k, "errors", 0)));
	}
	t_print(&t);
}

static void join(const struct tgt_jv *arr, char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (unsigned i = 0; arr && arr->type == JV_ARR && i < arr->n; i++)
		if (arr->kids[i].type == JV_STR && o < len)
			o += (size_t)snprintf(out + o, len - o, "%s%s", i ? "," : "",
					      arr->kids[i].s);
	if (!out[0])
		snprintf(out, len, "-");
}

static void lun_rows(struct table *t, const char *drv, const char *tgt, const char *grp,
		     const struct tgt_jv *luns)
{
	char b[24];

	for (unsigned i = 0; luns && luns->type == JV_ARR && i < luns->n; i++) {
		const struct tgt_jv *l = &luns->kids[i];
		t_row(t, drv, tgt, grp, num(b, tgt_jv_u64(l, "lun", 0)),
		      tgt_jv_str(l, "device", "?"),
		      tgt_jv_bool(l, "read_only", false) ? "ro" : "rw");
	}
	if (!luns || luns->n == 0)
		t_row(t, drv, tgt, grp, "-", "(no LUN)", "-");
}

static void show_targets(const struct tgt_jv *a)
{
	const struct tgt_jv *ds = tgt_jv_get(a, "drivers");
	struct table t = {.ncols = 6};
	char portals[512];

	for (unsigned i = 0; ds && ds->type == JV_ARR && i < ds->n; i++) {
		const struct tgt_jv *d = &ds->kids[i];
		join(tgt_jv_get(d, "portals"), portals, sizeof(portals));
		printf("driver %s: %s, portals %s\n", tgt_jv_str(d, "name", "?"),
		       tgt_jv_bool(d, "running", false)	  ? "running"
		       : tgt_jv_bool(d, "enabled", false) ? "not running"
							  : "disabled",
		       portals);
	}
	t_row(&t, "DRIVER", "TARGET", "GROUP", "LUN", "DEVICE", "MODE");
	for (unsigned i = 0; ds && ds->type == JV_ARR && i < ds->n; i++) {
		const struct tgt_jv *d = &ds->kids[i], *ts = tgt_jv_get(d, "targets");
		const char *dn = tgt_jv_str(d, "name", "?");
		for (unsigned k = 0; ts && ts->type == JV_ARR && k < ts->n; k++) {
			const struct tgt_jv *tg = &ts->kids[k], *gs = tgt_jv_get(tg, "groups");
			char tn[300];
			snprintf(tn, sizeof(tn), "%s%s", tgt_jv_str(tg, "name", "?"),
				 tgt_jv_bool(tg, "enabled", false) ? "" : " (disabled)");
			lun_rows(&t, dn, tn, "-", tgt_jv_get(tg, "luns"));
			for (unsigned g = 0; gs && gs->type == JV_ARR && g < gs->n; g++)
				lun_rows(&t, dn, tn, tgt_jv_str(&gs->kids[g], "name", "?"),
					 tgt_jv_get(&gs->kids[g], "luns"));
		}
	}
	t_print(&t);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *path = getenv("UTGT_ADMIN_SOCKET");
	char req[ADMIN_LINE_MAX];
	size_t off = 0;
	bool json = false;
	int c, rc;

	if (!path || !path[0])
		path = DEFAULT_SOCKET;
	while ((c = getopt_long(argc, argv, "+s:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	/* the rest is the request; --json may also come after it */
	req[0] = '\0';
	for (int i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j")) {
			json = true;
			continue;
		}
		int n = snprintf(req + off, sizeof(req) - off, "%s%s", off ? " " : "", argv[i]);
		if (n < 0 || (size_t)n >= sizeof(req) - off - 1) {
			fprintf(stderr, "utgtadm: request too long\n");
			return 2;
		}
		off += (size_t)n;
	}
	if (!off) {
		usage(stderr);
		return 2;
	}
	strcat(req, "\n");

	char *ans = ask(path, req);
	if (!ans)
		return 2;
	size_t erroff = 0;
	struct tgt_jv *a = tgt_jread(ans, &erroff);
	if (!a || a->type != JV_OBJ || !tgt_jv_get(a, "ok")) {
		fprintf(stderr, "utgtadm: malformed answer (at byte %zu): %.200s\n", erroff, ans);
		free(ans);
		tgt_jv_free(a);
		return 2;
	}
	rc = tgt_jv_bool(a, "ok", false) ? 0 : 1;
	if (json) {
		fputs(ans, stdout);
	} else if (rc) {
		fprintf(stderr, "utgtadm: utgtd: %s\n", tgt_jv_str(a, "error", "error"));
	} else if (!strncmp(req, "show sessions", 13)) {
		show_sessions(a);
	} else if (!strncmp(req, "show devices", 12)) {
		show_devices(a);
	} else if (!strncmp(req, "show targets", 12)) {
		show_targets(a);
	} else if (tgt_jv_get(a, "version")) {
		printf("utgtd %s, pid %llu, up %llu s, config %s\n", tgt_jv_str(a, "version", "?"),
		       (unsigned long long)tgt_jv_u64(a, "pid", 0),
		       (unsigned long long)tgt_jv_u64(a, "uptime_s", 0),
		       tgt_jv_str(a, "config", "?"));
	} else {
		const struct tgt_jv *cs = tgt_jv_get(a, "commands");
		for (unsigned i = 0; cs && cs->type == JV_ARR && i < cs->n; i++)
			printf("%s\n", cs->kids[i].s ? cs->kids[i].s : "");
	}
	free(ans);
	tgt_jv_free(a);
	return rc;
}
