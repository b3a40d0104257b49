/* Logical unit lifetime: build, open (size the LU from its backstore, set mode page defaults,
 * create the per-LU state of each subsystem), resize, destroy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scsi/scsi_core.h"
#include "scsi/scsi_srcu.h"

/* FNV-1a: a stable hash for identifiers derived from names (same config, same ids). */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Defaults for identity fields left empty, so every path that builds a device (config loader,
 * tests, demo) reports the same INQUIRY / VPD data for the same name. */
static void fill_defaults(struct scsi_dev_params *p)
{
	if (!p->vendor[0])
		snprintf(p->vendor, sizeof(p->vendor), "UTGT");
	if (!p->product[0])
		snprintf(p->product, sizeof(p->product), "%.16s", p->name[0] ? p->name : "disk");
	if (!p->revision[0])
		snprintf(p->revision, sizeof(p->revision), "0100");
	if (!p->t10_dev_id[0])
		snprintf(p->t10_dev_id, sizeof(p->t10_dev_id), "%s", p->name);
	if (!p->usn[0])
		snprintf(p->usn, sizeof(p->usn), "%016llx", (unsigned long long)fnv1a(p->name));
}

struct scsi_dev *scsi_dev_new(const struct scsi_dev_params *p, struct backstore *bs)
{
	struct scsi_dev *dev = calloc(1, sizeof(*dev));

	if (!dev)
		return NULL;
	dev->p = *p;
	fill_defaults(&dev->p);
	dev->bs = bs;
	pthread_mutex_init(&dev->lock, NULL);
	pthread_rwlock_init(&dev->ident_lock, NULL);
	dev->ua = scsi_ua_create();
	dev->ts = scsi_taskset_create();
	if (!dev->ua || !dev->ts) {
		scsi_ua_destroy(dev->ua);
		scsi_taskset_destroy(dev->ts);
		pthread_rwlock_destroy(&dev->ident_lock);
		pthread_mutex_destroy(&dev->lock);
		free(dev);
		return NULL;
	}
	/* mode page defaults before open too, so --check prints what the LU will report */
	dev->mode.d_sense = dev->p.d_sense;
	dev->mode.swp = dev->p.swp;
	dev->mode.qerr = dev->p.qerr;
	dev->mode.tas = dev->p.tas;
	dev->mode.wce = bs ? !bs->write_through : true;
	scsi_dev_medium_changed(dev);
	return dev;
}

/* A CD-ROM LU configured without an image (no filename, or SCST's "none"). */
static bool cd_empty(const struct scsi_dev *dev)
{
	return dev->p.type == SCSI_TYPE_CDROM && !dev->bs->filename[0];
}

/* Create only on first use: a file that vanished while the daemon was
 * stopped must not come back empty with the same identity and the old reservations.  The
 * state dir remembers which file each DEVICE served (served_dir/<device>: its filename);
 * a missing file is created only if this DEVICE never served it, or with create_missing. */
static bool served_path(const struct scsi_dev *dev, char *path, size_t len)
{
	return dev->p.served_dir[0] &&
	       (size_t)snprintf(path, len, "%s/%s", dev->p.served_dir, dev->p.name) < len;
}

static int first_use_check(const struct scsi_dev *dev, char *err, size_t errlen)
{
	const struct backstore *bs = dev->bs;
	char path[PATH_MAX], was[PATH_MAX + 2] = "";
	struct stat st;
	FILE *f;

	if (strcmp(bs->ops->name, "vdisk_fileio") || !bs->filename[0] || bs->create_missing ||
	    !served_path(dev, path, sizeof(path)))
		return 0;
	if (stat(bs->filename, &st) == 0 || errno != ENOENT)
		return 0;
	f = fopen(path, "re");
	if (!f)
		return 0; /* never served: first use */
	if (!fgets(was, sizeof(was), f))
		was[0] = '\0';
	fclose(f);
	was[strcspn(was, "\n")] = '\0';
	if (strcmp(was, bs->filename))
		return 0; /* it served another file: this one is new */
	snprintf(err, errlen,
		 "%s: %s is missing but was served before (%s): not recreating it empty "
		 "(restore it, or set create_missing 1)",
		 dev->p.name, bs->filename, path);
	return -1;
}

static void mark_served(const struct scsi_dev *dev)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	FILE *f;

	if (strcmp(dev->bs->ops->name, "vdisk_fileio") || !served_path(dev, path, sizeof(path)))
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "%s\n", dev->bs->filename);
	if (fclose(f) == 0)
		rename(tmp, path);
	else
		unlink(tmp);
}

static void size_from_bs(struct scsi_dev *dev)
{
	uint32_t bsz = dev->bs->block_size ? dev->bs->block_size : 512;

	dev->block_size = bsz;
	dev->block_shift = (uint8_t)__builtin_ctz(bsz);
	dev->nr_blocks = dev->bs->size >> dev->block_shift;
}

