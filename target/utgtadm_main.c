/* utgtadm: ask a running utgtd what it serves, and change it, over its admin socket
 * (docs/admin.md).
 *
 *   utgtadm [-s SOCKET] [--json] show sessions|devices|targets | version | help
 *   utgtadm [-s SOCKET] [--json] add|remove|set|enable|disable OBJECT NAME [KEY=VALUE]...
 *   utgtadm [-s SOCKET] [--json] resize|resync|close|reload|write-config ...
 *   utgtadm [-s SOCKET] -list_target|-add_lun|... (scstadmin's commands, target/adm_cli.h)
 *
 * One request line out, one JSON answer back; printed as tables, or raw with --json.
 * Exit: 0 answered, 1 the daemon answered with an error, 2 usage, cannot connect, no or
 * malformed answer. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "target/adm_cli.h"
#include "target/admin.h"
#include "target/tgt_jread.h"

#define DEFAULT_SOCKET	 "/var/lib/utgt/utgtd.sock"
#define CLIENT_TIMEOUT_S 10
#define CHANGE_TIMEOUT_S 300 /* a change waits for in-flight commands, a driver for its drain */
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
	    "    utgtadm [-s SOCKET] [--json] VERB OBJECT NAME [KEY=VALUE]...\n"
	    "    utgtadm [-s SOCKET] reload [FILE] | write-config [FILE]\n"
	    "    utgtadm [-s SOCKET] -SCSTADMIN_COMMAND ...\n"
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
	    "LIVE ADMINISTRATION (while initiators work; docs/admin.md)\n"
	    "    add device NAME handler=H [ATTR=VALUE]...     remove device NAME\n"
	    "    set device NAME ATTR=VALUE...                 resize device NAME size=BYTES\n"
	    "    resync device NAME\n"
	    "    add target NAME driver=D [ATTR=VALUE]...      remove target NAME driver=D\n"
	    "    enable|disable target NAME driver=D           set target NAME driver=D ATTR=VALUE...\n"
	    "    set driver NAME ATTR=VALUE...\n"
	    "    add|remove group NAME driver=D target=T       set group NAME ... ATTR=VALUE...\n"
	    "    add lun N driver=D target=T [group=G] device=DEV [read_only=1]\n"
	    "    remove lun N driver=D target=T [group=G]\n"
	    "    add|remove initiator PATTERN driver=D target=T group=G\n"
	    "    set tgroup NAME dgroup=DG state=S [preferred=0|1]   (ALUA)\n"
	    "    close session NEXUS_ID                        (see show sessions)\n"
	    "    reload [FILE]     re-read the daemon's scst.conf (or FILE), apply the difference;\n"
	    "                      a file with errors changes nothing (FILE:LINE of the first)\n"
	    "    write-config [FILE]  the running configuration in SCST's format, to FILE or\n"
	    "                      stdout\n"
	    "\n"
	    "SCSTADMIN COMMANDS (same meaning)\n"
	    "    -config FILE, -write_config FILE, -list_target [T] [-driver D],\n"
	    "    -list_device [D], -list_group [G] [-driver D] [-target T], -list_sessions,\n"
	    "    -set_dev_attr D -attributes a=v,..., -set_tgt_attr T -driver D -attributes ...,\n"
	    "    -add_lun N -driver D -target T [-group G] -device DEV [-attributes read_only=1],\n"
	    "    -rem_lun N -driver D -target T [-group G], -add_init I / -rem_init I -driver D\n"
	    "    -target T -group G, -enable_target T / -disable_target T -driver D,\n"
	    "    -resync_dev D, -open_dev D -handler H -attributes ..., -close_dev D,\n"
	    "    -add_target / -rem_target T -driver D, -add_group / -rem_group G -driver D\n"
	    "    -target T, -set_drv_attr, -set_grp_attr, -set_tgrp_attr TG -dev_group DG\n"
	    "    -attributes state=S; -noprompt, -force, -nonkey, -cont_on_err are accepted\n"
	    "\n"
	    "OPTIONS\n"
	    "    -s, --socket PATH  the daemon's admin socket (default " DEFAULT_SOCKET ",\n"
	    "                       i.e. <state-dir>/utgtd.sock; see utgtd --admin-socket)\n"
	    "    -j, --json         print the daemon's JSON answer as it came (for jq)\n"
	    "    -V, --version      utgtadm's own version (the daemon's: utgtadm version)\n"
	    "    -h, --help         this text\n"
	    "\n"
	    "EXIT STATUS\n"
	    "    0  answered\n"
	    "    1  the daemon answered with an error (unknown request, refused change, ...)\n"
	    "    2  usage error, cannot connect, no answer within %d s (%d s for a change),\n"
	    "       malformed answer\n"
	    "\n"
	    "SEE ALSO\n"
	    "    utgtd(8), docs/admin.md (the protocol and every field of the answers)\n",
	    CLIENT_TIMEOUT_S, CHANGE_TIMEOUT_S);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Send the request, read the answer up to EOF.  NULL on failure (message printed). */
