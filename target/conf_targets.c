/* TARGET_DRIVER / TARGET / LUN / GROUP / INITIATOR blocks of scst.conf, and the checks that
 * span targets: rel_tgt_id uniqueness and assignment, LUN tables, "no LUN 0" warnings. */
#include <stdlib.h>
#include <string.h>

#include "target/conf_load.h"

#define LUN_MAX 16383 /* SAM flat space addressing; what SCST accepts */

struct lun_seen {
	uint64_t bits[(LUN_MAX + 1 + 63) / 64];
};

static void load_lun(struct conf_loader *L, struct tgt_lun *luns, unsigned *nluns,
		     struct lun_seen *seen, const struct conf_node *n, const char *driver)
{
	struct tgt_lun *l = &luns[*nluns];
	uint64_t num;
	char ctx[48];

	if (!conf_shape(L, n, 3, true, "LUN <number> <device> [{ read_only 1 }]") ||
	    !conf_uint(L, n->w[1], n->line, "LUN number", 0, LUN_MAX, &num))
		return;
	if (seen->bits[num / 64] & (1ull << (num % 64))) {
		int first = 0;
		for (unsigned i = 0; i < *nluns; i++)
			if (luns[i].lun == num)
				first = luns[i].line;
		diag_error(L->d, n->line, "duplicate LUN %llu (first at line %d)",
			   (unsigned long long)num, first);
		return;
	}
	l->lun = num;
	l->line = n->line;
	if (!conf_name(L, l->device, sizeof(l->device), n->w[2], n->line, "device"))
		return;
	l->dev = conf_index_get(&L->devices, l->device);
	if (!l->dev) {
		diag_error(L->d, n->line,
			   "LUN %llu: device '%s' is not defined (no DEVICE %s in any "
			   "HANDLER)",
			   (unsigned long long)num, l->device, l->device);
		return;
	}
	seen->bits[num / 64] |= 1ull << (num % 64);
	snprintf(ctx, sizeof(ctx), "LUN %llu", (unsigned long long)num);
	if (!conf_attrs_reserve(L, &l->attrs, n->nkids))
		return;
	for (unsigned i = 0; i < n->nkids; i++) {
		const struct conf_node *a = &n->kids[i];
		if (conf_keyword(L, a) != KW_NONE) {
			conf_misplaced(L, a, "inside LUN (it takes read_only only)");
			continue;
		}
		if (!conf_attr(L, &l->attrs, a, CONF_SCOPE_LUN, driver, NULL, ctx))
			continue;
		if (!strcasecmp(a->w[0], "read_only"))
			conf_bool(L, &l->attrs.a[l->attrs.n - 1], &l->read_only);
	}
	(*nluns)++;
}

/* Where each INITIATOR pattern of one target was seen: SCST puts an initiator in one group. */
struct ini_seen {
	const struct tgt_group *group;
	int line;
};

static void load_initiator(struct conf_loader *L, struct tgt_target *t, struct tgt_group *g,
			   const struct conf_node *n, struct conf_index *inits)
{
	if (!conf_shape(L, n, 2, false, "INITIATOR <name or pattern>"))
		return;
	if (!*n->w[1]) {
		diag_error(L->d, n->line, "empty INITIATOR pattern");
		return;
	}
	char *pat = tgt_arena_strdup(L->ar, n->w[1]);
	struct ini_seen *rec = conf_alloc(L, 1, sizeof(*rec));
	if (!pat || !rec) {
		L->oom = true;
		return;
	}
	rec->group = g;
	rec->line = n->line;
	struct ini_seen *prev = conf_index_put(inits, pat, rec);
	if (prev && prev->group == g) {
		diag_error(L->d, n->line, "duplicate INITIATOR '%s' in GROUP %s (first at line %d)",
			   pat, g->name, prev->line);
		return;
	}
	if (prev) {
		diag_error(L->d, n->line,
			   "initiator '%s' is already in GROUP %s of TARGET %s (line %d); an "
			   "initiator may belong to one GROUP per target",
			   pat, prev->group->name, t->name, prev->line);
		return;
	}
	if (inits->oom)
		L->oom = true;
	g->initiators[g->ninitiators++] = pat;
}

static void load_group(struct conf_loader *L, struct tgt_target *t, const struct conf_node *n,
		       struct conf_index *inits)
{
	struct tgt_group *g = &t->groups[t->ngroups];
	struct lun_seen seen = {0};
	char ctx[128];