/* A store resized under us (an RBD image resized in the cluster) has updated bs->size. */
static void dev_store_resized(struct backstore *bs)
{
	scsi_dev_resize(bs->owner);
}

/* A shared store's owner changed (vdisk_rbd with alua_follow_lock, its lock thread). */
static void dev_store_lock_changed(struct backstore *bs, const struct bs_lock_view *v)
{
	struct scsi_dev *dev = bs->owner;

	scsi_dev_alua_follow(dev, v,
			     bs->ceph.nonowner_standby ? ALUA_STANDBY : ALUA_ACTIVE_NONOPTIMIZED);
}

/* alua_follow_lock: the store announces this gateway's port group, the local one of the
 * device's DEVICE_GROUP; a device in none has no state to follow. */
static int local_port_group(struct scsi_dev *dev, char *err, size_t errlen)
{
	const struct scsi_alua_group *g = dev->alua;

	for (unsigned i = 0; g && i < g->ntpgs; i++)
		if (g->tpgs[i].local) {
			dev->bs->local_group = g->tpgs[i].group_id;
			return 0;
		}
	snprintf(err, errlen,
		 "%s: alua_follow_lock needs the device in a DEVICE_GROUP with a TARGET_GROUP "
		 "of this gateway's targets (and one per peer gateway: docs/rbd.md)",
		 dev->p.name);
	return -1;
}

int scsi_dev_open(struct scsi_dev *dev, char *err, size_t errlen)
{
	struct backstore *bs = dev->bs;

	if (dev->open)
		return 0;
	if (!bs || !bs->ops) {
		snprintf(err, errlen, "%s: no backstore", dev->p.name);
		return -1;
	}
	if (bs->block_size == 0)
		bs->block_size = 512;
	if (bs->block_size < 512 || (bs->block_size & (bs->block_size - 1))) {
		snprintf(err, errlen, "%s: block size %u is not a power of two >= 512", dev->p.name,
			 bs->block_size);
		return -1;
	}
	dev->size_cfg = bs->size; /* the store may fill bs->size in from the file */
	if (cd_empty(dev)) {
		/* SCST's empty vcdrom: a drive with its tray open until an image is set */
		size_from_bs(dev);
		dev->nr_blocks = 0;
		dev->medium_removed = true;
		goto subsystems;
	}
	if (first_use_check(dev, err, errlen))
		return -1;
	bs->owner = dev;
	bs->size_changed = dev_store_resized;
	bs->lock_changed = dev_store_lock_changed;
	if (bs->ceph.alua_follow_lock && local_port_group(dev, err, errlen))
		return -1;
	if (bs->ops->open && bs->ops->open(bs, err, errlen) != 0)
		return -1;
	mark_served(dev);
	size_from_bs(dev);
	if (dev->nr_blocks == 0) {
		if (bs->ops->close)
			bs->ops->close(bs);
		snprintf(err, errlen, "%s: size %llu is smaller than one %u-byte block", dev->p.name,
			 (unsigned long long)bs->size, dev->block_size);
		return -1;
	}
	dev->mode.wce = !bs->write_through;
	dev->mode.d_sense = dev->p.d_sense;
	dev->mode.swp = dev->p.swp;
	dev->mode.qerr = dev->p.qerr;
	dev->mode.tas = dev->p.tas;
subsystems:
	scsi_dev_medium_changed(dev);
	/* The reservation state is required: a shared store that cannot be read refuses the
	 * LU.  The other subsystems return NULL when they have nothing to keep. */
	dev->pr = scsi_pr_create(dev, err, errlen);
	if (!dev->pr) {
		if (!cd_empty(dev) && bs->ops->close)
			bs->ops->close(bs);
		return -1;
	}
	dev->rl = scsi_rangelock_create();
	dev->lend = scsi_lendgate_create(bs);
	dev->xc = scsi_xcopy_create(dev);
	dev->open = true;
	return 0;
}

void scsi_dev_destroy(struct scsi_dev *dev)
{
	if (!dev)
		return;
	if (dev->open) {
		if (dev->xc)
			scsi_xcopy_destroy(dev->xc);
		scsi_lendgate_destroy(dev->lend); /* first: a lent READ still holds its range */
		if (dev->rl)
			scsi_rangelock_destroy(dev->rl);
		if (dev->pr)
			scsi_pr_destroy(dev->pr);
		if (dev->bs && dev->bs->ops && dev->bs->ops->close && !cd_empty(dev))
			dev->bs->ops->close(dev->bs);
	}
	scsi_taskset_destroy(dev->ts);
	scsi_ua_destroy(dev->ua);
	pthread_rwlock_destroy(&dev->ident_lock);
	pthread_mutex_destroy(&dev->lock);
	free(dev->bs); /* the device owns its backstore */
	free(dev);
}

