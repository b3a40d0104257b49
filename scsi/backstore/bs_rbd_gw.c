/* The several-gateway lock policy (bs_rbd_lock.c) given librbd: see bs_rbd_gw.h.
 *
 * The lock thread ticks once a second: rbd_lock_get_owners, then as the policy says the
 * beacon object (utgt.gw.<image id>, in the image's pool: "<address> <group> <counter>"),
 * rados_blocklist_add, rbd_lock_break, rbd_lock_acquire.  None of these runs on librbd's
 * finisher thread or on the I/O path.  The cluster's health (a monitor command that may take
 * rados_mon_op_timeout) is read on a second thread, so a slow monitor never delays the
 * owner's beacon past a peer's grace period.
 *
 * Without alua_follow_lock (one gateway, or several that do not share the lock) the same
 * threads only observe, for utgtadm: who holds the exclusive lock librbd takes on the first
 * write, and the cluster's health.  No policy runs and nothing gates the I/O path. */
#ifdef UTGT_HAVE_RBD

#include "scsi/backstore/bs_rbd_gw.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/ut_log.h"
#include "scsi/backstore/bs_rbd_lock.h"

#define GW_TICK_MS	   1000
#define GW_GRACE_MS	   15000 /* alua_lock_grace's default */
#define GW_HEALTH_EVERY_MS 5000
/* Blocklist entries outlive any gateway restart; a restarted gateway has a new address. */
#define GW_BLOCKLIST_S 3600

struct rbd_gw {
	struct backstore *bs;
	rados_t cluster;
	rados_ioctx_t ioctx;
	rbd_image_t image;
	char oid[96];
	struct bs_rbd_lock lock;
	bs_rbd_reopen_fn reopen;
	bool follow; /* the policy runs; false: only observe the owner and the health */

	pthread_t thread, health_thread;
	pthread_mutex_t mu; /* stop, want, status, health */
	pthread_cond_t cv;
	bool stop, want, health_running;
	bool reopening, health_busy; /* the health thread uses cluster while health_busy */
	unsigned fenced;	     /* times this gateway was fenced and came back */
	uint64_t takeover_at;	     /* when the current takeover began (ms), for the log */
	enum bs_lock_role role; /* relaxed atomic: the I/O path reads it */
	struct bs_lock_status status;
	char health[32];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int gw_owner(void *ctx, char *addr, size_t len)
{
	struct rbd_gw *gw = ctx;
	rbd_lock_mode_t mode;
	char *owners[4];
	size_t n = 4;
	int r = rbd_lock_get_owners(gw->image, &mode, owners, &n);

	if (r == -ENOENT || (r == 0 && n == 0))
		return 0;
	if (r < 0)
		return r;
	snprintf(addr, len, "%s", owners[0]);
	rbd_lock_get_owners_cleanup(owners, n);
	return 1;
}

static int gw_acquire(void *ctx)
{
	return rbd_lock_acquire(((struct rbd_gw *)ctx)->image, RBD_LOCK_MODE_EXCLUSIVE);
}

static int gw_fence(void *ctx, const char *addr)
{
	struct rbd_gw *gw = ctx;

	return rados_blocklist_add(gw->cluster, (char *)addr, GW_BLOCKLIST_S);
}

static int gw_break(void *ctx, const char *addr)
{
	return rbd_lock_break(((struct rbd_gw *)ctx)->image, RBD_LOCK_MODE_EXCLUSIVE, addr);
}

static int gw_beacon_read(void *ctx, struct bs_rbd_beacon *b)
{
	struct rbd_gw *gw = ctx;
	char buf[BS_RBD_ADDR_MAX + 48];
	unsigned long long seq;
	unsigned group;
	int r = rados_read(gw->ioctx, gw->oid, buf, sizeof(buf) - 1, 0);

	if (r < 0)
		return r;
	buf[r] = 0;
	if (sscanf(buf, "%127s %u %llu", b->addr, &group, &seq) != 3 || group > 0xffff)
		return -EINVAL;
	b->group = (uint16_t)group;
	b->seq = seq;
	return 0;
}

static int gw_beacon_write(void *ctx, const struct bs_rbd_beacon *b)
{
	struct rbd_gw *gw = ctx;
	char buf[BS_RBD_ADDR_MAX + 48];
	int n = snprintf(buf, sizeof(buf), "%s %u %llu\n", b->addr, b->group,
			 (unsigned long long)b->seq);

	return rados_write_full(gw->ioctx, gw->oid, buf, (size_t)n);
}

static void gw_changed(void *ctx, struct bs_lock_view v)
{
	struct rbd_gw *gw = ctx;
	struct backstore *bs = gw->bs;

	char took[48] = "";

	__atomic_store_n(&gw->role, v.role, __ATOMIC_RELEASE);
	if (v.role == BS_LOCK_TAKEOVER)
		gw->takeover_at = now_ms();
	else if (v.role == BS_LOCK_OWNER && gw->takeover_at)
		snprintf(took, sizeof(took), " (fence, break, acquire: %llu ms)",
			 (unsigned long long)(now_ms() - gw->takeover_at));
	if (v.role != BS_LOCK_TAKEOVER)
		gw->takeover_at = 0;
	ut_log(LOG_NOTICE, "%s: image %s/%s: this gateway is %s%s%s", bs->name, bs->ceph.pool,
	       bs->ceph.image, bs_lock_role_name(v.role), took,
	       v.role == BS_LOCK_FENCED ? " (blocklisted: it reconnects with a new client)" : "");
	if (bs->lock_changed)
		bs->lock_changed(bs, &v);
}

static const struct bs_rbd_lock_ops gw_ops = {
    .owner = gw_owner,
    .acquire = gw_acquire,
    .fence = gw_fence,
    .break_lock = gw_break,
    .beacon_read = gw_beacon_read,
    .beacon_write = gw_beacon_write,
    .changed = gw_changed,
};

static void gw_publish(struct rbd_gw *gw)
{
	const struct bs_rbd_lock *l = &gw->lock;

	pthread_mutex_lock(&gw->mu);
	gw->status.role = l->role;
	gw->status.owner_group = l->owner_group;
	snprintf(gw->status.owner, sizeof(gw->status.owner), "%s", l->owner);
	snprintf(gw->status.self, sizeof(gw->status.self), "%s", l->self);
	gw->status.takeovers = l->takeovers;
	gw->status.fenced = gw->fenced;
	pthread_mutex_unlock(&gw->mu);
}

static void gw_tick(struct rbd_gw *gw)
{
	bool want;

	pthread_mutex_lock(&gw->mu);
	want = gw->want;
	gw->want = false;
	pthread_mutex_unlock(&gw->mu);
	if (want)
		bs_rbd_lock_request(&gw->lock);
	bs_rbd_lock_tick(&gw->lock, now_ms());
	gw_publish(gw);
}

/* Sleep until the deadline, a stop, or a takeover request; false on stop. */
static bool gw_wait(struct rbd_gw *gw, bool *flag, uint64_t ms)
{
	struct timespec ts;
	bool stop;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&gw->mu);
	while (!gw->stop && !(flag && *flag))
		if (pthread_cond_timedwait(&gw->cv, &gw->mu, &ts) == ETIMEDOUT)
			break;
	stop = gw->stop;
	pthread_mutex_unlock(&gw->mu);
	return !stop;
}