	if (!conf_shape(L, n, 2, true, "GROUP <name> { LUN ... INITIATOR ... }") ||
	    !conf_name(L, g->name, sizeof(g->name), n->w[1], n->line, "group"))
		return;
	for (unsigned i = 0; i < t->ngroups; i++)
		if (!strcmp(t->groups[i].name, g->name)) {
			diag_error(L->d, n->line,
				   "duplicate GROUP '%s' in TARGET %s (first at line %d)", g->name,
				   t->name, t->groups[i].line);
			return;
		}
	g->line = n->line;
	t->ngroups++;
	snprintf(ctx, sizeof(ctx), "GROUP %s", g->name);
	g->luns = conf_alloc(L, conf_count_kw(n, "LUN"), sizeof(*g->luns));
	g->initiators = conf_alloc(L, conf_count_kw(n, "INITIATOR"), sizeof(*g->initiators));
	if (L->oom || !conf_attrs_reserve(L, &g->attrs, n->nkids))
		return;
	for (unsigned i = 0; i < n->nkids && !L->oom; i++) {
		const struct conf_node *k = &n->kids[i];
		switch (conf_keyword(L, k)) {
		case KW_LUN:
			load_lun(L, g->luns, &g->nluns, &seen, k, t->driver->name);
			break;
		case KW_INITIATOR:
			load_initiator(L, t, g, k, inits);
			break;
		case KW_NONE:
			conf_attr(L, &g->attrs, k, CONF_SCOPE_GROUP, t->driver->name,
				  t->driver->transport, ctx);
			break;
		default:
			conf_misplaced(L, k, "inside GROUP (LUN, INITIATOR and attributes only)");
			break;
		}
	}
}

/* Attributes the model turns into fields. */
static void target_fields(struct conf_loader *L, struct tgt_target *t, const struct utgt_attr *a)
{
	uint64_t v;

	if (!strcasecmp(a->key, "enabled")) {
		conf_bool(L, a, &t->enabled);
	} else if (!strcasecmp(a->key, "per_portal_acl")) {
		conf_bool(L, a, &t->per_portal_acl);
	} else if (!strcasecmp(a->key, "rel_tgt_id")) {
		if (parse_u64(a->value, &v) && v == 0) {
			/* SCST shows an unset id as 0 and -write_config -nonkey writes it */
			diag_warn(
			    L->d, a->line,
			    "rel_tgt_id 0 means 'not set' in SCST; TARGET %s gets one assigned",
			    t->name);
			return;
		}
		if (conf_uint(L, a->value, a->line, "rel_tgt_id", 1, 65535, &v)) {
			t->rel_tgt_id = (uint16_t)v;
			t->rel_tgt_id_line = a->line;
		}
	}
}

static void load_target(struct conf_loader *L, struct tgt_driver *drv, const struct conf_node *n,
			struct conf_index *names)
{
	struct tgt_target *t = &drv->targets[drv->ntargets];
	struct lun_seen seen = {0};
	struct conf_index inits;
	char ctx[512];

	if (!conf_shape(L, n, 2, true, "TARGET <name> [{ ... }]") ||
	    !conf_name(L, t->name, sizeof(t->name), n->w[1], n->line, "target"))
		return;
	t->line = n->line;
	t->driver = drv;
	struct tgt_target *first = conf_index_put(names, t->name, t);
	if (first) {
		diag_error(L->d, n->line,
			   "duplicate TARGET '%s' in TARGET_DRIVER %s (first at line %d)", t->name,
			   drv->name, first->line);
		return;
	}
	conf_index_put(&L->targets, t->name, t);
	if (names->oom || L->targets.oom)
		L->oom = true;
	drv->ntargets++;
	/* SCST's copy_manager target is always on; every other target starts disabled */
	t->enabled = !strcmp(drv->name, "copy_manager");
	snprintf(ctx, sizeof(ctx), "TARGET %s", t->name);
	t->luns = conf_alloc(L, conf_count_kw(n, "LUN"), sizeof(*t->luns));
	t->groups = conf_alloc(L, conf_count_kw(n, "GROUP"), sizeof(*t->groups));
	if (L->oom || !conf_attrs_reserve(L, &t->attrs, n->nkids) ||
	    !conf_index_init(&inits, 8, true)) {
		L->oom = true;
		return;
	}
	for (unsigned i = 0; i < n->nkids && !L->oom; i++) {
		const struct conf_node *k = &n->kids[i];
		switch (conf_keyword(L, k)) {
		case KW_HW_TARGET:
			if (conf_shape(L, k, 1, false, "HW_TARGET"))
				t->hw_target = true;
			break;
		case KW_LUN:
			load_lun(L, t->luns, &t->nluns, &seen, k, drv->name);
			break;
		case KW_GROUP:
			load_group(L, t, k, &inits);
			break;
		case KW_NONE:
			if (conf_attr(L, &t->attrs, k, CONF_SCOPE_TARGET, drv->name, drv->transport,
				      ctx))
				target_fields(L, t, &t->attrs.a[t->attrs.n - 1]);
			break;
		default:
			conf_misplaced(L, k,
				       "inside TARGET (LUN, GROUP, HW_TARGET and attributes only)");
			break;
		}
	}
	conf_index_free(&inits);
	if (drv->known && !t->enabled && !tgt_attr_find(&t->attrs, "enabled"))
		diag_warn(L->d, n->line,
			  "TARGET %s has no 'enabled 1': it is configured but accepts no logins "
			  "(SCST's default)",
			  t->name);
}

