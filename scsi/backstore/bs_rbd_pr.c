/* vdisk_rbd's persistent reservation store (scsi/pr_store.h): the state of an LU served by
 * several gateways lives in the cluster, one RADOS object per image in the image's pool,
 * "utgt.pr.<image id>", holding the core's state text.
 *
 * Version.  The object's own version (the OSD bumps it on every write) is the store's:
 * load reads the object and takes the version from the operation's completion, store is one
 * write operation guarded by rados_write_op_assert_version, so a gateway that computed its
 * change from an older state gets -ERANGE and redoes it.
 *
 * Watch/notify.  Every gateway watches the object (rados_watch2).  A change is published with
 * rados_notify2, which returns once every watcher acknowledged or the timeout passed.  A
 * watcher acknowledges only after the core has the new state in force (a thread of ours
 * calls the core and then rados_notify_ack; librados's callback thread only queues), so when
 * publish returns the change is enforced everywhere.  A gateway that did not acknowledge in
 * time is fenced: its client is blocklisted (rados_blocklist_add) from the address it
 * recorded in an xattr of the object ("utgt.gw.<client id>"), so it cannot write to the image
 * under the old state; it answers NOT READY 04/0C from then on (bs_rbd.c) and its
 * initiators fail over.  A watch that breaks (the OSD restarted, a network cut) is
 * re-established and followed by a reload, as a change could have been missed.
 *
 * Reconnect.  A gateway fenced and reconnected with a new client (bs_rbd.c's reopen, the one
 * way back for the I/O path and this store alike) moves the store to that client before it
 * serves again: a new I/O context, its new address recorded, the watch made again, and the
 * state reloaded, since changes made while it was cut off never reached it.  The connection
 * (cluster, io, self) is read-locked by every use and write-locked only to swap it.
 *
 * Who else is up.  When the watch starts, a "hello" notify goes out: no acknowledgement from
 * another client and no timeout means no other gateway has the object open, which the core
 * takes as the LU powering on (registrations without APTPL are dropped).  A gateway killed
 * without closing leaves its watch until the OSD times it out (osd_client_watch_timeout,
 * 30 s): until then it counts as up (its hello times out), which errs on keeping the state. */
#ifdef UTGT_HAVE_RBD

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <rados/librados.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ut_log.h"
#include "scsi/backstore/bs_rbd_pr.h"
#include "scsi/pr_store.h"

/* How long a change waits for the other gateways' acknowledgements before fencing the
 * silent ones; also how long the hello at start waits. */
#define RPR_NOTIFY_MS 5000
/* Payload kinds: the first byte of every notify. */
#define RPR_CHANGE 'C'
#define RPR_HELLO  'H'

struct rpr_note {
	uint64_t id, cookie;
	char *data;
	size_t len;
	struct rpr_note *next;
};

struct rpr {
	struct pr_store s;
	/* cluster, io, gw_xattr, self: read-locked while used, write-locked by a reconnect */
	pthread_rwlock_t conn;
	rados_t cluster;
	rados_ioctx_t io;
	char pool[128];
	char oid[96];
	char gw_xattr[48]; /* "utgt.gw.<our client id>": our address, for fencing us */
	uint64_t self;	   /* our client id (the notifier id others see) */
	bs_rbd_pr_closing_fn closing;
	void *closing_arg;

	pr_store_changed_fn cb;
	pthread_mutex_t watch_mu; /* cookie, watching */
	uint64_t cookie;
	bool watching;
	pthread_t thread;
	bool thread_up;
	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	struct rpr_note *head, *tail;
	bool stop;
	bool rewatch; /* the watch broke: re-establish it and reload */
};

/* Run a read or write operation and wait: its result, and into *ver the object version it
 * saw or made.  Versions come from the completion, not the ioctx (rados_get_last_version is
 * shared by every operation on an ioctx, notifies included). */
static int rpr_operate(struct rpr *p, rados_read_op_t rop, rados_write_op_t wop, uint64_t *ver)
{
	rados_completion_t c;
	int rc = rados_aio_create_completion2(NULL, NULL, &c);

	if (rc < 0)
		return rc;
	pthread_rwlock_rdlock(&p->conn);
	rc = rop ? rados_aio_read_op_operate(rop, p->io, c, p->oid, 0)
		 : rados_aio_write_op_operate(wop, p->io, c, p->oid, NULL, 0);
	if (rc == 0) {
		rados_aio_wait_for_complete(c);
		rc = rados_aio_get_return_value(c);
		if (rc >= 0)
			*ver = rados_aio_get_version(c);
	}
	pthread_rwlock_unlock(&p->conn);
	rados_aio_release(c);
	return rc < 0 ? rc : 0;
}

