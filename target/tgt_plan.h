/* The difference between the running configuration and the next one, and whether it can be
 * applied while initiators work (target/tgt_plan.c; applied by target/tgt_apply.c).  Pure:
 * builds a plan or reports why not, touching nothing.
 *
 * The rules, the same for a verb, `utgtadm reload` and SIGHUP:
 * - a device keeps running when its handler and create-time attributes (filename,
 *   blocksize, read_only, nv_cache, ...) are unchanged; its identity, size and (vcdrom)
 *   filename then change live;
 * - otherwise it is re-created, which is refused while a LUN or a transport uses it;
 * - a device is removed once no LUN uses it (the loader refuses a LUN without its device);
 * - a running driver's own attributes (listen, ...) cannot change (disable the driver
 *   first); a driver enabled or added starts, one disabled or removed stops;
 * - an enabled target keeps its rel_tgt_id (disable it first). */
#ifndef UTGT_TGT_PLAN_H
#define UTGT_TGT_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "target/tgt_config.h"

enum tgt_dev_act {
	DEV_KEEP,     /* the running LU becomes next's device */
	DEV_ADD,      /* new in next: opened before anything changes */
	DEV_REMOVE,   /* gone from next: closed after a grace period */
	DEV_RECREATE, /* create-time attributes differ: REMOVE + ADD */
};

struct tgt_dev_plan {
	enum tgt_dev_act act;
	struct tgt_device *old, *next; /* in the running / next configuration (NULL: none) */
	bool identity;		       /* KEEP: INQUIRY identity differs */
	bool resize;		       /* KEEP: configured size differs: take `size` */
	uint64_t size;		       /*   bytes, 0 = the medium's own size */
	bool medium;		       /* KEEP: a vcdrom's image differs */
};

enum tgt_drv_act {
	DRV_NONE,   /* not running before, not running after */
	DRV_UPDATE, /* running: the transport rebinds to next (tgt_transport.update) */
	DRV_START,
	DRV_STOP,
};

struct tgt_drv_plan {
	enum tgt_drv_act act;
	const char *name;
	const struct tgt_driver *old, *next;
	const struct tgt_transport *tp; /* running: the started one; start: the one to start */
};

/* What changes in a target (for the answer and the log; the transports re-resolve on their
 * own). */
enum tgt_tgt_act {
	TGT_ADDED,
	TGT_REMOVED,
	TGT_CHANGED,
};

struct tgt_tgt_plan {
	enum tgt_tgt_act act;
	const char *driver, *name;
	char what[80]; /* CHANGED: "enabled, LUNs, groups, attributes" (those that differ) */
};

struct tgt_plan {
	struct tgt_dev_plan *devs;
	unsigned ndevs;
	struct tgt_drv_plan *drvs;
	unsigned ndrvs;
	struct tgt_tgt_plan *tgts;
	unsigned ntgts;
	bool same; /* next prints exactly as the running configuration: nothing to do */
};

/* What the plan needs to know of the running daemon. */
struct tgt_plan_env {
	/* The transport started for this driver, NULL when it does not run. */
	const struct tgt_transport *(*running)(void *ctx, const char *driver);
	/* Who uses this device outside the LUN maps (a transport's uses_device), NULL: nobody. */
	const char *(*device_user)(void *ctx, const char *device);
	void *ctx;
};

/* 0 with *plan filled, or -1 with every reason on d (lines of next where there is one). */
int tgt_plan_build(const struct tgt_config *old, const struct tgt_config *next,
		   const struct tgt_plan_env *env, struct tgt_plan *plan, struct diag *d);
void tgt_plan_free(struct tgt_plan *plan);

#endif
