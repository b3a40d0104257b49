/* utgtd's object model: devices, target drivers, targets, LUN maps, initiator groups (ACLs),
 * ALUA device groups, and struct tgt_transport, the interface every transport implements.
 * It lives here, below the daemon's target layer, because transports read it; that layer
 * builds it from scst.conf and starts the transports.  The SCSI core only sees the
 * scsi_dev and scsi_lun_table pieces of it. */
#ifndef UTGT_TRANSPORTS_TGT_MODEL_H
#define UTGT_TRANSPORTS_TGT_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "scsi/attr.h"
#include "scsi/scsi_dev.h"
#include "scsi/scsi_lun.h"

struct tgt_attrs {
	struct utgt_attr *a;
	unsigned n;
};
/* Last value of key (case-insensitive), or NULL. */
const char *tgt_attr_get(const struct tgt_attrs *as, const char *key);
/* Every value of a repeatable key (listen, IncomingUser, allowed_portal), in file order. */
unsigned tgt_attr_get_all(const struct tgt_attrs *as, const char *key, const char **vals,
			  unsigned max);
/* The last attribute named key (with its line), or NULL. */
const struct utgt_attr *tgt_attr_find(const struct tgt_attrs *as, const char *key);

struct tgt_device {
	char name[64];
	char handler[32]; /* vdisk_fileio, vdisk_blockio, vdisk_nullio, ramdisk */
	struct tgt_attrs attrs;
	int line;
	struct scsi_dev *dev; /* built at load; opened at start or --check=full */
};

struct tgt_lun {
	uint64_t lun;
	char device[64];
	bool read_only;
	struct tgt_attrs attrs;
	int line;
	struct tgt_device *dev;
};

struct tgt_group { /* SCST GROUP: initiators matching a pattern see this LUN set */
	char name[64];
	char **initiators; /* patterns with *, ?, and a leading ! to exclude */
	unsigned ninitiators;
	struct tgt_lun *luns;
	unsigned nluns;
	struct tgt_attrs attrs;
	int line;
	struct scsi_lun_table table;
};

struct tgt_driver;

struct tgt_target {
	char name[224];
	struct tgt_driver *driver;
	bool enabled;	     /* SCST semantics: off unless "enabled 1" (copy_manager: always on) */
	bool hw_target;	     /* HW_TARGET keyword */
	bool per_portal_acl; /* iSCSI: patterns match "<initiator>#<portal address>" */
	uint16_t rel_tgt_id; /* explicit, or the lowest free one assigned at load (SCST does too) */
	int rel_tgt_id_line; /* where it was set; 0 when assigned automatically */
	struct tgt_attrs attrs; /* transport attributes (iSCSI keys, CHAP users, allowed_portal) */
	struct tgt_lun *luns;	/* the target's default LUN set */
	unsigned nluns;
	struct tgt_group *groups;
	unsigned ngroups;
	int line;
	struct scsi_lun_table table;
};

struct tgt_transport;

struct tgt_driver {
	char name[32];
	bool known;   /* one we serve: iscsi, ib_srpt, iser, copy_manager, tcmu */
	bool enabled; /* on unless "enabled 0" at driver level */
	const struct tgt_transport *transport; /* NULL: unknown driver or not in this build */
	struct tgt_attrs attrs; /* driver-level: listen, IncomingUser for discovery, ... */
	struct tgt_target *targets;
	unsigned ntargets;
	int line;
};

/* DEVICE_GROUP as written (names, lines) next to the scsi_alua_group the core uses. */
struct tgt_tg_target {
	char name[224];
	uint16_t rel_tgt_id;
	const struct tgt_target *local; /* NULL: a target on another node (H.A. setups) */
	struct tgt_attrs attrs;
	int line;
};

struct tgt_target_group {
	char name[64];
	struct tgt_tg_target *targets;
	unsigned ntargets;
	struct tgt_attrs attrs; /* group_id, state, preferred, comment */
	int line;
};

struct tgt_device_group {
	char name[64];
	struct tgt_device **devices;
	unsigned ndevices;
	struct tgt_target_group *tgroups;
	unsigned ntgroups;
	struct tgt_attrs attrs;
	int line;
	struct scsi_alua_group *alua; /* &cfg->alua_groups[i] for device_groups[i] */
};

struct tgt_config {
	char path[4096];
	struct tgt_device *devices;
	unsigned ndevices;
	struct tgt_driver *drivers;
	unsigned ndrivers;
	struct scsi_alua_group *alua_groups; /* DEVICE_GROUP blocks, resolved */
	unsigned nalua_groups;
	struct tgt_device_group *device_groups; /* the same blocks as written; nalua_groups long */
	struct tgt_attrs globals;	/* top-level attributes (setup_id, max_tasklet_cmd, ...) */
	struct tgt_attrs handler_attrs; /* HANDLER-level attributes (trace_level), all handlers */
	void *arena;			/* private: every string and array above lives here */
};

