/* The logical unit model: one struct scsi_dev per configured DEVICE.  It owns the backstore
 * and all SCSI state that SPC-4 ties to the logical unit: mode pages, UNIT ATTENTION queues,
 * the task set, reservations, ALUA group membership, copy operations. */
#ifndef UTGT_SCSI_DEV_H
#define UTGT_SCSI_DEV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "scsi/attr.h"
#include "scsi/backstore/backstore.h"
#include "scsi/scsi_task.h"

/* ALUA (SPC-4 asymmetric access states, as REPORT TARGET PORT GROUPS encodes them). */
enum scsi_alua_state {
	ALUA_ACTIVE_OPTIMIZED    = 0x0,
	ALUA_ACTIVE_NONOPTIMIZED = 0x1,
	ALUA_STANDBY             = 0x2,
	ALUA_UNAVAILABLE         = 0x3,
	ALUA_OFFLINE             = 0xe,
	ALUA_TRANSITIONING       = 0xf,
};

struct scsi_tpg {
	char name[64];
	uint16_t group_id;
	enum scsi_alua_state state;
	bool preferred;
	bool local; /* one of its targets is in this process (not a peer gateway's) */
	unsigned nports;
	uint16_t *rel_tgt_ids;
};

/* SCST DEVICE_GROUP: devices sharing a set of target port groups. */
struct scsi_alua_group {
	char name[64];
	unsigned ntpgs;
	struct scsi_tpg *tpgs;
};

/* SCSI peripheral device types utgt serves: an SBC disk, or an MMC CD-ROM (SCST's vcdrom). */
enum scsi_dev_type {
	SCSI_TYPE_DISK  = 0x00,
	SCSI_TYPE_CDROM = 0x05,
};

/* MMC media event (GET EVENT STATUS NOTIFICATION media class event codes). */
enum scsi_media_event {
	MEDIA_EV_NONE      = 0,
	MEDIA_EV_NEW       = 2,
	MEDIA_EV_REMOVAL   = 3,
};

/* Identity and behaviour of a device, from scst.conf attributes (SCST names in comments). */
struct scsi_dev_params {
	char name[64];
	uint8_t type;        /* enum scsi_dev_type; the handler decides (vcdrom: CD-ROM) */
	char vendor[9];      /* t10_vend_id, default "UTGT" */
	char product[17];    /* prod_id, default device name */
	char revision[5];    /* prod_rev_lvl */
	char t10_dev_id[65]; /* t10_dev_id, default device name */
	char usn[33];        /* usn: unit serial number (VPD 80), default derived from name */
	uint64_t naa_id;     /* NAA 6 identifier low 64 bits; 0 = derive from usn */
	uint8_t naa_bytes[16]; /* naa_id exactly as configured (SCST: 8 bytes NAA 2/3/5 or 16 */
	uint8_t naa_len;       /* bytes NAA 6); naa_len 0 = not configured */
	uint8_t eui64[16];     /* eui64_id: an EUI-64 based designator of 8, 12 or 16 bytes */
	uint8_t eui64_len;     /* 0 = not configured */
	char vend_specific_id[129]; /* after the vendor in the T10 designator; "" = t10_dev_id */
	char scsi_device_name[257]; /* SCSI name string of the target device; "" = none */
	bool rotational;     /* VPD B1 medium rotation rate */
	bool removable;      /* RMB bit; START STOP UNIT LOEJ and PREVENT ALLOW apply */
	bool swp;            /* software write protect, control mode page */
	bool d_sense;        /* default D_SENSE */
	bool tas;            /* task aborted status */
	uint8_t qerr;
	unsigned max_xfer_blocks; /* Block Limits: maximum transfer length */
	unsigned sanitize_rate_mb; /* SANITIZE writes at most this many MiB/s; 0: unpaced */
	/* lb_per_pb_exp (SCST's switch, not a number): report the physical block (the block
	 * device's for blockio, else 4096 bytes) as LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT */
	bool lb_per_pb_exp;
	char pr_file_dir[256];    /* where APTPL state is kept; "" = no persistence */
	char served_dir[256];     /* where served files are remembered; "" = not kept */
};

struct scsi_ua_state;  /* scsi/spc_ua.c */
struct scsi_taskset;   /* scsi/scsi_taskset.c */
struct scsi_pr;        /* scsi/spc_pr.c */
struct scsi_rangelock; /* scsi/sbc_rangelock.c */
struct scsi_xcopy;     /* scsi/spc_xcopy.c */

