/* vdisk_rbd: a logical unit in a Ceph RBD image, through librbd's asynchronous API.
 *
 * Every verb is one librbd aio call (two for FUA: the write, then a flush): READ/WRITE are
 * rbd_aio_readv/writev on the caller's iovecs, FLUSH rbd_aio_flush, UNMAP rbd_aio_discard,
 * WRITE SAME rbd_aio_writesame (rbd_aio_write_zeroes for a zero block), COMPARE AND WRITE
 * rbd_aio_compare_and_write, which the OSD executes as one compare-extent + write operation,
 * so it is atomic across every gateway serving the image, not only in this process.
 *
 * librbd calls its completion callbacks on its own thread (one per client: see
 * bs_rbd_client_conf), which must never block.  A command whose last step ended completes
 * there: io->cb only hands the status to the core, which posts it to the connection's worker.
 * A step that needs another librbd call (the flush after a FUA write) is queued instead, with
 * an eventfd rung; one reaper thread per store starts it (and re-reads the size after a
 * resize).  No thread per command, and no thread switch of ours between librbd and the
 * worker.
 *
 * librbd's cache is switched off (rbd_cache=false) whatever ceph.conf says: a write is in the
 * cluster when it completes, the LU reports WCE 0, and a gateway that dies loses no
 * acknowledged write (with the cache on, a write is acknowledged from the gateway's memory,
 * and with several gateways a cache in each would also serve stale reads).
 *
 * Errors: a cluster that does not answer within rados_osd_op_timeout (ETIMEDOUT) is
 * BS_ETIMEDOUT (retryable), a client blocklisted by another gateway (ESHUTDOWN, or EROFS
 * after its exclusive lock was taken away) BS_EFENCED; nothing fails silently.  A resize of
 * the image in the cluster reaches the core through bs->size_changed (an update watch). */
#include "scsi/backstore/backstore.h"
#include "scsi/backstore/bs_rbd_io.h"

bool bs_rbd_step_continues(enum bs_op op, bool io_step, bool durable, ssize_t ret)
{
	return ret >= 0 && io_step && durable &&
	       (op == BS_WRITE || op == BS_WRITE_SAME || op == BS_COMPARE_WRITE);
}

static const char *const rbd_attrs[] = {"pool", "image", "ceph_conf", "ceph_user", "ceph_keyring",
					"size", "size_mb", "blocksize", "read_only",
					"thin_provisioned", "alua_follow_lock",
					"alua_nonowner_state", "alua_lock_grace",
					"alua_explicit", NULL};

#ifndef UTGT_HAVE_RBD

const bool bs_rbd_available = false;

#include <stdio.h>

static int rbd_absent_open(struct backstore *bs, char *err, size_t errlen)
{
	snprintf(err, errlen,
		 "%s: this utgtd was built without librbd, so vdisk_rbd is not available "
		 "(install librbd-dev and librados-dev, then rebuild)",
		 bs->name);
	return -1;
}

const struct backstore_ops bs_rbd_ops = {
    .name = "vdisk_rbd",
    .attrs = rbd_attrs,
    .open = rbd_absent_open,
};

#else

#include <errno.h>
#include <pthread.h>
#include <rados/librados.h>
#include <rbd/librbd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "common/ut_log.h"
#include "scsi/backstore/bs_aio.h"
#include "scsi/backstore/bs_rbd_extent.h"
#include "scsi/backstore/bs_rbd_pr.h"
#include "scsi/backstore/bs_rbd_gw.h"
#include "scsi/backstore/bs_util.h"

const bool bs_rbd_available = true;

/* Seconds before an OSD or monitor operation fails with ETIMEDOUT instead of waiting forever
 * (unless ceph.conf sets rados_osd_op_timeout / rados_mon_op_timeout): above
 * osd_heartbeat_grace (20 s) + osd_heartbeat_interval (6 s), so a dead OSD is marked down and
 * its PGs move before our I/O gives up, as tcmu-runner's rbd handler does. */
#define RBD_OP_TIMEOUT "30"
#define RBD_INLINE_IOV 8
#define RBD_CAW_MAX    512u
/* GET LBA STATUS looks at most this far per question: one object map read with fast-diff,
 * but one OSD operation per object without it.  A longer run is the next descriptor. */
#define RBD_LBA_WINDOW (1ull << 30)

struct rbd_store;

enum rbd_step {
	STEP_IO,    /* the verb itself */
	STEP_FLUSH, /* the flush that makes a FUA write durable */
};

