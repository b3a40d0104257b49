/* RESERVE(6)/(10) and RELEASE(6)/(10): SPC-2 reservations of the whole LU by one I_T nexus,
 * with SPC-4 5.13.3's rules for living next to persistent reservations (we report CRH=1):
 *   - from a persistent reservation holder, or from a registrant while a registrants-only or
 *     all-registrants reservation exists, both complete GOOD and change nothing;
 *   - otherwise, while any registration exists, both are RESERVATION CONFLICT;
 *   - otherwise SPC-2 applies: RESERVE by another nexus than the holder conflicts (the
 *     dispatcher already refused it), RELEASE by a non-holder is GOOD and does nothing.
 * The holder is part of the LU's reservation state (spc_pr.h), changed through
 * pr_sync_change like a PERSISTENT RESERVE OUT: with a store shared by several gateways it is
 * stored in the cluster and published to every gateway before the command completes.
 * Third-party reservations and extents are not offered. */
#include <stdlib.h>
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

struct reserve_change {
	const struct scsi_nexus *nx;
	bool reserve;
};

static enum scsi_sr reserve_fn(struct pr_state *st, struct pr_effects *fx, void *arg,
			       bool *dirty)
{
	const struct reserve_change *c = arg;
	bool mine = pr_spc2_holder_is(st, c->nx);

	(void)fx;
	switch (crh_rule(st, c->nx)) {
	case CRH_NOOP:
		return SR_OK;
	case CRH_CONFLICT:
		return SR_RESERVATION_CONFLICT;
	case CRH_NONE:
		break;
	}
	if (c->reserve) {
		if (st->spc2 && !mine)
			return SR_RESERVATION_CONFLICT;
		if (mine)
			return SR_OK;
		pr_port_of_nexus(c->nx, &st->spc2_port);
		st->spc2_rtpi = c->nx->rel_tgt_id;
		st->spc2 = true;
		*dirty = true;
	} else if (mine) {
		st->spc2 = false;
		memset(&st->spc2_port, 0, sizeof(st->spc2_port));
		st->spc2_rtpi = 0;
		*dirty = true;
	}
	return SR_OK;
}

static enum scsi_sr change(struct scsi_task *t, bool reserve)
{
	struct reserve_change c = {t->nexus, reserve};
	struct pr_effects *fx = malloc(sizeof(*fx));
	enum scsi_sr sr;

	if (!fx)
		return SR_NO_MEMORY;
	sr = pr_sync_change(t->core.dev->pr, reserve_fn, &c, fx, true);
	free(fx);
	return sr;
}

static enum scsi_sr reserve_work(struct scsi_task *t)
{
	return change(t, true);
}

static enum scsi_sr release_work(struct scsi_task *t)
{
	return change(t, false);
}

/* Several gateways share the LU's state: the change is stored in the cluster and published
 * (on a core worker), so a RESERVE through one gateway conflicts on every other one before
 * GOOD.  Otherwise it is a change in memory, made at once. */
static enum scsi_sr reserve_release(struct scsi_task *t, bool reserve)
{
	struct scsi_dev *dev = t->core.dev;
	struct scsi_pr *pr = dev ? dev->pr : NULL;
	enum scsi_sr sr;

	if (!pr || !t->nexus)
		return SR_INTERNAL_ERROR;
	if ((sr = check_cdb(t)) != SR_OK)
		return sr;
	if (pr->store && pr->store->shared)
		return scsi_run_blocking(t, reserve ? reserve_work : release_work);
	return change(t, reserve);
}

enum scsi_sr spc_reserve(struct scsi_task *t)
{
	return reserve_release(t, true);
}

enum scsi_sr spc_release(struct scsi_task *t)
{
	return reserve_release(t, false);
}
