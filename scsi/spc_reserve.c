/* RESERVE(6)/(10) and RELEASE(6)/(10): SPC-2 reservations of the whole LU by one I_T nexus,
 * with SPC-4 5.13.3's rules for living next to persistent reservations (we report CRH=1):
 *   - from a persistent reservation holder, or from a registrant while a registrants-only or
 *     all-registrants reservation exists, both complete GOOD and change nothing;
 *   - otherwise, while any registration exists, both are RESERVATION CONFLICT;
 *   - otherwise SPC-2 applies: RESERVE by another nexus than the holder conflicts (the
 *     dispatcher already refused it), RELEASE by a non-holder is GOOD and does nothing.
 * Third-party reservations and extents are not offered. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "scsi/spc_pr.h"

#define OP_RESERVE10 0x56
#define OP_RELEASE10 0x57

enum crh { CRH_NONE, CRH_NOOP, CRH_CONFLICT };

/* Caller holds pr->lock. */
static enum crh crh_rule(const struct pr_state *st, const struct scsi_nexus *nx)
{
	int i = pr_find(st, nx);

	if (i >= 0) {
		if (pr_is_holder(st, i) || pr_type_reg_only(st->type))
			return CRH_NOOP;
		return CRH_CONFLICT;
	}
	return st->nregs ? CRH_CONFLICT : CRH_NONE;
}

static enum scsi_sr check_cdb(struct scsi_task *t)
{
	if (t->cdb[0] == OP_RESERVE10 || t->cdb[0] == OP_RELEASE10) {
		if (t->cdb[1] & 0x10)
			return scsi_invalid_cdb(t, 1, 4); /* 3RDPTY */
		if (t->cdb[1] & 0x02)
			return scsi_invalid_cdb(t, 1, 1); /* LONGID */
		return SR_OK;
	}
	/* RESERVE(6)/RELEASE(6): byte 1 held the SCSI-2 third-party and extent bits */
	if (t->cdb[1] & 0x1f)
		return scsi_invalid_cdb(t, 1, (int8_t)(31 - __builtin_clz(t->cdb[1] & 0x1f)));
	return SR_OK;
}

static enum scsi_sr reserve_release(struct scsi_task *t, bool reserve)
{
	struct scsi_dev *dev = t->core.dev;
	struct scsi_pr *pr = dev ? dev->pr : NULL;
	enum scsi_sr sr = SR_OK;
	struct pr_port me;

	if (!pr || !t->nexus)
		return SR_INTERNAL_ERROR;
	if ((sr = check_cdb(t)) != SR_OK)
		return sr;
	pr_port_of_nexus(t->nexus, &me);
	pthread_mutex_lock(&pr->lock);
	switch (crh_rule(&pr->st, t->nexus)) {
	case CRH_NOOP:
		goto out;
	case CRH_CONFLICT:
		sr = SR_RESERVATION_CONFLICT;
		goto out;
	case CRH_NONE:
		break;
	}
	bool mine = dev->spc2_reserved && dev->spc2_holder_rtpi == t->nexus->rel_tgt_id &&
		    !strcasecmp(dev->spc2_holder, me.id);
	if (reserve) {
		if (dev->spc2_reserved && !mine) {
			sr = SR_RESERVATION_CONFLICT;
			goto out;
		}
		snprintf(dev->spc2_holder, sizeof(dev->spc2_holder), "%s", me.id);
		dev->spc2_holder_rtpi = t->nexus->rel_tgt_id;
		dev->spc2_reserved = true;
	} else if (mine) {
		dev->spc2_reserved = false;
		dev->spc2_holder[0] = '\0';
		dev->spc2_holder_rtpi = 0;
	}
out:
	pr_update_active(pr);
	pthread_mutex_unlock(&pr->lock);
	return sr;
}

enum scsi_sr spc_reserve(struct scsi_task *t)
{
	return reserve_release(t, true);
}

enum scsi_sr spc_release(struct scsi_task *t)
{
	return reserve_release(t, false);
}