static void load_driver(struct conf_loader *L, const struct conf_node *n)
{
	struct tgt_config *cfg = L->cfg;
	struct tgt_driver *drv = &cfg->drivers[cfg->ndrivers];
	struct conf_index names;
	char ctx[64];

	if (!conf_shape(L, n, 2, true, "TARGET_DRIVER <name> { ... }") ||
	    !conf_name(L, drv->name, sizeof(drv->name), n->w[1], n->line, "target driver"))
		return;
	for (unsigned i = 0; i < cfg->ndrivers; i++)
		if (!strcmp(cfg->drivers[i].name, drv->name)) {
			diag_error(L->d, n->line, "duplicate TARGET_DRIVER '%s' (first at line %d)",
				   drv->name, cfg->drivers[i].line);
			return;
		}
	cfg->ndrivers++;
	drv->line = n->line;
	drv->known = tgt_driver_is_known(drv->name);
	drv->transport = tgt_transport_find(drv->name);
	drv->enabled = true;
	if (!strcmp(drv->name, "iser"))
		diag_error(L->d, n->line,
			   "TARGET_DRIVER iser: SCST has no such driver; iSER targets are iSCSI "
			   "targets (TARGET_DRIVER iscsi, RDMAExtensions Yes, the default; "
			   "listen_iser ADDR:PORT for the RDMA/CM portal, docs/iser.md)");
	else if (!drv->known)
		diag_warn(
		    L->d, n->line,
		    "unknown target driver '%s': kept in the configuration, not served by utgt",
		    drv->name);
	snprintf(ctx, sizeof(ctx), "TARGET_DRIVER %s", drv->name);
	drv->targets = conf_alloc(L, conf_count_kw(n, "TARGET"), sizeof(*drv->targets));
	if (L->oom || !conf_attrs_reserve(L, &drv->attrs, n->nkids) ||
	    !conf_index_init(&names, conf_count_kw(n, "TARGET"), false)) {
		L->oom = true;
		return;
	}
	for (unsigned i = 0; i < n->nkids && !L->oom; i++) {
		const struct conf_node *k = &n->kids[i];
		switch (conf_keyword(L, k)) {
		case KW_TARGET:
			load_target(L, drv, k, &names);
			break;
		case KW_NONE:
			if (conf_attr(L, &drv->attrs, k, CONF_SCOPE_DRIVER, drv->name,
				      drv->transport, ctx) &&
			    !strcasecmp(k->w[0], "enabled"))
				conf_bool(L, &drv->attrs.a[drv->attrs.n - 1], &drv->enabled);
			break;
		default:
			conf_misplaced(L, k, "inside TARGET_DRIVER (TARGET and attributes only)");
			break;
		}
	}
	conf_index_free(&names);
}

void conf_load_targets(struct conf_loader *L, const struct conf_node *const *drivers, unsigned n)
{
	unsigned ntargets = 0;

	for (unsigned i = 0; i < n; i++)
		ntargets += conf_count_kw(drivers[i], "TARGET");
	L->cfg->drivers = conf_alloc(L, n, sizeof(*L->cfg->drivers));
	if (L->oom || !conf_index_init(&L->targets, ntargets, false)) {
		L->oom = true;
		return;
	}
	for (unsigned i = 0; i < n && !L->oom; i++)
		load_driver(L, drivers[i]);
}

