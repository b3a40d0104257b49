/* PERSISTENT RESERVE OUT (SPC-4 6.17, 5.13): every service action but REPLACE LOST
 * RESERVATION.
 *
 * The command runs on a core worker: the new state is stored (scsi/pr_store.h: with APTPL
 * in the state directory; always, for a store shared by several gateways) before the command
 * completes, and PREEMPT AND ABORT waits for the tasks it aborts.  Each service action works
 * on the state under pr->lock, from a snapshot taken first: when the state cannot be stored
 * the snapshot is put back and the command fails, so what the initiator was told and what a
 * restart finds never differ.  Against a shared store the store is a compare-and-store: the
 * command is redone on the reloaded state when another gateway changed it first, and it
 * completes only after the other gateways have the change in force (spc_pr_sync.c).  UNIT
 * ATTENTIONs and aborts are applied after the lock is dropped, and only when the command
 * succeeded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scsi/pr_store.h"
#include "scsi/spc_pr.h"

#define PROUT_BASE_LEN 24
#define PROUT_MAX_LEN  (256u * 1024)

struct prout {
	struct scsi_task *t;
	const struct scsi_nexus *nx;
	struct pr_state *st;
	struct pr_effects *fx;
	bool can_persist;
	uint8_t sa, scope, type;
	const uint8_t *buf; /* parameter list */
	uint32_t len;
	uint64_t rk, sark;
	bool spec_i_pt, all_tg_pt, aptpl, unreg;
	uint16_t move_rtpi;
	uint32_t tid_len;
};

static void self_reg(const struct prout *o, struct pr_reg *r, uint64_t key)
{
	memset(r, 0, sizeof(*r));
	pr_port_of_nexus(o->nx, &r->port);
	r->rtpi = o->nx->rel_tgt_id;
	r->all_tg_pt = o->all_tg_pt;
	r->key = key;
}

/* Unregister registration i (SPC-4 5.13.11.3): a registrants-only reservation released with it
 * tells every other registrant. */
static void unregister(struct prout *o, int i)
{
	struct pr_state *st = o->st;
	bool released_ro = pr_type_reg_only(st->type) && st->holder == i;

	pr_remove(st, i);
	if (released_ro)
		for (unsigned j = 0; j < st->nregs; j++)
			pr_fx_ua(o->fx, &st->regs[j], PR_UA_RESERVATIONS_RELEASED);
}

/* SPEC_I_PT: the TransportIDs after the 28-byte header, each registered through the target
 * port the command came in on (or all of them with ALL_TG_PT).  All or nothing. */
static enum scsi_sr register_spec_i_pt(struct prout *o, const struct pr_reg *self)
{
	struct pr_state *st = o->st;
	unsigned first_new = st->nregs;
	uint32_t off = 28, end = 28 + o->tid_len;

	while (off < end) {
		struct pr_reg r;
		bool dup = false;
		int n;

		memset(&r, 0, sizeof(r));
		n = pr_tid_parse(o->buf + off, end - off, &r.port);
		if (n < 0)
			return SR_PARAM_LIST_LENGTH_ERROR;
		if (n == 0)
			goto bad;
		r.rtpi = o->nx->rel_tgt_id;
		r.all_tg_pt = o->all_tg_pt;
		r.key = o->sark;
		if (pr_reg_overlaps(&r, self))
			dup = true; /* the sender itself: registered by this command anyway */
		for (unsigned i = first_new; i < st->nregs && !dup; i++)
			dup = pr_reg_overlaps(&r, &st->regs[i]);
		for (unsigned i = 0; i < first_new && !dup; i++)
			if (pr_reg_overlaps(&r, &st->regs[i]))
				goto bad; /* SPC-4: an already registered I_T nexus is an error */
		if (!dup && pr_add(st, &r) < 0)
			return SR_INSUFFICIENT_REG_RESOURCES;
		off += (uint32_t)n;
		continue;
	bad:
		return scsi_invalid_param(o->t, (uint16_t)off, -1);
	}
	return SR_OK;
}

static enum scsi_sr do_register(struct prout *o, bool ignore)
{
	struct pr_state *st = o->st;
	int i = pr_find(st, o->nx);
	enum scsi_sr sr;