static int rpr_load(struct pr_store *st, char **text, uint64_t *ver, char *err, size_t errlen)
{
	struct rpr *p = (struct rpr *)st;
	rados_read_op_t op = rados_create_read_op();
	char *buf = malloc(PR_STORE_TEXT_MAX + 1);
	size_t got = 0;
	int rc, prval = 0;

	*text = NULL;
	*ver = 0;
	if (!op || !buf) {
		rados_release_read_op(op);
		free(buf);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* one byte more than allowed tells a too-long object from one that fits */
	rados_read_op_read(op, 0, PR_STORE_TEXT_MAX + 1, buf, &got, &prval);
	rc = rpr_operate(p, op, NULL, ver);
	rados_release_read_op(op);
	if (rc == 0 && prval < 0)
		rc = prval;
	if (rc == -ENOENT) {
		free(buf);
		return 0;
	}
	if (rc == 0 && got > PR_STORE_TEXT_MAX)
		rc = -EFBIG;
	if (rc < 0) {
		snprintf(err, errlen, "%s", strerror(-rc));
		free(buf);
		return rc;
	}
	if (got == 0) {
		free(buf); /* created by a watch, never written: nothing stored yet */
		return 0;
	}
	buf[got] = '\0';
	if (strlen(buf) != got)
		strcpy(buf, "(binary data)\n"); /* not text: the core's parser reports it */
	*text = buf;
	return 0;
}

static int rpr_store(struct pr_store *st, const char *text, uint64_t *ver)
{
	struct rpr *p = (struct rpr *)st;
	rados_write_op_t op = rados_create_write_op();
	int rc;

	if (!op)
		return -ENOMEM;
	if (*ver == 0)
		rados_write_op_create(op, LIBRADOS_CREATE_EXCLUSIVE, NULL);
	else
		rados_write_op_assert_version(op, *ver);
	rados_write_op_write_full(op, text ? text : "", text ? strlen(text) : 0);
	rc = rpr_operate(p, NULL, op, ver);
	rados_release_write_op(op);
	/* newer (ERANGE), older (EOVERFLOW: the object was removed and re-made), created by
	 * someone else meanwhile (EEXIST): another gateway's change came first */
	if (rc == -ERANGE || rc == -EOVERFLOW || rc == -EEXIST)
		return -ESTALE;
	return rc;
}

/* Blocklist the clients that did not acknowledge a notify, from the addresses they
 * recorded.  0 when every one was fenced.  Caller holds p->conn (read). */
static int rpr_fence(struct rpr *p, const struct notify_timeout_t *to, size_t n)
{
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		char name[48], addr[256];
		int len, r;

		if (to[i].notifier_id == p->self)
			continue;
		snprintf(name, sizeof(name), "utgt.gw.%" PRIu64, to[i].notifier_id);
		len = rados_getxattr(p->io, p->oid, name, addr, sizeof(addr) - 1);
		if (len <= 0) {
			ut_log(LOG_ERR, "%s: gateway client.%" PRIu64 " did not acknowledge a "
					"reservation change and left no address to fence it by",
			       p->s.where, to[i].notifier_id);
			rc = -ETIMEDOUT;
			continue;
		}
		addr[len] = '\0';
		r = rados_blocklist_add(p->cluster, addr, 0);
		ut_log(r == 0 ? LOG_WARNING : LOG_ERR,
		       "%s: gateway client.%" PRIu64 " (%s) did not acknowledge a reservation "
		       "change within %d ms: %s",
		       p->s.where, to[i].notifier_id, addr, RPR_NOTIFY_MS,
		       r == 0 ? "blocklisted" : strerror(-r));
		if (r != 0)
			rc = r;
	}
	return rc;
}

/* Notify every watcher and wait; *others: how many other clients acknowledged; the silent
 * ones are fenced when fence, else make it -ETIMEDOUT. */
