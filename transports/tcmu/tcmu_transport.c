/* utgtd's tcmu driver (struct tcmu_transport): serves LIO "user" backstores whose dev_config
 * is utgt/<DEVICE> with that scst.conf DEVICE.
 *
 *   TARGET_DRIVER tcmu {
 *           enabled 1
 *   }
 *
 * One event thread (common/ut_thread.h): every TCMU device's /dev/uioN fd (the kernel queued
 * commands), one eventfd (a closing device's completion or a finished abort: time to look
 * whether a device can be freed; completions themselves go into the ring from the thread
 * that finishes them, tcmu_dev.c), and a 500 ms timer that rescans /sys/class/uio for devices created or removed through configfs.
 * Entries in other subtypes are left alone (tcmu-runner may serve them); a dev_config naming
 * no DEVICE is logged once and not opened. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <syslog.h>
#include <unistd.h>

#include "common/ut_thread.h"
#include "common/ut_log.h"
#include "transports/model/tgt_model.h"
#include "common/ut_json.h"
#include "transports/tcmu/tcmu_cfg.h"
#include "transports/tcmu/tcmu_dev.h"
#include "transports/tcmu/tcmu_lio.h"
#include "transports/tcmu/tcmu_uio.h"

#define MAX_UIO	  256
#define RESCAN_MS 500
#define SUBTYPE	  "utgt"

struct tdev {
	struct ut_watch watch;
	unsigned minor;
	char uio_name[TCMU_UIO_STR * 2];
	int fd; /* -1: refused (logged once), kept so it is not retried */
	void *map;
	size_t size;
	struct tcmu_dev *dev;
	char device[64]; /* the scst.conf DEVICE it serves ("" when refused) */
	char lio_name[TCMU_UIO_STR]; /* configfs core/user_N/<lio_name> */
	bool refused; /* ours, but not served (no such DEVICE, bad option, open failed) */
	bool gone;	 /* removed: drain, then free */
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
	bool running;
	bool retry; /* a live change: refused devices are looked up again at the next scan */
	struct tdev *devs;
} G = {.lock = PTHREAD_MUTEX_INITIALIZER, .evfd = -1};

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

static void on_uio(struct ut_watch *w, uint32_t events);

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
	td = opts_ok ? tgt_config_device(G.cfg, opt.device) : NULL;
	if (td && td->dev) /* claimed now: a live change cannot remove it from under us */
		snprintf(t->device, sizeof(t->device), "%s", td->name);
	pthread_mutex_unlock(&G.lock);
	if (!ours) {
		ut_log(LOG_INFO, "tcmu: uio%u (%s): subtype '%s' is not ours; left alone",
			u->minor, nm.dev, nm.subtype);
		return;
	}
	t->refused = true; /* until served */
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
	if (dev && opt.hang_lba != UINT64_MAX) {
		tcmu_dev_set_hang_lba(dev, opt.hang_lba);
		ut_log(LOG_WARNING,
			"tcmu: uio%u (%s): fault injection: READ/WRITE at LBA %llu hangs every "
			"other time, until aborted",
			u->minor, nm.dev, (unsigned long long)opt.hang_lba);
	}
	pthread_mutex_lock(&G.lock); /* `show devices` reads it */
	t->dev = dev;
	pthread_mutex_unlock(&G.lock);
	if (!t->dev) {
		ut_log(LOG_ERR, "tcmu: uio%u (%s): %s; not served", u->minor, nm.dev, err);
		munmap(t->map, t->size);
		close(t->fd);
		t->fd = -1;
		t->device[0] = '\0';
		return;
	}
	t->refused = false;
	t->watch.fn = on_uio;
	t->watch.fd = t->fd;
	ut_thread_watch(&G.ut, &t->watch, EPOLLIN);
	ut_log(LOG_NOTICE, "tcmu: uio%u: LIO device '%s' served by DEVICE %s", u->minor, nm.dev,
		opt.device);
	tcmu_dev_poll(t->dev); /* anything queued before we came */
	tcmu_dev_reap(t->dev);
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
		ut_thread_unwatch(&G.ut, &t->watch);
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

