/* The diff/apply engine's second half (tgt_apply.h): a checked plan carried out. */
#include <stdio.h>
#include <string.h>

#include "scsi/scsi_srcu.h"
#include "target/tgt_apply.h"
#include "common/ut_log.h"
#include "target/tgt_plan.h"

static const struct tgt_transport *env_running(void *ctx, const char *driver)
{
	return tgt_run_transport(ctx, driver);
}

static const char *env_device_user(void *ctx, const char *device)
{
	struct tgt_run *run = ctx;

	for (unsigned i = 0; i < run->ndrivers; i++) {
		const struct tgt_transport *tp = run->drivers[i].tp;
		if (tp->uses_device && tp->uses_device(device))
			return run->drivers[i].name;
	}
	return NULL;
}

/* Step 2: devices new in next are opened before anything changes. */
static int open_new_devices(struct tgt_run *run, const struct tgt_plan *plan, struct diag *d)
{
	for (unsigned i = 0; i < plan->ndevs; i++) {
		const struct tgt_dev_plan *p = &plan->devs[i];
		struct scsi_dev *dev = p->next ? p->next->dev : NULL;
		const struct utgt_attr *fn;
		char err[256] = "";

		if ((p->act != DEV_ADD && p->act != DEV_RECREATE) || !dev)
			continue;
		snprintf(dev->p.pr_file_dir, sizeof(dev->p.pr_file_dir), "%s", run->pr_dir);
		if (scsi_dev_open(dev, err, sizeof(err)) == 0)
			continue;
		fn = tgt_attr_find(&p->next->attrs, "filename");
		diag_error(d, fn ? fn->line : p->next->line, "DEVICE %s: %s", p->next->name,
			   err[0] ? err : "cannot open the backing store");
		return -1;
	}
	return 0;
}

static void repoint_table(struct scsi_lun_table *t, struct scsi_dev *from, struct scsi_dev *to)
{
	for (unsigned i = 0; i < t->n; i++)
		if (t->e[i].dev == from)
			t->e[i].dev = to;
}

static void repoint_luns(struct tgt_config *cfg, struct scsi_dev *from, struct scsi_dev *to)
{
	for (unsigned d = 0; d < cfg->ndrivers; d++)
		for (unsigned i = 0; i < cfg->drivers[d].ntargets; i++) {
			struct tgt_target *t = &cfg->drivers[d].targets[i];
			repoint_table(&t->table, from, to);
			for (unsigned g = 0; g < t->ngroups; g++)
				repoint_table(&t->groups[g].table, from, to);
		}
}

struct summary {
	char *buf;
	size_t len, off;
	unsigned problems;
};

static void say(struct summary *s, const char *fmt, const char *a, const char *b)
{
	if (s->off < s->len)
		s->off += (size_t)snprintf(s->buf + s->off, s->len - s->off, fmt,
					   s->off ? "; " : "", a, b);
}

/* Step 3: the running LU moves into next and takes the changes it can take live. */
static void keep_device(struct tgt_config *next, const struct tgt_dev_plan *p, struct summary *s)
{
	struct scsi_dev *live = p->old->dev, *fresh = p->next->dev;
	char err[256];

	p->next->dev = live;
	p->old->dev = NULL; /* the old configuration no longer owns it */
	repoint_luns(next, fresh, live);
	if (p->identity && scsi_dev_set_identity(live, &fresh->p))
		say(s, "%sDEVICE %s: identity%s", p->next->name, "");
	if (p->resize) {
		if (scsi_dev_set_size(live, p->size, err, sizeof(err)) == 0) {
			say(s, "%sDEVICE %s: size%s", p->next->name, "");
		} else {
			ut_log(LOG_ERR, "DEVICE %s: size not changed: %s", p->next->name, err);
			say(s, "%sDEVICE %s: size NOT changed: %s", p->next->name, err);
			s->problems++;
		}
	}
	if (p->medium) {
		if (scsi_dev_change_medium(live, fresh->bs->filename, err, sizeof(err)) == 0) {
			say(s, "%sDEVICE %s: medium %s", p->next->name,
			    fresh->bs->filename[0] ? fresh->bs->filename : "ejected");
		} else {
			ut_log(LOG_ERR, "DEVICE %s: medium not changed: %s", p->next->name, err);
			say(s, "%sDEVICE %s: medium NOT changed: %s", p->next->name, err);
			s->problems++;
		}
	}
	if (scsi_dev_set_alua(live, fresh->alua))
		say(s, "%sDEVICE %s: ALUA%s", p->next->name, "");
	scsi_dev_destroy(fresh); /* configured, never opened */
}