	if (i < 0) {
		struct pr_reg self;
		if (!ignore && o->rk != 0)
			return SR_RESERVATION_CONFLICT;
		if (o->sark == 0) {
			if (o->spec_i_pt)
				return scsi_invalid_param(o->t, 20, 3);
			return SR_OK; /* nothing to register, nothing changes */
		}
		self_reg(o, &self, o->sark);
		if (pr_add(st, &self) < 0)
			return SR_INSUFFICIENT_REG_RESOURCES;
		if (o->spec_i_pt && (sr = register_spec_i_pt(o, &self)) != SR_OK)
			return sr;
	} else {
		if (o->spec_i_pt)
			return SR_INVALID_FIELD_IN_CDB; /* SPC-4 table 53: registered + SPEC_I_PT */
		if (!ignore && o->rk != st->regs[i].key)
			return SR_RESERVATION_CONFLICT;
		if (o->sark == 0)
			unregister(o, i);
		else
			st->regs[i].key = o->sark;
	}
	st->aptpl = o->aptpl;
	st->generation++;
	return SR_OK;
}

/* The registration the sender acts through, checked against RESERVATION KEY. */
static enum scsi_sr sender(struct prout *o, int *idx)
{
	*idx = pr_find(o->st, o->nx);
	if (*idx < 0 || o->st->regs[*idx].key != o->rk)
		return SR_RESERVATION_CONFLICT;
	return SR_OK;
}

static enum scsi_sr do_reserve(struct prout *o)
{
	struct pr_state *st = o->st;
	enum scsi_sr sr;
	int i;

	if ((sr = sender(o, &i)) != SR_OK)
		return sr;
	if (st->type != PR_TYPE_NONE) {
		/* the holder asking again for the same thing is not an error; anything else is */
		if (pr_is_holder(st, i) && st->type == o->type)
			return SR_OK;
		return SR_RESERVATION_CONFLICT;
	}
	st->type = o->type;
	st->holder = pr_type_all_reg(o->type) ? -1 : i;
	return SR_OK;
}

static enum scsi_sr do_release(struct prout *o)
{
	struct pr_state *st = o->st;
	enum scsi_sr sr;
	uint8_t old;
	int i;

	if ((sr = sender(o, &i)) != SR_OK)
		return sr;
	if (!pr_is_holder(st, i))
		return SR_OK; /* no reservation, or not ours: GOOD, nothing changes (5.13.11.2) */
	if (o->type != st->type)
		return SR_INVALID_RELEASE_OF_PR;
	old = st->type;
	st->type = PR_TYPE_NONE;
	st->holder = -1;
	if (pr_type_reg_only(old) || pr_type_all_reg(old))
		for (unsigned j = 0; j < st->nregs; j++)
			if ((int)j != i)
				pr_fx_ua(o->fx, &st->regs[j], PR_UA_RESERVATIONS_RELEASED);
	return SR_OK;
}

static enum scsi_sr do_clear(struct prout *o)
{
	struct pr_state *st = o->st;
	enum scsi_sr sr;
	int i;

	if ((sr = sender(o, &i)) != SR_OK)
		return sr;
	for (unsigned j = 0; j < st->nregs; j++)
		if ((int)j != i)
			pr_fx_ua(o->fx, &st->regs[j], PR_UA_RESERVATIONS_PREEMPTED);
	st->nregs = 0;
	st->type = PR_TYPE_NONE;
	st->holder = -1;
	st->generation++;
	return SR_OK;
}

/* Remove every registration with key `key` (all of them but the sender's when key is 0),
 * keeping the sender's when keep_self.  Each removed nexus other than the sender gets
 * REGISTRATIONS PREEMPTED; with PREEMPT AND ABORT its tasks are aborted.  Returns how many
 * registrations matched; *self_idx follows the sender's index through the removals. */
static unsigned remove_keyed(struct prout *o, uint64_t key, bool keep_self, int *self_idx)
{
	struct pr_state *st = o->st;
	bool abort = o->sa == PRO_PREEMPT_AND_ABORT;
	unsigned matched = 0;

	for (int j = 0; j < (int)st->nregs;) {
		bool self = j == *self_idx;
		if (key ? st->regs[j].key != key : self) {
			j++;
			continue;
		}
		matched++;
		if (abort)
			pr_fx_abort(o->fx, &st->regs[j]);
		if (self && keep_self) {
			j++;
			continue;
		}
		if (!self)
			pr_fx_ua(o->fx, &st->regs[j], PR_UA_REGISTRATIONS_PREEMPTED);
		pr_remove(st, j);
		if (self)
			*self_idx = -1;
		else if (*self_idx > j)
			(*self_idx)--;
	}
	return matched;
}

static enum scsi_sr do_preempt(struct prout *o)
{
	struct pr_state *st = o->st;
	enum scsi_sr sr;
	uint8_t old_type = st->type;
	int i;

	if ((sr = sender(o, &i)) != SR_OK)
		return sr;