static int rpr_notify(struct rpr *p, char kind, const char *payload, size_t len, bool fence,
		      size_t *others)
{
	struct notify_ack_t *acks = NULL;
	struct notify_timeout_t *tos = NULL;
	size_t nacks = 0, ntos = 0, rlen = 0;
	char *msg = malloc(len + 1), *reply = NULL;
	int rc;

	*others = 0;
	if (!msg)
		return -ENOMEM;
	msg[0] = kind;
	if (len)
		memcpy(msg + 1, payload, len);
	pthread_rwlock_rdlock(&p->conn);
	rc = rados_notify2(p->io, p->oid, msg, (int)len + 1, RPR_NOTIFY_MS, &reply, &rlen);
	free(msg);
	if (reply && rados_decode_notify_response(reply, rlen, &acks, &nacks, &tos, &ntos) == 0) {
		for (size_t i = 0; i < nacks; i++)
			*others += acks[i].notifier_id != p->self;
		if (ntos)
			rc = fence ? rpr_fence(p, tos, ntos) : -ETIMEDOUT;
		else if (rc == -ETIMEDOUT)
			rc = 0;
		rados_free_notify_response(acks, nacks, tos);
	}
	pthread_rwlock_unlock(&p->conn);
	if (reply)
		rados_buffer_free(reply);
	return rc;
}

static int rpr_publish(struct pr_store *st, uint64_t ver, const char *payload, size_t len)
{
	struct rpr *p = (struct rpr *)st;
	size_t others;

	(void)ver; /* watchers reload the object, whose version is at least ver */
	return rpr_notify(p, RPR_CHANGE, payload, len, true, &others);
}

/* librados's watch thread: acknowledge our own notifies at once (we have the change in
 * force already), queue the others for our thread, which acknowledges after the core. */
static void rpr_watch_cb(void *arg, uint64_t id, uint64_t cookie, uint64_t notifier, void *data,
			 size_t len)
{
	struct rpr *p = arg;
	struct rpr_note *n;

	pthread_rwlock_rdlock(&p->conn);
	if (notifier == p->self || !len || ((char *)data)[0] == RPR_HELLO) {
		rados_notify_ack(p->io, p->oid, id, cookie, NULL, 0);
		pthread_rwlock_unlock(&p->conn);
		return;
	}
	pthread_rwlock_unlock(&p->conn);
	n = calloc(1, sizeof(*n));
	if (n)
		n->data = malloc(len);
	if (!n || !n->data) {
		/* no memory to queue it: it times out at the sender, which fences us */
		free(n);
		return;
	}
	n->id = id;
	n->cookie = cookie;
	memcpy(n->data, data, len);
	n->len = len;
	pthread_mutex_lock(&p->qlock);
	if (p->tail)
		p->tail->next = n;
	else
		p->head = n;
	p->tail = n;
	pthread_cond_signal(&p->qcond);
	pthread_mutex_unlock(&p->qlock);
}

static void rpr_watch_err(void *arg, uint64_t cookie, int err)
{
	struct rpr *p = arg;

	(void)cookie;
	UT_LOG_RL(LOG_WARNING, "%s: watch lost (%s): re-watching and reloading", p->s.where,
		  strerror(-err));
	pthread_mutex_lock(&p->qlock);
	p->rewatch = true;
	pthread_cond_signal(&p->qcond);
	pthread_mutex_unlock(&p->qlock);
}

static int rpr_rewatch(struct rpr *p)
{
	bool ok;

	pthread_mutex_lock(&p->watch_mu);
	pthread_rwlock_rdlock(&p->conn);
	if (p->watching)
		rados_unwatch2(p->io, p->cookie);
	p->watching = rados_watch2(p->io, p->oid, &p->cookie, rpr_watch_cb, rpr_watch_err, p) == 0;
	ok = p->watching;
	pthread_rwlock_unlock(&p->conn);
	pthread_mutex_unlock(&p->watch_mu);
	return ok ? 0 : -EIO;
}

static void rpr_ack(struct rpr *p, uint64_t id, uint64_t cookie)
{
	pthread_rwlock_rdlock(&p->conn);
	rados_notify_ack(p->io, p->oid, id, cookie, NULL, 0);
	pthread_rwlock_unlock(&p->conn);
}