/* Removed LUs: what initiators were told is written is made durable before they close. */
static void flush_device(struct scsi_dev *dev, const char *name)
{
	struct bs_io io = {.op = BS_FLUSH};
	enum bs_status st;

	if (!dev || !dev->open || !dev->bs || dev->medium_removed)
		return;
	st = bs_submit_sync(dev->bs, &io);
	if (st != BS_OK && st != BS_ENOTSUP)
		ut_log(LOG_ERR, "DEVICE %s: flush before removal failed (backstore status %d)",
			name, (int)st);
}

/* Step 4. */
static void run_drivers(struct tgt_run *run, struct tgt_config *next, const struct tgt_plan *plan,
			struct summary *s, bool *keep_old)
{
	char err[256];

	for (unsigned i = 0; i < plan->ndrvs; i++)
		if (plan->drvs[i].act == DRV_STOP) {
			tgt_run_stop_driver(run, plan->drvs[i].name);
			say(s, "%sdriver %s stopped%s", plan->drvs[i].name, "");
		}
	for (unsigned i = 0; i < plan->ndrvs; i++) {
		const struct tgt_drv_plan *p = &plan->drvs[i];

		if (p->act != DRV_UPDATE)
			continue;
		err[0] = '\0';
		if (p->tp->update(next, p->next, err, sizeof(err)) != 0) {
			/* the transport still points into the running configuration: keep it */
			ut_log(LOG_ERR, "driver %s: not updated: %s", p->name, err);
			say(s, "%sdriver %s NOT updated: %s", p->name, err);
			s->problems++;
			*keep_old = true;
		}
	}
	for (unsigned i = 0; i < plan->ndrvs; i++) {
		const struct tgt_drv_plan *p = &plan->drvs[i];

		if (p->act != DRV_START)
			continue;
		err[0] = '\0';
		if (tgt_run_start_driver(run, next, p->next, err, sizeof(err)) == 0) {
			say(s, "%sdriver %s started%s", p->name, "");
		} else {
			say(s, "%sdriver %s NOT started: %s", p->name, err);
			s->problems++;
		}
	}
}

int tgt_apply(struct tgt_run *run, struct tgt_config *next, struct diag *d, char *msg,
	      size_t msglen)
{
	struct tgt_plan_env env = {env_running, env_device_user, run};
	struct summary s = {msg, msglen, 0, 0};
	struct tgt_config *old = run->cfg;
	struct tgt_plan plan;
	bool keep_old = false;

	msg[0] = '\0';
	if (tgt_plan_build(old, next, &env, &plan, d) != 0) {
		tgt_config_free(next);
		return -1;
	}
	if (plan.same) {
		tgt_plan_free(&plan);
		tgt_config_free(next);
		snprintf(msg, msglen, "no change");
		return 0;
	}
	if (open_new_devices(run, &plan, d) != 0) {
		tgt_plan_free(&plan);
		tgt_config_free(next); /* closes what step 2 opened */
		return -1;
	}
	for (unsigned i = 0; i < plan.ndevs; i++) {
		const struct tgt_dev_plan *p = &plan.devs[i];
		if (p->act == DEV_KEEP)
			keep_device(next, p, &s);
	}
	run_drivers(run, next, &plan, &s, &keep_old);
	/* said now: removed objects' names live in the old configuration */
	for (unsigned i = 0; i < plan.ndevs; i++) {
		const struct tgt_dev_plan *p = &plan.devs[i];
		if (p->act == DEV_ADD)
			say(&s, "%sDEVICE %s added%s", p->next->name, "");
		else if (p->act == DEV_REMOVE)
			say(&s, "%sDEVICE %s removed%s", p->old->name, "");
		else if (p->act == DEV_RECREATE)
			say(&s, "%sDEVICE %s re-created%s", p->next->name, "");
	}
	for (unsigned i = 0; i < plan.ntgts; i++) {
		const struct tgt_tgt_plan *t = &plan.tgts[i];
		if (t->act == TGT_ADDED)
			say(&s, "%sTARGET %s added%s", t->name, "");
		else if (t->act == TGT_REMOVED)
			say(&s, "%sTARGET %s removed%s", t->name, "");
		else
			say(&s, "%sTARGET %s: %s", t->name, t->what);
	}
	snprintf(next->path, sizeof(next->path), "%s", old->path);
	run->cfg = next;
	run->changes++;
	scsi_srcu_synchronize();
	for (unsigned i = 0; i < plan.ndevs; i++) {
		const struct tgt_dev_plan *p = &plan.devs[i];
		if (p->act == DEV_REMOVE || p->act == DEV_RECREATE)
			flush_device(p->old->dev, p->old->name);
	}
	if (!keep_old)
		tgt_config_free(old); /* closes the removed devices */
	if (!s.off)
		snprintf(msg, msglen,
			 "no change to devices, targets or drivers (attributes written out or "
			 "kept for SCST only)");
	ut_log(s.problems ? LOG_WARNING : LOG_NOTICE, "configuration change %u: %s", run->changes,
		msg);
	tgt_plan_free(&plan);
	return 0;
}