/* Fenced: come back with a new client as a peer (the policy then never takes the lock from
 * a healthy owner).  The health thread must not hold the old client meanwhile. */
static void gw_reopen(struct rbd_gw *gw)
{
	rados_t cluster;
	rados_ioctx_t ioctx;
	rbd_image_t image;
	char *addrs = NULL;
	int r;

	pthread_mutex_lock(&gw->mu);
	gw->reopening = true;
	while (gw->health_busy)
		pthread_cond_wait(&gw->cv, &gw->mu);
	pthread_mutex_unlock(&gw->mu);
	r = gw->reopen(gw->bs, &cluster, &ioctx, &image);
	if (r == 0)
		r = rados_getaddrs(cluster, &addrs);
	pthread_mutex_lock(&gw->mu);
	if (r == 0) {
		gw->cluster = cluster;
		gw->ioctx = ioctx;
		gw->image = image;
		gw->fenced++;
	}
	gw->reopening = false;
	pthread_mutex_unlock(&gw->mu);
	if (r < 0) {
		UT_LOG_RL(LOG_WARNING, "%s: fenced; reconnecting failed (%s), trying again",
			  gw->bs->name, strerror(-r));
		return;
	}
	ut_log(LOG_NOTICE, "%s: fenced; reconnected as %s", gw->bs->name, addrs);
	bs_rbd_lock_restart(&gw->lock, addrs);
	rados_buffer_free(addrs);
	gw_tick(gw);
}

/* Observing only: the lock owner for utgtadm. */
static void gw_observe(struct rbd_gw *gw)
{
	char owner[BS_RBD_ADDR_MAX] = "";
	int r = gw_owner(gw, owner, sizeof(owner));

	if (r < 0)
		return; /* keep the last one seen; the health says why */
	pthread_mutex_lock(&gw->mu);
	snprintf(gw->status.owner, sizeof(gw->status.owner), "%s", r ? owner : "");
	pthread_mutex_unlock(&gw->mu);
}

static void *gw_thread(void *arg)
{
	struct rbd_gw *gw = arg;

	while (gw_wait(gw, &gw->want, GW_TICK_MS)) {
		if (!gw->follow)
			gw_observe(gw);
		else if (gw->lock.role == BS_LOCK_FENCED && gw->reopen)
			gw_reopen(gw);
		else
			gw_tick(gw);
	}
	return NULL;
}