static char *ask(const char *path, const char *req, int timeout_s)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	long long deadline = now_ms() + timeout_s * 1000LL;
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
			fprintf(stderr, "utgtadm: %s: no answer within %d s\n", path, timeout_s);
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

#define MAXCOLS 14

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

/* The LIO user backstores each DEVICE backs through the TCMU ring, when there are any. */
static void tcmu_rows(const struct tgt_jv *ds)
{
	struct table t = {.ncols = 13};
	char b[10][24];
	unsigned n = 0;

	for (unsigned i = 0; i < ds->n; i++) {
		const struct tgt_jv *l = tgt_jv_get(&ds->kids[i], "tcmu");
		n += l && l->type == JV_ARR ? l->n : 0;
	}
	if (!n)
		return;
	t_row(&t, "DEVICE", "LIO DEVICE", "UIO", "PROTOCOL", "RING", "DATA", "IN FLIGHT", "CMDS",
	      "COMPLETED", "ABORTED", "TMRS", "HELD", "REFUSED");
	for (unsigned i = 0; i < ds->n; i++) {
		const struct tgt_jv *l = tgt_jv_get(&ds->kids[i], "tcmu");
		for (unsigned x = 0; l && l->type == JV_ARR && x < l->n; x++) {
			const struct tgt_jv *e = &l->kids[x];
			t_row(&t, tgt_jv_str(&ds->kids[i], "name", "?"),
			      tgt_jv_str(e, "lio_device", "?"),
			      tgt_jv_str(e, "uio_name", num(b[0], tgt_jv_u64(e, "uio", 0))),
			      tgt_jv_str(e, "protocol", "?"), human(b[1], tgt_jv_u64(e, "ring_bytes", 0)),
			      human(b[2], tgt_jv_u64(e, "data_bytes", 0)),
			      num(b[3], tgt_jv_u64(e, "in_flight", 0)),
			      num(b[4], tgt_jv_u64(e, "commands", 0)),
			      num(b[5], tgt_jv_u64(e, "completions", 0)),
			      num(b[6], tgt_jv_u64(e, "aborted", 0)),
			      num(b[7], tgt_jv_u64(e, "tmr_entries", 0)),
			      num(b[8], tgt_jv_u64(e, "held", 0)),
			      num(b[9], tgt_jv_u64(e, "refused_completions", 0)));
		}
	}
	printf("\nTCMU: LIO user backstores served through the ring\n");
	t_print(&t);
}

/* vdisk_rbd devices: the image, who holds its exclusive lock (this gateway's client or
 * another's), this gateway's role and ALUA state when it follows the lock, the cluster. */
static void rbd_rows(const struct tgt_jv *ds)
{
	struct table t = {.ncols = 7};
	unsigned n = 0;

	for (unsigned i = 0; i < ds->n; i++) {
		const struct tgt_jv *d = &ds->kids[i], *l = tgt_jv_get(d, "rbd_lock");
		const char *owner, *self;

		if (!l)
			continue;
		if (!n++)
			t_row(&t, "DEVICE", "IMAGE", "ROLE", "ALUA", "LOCK OWNER", "THIS CLIENT",
			      "HEALTH");
		owner = tgt_jv_str(l, "owner", "-");
		self = tgt_jv_str(l, "client", "-");
		t_row(&t, tgt_jv_str(d, "name", "?"), tgt_jv_str(d, "rbd_image", "?"),
		      tgt_jv_str(l, "role", "-"), tgt_jv_str(d, "alua_state", "-"),
		      strcmp(owner, self) ? owner : "this client", self,
		      tgt_jv_str(d, "cluster_health", "-"));
	}
	if (!n)
		return;
	printf("\nRBD: the image's exclusive lock and the Ceph cluster\n");
	t_print(&t);
}