	if (old_type != PR_TYPE_NONE && pr_type_all_reg(old_type) && o->sark == 0) {
		/* all-registrants with key 0: everyone else goes, the sender reserves */
		remove_keyed(o, 0, true, &i);
		st->type = o->type;
		st->holder = pr_type_all_reg(o->type) ? -1 : i;
	} else if (old_type != PR_TYPE_NONE && !pr_type_all_reg(old_type) &&
		   st->regs[st->holder].key == o->sark) {
		/* preempting the holder (possibly the sender itself, to change the type) */
		remove_keyed(o, o->sark, true, &i);
		st->type = o->type;
		st->holder = i;
		if (old_type != o->type)
			for (unsigned j = 0; j < st->nregs; j++)
				if ((int)j != i)
					pr_fx_ua(o->fx, &st->regs[j], PR_UA_RESERVATIONS_RELEASED);
	} else {
		/* removing registrations only; the reservation, if any, stays */
		if (o->sark == 0)
			return scsi_invalid_param(o->t, 8, -1);
		if (remove_keyed(o, o->sark, false, &i) == 0)
			return SR_RESERVATION_CONFLICT;
	}
	st->generation++;
	return SR_OK;
}

static enum scsi_sr do_register_and_move(struct prout *o)
{
	struct pr_state *st = o->st;
	struct pr_reg dest, self;
	enum scsi_sr sr;
	int i, j, n;

	if ((sr = sender(o, &i)) != SR_OK)
		return sr;
	if (o->sark == 0)
		return scsi_invalid_param(o->t, 8, -1);
	memset(&dest, 0, sizeof(dest));
	n = pr_tid_parse(o->buf + 24, o->tid_len, &dest.port);
	if (n < 0)
		return SR_PARAM_LIST_LENGTH_ERROR;
	if (n == 0)
		return scsi_invalid_param(o->t, 24, -1);
	if (o->move_rtpi == 0)
		return scsi_invalid_param(o->t, 18, -1);
	dest.rtpi = o->move_rtpi;
	dest.key = o->sark;
	/* the destination must be another initiator port than the sender's */
	self_reg(o, &self, o->rk);
	self.all_tg_pt = true;
	dest.all_tg_pt = true;
	if (pr_reg_overlaps(&dest, &self))
		return scsi_invalid_param(o->t, 24, -1);
	dest.all_tg_pt = false;
	if (!pr_is_holder(st, i) || pr_type_all_reg(st->type))
		return SR_RESERVATION_CONFLICT;
	j = -1;
	for (unsigned k = 0; k < st->nregs && j < 0; k++)
		if (pr_reg_overlaps(&st->regs[k], &dest))
			j = (int)k;
	if (j >= 0)
		st->regs[j].key = o->sark;
	else if ((j = pr_add(st, &dest)) < 0)
		return SR_INSUFFICIENT_REG_RESOURCES;
	st->holder = j; /* same type and scope as the reservation moved (5.13.8) */
	if (o->unreg)
		pr_remove(st, i); /* i is no longer the holder: the reservation stays */
	st->aptpl = o->aptpl;
	st->generation++;
	return SR_OK;
}

/* Checks on the CDB and the parameter list that do not depend on the state. */
static enum scsi_sr parse(struct prout *o)
{
	const uint8_t *cdb = o->t->cdb;
	const uint8_t *b = o->buf;

