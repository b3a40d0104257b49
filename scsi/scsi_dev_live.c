/* Changes to an open logical unit while initiators use it, as SCST's writable vdisk attributes
 * allow: identity (INQUIRY DATA HAS CHANGED), ALUA group and states (ASYMMETRIC ACCESS STATE
 * CHANGED), size (CAPACITY DATA HAS CHANGED).  Called by live administration (utgtadm,
 * in the daemon above), never on the I/O path; what commands read without a lock is replaced
 * by publication (the ALUA group) or under the LU's identity lock. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "scsi/scsi_core.h"

/* The fields SCST lets a running vdisk change (its vdisk_serial_rwlock set). */
#define IDENTITY_FIELDS(X)                                                                         \
	X(vendor)                                                                                  \
	X(product)                                                                                 \
	X(revision)                                                                                \
	X(t10_dev_id)                                                                              \
	X(usn)                                                                                     \
	X(naa_id)                                                                                  \
	X(naa_bytes)                                                                               \
	X(naa_len)                                                                                 \
	X(eui64)                                                                                   \
	X(eui64_len)                                                                               \
	X(vend_specific_id)                                                                        \
	X(scsi_device_name)

static bool same_identity(const struct scsi_dev_params *a, const struct scsi_dev_params *b)
{
#define SAME(f) &&!memcmp(&a->f, &b->f, sizeof(a->f))
	return true IDENTITY_FIELDS(SAME);
#undef SAME
}

static uint32_t block_size_of(const struct scsi_dev *d)
{
	if (d->block_size)
		return d->block_size;
	return d->bs && d->bs->block_size ? d->bs->block_size : 512;
}

const char *scsi_dev_setup_differs(const struct scsi_dev *live, const struct scsi_dev *fresh)
{
	const struct backstore *a = live->bs, *b = fresh->bs;

	if (!a || !b || a->ops != b->ops || live->p.type != fresh->p.type)
		return "handler";
	if (live->p.type != SCSI_TYPE_CDROM && strcmp(a->filename, b->filename))
		return "filename";
	if (strcmp(a->ceph.pool, b->ceph.pool))
		return "pool";
	if (strcmp(a->ceph.image, b->ceph.image))
		return "image";
	if (strcmp(a->ceph.conf, b->ceph.conf))
		return "ceph_conf";
	if (strcmp(a->ceph.user, b->ceph.user))
		return "ceph_user";
	if (strcmp(a->ceph.keyring, b->ceph.keyring))
		return "ceph_keyring";
	/* the lock thread is started at open with these */
	if (a->ceph.alua_follow_lock != b->ceph.alua_follow_lock)
		return "alua_follow_lock";
	if (a->ceph.nonowner_standby != b->ceph.nonowner_standby)
		return "alua_nonowner_state";
	if (a->ceph.lock_grace_ms != b->ceph.lock_grace_ms)
		return "alua_lock_grace";
	if (a->ceph.alua_explicit != b->ceph.alua_explicit)
		return "alua_explicit";
	if (block_size_of(live) != block_size_of(fresh))
		return "blocksize";
#define FLAG(f, name)                                                                              	if (a->f != b->f)                                                                          		return name;
	FLAG(read_only, "read_only")
	FLAG(nv_cache, "nv_cache")
	FLAG(o_direct, "o_direct")
	FLAG(write_through, "write_through")
	FLAG(thin_provisioned, "thin_provisioned")
	FLAG(dummy, "dummy")
	FLAG(read_zero, "read_zero")
#undef FLAG
	if (live->p.removable != fresh->p.removable)
		return "removable";
	if (live->p.rotational != fresh->p.rotational)
		return "rotational";
	if (live->p.sanitize_rate_mb != fresh->p.sanitize_rate_mb)
		return "sanitize_rate_mb";
	if (live->p.lb_per_pb_exp != fresh->p.lb_per_pb_exp)
		return "lb_per_pb_exp"; /* READ CAPACITY(16)'s physical block, fixed at creation */
	return NULL;
}

bool scsi_dev_identity_equal(const struct scsi_dev *dev, const struct scsi_dev_params *p)
{
	bool same;

	pthread_rwlock_rdlock((pthread_rwlock_t *)&dev->ident_lock);
	same = same_identity(&dev->p, p);
	pthread_rwlock_unlock((pthread_rwlock_t *)&dev->ident_lock);
	return same;
}

