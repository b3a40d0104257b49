/* Persistent reservation state of one LU: lifetime (with the stored state loaded at creation),
 * which registration an I_T nexus acts through, and the side effects (UNIT ATTENTIONs, task
 * aborts) that PERSISTENT RESERVE OUT decides under the lock and applies after it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/ut_log.h"
#include "scsi/scsi_core.h"
#include "scsi/spc_pr.h"

struct scsi_pr *scsi_pr_create(struct scsi_dev *dev, char *err, size_t errlen)
{
	struct scsi_pr *pr = calloc(1, sizeof(*pr));

	if (!pr) {
		snprintf(err, errlen, "%s: out of memory", dev->p.name);
		return NULL;
	}
	pr->dev = dev;
	pr->st.holder = -1;
	pthread_mutex_init(&pr->lock, NULL);
	pthread_mutex_init(&pr->out_lock, NULL);
	pthread_cond_init(&pr->async_done, NULL);
	if (pr_sync_open(pr, err, errlen) != 0) {
		scsi_pr_destroy(pr);
		return NULL;
	}
	pthread_mutex_lock(&pr->lock);
	pr_update_active(pr);
	pthread_mutex_unlock(&pr->lock);
	return pr;
}

void pr_update_active(struct scsi_pr *pr)
{
	bool on = pr->st.spc2 || pr->st.type != PR_TYPE_NONE;

	__atomic_store_n(&pr->active, on, __ATOMIC_RELEASE);
	scsi_exc_set(pr->dev, SCSI_EXC_RESERVED, on);
}

void scsi_pr_destroy(struct scsi_pr *pr)
{
	if (!pr)
		return;
	pthread_mutex_lock(&pr->lock);
	while (pr->async) /* a reset still being stored and published */
		pthread_cond_wait(&pr->async_done, &pr->lock);
	pthread_mutex_unlock(&pr->lock);
	pr_sync_close(pr); /* stops the store's callbacks before the state goes */
	pthread_cond_destroy(&pr->async_done);
	pthread_mutex_destroy(&pr->out_lock);
	pthread_mutex_destroy(&pr->lock);
	free(pr);
}