struct rbd_req {
	struct rbd_store *s;
	struct bs_io *io;
	rbd_completion_t c;
	enum rbd_step step;
	ssize_t ret;
	uint64_t mismatch; /* compare_and_write: where the first difference is */
	char *buf;	   /* a flat copy: COMPARE AND WRITE's two halves, WRITE SAME's block */
	struct iovec *iov; /* io->iov cut to io->len */
	struct iovec iov_inline[RBD_INLINE_IOV];
	struct rbd_req *next;
};

/* One client's view of the image: replaced whole when a fenced gateway reconnects. */
struct rbd_conn {
	rados_t cluster;
	rados_ioctx_t ioctx;
	rbd_image_t image;
	uint64_t watch;
	bool watching;
};

struct rbd_store {
	struct backstore *bs;
	/* read-locked around every librbd call on c, write-locked while a reopen swaps it */
	pthread_rwlock_t swap;
	struct rbd_conn c;
	/* the persistent reservation store (bs_rbd_pr.c) on c's client, moved with the I/O
	 * path by a reopen; NULL once the core closed it.  pr_mu: pr, and a reopen moving it */
	pthread_mutex_t pr_mu;
	struct pr_store *pr;

	int efd;
	pthread_t reaper;
	pthread_mutex_t lock; /* the queue below, stopping, inflight */
	pthread_cond_t idle;
	struct rbd_req *head, *tail;
	unsigned inflight;
	bool stopping;
	atomic_bool size_check; /* the update watch fired: re-read the image size */
	struct rbd_gw *gw;	/* alua_follow_lock: one of several gateways (bs_rbd_gw.c) */
	struct rbd_gw *mon;	/* otherwise: the lock owner and cluster health, for utgtadm */
};