	o->sa = cdb[1] & 0x1f;
	o->scope = cdb[2] >> 4;
	o->type = cdb[2] & 0x0f;
	if (o->sa > PRO_REGISTER_AND_MOVE)
		return scsi_invalid_cdb(o->t, 1, 4); /* REPLACE LOST RESERVATION: not offered */
	if (o->len < PROUT_BASE_LEN)
		return SR_PARAM_LIST_LENGTH_ERROR;
	o->rk = get_be64(b);
	o->sark = get_be64(b + 8);
	if (o->sa == PRO_REGISTER_AND_MOVE) {
		o->unreg = b[17] & 0x02;
		o->aptpl = b[17] & 0x01;
		o->move_rtpi = get_be16(b + 18);
		o->tid_len = get_be32(b + 20);
		if ((uint64_t)o->tid_len + 24 != o->len)
			return SR_PARAM_LIST_LENGTH_ERROR;
	} else {
		o->spec_i_pt = b[20] & 0x08;
		o->all_tg_pt = b[20] & 0x04;
		o->aptpl = b[20] & 0x01;
		if (o->spec_i_pt && o->sa != PRO_REGISTER)
			return scsi_invalid_param(o->t, 20, 3);
		if (!o->spec_i_pt && o->len != PROUT_BASE_LEN)
			return SR_PARAM_LIST_LENGTH_ERROR;
		if (o->spec_i_pt) {
			if (o->len < 28)
				return SR_PARAM_LIST_LENGTH_ERROR;
			o->tid_len = get_be32(b + 24);
			if ((uint64_t)o->tid_len + 28 != o->len)
				return SR_PARAM_LIST_LENGTH_ERROR;
		}
		/* ALL_TG_PT only means something to the register actions (6.17.4) */
		if (o->sa != PRO_REGISTER && o->sa != PRO_REGISTER_IGNORE)
			o->all_tg_pt = false;
	}
	/* APTPL only matters to the actions that set it; without a state directory we cannot
	 * honour it and REPORT CAPABILITIES says PTPL_C=0. */
	if (o->aptpl && !o->can_persist &&
	    (o->sa == PRO_REGISTER || o->sa == PRO_REGISTER_IGNORE ||
	     o->sa == PRO_REGISTER_AND_MOVE))
		return o->sa == PRO_REGISTER_AND_MOVE ? scsi_invalid_param(o->t, 17, 0)
						      : scsi_invalid_param(o->t, 20, 0);
	switch (o->sa) {
	case PRO_RESERVE:
	case PRO_RELEASE:
	case PRO_PREEMPT:
	case PRO_PREEMPT_AND_ABORT:
		if (o->scope != PR_SCOPE_LU)
			return scsi_invalid_cdb(o->t, 2, 7);
		/* RELEASE compares the type with the reservation's instead (26/04) */
		if (o->sa != PRO_RELEASE && !pr_type_valid(o->type))
			return scsi_invalid_cdb(o->t, 2, 3);
		break;
	default:
		break;
	}
	return SR_OK;
}

static enum scsi_sr run_sa(struct prout *o)
{
	switch (o->sa) {
	case PRO_REGISTER:
		return do_register(o, false);
	case PRO_REGISTER_IGNORE:
		return do_register(o, true);
	case PRO_RESERVE:
		return do_reserve(o);
	case PRO_RELEASE:
		return do_release(o);
	case PRO_CLEAR:
		return do_clear(o);
	case PRO_PREEMPT:
	case PRO_PREEMPT_AND_ABORT:
		return do_preempt(o);
	case PRO_REGISTER_AND_MOVE:
		return do_register_and_move(o);
	default:
		return scsi_invalid_cdb(o->t, 1, 4);
	}
}

/* The service action as a change of the state (spc_pr_sync.c stores it, redoes it on the
 * reloaded state when another gateway stored first, and publishes it). */
static enum scsi_sr prout_fn(struct pr_state *st, struct pr_effects *fx, void *arg, bool *dirty)
{
	struct prout *o = arg;

	/* SPC-2 5.5.1: PR commands conflict while a RESERVE(6/10) exists */
	if (st->spc2)
		return SR_RESERVATION_CONFLICT;
	o->st = st;
	o->fx = fx;
	*dirty = true;
	return run_sa(o);
}

static enum scsi_sr pr_out_work(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	struct scsi_pr *pr = dev->pr;
	struct prout o = {.t = t, .nx = t->nexus};
	struct pr_effects *fx = NULL;
	uint8_t *buf = NULL;
	enum scsi_sr sr;

	o.len = get_be32(t->cdb + 5);
	o.can_persist = pr->store != NULL;
	if (o.len > PROUT_MAX_LEN)
		return SR_PARAM_LIST_LENGTH_ERROR;
	buf = calloc(1, o.len ? o.len : 1);
	fx = calloc(1, sizeof(*fx));
	if (!buf || !fx) {
		sr = SR_NO_MEMORY;
		goto out;
	}
	if (scsi_data_out(t, buf, o.len) < o.len) {
		/* the initiator sent less than the CDB's parameter list length */
		sr = SR_PARAM_LIST_LENGTH_ERROR;
		goto out;
	}
	o.buf = buf;
	if ((sr = parse(&o)) != SR_OK)
		goto out;
	sr = pr_sync_change(pr, prout_fn, &o, fx, false);
	if (sr == SR_OK)
		pr_fx_apply(dev, fx, t);
out:
	free(buf);
	free(fx);
	return sr;
}

enum scsi_sr spc_pr_out(struct scsi_task *t)
{
	if (!t->core.dev || !t->core.dev->pr || !t->nexus)
		return SR_INTERNAL_ERROR;
	return scsi_run_blocking(t, pr_out_work);
}
