/* utgtd's tcmu driver (struct tcmu_transport): serves LIO "user" backstores whose dev_config
 * is utgt/<DEVICE> with that scst.conf DEVICE.
 *
 *   TARGET_DRIVER tcmu {
 *           enabled 1
 *   }
 *
 * One event thread: every TCMU device's /dev/uioN fd (the kernel queued commands), one
 * eventfd (a task completed somewhere), and a 500 ms timer that rescans /sys/class/uio for
 * devices created or removed through configfs.  Entries in other subtypes are left alone
 * (tcmu-runner may serve them); a dev_config naming no DEVICE is logged once and not opened. */
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

#include "target/tgt_log.h"
#include "target/tgt_model.h"
#include "transports/tcmu/tcmu_dev.h"
#include "transports/tcmu/tcmu_lio.h"
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
	bool gone; /* removed: drain, then free */
	struct tdev *next;
};

static struct {
	const struct tgt_config *cfg;
	const char *sysfs, *devdir, *configfs;
	int ep, evfd;
	pthread_t thr;
	bool running;
	volatile bool stop;
	struct tdev *devs;
} G = {.ep = -1, .evfd = -1};

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

/* A new uio device: open it if it is one of ours. */
static void attach(const struct tcmu_uio_info *u)
{
	struct tcmu_uio_name nm;
	struct tdev *t = calloc(1, sizeof(*t));
	const struct tgt_device *td;
	char err[256] = "";

	if (!t)
		return;
	t->minor = u->minor;
	snprintf(t->uio_name, sizeof(t->uio_name), "%s", u->name);
	t->fd = -1;
	t->next = G.devs;
	G.devs = t;
	tcmu_uio_parse_name(u->name, &nm);
	if (strcmp(nm.subtype, SUBTYPE)) {
		tgt_log(LOG_INFO, "tcmu: uio%u (%s): subtype '%s' is not ours; left alone",
			u->minor, nm.dev, nm.subtype);
		return;
	}
	td = tgt_config_device(G.cfg, nm.cfg);
	if (!td || !td->dev) {
		tgt_log(LOG_ERR,
			"tcmu: uio%u: LIO device '%s' asks for dev_config utgt/%s, but scst.conf "
			"has no DEVICE '%s'; not opened",
			u->minor, nm.dev, nm.cfg, nm.cfg);
		return;
	}
	if (u->map_size > SIZE_MAX) {
		tgt_log(LOG_ERR, "tcmu: uio%u: map of %llu bytes; not opened", u->minor,
			(unsigned long long)u->map_size);
		return;
	}
	t->size = (size_t)u->map_size;
	t->fd = tcmu_uio_open(G.devdir, u->minor, t->size, &t->map, err, sizeof(err));
	if (t->fd < 0) {
		tgt_log(LOG_ERR, "tcmu: uio%u (%s): %s; not served", u->minor, nm.dev, err);
		return;
	}
	t->dev = tcmu_dev_new(
	    nm.dev, t->map, t->size, td->dev, tcmu_lio_max_xfer(G.configfs, nm.hba, nm.dev),
	    &(struct tcmu_dev_hooks){.kick = kick, .wake = wake, .ctx = t}, err, sizeof(err));
	if (!t->dev) {
		tgt_log(LOG_ERR, "tcmu: uio%u (%s): %s; not served", u->minor, nm.dev, err);
		munmap(t->map, t->size);
		close(t->fd);
		t->fd = -1;
		return;
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = t};
	epoll_ctl(G.ep, EPOLL_CTL_ADD, t->fd, &ev);
	tgt_log(LOG_NOTICE, "tcmu: uio%u: LIO device '%s' served by DEVICE %s", u->minor, nm.dev,
		nm.cfg);
	tcmu_dev_poll(t->dev); /* anything queued before we came */
}

/* Removed (or failed): stop taking commands; freed once its in-flight ones are back. */
static void detach(struct tdev *t, const char *why)
{
	if (t->gone)
		return;
	t->gone = true;
	if (t->dev) {
		tgt_log(LOG_NOTICE, "tcmu: uio%u: %s; draining %u command(s)", t->minor, why,
			tcmu_dev_inflight(t->dev));
		tcmu_dev_close(t->dev);
		epoll_ctl(G.ep, EPOLL_CTL_DEL, t->fd, NULL);
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
		*pp = t->next;
		if (t->dev) {
			tcmu_dev_free(t->dev);
			munmap(t->map, t->size);
			close(t->fd);
			tgt_log(LOG_INFO, "tcmu: uio%u: closed", t->minor);
		}
		free(t);
	}
}

