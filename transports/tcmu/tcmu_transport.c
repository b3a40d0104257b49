/* utgtd's tcmu driver (struct tcmu_transport): serves LIO "user" backstores whose dev_config
 * is utgt/<DEVICE> with that scst.conf DEVICE.
 *
 *   TARGET_DRIVER tcmu {
 *           enabled 1
 *           ring_threads auto          1 or 2 ring threads per LIO device (auto: 2 when
 *                                      the machine has a second CPU)
 *           poll_us 0                  a ring thread spins this long for the next command
 *   }                                  before it waits in read() (0: never; at most 1000)
 *
 * Each served device has a ring thread of its own, which waits for the kernel in a blocking
 * read() of its /dev/uioN (the wait and the acknowledgement in one system call: what a
 * QD1 command costs under emulation is mostly system calls and wakeups) and takes, runs and
 * completes what the kernel queued (tcmu_dev.c); a signal with a handler that does not
 * restart system calls ends that read when the device is let go.
 * One event thread (common/ut_thread.h) for the rest: one eventfd (a closing device's
 * completion, a finished abort, a ring thread whose device is gone: time to look
 * whether a device can be freed; completions themselves go into the ring from the thread
 * that finishes them, tcmu_dev.c), the TCM-USER netlink socket (tcmu_nl.h: LIO's
 * ADDED/REMOVED/RECONFIG_DEVICE events, answered when the kernel waits for it), and a 500 ms
 * timer that rescans /sys/class/uio for devices created or removed through configfs.  A
 * second thread, the fabric watcher, reads every 500 ms which fabric exports each device (the
 * protocol identifier of its nexus): creating a fabric LUN holds configfs while the kernel
 * scans the LUN, whose INQUIRY must come back through the ring, so the ring's thread never
 * walks configfs.
 * Entries in other subtypes are left alone (tcmu-runner may serve them); a dev_config naming
 * no DEVICE is logged once and not opened. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "common/ut_thread.h"
#include "common/ut_log.h"
#include "transports/model/tgt_model.h"
#include "common/ut_json.h"
#include "transports/tcmu/tcmu_cfg.h"
#include "transports/tcmu/tcmu_dev.h"
#include "transports/tcmu/tcmu_lio.h"
#include "transports/tcmu/tcmu_nl.h"
#include "transports/tcmu/tcmu_reconfig.h"
#include "transports/tcmu/tcmu_uapi.h"
#include "transports/tcmu/tcmu_uio.h"

#define MAX_UIO	  256
#define RESCAN_MS 500
#define SUBTYPE	  "utgt"

struct tdev {
	unsigned minor;
	char uio_name[TCMU_UIO_STR * 2];
	int fd; /* -1: refused (logged once), kept so it is not retried */
	void *map;
	size_t size;
	struct tcmu_dev *dev;
	struct scsi_dev *sdev; /* the DEVICE's LU (RECONFIG_DEVICE changes it) */
	char device[64]; /* the scst.conf DEVICE it serves ("" when refused) */
	char lio_name[TCMU_UIO_STR]; /* configfs core/user_N/<lio_name> */
	unsigned hba;
	char cfg[TCMU_UIO_STR];	 /* its dev_config after "utgt/", as served */
	char fabrics[64];	 /* the LIO fabrics whose LUNs link to it (tcmu_lio_fabric) */
	int proto;		 /* enum scsi_proto_id of its nexus */
	bool refused; /* ours, but not served (no such DEVICE, bad option, open failed) */
	bool gone;	 /* removed: drain, then free */
	bool nl_reply;	 /* the kernel waits for our netlink answers about it (read at attach) */
	unsigned ring_threads; /* 1 or 2, as served */
	unsigned poll_us;      /* as served (the driver's poll_us when it was attached) */
	uint64_t poll_hits;    /* (atomic) commands the ring thread found while it spun */
	/* its ring thread (ring_main) */
	pthread_t ring_th;
	bool ring_started;
	bool chardev;	/* a real uio device (tests put a plain file there: no events) */
	bool ring_stop; /* (atomic) let go: the ring thread ends */
	int ring_err;	/* (atomic) why the ring thread let the device go: -errno, 0 none */
	struct tdev *next;
};