static void rbd_ring(struct rbd_store *s)
{
	uint64_t one = 1;

	while (write(s->efd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

static void rbd_step_done(struct rbd_req *r, ssize_t ret);

/* librbd's callback thread.  A step after which the command is over (every READ and WRITE
 * without FUA, and every error) ends right here: the core's completion only posts the status
 * to the connection's worker, so the reaper's wakeup would be one more thread switch per
 * command for nothing (measured in docs/rbd.md).  A step that needs another librbd call (the
 * flush after a FUA write) goes to the reaper, so this thread never waits on librbd. */
static void rbd_aio_done(rbd_completion_t c, void *arg)
{
	struct rbd_req *r = arg;
	struct rbd_store *s = r->s;
	const struct bs_io *io = r->io;
	bool was_empty;

	r->ret = rbd_aio_get_return_value(c);
	if (!bs_rbd_step_continues(io->op, r->step == STEP_IO, io->fua && !s->bs->nv_cache,
				   r->ret)) {
		rbd_aio_release(c);
		rbd_step_done(r, r->ret);
		return;
	}
	pthread_mutex_lock(&s->lock);
	was_empty = !s->head;
	r->next = NULL;
	if (s->tail)
		s->tail->next = r;
	else
		s->head = r;
	s->tail = r;
	pthread_mutex_unlock(&s->lock);
	if (was_empty)
		rbd_ring(s);
}

/* librbd's watch thread: the image header changed (a resize among other things). */
static void rbd_header_changed(void *arg)
{
	struct rbd_store *s = arg;

	atomic_store(&s->size_check, true);
	rbd_ring(s);
}

static enum bs_status rbd_status(const struct rbd_store *s, ssize_t ret, enum bs_op op)
{
	switch (-ret) {
	case ETIMEDOUT:
		return BS_ETIMEDOUT;
	case ESHUTDOWN: /* librbd's EBLOCKLISTED: another gateway fenced this one */
		return BS_EFENCED;
	case EROFS: /* another client holds the exclusive lock of a writable image */
		if (s->bs->read_only)
			return BS_EROFS;
		/* one of several gateways: the owner changed under this write (retried, and
		 * the initiator moves to the owner); alone, the lock was taken from us */
		return s->gw ? BS_ETRANSITION : BS_EFENCED;
	case EILSEQ:
		return op == BS_COMPARE_WRITE ? BS_MISCOMPARE : BS_EIO;
	default:
		return bs_errno_status((int)-ret, op);
	}
}

static void rbd_req_free(struct rbd_req *r)
{
	if (r->iov != r->iov_inline)
		free(r->iov);
	free(r->buf);
	free(r);
}

/* The caller's iovecs cut to io->len: librbd moves every byte an iovec array describes. */
static int rbd_req_iov(struct rbd_req *r, const struct iovec *src, int cnt, uint64_t len)
{
	int n = 0;

	r->iov = cnt <= RBD_INLINE_IOV ? r->iov_inline : malloc(sizeof(*r->iov) * (size_t)cnt);
	if (!r->iov)
		return -ENOMEM;
	for (int i = 0; i < cnt && len; i++) {
		size_t l = src[i].iov_len < len ? src[i].iov_len : (size_t)len;

		if (!l)
			continue;
		r->iov[n].iov_base = src[i].iov_base;
		r->iov[n++].iov_len = l;
		len -= l;
	}
	return n;
}

static bool all_zero(const char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && !memcmp(p, p + 1, n - 1));
}

/* Start r's current step.  0, or a negative errno when librbd refused it outright. */
static int rbd_issue(struct rbd_req *r)
{
	struct rbd_store *s = r->s;
	struct bs_io *io = r->io;
	uint32_t bsz = s->bs->block_size;
	rbd_image_t image;
	int n, ret;

	ret = rbd_aio_create_completion(r, rbd_aio_done, &r->c);
	if (ret < 0)
		return ret;
	pthread_rwlock_rdlock(&s->swap);
	image = s->c.image;
	if (r->step == STEP_FLUSH) {
		ret = rbd_aio_flush(image, r->c);
		goto out;
	}
	switch (io->op) {
	case BS_READ:
	case BS_WRITE:
		n = rbd_req_iov(r, io->iov, io->iovcnt, io->len);
		if (n < 0) {
			ret = n;
			break;
		}
		ret = io->op == BS_READ ? rbd_aio_readv(image, r->iov, n, io->off, r->c)
					: rbd_aio_writev(image, r->iov, n, io->off, r->c);
		break;
	case BS_FLUSH:
		ret = rbd_aio_flush(image, r->c);
		break;
	case BS_UNMAP:
		ret = rbd_aio_discard(image, io->off, io->len, r->c);
		break;
	case BS_WRITE_SAME:
		r->buf = malloc(bsz);
		if (!r->buf) {
			ret = -ENOMEM;
			break;
		}
		bs_write_same_block(s->bs, io, r->buf);
		/* a zero block: deallocate what whole objects it covers, zero the rest */
		ret = all_zero(r->buf, bsz)
			  ? rbd_aio_write_zeroes(image, io->off, io->len, r->c, 0, 0)
			  : rbd_aio_writesame(image, io->off, io->len, r->buf, bsz, r->c, 0);
		break;
	case BS_COMPARE_WRITE:
		r->buf = malloc(2 * io->len);
		if (!r->buf) {
			ret = -ENOMEM;
			break;
		}
		bs_iov_to_buf(r->buf, io->iov, io->iovcnt, 0, 2 * io->len);
		ret = (int)rbd_aio_compare_and_write(image, io->off, io->len, r->buf,
						     r->buf + io->len, r->c, &r->mismatch, 0);
		break;
	default:
		ret = -EOPNOTSUPP;
		break;
	}
out:
	pthread_rwlock_unlock(&s->swap);
	if (ret < 0)
		rbd_aio_release(r->c);
	return ret;
}

static void rbd_finish(struct rbd_req *r, enum bs_status st)
{
	struct rbd_store *s = r->s;
	struct bs_io *io = r->io;

	/* librbd 16 gives the offset in the compared buffer (measured: byte 100 of a block at
	 * image offset 5120 came back as 100) */
	if (st == BS_MISCOMPARE)
		io->miscompare_at = r->mismatch < io->len ? r->mismatch : 0;
	rbd_req_free(r);
	io->cb(io, st);
	pthread_mutex_lock(&s->lock);
	if (--s->inflight == 0)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
}

/* A step of r ended with ret: the next step, or the end of the io. */
static void rbd_step_done(struct rbd_req *r, ssize_t ret)
{
	struct bs_io *io = r->io;
	enum bs_status st;

	if (ret < 0) {
		st = rbd_status(r->s, ret, io->op);
		if (st != BS_MISCOMPARE)
			UT_LOG_RL(LOG_ERR, "%s: %s at %llu+%llu failed: %s", r->s->bs->name,
				  r->step == STEP_FLUSH ? "flush" : "I/O",
				  (unsigned long long)io->off, (unsigned long long)io->len,
				  strerror((int)-ret));
		rbd_finish(r, st);
		return;
	}
	if (io->op == BS_READ && r->step == STEP_IO && (uint64_t)ret != io->len) {
		UT_LOG_RL(LOG_ERR, "%s: short read at %llu: %zd of %llu bytes", r->s->bs->name,
			  (unsigned long long)io->off, ret, (unsigned long long)io->len);
		rbd_finish(r, BS_EIO);
		return;
	}
	if (bs_rbd_step_continues(io->op, r->step == STEP_IO, io->fua && !r->s->bs->nv_cache,
				  ret)) {
		r->step = STEP_FLUSH;
		ret = rbd_issue(r);
		if (ret < 0)
			rbd_step_done(r, ret);
		return;
	}
	rbd_finish(r, BS_OK);
}

static void rbd_check_size(struct rbd_store *s)
{
	struct backstore *bs = s->bs;
	uint64_t bytes;
	char err[128];
	int ret;

	pthread_rwlock_rdlock(&s->swap);
	ret = rbd_get_size(s->c.image, &bytes);
	pthread_rwlock_unlock(&s->swap);

	if (ret < 0) {
		UT_LOG_RL(LOG_WARNING, "%s: cannot read the image size: %s", bs->name,
			  strerror(-ret));
		return;
	}
	bytes -= bytes % bs->block_size;
	if (bytes == __atomic_load_n(&bs->size, __ATOMIC_RELAXED))
		return;
	if (bs_set_size(bs, bytes, err, sizeof(err)) < 0) {
		ut_log(LOG_WARNING, "%s: image %s/%s resized below one block; keeping the old size",
		       bs->name, bs->ceph.pool, bs->ceph.image);
		return;
	}
	ut_log(LOG_NOTICE, "%s: image %s/%s is now %llu bytes", bs->name, bs->ceph.pool,
	       bs->ceph.image, (unsigned long long)bytes);
	if (bs->size_changed)
		bs->size_changed(bs);
}

static void *rbd_reaper(void *arg)
{
	struct rbd_store *s = arg;

	for (;;) {
		struct rbd_req *list;
		uint64_t v;
		bool stop;

		if (read(s->efd, &v, sizeof(v)) < 0 && errno != EINTR && errno != EAGAIN)
			break;
		if (atomic_exchange(&s->size_check, false))
			rbd_check_size(s);
		pthread_mutex_lock(&s->lock);
		list = s->head;
		s->head = s->tail = NULL;
		stop = s->stopping && !s->inflight;
		pthread_mutex_unlock(&s->lock);
		while (list) {
			struct rbd_req *r = list;
			ssize_t ret = r->ret;

			list = r->next;
			rbd_aio_release(r->c);
			rbd_step_done(r, ret);
		}
		if (stop)
			break;
	}
	return NULL;
}

static void rbd_submit(struct backstore *bs, struct bs_io *io)
{
	struct rbd_store *s = bs->priv;
	enum bs_status st = bs_check_io(bs, io);
	struct rbd_req *r;
	int ret;

	if (st == BS_OK && io->op == BS_UNMAP && !bs->can_unmap)
		st = BS_ENOTSUP;
	/* several gateways: only the lock owner writes (a write handed to librbd here would
	 * ask the owner for the lock); the others say "transitioning", and the initiator
	 * retries and moves to the owner */
	if (st == BS_OK && s->gw && io->op != BS_READ && io->op != BS_FLUSH) {
		enum bs_lock_role role = bs_rbd_gw_role(s->gw);

		if (role != BS_LOCK_OWNER)
			st = role == BS_LOCK_FENCED ? BS_EFENCED : BS_ETRANSITION;
	}
	if (st != BS_OK) {
		io->cb(io, st);
		return;
	}
	if ((io->op == BS_FLUSH && bs->nv_cache) ||
	    (!io->len && io->op != BS_FLUSH)) {
		io->cb(io, BS_OK);
		return;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		io->cb(io, BS_ENOMEM);
		return;
	}
	r->s = s;
	r->io = io;
	pthread_mutex_lock(&s->lock);
	s->inflight++;
	pthread_mutex_unlock(&s->lock);
	ret = rbd_issue(r);
	if (ret < 0)
		rbd_step_done(r, ret);
}

/* opt becomes ours unless ceph.conf chose a value other than librados's own default dflt. */
static int rbd_conf_default(rados_t cl, const char *opt, double dflt, const char *ours)
{
	char v[32] = "";

	if (rados_conf_get(cl, opt, v, sizeof(v)) == 0 && strtod(v, NULL) != dflt)
		return 0;
	return rados_conf_set(cl, opt, ours);
}

int bs_rbd_client_conf(rados_t cl)
{
	int ret;

	/* Write-through (see the top of this file), and discards that zero partial objects too,
	 * so an unmapped block reads back as zeros (LBPRZ): whatever ceph.conf says. */
	if ((ret = rados_conf_set(cl, "rbd_cache", "false")) < 0 ||
	    (ret = rados_conf_set(cl, "rbd_skip_partial_discard", "false")) < 0 ||
	    (ret = rados_conf_set(cl, "client_mount_timeout", RBD_OP_TIMEOUT)) < 0)
		return ret;
	/* Bounded waits: librados's 0 waits forever. */
	if ((ret = rbd_conf_default(cl, "rados_osd_op_timeout", 0, RBD_OP_TIMEOUT)) < 0 ||
	    (ret = rbd_conf_default(cl, "rados_mon_op_timeout", 0, RBD_OP_TIMEOUT)) < 0)
		return ret;
	/* librbd copies every write (rbd_disable_zero_copy_writes stays on): without the copy
	 * a write completes only once the messenger lets go of the task's buffer, and a
	 * blocklisted client's messenger keeps it, so a fenced gateway's writes never ended
	 * (measured in docs/rbd.md) instead of failing over with 04/0C. */
	if ((ret = rados_conf_set(cl, "rbd_disable_zero_copy_writes", "true")) < 0 &&
	    ret != -ENOENT)
		return ret;
	/* One completion thread per client (each LU has its own client) unless ceph.conf
	 * chose a number: librados's two pass each completion from one to the other, a thread
	 * switch per command (measured in docs/rbd.md). */
	return rbd_conf_default(cl, "librados_thread_count", 2, "1");
}

/* Connect as client.<ceph_user> with ceph_conf (or librados's own search) and ceph_keyring,
 * and open the image; on failure k holds what to rbd_disconnect. */
static int rbd_connect(struct backstore *bs, struct rbd_conn *k, char *err, size_t errlen)
{
	const struct bs_ceph_params *c = &bs->ceph;
	const char *user = c->user[0] ? c->user : "admin";
	int ret = rados_create(&k->cluster, user);

	if (ret < 0) {
		snprintf(err, errlen, "%s: rados_create(client.%s): %s", bs->name, user,
			 strerror(-ret));
		return -1;
	}
	ret = rados_conf_read_file(k->cluster, c->conf[0] ? c->conf : NULL);
	if (ret < 0) {
		snprintf(err, errlen, "%s: cannot read the Ceph configuration %s: %s", bs->name,
			 c->conf[0] ? c->conf : "(CEPH_CONF, /etc/ceph/ceph.conf)", strerror(-ret));
		return -1;
	}
	if ((ret = bs_rbd_client_conf(k->cluster)) < 0 ||
	    (c->keyring[0] && (ret = rados_conf_set(k->cluster, "keyring", c->keyring)) < 0)) {
		snprintf(err, errlen, "%s: cannot set a Ceph option: %s", bs->name, strerror(-ret));
		return -1;
	}
	ret = rados_connect(k->cluster);
	if (ret < 0) {
		snprintf(err, errlen, "%s: cannot connect to the Ceph cluster as client.%s: %s",
			 bs->name, user, strerror(-ret));
		return -1;
	}
	ret = rados_ioctx_create(k->cluster, c->pool, &k->ioctx);
	if (ret < 0) {
		snprintf(err, errlen, "%s: pool %s: %s", bs->name, c->pool, strerror(-ret));
		return -1;
	}
	ret = bs->read_only ? rbd_open_read_only(k->ioctx, c->image, &k->image, NULL)
			    : rbd_open(k->ioctx, c->image, &k->image, NULL);
	if (ret < 0) {
		snprintf(err, errlen, "%s: image %s/%s: %s", bs->name, c->pool, c->image,
			 strerror(-ret));
		return -1;
	}
	return 0;
}

static void rbd_disconnect(struct rbd_conn *k)
{
	if (k->watching)
		rbd_update_unwatch(k->image, k->watch);
	if (k->image)
		rbd_close(k->image);
	if (k->ioctx)
		rados_ioctx_destroy(k->ioctx);
	if (k->cluster)
		rados_shutdown(k->cluster);
	memset(k, 0, sizeof(*k));
}

static void rbd_teardown(struct rbd_store *s)
{
	bs_rbd_gw_stop(s->gw);
	bs_rbd_gw_stop(s->mon);
	rbd_disconnect(&s->c);
	if (s->efd >= 0)
		close(s->efd);
	pthread_cond_destroy(&s->idle);
	pthread_mutex_destroy(&s->lock);
	pthread_rwlock_destroy(&s->swap);
	pthread_mutex_destroy(&s->pr_mu);
	free(s);
}

/* Seconds a reopen waits for the requests issued on the fenced client to end (they fail
 * fast once the client has the osdmap that blocklists it) before it closes that client. */
#define RBD_REOPEN_DRAIN_S 60

/* A fenced gateway's way back (bs_rbd_gw.c calls it on its lock thread), for the I/O path and
 * the reservation store alike: a new client, the image opened again, the reservation store
 * moved to it (state reloaded, watch made again), the I/O path moved to it, the old client
 * closed once idle.  Until this returns the gateway is fenced and serves nothing stale. */
static int rbd_reopen(struct backstore *bs, rados_t *cluster, rados_ioctx_t *ioctx,
		      rbd_image_t *image)
{
	struct rbd_store *s = bs->priv;
	struct rbd_conn fresh = {0}, old;
	struct timespec until;
	char err[256];
	int ret;

	if (!s)
		return -EAGAIN;
	if (rbd_connect(bs, &fresh, err, sizeof(err)) < 0) {
		UT_LOG_RL(LOG_WARNING, "%s", err);
		rbd_disconnect(&fresh);
		return -EIO;
	}
	ret = rbd_update_watch(fresh.image, &fresh.watch, rbd_header_changed, s);
	fresh.watching = ret == 0;
	pthread_mutex_lock(&s->pr_mu);
	ret = s->pr ? bs_rbd_pr_reconnect(s->pr, fresh.cluster) : 0;
	pthread_mutex_unlock(&s->pr_mu);
	if (ret < 0) {
		UT_LOG_RL(LOG_WARNING, "%s: reconnected, but the reservation store cannot move: %s",
			  bs->name, strerror(-ret));
		rbd_disconnect(&fresh);
		return ret;
	}
	pthread_rwlock_wrlock(&s->swap);
	old = s->c;
	s->c = fresh;
	pthread_rwlock_unlock(&s->swap);
	/* nothing new reaches the old client; what it still has in flight must end first */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += RBD_REOPEN_DRAIN_S;
	pthread_mutex_lock(&s->lock);
	ret = 0;
	while (s->inflight && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&s->idle, &s->lock, &until);
	pthread_mutex_unlock(&s->lock);
	if (ret == ETIMEDOUT)
		ut_log(LOG_WARNING,
		       "%s: the fenced client still has requests after %d s; it stays open", bs->name,
		       RBD_REOPEN_DRAIN_S);
	else
		rbd_disconnect(&old);
	*cluster = fresh.cluster;
	*ioctx = fresh.ioctx;
	*image = fresh.image;
	return 0;
}

static int rbd_open_store(struct backstore *bs, char *err, size_t errlen)
{
	struct rbd_store *s;
	uint64_t bytes;
	int ret;

	if (!bs->ceph.pool[0] || !bs->ceph.image[0]) {
		snprintf(err, errlen, "%s: vdisk_rbd needs pool and image", bs->name);
		return -1;
	}
	if (!bs_open_block_size(bs, err, errlen))
		return -1;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "%s: out of memory", bs->name);
		return -1;
	}
	s->bs = bs;
	s->efd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	pthread_rwlock_init(&s->swap, NULL);
	pthread_mutex_init(&s->pr_mu, NULL);
	if (rbd_connect(bs, &s->c, err, errlen) < 0)
		goto fail;
	ret = rbd_get_size(s->c.image, &bytes);
	if (ret < 0) {
		snprintf(err, errlen, "%s: image %s/%s: cannot read its size: %s", bs->name,
			 bs->ceph.pool, bs->ceph.image, strerror(-ret));
		goto fail;
	}
	/* The LU is the image: a configured size only checks that it is the one meant. */
	if (bs->size && bs->size != bytes) {
		snprintf(err, errlen,
			 "%s: image %s/%s holds %llu bytes but size/size_mb says %llu (the LU is "
			 "the image's size: drop size, or correct it)",
			 bs->name, bs->ceph.pool, bs->ceph.image, (unsigned long long)bytes,
			 (unsigned long long)bs->size);
		goto fail;
	}
	if (bs_set_size(bs, bytes, err, errlen) < 0)
		goto fail;
	s->efd = eventfd(0, EFD_CLOEXEC);
	if (s->efd < 0) {
		snprintf(err, errlen, "%s: eventfd: %s", bs->name, strerror(errno));
		goto fail;
	}
	ret = rbd_update_watch(s->c.image, &s->c.watch, rbd_header_changed, s);
	if (ret < 0)
		ut_log(LOG_WARNING, "%s: no update watch on %s/%s (%s): a resize in the cluster "
				    "is not noticed",
		       bs->name, bs->ceph.pool, bs->ceph.image, strerror(-ret));
	s->c.watching = ret == 0;
	if (bs->ceph.alua_follow_lock && !bs->read_only) {
		s->gw = bs_rbd_gw_start(bs, s->c.cluster, s->c.ioctx, s->c.image, true, rbd_reopen,
					err, errlen);
		if (!s->gw)
			goto fail;
	} else {
		char why[256] = "";

		/* only for utgtadm: a device without it still serves */
		s->mon = bs_rbd_gw_start(bs, s->c.cluster, s->c.ioctx, s->c.image, false, NULL,
					 why, sizeof(why));
		if (!s->mon)
			ut_log(LOG_WARNING, "%s: no lock owner or cluster health for utgtadm: %s",
			       bs->name, why);
	}
	if (pthread_create(&s->reaper, NULL, rbd_reaper, s) != 0) {
		snprintf(err, errlen, "%s: cannot start the completion thread", bs->name);
		goto fail;
	}
	bs->can_unmap = bs->thin_provisioned && !bs->read_only;
	bs->unmap_zeroes = true; /* rbd_skip_partial_discard is off */
	/* librbd 16 compares and writes within one 512-byte sector at most (EINVAL beyond):
	 * COMPARE AND WRITE is offered one 512-byte block, the VMware ATS shape.  With
	 * 4096-byte blocks the core's range lock does it, atomic in this gateway only. */
	bs->compare_write_max = bs->read_only ? 0 : RBD_CAW_MAX;
	if (bs->block_size > RBD_CAW_MAX && !bs->read_only)
		ut_log(LOG_WARNING,
		       "%s: blocksize %u: COMPARE AND WRITE is atomic in this gateway only "
		       "(librbd compares at most %u bytes at once)",
		       bs->name, bs->block_size, RBD_CAW_MAX);
	bs->priv = s;
	return 0;
fail:
	rbd_teardown(s);
	return -1;
}