const struct tgt_driver *tgt_config_driver(const struct tgt_config *cfg, const char *name);
const struct tgt_target *tgt_driver_target(const struct tgt_driver *drv, const char *name);
const struct tgt_device *tgt_config_device(const struct tgt_config *cfg, const char *name);

/* ACL: the LUN set initiator `iname` sees on target t (SCST rules: the first GROUP whose
 * INITIATOR patterns match, else the target's own LUNs).  Never NULL; may be empty. */
const struct scsi_lun_table *tgt_acl_resolve(const struct tgt_target *t, const char *iname);
/* The same for a login that arrived at portal address `portal` ("10.0.0.1", "[fe80::1]"; NULL
 * when unknown).  On a target with per_portal_acl 1 the name matched is "<iname>#<portal>", as
 * iSCSI-SCST names such sessions, so one initiator can see other LUNs through another portal. */
const struct scsi_lun_table *tgt_acl_resolve_portal(const struct tgt_target *t, const char *iname,
						    const char *portal);
/* SCST wildcard match: '*', '?', and a leading '!' negates. */
bool tgt_wildcard_match(const char *pattern, const char *name);

/* A front end utgtd can start for a TARGET_DRIVER block.  A transport exports one of these as
 * `const struct tgt_transport <x>_transport` (iscsi_transport, srpt_transport,
 * iser_transport, tcmu_transport); the target layer finds it by driver name.
 * Attributes in neither list, nor generic (enabled, rel_tgt_id, comment), nor known to SCST's
 * kernel, are config errors; SCST-only ones are warnings.  start() is called once per enabled
 * driver with the whole config; it serves the driver's enabled targets. */
struct ut_json;
struct scsi_io_stats;

struct tgt_transport {
	const char *driver;		 /* "iscsi" */
	const char *const *driver_attrs; /* accepted driver-level attributes, NULL-terminated */
	const char *const *target_attrs; /* accepted target-level attributes, NULL-terminated */
	/* Validate transport-specific values (numbers, ranges); report on d. */
	void (*validate)(const struct tgt_driver *drv, struct diag *d);
	int (*start)(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
		     size_t errlen);
	void (*stop)(void); /* drain in-flight I/O and close every connection */
	/* Admin socket `show sessions` (docs/admin.md): append one JSON object per live session
	 * of drv to the array j is in, adding each session's counters to total.  Called on the
	 * admin thread between start() and stop(): it may take the transport's login/logout
	 * locks, never one of the I/O path.  NULL: this transport lists no sessions. */
	void (*show_sessions)(const struct tgt_driver *drv, struct ut_json *j,
			      struct scsi_io_stats *total);

	/* ---- live administration (docs/admin.md) ----
	 * Called on the admin thread between start() and stop(), one call at a time.  NULL: the
	 * transport takes no change while it runs (the change is refused). */
	/* The configuration is about to become cfg, whose block for this driver is drv (its
	 * driver-level attributes unchanged).  The transport rebinds to it: targets new in drv
	 * are served from now on, the others take their new attributes for new logins, and a
	 * target gone or disabled takes no more logins.  Every session is given the LUN table
	 * its ACL resolves to in cfg through scsi_nexus_set_luns(); a session whose access is
	 * gone (target removed or disabled, no LUN for its initiator, portal no longer allowed)
	 * gets an empty table and is closed.  Afterwards nothing of the transport points into
	 * the previous configuration, whose tables the caller frees after a grace period.
	 * 0, or -1 with err before anything changed (out of memory). */
	int (*update)(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
		      size_t errlen);
	/* Close the session whose I_T nexus has this id (`show sessions` nexus_id): its
	 * commands complete, the initiator may log in again.  0, or -1 with err. */
	int (*close_session)(uint64_t nexus_id, char *err, size_t errlen);
	/* Does the transport use DEVICE `name` outside the LUN maps (TCMU serves devices by
	 * name)?  Such a device cannot be removed or re-created. */
	bool (*uses_device)(const char *name);
	/* Admin socket `show devices`: add to DEVICE name's object what the transport does with
	 * it outside the LUN maps (TCMU: the LIO devices it backs, with rings and counters).
	 * Admin thread, between start() and stop().  NULL: nothing to add. */
	void (*show_device)(const char *name, struct ut_json *j);
};
#endif
