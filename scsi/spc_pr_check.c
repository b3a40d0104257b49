/* RESERVATION CONFLICT: the admission rule the dispatcher runs before every handler, for SPC-2
 * RESERVE/RELEASE reservations and persistent reservations, plus what resets do to them.
 *
 * Persistent reservations follow SPC-4 table "SPC commands that are allowed in the presence of
 * various reservations" and SBC-3's counterpart, through the per-opcode pr_class:
 *   PRC_ALLOWED  never conflicts;
 *   PRC_READ     conflicts under Exclusive Access for a non-holder, and under the
 *                Exclusive Access registrants-only / all-registrants types for a
 *                non-registered nexus;
 *   PRC_WRITE    conflicts under Write Exclusive and Exclusive Access for a non-holder, and
 *                under the registrants-only / all-registrants types for a non-registered nexus;
 *   PRC_PROUT    PERSISTENT RESERVE OUT sorts itself out per service action.
 * Two SBC commands depend on CDB bits rather than the opcode alone: START STOP UNIT with
 * START=1 and POWER CONDITION 0, and PREVENT ALLOW MEDIUM REMOVAL with PREVENT=0, are allowed.
 * RESERVE/RELEASE(6/10) are PRC_ALLOWED here because their handlers apply SPC-4 5.13.3. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/ut_log.h"
#include "common/ut_thread.h"
#include "scsi/spc_pr.h"

#define OP_START_STOP_UNIT 0x1b
#define OP_PREVENT_ALLOW   0x1e
#define OP_PR_IN	   0x5e
#define OP_PR_OUT	   0x5f

static bool pr_class_conflicts(const struct pr_state *st, const struct scsi_nexus *nx,
			       enum scsi_pr_class prc)
{
	int i;

	if (st->type == PR_TYPE_NONE || prc == PRC_ALLOWED || prc == PRC_PROUT)
		return false;
	i = pr_find(st, nx);
	if (pr_is_holder(st, i))
		return false;
	switch (st->type) {
	case PR_TYPE_WE:
		return prc == PRC_WRITE;
	case PR_TYPE_EA:
		return true;
	case PR_TYPE_WE_RO:
	case PR_TYPE_WE_AR:
		return prc == PRC_WRITE && i < 0;
	case PR_TYPE_EA_RO:
	case PR_TYPE_EA_AR:
		return i < 0;
	default:
		return true;
	}
}

bool scsi_pr_conflicts(struct scsi_dev *dev, const struct scsi_nexus *nx, enum scsi_pr_class prc)
{
	struct scsi_pr *pr = dev->pr;
	bool c;

	if (!pr || !__atomic_load_n(&pr->active, __ATOMIC_ACQUIRE))
		return false;
	pthread_mutex_lock(&pr->lock);
	if (pr->st.spc2)
		c = !pr_spc2_holder_is(&pr->st, nx);
	else
		c = pr_class_conflicts(&pr->st, nx, prc);
	pthread_mutex_unlock(&pr->lock);
	return c;
}

static enum scsi_pr_class refine_class(const struct scsi_task *t, enum scsi_pr_class prc)
{
	switch (t->cdb[0]) {
	case OP_START_STOP_UNIT:
		if ((t->cdb[4] & 0x01) && (t->cdb[4] >> 4) == 0)
			return PRC_ALLOWED;
		break;
	case OP_PREVENT_ALLOW:
		if ((t->cdb[4] & 0x03) == 0)
			return PRC_ALLOWED;
		break;
	default:
		break;
	}
	return prc;
}

enum scsi_sr scsi_reservation_check(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	const struct scsi_cmd_desc *desc = t->core.desc;
	struct scsi_pr *pr = dev ? dev->pr : NULL;
	bool conflict;

	if (!pr || !desc || !t->nexus)
		return SR_OK;
	/* nothing reserved: the common case takes no lock (a reservation made while this command
	 * is being admitted is no different from one made just after) */
	if (!__atomic_load_n(&pr->active, __ATOMIC_ACQUIRE))
		return SR_OK;
	pthread_mutex_lock(&pr->lock);
	if (pr->st.spc2) {
		/* SPC-2 5.5.1: while a RESERVE reservation exists, PERSISTENT RESERVE IN/OUT
		 * conflict for every nexus, the holder included; other nexuses may only send the
		 * commands flagged SPC2_OK. */
		if (t->cdb[0] == OP_PR_IN || t->cdb[0] == OP_PR_OUT)
			conflict = true;
		else
			conflict =
			    !(desc->flags & SCSI_CF_SPC2_OK) && !pr_spc2_holder_is(&pr->st, t->nexus);
	} else {
		conflict = pr_class_conflicts(&pr->st, t->nexus,
					      refine_class(t, (enum scsi_pr_class)desc->pr_class));
	}
	pthread_mutex_unlock(&pr->lock);
	return conflict ? SR_RESERVATION_CONFLICT : SR_OK;
}