/* SRP port names may come as "0x<hex>" or "<hex>", in either case: compare the digits. */
static const char *srp_digits(const char *s)
{
	return (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? s + 2 : s;
}

void pr_port_of_nexus(const struct scsi_nexus *nx, struct pr_port *out)
{
	const char *id = nx->initiator_port[0] ? nx->initiator_port : nx->initiator_name;

	memset(out, 0, sizeof(*out));
	out->proto = nx->proto;
	if (nx->proto == SCSI_PROTO_SRP)
		id = srp_digits(id);
	snprintf(out->id, sizeof(out->id), "%s", id);
}

/* Length of the iSCSI name part of "name,i,0x<isid>" (the whole string when there is none). */
static size_t iscsi_name_len(const char *id)
{
	const char *sep = strcasestr(id, ",i,0x");
	return sep ? (size_t)(sep - id) : strlen(id);
}

static bool port_overlaps(const struct pr_port *a, const struct pr_port *b)
{
	size_t la, lb;

	if (a->proto != b->proto)
		return false;
	if (a->name_only == b->name_only)
		return !strcasecmp(a->id, b->id);
	/* one names every port of an iSCSI name: compare names */
	la = iscsi_name_len(a->id);
	lb = iscsi_name_len(b->id);
	return la == lb && !strncasecmp(a->id, b->id, la);
}

bool pr_reg_matches(const struct pr_reg *r, const struct scsi_nexus *nx)
{
	struct pr_port p;

	if (!r->all_tg_pt && r->rtpi != nx->rel_tgt_id)
		return false;
	if (r->port.proto != nx->proto)
		return false;
	if (r->port.name_only)
		return !strcasecmp(r->port.id, nx->initiator_name);
	pr_port_of_nexus(nx, &p);
	return !strcasecmp(r->port.id, p.id);
}

bool pr_reg_overlaps(const struct pr_reg *a, const struct pr_reg *b)
{
	if (!a->all_tg_pt && !b->all_tg_pt && a->rtpi != b->rtpi)
		return false;
	return port_overlaps(&a->port, &b->port);
}

bool pr_spc2_holder_is(const struct pr_state *st, const struct scsi_nexus *nx)
{
	struct pr_port p;

	if (!st->spc2 || st->spc2_rtpi != nx->rel_tgt_id || st->spc2_port.proto != nx->proto)
		return false;
	pr_port_of_nexus(nx, &p);
	return !strcasecmp(st->spc2_port.id, p.id);
}

int pr_find(const struct pr_state *st, const struct scsi_nexus *nx)
{
	for (unsigned i = 0; i < st->nregs; i++)
		if (pr_reg_matches(&st->regs[i], nx))
			return (int)i;
	return -1;
}

bool pr_type_valid(uint8_t type)
{
	switch (type) {
	case PR_TYPE_WE:
	case PR_TYPE_EA:
	case PR_TYPE_WE_RO:
	case PR_TYPE_EA_RO:
	case PR_TYPE_WE_AR:
	case PR_TYPE_EA_AR:
		return true;
	default:
		return false;
	}
}

bool pr_is_holder(const struct pr_state *st, int i)
{
	if (i < 0 || st->type == PR_TYPE_NONE)
		return false;
	return pr_type_all_reg(st->type) || st->holder == i;
}

void pr_remove(struct pr_state *st, int i)
{
	if (i < 0 || (unsigned)i >= st->nregs)
		return;
	if (st->type != PR_TYPE_NONE && !pr_type_all_reg(st->type) && st->holder == i) {
		st->type = PR_TYPE_NONE;
		st->holder = -1;
	}
	memmove(&st->regs[i], &st->regs[i + 1],
		(st->nregs - (unsigned)i - 1) * sizeof(st->regs[0]));
	st->nregs--;
	if (st->holder > i)
		st->holder--;
	if (st->nregs == 0) {
		st->type = PR_TYPE_NONE;
		st->holder = -1;
	}
}

int pr_add(struct pr_state *st, const struct pr_reg *r)
{
	if (st->nregs >= PR_MAX_REGS)
		return -1;
	st->regs[st->nregs] = *r;
	return (int)st->nregs++;
}

void pr_fx_ua(struct pr_effects *fx, const struct pr_reg *r, uint8_t ascq)
{
	struct pr_ua *u;

	if (fx->nua >= sizeof(fx->ua) / sizeof(fx->ua[0]))
		return;
	u = &fx->ua[fx->nua++];
	u->port = r->port;
	u->rtpi = r->rtpi;
	u->all_tg_pt = r->all_tg_pt;
	u->ascq = ascq;
}

void pr_fx_abort(struct pr_effects *fx, const struct pr_reg *r)
{
	if (fx->nabort < sizeof(fx->abort) / sizeof(fx->abort[0]))
		fx->abort[fx->nabort++] = *r;
}

/* The UA for a registration that names one I_T nexus goes straight to it.  One that names
 * every target port, or every port of an iSCSI name, goes to each matching nexus the LU
 * knows (a nexus that never touched the LU gets POWER ON on first contact, which covers it). */
struct ua_match {
	const struct pr_ua *u;
};

static bool ua_port_match(const char *initiator_port, uint16_t rtpi, void *arg)
{
	const struct pr_ua *u = ((struct ua_match *)arg)->u;
	struct pr_port p = {.proto = u->port.proto};

	if (!u->all_tg_pt && rtpi != u->rtpi)
		return false;
	snprintf(p.id, sizeof(p.id), "%s",
		 u->port.proto == SCSI_PROTO_SRP ? srp_digits(initiator_port) : initiator_port);
	return port_overlaps(&u->port, &p);
}

static void raise_one(struct scsi_dev *dev, const struct pr_ua *u)
{
	struct ua_match m = {u};

	/* Every nexus the LU knows that the registration names, compared the way registrations
	 * are (case-insensitive, SRP "0x" or not)... */
	scsi_ua_raise_match(dev, ua_port_match, &m, 0x2a, u->ascq);
	/* ...and, for one exact I_T nexus that has not touched the LU yet, a condition waiting
	 * for it (the UA code does not queue the same condition twice). */
	if (!u->all_tg_pt && !u->port.name_only && u->port.proto == SCSI_PROTO_ISCSI)
		scsi_ua_raise(dev, u->port.id, u->rtpi, 0x2a, u->ascq);
}

struct abort_match {
	const struct pr_effects *fx;
};

static bool abort_nexus_match(const struct scsi_nexus *nx, void *arg)
{
	const struct pr_effects *fx = ((struct abort_match *)arg)->fx;

	for (unsigned i = 0; i < fx->nabort; i++)
		if (pr_reg_matches(&fx->abort[i], nx))
			return true;
	return false;
}

static bool every_nexus(const struct scsi_nexus *nx, void *arg)
{
	(void)nx;
	(void)arg;
	return true;
}

void pr_fx_apply(struct scsi_dev *dev, const struct pr_effects *fx, const struct scsi_task *keep)
{
	if (fx->reset_asc) {
		/* what scsi_taskset.c's LU reset does on the gateway that received it */
		scsi_ts_abort_nexuses(dev, every_nexus, NULL, keep);
		scsi_ua_clear_prevent(dev, NULL);
		scsi_ua_raise_all(dev, NULL, fx->reset_asc, fx->reset_ascq);
	}
	for (unsigned i = 0; i < fx->nua; i++)
		raise_one(dev, &fx->ua[i]);
	if (fx->nabort) {
		struct abort_match m = {fx};
		scsi_ts_abort_nexuses(dev, abort_nexus_match, &m, keep);
	}
}