static void *gw_health_thread(void *arg)
{
	static char cmd[] = "{\"prefix\": \"health\", \"format\": \"json\"}";
	struct rbd_gw *gw = arg;

	do {
		char *cmds[] = {cmd}, *out = NULL, *outs = NULL, h[32] = "unreachable";
		size_t outlen = 0, outslen = 0;
		const char *p;
		rados_t cluster;
		int r;

		pthread_mutex_lock(&gw->mu);
		if (gw->reopening) { /* the client is being replaced: ask next time */
			pthread_mutex_unlock(&gw->mu);
			continue;
		}
		gw->health_busy = true;
		cluster = gw->cluster;
		pthread_mutex_unlock(&gw->mu);
		r = rados_mon_command(cluster, (const char **)cmds, 1, "", 0, &out, &outlen, &outs,
				      &outslen);
		p = r == 0 && out ? strstr(out, "\"status\":\"") : NULL;
		if (p)
			sscanf(p + 10, "%31[^\"]", h);
		rados_buffer_free(out);
		rados_buffer_free(outs);
		pthread_mutex_lock(&gw->mu);
		gw->health_busy = false;
		pthread_cond_broadcast(&gw->cv);
		snprintf(gw->health, sizeof(gw->health), "%s", h);
		pthread_mutex_unlock(&gw->mu);
	} while (gw_wait(gw, NULL, GW_HEALTH_EVERY_MS));
	return NULL;
}

struct rbd_gw *bs_rbd_gw_start(struct backstore *bs, rados_t cluster, rados_ioctx_t ioctx,
			       rbd_image_t image, bool follow, bs_rbd_reopen_fn reopen, char *err,
			       size_t errlen)
{
	struct rbd_gw *gw = calloc(1, sizeof(*gw));
	char id[64] = "", *addrs = NULL;
	int r;

	if (!gw) {
		snprintf(err, errlen, "%s: out of memory", bs->name);
		return NULL;
	}
	gw->bs = bs;
	gw->cluster = cluster;
	gw->ioctx = ioctx;
	gw->image = image;
	gw->reopen = reopen;
	gw->follow = follow;
	r = rbd_get_id(image, id, sizeof(id));
	if (r == 0)
		r = rados_getaddrs(cluster, &addrs);
	if (r < 0) {
		snprintf(err, errlen, "%s: image %s/%s: cannot read its id or this client's address: %s",
			 bs->name, bs->ceph.pool, bs->ceph.image, strerror(-r));
		free(gw);
		return NULL;
	}
	snprintf(gw->oid, sizeof(gw->oid), "utgt.gw.%s", id);
	pthread_mutex_init(&gw->mu, NULL);
	pthread_cond_init(&gw->cv, NULL);
	bs_rbd_lock_init(&gw->lock, &gw_ops, gw, addrs, bs->local_group,
			 bs->ceph.lock_grace_ms ? bs->ceph.lock_grace_ms : GW_GRACE_MS);
	rados_buffer_free(addrs);
	if (!follow) {
		gw->status.owner_group = -1;
		snprintf(gw->status.self, sizeof(gw->status.self), "%s", gw->lock.self);
		gw_observe(gw);
	} else {
		gw_tick(gw);
	}
	if (follow && (gw->lock.role == BS_LOCK_UNKNOWN || gw->lock.role == BS_LOCK_FENCED)) {
		snprintf(err, errlen, "%s: image %s/%s: cannot read its exclusive lock: %s "
				      "(alua_follow_lock needs the exclusive-lock feature)",
			 bs->name, bs->ceph.pool, bs->ceph.image, strerror(-gw->lock.last_err));
		pthread_cond_destroy(&gw->cv);
		pthread_mutex_destroy(&gw->mu);
		free(gw);
		return NULL;
	}
	if (pthread_create(&gw->thread, NULL, gw_thread, gw) != 0) {
		snprintf(err, errlen, "%s: cannot start the lock thread", bs->name);
		pthread_cond_destroy(&gw->cv);
		pthread_mutex_destroy(&gw->mu);
		free(gw);
		return NULL;
	}
	gw->health_running = pthread_create(&gw->health_thread, NULL, gw_health_thread, gw) == 0;
	return gw;
}

void bs_rbd_gw_stop(struct rbd_gw *gw)
{
	if (!gw)
		return;
	pthread_mutex_lock(&gw->mu);
	gw->stop = true;
	pthread_cond_broadcast(&gw->cv);
	pthread_mutex_unlock(&gw->mu);
	pthread_join(gw->thread, NULL);
	if (gw->health_running)
		pthread_join(gw->health_thread, NULL);
	pthread_cond_destroy(&gw->cv);
	pthread_mutex_destroy(&gw->mu);
	free(gw);
}

enum bs_lock_role bs_rbd_gw_role(const struct rbd_gw *gw)
{
	return __atomic_load_n(&gw->role, __ATOMIC_ACQUIRE);
}

void bs_rbd_gw_status(struct rbd_gw *gw, struct bs_lock_status *out)
{
	pthread_mutex_lock(&gw->mu);
	*out = gw->status;
	snprintf(out->health, sizeof(out->health), "%s", gw->health);
	pthread_mutex_unlock(&gw->mu);
}

void bs_rbd_gw_takeover(struct rbd_gw *gw)
{
	pthread_mutex_lock(&gw->mu);
	gw->want = true;
	pthread_cond_broadcast(&gw->cv);
	pthread_mutex_unlock(&gw->mu);
}

#endif
