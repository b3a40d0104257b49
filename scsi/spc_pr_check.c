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
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "scsi/spc_pr.h"

#define OP_START_STOP_UNIT 0x1b
#define OP_PREVENT_ALLOW   0x1e
#define OP_PR_IN	   0x5e
#define OP_PR_OUT	   0x5f

/* Caller holds pr->lock. */
static bool spc2_holder_is(const struct scsi_dev *dev, const struct scsi_nexus *nx)
{
	struct pr_port p;

	pr_port_of_nexus(nx, &p);
	return dev->spc2_reserved && dev->spc2_holder_rtpi == nx->rel_tgt_id &&
	       !strcasecmp(dev->spc2_holder, p.id);
}

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
	if (dev->spc2_reserved)
		c = !spc2_holder_is(dev, nx);
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
	if (dev->spc2_reserved) {
		/* SPC-2 5.5.1: while a RESERVE reservation exists, PERSISTENT RESERVE IN/OUT
		 * conflict for every nexus, the holder included; other nexuses may only send the
		 * commands flagged SPC2_OK. */
		if (t->cdb[0] == OP_PR_IN || t->cdb[0] == OP_PR_OUT)
			conflict = true;
		else
			conflict =
			    !(desc->flags & SCSI_CF_SPC2_OK) && !spc2_holder_is(dev, t->nexus);
	} else {
		conflict = pr_class_conflicts(&pr->st, t->nexus,
					      refine_class(t, (enum scsi_pr_class)desc->pr_class));
	}
	pthread_mutex_unlock(&pr->lock);
	return conflict ? SR_RESERVATION_CONFLICT : SR_OK;
}

void scsi_reservation_reset(struct scsi_dev *dev, const struct scsi_nexus *nx)
{
	struct scsi_pr *pr = dev ? dev->pr : NULL;

	if (!pr)
		return;
	/* SPC-2 reservations end with a LU reset (nx NULL) or the holder's I_T nexus loss;
	 * persistent reservations survive both (SPC-4 5.13.1). */
	pthread_mutex_lock(&pr->lock);
	if (dev->spc2_reserved && (!nx || spc2_holder_is(dev, nx))) {
		dev->spc2_reserved = false;
		dev->spc2_holder[0] = '\0';
		dev->spc2_holder_rtpi = 0;
	}
	pr_update_active(pr);
	pthread_mutex_unlock(&pr->lock);
}