static void *rpr_thread(void *arg)
{
	struct rpr *p = arg;

	pthread_mutex_lock(&p->qlock);
	for (;;) {
		struct rpr_note *n;

		while (!p->head && !p->rewatch && !p->stop)
			pthread_cond_wait(&p->qcond, &p->qlock);
		if (p->stop)
			break;
		if (p->rewatch) {
			p->rewatch = false;
			pthread_mutex_unlock(&p->qlock);
			if (rpr_rewatch(p) != 0)
				UT_LOG_RL(LOG_ERR, "%s: cannot watch again", p->s.where);
			p->cb(&p->s, NULL, 0); /* a change may have been missed: reload */
			pthread_mutex_lock(&p->qlock);
			continue;
		}
		n = p->head;
		p->head = n->next;
		if (!p->head)
			p->tail = NULL;
		pthread_mutex_unlock(&p->qlock);
		p->cb(&p->s, n->data + 1, n->len - 1);
		rpr_ack(p, n->id, n->cookie);
		free(n->data);
		free(n);
		pthread_mutex_lock(&p->qlock);
	}
	pthread_mutex_unlock(&p->qlock);
	return NULL;
}

/* Create the object if need be (it must exist to be watched) and record this client's
 * address in it, for a gateway that has to fence us; drop the record of a client we had
 * before (old_xattr, or NULL).  Caller holds p->conn. */
static int rpr_announce(struct rpr *p, const char *old_xattr)
{
	rados_write_op_t op = rados_create_write_op();
	char *addrs = NULL;
	int rc;

	if (!op)
		return -ENOMEM;
	rc = rados_getaddrs(p->cluster, &addrs);
	if (rc == 0) {
		rados_write_op_create(op, LIBRADOS_CREATE_IDEMPOTENT, NULL);
		rados_write_op_setxattr(op, p->gw_xattr, addrs, strlen(addrs));
		if (old_xattr)
			rados_write_op_rmxattr(op, old_xattr);
		rc = rados_write_op_operate(op, p->io, p->oid, NULL, 0);
		/* the old record may be gone already (a gateway that fenced us removes none,
		 * but the object may have been recreated) */
		if (rc == -ENODATA && old_xattr) {
			rados_release_write_op(op);
			op = rados_create_write_op();
			if (!op) {
				rados_buffer_free(addrs);
				return -ENOMEM;
			}
			rados_write_op_create(op, LIBRADOS_CREATE_IDEMPOTENT, NULL);
			rados_write_op_setxattr(op, p->gw_xattr, addrs, strlen(addrs));
			rc = rados_write_op_operate(op, p->io, p->oid, NULL, 0);
		}
	}
	rados_release_write_op(op);
	rados_buffer_free(addrs);
	return rc;
}

static int rpr_watch(struct pr_store *st, pr_store_changed_fn cb, char *err, size_t errlen)
{
	struct rpr *p = (struct rpr *)st;
	size_t others = 0;
	int rc;

	p->cb = cb;
	rc = rpr_announce(p, NULL);
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot create it: %s", p->s.where, strerror(-rc));
		return rc;
	}
	rc = rados_watch2(p->io, p->oid, &p->cookie, rpr_watch_cb, rpr_watch_err, p);
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot watch it: %s", p->s.where, strerror(-rc));
		return rc;
	}
	p->watching = true;
	if (pthread_create(&p->thread, NULL, rpr_thread, p) != 0) {
		snprintf(err, errlen, "%s: cannot start its thread", p->s.where);
		return -EAGAIN;
	}
	p->thread_up = true;
	rc = rpr_notify(p, RPR_HELLO, NULL, 0, false, &others);
	p->s.alone = rc == 0 && others == 0;
	ut_log(LOG_INFO, "%s: watching; %zu other gateway(s) answered%s", p->s.where, others,
	       rc == -ETIMEDOUT ? ", some did not (not counted as down)" : "");
	return 0;
}

