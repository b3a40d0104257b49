/* The several-gateway lock policy (scsi/backstore/bs_rbd_lock.c) against a fake cluster: one
 * exclusive lock, one beacon object, a blocklist, shared by the gateways of a test.  Each
 * gateway is a bs_rbd_lock with its own client address; time is the tests' own clock. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "scsi/backstore/bs_rbd_lock.h"

struct cluster {
	char owner[BS_RBD_ADDR_MAX]; /* "" free */
	struct bs_rbd_beacon beacon;
	bool have_beacon;
	char blocked[4][BS_RBD_ADDR_MAX];
	unsigned nblocked;
	int fail_fence; /* errno the next fences return */
	unsigned acquires, breaks, fences;
	char log[512]; /* the order of fence/break/acquire */
};

struct gw {
	struct cluster *c;
	char addr[BS_RBD_ADDR_MAX];
	struct bs_rbd_lock l;
	struct bs_lock_view views[16];
	unsigned nviews;
};

static bool blocked(const struct gw *g)
{
	for (unsigned i = 0; i < g->c->nblocked; i++)
		if (!strcmp(g->c->blocked[i], g->addr))
			return true;
	return false;
}

static int m_owner(void *ctx, char *addr, size_t len)
{
	struct gw *g = ctx;

	if (blocked(g))
		return -ESHUTDOWN;
	snprintf(addr, len, "%s", g->c->owner);
	return g->c->owner[0] ? 1 : 0;
}

static int m_acquire(void *ctx)
{
	struct gw *g = ctx;

	if (blocked(g))
		return -ESHUTDOWN;
	strcat(g->c->log, "acquire ");
	if (g->c->owner[0] && strcmp(g->c->owner, g->addr))
		return -EROFS; /* librbd: the owner refuses to hand it over */
	snprintf(g->c->owner, sizeof(g->c->owner), "%s", g->addr);
	g->c->acquires++;
	return 0;
}

static int m_fence(void *ctx, const char *addr)
{
	struct gw *g = ctx;

	if (blocked(g))
		return -ESHUTDOWN;
	strcat(g->c->log, "fence ");
	if (g->c->fail_fence)
		return -g->c->fail_fence;
	snprintf(g->c->blocked[g->c->nblocked++], BS_RBD_ADDR_MAX, "%s", addr);
	g->c->fences++;
	return 0;
}

static int m_break(void *ctx, const char *addr)
{
	struct gw *g = ctx;

	if (blocked(g))
		return -ESHUTDOWN;
	strcat(g->c->log, "break ");
	if (strcmp(g->c->owner, addr))
		return -ENOENT;
	g->c->owner[0] = 0;
	g->c->breaks++;
	return 0;
}

static int m_beacon_read(void *ctx, struct bs_rbd_beacon *b)
{
	struct gw *g = ctx;

	if (blocked(g))
		return -ESHUTDOWN;
	if (!g->c->have_beacon)
		return -ENOENT;
	*b = g->c->beacon;
	return 0;
}

static int m_beacon_write(void *ctx, const struct bs_rbd_beacon *b)
{
	struct gw *g = ctx;

	if (blocked(g))
		return -ESHUTDOWN;
	g->c->beacon = *b;
	g->c->have_beacon = true;
	return 0;
}

static void m_changed(void *ctx, struct bs_lock_view v)
{
	struct gw *g = ctx;

	if (g->nviews < 16)
		g->views[g->nviews++] = v;
}

static const struct bs_rbd_lock_ops mock_ops = {
    .owner = m_owner,
    .acquire = m_acquire,
    .fence = m_fence,
    .break_lock = m_break,
    .beacon_read = m_beacon_read,
    .beacon_write = m_beacon_write,
    .changed = m_changed,
};

#define GRACE 5000

static void gw_init(struct gw *g, struct cluster *c, const char *addr, uint16_t group)
{
	memset(g, 0, sizeof(*g));
	g->c = c;
	snprintf(g->addr, sizeof(g->addr), "%s", addr);
	bs_rbd_lock_init(&g->l, &mock_ops, g, addr, group, GRACE);
}

static struct cluster C;
static struct gw A, B;

static void two_gateways(void)
{
	memset(&C, 0, sizeof(C));
	gw_init(&A, &C, "127.0.0.1:0/1", 1);
	gw_init(&B, &C, "127.0.0.1:0/2", 2);
	bs_rbd_lock_tick(&A.l, 0); /* A starts first: the lock is free */
	bs_rbd_lock_tick(&B.l, 0);
}

