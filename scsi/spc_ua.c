/* UNIT ATTENTION conditions, per LU and per I_T nexus (SPC-4 5.14 / SAM-5 5.14).
 *
 * A nexus is named by (initiator port, relative target port id), not by the transport's
 * struct, so a reconnecting initiator finds its pending conditions.  The first time a nexus
 * touches an LU it gets POWER ON, RESET, OR BUS DEVICE RESET OCCURRED (29/00).
 *
 * Each nexus keeps a short queue.  Priority (SPC-4 "unit attention condition priority" where it
 * is cheap): a 29h reset condition is reported before anything else and replaces any other
 * queued 29h one; other conditions are reported oldest first; duplicates are not queued
 * twice; past UA_MAX the newest is dropped.
 *
 * The common command must not pay for any of this: the LU's SCSI_EXC_UA flag says whether any
 * nexus has a condition queued, and a small table indexed by nexus id (ids are never reused)
 * remembers which nexuses already have their entry, so a command can tell without a lock or a
 * name comparison that it has nothing to report (scsi_ua_known).  The same table finds the
 * entry for the locked path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scsi/scsi_core.h"

#define UA_MAX 8

struct ua_nexus {
	char port[SCSI_NAME_MAX + 24];
	uint16_t rtpi;
	unsigned n;
	uint8_t asc[UA_MAX], ascq[UA_MAX];
	bool prevent; /* PREVENT ALLOW MEDIUM REMOVAL held by this nexus */
	struct ua_nexus *next;
};

#define UA_SLOTS 256 /* nexus ids are sequential: this many nexuses never collide */

struct ua_slot {
	uint64_t id;        /* nexus id whose entry is n (0: none); written under mu, released */
	struct ua_nexus *n; /* entries live as long as the LU */
};

struct scsi_ua_state {
	pthread_mutex_t mu;
	struct ua_nexus *list;
	unsigned pending; /* entries with a condition queued */
	struct ua_slot slot[UA_SLOTS];
};

struct scsi_ua_state *scsi_ua_create(void)
{
	struct scsi_ua_state *ua = calloc(1, sizeof(*ua));

	if (ua)
		pthread_mutex_init(&ua->mu, NULL);
	return ua;
}

void scsi_ua_destroy(struct scsi_ua_state *ua)
{
	if (!ua)
		return;
	while (ua->list) {
		struct ua_nexus *n = ua->list;
		ua->list = n->next;
		free(n);
	}
	pthread_mutex_destroy(&ua->mu);
	free(ua);
}

/* Caller holds ua->mu: after n's queue changed from `before` entries. */
static void counted(struct scsi_dev *dev, struct ua_nexus *n, unsigned before)
{
	struct scsi_ua_state *ua = dev->ua;

	if (!before && n->n)
		ua->pending++;
	else if (before && !n->n)
		ua->pending--;
	scsi_exc_set(dev, SCSI_EXC_UA, ua->pending != 0);
}

static void push_one(struct ua_nexus *n, uint8_t asc, uint8_t ascq)
{
	if (asc == 0x29) {
		/* drop other reset conditions, then put this one first */
		unsigned j = 0;
		for (unsigned i = 0; i < n->n; i++) {
			if (n->asc[i] == 0x29)
				continue;
			n->asc[j] = n->asc[i];
			n->ascq[j] = n->ascq[i];
			j++;
		}
		n->n = j;
		if (n->n == UA_MAX)
			n->n--;
		memmove(n->asc + 1, n->asc, n->n);
		memmove(n->ascq + 1, n->ascq, n->n);
		n->asc[0] = asc;
		n->ascq[0] = ascq;
		n->n++;
		return;
	}
	for (unsigned i = 0; i < n->n; i++)
		if (n->asc[i] == asc && n->ascq[i] == ascq)
			return;
	if (n->n < UA_MAX) {
		n->asc[n->n] = asc;
		n->ascq[n->n] = ascq;
		n->n++;
	}
}

static void push(struct scsi_dev *dev, struct ua_nexus *n, uint8_t asc, uint8_t ascq)
{
	unsigned before = n->n;

	push_one(n, asc, ascq);
	counted(dev, n, before);
}

/* Caller holds ua->mu.  create: make the entry (with its power-on UA) when missing. */
static struct ua_nexus *find(struct scsi_dev *dev, const char *port, uint16_t rtpi,
			     bool create)
{
	struct scsi_ua_state *ua = dev->ua;
	struct ua_nexus *n;

	for (n = ua->list; n; n = n->next)
		if (n->rtpi == rtpi && !strcmp(n->port, port))
			return n;
	if (!create)
		return NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	snprintf(n->port, sizeof(n->port), "%s", port);
	n->rtpi = rtpi;
	push(dev, n, 0x29, 0x00);
	n->next = ua->list;
	ua->list = n;
	return n;
}

/* Caller holds ua->mu: nx's entry (made on first contact), through the id table when it can. */
static struct ua_nexus *find_nx(struct scsi_dev *dev, const struct scsi_nexus *nx)
{
	struct ua_slot *s = &dev->ua->slot[nx->id % UA_SLOTS];
	struct ua_nexus *n;

	if (nx->id && s->id == nx->id)
		return s->n;
	n = find(dev, nx->initiator_port, nx->rel_tgt_id, true);
	if (n && nx->id) {
		s->n = n;
		__atomic_store_n(&s->id, nx->id, __ATOMIC_RELEASE);
	}
	return n;
}