struct scsi_dev {
	struct scsi_dev_params p;
	struct backstore *bs;
	uint64_t size_cfg;    /* bytes configured (size/size_mb) at open; 0: the whole store */
	uint64_t nr_blocks;
	uint32_t block_size;
	uint8_t block_shift;
	/* The identity in p (vendor ... scsi_device_name), which live administration may
	 * rewrite as SCST does (scsi_dev_set_identity): INQUIRY and designator matching read it
	 * under the read lock, as SCST's vdisk_serial_rwlock. */
	pthread_rwlock_t ident_lock;
	pthread_mutex_t lock; /* state below; never held across backstore I/O */
	/* Lock-free admission (scsi_exec.c): non-zero while anything that a SIMPLE READ or
	 * WRITE would have to check is pending on the LU.  Each bit summarizes some state and
	 * is written under that state's lock (enum scsi_exc, scsi_core.h); read with acquire. */
	uint32_t exc;
	bool open;            /* scsi_dev_open() succeeded: backstore open, pr/rl/xc created */

	/* mode parameters, current values (changeable ones set by MODE SELECT) */
	struct {
		bool wce;     /* caching page 08 */
		bool rcd;
		bool d_sense; /* control page 0A */
		bool swp;
		uint8_t qerr;
		bool tas;
		uint8_t mrie;     /* informational exceptions page 1C */
		bool dexcpt;
		bool awre, arre;  /* error recovery page 01 */
	} mode;

	bool stopped;         /* START STOP UNIT START=0 */
	bool medium_removed;  /* removable and ejected (LOEJ), or a CD-ROM without a file */
	uint8_t media_event;  /* enum scsi_media_event not yet reported by GESN */
	unsigned prevent;     /* PREVENT ALLOW MEDIUM REMOVAL count */
	bool sanitizing;
	/* A SANITIZE failed: medium access gets MEDIUM ERROR 31/03 until a SANITIZE succeeds or
	 * EXIT FAILURE MODE (allowed only when the failed one had AUSE=1) clears it. */
	bool sanitize_failed;
	bool sanitize_ause;

	/* NULL: symmetric access.  Read with an acquire load inside a command (scsi_dev_tpg);
	 * replaced live by scsi_dev_set_alua(), the old group kept until a grace period ends. */
	const struct scsi_alua_group *alua;
	/* A shared store whose owner changes (vdisk_rbd with alua_follow_lock): the states the
	 * store decides, packed by scsi_dev_alua_follow() (0: the configured states hold). */
	uint32_t alua_follow;

	struct scsi_ua_state *ua;
	struct scsi_taskset *ts;
	struct scsi_pr *pr;
	struct scsi_rangelock *rl;
	struct scsi_lendgate *lend; /* READs lent from the store's memory (sbc_lend.c); NULL: none */
	struct scsi_xcopy *xc;
	struct scsi_io_stats stats; /* relaxed atomics, see scsi_task.h */
	/* Written by every command, next to stats and far from exc (read by every command,
	 * seldom written), so the two do not share a cache line. */
	uint32_t rl_fast;      /* range lock: shared holders that took no lock (sbc_rangelock.c) */
	uint64_t fast_admits;  /* commands admitted lock-free (relaxed adds; tests) */
};

/* Build a device from an SCST handler name and its attributes.  Reports unknown or bad
 * attributes on d (with lines).  Does not open the backstore (see scsi_dev_open) so that
 * `--check` validates without touching files.  Returns NULL on error. */
struct scsi_dev *scsi_dev_configure(const char *handler, const char *name,
				    const struct utgt_attr *attrs, unsigned nattrs, struct diag *d);
/* The same, with the line of the DEVICE block for errors that belong to no attribute (e.g. a
 * missing filename).  scsi_dev_configure() uses the first attribute's line. */
struct scsi_dev *scsi_dev_configure_at(const char *handler, const char *name, int line,
				       const struct utgt_attr *attrs, unsigned nattrs,
				       struct diag *d);
/* Open the backstore and size the LU.  0 on success; -1 with a message in err. */
int scsi_dev_open(struct scsi_dev *dev, char *err, size_t errlen);
/* Closes the backstore when open and frees it too: the device owns its struct backstore. */
void scsi_dev_destroy(struct scsi_dev *dev);

/* A device built directly (tests, demo): backstore already filled in, not yet opened. */
struct scsi_dev *scsi_dev_new(const struct scsi_dev_params *p, struct backstore *bs);

/* CD-ROM media change (SCST's vcdrom: writing `filename`): close the current image, open
 * `filename` ("" ejects), report NEW MEDIA to GET EVENT STATUS NOTIFICATION and 28/00 (NOT
 * READY TO READY CHANGE, MEDIUM MAY HAVE CHANGED) to every nexus.  Refused while an initiator
 * prevents medium removal, as SCST does.  Commands arriving meanwhile find no medium (3A/00);
 * the image closes once the commands that found it have completed (a grace period, so never
 * call this from inside a command).  0, or -1 with a message in err. */
