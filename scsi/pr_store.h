/* Where an LU's persistent reservation state is kept: a small ops table the PR code
 * (scsi/spc_pr*.c) writes through, with two implementations.
 *
 *   - the state directory (scsi/spc_pr_file.c): <pr_file_dir>/<device>.pr, written only while
 *     APTPL is in force, one gateway;
 *   - the Ceph cluster (scsi/backstore/bs_rbd_pr.c): one RADOS object per RBD image, shared by
 *     every gateway that serves the image, written on every change.
 *
 * The store sees the state as opaque text (the format of spc_pr_file.c) plus a version: it
 * knows nothing of registrations, and the core knows nothing of RADOS.  A change is a
 * compare-and-store against the version the change was computed from; losing that race means
 * another gateway changed the state first, and the core reloads and redoes the command.
 * Shared stores also carry every change to the other gateways (publish / watch), with a short
 * payload the core uses for the UNIT ATTENTIONs and aborts the change causes there. */
#ifndef UTGT_PR_STORE_H
#define UTGT_PR_STORE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pr_store;

/* Longest state text or change payload a store must hold. */
#define PR_STORE_TEXT_MAX (256 * 1024)

/* A change made by another gateway: called on the store's own thread, once per change, in
 * order; the store acknowledges the change to its sender only when this returns, so the
 * callee must have the new state in force by then. */
typedef void (*pr_store_changed_fn)(struct pr_store *s, const char *payload, size_t len);

struct pr_store_ops {
	const char *name;
	/* The stored text (malloc'd, NUL-terminated, into *text; NULL when nothing is stored)
	 * and its version (0 when nothing is stored).  0, or -errno with a reason in err. */
	int (*load)(struct pr_store *s, char **text, uint64_t *ver, char *err, size_t errlen);
	/* Store text (NULL: remove) if the stored version is still *ver; *ver then becomes the
	 * new version, which is greater.  0; -ESTALE when the stored version is another one
	 * (someone else changed it: reload, redo, retry); another -errno when it failed. */
	int (*store)(struct pr_store *s, const char *text, uint64_t *ver);
	/* Shared stores only (NULL otherwise).  Start calling cb for the other gateways'
	 * changes.  Sets s->alone when no other gateway is watching (every other one is down).
	 * 0 or -errno. */
	int (*watch)(struct pr_store *s, pr_store_changed_fn cb, char *err, size_t errlen);
	/* Shared stores only.  Tell every other gateway that version ver is stored, with
	 * payload, and return once each has it in force (its callback returned), or was cut
	 * off from the cluster because it did not answer in time.  0 or -errno. */
	int (*publish)(struct pr_store *s, uint64_t ver, const char *payload, size_t len);
	void (*close)(struct pr_store *s);
};

struct pr_store {
	const struct pr_store_ops *ops;
	/* Several gateways serve the LU: every change is stored (not only APTPL ones), PR IN
	 * reloads first, and changes are published. */
	bool shared;
	/* Set by watch: no other gateway had the store open, so this is a power on of the
	 * whole LU (SPC-4 5.13.5: without APTPL the registrations are gone). */
	bool alone;
	/* The name the state text carries (its "device" line): the DEVICE name for a file,
	 * the image for the cluster, so that gateways naming the DEVICE differently agree. */
	char name[160];
	char where[PATH_MAX]; /* for messages: the file's path, the object's pool/name */
	void *owner; /* the core's (struct scsi_pr) */
};

/* The state directory store: path is the file, name the device's. */
struct pr_store *pr_file_store_open(const char *path, const char *name);

#endif