bool scsi_ua_known(struct scsi_dev *dev, const struct scsi_nexus *nx)
{
	struct scsi_ua_state *ua = dev->ua;

	if (!ua)
		return true; /* no UA state: nothing to report, ever */
	return nx && nx->id && __atomic_load_n(&ua->slot[nx->id % UA_SLOTS].id, __ATOMIC_ACQUIRE) == nx->id;
}

static bool take(struct scsi_dev *dev, const struct scsi_nexus *nx, uint8_t *asc, uint8_t *ascq,
		 bool consume)
{
	struct scsi_ua_state *ua = dev->ua;
	struct ua_nexus *n;
	bool have = false;

	if (!ua || !nx)
		return false;
	pthread_mutex_lock(&ua->mu);
	n = find_nx(dev, nx);
	if (n && n->n) {
		have = true;
		*asc = n->asc[0];
		*ascq = n->ascq[0];
		if (consume) {
			n->n--;
			memmove(n->asc, n->asc + 1, n->n);
			memmove(n->ascq, n->ascq + 1, n->n);
			counted(dev, n, n->n + 1);
		}
	}
	pthread_mutex_unlock(&ua->mu);
	return have;
}

bool scsi_ua_pop(struct scsi_dev *dev, const struct scsi_nexus *nx, uint8_t *asc, uint8_t *ascq)
{
	return take(dev, nx, asc, ascq, true);
}

bool scsi_ua_peek(struct scsi_dev *dev, const struct scsi_nexus *nx, uint8_t *asc, uint8_t *ascq)
{
	return take(dev, nx, asc, ascq, false);
}

void scsi_ua_raise_all(struct scsi_dev *dev, const struct scsi_nexus *except, uint8_t asc,
		       uint8_t ascq)
{
	struct scsi_ua_state *ua = dev->ua;

	if (!ua)
		return;
	pthread_mutex_lock(&ua->mu);
	/* Nexuses that never touched the LU get 29/00 on first contact, which covers this. */
	for (struct ua_nexus *n = ua->list; n; n = n->next) {
		if (except && n->rtpi == except->rel_tgt_id && !strcmp(n->port, except->initiator_port))
			continue;
		push(dev, n, asc, ascq);
	}
	pthread_mutex_unlock(&ua->mu);
}

void scsi_ua_raise_match(struct scsi_dev *dev,
			 bool (*match)(const char *initiator_port, uint16_t rel_tgt_id, void *arg),
			 void *arg, uint8_t asc, uint8_t ascq)
{
	struct scsi_ua_state *ua = dev->ua;

	if (!ua)
		return;
	pthread_mutex_lock(&ua->mu);
	for (struct ua_nexus *n = ua->list; n; n = n->next)
		if (match(n->port, n->rtpi, arg))
			push(dev, n, asc, ascq);
	pthread_mutex_unlock(&ua->mu);
}

void scsi_ua_raise(struct scsi_dev *dev, const char *initiator_port, uint16_t rel_tgt_id,
		   uint8_t asc, uint8_t ascq)
{
	struct scsi_ua_state *ua = dev->ua;
	struct ua_nexus *n;

	if (!ua || !initiator_port)
		return;
	pthread_mutex_lock(&ua->mu);
	n = find(dev, initiator_port, rel_tgt_id, true);
	if (n)
		push(dev, n, asc, ascq);
	pthread_mutex_unlock(&ua->mu);
}

unsigned scsi_ua_known_ports(struct scsi_dev *dev, uint16_t *rtpis, unsigned max)
{
	struct scsi_ua_state *ua = dev->ua;
	unsigned cnt = 0;

	if (!ua)
		return 0;
	pthread_mutex_lock(&ua->mu);
	for (struct ua_nexus *n = ua->list; n; n = n->next) {
		bool dup = false;
		for (unsigned i = 0; i < cnt && !dup; i++)
			dup = rtpis[i] == n->rtpi;
		if (!dup && cnt < max)
			rtpis[cnt++] = n->rtpi;
	}
	pthread_mutex_unlock(&ua->mu);
	return cnt;
}

/* dev->prevent = number of nexuses holding a prevention.  Caller holds ua->mu. */
static void recount_prevent(struct scsi_dev *dev)
{
	unsigned c = 0;

	for (struct ua_nexus *n = dev->ua->list; n; n = n->next)
		c += n->prevent;
	pthread_mutex_lock(&dev->lock);
	dev->prevent = c;
	pthread_mutex_unlock(&dev->lock);
}

void scsi_ua_set_prevent(struct scsi_dev *dev, const struct scsi_nexus *nx, bool on)
{
	struct scsi_ua_state *ua = dev->ua;
	struct ua_nexus *n;

	if (!ua || !nx)
		return;
	pthread_mutex_lock(&ua->mu);
	n = find_nx(dev, nx);
	if (n)
		n->prevent = on;
	recount_prevent(dev);
	pthread_mutex_unlock(&ua->mu);
}

void scsi_ua_clear_prevent(struct scsi_dev *dev, const struct scsi_nexus *nx)
{
	struct scsi_ua_state *ua = dev->ua;

	if (!ua)
		return;
	pthread_mutex_lock(&ua->mu);
	for (struct ua_nexus *n = ua->list; n; n = n->next)
		if (!nx || (n->rtpi == nx->rel_tgt_id && !strcmp(n->port, nx->initiator_port)))
			n->prevent = false;
	recount_prevent(dev);
	pthread_mutex_unlock(&ua->mu);
}
