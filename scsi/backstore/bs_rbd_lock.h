/* Who may write a shared RBD image, decided by its exclusive lock: the policy of several
 * utgtd gateways serving one image (docs/rbd.md, "Several gateways").
 *
 * One gateway owns the lock (rbd_lock_acquire: librbd then refuses to hand it over on
 * request) and writes; it announces itself in a beacon object (its client address, its
 * target port group, a counter it bumps every tick).  The others serve reads, answer writes
 * "ALUA transitioning" and take the lock over only
 *   - when the owner's beacon has not moved for the grace period (the owner died, hangs, or
 *     lost the cluster), or
 *   - on an explicit request (SET TARGET PORT GROUPS naming their own group),
 * never because a write arrived: that is what would pass the lock back and forth.  A takeover
 * fences first (blocklists the owner's client, so a gateway that comes back cannot write a
 * stale byte), then breaks the lock, then acquires it.  A gateway whose calls fail with
 * ESHUTDOWN was fenced: it stays FENCED until it reconnects with a new client and starts
 * again as a peer.  A free lock (the owner closed the image) is taken at once.
 *
 * The machine calls the cluster only through bs_rbd_lock_ops, so the policy is unit-tested
 * without a cluster (tests/unit/test_bs_rbd_lock.c); bs_rbd_gw.c gives it librbd. */
#ifndef UTGT_BS_RBD_LOCK_H
#define UTGT_BS_RBD_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scsi/backstore/backstore.h"

#define BS_RBD_ADDR_MAX 128

struct bs_rbd_beacon {
	char addr[BS_RBD_ADDR_MAX]; /* the owner's client address, as rbd_lock_get_owners says */
	uint16_t group;		    /* its target port group id */
	uint64_t seq;		    /* bumped by the owner every tick */
};

/* Every call returns 0 (or what it says) or a negative errno; -ESHUTDOWN means this client
 * was blocklisted. */
struct bs_rbd_lock_ops {
	/* 1 and the owner's address in addr, 0 when nobody holds the lock */
	int (*owner)(void *ctx, char *addr, size_t len);
	int (*acquire)(void *ctx);
	int (*fence)(void *ctx, const char *addr); /* blocklist that client */
	int (*break_lock)(void *ctx, const char *addr);
	int (*beacon_read)(void *ctx, struct bs_rbd_beacon *b); /* -ENOENT: none yet */
	int (*beacon_write)(void *ctx, const struct bs_rbd_beacon *b);
	/* the view changed (also in the middle of a tick: TAKEOVER before the fence) */
	void (*changed)(void *ctx, struct bs_lock_view v);
};

struct bs_rbd_lock {
	const struct bs_rbd_lock_ops *ops;
	void *ctx;
	char self[BS_RBD_ADDR_MAX];
	uint16_t group;
	uint64_t grace_ms;

	enum bs_lock_role role;
	char owner[BS_RBD_ADDR_MAX];
	int owner_group;
	uint64_t owner_seq;   /* the owner's beacon counter last seen */
	bool owner_heard;     /* owner_seq is the owner's (its beacon names it) */
	uint64_t owner_since; /* when the owner was last heard from (or first seen), ms */
	uint64_t seq;	      /* our own beacon counter while we own */
	bool want;	      /* a takeover was asked for (SET TARGET PORT GROUPS) */
	unsigned takeovers;
	int last_err; /* the last failed call, for the log and utgtadm */
};

void bs_rbd_lock_init(struct bs_rbd_lock *l, const struct bs_rbd_lock_ops *ops, void *ctx,
		      const char *self, uint16_t group, uint64_t grace_ms);
/* After a fenced gateway reconnected with a new client: a peer again, nothing owned. */
void bs_rbd_lock_restart(struct bs_rbd_lock *l, const char *self);
/* One step: look at the lock and the beacon, and announce, wait, take or take over. */
void bs_rbd_lock_tick(struct bs_rbd_lock *l, uint64_t now_ms);
/* SET TARGET PORT GROUPS: take over at the next tick without waiting for the grace. */
void bs_rbd_lock_request(struct bs_rbd_lock *l);
struct bs_lock_view bs_rbd_lock_view(const struct bs_rbd_lock *l);
const char *bs_lock_role_name(enum bs_lock_role r);

#endif