int scsi_dev_change_medium(struct scsi_dev *dev, const char *filename, char *err, size_t errlen)
{
	struct backstore *bs = dev->bs;
	bool was_empty, failed = false;

	if (dev->p.type != SCSI_TYPE_CDROM) {
		snprintf(err, errlen, "%s: only a CD-ROM LU changes media", dev->p.name);
		return -1;
	}
	if (filename[0] && filename[0] != '/') {
		snprintf(err, errlen, "%s: the path must be absolute (as in SCST)", dev->p.name);
		return -1;
	}
	if (strlen(filename) >= sizeof(bs->filename)) {
		snprintf(err, errlen, "%s: path too long", dev->p.name);
		return -1;
	}
	pthread_mutex_lock(&dev->lock);
	if (dev->prevent) {
		pthread_mutex_unlock(&dev->lock);
		snprintf(err, errlen, "%s: an initiator prevents medium removal", dev->p.name);
		return -1;
	}
	/* from here on new commands find no medium (3A/00) */
	dev->medium_removed = true;
	scsi_dev_medium_changed(dev);
	pthread_mutex_unlock(&dev->lock);
	/* and the ones that found it (a READ between its medium check and the store) are done */
	scsi_srcu_synchronize();

	was_empty = cd_empty(dev);
	if (!was_empty && bs->ops->close)
		bs->ops->close(bs); /* waits for the I/O still in flight */
	snprintf(bs->filename, sizeof(bs->filename), "%s", filename);
	bs->size = 0;
	if (filename[0] && bs->ops->open(bs, err, errlen) != 0) {
		bs->filename[0] = '\0'; /* the drive is left empty */
		filename = "";
		failed = true;
	}
	pthread_mutex_lock(&dev->lock);
	size_from_bs(dev);
	if (!filename[0])
		dev->nr_blocks = 0;
	dev->medium_removed = !filename[0];
	dev->media_event = filename[0] ? MEDIA_EV_NEW : MEDIA_EV_REMOVAL;
	scsi_dev_medium_changed(dev);
	pthread_mutex_unlock(&dev->lock);
	scsi_ua_raise_all(dev, NULL, 0x28, 0x00); /* NOT READY TO READY CHANGE, MEDIUM MAY HAVE CHANGED */
	return failed ? -1 : 0; /* failed: err says why opening the new image failed */
}

/* The file behind a fileio store may have grown or shrunk: that is the one thing re-read here.
 * A size given in the configuration stays the LU's size as long as the file holds it (a file
 * shorter than that bounds the LU, or its reads would fail past the end).  Block devices and
 * memory stores report through bs->size, which their owner updates before calling this. */
void scsi_dev_resize(struct scsi_dev *dev)
{
	struct backstore *bs = dev->bs;
	struct stat st;
	uint64_t old;

	if (!bs)
		return;
	if (bs->filename[0] && stat(bs->filename, &st) == 0 && S_ISREG(st.st_mode)) {
		uint64_t fsize = (uint64_t)st.st_size;

		bs->size = dev->size_cfg && dev->size_cfg < fsize ? dev->size_cfg : fsize;
	}
	pthread_mutex_lock(&dev->lock);
	old = dev->nr_blocks;
	size_from_bs(dev);
	pthread_mutex_unlock(&dev->lock);
	if (dev->nr_blocks != old)
		scsi_ua_raise_all(dev, NULL, 0x2a, 0x09); /* CAPACITY DATA HAS CHANGED */
}

/* Write protection as the initiator sees it through this LUN: the LUN mapping's read_only,
 * a read-only backstore, or software write protect (control mode page SWP). */
bool scsi_dev_write_protected(const struct scsi_dev *dev, const struct scsi_lun_entry *ent)
{
	bool swp;

	pthread_mutex_lock((pthread_mutex_t *)&dev->lock);
	swp = dev->mode.swp;
	pthread_mutex_unlock((pthread_mutex_t *)&dev->lock);
	return swp || (ent && ent->read_only) || (dev->bs && dev->bs->read_only);
}

enum scsi_sr scsi_dev_readiness(struct scsi_dev *dev)
{
	enum scsi_sr sr = SR_OK;

	pthread_mutex_lock(&dev->lock);
	if (dev->medium_removed)
		sr = SR_MEDIUM_NOT_PRESENT;
	else if (dev->stopped)
		sr = SR_NOT_READY_STOPPED;
	else if (dev->sanitizing)
		sr = SR_SANITIZE_IN_PROGRESS;
	pthread_mutex_unlock(&dev->lock);
	return sr;
}

void scsi_dev_medium_changed(struct scsi_dev *dev)
{
	scsi_exc_set(dev, SCSI_EXC_MEDIUM,
		     dev->stopped || dev->medium_removed || dev->sanitizing || dev->mode.swp);
}

bool scsi_dev_d_sense(struct scsi_dev *dev)
{
	bool d;

	pthread_mutex_lock(&dev->lock);
	d = dev->mode.d_sense;
	pthread_mutex_unlock(&dev->lock);
	return d;
}
