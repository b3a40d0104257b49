/* The difference between the running configuration and the next one (tgt_plan.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "target/conf_scst_attrs.h"
#include "target/tgt_edit.h"
#include "target/tgt_plan.h"

static struct tgt_device *device_named(const struct tgt_config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->ndevices; i++)
		if (!strcmp(cfg->devices[i].name, name))
			return &cfg->devices[i];
	return NULL;
}

/* The line of attribute key in the next configuration, else the device's own. */
static int dev_line(const struct tgt_device *d, const char *key)
{
	const struct utgt_attr *a = tgt_attr_find(&d->attrs, key);

	return a ? a->line : d->line;
}

static const char *user_of(const struct tgt_plan_env *env, const char *name)
{
	return env->device_user ? env->device_user(env->ctx, name) : NULL;
}

static void plan_device(const struct tgt_config *old, const struct tgt_config *next,
			struct tgt_device *o, struct tgt_device *n, const struct tgt_plan_env *env,
			struct tgt_dev_plan *p, struct diag *d)
{
	const char *what, *user;
	char where[512];

	p->old = o;
	p->next = n;
	if (!o) {
		p->act = DEV_ADD;
		return;
	}
	if (!n) {
		p->act = DEV_REMOVE;
		if ((user = user_of(env, o->name)))
			diag_error(d, 0, "DEVICE %s cannot be removed: %s uses it", o->name, user);
		return;
	}
	what = strcmp(o->handler, n->handler) ? "handler" : scsi_dev_setup_differs(o->dev, n->dev);
	/* a size change on a store that cannot resize while open means a new device */
	if (!what && n->dev->bs->size != o->dev->size_cfg && n->dev->p.type != SCSI_TYPE_CDROM &&
	    !(o->dev->bs->ops && o->dev->bs->ops->resize))
		what = tgt_attr_find(&n->attrs, "size_mb") ? "size_mb" : "size";
	if (what) {
		bool size = !strcmp(what, "size") || !strcmp(what, "size_mb");

		p->act = DEV_RECREATE;
		if (tgt_device_used_by(old, o->name, where, sizeof(where)) ||
		    tgt_device_used_by(next, o->name, where, sizeof(where)))
			diag_error(
			    d, dev_line(n, what),
			    "DEVICE %s: %s%s%s cannot change while the device is in use (%s): "
			    "remove its LUNs first, or restart utgtd",
			    n->name, size ? "the size of a " : "'", size ? n->handler : what,
			    size ? " device" : "'", where);
		else if ((user = user_of(env, o->name)))
			diag_error(d, dev_line(n, what),
				   "DEVICE %s: '%s' cannot change while %s uses it", n->name, what,
				   user);
		return;
	}
	p->act = DEV_KEEP;
	p->identity = !scsi_dev_identity_equal(o->dev, &n->dev->p);
	if (n->dev->p.type == SCSI_TYPE_CDROM)
		p->medium = strcmp(o->dev->bs->filename, n->dev->bs->filename) != 0;
	else if (n->dev->bs->size != o->dev->size_cfg) {
		p->resize = true;
		p->size = n->dev->bs->size;
	}
}

/* The attributes a running driver was started with: SCST-only and read-only ones aside
 * (kept, never used), in order. */
static bool driver_attrs_differ(const struct tgt_driver *a, const struct tgt_driver *b,
				const char **key)
{
	unsigned i = 0, j = 0;

	for (;;) {
		while (i < a->attrs.n &&
		       (!strcasecmp(a->attrs.a[i].key, "enabled") ||
			conf_attr_classify(CONF_SCOPE_DRIVER, a->name, a->transport,
					   a->attrs.a[i].key) != CONF_ATTR_OURS))
			i++;
		while (j < b->attrs.n &&
		       (!strcasecmp(b->attrs.a[j].key, "enabled") ||
			conf_attr_classify(CONF_SCOPE_DRIVER, b->name, b->transport,
					   b->attrs.a[j].key) != CONF_ATTR_OURS))
			j++;
		if (i == a->attrs.n || j == b->attrs.n)
			break;
		if (strcasecmp(a->attrs.a[i].key, b->attrs.a[j].key) ||
		    strcmp(a->attrs.a[i].value, b->attrs.a[j].value)) {
			*key = b->attrs.a[j].key;
			return true;
		}
		i++;
		j++;
	}
	if (i == a->attrs.n && j == b->attrs.n)
		return false;
	*key = i < a->attrs.n ? a->attrs.a[i].key : b->attrs.a[j].key;
	return true;
}

static bool wants_to_run(const struct tgt_driver *drv)
{
	return drv && drv->known && drv->enabled && drv->transport;
}

