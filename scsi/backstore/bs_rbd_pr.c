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
	rados_t cluster;
	rados_ioctx_t io;
	char oid[96];
	char gw_xattr[48]; /* "utgt.gw.<our client id>": our address, for fencing us */
	uint64_t self;	   /* our client id (the notifier id others see) */

	pr_store_changed_fn cb;
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
	rc = rop ? rados_aio_read_op_operate(rop, p->io, c, p->oid, 0)
		 : rados_aio_write_op_operate(wop, p->io, c, p->oid, NULL, 0);
	if (rc == 0) {
		rados_aio_wait_for_complete(c);
		rc = rados_aio_get_return_value(c);
		if (rc >= 0)
			*ver = rados_aio_get_version(c);
	}
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
 * recorded.  0 when every one was fenced. */
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

	if (notifier == p->self || !len || ((char *)data)[0] == RPR_HELLO) {
		rados_notify_ack(p->io, p->oid, id, cookie, NULL, 0);
		return;
	}
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
	if (p->watching)
		rados_unwatch2(p->io, p->cookie);
	p->watching = rados_watch2(p->io, p->oid, &p->cookie, rpr_watch_cb, rpr_watch_err, p) == 0;
	return p->watching ? 0 : -EIO;
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
		rados_notify_ack(p->io, p->oid, n->id, n->cookie, NULL, 0);
		free(n->data);
		free(n);
		pthread_mutex_lock(&p->qlock);
	}
	pthread_mutex_unlock(&p->qlock);
	return NULL;
}

static int rpr_watch(struct pr_store *st, pr_store_changed_fn cb, char *err, size_t errlen)
{
	struct rpr *p = (struct rpr *)st;
	rados_write_op_t op = rados_create_write_op();
	char *addrs = NULL;
	size_t others = 0;
	int rc;

	p->cb = cb;
	/* the object must exist to be watched; recording our address is the same write */
	if (!op)
		return -ENOMEM;
	rc = rados_getaddrs(p->cluster, &addrs);
	if (rc == 0) {
		rados_write_op_create(op, LIBRADOS_CREATE_IDEMPOTENT, NULL);
		rados_write_op_setxattr(op, p->gw_xattr, addrs, strlen(addrs));
		rc = rados_write_op_operate(op, p->io, p->oid, NULL, 0);
	}
	rados_release_write_op(op);
	free(addrs);
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

static void rpr_close(struct pr_store *st)
{
	struct rpr *p = (struct rpr *)st;

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
				char *err, size_t errlen)
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
	p->self = rados_get_instance_id(cluster);
	snprintf(p->oid, sizeof(p->oid), "utgt.pr.%s", image_id);
	snprintf(p->gw_xattr, sizeof(p->gw_xattr), "utgt.gw.%" PRIu64, p->self);
	snprintf(p->s.name, sizeof(p->s.name), "rbd:%s/%s", pool, image_id);
	snprintf(p->s.where, sizeof(p->s.where), "RADOS object %s/%s", pool, p->oid);
	pthread_mutex_init(&p->qlock, NULL);
	pthread_cond_init(&p->qcond, NULL);
	rc = rados_ioctx_create(cluster, pool, &p->io);
	if (rc < 0) {
		snprintf(err, errlen, "pool %s: %s", pool, strerror(-rc));
		p->io = NULL;
		rpr_close(&p->s);
		return NULL;
	}
	return &p->s;
}

#endif