bool scsi_dev_set_identity(struct scsi_dev *dev, const struct scsi_dev_params *p)
{
	bool changed;

	pthread_rwlock_wrlock(&dev->ident_lock);
	changed = !same_identity(&dev->p, p);
#define COPY(f) memcpy(&dev->p.f, &p->f, sizeof(dev->p.f));
	if (changed) {
		IDENTITY_FIELDS(COPY)
	}
#undef COPY
	pthread_rwlock_unlock(&dev->ident_lock);
	if (changed)
		scsi_ua_raise_all(dev, NULL, 0x3f, 0x03); /* INQUIRY DATA HAS CHANGED */
	return changed;
}

static bool same_tpg(const struct scsi_tpg *a, const struct scsi_tpg *b)
{
	return a->group_id == b->group_id && a->state == b->state && a->preferred == b->preferred &&
	       a->nports == b->nports &&
	       (!a->nports ||
		!memcmp(a->rel_tgt_ids, b->rel_tgt_ids, a->nports * sizeof(*a->rel_tgt_ids)));
}

static bool same_alua(const struct scsi_alua_group *a, const struct scsi_alua_group *b)
{
	if (!a || !b)
		return a == b;
	if (a->ntpgs != b->ntpgs)
		return false;
	for (unsigned i = 0; i < a->ntpgs; i++)
		if (!same_tpg(&a->tpgs[i], &b->tpgs[i]))
			return false;
	return true;
}

bool scsi_dev_set_alua(struct scsi_dev *dev, const struct scsi_alua_group *g)
{
	const struct scsi_alua_group *old = __atomic_load_n(&dev->alua, __ATOMIC_ACQUIRE);
	bool changed = !same_alua(old, g);

	__atomic_store_n(&dev->alua, g, __ATOMIC_RELEASE);
	if (changed)
		scsi_ua_raise_all(dev, NULL, 0x2a, 0x06); /* ASYMMETRIC ACCESS STATE CHANGED */
	return changed;
}

/* Resizes come from the admin socket (set/resize/resync, a reload) and from LIO's
 * RECONFIG_DEVICE on the TCMU thread.  They are rare: one at a time, across all devices, keeps
 * the store's resize and the block count it publishes in the same order. */
static pthread_mutex_t resize_mu = PTHREAD_MUTEX_INITIALIZER;

static int set_size_locked(struct scsi_dev *dev, uint64_t bytes, char *err, size_t errlen);

int scsi_dev_set_size(struct scsi_dev *dev, uint64_t bytes, char *err, size_t errlen)
{
	int rc;

	pthread_mutex_lock(&resize_mu);
	rc = set_size_locked(dev, bytes, err, errlen);
	pthread_mutex_unlock(&resize_mu);
	return rc;
}

static int set_size_locked(struct scsi_dev *dev, uint64_t bytes, char *err, size_t errlen)
{
	struct backstore *bs = dev->bs;
	uint64_t old, medium;

	if (!dev->open || !bs || !bs->ops || !bs->ops->resize || dev->p.type == SCSI_TYPE_CDROM) {
		snprintf(err, errlen,
			 "%s: the size of a %s device cannot change while it is open "
			 "(remove the device and add it again)",
			 dev->p.name, bs && bs->ops ? bs->ops->name : "backstore-less");
		return -1;
	}
	if (bs->ops->resize(bs, bytes, err, errlen) != 0)
		return -1;
	medium = bs->size;
	pthread_mutex_lock(&dev->lock);
	if (bytes)
		dev->size_cfg = bytes;
	else if (dev->size_cfg && dev->size_cfg < medium) /* resync keeps a configured size */
		__atomic_store_n(&bs->size, dev->size_cfg - dev->size_cfg % bs->block_size,
				 __ATOMIC_RELAXED);
	old = dev->nr_blocks;
	dev->nr_blocks = bs->size >> dev->block_shift;
	pthread_mutex_unlock(&dev->lock);
	if (dev->nr_blocks != old)
		scsi_ua_raise_all(dev, NULL, 0x2a, 0x09); /* CAPACITY DATA HAS CHANGED */
	return 0;
}

bool scsi_dev_set_wce(struct scsi_dev *dev, bool wce)
{
	bool changed;

	pthread_mutex_lock(&dev->lock);
	changed = dev->mode.wce != wce;
	if (changed) /* sbc_write_durable() reads it without the lock */
		__atomic_store_n(&dev->mode.wce, wce, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&dev->lock);
	if (changed)
		scsi_ua_raise_all(dev, NULL, 0x2a, 0x01); /* MODE PARAMETERS CHANGED */
	return changed;
}