/* Both tick once a second from t0 to t1 (A only while a_alive). */
static void run(uint64_t t0, uint64_t t1, bool a_alive)
{
	for (uint64_t t = t0; t <= t1; t += 1000) {
		if (a_alive)
			bs_rbd_lock_tick(&A.l, t);
		bs_rbd_lock_tick(&B.l, t);
	}
}

Test(bs_rbd_lock, first_gateway_takes_the_free_lock_the_second_is_a_peer,
     .init = two_gateways)
{
	cr_assert_eq(A.l.role, BS_LOCK_OWNER);
	cr_assert_eq(A.l.owner_group, 1);
	cr_assert_str_eq(C.owner, "127.0.0.1:0/1");
	cr_assert_eq(B.l.role, BS_LOCK_PEER);
	cr_assert_eq(B.l.owner_group, 1, "B learns A's port group from the beacon");
	cr_assert_str_eq(C.beacon.addr, "127.0.0.1:0/1");
	cr_assert_eq(A.nviews, 1);
	cr_assert_eq(A.views[0].role, BS_LOCK_OWNER);
}

Test(bs_rbd_lock, a_healthy_owner_keeps_the_lock_forever, .init = two_gateways)
{
	run(1000, 10 * GRACE, true);
	cr_assert_eq(A.l.role, BS_LOCK_OWNER);
	cr_assert_eq(B.l.role, BS_LOCK_PEER);
	cr_assert_eq(C.fences + C.breaks, 0);
	cr_assert_eq(C.acquires, 1);
	cr_assert(C.beacon.seq > 10, "the owner announces every tick (%llu)",
		  (unsigned long long)C.beacon.seq);
}

Test(bs_rbd_lock, silent_owner_is_fenced_then_broken_then_taken_after_the_grace,
     .init = two_gateways)
{
	run(1000, 3000, true);
	/* A dies at 3 s: its beacon stops at the value of that tick */
	run(4000, 3000 + GRACE - 1000, false);
	cr_assert_eq(B.l.role, BS_LOCK_PEER, "not before the grace period");
	cr_assert_eq(C.fences, 0);
	run(3000 + GRACE, 3000 + GRACE, false);
	cr_assert_eq(B.l.role, BS_LOCK_OWNER);
	cr_assert_eq(B.l.owner_group, 2);
	cr_assert_str_eq(C.log, "acquire fence break acquire ", "order: %s", C.log);
	cr_assert_str_eq(C.blocked[0], "127.0.0.1:0/1");
	cr_assert_str_eq(C.beacon.addr, "127.0.0.1:0/2");
	cr_assert_eq(B.l.takeovers, 1);
	/* B's views: peer of group 1, taking over, owner of group 2 */
	cr_assert_eq(B.views[B.nviews - 2].role, BS_LOCK_TAKEOVER);
	cr_assert_eq(B.views[B.nviews - 1].role, BS_LOCK_OWNER);
}

Test(bs_rbd_lock, fenced_gateway_that_comes_back_sees_fenced_then_returns_as_a_peer,
     .init = two_gateways)
{
	run(1000, 1000, true);
	run(2000, 2000 + GRACE, false); /* A paused (SIGSTOP, a long GC, a partition) */
	cr_assert_eq(B.l.role, BS_LOCK_OWNER);
	bs_rbd_lock_tick(&A.l, 2000 + GRACE + 1000); /* A wakes up */
	cr_assert_eq(A.l.role, BS_LOCK_FENCED);
	cr_assert_eq(A.views[A.nviews - 1].role, BS_LOCK_FENCED);
	/* reconnected with a new client: a peer, and B keeps the lock while it announces */
	snprintf(A.addr, sizeof(A.addr), "127.0.0.1:0/3");
	bs_rbd_lock_restart(&A.l, A.addr);
	run(3000 + GRACE, 3000 + 5 * GRACE, true);
	cr_assert_eq(A.l.role, BS_LOCK_PEER);
	cr_assert_eq(A.l.owner_group, 2);
	cr_assert_eq(B.l.role, BS_LOCK_OWNER);
	cr_assert_eq(C.fences, 1, "nobody fenced the healthy owner");
}