static struct {
	/* cfg and the membership of devs: the event thread changes them, live administration
	 * (the admin thread) replaces cfg and asks which DEVICEs are served */
	pthread_mutex_t lock;
	const struct tgt_config *cfg;
	const char *sysfs, *devdir, *configfs;
	struct ut_thread ut;
	struct ut_watch done_watch; /* evfd */
	struct ut_timer rescan;
	struct ut_poller drain; /* stopping: ends the loop once nothing is in flight */
	struct ut_msg stop_msg;
	int evfd;
	/* TCM-USER netlink: -1 until target_core_user is there (retried at each scan) */
	int nl_fd;
	uint16_t nl_family;
	uint32_t nl_seq;
	struct ut_watch nl_watch;
	bool netlink;	/* the real kernel (tests on a fake tree have none) */
	bool nl_logged; /* "no netlink" said once */
	/* The fabric watcher (its own thread: reading configfs can wait on a LUN link that is
	 * itself waiting for the ring to answer the fabric's first INQUIRY) */
	pthread_t fab_thread;
	pthread_cond_t fab_cv;
	bool fab_stop;
	bool running;
	unsigned ring_threads; /* for devices served from now on: 1 or 2 (ring_threads_of) */
	unsigned poll_us;      /* for devices served from now on (poll_us_of) */
	bool retry; /* a live change: refused devices are looked up again at the next scan */
	struct tdev *devs;
} G = {.lock = PTHREAD_MUTEX_INITIALIZER, .fab_cv = PTHREAD_COND_INITIALIZER, .evfd = -1,
     .nl_fd = -1};

static void wake(void *ctx)
{
	uint64_t one = 1;
	ssize_t r = write(G.evfd, &one, sizeof(one));
	(void)ctx;
	(void)r;
}

static void kick(void *ctx)
{
	tcmu_uio_kick(((struct tdev *)ctx)->fd);
}

static struct tdev *find(unsigned minor, const char *name)
{
	for (struct tdev *t = G.devs; t; t = t->next)
		if (t->minor == minor && !strcmp(t->uio_name, name) && !t->gone)
			return t;
	return NULL;
}

/* Ends a ring thread's blocking read (EINTR): a handler that does nothing, installed
 * without SA_RESTART. */
#define WAKE_SIG (SIGRTMIN + 2)

static void wake_sig_handler(int sig)
{
	(void)sig;
}

/* The ring thread lets its device go: the event thread detaches it (reap_all). */
static void ring_failed(struct tdev *t, int err)
{
	__atomic_store_n(&t->ring_err, err, __ATOMIC_RELEASE);
	wake(NULL);
}

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* poll_us: spin a while for the kernel's next command instead of sleeping at once.  A QD1
 * stream's next command then costs no wakeup and no read(); the price is a CPU kept busy
 * for up to poll_us after each batch.  True when something was queued meanwhile. */
static bool ring_poll(struct tdev *t)
{
	uint64_t end = mono_us() + t->poll_us;

	do {
		if (tcmu_dev_pending(t->dev)) {
			__atomic_fetch_add(&t->poll_hits, 1, __ATOMIC_RELAXED);
			return true;
		}
	} while (!__atomic_load_n(&t->ring_stop, __ATOMIC_ACQUIRE) && mono_us() < end);
	return false;
}

/* A device's ring thread: take, run and complete what the kernel queued, kick once, then
 * wait in read() for the next notification.  Parks (until ring_stop) once the device is gone
 * or its ring unusable, or at once on a plain file (tests: nothing will ever be queued after
 * the first look). */
static void *ring_main(void *arg)
{
	struct tdev *t = arg;
	sigset_t s;
	int rc = 1;

	sigemptyset(&s);
	sigaddset(&s, WAKE_SIG);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	pthread_setname_np(pthread_self(), "tcmu-ring");
	while (!__atomic_load_n(&t->ring_stop, __ATOMIC_ACQUIRE)) {
		if (rc > 0) { /* an event, or the first look: anything queued before we came */
			tcmu_dev_poll(t->dev);
			if (tcmu_dev_broken(t->dev)) {
				ring_failed(t, -EPROTO);
				break;
			}
			tcmu_dev_reap(t->dev); /* the kick for what completed inline */
		}
		/* the uio event count the kernel bumped meanwhile makes a later read() return at
		 * once: one empty look at the end of a busy stretch */
		if (t->poll_us && ring_poll(t)) {
			rc = 1;
			continue;
		}
		rc = t->chardev ? tcmu_uio_wait(t->fd) : -ENOTTY;
		if (rc == -ENOTTY)
			break;
		if (rc < 0) {
			ring_failed(t, rc);
			break;
		}
	}
	while (!__atomic_load_n(&t->ring_stop, __ATOMIC_ACQUIRE))
		pause(); /* ring_stop() signals until we are gone */
	return NULL;
}

static int ring_start(struct tdev *t)
{
	struct stat st;
	int rc;

	t->chardev = fstat(t->fd, &st) == 0 && S_ISCHR(st.st_mode);
	rc = pthread_create(&t->ring_th, NULL, ring_main, t);
	if (rc)
		return -rc;
	t->ring_started = true;
	return 0;
}

/* End the ring thread.  The signal may land before the thread is in read() (then the read
 * would block on): it is sent again until the thread is gone. */
