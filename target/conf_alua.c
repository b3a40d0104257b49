/* DEVICE_GROUP / TARGET_GROUP blocks: SCST's implicit ALUA configuration.  A device group
 * names devices sharing ALUA state; each target group has an id, an access state, a
 * preference bit and the targets (local, or on another node of an H.A. pair, known by their
 * rel_tgt_id only) that are its ports. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "target/conf_load.h"

struct member {
	const struct tgt_device_group *dg;
	const struct tgt_target_group *tg;
	int line;
};

static const struct {
	const char *name;
	enum scsi_alua_state state;
} alua_states[] = {
    {"active", ALUA_ACTIVE_OPTIMIZED}, {"nonoptimized", ALUA_ACTIVE_NONOPTIMIZED},
    {"standby", ALUA_STANDBY},	       {"unavailable", ALUA_UNAVAILABLE},
    {"offline", ALUA_OFFLINE},	       {"transitioning", ALUA_TRANSITIONING},
};

static struct member *new_member(struct conf_loader *L, const struct tgt_device_group *dg,
				 const struct tgt_target_group *tg, int line)
{
	struct member *m = conf_alloc(L, 1, sizeof(*m));
	if (m) {
		m->dg = dg;
		m->tg = tg;
		m->line = line;
	}
	return m;
}

static void load_tg_target(struct conf_loader *L, struct tgt_device_group *dg,
			   struct tgt_target_group *tg, const struct conf_node *n,
			   struct conf_index *seen)
{
	struct tgt_tg_target *tt = &tg->targets[tg->ntargets];
	struct tgt_target *local;
	char ctx[512];
	uint64_t id = 0;
	const struct utgt_attr *a;

	if (!conf_shape(L, n, 2, true, "TARGET <name> [{ rel_tgt_id <n> }]") ||
	    !conf_name(L, tt->name, sizeof(tt->name), n->w[1], n->line, "target"))
		return;
	struct member *m = new_member(L, dg, tg, n->line);
	if (!m)
		return;
	const struct member *prev = conf_index_put(seen, tt->name, m);
	if (seen->oom) {
		L->oom = true;
		return;
	}
	if (prev && prev->tg == tg) {
		diag_error(L->d, n->line,
			   "duplicate TARGET '%s' in TARGET_GROUP %s (first at line %d)", tt->name,
			   tg->name, prev->line);
		return;
	}
	if (prev) {
		diag_error(L->d, n->line,
			   "TARGET %s is already in TARGET_GROUP %s of DEVICE_GROUP %s (line %d)",
			   tt->name, prev->tg->name, dg->name, prev->line);
		return;
	}
	tt->line = n->line;
	snprintf(ctx, sizeof(ctx), "TARGET %s of TARGET_GROUP %s", tt->name, tg->name);
	if (!conf_attrs_reserve(L, &tt->attrs, n->nkids))
		return;
	for (unsigned i = 0; i < n->nkids; i++) {
		const struct conf_node *k = &n->kids[i];
		if (conf_keyword(L, k) != KW_NONE)
			conf_misplaced(L, k, "inside a TARGET_GROUP's TARGET (rel_tgt_id only)");
		else
			conf_attr(L, &tt->attrs, k, CONF_SCOPE_TG_TARGET, NULL, NULL, ctx);
	}
	a = tgt_attr_find(&tt->attrs, "rel_tgt_id");
	if (a && !conf_uint(L, a->value, a->line, "rel_tgt_id", 1, 65535, &id))
		return;
	local = conf_index_get(&L->targets, tt->name);
	tt->local = local;
	if (local && a) {
		if (local->rel_tgt_id_line && local->rel_tgt_id != id) {
			diag_error(
			    L->d, a->line,
			    "rel_tgt_id %llu of TARGET %s in TARGET_GROUP %s differs from the "
			    "target's own rel_tgt_id %u (line %d)",
			    (unsigned long long)id, tt->name, tg->name, local->rel_tgt_id,
			    local->rel_tgt_id_line);
			return;
		}
		local->rel_tgt_id = (uint16_t)id;
		local->rel_tgt_id_line = a->line;
	} else if (!local && !a) {
		diag_error(L->d, n->line,
			   "TARGET %s in TARGET_GROUP %s is not defined in this file and has no "
			   "rel_tgt_id (a target on another node is known by its rel_tgt_id)",
			   tt->name, tg->name);
		return;
	}
	tt->rel_tgt_id = (uint16_t)id;
	tg->ntargets++;
}

static void tg_fields(struct conf_loader *L, struct tgt_device_group *dg,
		      struct tgt_target_group *tg, const struct conf_node *n, struct scsi_tpg *tpg)
{
	const struct utgt_attr *a;
	uint64_t v;

	snprintf(tpg->name, sizeof(tpg->name), "%s", tg->name);
	tpg->state = ALUA_ACTIVE_OPTIMIZED;
	a = tgt_attr_find(&tg->attrs, "group_id");
	if (!a)
		diag_error(L->d, n->line, "TARGET_GROUP %s has no group_id", tg->name);
	else if (conf_uint(L, a->value, a->line, "group_id", 0, 65535, &v)) {
		tpg->group_id = (uint16_t)v;
		for (unsigned i = 0; i < dg->ntgroups; i++) {
			const struct utgt_attr *o =
			    tgt_attr_find(&dg->tgroups[i].attrs, "group_id");
			uint64_t ov;
			if (o && parse_u64(o->value, &ov) && ov == v) {
				diag_error(L->d, a->line,
					   "group_id %llu of TARGET_GROUP %s is already used by "
					   "TARGET_GROUP %s (line %d)",
					   (unsigned long long)v, tg->name, dg->tgroups[i].name,
					   o->line);
				break;
			}
		}
	}
	a = tgt_attr_find(&tg->attrs, "state");
	if (a) {
		size_t i;
		for (i = 0; i < sizeof(alua_states) / sizeof(alua_states[0]); i++)
			if (!strcasecmp(a->value, alua_states[i].name))
				break;
		if (i < sizeof(alua_states) / sizeof(alua_states[0]))
			tpg->state = alua_states[i].state;
		else
			diag_error(
			    L->d, a->line,
			    "invalid ALUA state '%s': expected active, nonoptimized, standby, "
			    "unavailable, offline or transitioning",
			    a->value);
	}
	a = tgt_attr_find(&tg->attrs, "preferred");
	if (a)
		conf_bool(L, a, &tpg->preferred);
}

static void load_tg(struct conf_loader *L, struct tgt_device_group *dg, struct scsi_alua_group *ag,
		    const struct conf_node *n, struct conf_index *seen)
{
	struct tgt_target_group *tg = &dg->tgroups[dg->ntgroups];
	char ctx[128];

	if (!conf_shape(L, n, 2, true,
			"TARGET_GROUP <name> { group_id ... state ... TARGET ... }") ||
	    !conf_name(L, tg->name, sizeof(tg->name), n->w[1], n->line, "target group"))
		return;
	for (unsigned i = 0; i < dg->ntgroups; i++)
		if (!strcmp(dg->tgroups[i].name, tg->name)) {
			diag_error(
			    L->d, n->line,
			    "duplicate TARGET_GROUP '%s' in DEVICE_GROUP %s (first at line %d)",
			    tg->name, dg->name, dg->tgroups[i].line);
			return;
		}
	tg->line = n->line;
	snprintf(ctx, sizeof(ctx), "TARGET_GROUP %s", tg->name);
	tg->targets = conf_alloc(L, conf_count_kw(n, "TARGET"), sizeof(*tg->targets));
	if (L->oom || !conf_attrs_reserve(L, &tg->attrs, n->nkids))
		return;
	for (unsigned i = 0; i < n->nkids && !L->oom; i++) {
		const struct conf_node *k = &n->kids[i];
		switch (conf_keyword(L, k)) {
		case KW_TARGET:
			load_tg_target(L, dg, tg, k, seen);
			break;
		case KW_NONE:
			conf_attr(L, &tg->attrs, k, CONF_SCOPE_TARGET_GROUP, NULL, NULL, ctx);
			break;
		default:
			conf_misplaced(L, k, "inside TARGET_GROUP (TARGET and attributes only)");
			break;
		}
	}
	tg_fields(L, dg, tg, n, &ag->tpgs[dg->ntgroups]);
	dg->ntgroups++;
}

static void load_dg_device(struct conf_loader *L, struct tgt_device_group *dg,
			   const struct conf_node *n, struct conf_index *members)
{
	struct tgt_device *dev;

	if (!conf_shape(L, n, 2, false, "DEVICE <name>"))
		return;
	dev = conf_index_get(&L->devices, n->w[1]);
	if (!dev) {
		diag_error(
		    L->d, n->line,
		    "DEVICE_GROUP %s: device '%s' is not defined (no DEVICE %s in any HANDLER)",
		    dg->name, n->w[1], n->w[1]);
		return;
	}
	struct member *m = new_member(L, dg, NULL, n->line);
	if (!m)
		return;
	const struct member *prev = conf_index_put(members, dev->name, m);
	if (members->oom) {
		L->oom = true;
		return;
	}
	if (prev && prev->dg == dg) {
		diag_error(L->d, n->line,
			   "duplicate DEVICE '%s' in DEVICE_GROUP %s (first at line %d)", dev->name,
			   dg->name, prev->line);
		return;
	}
	if (prev) {
		diag_error(
		    L->d, n->line,
		    "device '%s' is already in DEVICE_GROUP %s (line %d); a device belongs to "
		    "one DEVICE_GROUP at most",
		    dev->name, prev->dg->name, prev->line);
		return;
	}
	dg->devices[dg->ndevices++] = dev;
}

static void load_dg(struct conf_loader *L, const struct conf_node *n, struct conf_index *members)
{
	struct tgt_config *cfg = L->cfg;
	struct tgt_device_group *dg = &cfg->device_groups[cfg->nalua_groups];
	struct scsi_alua_group *ag = &cfg->alua_groups[cfg->nalua_groups];
	struct conf_index seen;
	char ctx[128];

	if (!conf_shape(L, n, 2, true, "DEVICE_GROUP <name> { DEVICE ... TARGET_GROUP ... }") ||
	    !conf_name(L, dg->name, sizeof(dg->name), n->w[1], n->line, "device group"))
		return;
	for (unsigned i = 0; i < cfg->nalua_groups; i++)
		if (!strcmp(cfg->device_groups[i].name, dg->name)) {
			diag_error(L->d, n->line, "duplicate DEVICE_GROUP '%s' (first at line %d)",
				   dg->name, cfg->device_groups[i].line);
			return;
		}
	dg->line = n->line;
	dg->alua = ag;
	snprintf(ag->name, sizeof(ag->name), "%s", dg->name);
	snprintf(ctx, sizeof(ctx), "DEVICE_GROUP %s", dg->name);
	dg->devices = conf_alloc(L, conf_count_kw(n, "DEVICE"), sizeof(*dg->devices));
	dg->tgroups = conf_alloc(L, conf_count_kw(n, "TARGET_GROUP"), sizeof(*dg->tgroups));
	ag->tpgs = conf_alloc(L, conf_count_kw(n, "TARGET_GROUP"), sizeof(*ag->tpgs));
	if (L->oom || !conf_attrs_reserve(L, &dg->attrs, n->nkids) ||
	    !conf_index_init(&seen, 8, false)) {
		L->oom = true;
		return;
	}
	cfg->nalua_groups++;
	for (unsigned i = 0; i < n->nkids && !L->oom; i++) {
		const struct conf_node *k = &n->kids[i];
		switch (conf_keyword(L, k)) {
		case KW_DEVICE:
			load_dg_device(L, dg, k, members);
			break;
		case KW_TARGET_GROUP:
			load_tg(L, dg, ag, k, &seen);
			break;
		case KW_NONE:
			conf_attr(L, &dg->attrs, k, CONF_SCOPE_DEVICE_GROUP, NULL, NULL, ctx);
			break;
		default:
			conf_misplaced(L, k,
				       "inside DEVICE_GROUP (DEVICE, TARGET_GROUP and attributes "
				       "only)");
			break;
		}
	}
	ag->ntpgs = dg->ntgroups;
	conf_index_free(&seen);
}

void conf_load_alua(struct conf_loader *L, const struct conf_node *const *groups, unsigned n)
{
	struct conf_index members;

	if (L->oom)
		return;
	L->cfg->device_groups = conf_alloc(L, n, sizeof(*L->cfg->device_groups));
	L->cfg->alua_groups = conf_alloc(L, n, sizeof(*L->cfg->alua_groups));
	if (L->oom || !conf_index_init(&members, 16, false)) {
		L->oom = true;
		return;
	}
	for (unsigned i = 0; i < n && !L->oom; i++)
		load_dg(L, groups[i], &members);
	conf_index_free(&members);
}

/* Ports get their final rel_tgt_id (local targets may have been assigned one); devices point
 * at their group so REPORT TARGET PORT GROUPS and VPD 83 can see it. */
void conf_finish_alua(struct conf_loader *L)
{
	struct tgt_config *cfg = L->cfg;

	if (L->oom)
		return;
	for (unsigned i = 0; i < cfg->nalua_groups; i++) {
		struct tgt_device_group *dg = &cfg->device_groups[i];
		for (unsigned g = 0; g < dg->ntgroups; g++) {
			struct tgt_target_group *tg = &dg->tgroups[g];
			struct scsi_tpg *tpg = &dg->alua->tpgs[g];
			tpg->rel_tgt_ids = conf_alloc(L, tg->ntargets, sizeof(*tpg->rel_tgt_ids));
			if (tg->ntargets && !tpg->rel_tgt_ids)
				return;
			for (unsigned t = 0; t < tg->ntargets; t++) {
				struct tgt_tg_target *tt = &tg->targets[t];
				if (tt->local) {
					tt->rel_tgt_id = tt->local->rel_tgt_id;
					tpg->local = true;
				}
				tpg->rel_tgt_ids[t] = tt->rel_tgt_id;
			}
			tpg->nports = tg->ntargets;
		}
		for (unsigned d = 0; d < dg->ndevices; d++)
			if (dg->devices[d]->dev)
				dg->devices[d]->dev->alua = dg->alua;
	}
}