static void check_targets(const struct tgt_driver *o, const struct tgt_driver *n, struct diag *d)
{
	for (unsigned i = 0; i < n->ntargets; i++) {
		const struct tgt_target *nt = &n->targets[i];
		const struct tgt_target *ot = tgt_driver_target(o, nt->name);

		if (ot && ot->enabled && nt->enabled && ot->rel_tgt_id != nt->rel_tgt_id)
			diag_error(
			    d, nt->rel_tgt_id_line ? nt->rel_tgt_id_line : nt->line,
			    "TARGET %s: rel_tgt_id cannot change from %u to %u while the target "
			    "is enabled (disable it first)",
			    nt->name, ot->rel_tgt_id, nt->rel_tgt_id);
	}
}

static void plan_driver(const struct tgt_driver *o, const struct tgt_driver *n,
			const struct tgt_plan_env *env, struct tgt_drv_plan *p, struct diag *d)
{
	const char *name = n ? n->name : o->name, *key;

	p->name = name;
	p->old = o;
	p->next = n;
	p->tp = env->running ? env->running(env->ctx, name) : NULL;
	if (p->tp && !wants_to_run(n)) {
		p->act = DRV_STOP;
	} else if (!p->tp && wants_to_run(n)) {
		p->act = DRV_START;
		p->tp = n->transport;
	} else if (p->tp) {
		p->act = DRV_UPDATE;
		if (!p->tp->update)
			diag_error(d, n->line,
				   "TARGET_DRIVER %s cannot change while it runs (this transport "
				   "takes no live change); restart utgtd",
				   name);
		else if (o && driver_attrs_differ(o, n, &key))
			diag_error(d,
				   tgt_attr_find(&n->attrs, key)
				       ? tgt_attr_find(&n->attrs, key)->line
				       : n->line,
				   "TARGET_DRIVER %s: '%s' cannot change while the driver runs; "
				   "disable the driver first (enabled 0), or restart utgtd",
				   name, key);
		if (o)
			check_targets(o, n, d);
	} else {
		p->act = DRV_NONE;
	}
}

/* ---- targets: what differs, in words ---- */

static bool attrs_differ(const struct tgt_attrs *a, const struct tgt_attrs *b)
{
	unsigned i = 0, j = 0;

	for (;;) {
		while (i < a->n && (!strcasecmp(a->a[i].key, "enabled") ||
				    !strcasecmp(a->a[i].key, "rel_tgt_id")))
			i++;
		while (j < b->n && (!strcasecmp(b->a[j].key, "enabled") ||
				    !strcasecmp(b->a[j].key, "rel_tgt_id")))
			j++;
		if (i == a->n || j == b->n)
			return i != a->n || j != b->n;
		if (strcasecmp(a->a[i].key, b->a[j].key) || strcmp(a->a[i].value, b->a[j].value))
			return true;
		i++;
		j++;
	}
}

static bool luns_differ(const struct tgt_lun *a, unsigned na, const struct tgt_lun *b, unsigned nb)
{
	if (na != nb)
		return true;
	for (unsigned i = 0; i < na; i++)
		if (a[i].lun != b[i].lun || a[i].read_only != b[i].read_only ||
		    strcmp(a[i].device, b[i].device))
			return true;
	return false;
}

static bool groups_differ(const struct tgt_target *a, const struct tgt_target *b)
{
	if (a->ngroups != b->ngroups)
		return true;
	for (unsigned g = 0; g < a->ngroups; g++) {
		const struct tgt_group *x = &a->groups[g], *y = &b->groups[g];
		if (strcmp(x->name, y->name) || x->ninitiators != y->ninitiators ||
		    luns_differ(x->luns, x->nluns, y->luns, y->nluns) ||
		    attrs_differ(&x->attrs, &y->attrs))
			return true;
		for (unsigned i = 0; i < x->ninitiators; i++)
			if (strcmp(x->initiators[i], y->initiators[i]))
				return true;
	}
	return false;
}

static void add_what(char *w, size_t len, const char *s)
{
	size_t n = strlen(w);

	snprintf(w + n, len - n, "%s%s", n ? ", " : "", s);
}

static unsigned plan_targets(const struct tgt_config *old, const struct tgt_config *next,
			     struct tgt_tgt_plan *out)
{
	unsigned n = 0;