static void ring_stop(struct tdev *t)
{
	if (!t->ring_started)
		return;
	__atomic_store_n(&t->ring_stop, true, __ATOMIC_RELEASE);
	for (;;) {
		struct timespec ts;

		pthread_kill(t->ring_th, WAKE_SIG);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (pthread_timedjoin_np(t->ring_th, NULL, &ts) == 0)
			break;
	}
	t->ring_started = false;
}

/* A new uio device: open it if it is one of ours. */
static void attach(const struct tcmu_uio_info *u)
{
	struct tcmu_uio_name nm;
	struct tdev *t = calloc(1, sizeof(*t));
	const struct tgt_device *td = NULL;
	struct tcmu_cfg opt;
	struct tcmu_dev *dev;
	char err[256] = "", opt_err[128] = "";
	bool ours, opts_ok;
	unsigned want;
	int rc;

	if (!t)
		return;
	t->minor = u->minor;
	snprintf(t->uio_name, sizeof(t->uio_name), "%s", u->name);
	t->fd = -1;
	tcmu_uio_parse_name(u->name, &nm);
	ours = !strcmp(nm.subtype, SUBTYPE);
	opts_ok = ours && !tcmu_cfg_parse(nm.cfg, &opt, opt_err, sizeof(opt_err));
	pthread_mutex_lock(&G.lock);
	t->next = G.devs;
	G.devs = t;
	snprintf(t->lio_name, sizeof(t->lio_name), "%s", nm.dev);
	snprintf(t->cfg, sizeof(t->cfg), "%s", nm.cfg);
	t->hba = nm.hba;
	t->proto = SCSI_PROTO_SAS;
	td = opts_ok ? tgt_config_device(G.cfg, opt.device) : NULL;
	want = G.ring_threads;
	t->poll_us = G.poll_us;
	if (td && td->dev) /* claimed now: a live change cannot remove it from under us */
		snprintf(t->device, sizeof(t->device), "%s", td->name);
	pthread_mutex_unlock(&G.lock);
	if (!ours) {
		ut_log(LOG_INFO, "tcmu: uio%u (%s): subtype '%s' is not ours; left alone",
			u->minor, nm.dev, nm.subtype);
		return;
	}
	t->refused = true; /* until served */
	t->nl_reply = tcmu_lio_wants_reply(G.configfs, nm.hba, nm.dev);
	if (!opts_ok) {
		ut_log(LOG_ERR, "tcmu: uio%u: LIO device '%s': dev_config utgt/%s: %s; not opened",
			u->minor, nm.dev, nm.cfg, opt_err);
		return;
	}
	if (!td || !td->dev) {
		ut_log(LOG_ERR,
			"tcmu: uio%u: LIO device '%s' asks for dev_config utgt/%s, but scst.conf "
			"has no DEVICE '%s'; not opened",
			u->minor, nm.dev, nm.cfg, opt.device);
		return;
	}
	if (u->map_size > SIZE_MAX) {
		ut_log(LOG_ERR, "tcmu: uio%u: map of %llu bytes; not opened", u->minor,
			(unsigned long long)u->map_size);
		t->device[0] = '\0';
		return;
	}
	t->size = (size_t)u->map_size;
	t->fd = tcmu_uio_open(G.devdir, u->minor, t->size, &t->map, err, sizeof(err));
	if (t->fd < 0) {
		ut_log(LOG_ERR, "tcmu: uio%u (%s): %s; not served", u->minor, nm.dev, err);
		t->device[0] = '\0';
		return;
	}
	dev = tcmu_dev_new(
	    nm.dev, t->map, t->size, td->dev, tcmu_lio_max_xfer(G.configfs, nm.hba, nm.dev),
	    &(struct tcmu_dev_hooks){.kick = kick, .wake = wake, .ctx = t}, err, sizeof(err));
	t->ring_threads = 1;
	if (dev && want > 1) {
		if ((rc = tcmu_dev_set_second_thread(dev)) < 0)
			ut_log(LOG_WARNING,
				"tcmu: uio%u (%s): no second ring thread (%s); one serves it",
				u->minor, nm.dev, strerror(-rc));
		else
			t->ring_threads = 2;
	}
	if (dev && opt.hang_lba != UINT64_MAX) {
		tcmu_dev_set_hang_lba(dev, opt.hang_lba);
		ut_log(LOG_WARNING,
			"tcmu: uio%u (%s): fault injection: READ/WRITE at LBA %llu hangs every "
			"other time, until aborted",
			u->minor, nm.dev, (unsigned long long)opt.hang_lba);
	}
	pthread_mutex_lock(&G.lock); /* `show devices` reads it */
	t->dev = dev;
	t->sdev = td->dev;
	pthread_mutex_unlock(&G.lock);
	if (t->dev && (rc = ring_start(t)) < 0) {
		snprintf(err, sizeof(err), "cannot start its ring thread: %s", strerror(-rc));
		pthread_mutex_lock(&G.lock);
		t->dev = NULL;
		pthread_mutex_unlock(&G.lock);
		tcmu_dev_free(dev); /* nothing taken: its ring was never read */
	}
	if (!t->dev) {
		ut_log(LOG_ERR, "tcmu: uio%u (%s): %s; not served", u->minor, nm.dev, err);
		munmap(t->map, t->size);
		close(t->fd);
		t->fd = -1;
		t->device[0] = '\0';
		return;
	}
	t->refused = false;
	ut_log(LOG_NOTICE, "tcmu: uio%u: LIO device '%s' served by DEVICE %s%s", u->minor, nm.dev,
		opt.device, t->ring_threads > 1 ? " (two ring threads)" : "");
}