static void rbd_close_store(struct backstore *bs)
{
	struct rbd_store *s = bs->priv;

	if (!s)
		return;
	/* no lock calls from here on; rbd_close releases the lock, and a peer takes it at
	 * its next tick without waiting for a grace period */
	bs_rbd_gw_stop(s->gw);
	s->gw = NULL;
	bs_rbd_gw_stop(s->mon);
	s->mon = NULL;
	if (s->c.watching) {
		rbd_update_unwatch(s->c.image, s->c.watch);
		s->c.watching = false;
	}
	pthread_mutex_lock(&s->lock);
	while (s->inflight)
		pthread_cond_wait(&s->idle, &s->lock);
	s->stopping = true;
	pthread_mutex_unlock(&s->lock);
	rbd_ring(s);
	pthread_join(s->reaper, NULL);
	rbd_teardown(s);
	bs->priv = NULL;
}

/* The LU follows the image; growing or shrinking it is `rbd resize`'s job, not a gateway's
 * (another gateway may be serving it).  0 re-reads the image's size. */
static int rbd_resize_store(struct backstore *bs, uint64_t bytes, char *err, size_t errlen)
{
	struct rbd_store *s = bs->priv;
	uint64_t now;
	int ret;

	pthread_rwlock_rdlock(&s->swap);
	ret = rbd_get_size(s->c.image, &now);
	pthread_rwlock_unlock(&s->swap);

	if (ret < 0) {
		snprintf(err, errlen, "%s: cannot read the image size: %s", bs->name, strerror(-ret));
		return -1;
	}
	if (bytes && bytes != now) {
		snprintf(err, errlen,
			 "%s: the LU is the size of image %s/%s (%llu bytes): resize the image "
			 "with `rbd resize`, the LU follows",
			 bs->name, bs->ceph.pool, bs->ceph.image, (unsigned long long)now);
		return -1;
	}
	return bs_set_size(bs, now, err, errlen);
}