/* What a reset or an I_T nexus loss does to the state: an SPC-2 reservation ends with a LU
 * reset (any) or its holder's nexus loss; persistent reservations survive both (SPC-4
 * 5.13.1, SPC-2 5.5.1).  A LU reset also carries its UNIT ATTENTION to the other gateways. */
struct reset_change {
	bool any; /* a LU reset: whoever holds it */
	struct pr_port port;
	uint16_t rtpi;
	uint8_t asc, ascq; /* a LU reset's UNIT ATTENTION, published; 0: a nexus loss */
	void (*done)(void *arg);
	void *arg;
	struct scsi_pr *pr;
};

static enum scsi_sr reset_fn(struct pr_state *st, struct pr_effects *fx, void *arg, bool *dirty)
{
	const struct reset_change *r = arg;

	if (st->spc2 &&
	    (r->any || (st->spc2_rtpi == r->rtpi && st->spc2_port.proto == r->port.proto &&
			!strcasecmp(st->spc2_port.id, r->port.id)))) {
		st->spc2 = false;
		memset(&st->spc2_port, 0, sizeof(st->spc2_port));
		st->spc2_rtpi = 0;
		*dirty = true;
	}
	if (fx) {
		fx->reset_asc = r->asc;
		fx->reset_ascq = r->ascq;
	}
	return SR_OK;
}

/* A shared store: store and publish from a thread of its own (a cluster round trip, up to
 * the notify timeout when a gateway is silent), never on the transport's thread. */
static void *reset_thread(void *arg)
{
	struct reset_change *r = arg;
	struct scsi_pr *pr = r->pr;
	struct pr_effects *fx = malloc(sizeof(*fx));
	enum scsi_sr sr = fx ? pr_sync_change(pr, reset_fn, r, fx, true) : SR_NO_MEMORY;

	if (sr != SR_OK)
		ut_log(LOG_ERR, "%s: cannot store or publish a %s to the other gateways (%d)",
		       pr->dev->p.name, r->any ? "LOGICAL UNIT RESET" : "released SPC-2 reservation",
		       (int)sr);
	free(fx);
	if (r->done)
		r->done(r->arg);
	pthread_mutex_lock(&pr->lock);
	if (--pr->async == 0)
		pthread_cond_broadcast(&pr->async_done);
	pthread_mutex_unlock(&pr->lock);
	free(r);
	return NULL;
}

/* true when r->done will be called later (r is then owned by that thread). */
static bool reset_run(struct scsi_pr *pr, struct reset_change *r)
{
	bool shared = pr->store && pr->store->shared;
	int rc;

	if (shared) {
		pthread_mutex_lock(&pr->lock);
		pr->async++;
		pthread_mutex_unlock(&pr->lock);
		rc = ut_spawn_detached(reset_thread, r);
		if (rc == 0)
			return true;
		pthread_mutex_lock(&pr->lock);
		pr->async--;
		pthread_mutex_unlock(&pr->lock);
		ut_log(LOG_ERR, "%s: no thread to publish a reset: only this gateway sees it",
		       pr->dev->p.name);
	}
	/* this gateway only: a change in memory, nothing to store */
	bool dirty = false;

	pthread_mutex_lock(&pr->lock);
	reset_fn(&pr->st, NULL, r, &dirty);
	pr_update_active(pr);
	pthread_mutex_unlock(&pr->lock);
	return false;
}

void scsi_reservation_reset(struct scsi_dev *dev, const struct scsi_nexus *nx)
{
	struct scsi_pr *pr = dev ? dev->pr : NULL;
	struct reset_change *r;
	bool holder;

	if (!pr || !nx)
		return;
	/* only the holder's loss changes anything: a nexus that holds nothing costs no thread */
	pthread_mutex_lock(&pr->lock);
	holder = pr_spc2_holder_is(&pr->st, nx);
	pthread_mutex_unlock(&pr->lock);
	if (!holder || !(r = calloc(1, sizeof(*r))))
		return;
	r->pr = pr;
	pr_port_of_nexus(nx, &r->port);
	r->rtpi = nx->rel_tgt_id;
	if (!reset_run(pr, r))
		free(r);
}

bool scsi_reservation_lu_reset(struct scsi_dev *dev, uint8_t asc, uint8_t ascq,
			       void (*done)(void *arg), void *arg)
{
	struct scsi_pr *pr = dev ? dev->pr : NULL;
	struct reset_change *r = pr ? calloc(1, sizeof(*r)) : NULL;
	bool later;

	if (!r)
		return false;
	r->pr = pr;
	r->any = true;
	r->asc = asc;
	r->ascq = ascq;
	r->done = done;
	r->arg = arg;
	later = reset_run(pr, r);
	if (!later)
		free(r);
	return later;
}