/* File and block device stores: where their I/O ran (docs/admin.md, `io_engine`). */
static void engine_rows(const struct tgt_jv *ds)
{
	struct table t = {.ncols = 9};
	char b[7][24];
	unsigned n = 0;

	for (unsigned i = 0; i < ds->n; i++) {
		const struct tgt_jv *d = &ds->kids[i], *e = tgt_jv_get(d, "io_engine");

		if (!e)
			continue;
		if (!n++)
			t_row(&t, "DEVICE", "ENGINE", "IN FLIGHT", "COMPLETED", "INLINE", "OWN RING",
			      "COLD READS", "WAITED", "BOUNCED");
		t_row(&t, tgt_jv_str(d, "name", "?"), tgt_jv_str(e, "mode", "?"),
		      num(b[0], tgt_jv_u64(e, "in_flight", 0)),
		      num(b[1], tgt_jv_u64(e, "completed", 0)),
		      num(b[2], tgt_jv_u64(e, "inline", 0)),
		      num(b[3], tgt_jv_u64(e, "on_own_ring", 0)),
		      num(b[4], tgt_jv_u64(e, "cold_reads", 0)),
		      num(b[5], tgt_jv_u64(e, "waited_for_slot", 0)),
		      num(b[6], tgt_jv_u64(e, "bounced", 0)));
	}
	if (!n)
		return;
	printf("\nI/O engine: file and block device stores\n");
	t_print(&t);
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
	engine_rows(ds);
	tcmu_rows(ds);
	rbd_rows(ds);
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

/* ---- scstadmin's listings ---- */

static bool match(const char *want, const char *have)
{
	return !want || !strcmp(want, have);
}

static void scst_targets(const struct tgt_jv *a, const struct adm_cmd *cmd)
{
	const struct tgt_jv *ds = tgt_jv_get(a, "drivers");
	struct table t = {.ncols = 4};
	char b[24];
	bool found = false;

	for (unsigned i = 0; ds && ds->type == JV_ARR && i < ds->n; i++) {
		const struct tgt_jv *d = &ds->kids[i], *ts = tgt_jv_get(d, "targets");
		const char *dn = tgt_jv_str(d, "name", "?");
		if (!match(cmd->driver, dn))
			continue;
		for (unsigned k = 0; ts && ts->type == JV_ARR && k < ts->n; k++) {
			const struct tgt_jv *tg = &ts->kids[k];
			const char *tn = tgt_jv_str(tg, "name", "?");
			if (!cmd->filter) {
				if (!t.nrows)
					t_row(&t, "Driver", "Target", "Enabled", "rel_tgt_id");
				t_row(&t, dn, tn, tgt_jv_bool(tg, "enabled", false) ? "1" : "0",
				      num(b, tgt_jv_u64(tg, "rel_tgt_id", 0)));
				continue;
			}
			if (strcmp(cmd->filter, tn))
				continue;
			found = true;
			printf("Target %s (driver %s): enabled %d, rel_tgt_id %llu\n", tn, dn,
			       tgt_jv_bool(tg, "enabled", false),
			       (unsigned long long)tgt_jv_u64(tg, "rel_tgt_id", 0));
			t.ncols = 6;
			lun_rows(&t, dn, tn, "-", tgt_jv_get(tg, "luns"));
			const struct tgt_jv *gs = tgt_jv_get(tg, "groups");
			for (unsigned g = 0; gs && gs->type == JV_ARR && g < gs->n; g++)
				lun_rows(&t, dn, tn, tgt_jv_str(&gs->kids[g], "name", "?"),
					 tgt_jv_get(&gs->kids[g], "luns"));
		}
	}
	if (cmd->filter && !found)
		printf("no target %s\n", cmd->filter);
	else if (!t.nrows)
		printf("no targets\n");
	t_print(&t);
}

static void scst_groups(const struct tgt_jv *a, const struct adm_cmd *cmd)
{
	const struct tgt_jv *ds = tgt_jv_get(a, "drivers");
	char inits[2048];
	unsigned n = 0;

	for (unsigned i = 0; ds && ds->type == JV_ARR && i < ds->n; i++) {
		const struct tgt_jv *d = &ds->kids[i], *ts = tgt_jv_get(d, "targets");
		const char *dn = tgt_jv_str(d, "name", "?");
		if (!match(cmd->driver, dn))
			continue;
		for (unsigned k = 0; ts && ts->type == JV_ARR && k < ts->n; k++) {
			const struct tgt_jv *tg = &ts->kids[k], *gs = tgt_jv_get(tg, "groups");
			const char *tn = tgt_jv_str(tg, "name", "?");
			if (!match(cmd->target, tn))
				continue;
			for (unsigned g = 0; gs && gs->type == JV_ARR && g < gs->n; g++) {
				const struct tgt_jv *gr = &gs->kids[g], *ls = tgt_jv_get(gr, "luns");
				const char *gn = tgt_jv_str(gr, "name", "?");
				if (!match(cmd->filter, gn))
					continue;
				join(tgt_jv_get(gr, "initiators"), inits, sizeof(inits));
				printf("Driver %s, target %s, group %s\n  initiators: %s\n", dn, tn,
				       gn, inits);
				for (unsigned l = 0; ls && ls->type == JV_ARR && l < ls->n; l++)
					printf("  LUN %llu: %s%s\n",
					       (unsigned long long)tgt_jv_u64(&ls->kids[l], "lun", 0),
					       tgt_jv_str(&ls->kids[l], "device", "?"),
					       tgt_jv_bool(&ls->kids[l], "read_only", false)
						   ? " (read_only)"
						   : "");
				n++;
			}
		}
	}
	if (!n)
		printf("no groups\n");
}

static void scst_devices(const struct tgt_jv *a, const struct adm_cmd *cmd)
{
	const struct tgt_jv *ds = tgt_jv_get(a, "devices");
	struct table t = {.ncols = 2};
	char b[48];
	bool found = false;

	for (unsigned i = 0; ds && ds->type == JV_ARR && i < ds->n; i++) {
		const struct tgt_jv *d = &ds->kids[i];
		const char *name = tgt_jv_str(d, "name", "?");
		if (!cmd->filter) {
			if (!t.nrows)
				t_row(&t, "Handler", "Device");
			t_row(&t, tgt_jv_str(d, "handler", "?"), name);
			continue;
		}
		if (strcmp(cmd->filter, name))
			continue;
		found = true;
		printf("Device %s\n  handler     %s\n  filename    %s\n", name,
		       tgt_jv_str(d, "handler", "?"), tgt_jv_str(d, "filename", "-"));
		printf("  size        %s\n", num(b, tgt_jv_u64(d, "size", 0)));
		printf("  blocksize   %s\n", num(b, tgt_jv_u64(d, "block_size", 0)));
		printf("  sessions    %s\n", num(b, tgt_jv_u64(d, "sessions", 0)));
	}
	if (cmd->filter && !found)
		printf("no device %s\n", cmd->filter);
	else if (!cmd->filter && !t.nrows)
		printf("no devices\n");
	t_print(&t);
}

static void scst_sessions(const struct tgt_jv *a)
{
	const struct tgt_jv *ss = tgt_jv_get(a, "sessions");
	struct table t = {.ncols = 6};
	char b[3][24];

	for (unsigned i = 0; ss && ss->type == JV_ARR && i < ss->n; i++) {
		const struct tgt_jv *x = &ss->kids[i];
		if (!t.nrows)
			t_row(&t, "Driver", "Target", "Initiator", "Nexus", "LUNs", "Commands");
		t_row(&t, tgt_jv_str(x, "driver", "?"), tgt_jv_str(x, "target", "?"),
		      tgt_jv_str(x, "initiator_port", "?"), num(b[0], tgt_jv_u64(x, "nexus_id", 0)),
		      num(b[1], tgt_jv_u64(x, "luns", 0)),
		      num(b[2], tgt_jv_u64(tgt_jv_get(x, "counters"), "commands", 0)));
	}
	if (!t.nrows)
		printf("no sessions\n");
	t_print(&t);
}

int main(int argc, char **argv)
{
	const char *path = getenv("UTGT_ADMIN_SOCKET");
	char *words[ADMIN_LINE_MAX / 2], err[256];
	struct adm_cmd cmd;
	int nwords = 0;
	bool json = false;
	int rc;

	if (!path || !path[0])
		path = DEFAULT_SOCKET;
	/* utgtadm's options come first; the first other word begins the request (scstadmin's
	 * commands start with '-' too, so only these exact options are ours) */
	int optind = 1;
	for (; optind < argc; optind++) {
		const char *o = argv[optind];
		if ((!strcmp(o, "-s") || !strcmp(o, "--socket")) && optind + 1 < argc) {
			path = argv[++optind];
		} else if (!strncmp(o, "--socket=", 9)) {
			path = o + 9;
		} else if (!strcmp(o, "-j") || !strcmp(o, "--json")) {
			json = true;
		} else if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(o, "-V") || !strcmp(o, "--version")) {
			printf("utgtadm %s\n", UTGT_VERSION); /* the daemon's: `utgtadm version` */
			return 0;
		} else {
			break;
		}
	}
	/* the rest is the request; --json may also come after it */
	for (int i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j")) {
			json = true;
			continue;
		}
		if (nwords < (int)(sizeof(words) / sizeof(words[0])))
			words[nwords++] = argv[i];
	}
	if (!nwords) {
		usage(stderr);
		return 2;
	}
	if (adm_cli_request(nwords, words, &cmd, err, sizeof(err)) != 0) {
		fprintf(stderr, "utgtadm: %s\n", err);
		return 2;
	}

	char *ans = ask(path, cmd.req, cmd.changes ? CHANGE_TIMEOUT_S : CLIENT_TIMEOUT_S);
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
	} else if (cmd.render == ADM_RENDER_SCST_TARGETS) {
		scst_targets(a, &cmd);
	} else if (cmd.render == ADM_RENDER_SCST_GROUPS) {
		scst_groups(a, &cmd);
	} else if (cmd.render == ADM_RENDER_SCST_DEVICES) {
		scst_devices(a, &cmd);
	} else if (cmd.render == ADM_RENDER_SCST_SESSIONS) {
		scst_sessions(a);
	} else if (!strncmp(cmd.req, "show sessions", 13)) {
		show_sessions(a);
	} else if (!strncmp(cmd.req, "show devices", 12)) {
		show_devices(a);
	} else if (!strncmp(cmd.req, "show targets", 12)) {
		show_targets(a);
	} else if (tgt_jv_get(a, "version")) {
		printf("utgtd %s, pid %llu, up %llu s, config %s, %llu change(s) applied\n",
		       tgt_jv_str(a, "version", "?"), (unsigned long long)tgt_jv_u64(a, "pid", 0),
		       (unsigned long long)tgt_jv_u64(a, "uptime_s", 0),
		       tgt_jv_str(a, "config", "?"), (unsigned long long)tgt_jv_u64(a, "changes", 0));
	} else if (tgt_jv_get(a, "config")) {
		fputs(tgt_jv_str(a, "config", ""), stdout);
	} else if (tgt_jv_get(a, "file")) {
		printf("written: %s\n", tgt_jv_str(a, "file", "?"));
	} else if (tgt_jv_get(a, "changed")) {
		printf("%s\n", tgt_jv_str(a, "changed", ""));
	} else {
		const struct tgt_jv *cs = tgt_jv_get(a, "commands");
		for (unsigned i = 0; cs && cs->type == JV_ARR && i < cs->n; i++)
			printf("%s\n", cs->kids[i].s ? cs->kids[i].s : "");
	}
	free(ans);
	tgt_jv_free(a);
	return rc;
}