/* rbd_diff_iterate2's callback: stop (-ECANCELED) once the run is decided. */
static int rbd_extent_seen(uint64_t off, size_t len, int exists, void *arg)
{
	return bs_rbd_run_extent(arg, off, len, exists != 0) ? -ECANCELED : 0;
}

/* GET LBA STATUS: an RBD image allocates whole objects (4 MiB by default), so a block is
 * mapped when its object exists (written, or in the parent of a clone) and deallocated when
 * it was never written or a discard removed the whole object.  A discard of part of an
 * object zeroes it and leaves the object: still mapped, and reads return zeros (LBPRZ).
 * Whole-object granularity lets the object map answer (fast-diff) instead of one OSD
 * operation per object. */
static enum bs_status rbd_lba_status(struct backstore *bs, uint64_t off, uint64_t len,
				     bool *mapped, uint64_t *run)
{
	struct rbd_store *s = bs->priv;
	struct bs_rbd_run r;
	int ret;

	if (len > RBD_LBA_WINDOW)
		len = RBD_LBA_WINDOW;
	bs_rbd_run_init(&r, off, len, bs->block_size);
	pthread_rwlock_rdlock(&s->swap);
	ret = rbd_diff_iterate2(s->c.image, NULL, off, len, 1, 1, rbd_extent_seen, &r);
	pthread_rwlock_unlock(&s->swap);
	if (ret < 0 && ret != -ECANCELED) {
		UT_LOG_RL(LOG_ERR, "%s: cannot read the allocation of %llu+%llu: %s", bs->name,
			  (unsigned long long)off, (unsigned long long)len, strerror(-ret));
		return rbd_status(s, ret, BS_READ);
	}
	bs_rbd_run_result(&r, mapped, run);
	return BS_OK;
}

