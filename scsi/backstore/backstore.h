/* Backstores: where a logical unit's blocks live.  One small ops table, asynchronous verbs,
 * one closed status enum that the SCSI core maps to sense data in exactly one place.
 *
 * backstore_ops.lba_status is optional: GET LBA STATUS (scsi/sbc_lba_status.c) asks it which
 * ranges are mapped.  fileio answers with SEEK_DATA/SEEK_HOLE, ramdisk from the pages it has
 * dropped; a store without it is reported as fully mapped.  It runs on a core worker thread
 * and may block.
 *
 * backstore_ops.map is optional too: a store whose blocks are memory (ramdisk) lends a
 * READ's bytes in place instead of copying them (scsi/sbc_lend.c). */
#ifndef UTGT_BACKSTORE_H
#define UTGT_BACKSTORE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "scsi/attr.h"

enum bs_status {
	BS_OK = 0,
	BS_EIO,     /* the medium failed: MEDIUM ERROR */
	BS_ENOSPC,  /* thin store out of space: SPACE ALLOCATION FAILED */
	BS_EROFS,   /* store opened read-only */
	BS_ENOTSUP, /* verb not supported by this store */
	BS_ENOMEM,  /* transient resource shortage */
	BS_ERANGE,  /* offset/length beyond the store (a core bug if it happens) */
	BS_ETIMEDOUT, /* a networked store did not answer in time: the initiator may retry */
	BS_EFENCED,   /* this process was cut off from a shared store (Ceph blocklist): this
		       * path can no longer serve the LU, another gateway must */
	BS_MISCOMPARE, /* BS_COMPARE_WRITE: the data differs at io->miscompare_at */
	BS_ETRANSITION, /* another gateway owns the shared store right now: the initiator
			 * retries (ALUA transitioning) and reads REPORT TARGET PORT GROUPS */
};

enum bs_op {
	BS_READ,
	BS_WRITE,
	BS_FLUSH,      /* make everything written so far durable */
	BS_UNMAP,      /* deallocate [off, off+len): punch hole / discard; reads return zeros after */
	BS_WRITE_SAME, /* replicate the one block in iov over [off, off+len) */
	/* iov holds len bytes to compare with [off, off+len), then len bytes to write there
	 * when they match; atomic in the store itself (so across gateways sharing it).  Only
	 * up to the store's compare_write_max; others answer BS_ENOTSUP. */
	BS_COMPARE_WRITE,
};

struct backstore;
struct pr_store;
struct bs_lock_status;

/* A file or block device store's I/O engine (scsi/backstore/bs_aio.c), counted from open. */
struct bs_engine_stats {
	const char *mode;    /* "io_uring" or "threads" */
	uint64_t in_flight;  /* I/Os submitted and not completed (waiting for a slot too) */
	uint64_t submitted;  /* I/Os started */
	uint64_t completed;  /* callbacks made */
	uint64_t syscalls;   /* steps issued (io_uring SQEs or synchronous calls) */
	uint64_t resumed;    /* steps issued to finish a short transfer */
	uint64_t retried;    /* steps re-issued after EINTR/EAGAIN */
	uint64_t bounced;    /* I/Os copied through an aligned bounce buffer */
	uint64_t unaligned;  /* O_DIRECT I/Os sent through the buffered descriptor */
	uint64_t fua_writes; /* write steps issued with RWF_DSYNC */
	uint64_t flushes;    /* fdatasync steps issued */
	uint64_t discards;   /* BLKDISCARD ioctls issued */
	uint64_t queued;     /* I/Os that waited for a free slot */
	uint64_t own_ring;   /* steps completed on the submitting thread's own ring */
	uint64_t inlined;    /* steps run on the submitting thread (bs_io.inline_ok) */
	uint64_t cold;       /* READ steps the page cache could not answer (RWF_NOWAIT), so read
			      * by a thread that may sleep: the ring's workers or the pool */
};