/* Removed (or failed): stop taking commands; freed once its in-flight ones are back. */
static void detach(struct tdev *t, const char *why)
{
	if (t->gone)
		return;
	pthread_mutex_lock(&G.lock);
	t->gone = true;
	pthread_mutex_unlock(&G.lock);
	if (t->dev) {
		ut_log(LOG_NOTICE, "tcmu: uio%u: %s; draining %u command(s)", t->minor, why,
			tcmu_dev_inflight(t->dev));
		tcmu_dev_close(t->dev);
		ring_stop(t); /* after close: it takes nothing more */
	}
}

/* Free gone devices whose commands all came back. */
static void reap_gone(void)
{
	for (struct tdev **pp = &G.devs; *pp;) {
		struct tdev *t = *pp;

		if (!t->gone || (t->dev && tcmu_dev_inflight(t->dev))) {
			pp = &t->next;
			continue;
		}
		pthread_mutex_lock(&G.lock);
		*pp = t->next;
		pthread_mutex_unlock(&G.lock);
		if (t->dev) {
			tcmu_dev_free(t->dev);
			munmap(t->map, t->size);
			close(t->fd);
			ut_log(LOG_INFO, "tcmu: uio%u: closed", t->minor);
		}
		free(t);
	}
}

/* After a live change: forget the refusals, so the next lines of rescan() look them up in
 * the new configuration (a DEVICE added at run time gets served). */
static void forget_refused(void)
{
	bool retry;

	pthread_mutex_lock(&G.lock);
	retry = G.retry;
	G.retry = false;
	pthread_mutex_unlock(&G.lock);
	if (!retry)
		return;
	for (struct tdev **pp = &G.devs; *pp;) {
		struct tdev *t = *pp;

		if (!t->refused || t->gone) {
			pp = &t->next;
			continue;
		}
		pthread_mutex_lock(&G.lock);
		*pp = t->next;
		pthread_mutex_unlock(&G.lock);
		free(t);
	}
}

/* A served device whose uio name changed: LIO rewrote its dev_config (attrib/dev_config while
 * enabled; with nl_reply_supported below 1 the kernel does not wait for our refusal).  The
 * ring and its commands stay ours, so it keeps its DEVICE: the same uio, a new name.  False
 * when the name is no longer a utgt device of the same LIO name (then it is let go). */
static bool renamed(struct tdev *t, const struct tcmu_uio_info *u)
{
	struct tcmu_uio_name nm;

	if (tcmu_uio_parse_name(u->name, &nm) < 0 || strcmp(nm.subtype, SUBTYPE) ||
	    strcmp(nm.dev, t->lio_name))
		return false;
	if (strcmp(nm.cfg, t->cfg))
		ut_log(LOG_WARNING,
			"tcmu: uio%u (%s): LIO now says dev_config utgt/%s; still served as "
			"utgt/%s by DEVICE %s (re-create the LIO device to change it)",
			t->minor, t->lio_name, nm.cfg, t->cfg, t->device);
	pthread_mutex_lock(&G.lock);
	snprintf(t->uio_name, sizeof(t->uio_name), "%s", u->name);
	pthread_mutex_unlock(&G.lock);
	return true;
}

/* Which fabric exports each served device: its nexus takes that protocol identifier.  Runs
 * on the fabric watcher thread, never on the ring's: configfs is walked without G.lock and the
 * result applied under it to the device still there under the same minor and name. */