/* ---- after DEVICE_GROUPs ---- */

/* SCST: rel_tgt_id is unique among targets, though disabled targets may share one (SCST then
 * refuses to enable the second).  Targets without one get the lowest free id, in file order. */
static void assign_rel_tgt_ids(struct conf_loader *L)
{
	struct tgt_config *cfg = L->cfg;
	struct tgt_target **owner = calloc(65536, sizeof(*owner));
	unsigned next = 1;

	if (!owner) {
		L->oom = true;
		return;
	}
	for (unsigned d = 0; d < cfg->ndrivers; d++)
		for (unsigned i = 0; i < cfg->drivers[d].ntargets; i++) {
			struct tgt_target *t = &cfg->drivers[d].targets[i];
			struct tgt_target *o = t->rel_tgt_id_line ? owner[t->rel_tgt_id] : NULL;
			if (!t->rel_tgt_id_line)
				continue;
			if (!o) {
				owner[t->rel_tgt_id] = t;
				continue;
			}
			if (o->enabled && t->enabled)
				diag_error(
				    L->d, t->rel_tgt_id_line,
				    "rel_tgt_id %u of TARGET %s is already used by TARGET %s "
				    "(line %d)",
				    t->rel_tgt_id, t->name, o->name, o->rel_tgt_id_line);
			else
				diag_warn(
				    L->d, t->rel_tgt_id_line,
				    "rel_tgt_id %u of TARGET %s is also used by TARGET %s (line "
				    "%d); only one of them can be enabled",
				    t->rel_tgt_id, t->name, o->name, o->rel_tgt_id_line);
		}
	for (unsigned d = 0; d < cfg->ndrivers; d++)
		for (unsigned i = 0; i < cfg->drivers[d].ntargets; i++) {
			struct tgt_target *t = &cfg->drivers[d].targets[i];
			if (t->rel_tgt_id_line)
				continue;
			while (next <= 65535 && owner[next])
				next++;
			if (next > 65535) {
				diag_error(L->d, t->line, "no free rel_tgt_id left for TARGET %s",
					   t->name);
				continue;
			}
			t->rel_tgt_id = (uint16_t)next;
			owner[next] = t;
		}
	free(owner);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct scsi_lun_entry *x = a, *y = b;
	return x->lun < y->lun ? -1 : x->lun > y->lun;
}

static void build_table(struct conf_loader *L, struct scsi_lun_table *tab,
			const struct tgt_lun *luns, unsigned n)
{
	tab->n = 0;
	tab->e = n ? conf_alloc(L, n, sizeof(*tab->e)) : NULL;
	if (n && !tab->e)
		return;
	for (unsigned i = 0; i < n; i++) {
		if (!luns[i].dev || !luns[i].dev->dev)
			continue; /* only when the load failed anyway */
		tab->e[tab->n].lun = luns[i].lun;
		tab->e[tab->n].dev = luns[i].dev->dev;
		tab->e[tab->n].read_only = luns[i].read_only;
		tab->n++;
	}
	if (tab->n > 1)
		qsort(tab->e, tab->n, sizeof(*tab->e), cmp_entry);
}

static bool has_lun0(const struct tgt_lun *luns, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (luns[i].lun == 0)
			return true;
	return false;
}

void conf_finish_targets(struct conf_loader *L)
{
	struct tgt_config *cfg = L->cfg;

	if (L->oom)
		return;
	assign_rel_tgt_ids(L);
	for (unsigned d = 0; d < cfg->ndrivers && !L->oom; d++)
		for (unsigned i = 0; i < cfg->drivers[d].ntargets; i++) {
			struct tgt_target *t = &cfg->drivers[d].targets[i];
			build_table(L, &t->table, t->luns, t->nluns);
			if (t->nluns && !has_lun0(t->luns, t->nluns))
				diag_warn(L->d, t->line,
					  "TARGET %s: its LUN set has no LUN 0; initiators may not "
					  "scan it",
					  t->name);
			for (unsigned g = 0; g < t->ngroups; g++) {
				struct tgt_group *grp = &t->groups[g];
				build_table(L, &grp->table, grp->luns, grp->nluns);
				if (grp->nluns && !has_lun0(grp->luns, grp->nluns))
					diag_warn(
					    L->d, grp->line,
					    "GROUP %s of TARGET %s: its LUN set has no LUN 0; "
					    "initiators may not scan it",
					    grp->name, t->name);
			}
		}
}