static void rescan(void)
{
	static struct tcmu_uio_info u[MAX_UIO];
	unsigned n = tcmu_uio_scan(G.sysfs, u, MAX_UIO);

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

static void reap_all(void)
{
	uint64_t v;
	ssize_t r = read(G.evfd, &v, sizeof(v));
	(void)r;
	for (struct tdev *t = G.devs; t; t = t->next)
		if (t->dev)
			tcmu_dev_reap(t->dev);
}

static void on_uio(struct tdev *t, uint32_t events)
{
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

static void *loop(void *arg)
{
	struct epoll_event evs[32];
	struct timespec last, now;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &last);
	for (;;) {
		int n = epoll_wait(G.ep, evs, 32, RESCAN_MS);
		bool any_inflight = false;

		for (int i = 0; i < n; i++) {
			if (!evs[i].data.ptr)
				reap_all();
			else
				on_uio(evs[i].data.ptr, evs[i].events);
		}
		if (G.stop) {
			for (struct tdev *t = G.devs; t; t = t->next)
				detach(t, "utgtd stopping");
			reap_all();
			reap_gone();
			for (struct tdev *t = G.devs; t; t = t->next)
				any_inflight |= t->dev && tcmu_dev_inflight(t->dev);
			if (!any_inflight)
				break;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000 >=
		    RESCAN_MS) {
			rescan();
			last = now;
		}
	}
	reap_gone();
	while (G.devs) { /* refused entries */
		struct tdev *t = G.devs;
		G.devs = t->next;
		free(t);
	}
	return NULL;
}

static void tcmu_stop(void)
{
	uint64_t one = 1;
	ssize_t r;

	if (!G.running)
		return;
	G.stop = true;
	r = write(G.evfd, &one, sizeof(one));
	(void)r;
	pthread_join(G.thr, NULL);
	close(G.ep);
	close(G.evfd);
	G.ep = G.evfd = -1;
	G.running = false;
	tgt_log(LOG_INFO, "tcmu: stopped");
}

/* Tests point discovery elsewhere (a fake sysfs tree). */
int tcmu_transport_start_at(const struct tgt_config *cfg, const char *sysfs, const char *devdir,
			    const char *configfs, char *err, size_t errlen)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};

	if (G.running) {
		snprintf(err, errlen, "already started");
		return -1;
	}
	G.cfg = cfg;
	G.sysfs = sysfs;
	G.devdir = devdir;
	G.configfs = configfs;
	G.stop = false;
	G.ep = epoll_create1(EPOLL_CLOEXEC);
	G.evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (G.ep < 0 || G.evfd < 0 || epoll_ctl(G.ep, EPOLL_CTL_ADD, G.evfd, &ev) < 0) {
		snprintf(err, errlen, "epoll/eventfd: %s", strerror(errno));
		goto fail;
	}
	rescan(); /* devices configured before utgtd started */
	if (pthread_create(&G.thr, NULL, loop, NULL)) {
		snprintf(err, errlen, "cannot start the event thread");
		goto fail;
	}
	G.running = true;
	tgt_log(LOG_INFO, "tcmu: watching %s for LIO user backstores with dev_config %s/<DEVICE>",
		sysfs, SUBTYPE);
	return 0;
fail:
	for (struct tdev *t = G.devs; t; t = t->next)
		detach(t, "start failed");
	reap_gone(); /* nothing can be in flight: no command was taken without the thread */
	if (G.ep >= 0)
		close(G.ep);
	if (G.evfd >= 0)
		close(G.evfd);
	G.ep = G.evfd = -1;
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

const struct tgt_transport tcmu_transport = {
    .driver = "tcmu",
    .driver_attrs = driver_attrs,
    .target_attrs = target_attrs,
    .validate = tcmu_validate,
    .start = tcmu_start,
    .stop = tcmu_stop,
};