static void rbd_lock_status(struct backstore *bs, struct bs_lock_status *out)
{
	struct rbd_store *s = bs->priv;

	if (s && (s->gw || s->mon))
		bs_rbd_gw_status(s->gw ? s->gw : s->mon, out);
}

static int rbd_lock_takeover(struct backstore *bs)
{
	struct rbd_store *s = bs->priv;

	if (!s || !s->gw)
		return -1;
	bs_rbd_gw_takeover(s->gw);
	return 0;
}

/* The core closes the reservation store: a reopen must not move it any more. */
static void rbd_pr_closing(void *arg)
{
	struct rbd_store *s = arg;

	pthread_mutex_lock(&s->pr_mu);
	s->pr = NULL;
	pthread_mutex_unlock(&s->pr_mu);
}

/* Persistent reservations live beside the image, shared with every other gateway.  The
 * store uses the I/O path's client, and a reopen after a fence moves both (rbd_reopen). */
static struct pr_store *rbd_pr_store_open(struct backstore *bs, char *err, size_t errlen)
{
	struct rbd_store *s = bs->priv;
	struct pr_store *ps = NULL;
	char id[64], why[256] = "";
	int ret;

	/* under pr_mu: a reopen cannot replace the client between the two */
	pthread_mutex_lock(&s->pr_mu);
	pthread_rwlock_rdlock(&s->swap);
	ret = rbd_get_id(s->c.image, id, sizeof(id));
	if (ret == 0)
		ps = bs_rbd_pr_open(s->c.cluster, bs->ceph.pool, id, rbd_pr_closing, s, why,
				    sizeof(why));
	pthread_rwlock_unlock(&s->swap);
	s->pr = ps;
	pthread_mutex_unlock(&s->pr_mu);
	if (ret < 0)
		snprintf(err, errlen, "%s: image %s/%s has no id for its reservation state: %s",
			 bs->name, bs->ceph.pool, bs->ceph.image, strerror(-ret));
	else if (!ps)
		snprintf(err, errlen, "%s: persistent reservation state: %s", bs->name, why);
	return ps;
}

const struct backstore_ops bs_rbd_ops = {
    .name = "vdisk_rbd",
    .attrs = rbd_attrs,
    .pr_store_open = rbd_pr_store_open,
    .open = rbd_open_store,
    .lock_status = rbd_lock_status,
    .lock_takeover = rbd_lock_takeover,
    .close = rbd_close_store,
    .submit = rbd_submit,
    .lba_status = rbd_lba_status,
    .resize = rbd_resize_store,
};

#endif