Test(bs_rbd_lock, restarted_gateway_does_not_steal_from_a_healthy_owner,
     .init = two_gateways)
{
	struct gw A2;

	run(1000, 1000, true);
	/* a third gateway process (A restarted) comes up while A still owns */
	gw_init(&A2, &C, "127.0.0.1:0/9", 1);
	for (uint64_t t = 2000; t <= 4 * GRACE; t += 1000) {
		bs_rbd_lock_tick(&A.l, t);
		bs_rbd_lock_tick(&A2.l, t);
	}
	cr_assert_eq(A2.l.role, BS_LOCK_PEER);
	cr_assert_eq(A.l.role, BS_LOCK_OWNER);
	cr_assert_eq(C.fences + C.breaks, 0);
}

Test(bs_rbd_lock, explicit_request_takes_over_at_the_next_tick, .init = two_gateways)
{
	run(1000, 2000, true);
	bs_rbd_lock_request(&B.l);
	bs_rbd_lock_tick(&B.l, 2500);
	cr_assert_eq(B.l.role, BS_LOCK_OWNER);
	cr_assert_str_eq(C.blocked[0], "127.0.0.1:0/1", "the old owner is fenced first");
	bs_rbd_lock_tick(&A.l, 3000);
	cr_assert_eq(A.l.role, BS_LOCK_FENCED);
	/* the request is spent: B keeps the lock without further takeovers */
	run(3000, 3000 + 3 * GRACE, false);
	cr_assert_eq(B.l.takeovers, 1);
}

Test(bs_rbd_lock, no_break_when_the_fence_fails, .init = two_gateways)
{
	C.fail_fence = ETIMEDOUT;
	run(1000, 1000 + 2 * GRACE, false);
	cr_assert_eq(B.l.role, BS_LOCK_PEER);
	cr_assert_eq(C.breaks, 0, "a lock is never broken under an owner that was not fenced");
	cr_assert_str_eq(C.owner, "127.0.0.1:0/1");
	cr_assert_eq(B.l.last_err, -ETIMEDOUT);
	C.fail_fence = 0;
	run(2000 + 2 * GRACE, 2000 + 2 * GRACE, false);
	cr_assert_eq(B.l.role, BS_LOCK_OWNER);
}

Test(bs_rbd_lock, owner_that_closed_the_image_hands_over_at_once, .init = two_gateways)
{
	run(1000, 2000, true);
	C.owner[0] = 0; /* A closed the image: librbd released the lock */
	bs_rbd_lock_tick(&B.l, 2100);
	cr_assert_eq(B.l.role, BS_LOCK_OWNER);
	cr_assert_eq(C.fences, 0, "a released lock needs no fencing");
}

Test(bs_rbd_lock, owner_that_never_announced_is_taken_over_after_the_grace)
{
	/* a lock held by some other librbd client (the rbd tool, a gateway of an older
	 * version): no beacon ever names it, so it is silent from the start */
	memset(&C, 0, sizeof(C));
	snprintf(C.owner, sizeof(C.owner), "127.0.0.1:0/77");
	gw_init(&B, &C, "127.0.0.1:0/2", 2);
	bs_rbd_lock_tick(&B.l, 10000);
	cr_assert_eq(B.l.role, BS_LOCK_PEER);
	cr_assert_eq(B.l.owner_group, -1, "the owner's group is not known");
	bs_rbd_lock_tick(&B.l, 10000 + GRACE);
	cr_assert_eq(B.l.role, BS_LOCK_OWNER);
}

Test(bs_rbd_lock, a_peer_that_races_for_a_free_lock_and_loses_is_a_peer)
{
	memset(&C, 0, sizeof(C));
	gw_init(&A, &C, "127.0.0.1:0/1", 1);
	gw_init(&B, &C, "127.0.0.1:0/2", 2);
	/* both see it free; A's acquire lands first */
	snprintf(C.owner, sizeof(C.owner), "127.0.0.1:0/1");
	bs_rbd_lock_tick(&B.l, 0);
	cr_assert_eq(B.l.role, BS_LOCK_PEER);
	cr_assert_eq(C.fences, 0);
}

Test(bs_rbd_lock, role_names)
{
	cr_assert_str_eq(bs_lock_role_name(BS_LOCK_OWNER), "owner");
	cr_assert_str_eq(bs_lock_role_name(BS_LOCK_FENCED), "fenced");
	cr_assert_str_eq(bs_lock_role_name((enum bs_lock_role)99), "deciding");
}