static void read_fabrics(void)
{
	static struct {
		unsigned minor, hba;
		char name[TCMU_UIO_STR];
		char fab[sizeof(((struct tdev *)0)->fabrics)];
		int proto;
	} w[MAX_UIO];
	unsigned n = 0;

	pthread_mutex_lock(&G.lock);
	for (struct tdev *t = G.devs; t && n < MAX_UIO; t = t->next) {
		if (t->gone || !t->dev)
			continue;
		w[n].minor = t->minor;
		w[n].hba = t->hba;
		snprintf(w[n].name, sizeof(w[n].name), "%s", t->lio_name);
		n++;
	}
	pthread_mutex_unlock(&G.lock);
	for (unsigned i = 0; i < n; i++)
		w[i].proto =
		    (int)tcmu_lio_fabric(G.configfs, w[i].hba, w[i].name, w[i].fab, sizeof(w[i].fab));
	pthread_mutex_lock(&G.lock);
	for (unsigned i = 0; i < n; i++) {
		for (struct tdev *t = G.devs; t; t = t->next) {
			if (t->gone || !t->dev || t->minor != w[i].minor || strcmp(t->lio_name, w[i].name))
				continue;
			if (t->proto == w[i].proto && !strcmp(t->fabrics, w[i].fab))
				break;
			snprintf(t->fabrics, sizeof(t->fabrics), "%s", w[i].fab);
			t->proto = w[i].proto;
			tcmu_dev_set_proto(t->dev, w[i].proto);
			ut_log(LOG_INFO,
				"tcmu: uio%u (%s): LUNs of fabric(s) '%s': protocol identifier %s",
				t->minor, t->lio_name, w[i].fab,
				tcmu_lio_proto_name((enum scsi_proto_id)w[i].proto));
			break;
		}
	}
	pthread_mutex_unlock(&G.lock);
}

static void *fabric_watcher(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&G.lock);
	while (!G.fab_stop) {
		struct timespec ts;

		pthread_mutex_unlock(&G.lock);
		read_fabrics();
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += RESCAN_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_mutex_lock(&G.lock);
		if (!G.fab_stop)
			pthread_cond_timedwait(&G.fab_cv, &G.lock, &ts);
	}
	pthread_mutex_unlock(&G.lock);
	return NULL;
}

static void fabric_stop(void)
{
	pthread_mutex_lock(&G.lock);
	G.fab_stop = true;
	pthread_cond_signal(&G.fab_cv);
	pthread_mutex_unlock(&G.lock);
	pthread_join(G.fab_thread, NULL);
}

static void nl_try_open(void);

static void rescan(void)
{
	static struct tcmu_uio_info u[MAX_UIO];
	unsigned n = tcmu_uio_scan(G.sysfs, u, MAX_UIO);

	nl_try_open();
	forget_refused();
	for (struct tdev *t = G.devs; t; t = t->next) {
		const struct tcmu_uio_info *other = NULL;
		bool present = false;

		for (unsigned i = 0; i < n && !present; i++) {
			if (u[i].minor != t->minor)
				continue;
			present = !strcmp(u[i].name, t->uio_name);
			other = &u[i];
		}
		if (!present && other && t->dev && !t->gone)
			present = renamed(t, other);
		if (!present)
			detach(t, "device removed");
	}
	for (unsigned i = 0; i < n; i++)
		if (!find(u[i].minor, u[i].name))
			attach(&u[i]);
	reap_gone();
}

/* The served device of uio minor, or NULL. */
static struct tdev *served(uint32_t minor)
{
	for (struct tdev *t = G.devs; t; t = t->next)
		if (t->minor == minor && t->dev && !t->gone)
			return t;
	return NULL;
}

/* One LIO event.  ADDED: scan now (no 500 ms wait); REMOVED: nothing (the uio device going
 * away detaches it, and it goes only after this answer); RECONFIG: tcmu_reconfig(). */
static void nl_event(const struct tcmu_nl_event *ev)
{
	struct tcmu_uio_name nm;
	struct tdev *t;
	char msg[512] = "", reply[128];
	int status = 0;
	size_t n;

	if (tcmu_uio_parse_name(ev->device, &nm) < 0 || strcmp(nm.subtype, SUBTYPE))
		return; /* not ours: tcmu-runner's, if anyone's */
	switch (ev->cmd) {
	case TCMU_CMD_ADDED_DEVICE:
		rescan();
		status = served(ev->minor) ? 0 : -ENODEV;
		break;
	case TCMU_CMD_REMOVED_DEVICE:
		/* its configfs directory is going: what attach read says whether the kernel waits */
		for (t = G.devs; t && t->minor != ev->minor; t = t->next)
			;
		if (!t || !t->nl_reply || ev->version < 2 || !ev->has_dev_id)
			return;
		goto reply;
	case TCMU_CMD_RECONFIG_DEVICE:
		if (!(t = served(ev->minor))) {
			status = -ENODEV;
			snprintf(msg, sizeof(msg), "not served, reconfiguration refused");
		} else {
			status = tcmu_reconfig(t->sdev, t->cfg, ev, msg, sizeof(msg));
		}
		ut_log(status ? LOG_ERR : LOG_NOTICE, "tcmu: uio%u (%s): %s", ev->minor, nm.dev,
			msg);
		break;
	default:
		return;
	}
	/* the kernel waits only when the device's nl_reply_supported is above 0; a reply nobody
	 * waits for costs a kernel log line */
	if (ev->version < 2 || !ev->has_dev_id || !tcmu_lio_wants_reply(G.configfs, nm.hba, nm.dev))
		return;
reply:
	n = tcmu_nl_build_reply(reply, sizeof(reply), G.nl_family, ++G.nl_seq, ev, status);
	if (tcmu_nl_send(G.nl_fd, reply, n) < 0)
		ut_log(LOG_ERR, "tcmu: uio%u (%s): netlink reply: %s", ev->minor, nm.dev,
			strerror(errno));
	else
		ut_log(LOG_INFO, "tcmu: uio%u (%s): replied %d to netlink command %u", ev->minor,
			nm.dev, status, ev->cmd);
}