struct bs_io {
	enum bs_op op;
	uint64_t off; /* bytes */
	uint64_t len; /* bytes */
	struct iovec *iov;
	int iovcnt;
	bool fua; /* write: durable before completion */
	bool waited; /* the submitter blocks until cb (bs_submit_sync): complete it on a thread
		      * other than the submitter's, never on the submitter's own loop */
	/* The submitting thread may run a READ or WRITE itself when the page cache answers it
	 * without waiting for the medium (the backstore decides; io->cb then runs before submit
	 * returns).  Set by a transport whose thread gains from it (TCMU: the ring thread at
	 * QD1 saves a hop to an I/O thread and its wakeup). */
	bool inline_ok;
	/* With inline_ok: a buffered WRITE may run here even while other I/O of the store is in
	 * flight (a write may wait for a page or for dirty throttling; the submitter says it can
	 * afford that: TCMU's two ring threads, one of which keeps serving the ring). */
	bool inline_wait_ok;
	/* With inline_ok: a READ larger than the backstore's own inline limit may run here too
	 * (still only what the page cache answers at once).  The submitter says the copy is
	 * cheaper on its thread than the hop to an I/O thread and back (TCMU's ring thread, which
	 * then also makes the kick that completes the command in LIO). */
	bool inline_large_ok;
	uint64_t miscompare_at; /* BS_MISCOMPARE: offset of the first differing byte in len */
	void (*cb)(struct bs_io *io, enum bs_status st);
	void *priv;
	/* backstore-private */
	struct bs_io *bs_next;
	int64_t bs_res;
};

struct backstore_ops {
	const char *name; /* SCST handler name: "vdisk_fileio" */
	/* attributes this handler understands beyond the device-generic ones; NULL-terminated */
	const char *const *attrs;
	int (*open)(struct backstore *bs, char *err, size_t errlen);
	void (*close)(struct backstore *bs);
	/* Start io; io->cb runs exactly once, on any thread, possibly before submit returns. */
	void (*submit)(struct backstore *bs, struct bs_io *io);
	/* Optional (GET LBA STATUS).  Starting at byte `off` (block aligned, inside the store),
	 * report whether the data there is allocated (*mapped) and how many bytes from `off` on,
	 * at most `len`, share that state (*run, a multiple of the block size, > 0).  Synchronous;
	 * called on a core worker.  NULL: every block counts as mapped. */
	enum bs_status (*lba_status)(struct backstore *bs, uint64_t off, uint64_t len, bool *mapped,
				     uint64_t *run);
	/* Optional: the store's blocks are memory.  A pointer to bytes [off, off + len) (block
	 * aligned, inside the store) that stays valid until close, or NULL when the range cannot
	 * be had in one piece.  The store does not keep writers off the range: the caller holds
	 * it against them while it uses the pointer (scsi/sbc_lend.c).  Any thread; never
	 * blocks.  NULL op: READ data is always copied into the caller's iovecs. */
	void *(*map)(struct backstore *bs, uint64_t off, uint64_t len);
	/* Optional (live administration: SCST's writes of size and resync_size).  Change the
	 * size of the open store: bytes 0 takes the medium's own size again (the file's length,
	 * the block device's capacity); otherwise the store becomes bytes long (a block
	 * multiple), a file growing sparsely to it; a file is never shrunk (the LU is).  Sets
	 * bs->size; 0, or -1 with a message in err.  NULL: the size is fixed while the store is
	 * open (ramdisk memory, a CD image). */
	int (*resize)(struct backstore *bs, uint64_t bytes, char *err, size_t errlen);
	/* Optional: a persistent reservation store shared by every gateway serving the same
	 * medium (scsi/pr_store.h; vdisk_rbd: a RADOS object beside the image).  Called once
	 * the store is open; NULL with a reason in err when it cannot be had.  NULL op: the
	 * state directory keeps APTPL state, this process only. */
	struct pr_store *(*pr_store_open)(struct backstore *bs, char *err, size_t errlen);
	/* Optional (shared stores): the lock owner, the role, the cluster's health. */
	void (*lock_status)(struct backstore *bs, struct bs_lock_status *out);
	/* Optional (SET TARGET PORT GROUPS naming this gateway's group active/optimized): take
	 * the lock now, fencing the owner, instead of waiting for its grace period. */
	int (*lock_takeover)(struct backstore *bs);
	/* Optional (`utgtadm show devices`): how the open store's I/O engine has been doing.
	 * Any thread; never blocks. */
	void (*engine_stats)(struct backstore *bs, struct bs_engine_stats *out);
};