	for (unsigned d = 0; d < next->ndrivers; d++) {
		const struct tgt_driver *nd = &next->drivers[d];
		const struct tgt_driver *od = tgt_config_driver(old, nd->name);

		for (unsigned i = 0; i < nd->ntargets; i++) {
			const struct tgt_target *nt = &nd->targets[i];
			const struct tgt_target *ot = tgt_driver_target(od, nt->name);
			struct tgt_tgt_plan *p = &out[n];

			p->driver = nd->name;
			p->name = nt->name;
			p->what[0] = '\0';
			if (!ot) {
				p->act = TGT_ADDED;
				n++;
				continue;
			}
			if (ot->enabled != nt->enabled)
				add_what(p->what, sizeof(p->what),
					 nt->enabled ? "enabled" : "disabled");
			if (ot->rel_tgt_id != nt->rel_tgt_id)
				add_what(p->what, sizeof(p->what), "rel_tgt_id");
			if (luns_differ(ot->luns, ot->nluns, nt->luns, nt->nluns))
				add_what(p->what, sizeof(p->what), "LUNs");
			if (groups_differ(ot, nt))
				add_what(p->what, sizeof(p->what), "groups");
			if (attrs_differ(&ot->attrs, &nt->attrs))
				add_what(p->what, sizeof(p->what), "attributes");
			if (p->what[0]) {
				p->act = TGT_CHANGED;
				n++;
			}
		}
	}
	for (unsigned d = 0; d < old->ndrivers; d++) {
		const struct tgt_driver *od = &old->drivers[d];
		const struct tgt_driver *nd = tgt_config_driver(next, od->name);

		for (unsigned i = 0; i < od->ntargets; i++)
			if (!tgt_driver_target(nd, od->targets[i].name))
				out[n++] = (struct tgt_tgt_plan){.act = TGT_REMOVED,
								 .driver = od->name,
								 .name = od->targets[i].name};
	}
	return n;
}

/* Does next print exactly as old: then nothing changes. */
static bool same_text(const struct tgt_config *a, const struct tgt_config *b)
{
	char *ta = NULL, *tb = NULL;
	size_t la = 0, lb = 0;
	FILE *fa = open_memstream(&ta, &la), *fb = open_memstream(&tb, &lb);
	bool same = false;

	if (fa && fb) {
		tgt_config_print_opts(a, fa, TGT_PRINT_NO_HEADER);
		tgt_config_print_opts(b, fb, TGT_PRINT_NO_HEADER);
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	same = ta && tb && la == lb && !memcmp(ta, tb, la);
	free(ta);
	free(tb);
	return same;
}

int tgt_plan_build(const struct tgt_config *old, const struct tgt_config *next,
		   const struct tgt_plan_env *env, struct tgt_plan *plan, struct diag *d)
{
	int errors0 = d->errors;
	unsigned n = 0;

	memset(plan, 0, sizeof(*plan));
	unsigned ntargets = 1;

	for (unsigned i = 0; i < old->ndrivers; i++)
		ntargets += old->drivers[i].ntargets;
	for (unsigned i = 0; i < next->ndrivers; i++)
		ntargets += next->drivers[i].ntargets;
	plan->devs = calloc(old->ndevices + next->ndevices + 1, sizeof(*plan->devs));
	plan->drvs = calloc(old->ndrivers + next->ndrivers + 1, sizeof(*plan->drvs));
	plan->tgts = calloc(ntargets, sizeof(*plan->tgts));
	if (!plan->devs || !plan->drvs || !plan->tgts) {
		tgt_plan_free(plan);
		diag_error(d, 0, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < next->ndevices; i++) {
		struct tgt_device *nd = &next->devices[i];
		plan_device(old, next, device_named(old, nd->name), nd, env, &plan->devs[n++], d);
	}
	for (unsigned i = 0; i < old->ndevices; i++)
		if (!device_named(next, old->devices[i].name))
			plan_device(old, next, &old->devices[i], NULL, env, &plan->devs[n++], d);
	plan->ndevs = n;
	n = 0;
	for (unsigned i = 0; i < next->ndrivers; i++)
		plan_driver(tgt_config_driver(old, next->drivers[i].name), &next->drivers[i], env,
			    &plan->drvs[n++], d);
	for (unsigned i = 0; i < old->ndrivers; i++)
		if (!tgt_config_driver(next, old->drivers[i].name))
			plan_driver(&old->drivers[i], NULL, env, &plan->drvs[n++], d);
	/* a driver that was not in the running configuration but runs anyway cannot happen:
	 * started drivers are those of the running configuration */
	plan->ndrvs = n;
	plan->ntgts = plan_targets(old, next, plan->tgts);
	plan->same = same_text(old, next);
	if (d->errors != errors0) {
		tgt_plan_free(plan);
		return -1;
	}
	return 0;
}

void tgt_plan_free(struct tgt_plan *plan)
{
	free(plan->devs);
	free(plan->drvs);
	free(plan->tgts);
	memset(plan, 0, sizeof(*plan));
}