static void on_nl(struct ut_watch *w, uint32_t events)
{
	static uint8_t buf[32768];
	ssize_t r;

	(void)w;
	(void)events;
	while ((r = recv(G.nl_fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		size_t off = 0;

		while (off < (size_t)r) {
			struct tcmu_nl_event ev;
			bool is_event;
			long step = tcmu_nl_parse(buf + off, (size_t)r - off, G.nl_family, &ev,
						  &is_event);

			if (step <= 0)
				break;
			if (is_event)
				nl_event(&ev);
			off += (size_t)step;
		}
	}
	if (r < 0 && errno == ENOBUFS) /* added/removed devices: the scan finds them anyway */
		ut_log(LOG_WARNING,
			"tcmu: netlink events lost (ENOBUFS): a reconfiguration may have been missed");
}

/* Join TCM-USER's group once target_core_user is loaded; until then LIO's writes of
 * attrib/dev_size and friends fail with ESRCH (nobody listens). */
static void nl_try_open(void)
{
	char err[256];
	int fd;

	if (!G.netlink || G.nl_fd >= 0)
		return;
	fd = tcmu_nl_open(&G.nl_family, err, sizeof(err));
	if (fd < 0) {
		if (!G.nl_logged)
			ut_log(LOG_INFO, "tcmu: %s; retried at every scan", err);
		G.nl_logged = true;
		return;
	}
	G.nl_fd = fd;
	G.nl_watch.fn = on_nl;
	G.nl_watch.fd = fd;
	if (ut_thread_watch(&G.ut, &G.nl_watch, EPOLLIN)) {
		close(fd);
		G.nl_fd = -1;
		return;
	}
	ut_log(LOG_INFO, "tcmu: listening to LIO's TCM-USER netlink events (family %u)",
		G.nl_family);
}

static void reap_all(struct ut_watch *w, uint32_t events)
{
	uint64_t v;
	ssize_t r = read(G.evfd, &v, sizeof(v));

	(void)w;
	(void)events;
	(void)r;
	for (struct tdev *t = G.devs; t; t = t->next) {
		int err = __atomic_load_n(&t->ring_err, __ATOMIC_ACQUIRE);

		if (t->dev && err && !t->gone) {
			char why[96];

			if (err == -EPROTO)
				snprintf(why, sizeof(why), "ring unusable");
			else
				snprintf(why, sizeof(why), "device gone (uio read: %s)",
					 strerror(-err));
			detach(t, why);
		}
		if (t->dev)
			tcmu_dev_reap(t->dev);
	}
}

static void rescan_fn(struct ut_timer *tm)
{
	(void)tm;
	rescan();
}

/* Stopping: every device stops taking commands; the loop ends once their in-flight ones
 * came back (a closing device's completions ring the eventfd). */
static bool drain_fn(struct ut_poller *p)
{
	(void)p;
	reap_gone();
	for (struct tdev *t = G.devs; t; t = t->next)
		if (t->dev && tcmu_dev_inflight(t->dev))
			return false;
	ut_thread_stop(&G.ut);
	return false;
}

static void stop_fn(struct ut_msg *m)
{
	(void)m;
	ut_thread_del_timer(&G.ut, &G.rescan);
	for (struct tdev *t = G.devs; t; t = t->next)
		detach(t, "utgtd stopping");
	G.drain.fn = drain_fn;
	ut_thread_add_poller(&G.ut, &G.drain);
}

static void tcmu_stop(void)
{
	if (!G.running)
		return;
	fabric_stop();
	G.stop_msg.fn = stop_fn;
	ut_thread_post(&G.ut, &G.stop_msg);
	ut_thread_wait(&G.ut); /* not join: that would end the loop before the drain */
	reap_gone();
	while (G.devs) { /* refused entries */
		struct tdev *t = G.devs;
		G.devs = t->next;
		free(t);
	}
	ut_thread_fini(&G.ut);
	close(G.evfd);
	G.evfd = -1;
	if (G.nl_fd >= 0)
		close(G.nl_fd);
	G.nl_fd = -1;
	G.nl_logged = false;
	G.running = false;
	ut_log(LOG_INFO, "tcmu: stopped");
}

/* The driver's ring_threads: 1, 2, or auto (the default): two when there is a second CPU
 * for the second (a QD32 4 KiB random read stream ran 1.4x faster with it, docs/tcmu.md),
 * else one.  0 when the value is none of these. */
static unsigned ring_threads_of(const struct tgt_driver *drv)
{
	const char *v = drv ? tgt_attr_get(&drv->attrs, "ring_threads") : NULL;

	if (!v || !strcmp(v, "auto"))
		return sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
	if (!strcmp(v, "1") || !strcmp(v, "2"))
		return (unsigned)(*v - '0');
	return 0;
}

/* The driver's poll_us, 0 to POLL_US_MAX (the default 0: never spin); -1 when the value is
 * not a number in that range.  Beyond a millisecond the CPU spent buys nothing a sleep would
 * lose (the iSCSI workers' bound, transports/iscsi). */
#define POLL_US_MAX 1000
static long poll_us_of(const struct tgt_driver *drv)
{
	const char *v = drv ? tgt_attr_get(&drv->attrs, "poll_us") : NULL;
	char *end;
	unsigned long n;

	if (!v)
		return 0;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || *v == '-' || n > POLL_US_MAX)
		return -1;
	return (long)n;
}

/* Tests point discovery elsewhere (a fake sysfs tree). */
int tcmu_transport_start_at(const struct tgt_config *cfg, const char *sysfs, const char *devdir,
			    const char *configfs, char *err, size_t errlen)
{
	bool fab = false;
	int rc;

	if (G.running) {
		snprintf(err, errlen, "already started");
		return -1;
	}
	G.cfg = cfg;
	G.ring_threads = ring_threads_of(tgt_config_driver(cfg, "tcmu"));
	if (!G.ring_threads) { /* validated: only a test's configuration gets here */
		snprintf(err, errlen, "ring_threads: want 1, 2 or auto");
		return -1;
	}
	if (poll_us_of(tgt_config_driver(cfg, "tcmu")) < 0) {
		snprintf(err, errlen, "poll_us: want 0 to %d", POLL_US_MAX);
		return -1;
	}
	G.poll_us = (unsigned)poll_us_of(tgt_config_driver(cfg, "tcmu"));
	sigaction(WAKE_SIG, &(struct sigaction){.sa_handler = wake_sig_handler}, NULL);
	G.sysfs = sysfs;
	G.devdir = devdir;
	G.configfs = configfs;
	rc = ut_thread_init(&G.ut, "tcmu");
	if (rc) {
		snprintf(err, errlen, "event loop: %s", strerror(-rc));
		return -1;
	}
	G.evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	G.done_watch.fn = reap_all;
	G.done_watch.fd = G.evfd;
	if (G.evfd < 0 || ut_thread_watch(&G.ut, &G.done_watch, EPOLLIN)) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	G.rescan.fn = rescan_fn;
	G.rescan.period_ms = RESCAN_MS;
	ut_thread_add_timer(&G.ut, &G.rescan);
	rescan(); /* devices configured before utgtd started */
	G.fab_stop = false;
	rc = pthread_create(&G.fab_thread, NULL, fabric_watcher, NULL);
	if (rc) {
		snprintf(err, errlen, "cannot start the fabric watcher: %s", strerror(rc));
		goto fail;
	}
	fab = true;
	rc = ut_thread_start(&G.ut, -1);
	if (rc) {
		snprintf(err, errlen, "cannot start the event thread: %s", strerror(-rc));
		goto fail;
	}
	G.running = true;
	ut_log(LOG_INFO, "tcmu: watching %s for LIO user backstores with dev_config %s/<DEVICE>",
		sysfs, SUBTYPE);
	return 0;
fail:
	if (fab)
		fabric_stop();
	for (struct tdev *t = G.devs; t; t = t->next)
		detach(t, "start failed");
	reap_gone(); /* nothing can be in flight: no command was taken without the thread */
	ut_thread_fini(&G.ut);
	if (G.evfd >= 0)
		close(G.evfd);
	G.evfd = -1;
	if (G.nl_fd >= 0)
		close(G.nl_fd);
	G.nl_fd = -1;
	return -1;
}

static int tcmu_start(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
		      size_t errlen)
{
	(void)drv;
	G.netlink = true;
	return tcmu_transport_start_at(cfg, "/sys/class/uio", "/dev", "/sys/kernel/config/target",
				       err, errlen);
}

static const char *const driver_attrs[] = {"enabled", "ring_threads", "poll_us", NULL};
static const char *const target_attrs[] = {"enabled", NULL};

static void tcmu_validate(const struct tgt_driver *drv, struct diag *d)
{
	const struct utgt_attr *a = tgt_attr_find(&drv->attrs, "ring_threads");

	if (a && !ring_threads_of(drv))
		diag_error(d, a->line, "tcmu: ring_threads '%s': want 1, 2 or auto", a->value);
	a = tgt_attr_find(&drv->attrs, "poll_us");
	if (a && poll_us_of(drv) < 0)
		diag_error(d, a->line, "tcmu: poll_us '%s': want 0 to %d (microseconds)", a->value,
			   POLL_US_MAX);
	/* LIO owns the LUN mapping: a TARGET here would never be used */
	for (unsigned i = 0; i < drv->ntargets; i++)
		diag_warn(d, drv->targets[i].line,
			  "tcmu: TARGET %s is ignored: LIO maps user backstores to its own "
			  "fabrics (dev_config utgt/<DEVICE> names the DEVICE)",
			  drv->targets[i].name);
}

/* Live administration: the DEVICEs served stay (the engine refuses to remove or re-create
 * one in use, through uses_device); the new configuration is where later LIO devices are
 * looked up, and so are the ones refused so far (a DEVICE added live serves the LIO device
 * that named it, at the next scan). */
static int tcmu_update(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
		       size_t errlen)
{
	unsigned n = ring_threads_of(drv);
	long poll = poll_us_of(drv);

	if (!n) {
		snprintf(err, errlen, "ring_threads: want 1, 2 or auto");
		return -1;
	}
	if (poll < 0) {
		snprintf(err, errlen, "poll_us: want 0 to %d", POLL_US_MAX);
		return -1;
	}
	pthread_mutex_lock(&G.lock);
	G.cfg = cfg;
	G.retry = true;
	/* the engine changes driver attributes only while the driver is stopped; should one
	 * come here anyway, it is for devices served from now on (a served one keeps its) */
	G.ring_threads = n;
	G.poll_us = (unsigned)poll;
	pthread_mutex_unlock(&G.lock);
	return 0;
}

static bool tcmu_uses_device(const char *name)
{
	bool used = false;

	pthread_mutex_lock(&G.lock);
	for (struct tdev *t = G.devs; t && !used; t = t->next)
		used = !t->gone && !strcmp(t->device, name);
	pthread_mutex_unlock(&G.lock);
	return used;
}

/* `show devices`: the LIO devices DEVICE name serves, with their rings and counters. */
static void tcmu_show_device(const char *name, struct ut_json *j)
{
	ut_json_arr(j, "tcmu");
	pthread_mutex_lock(&G.lock);
	for (struct tdev *t = G.devs; t; t = t->next) {
		struct tcmu_dev_stats s;
		char uio[24];

		if (t->gone || !t->dev || strcmp(t->device, name))
			continue;
		tcmu_dev_get_stats(t->dev, &s);
		ut_json_obj(j, NULL);
		ut_json_str(j, "lio_device", t->lio_name);
		ut_json_u64(j, "uio", t->minor);
		snprintf(uio, sizeof(uio), "uio%u", t->minor);
		ut_json_str(j, "uio_name", uio);
		ut_json_str(j, "dev_config", t->cfg);
		ut_json_str(j, "fabric", t->fabrics);
		ut_json_str(j, "protocol", tcmu_lio_proto_name((enum scsi_proto_id)t->proto));
		ut_json_u64(j, "ring_bytes", s.ring_bytes);
		ut_json_u64(j, "data_bytes", s.data_bytes);
		ut_json_u64(j, "mailbox_flags", s.flags);
		ut_json_u64(j, "ring_threads", t->ring_threads);
		ut_json_u64(j, "poll_us", t->poll_us);
		ut_json_u64(j, "found_while_polling",
			    __atomic_load_n(&t->poll_hits, __ATOMIC_RELAXED));
		ut_json_u64(j, "in_flight", s.inflight);
		ut_json_u64(j, "commands", s.cmds);
		ut_json_u64(j, "completions", s.completions);
		ut_json_u64(j, "completed_on_ring_thread", s.polled);
		ut_json_u64(j, "taken_by_second_thread", s.second);
		ut_json_u64(j, "second_thread_wakeups", s.second_wakes);
		ut_json_u64(j, "aborted", s.aborted);
		ut_json_u64(j, "tmr_entries", s.tmrs);
		ut_json_u64(j, "tmr_commands", s.tmr_cmds);
		ut_json_u64(j, "held", s.held);
		ut_json_u64(j, "refused_completions", s.refused);
		ut_json_end_obj(j);
	}
	pthread_mutex_unlock(&G.lock);
	ut_json_end_arr(j);
}

const struct tgt_transport tcmu_transport = {
    .driver = "tcmu",
    .driver_attrs = driver_attrs,
    .target_attrs = target_attrs,
    .validate = tcmu_validate,
    .start = tcmu_start,
    .stop = tcmu_stop,
    .update = tcmu_update,
    .uses_device = tcmu_uses_device,
    .show_device = tcmu_show_device,
};