int scsi_dev_change_medium(struct scsi_dev *dev, const char *filename, char *err, size_t errlen);

/* Capacity changed underneath (e.g. file grown): rescan, raise 2A/09 to every nexus.  A
 * configured size is kept: the LU is min(configured size, file length). */
void scsi_dev_resize(struct scsi_dev *dev);

/* ---- live administration (scsi/scsi_dev_live.c), called off the I/O path ---- */
/* Take the identity of p (vendor, product, revision, t10_dev_id, usn, naa_id, eui64_id,
 * vend_specific_id, scsi_device_name: SCST's writable vdisk attributes); when it differs,
 * INQUIRY DATA HAS CHANGED (3F/03) to every nexus.  Returns whether it changed. */
bool scsi_dev_set_identity(struct scsi_dev *dev, const struct scsi_dev_params *p);
/* What SCST fixes when it creates a device, compared between a running LU and a freshly
 * configured (not opened) one: NULL when the LU can become the fresh one live, else the SCST
 * name of the first attribute that differs ("filename", "blocksize", "nv_cache", ...).
 * Identity, size and a CD-ROM's filename change live and are not compared. */
const char *scsi_dev_setup_differs(const struct scsi_dev *live, const struct scsi_dev *fresh);
/* Does the identity of p equal dev's? */
bool scsi_dev_identity_equal(const struct scsi_dev *dev, const struct scsi_dev_params *p);
/* Publish dev's ALUA group (NULL: none).  When a port group's state, preferred bit, id or
 * ports differ from the old group's, ASYMMETRIC ACCESS STATE CHANGED (2A/06) to every nexus.
 * The old group must stay valid until scsi_srcu_synchronize().  Returns whether it changed. */
bool scsi_dev_set_alua(struct scsi_dev *dev, const struct scsi_alua_group *g);
/* The ALUA states follow a shared store's owner (spc_alua.c): the local port groups are
 * active/optimized while this gateway owns the store, `nonowner` (active/non-optimized or
 * standby) while another does, transitioning while it takes over, unavailable once fenced;
 * a peer's group is active/optimized when it is the owner's (v->owner_group), else
 * `nonowner`.  ASYMMETRIC ACCESS STATE CHANGED (2A/06) to every nexus when a state changed.
 * Returns whether one did. */
bool scsi_dev_alua_follow(struct scsi_dev *dev, const struct bs_lock_view *v,
			  enum scsi_alua_state nonowner);
/* scst.conf's name of a state: active, nonoptimized, standby, unavailable, offline,
 * transitioning. */
const char *scsi_alua_state_name(enum scsi_alua_state s);
/* A port group's state now: the configured one, or what the owner of a shared store says. */
enum scsi_alua_state scsi_tpg_state(const struct scsi_dev *dev, const struct scsi_tpg *tpg);
/* SCST's write of size / size_mb (bytes > 0) or resync_size (bytes 0: the medium's own size
 * again, capped by a configured size): the backstore's resize op, then CAPACITY DATA HAS
 * CHANGED (2A/09) to every nexus when the block count moved.  0, or -1 with err. */
int scsi_dev_set_size(struct scsi_dev *dev, uint64_t bytes, char *err, size_t errlen);

/* The caching mode page's WCE set from outside (a TCMU device's emulate_write_cache, as
 * MODE SELECT would): when it changes, MODE PARAMETERS CHANGED (2A/01) to every nexus.
 * Returns whether it changed. */
bool scsi_dev_set_wce(struct scsi_dev *dev, bool wce);

/* UNIT ATTENTION (scsi/spc_ua.c).  Establish for every I_T nexus except `except` (may be
 * NULL), or for one nexus by port names. */
void scsi_ua_raise_all(struct scsi_dev *dev, const struct scsi_nexus *except, uint8_t asc, uint8_t ascq);
void scsi_ua_raise(struct scsi_dev *dev, const char *initiator_port, uint16_t rel_tgt_id,
		   uint8_t asc, uint8_t ascq);
/* Establish a UA for every I_T nexus known to dev that match() accepts (persistent
 * reservations: registrations made for all target ports, or for every port of an iSCSI name). */
void scsi_ua_raise_match(struct scsi_dev *dev,
			 bool (*match)(const char *initiator_port, uint16_t rel_tgt_id, void *arg),
			 void *arg, uint8_t asc, uint8_t ascq);

#endif