static void rescan(void)
{
	static struct tcmu_uio_info u[MAX_UIO];
	unsigned n = tcmu_uio_scan(G.sysfs, u, MAX_UIO);

	forget_refused();
	for (struct tdev *t = G.devs; t; t = t->next) {
		bool present = false;
		for (unsigned i = 0; i < n && !present; i++)
			present = u[i].minor == t->minor && !strcmp(u[i].name, t->uio_name);
		if (!present)
			detach(t, "device removed");
	}
	for (unsigned i = 0; i < n; i++)
		if (!find(u[i].minor, u[i].name))
			attach(&u[i]);
	reap_gone();
}

static void reap_all(struct ut_watch *w, uint32_t events)
{
	uint64_t v;
	ssize_t r = read(G.evfd, &v, sizeof(v));

	(void)w;
	(void)events;
	(void)r;
	for (struct tdev *t = G.devs; t; t = t->next)
		if (t->dev)
			tcmu_dev_reap(t->dev);
}

static void on_uio(struct ut_watch *w, uint32_t events)
{
	struct tdev *t = (struct tdev *)w;

	if (t->gone)
		return;
	if ((events & (EPOLLERR | EPOLLHUP)) || tcmu_uio_ack(t->fd) < 0) {
		detach(t, "device gone (uio read failed)");
		return;
	}
	tcmu_dev_poll(t->dev);
	if (tcmu_dev_broken(t->dev))
		detach(t, "ring unusable");
	tcmu_dev_reap(t->dev); /* commands the core answered at once */
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
	G.running = false;
	ut_log(LOG_INFO, "tcmu: stopped");
}

/* Tests point discovery elsewhere (a fake sysfs tree). */
int tcmu_transport_start_at(const struct tgt_config *cfg, const char *sysfs, const char *devdir,
			    const char *configfs, char *err, size_t errlen)
{
	int rc;

	if (G.running) {
		snprintf(err, errlen, "already started");
		return -1;
	}
	G.cfg = cfg;
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
	for (struct tdev *t = G.devs; t; t = t->next)
		detach(t, "start failed");
	reap_gone(); /* nothing can be in flight: no command was taken without the thread */
	ut_thread_fini(&G.ut);
	if (G.evfd >= 0)
		close(G.evfd);
	G.evfd = -1;
	return -1;
}

static int tcmu_start(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
		      size_t errlen)
{
	(void)drv;
	return tcmu_transport_start_at(cfg, "/sys/class/uio", "/dev", "/sys/kernel/config/target",
				       err, errlen);
}

static const char *const driver_attrs[] = {"enabled", NULL};
static const char *const target_attrs[] = {"enabled", NULL};

static void tcmu_validate(const struct tgt_driver *drv, struct diag *d)
{
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
	(void)drv;
	(void)err;
	(void)errlen;
	pthread_mutex_lock(&G.lock);
	G.cfg = cfg;
	G.retry = true;
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

		if (t->gone || !t->dev || strcmp(t->device, name))
			continue;
		tcmu_dev_get_stats(t->dev, &s);
		ut_json_obj(j, NULL);
		ut_json_str(j, "lio_device", t->lio_name);
		ut_json_u64(j, "uio", t->minor);
		ut_json_u64(j, "ring_bytes", s.ring_bytes);
		ut_json_u64(j, "data_bytes", s.data_bytes);
		ut_json_u64(j, "mailbox_flags", s.flags);
		ut_json_u64(j, "in_flight", s.inflight);
		ut_json_u64(j, "commands", s.cmds);
		ut_json_u64(j, "completions", s.completions);
		ut_json_u64(j, "completed_on_ring_thread", s.polled);
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
