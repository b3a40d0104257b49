/* The exclusive-lock policy of several gateways serving one RBD image: see bs_rbd_lock.h.
 * No librbd here (bs_rbd_gw.c supplies the calls), so it builds and is tested everywhere. */
#include "scsi/backstore/bs_rbd_lock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/ut_log.h"

const char *bs_lock_role_name(enum bs_lock_role r)
{
	switch (r) {
	case BS_LOCK_OWNER:
		return "owner";
	case BS_LOCK_PEER:
		return "peer";
	case BS_LOCK_TAKEOVER:
		return "taking over";
	case BS_LOCK_FENCED:
		return "fenced";
	case BS_LOCK_UNKNOWN:
	default:
		return "deciding";
	}
}

struct bs_lock_view bs_rbd_lock_view(const struct bs_rbd_lock *l)
{
	return (struct bs_lock_view){.role = l->role, .owner_group = l->owner_group};
}

static void set_role(struct bs_rbd_lock *l, enum bs_lock_role role, int owner_group)
{
	if (l->role == role && l->owner_group == owner_group)
		return;
	l->role = role;
	l->owner_group = owner_group;
	if (l->ops->changed)
		l->ops->changed(l->ctx, bs_rbd_lock_view(l));
}

void bs_rbd_lock_init(struct bs_rbd_lock *l, const struct bs_rbd_lock_ops *ops, void *ctx,
		      const char *self, uint16_t group, uint64_t grace_ms)
{
	memset(l, 0, sizeof(*l));
	l->ops = ops;
	l->ctx = ctx;
	l->group = group;
	l->grace_ms = grace_ms;
	l->owner_group = -1;
	snprintf(l->self, sizeof(l->self), "%s", self);
}

void bs_rbd_lock_restart(struct bs_rbd_lock *l, const char *self)
{
	snprintf(l->self, sizeof(l->self), "%s", self);
	l->owner[0] = 0;
	l->owner_heard = false;
	l->want = false;
	l->last_err = 0;
	set_role(l, BS_LOCK_UNKNOWN, -1);
}

void bs_rbd_lock_request(struct bs_rbd_lock *l)
{
	l->want = true;
}

/* A call failed: ESHUTDOWN means we were blocklisted, anything else leaves the role as it
 * is (the next tick asks again).  Returns true when fenced. */
static bool failed(struct bs_rbd_lock *l, const char *what, int r)
{
	l->last_err = r;
	if (r == -ESHUTDOWN) {
		if (l->role != BS_LOCK_FENCED)
			ut_log(LOG_WARNING, "rbd lock: %s: this gateway (%s) was fenced", what,
			       l->self);
		set_role(l, BS_LOCK_FENCED, -1);
		return true;
	}
	UT_LOG_RL(LOG_WARNING, "rbd lock: %s: %s", what, strerror(-r));
	return false;
}

static void announce(struct bs_rbd_lock *l)
{
	struct bs_rbd_beacon b = {.group = l->group, .seq = ++l->seq};
	int r;

	snprintf(b.addr, sizeof(b.addr), "%s", l->self);
	r = l->ops->beacon_write(l->ctx, &b);
	if (r < 0)
		failed(l, "beacon write", r);
}

static void now_owner(struct bs_rbd_lock *l)
{
	snprintf(l->owner, sizeof(l->owner), "%s", l->self);
	l->want = false;
	set_role(l, BS_LOCK_OWNER, l->group);
	announce(l);
}

/* The lock is free: whoever asks first has it. */
static void take(struct bs_rbd_lock *l)
{
	int r = l->ops->acquire(l->ctx);

	if (r == 0) {
		ut_log(LOG_NOTICE, "rbd lock: %s took the free lock", l->self);
		now_owner(l);
	} else if (!failed(l, "acquire", r)) {
		set_role(l, BS_LOCK_PEER, -1); /* another gateway was faster */
	}
}

/* Fence, break, acquire; never break a lock whose owner could not be fenced. */
static void take_over(struct bs_rbd_lock *l, uint64_t now)
{
	char old[BS_RBD_ADDR_MAX];
	int r;

	snprintf(old, sizeof(old), "%s", l->owner);
	ut_log(LOG_NOTICE, "rbd lock: %s takes over from %s (%s)", l->self, old,
	       l->want ? "SET TARGET PORT GROUPS" : "owner silent past the grace period");
	set_role(l, BS_LOCK_TAKEOVER, -1);
	r = l->ops->fence(l->ctx, old);
	if (r < 0) {
		if (!failed(l, "blocklisting the old owner", r))
			set_role(l, BS_LOCK_PEER, l->owner_group);
		return;
	}
	r = l->ops->break_lock(l->ctx, old);
	/* ENOENT/EBUSY: the lock is free already or changed hands; acquire decides */
	if (r < 0 && r != -ENOENT && r != -EBUSY && failed(l, "breaking the lock", r))
		return;
	r = l->ops->acquire(l->ctx);
	if (r < 0) {
		if (!failed(l, "acquire after the break", r)) {
			l->owner[0] = 0; /* someone else has it: learn who at the next tick */
			set_role(l, BS_LOCK_PEER, -1);
		}
		return;
	}
	l->takeovers++;
	l->owner_since = now;
	now_owner(l);
}

void bs_rbd_lock_tick(struct bs_rbd_lock *l, uint64_t now)
{
	char addr[BS_RBD_ADDR_MAX] = "";
	struct bs_rbd_beacon b;
	int r;

	if (l->role == BS_LOCK_FENCED)
		return;
	r = l->ops->owner(l->ctx, addr, sizeof(addr));
	if (r < 0) {
		failed(l, "reading the lock owner", r);
		return;
	}
	if (r == 0) {
		l->owner[0] = 0;
		take(l);
		return;
	}
	if (!strcmp(addr, l->self)) {
		if (l->role != BS_LOCK_OWNER)
			now_owner(l);
		else
			announce(l);
		return;
	}
	if (l->role == BS_LOCK_OWNER)
		ut_log(LOG_WARNING, "rbd lock: %s lost the lock to %s", l->self, addr);
	if (strcmp(addr, l->owner)) { /* a new owner: its grace starts now */
		snprintf(l->owner, sizeof(l->owner), "%s", addr);
		l->owner_heard = false;
		l->owner_since = now;
		l->owner_group = -1;
	}
	r = l->ops->beacon_read(l->ctx, &b);
	if (r == 0 && !strcmp(b.addr, l->owner)) {
		if (!l->owner_heard || b.seq != l->owner_seq) {
			l->owner_seq = b.seq;
			l->owner_heard = true;
			l->owner_since = now;
		}
		set_role(l, BS_LOCK_PEER, b.group);
	} else {
		if (r < 0 && r != -ENOENT && failed(l, "reading the beacon", r))
			return;
		set_role(l, BS_LOCK_PEER, l->owner_group);
	}
	if (l->want || now - l->owner_since >= l->grace_ms)
		take_over(l, now);
}