int bs_rbd_pr_reconnect(struct pr_store *st, rados_t cluster)
{
	struct rpr *p = (struct rpr *)st;
	char old_xattr[sizeof(p->gw_xattr)];
	rados_ioctx_t io, old_io;
	rados_t old_cluster;
	uint64_t old_cookie;
	bool old_watching;
	int rc = rados_ioctx_create(cluster, p->pool, &io);

	if (rc < 0)
		return rc;
	pthread_mutex_lock(&p->watch_mu);
	pthread_rwlock_wrlock(&p->conn);
	old_io = p->io;
	old_cluster = p->cluster;
	old_cookie = p->cookie;
	old_watching = p->watching;
	snprintf(old_xattr, sizeof(old_xattr), "%s", p->gw_xattr);
	p->io = io;
	p->cluster = cluster;
	p->self = rados_get_instance_id(cluster);
	snprintf(p->gw_xattr, sizeof(p->gw_xattr), "utgt.gw.%" PRIu64, p->self);
	p->watching = false;
	pthread_rwlock_unlock(&p->conn);
	/* the fenced client: its unwatch fails at once (blocklisted), and no callback of its
	 * watch may run once its context is gone */
	if (old_watching)
		rados_unwatch2(old_io, old_cookie);
	rados_watch_flush(old_cluster);
	rados_ioctx_destroy(old_io);

	pthread_rwlock_rdlock(&p->conn);
	rc = rpr_announce(p, old_xattr);
	if (rc == 0)
		rc = rados_watch2(p->io, p->oid, &p->cookie, rpr_watch_cb, rpr_watch_err, p);
	p->watching = rc == 0;
	pthread_rwlock_unlock(&p->conn);
	pthread_mutex_unlock(&p->watch_mu);
	if (rc < 0)
		ut_log(LOG_ERR, "%s: reconnected, but cannot record this client or watch: %s",
		       p->s.where, strerror(-rc));
	/* what changed while this gateway was cut off never reached it */
	p->cb(&p->s, NULL, 0);
	return 0;
}

static void rpr_close(struct pr_store *st)
{
	struct rpr *p = (struct rpr *)st;

	if (p->closing) /* no reconnect from here on */
		p->closing(p->closing_arg);
	if (p->watching)
		rados_unwatch2(p->io, p->cookie);
	p->watching = false;
	if (p->thread_up) {
		pthread_mutex_lock(&p->qlock);
		p->stop = true;
		pthread_cond_signal(&p->qcond);
		pthread_mutex_unlock(&p->qlock);
		pthread_join(p->thread, NULL);
		/* after the join: rewatch cannot start a new watch behind our back */
		if (p->watching)
			rados_unwatch2(p->io, p->cookie);
	}
	if (p->io)
		rados_watch_flush(p->cluster);
	/* changes still queued: the LU serves no command any more, so acknowledging them is
	 * true, and spares their senders the timeout (and fencing this closing client) */
	while (p->head) {
		struct rpr_note *n = p->head;
		p->head = n->next;
		rados_notify_ack(p->io, p->oid, n->id, n->cookie, NULL, 0);
		free(n->data);
		free(n);
	}
	if (p->io) {
		rados_rmxattr(p->io, p->oid, p->gw_xattr);
		rados_ioctx_destroy(p->io);
	}
	pthread_cond_destroy(&p->qcond);
	pthread_mutex_destroy(&p->qlock);
	pthread_mutex_destroy(&p->watch_mu);
	pthread_rwlock_destroy(&p->conn);
	free(p);
}

static const struct pr_store_ops rpr_ops = {
    .name = "rados",
    .load = rpr_load,
    .store = rpr_store,
    .watch = rpr_watch,
    .publish = rpr_publish,
    .close = rpr_close,
};

struct pr_store *bs_rbd_pr_open(rados_t cluster, const char *pool, const char *image_id,
				bs_rbd_pr_closing_fn closing, void *closing_arg, char *err,
				size_t errlen)
{
	struct rpr *p = calloc(1, sizeof(*p));
	int rc;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->s.ops = &rpr_ops;
	p->s.shared = true;
	p->cluster = cluster;
	p->closing = closing;
	p->closing_arg = closing_arg;
	snprintf(p->pool, sizeof(p->pool), "%s", pool);
	p->self = rados_get_instance_id(cluster);
	snprintf(p->oid, sizeof(p->oid), "utgt.pr.%s", image_id);
	snprintf(p->gw_xattr, sizeof(p->gw_xattr), "utgt.gw.%" PRIu64, p->self);
	snprintf(p->s.name, sizeof(p->s.name), "rbd:%s/%s", pool, image_id);
	snprintf(p->s.where, sizeof(p->s.where), "RADOS object %s/%s", pool, p->oid);
	pthread_mutex_init(&p->qlock, NULL);
	pthread_cond_init(&p->qcond, NULL);
	pthread_mutex_init(&p->watch_mu, NULL);
	pthread_rwlock_init(&p->conn, NULL);
	rc = rados_ioctx_create(cluster, pool, &p->io);
	if (rc < 0) {
		snprintf(err, errlen, "pool %s: %s", pool, strerror(-rc));
		p->io = NULL;
		p->closing = NULL; /* never handed out: the backstore is still opening it */
		rpr_close(&p->s);
		return NULL;
	}
	return &p->s;
}

#endif