/* Where a vdisk_rbd image lives (scst.conf: pool, image, ceph_conf, ceph_user, ceph_keyring). */
struct bs_ceph_params {
	char pool[128];
	char image[128];
	char conf[PATH_MAX];	/* "": librados's default search (CEPH_CONF, /etc/ceph) */
	char user[64];		/* without "client."; "": admin */
	char keyring[PATH_MAX]; /* "": whatever ceph_conf names */
	/* several gateways (docs/rbd.md): the ALUA state follows the image's exclusive lock */
	bool alua_follow_lock;
	bool nonowner_standby;	  /* alua_nonowner_state standby (default nonoptimized) */
	unsigned lock_grace_ms;	  /* alua_lock_grace: the owner silent this long is fenced */
	/* alua_explicit: TPGS 11b and SET TARGET PORT GROUPS take the lock (default: implicit only,
	 * since Linux's alua handler sends STPG whenever it activates a non-optimized path) */
	bool alua_explicit;
};

/* Where a shared store's ownership stands, as the store sees it from this gateway. */
enum bs_lock_role {
	BS_LOCK_UNKNOWN = 0, /* not decided yet (cluster not answering) */
	BS_LOCK_OWNER,	     /* this gateway holds the lock: it writes */
	BS_LOCK_PEER,	     /* another gateway holds it */
	BS_LOCK_TAKEOVER,    /* fencing the old owner and taking the lock */
	BS_LOCK_FENCED,	     /* this gateway was blocklisted: it reopens as a peer */
};

struct bs_lock_view {
	enum bs_lock_role role;
	int owner_group; /* the owner's target port group id; -1: not known */
};

/* What `utgtadm show devices` prints about a shared store. */
struct bs_lock_status {
	enum bs_lock_role role;
	int owner_group;
	char owner[128];  /* the lock owner's client address; "" none */
	char self[128];   /* this gateway's client address */
	char health[32];  /* the cluster's health (HEALTH_OK, ...); "" not known yet */
	unsigned takeovers, fenced;
};

/* A configured store.  Fields mirror SCST's vdisk attributes. */
struct backstore {
	const struct backstore_ops *ops;
	char name[64]; /* DEVICE name */
	char filename[PATH_MAX];
	uint64_t size;       /* bytes; from size/size_mb or the file */
	uint32_t block_size; /* 512 or 4096; 2048 for a CD-ROM image */
	bool read_only;
	bool nv_cache;      /* ignore SYNCHRONIZE CACHE and FUA: the cache is non-volatile */
	bool o_direct;
	bool write_through; /* open O_DSYNC: every write durable; WCE reads 0 */
	bool thin_provisioned;
	bool create_missing; /* fileio: create a missing file even if it was served before */
	bool dummy;          /* nullio: the device exists but I/O does nothing */
	bool read_zero;      /* nullio: reads return zeros (default) */
	bool can_unmap;      /* set by open(): UNMAP really deallocates */
	bool unmap_zeroes;   /* set by open(): deallocated blocks read back as zeros */
	/* set by open(): the medium's physical block in bytes when it tells us (blockio:
	 * BLKPBSZGET); 0: not known */
	uint32_t phys_block_size;
	/* set by open(): the longest BS_COMPARE_WRITE the store does atomically itself, in
	 * bytes (0: none; the core then compares and writes under its own range lock) */
	uint32_t compare_write_max;
	struct bs_ceph_params ceph; /* vdisk_rbd */
	/* Set by the owner before open: a store whose size can change under it (an RBD image
	 * resized in the cluster) updates bs->size and calls this, from any thread. */
	void (*size_changed)(struct backstore *bs);
	/* Set by the owner before open: a shared store whose ownership changed calls this
	 * (from its own thread); the core republishes the ALUA states. */
	void (*lock_changed)(struct backstore *bs, const struct bs_lock_view *v);
	/* Set by the owner before open: this gateway's target port group id (the local one of
	 * the device group), which the lock owner announces to the others. */
	uint16_t local_group;
	void *owner;
	void *priv;
};

/* Registry of handlers by SCST name: vdisk_fileio, vdisk_blockio, vdisk_nullio, ramdisk,
 * vcdrom, vdisk_rbd. */
const struct backstore_ops *backstore_find(const char *handler);
extern const struct backstore_ops bs_fileio_ops, bs_blockio_ops, bs_nullio_ops, bs_ramdisk_ops,
    bs_vcdrom_ops, bs_rbd_ops;
/* Was vdisk_rbd built with librbd?  (Without it, opening an RBD device fails with a message.) */
extern const bool bs_rbd_available;

/* Synchronous helper for slow-path commands running on a core worker thread. */
enum bs_status bs_submit_sync(struct backstore *bs, struct bs_io *io);

#endif
