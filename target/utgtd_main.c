/* utgtd: load scst.conf, open the logical units, start the front ends, serve until SIGTERM.
 *
 *   utgtd --check[=full] -c FILE   validate (full: also open every backing store), print the
 *                                  resolved configuration; exit 0 usable, 1 not
 *   utgtd --show-srp-login -c FILE print, per ib_srpt target, the add_target line for Linux's
 *                                  ib_srp initiator (transports/srp/srp_show.c)
 *   utgtd [-f] -c FILE             run (daemon unless -f); SIGTERM/SIGINT: stop the
 *                                  transports (they drain in-flight I/O), flush every LU, exit;
 *                                  SIGHUP: re-read FILE and apply the difference (tgt_run.c)
 *
 * Signals are blocked in every thread and read from a signalfd in the main loop.  The admin
 * socket (--admin-socket, target/admin_srv.c, docs/admin.md) is served by a thread of its own
 * from the moment the transports are up until the shutdown begins. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/ut_flock.h"
#include "scsi/backstore/backstore.h"
#include "scsi/scsi_dev.h"
#include "scsi/scsi_task.h"
#include "target/admin.h"
#include "common/ut_log.h"
#include "target/tgt_config.h"
#include "target/tgt_notify.h"
#include "target/tgt_run.h"

#define DEFAULT_CONFIG	"/etc/utgt/scst.conf"
#define DEFAULT_CORE_THREADS 4
#define DEFAULT_STATE_DIR "/var/lib/utgt"

enum check_mode { CHECK_NONE, CHECK_BASIC, CHECK_FULL };

struct opts {
	const char *config;
	enum check_mode check;
	bool show_srp_login;
	bool foreground;
	const char *pid_file;
	unsigned core_threads;
	const char *state_dir;
	const char *admin_socket; /* NULL: <state-dir>/utgtd.sock; "none": no socket */
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: utgtd [options]\n"
	    "  -c, --config FILE     scst.conf to load (default " DEFAULT_CONFIG ")\n"
	    "      --check[=full]    validate FILE and print the resolved configuration;\n"
	    "                        'full' also opens every backing store\n"
	    "      --show-srp-login  print the add_target line of each ib_srpt target\n"
	    "  -f, --foreground      stay in the foreground and log to stderr\n"
	    "  -p, --pid-file FILE   write the daemon's pid to FILE\n"
	    "  -w, --core-threads N  threads for the commands that block (COMPARE AND WRITE,\n"
	    "                        EXTENDED COPY, PERSISTENT RESERVE OUT, ...), default %d;\n"
	    "                        not the network threads: those are worker_threads of\n"
	    "                        TARGET_DRIVER iscsi and threads of ib_srpt in the\n"
	    "                        configuration (--workers is the old spelling)\n"
	    "  -s, --state-dir DIR   persistent state (APTPL reservations in DIR/pr)\n"
	    "                        (default " DEFAULT_STATE_DIR ")\n"
	    "      --admin-socket PATH  Unix socket utgtadm talks to (default\n"
	    "                        <state-dir>/utgtd.sock; 'none' turns it off)\n"
	    "  -V, --version         print the version\n"
	    "  -h, --help            this help\n"
	    "Signals: SIGTERM/SIGINT stop (drain, flush, exit 0); SIGHUP re-reads the\n"
	    "configuration file and applies the difference (a file with errors changes nothing).\n"
	    "See utgtd(8) and utgt-scst.conf(5).\n",
	    DEFAULT_CORE_THREADS);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
	    {"config", required_argument, NULL, 'c'},  {"check", optional_argument, NULL, 'C'},
	    {"foreground", no_argument, NULL, 'f'},    {"pid-file", required_argument, NULL, 'p'},
	    {"core-threads", required_argument, NULL, 'w'},
	    {"workers", required_argument, NULL, 'w'}, /* the old spelling */
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},	       {"state-dir", required_argument, NULL, 's'},
	    {"show-srp-login", no_argument, NULL, 'S'}, {"admin-socket", required_argument, NULL, 'A'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	uint64_t v;

	*o = (struct opts){
	    .config = DEFAULT_CONFIG, .core_threads = DEFAULT_CORE_THREADS, .state_dir = DEFAULT_STATE_DIR};
	while ((c = getopt_long(argc, argv, "c:fp:w:s:Vh", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->state_dir = optarg;
			break;
		case 'A':
			if (!optarg[0]) {
				fprintf(stderr, "utgtd: --admin-socket wants a path or 'none'\n");
				return 1;
			}
			o->admin_socket = optarg;
			break;
		case 'c':
			o->config = optarg;
			break;
		case 'C':
			if (!optarg) {
				o->check = CHECK_BASIC;
			} else if (!strcmp(optarg, "full")) {
				o->check = CHECK_FULL;
			} else {
				fprintf(stderr,
					"utgtd: --check takes no value or '=full', not '%s'\n",
					optarg);
				return 1;
			}
			break;
		case 'f':
			o->foreground = true;
			break;
		case 'S':
			o->show_srp_login = true;
			break;
		case 'p':
			o->pid_file = optarg;
			break;
		case 'w':
			if (!parse_u64(optarg, &v) || v == 0 || v > 256) {
				fprintf(stderr, "utgtd: --core-threads wants 1..256, not '%s'\n",
					optarg);
				return 1;
			}
			o->core_threads = (unsigned)v;
			break;
		case 'V':
			printf("utgtd %s\n", UTGT_VERSION);
			return -1;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "utgtd: unexpected argument '%s'\n", argv[optind]);
		return 1;
	}
	return 0;
}

static unsigned count_targets(const struct tgt_config *cfg)
{
	unsigned n = 0;
	for (unsigned i = 0; i < cfg->ndrivers; i++)
		n += cfg->drivers[i].ntargets;
	return n;
}

static void summary(const struct opts *o, const struct diag *d, const struct tgt_config *cfg)
{
	if (cfg)
		fprintf(stderr,
			"%s: configuration OK: %u device(s), %u target driver(s), %u target(s); "
			"%d warning(s)\n",
			o->config, cfg->ndevices, cfg->ndrivers, count_targets(cfg), d->warnings);
	else
		fprintf(stderr, "%s: %d error(s), %d warning(s)\n", o->config, d->errors,
			d->warnings);
}

static int run_check(const struct opts *o)
{
	struct diag d = {.file = o->config};
	struct tgt_config *cfg = tgt_config_load(o->config, &d);

	if (cfg && o->check == CHECK_FULL && tgt_config_open_devices(cfg, &d) != 0) {
		tgt_config_free(cfg);
		cfg = NULL;
	}
	if (cfg)
		tgt_config_print_opts(cfg, stdout, TGT_PRINT_MASK_SECRETS);
	fflush(stdout);
	summary(o, &d, cfg);
	tgt_config_free(cfg);
	return cfg ? 0 : 1;
}

/* The SRP transport's (weak: a build without it still links). */
extern int srpt_show_login(const struct tgt_config *cfg, FILE *out, char *err, size_t errlen)
    __attribute__((weak));

static int run_show_srp_login(const struct opts *o)
{
	struct diag d = {.file = o->config};
	struct tgt_config *cfg = tgt_config_load(o->config, &d);
	char err[512] = "";
	int rc = 1;

	if (!cfg)
		summary(o, &d, NULL);
	else if (!srpt_show_login)
		fprintf(stderr, "utgtd: this build has no ib_srpt driver\n");
	else if ((rc = srpt_show_login(cfg, stdout, err, sizeof(err))) && err[0])
		fprintf(stderr, "utgtd: %s\n", err);
	tgt_config_free(cfg);
	return rc;
}

/* ---- running ---- */

/* Fork into the background; the parent exits only once the daemon says it is serving (0) or
 * has failed (1), so `utgtd -c FILE && next-step` is reliable.  Returns the fd to report on. */
static int daemonize(void)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0) {
		ut_log(LOG_ERR, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		ut_log(LOG_ERR, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid > 0) {
		char c = '1';
		ssize_t r;
		close(p[1]);
		do
			r = read(p[0], &c, 1);
		while (r < 0 && errno == EINTR);
		_exit(r == 1 && c == '0' ? 0 : 1);
	}
	close(p[0]);
	if (setsid() < 0)
		ut_log(LOG_WARNING, "setsid: %s", strerror(errno));
	pid = fork(); /* not a session leader: can never reacquire a terminal */
	if (pid < 0) {
		ut_log(LOG_ERR, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid > 0)
		_exit(0);
	return p[1];
}

static void report_ready(int *fd, bool ok)
{
	if (*fd < 0)
		return;
	ssize_t r = write(*fd, ok ? "0" : "1", 1);
	(void)r;
	close(*fd);
	*fd = -1;
}

/* The pid file is locked for the daemon's lifetime, so a second utgtd on it fails cleanly. */
static int write_pid_file(const char *path, char *abs, size_t abslen)
{
	char buf[32];
	int fd;

	if (path[0] == '/') {
		snprintf(abs, abslen, "%s", path);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd))) {
			ut_log(LOG_ERR, "getcwd: %s", strerror(errno));
			return -1;
		}
		snprintf(abs, abslen, "%s/%s", cwd, path);
	}
	fd = open(abs, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		ut_log(LOG_ERR, "pid file %s: %s", abs, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		ut_log(LOG_ERR, "pid file %s is locked: another utgtd is running", abs);
		close(fd);
		return -1;
	}
	int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || write(fd, buf, (size_t)n) != n) {
		ut_log(LOG_ERR, "pid file %s: %s", abs, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Make everything acknowledged so far durable before exiting. */
static int flush_devices(const struct tgt_config *cfg)
{
	int rc = 0;

	for (unsigned i = 0; i < cfg->ndevices; i++) {
		struct scsi_dev *dev = cfg->devices[i].dev;
		struct bs_io io = {.op = BS_FLUSH};
		enum bs_status st;

		if (!dev || !dev->open || !dev->bs)
			continue;
		st = bs_submit_sync(dev->bs, &io);
		if (st != BS_OK && st != BS_ENOTSUP) {
			ut_log(LOG_ERR, "DEVICE %s: flush failed (backstore status %d)",
				cfg->devices[i].name, (int)st);
			rc = -1;
		}
	}
	return rc;
}

/* SIGHUP: the same engine as `utgtadm reload`; a file with errors changes nothing. */
static void reload(struct tgt_run *run)
{
	char msg[1024];

	ut_log(LOG_NOTICE, "SIGHUP: reloading %s", run->config_path);
	pthread_mutex_lock(&run->mu);
	if (tgt_run_reload(run, NULL, msg, sizeof(msg)) == 0)
		ut_log(LOG_NOTICE, "SIGHUP: %s", msg);
	pthread_mutex_unlock(&run->mu);
}

/* Serve until SIGTERM/SIGINT. */
static void main_loop(int sfd, struct tgt_run *run)
{
	struct pollfd fds[1] = {{.fd = sfd, .events = POLLIN}};

	for (;;) {
		struct signalfd_siginfo si;
		int n = poll(fds, 1, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ut_log(LOG_ERR, "poll: %s", strerror(errno));
			return;
		}
		if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
			continue;
		if (si.ssi_signo == SIGHUP) {
			reload(run);
			continue;
		}
		ut_log(LOG_INFO, "%s: shutting down", strsignal((int)si.ssi_signo));
		return;
	}
}

/* APTPL state lives in <state-dir>/pr/<device>.pr.  Without a usable directory the LUs still
 * serve, but refuse APTPL=1 rather than promise persistence they cannot keep.  dir gets the
 * directory (devices added live use it too), "" when there is none. */
static void set_pr_dir(struct tgt_config *cfg, const char *state_dir, char *dir, size_t dirlen)
{
	char served[sizeof(((struct scsi_dev_params *)0)->served_dir)];

	if ((size_t)snprintf(dir, dirlen, "%s/pr", state_dir) >= dirlen) {
		ut_log(LOG_WARNING, "state dir %s: path too long; APTPL disabled", state_dir);
		dir[0] = '\0';
		return;
	}
	if ((mkdir(state_dir, 0700) < 0 && errno != EEXIST) || (mkdir(dir, 0700) < 0 && errno != EEXIST)) {
		ut_log(LOG_WARNING, "%s: %s; APTPL disabled", dir, strerror(errno));
		dir[0] = '\0';
		return;
	}
	for (unsigned i = 0; i < cfg->ndevices; i++)
		if (cfg->devices[i].dev)
			snprintf(cfg->devices[i].dev->p.pr_file_dir,
				 sizeof(cfg->devices[i].dev->p.pr_file_dir), "%s", dir);
	/* <state-dir>/served/<device>: the file each DEVICE served (create only on first use) */
	if ((size_t)snprintf(served, sizeof(served), "%s/served", state_dir) >= sizeof(served) ||
	    (mkdir(served, 0700) < 0 && errno != EEXIST)) {
		ut_log(LOG_WARNING, "%s/served: cannot keep which files were served", state_dir);
		return;
	}
	for (unsigned i = 0; i < cfg->ndevices; i++)
		if (cfg->devices[i].dev)
			snprintf(cfg->devices[i].dev->p.served_dir,
				 sizeof(cfg->devices[i].dev->p.served_dir), "%s", served);
}

/* One daemon per state dir: two would split the reservations (pr/) and
 * the records of served files (served/) between them.  An exclusive flock on the directory,
 * held until exit: the fd, or -1 when another process holds it (logged, with its PID).  A
 * directory that cannot be created, opened or locked (a read-only or NFS mount) is only
 * warned about, as before this lock: APTPL and first-use records then do what they can. */
static int lock_state_dir(const char *dir)
{
	long pid;
	int fd;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		ut_log(LOG_WARNING, "state dir %s: %s (not locked)", dir, strerror(errno));
		return -2;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		ut_log(LOG_WARNING, "state dir %s: %s (not locked)", dir, strerror(errno));
		return -2;
	}
	if (ut_flock_try(fd, LOCK_EX, &pid) == 0)
		return fd;
	if (errno == EWOULDBLOCK) {
		if (pid > 0)
			ut_log(LOG_ERR, "state dir %s is in use by process %ld (another utgtd? "
				"a second daemon needs its own --state-dir)", dir, pid);
		else
			ut_log(LOG_ERR, "state dir %s is in use by another process (another "
				"utgtd? a second daemon needs its own --state-dir)", dir);
		close(fd);
		return -1;
	}
	ut_log(LOG_WARNING, "state dir %s: cannot lock: %s (not locked)", dir, strerror(errno));
	close(fd);
	return -2;
}

/* Bind the admin socket early, so a second utgtd on it stops before opening anything. */
static struct admin_srv *open_admin(const struct opts *o)
{
	char path[PATH_MAX], err[PATH_MAX + 128];
	struct admin_srv *s;

	if (o->admin_socket) {
		snprintf(path, sizeof(path), "%s", o->admin_socket);
	} else {
		if ((size_t)snprintf(path, sizeof(path), "%s/utgtd.sock", o->state_dir) >=
		    sizeof(path)) {
			ut_log(LOG_ERR, "state dir %s: path too long", o->state_dir);
			return NULL;
		}
		if (mkdir(o->state_dir, 0700) < 0 && errno != EEXIST)
			ut_log(LOG_WARNING, "state dir %s: %s", o->state_dir, strerror(errno));
	}
	s = admin_srv_open(path, err, sizeof(err));
	if (!s)
		ut_log(LOG_ERR, "%s (--admin-socket PATH or none)", err);
	return s;
}

static int run_daemon(const struct opts *o)
{
	struct admin_srv *admin = NULL;
	struct admin_info ai = {0};
	struct diag d = {.file = o->config};
	static struct tgt_run run; /* the admin thread and SIGHUP share it */
	struct tgt_config *cfg = NULL;
	char pr_dir[sizeof(((struct scsi_dev_params *)0)->pr_file_dir)] = "";
	char abs_config[PATH_MAX];
	char pid_path[PATH_MAX + 256] = "";
	int ready = -1, pid_fd = -1, state_fd = -1, sfd = -1, rc = 1;
	bool core = false;
	sigset_t sigs;

	if (!o->foreground && (ready = daemonize()) < 0)
		return 1;
	cfg = tgt_config_load(o->config, &d);
	if (!cfg) {
		summary(o, &d, NULL);
		goto out;
	}
	/* before opening anything: a second daemon on the same pid file stops here */
	if (o->pid_file && (pid_fd = write_pid_file(o->pid_file, pid_path, sizeof(pid_path))) < 0)
		goto out;
	if ((state_fd = lock_state_dir(o->state_dir)) == -1)
		goto out;
	if (!(o->admin_socket && !strcmp(o->admin_socket, "none")) && !(admin = open_admin(o)))
		goto out;
	/* Blocked before any thread exists (opening a fileio device starts its io_uring reaper),
	 * so every thread inherits the mask and SIGTERM reaches only the signalfd below. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	set_pr_dir(cfg, o->state_dir, pr_dir, sizeof(pr_dir));
	if (tgt_config_open_devices(cfg, &d) != 0) {
		summary(o, &d, NULL);
		goto out;
	}
	/* reloads happen after the daemon changed to / */
	if (!realpath(o->config, abs_config))
		snprintf(abs_config, sizeof(abs_config), "%s", o->config);
	tgt_run_init(&run, cfg, abs_config, pr_dir);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0) {
		ut_log(LOG_ERR, "signalfd: %s", strerror(errno));
		goto out;
	}
	if (scsi_core_init(o->core_threads) != 0) {
		ut_log(LOG_ERR, "SCSI core initialisation failed");
		goto out;
	}
	core = true;
	if (tgt_run_start(&run) != 0)
		goto out;
	ai = (struct admin_info){.run = &run, .version = UTGT_VERSION, .started = time(NULL)};
	if (admin) {
		char err[256];
		if (admin_srv_serve(admin, &ai, err, sizeof(err)) != 0) {
			ut_log(LOG_ERR, "%s", err);
			goto out;
		}
		ut_log(LOG_INFO, "admin socket %s", admin_srv_path(admin));
	}
	ut_log(LOG_INFO, "utgtd %s serving %s: %u device(s), %u target(s)", UTGT_VERSION,
		o->config, cfg->ndevices, count_targets(cfg));
	if (ready >= 0) {
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
		ut_log_to_syslog("utgtd");
		if (chdir("/") < 0)
			ut_log(LOG_WARNING, "chdir /: %s", strerror(errno));
		report_ready(&ready, true);
	}
	if (tgt_notify("READY=1\nSTATUS=serving") < 0)
		ut_log(LOG_WARNING, "sd_notify READY: %s", strerror(errno));
	main_loop(sfd, &run);
	tgt_notify("STOPPING=1");
	admin_srv_stop(admin); /* before the transports: it reads their session tables */
	admin = NULL;
	tgt_run_stop(&run); /* no new commands, in-flight ones completed */
	rc = flush_devices(run.cfg) == 0 ? 0 : 1;
out:
	admin_srv_stop(admin);
	tgt_run_stop(&run);
	if (core)
		scsi_core_shutdown();
	report_ready(&ready, false);
	tgt_config_free(run.cfg ? run.cfg : cfg);
	if (sfd >= 0)
		close(sfd);
	if (pid_fd >= 0) {
		unlink(pid_path);
		close(pid_fd);
	}
	if (state_fd >= 0)
		close(state_fd); /* last: a successor may take over the state from here on */
	if (rc == 0)
		ut_log(LOG_INFO, "exited cleanly");
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc = parse_opts(argc, argv, &o);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (o.check != CHECK_NONE)
		return run_check(&o);
	if (o.show_srp_login)
		return run_show_srp_login(&o);
	return run_daemon(&o);
}
