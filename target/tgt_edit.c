/* Live administration's verbs as edits of the running configuration's tree (tgt_edit.h).
 * Each verb finds its block, checks what only the verb can say ("no LUN 3 in TARGET t", "DEVICE
 * d is used by ..."), and edits; the loader then judges the result as it would a file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "target/conf_load.h"
#include "target/tgt_edit.h"

static const char *opt(const struct tgt_edit *e, const char *key)
{
	for (unsigned i = 0; i < e->nopts; i++)
		if (!strcmp(e->opts[i].key, key))
			return e->opts[i].value;
	return NULL;
}

/* Options that name where the object is, not attributes of it. */
static bool placement_key(enum tgt_edit_obj obj, const char *key)
{
	static const char *const keys[][6] = {
	    [OBJ_DEVICE] = {"handler"},
	    [OBJ_TARGET] = {"driver"},
	    [OBJ_DRIVER] = {NULL},
	    [OBJ_GROUP] = {"driver", "target"},
	    [OBJ_LUN] = {"driver", "target", "group", "device", "read_only"},
	    [OBJ_INITIATOR] = {"driver", "target", "group"},
	    [OBJ_TGROUP] = {"dgroup"},
	};
	for (unsigned i = 0; i < 6 && keys[obj][i]; i++)
		if (!strcmp(keys[obj][i], key))
			return true;
	return false;
}

/* The attributes of an add or set: every option but the placement ones. */
static int put_attrs(struct conf_node *n, const struct tgt_edit *e, char *err, size_t errlen)
{
	for (unsigned i = 0; i < e->nopts; i++) {
		const struct tgt_edit_opt *o = &e->opts[i];

		if (placement_key(e->obj, o->key))
			continue;
		if (!strcasecmp(o->key, "enabled") && e->obj == OBJ_DEVICE) {
			snprintf(err, errlen, "'enabled' is not a DEVICE attribute");
			return -1;
		}
		if (!o->value[0] ? (conf_tree_unset(n, o->key), false)
				 : !conf_tree_set(n, o->key, o->value)) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

static bool has_attrs(const struct tgt_edit *e)
{
	for (unsigned i = 0; i < e->nopts; i++)
		if (!placement_key(e->obj, e->opts[i].key))
			return true;
	return false;
}

static const char *need(const struct tgt_edit *e, const char *key, char *err, size_t errlen)
{
	const char *v = opt(e, key);

	if (!v || !v[0])
		snprintf(err, errlen, "%s=NAME is needed", key);
	return v && v[0] ? v : NULL;
}

/* ---- finding blocks ---- */

static struct conf_node *device_node(struct conf_node *root, const char *name, unsigned *idx,
				     struct conf_node **handler)
{
	for (unsigned h = 0; h < root->nkids; h++) {
		struct conf_node *hn = &root->kids[h];

		if (hn->nw < 2 || strcmp(hn->w[0], "HANDLER"))
			continue;
		for (unsigned i = 0; i < hn->nkids; i++) {
			struct conf_node *d = &hn->kids[i];
			if (d->nw >= 2 && !strcmp(d->w[0], "DEVICE") && !strcmp(d->w[1], name)) {
				if (idx)
					*idx = i;
				if (handler)
					*handler = hn;
				return d;
			}
		}
	}
	return NULL;
}

static struct conf_node *driver_node(struct conf_node *root, const struct tgt_edit *e, char *err,
				     size_t errlen)
{
	const char *d = need(e, "driver", err, errlen);
	struct conf_node *n = d ? conf_tree_find(root, "TARGET_DRIVER", d) : NULL;

	if (d && !n)
		snprintf(err, errlen, "no TARGET_DRIVER '%s'", d);
	return n;
}

static struct conf_node *target_node(struct conf_node *root, const struct tgt_edit *e,
				     const char *name, char *err, size_t errlen)
{
	struct conf_node *drv = driver_node(root, e, err, errlen);
	struct conf_node *t = drv ? conf_tree_find(drv, "TARGET", name) : NULL;

	if (drv && !t)
		snprintf(err, errlen, "no TARGET '%s' in driver %s", name, drv->w[1]);
	return t;
}

static struct conf_node *group_node(struct conf_node *root, const struct tgt_edit *e,
				    const char *name, char *err, size_t errlen)
{
	const char *tn = need(e, "target", err, errlen);
	struct conf_node *t = tn ? target_node(root, e, tn, err, errlen) : NULL;
	struct conf_node *g = t ? conf_tree_find(t, "GROUP", name) : NULL;

	if (t && !g)
		snprintf(err, errlen, "no GROUP '%s' in TARGET %s", name, tn);
	return g;
}

static int child_index(const struct conf_node *parent, const struct conf_node *child)
{
	return (int)(child - parent->kids);
}

/* ---- devices ---- */

bool tgt_device_used_by(const struct tgt_config *cfg, const char *name, char *where, size_t len)
{
	for (unsigned d = 0; d < cfg->ndrivers; d++) {
		const struct tgt_driver *drv = &cfg->drivers[d];

		if (!strcmp(drv->name, "copy_manager"))
			continue; /* SCST maintains those LUNs itself: they follow the device */
		for (unsigned i = 0; i < drv->ntargets; i++) {
			const struct tgt_target *t = &drv->targets[i];
			for (unsigned l = 0; l < t->nluns; l++)
				if (!strcmp(t->luns[l].device, name)) {
					snprintf(where, len, "LUN %llu of TARGET %s (driver %s)",
						 (unsigned long long)t->luns[l].lun, t->name,
						 drv->name);
					return true;
				}
			for (unsigned g = 0; g < t->ngroups; g++)
				for (unsigned l = 0; l < t->groups[g].nluns; l++)
					if (!strcmp(t->groups[g].luns[l].device, name)) {
						snprintf(
						    where, len,
						    "LUN %llu of GROUP %s of TARGET %s (driver %s)",
						    (unsigned long long)t->groups[g].luns[l].lun,
						    t->groups[g].name, t->name, drv->name);
						return true;
					}
		}
	}
	return false;
}

/* The device's other mentions go with it: its copy_manager LUNs and DEVICE_GROUP entries. */
static void forget_device(struct conf_node *root, const char *name)
{
	for (unsigned i = 0; i < root->nkids; i++) {
		struct conf_node *b = &root->kids[i];

		if (b->nw >= 2 && !strcmp(b->w[0], "DEVICE_GROUP")) {
			for (unsigned k = b->nkids; k-- > 0;)
				if (b->kids[k].nw >= 2 && !strcmp(b->kids[k].w[0], "DEVICE") &&
				    !strcmp(b->kids[k].w[1], name))
					conf_tree_remove(b, k);
		} else if (b->nw >= 2 && !strcmp(b->w[0], "TARGET_DRIVER") &&
			   !strcmp(b->w[1], "copy_manager")) {
			for (unsigned t = 0; t < b->nkids; t++)
				for (unsigned k = b->kids[t].nkids; k-- > 0;) {
					struct conf_node *l = &b->kids[t].kids[k];
					if (l->nw >= 3 && !strcmp(l->w[0], "LUN") &&
					    !strcmp(l->w[2], name))
						conf_tree_remove(&b->kids[t], k);
				}
		}
	}
}

static int edit_device(struct conf_node *root, const struct tgt_config *cfg,
		       const struct tgt_edit *e, char *err, size_t errlen)
{
	struct conf_node *h, *d = device_node(root, e->name, NULL, &h);
	char where[512];
	unsigned idx = 0;

	switch (e->verb) {
	case EDIT_ADD: {
		const char *handler = need(e, "handler", err, errlen);
		const char *w[2] = {"HANDLER", handler};

		if (!handler)
			return -1;
		if (d) {
			snprintf(err, errlen, "DEVICE '%s' already exists (HANDLER %s)", e->name,
				 h->w[1]);
			return -1;
		}
		h = conf_tree_find(root, "HANDLER", handler);
		if (!h && !(h = conf_tree_add(root, w, 2, true)))
			break;
		w[0] = "DEVICE";
		w[1] = e->name;
		d = conf_tree_add(h, w, 2, true);
		return d ? put_attrs(d, e, err, errlen)
			 : (snprintf(err, errlen, "out of memory"), -1);
	}
	case EDIT_REMOVE:
		if (!d) {
			snprintf(err, errlen, "no DEVICE '%s'", e->name);
			return -1;
		}
		if (tgt_device_used_by(cfg, e->name, where, sizeof(where))) {
			snprintf(err, errlen, "DEVICE %s is used by %s; remove the LUN first",
				 e->name, where);
			return -1;
		}
		device_node(root, e->name, &idx, &h);
		conf_tree_remove(h, idx);
		forget_device(root, e->name);
		return 0;
	case EDIT_SET:
		if (!d) {
			snprintf(err, errlen, "no DEVICE '%s'", e->name);
			return -1;
		}
		if (!has_attrs(e)) {
			snprintf(err, errlen, "set device %s: no attribute given (ATTR=VALUE)",
				 e->name);
			return -1;
		}
		d->has_block = true;
		/* size and size_mb are one setting: the one given replaces the other */
		if (opt(e, "size"))
			conf_tree_unset(d, "size_mb");
		if (opt(e, "size_mb"))
			conf_tree_unset(d, "size");
		return put_attrs(d, e, err, errlen);
	default:
		snprintf(err, errlen, "a DEVICE is added, removed or set");
		return -1;
	}
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* ---- targets, drivers, groups ---- */

static int edit_target(struct conf_node *root, const struct tgt_edit *e, char *err, size_t errlen)
{
	struct conf_node *drv, *t;

	if (e->verb == EDIT_ADD) {
		const char *dn = need(e, "driver", err, errlen);
		const char *w[2] = {"TARGET_DRIVER", dn};

		if (!dn)
			return -1;
		drv = conf_tree_find(root, "TARGET_DRIVER", dn);
		if (drv && conf_tree_find(drv, "TARGET", e->name)) {
			snprintf(err, errlen, "TARGET '%s' already exists in driver %s", e->name,
				 dn);
			return -1;
		}
		if (!drv && !(drv = conf_tree_add(root, w, 2, true)))
			goto oom;
		w[0] = "TARGET";
		w[1] = e->name;
		t = conf_tree_add(drv, w, 2, true);
		if (!t)
			goto oom;
		return put_attrs(t, e, err, errlen);
	}
	t = target_node(root, e, e->name, err, errlen);
	if (!t)
		return -1;
	switch (e->verb) {
	case EDIT_REMOVE:
		drv = conf_tree_find(root, "TARGET_DRIVER", opt(e, "driver"));
		conf_tree_remove(drv, (unsigned)child_index(drv, t));
		return 0;
	case EDIT_ENABLE:
	case EDIT_DISABLE:
		return conf_tree_set(t, "enabled", e->verb == EDIT_ENABLE ? "1" : "0") ? 0 : -1;
	case EDIT_SET:
		if (!has_attrs(e)) {
			snprintf(err, errlen, "set target %s: no attribute given (ATTR=VALUE)",
				 e->name);
			return -1;
		}
		return put_attrs(t, e, err, errlen);
	default:
		break;
	}
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

static int edit_driver(struct conf_node *root, const struct tgt_edit *e, char *err, size_t errlen)
{
	struct conf_node *drv = conf_tree_find(root, "TARGET_DRIVER", e->name);

	if (e->verb != EDIT_SET) {
		snprintf(err, errlen,
			 "a TARGET_DRIVER's attributes are set (set driver NAME ATTR=V)");
		return -1;
	}
	if (!drv) {
		snprintf(err, errlen, "no TARGET_DRIVER '%s'", e->name);
		return -1;
	}
	if (!has_attrs(e)) {
		snprintf(err, errlen, "set driver %s: no attribute given (ATTR=VALUE)", e->name);
		return -1;
	}
	return put_attrs(drv, e, err, errlen);
}

static int edit_group(struct conf_node *root, const struct tgt_edit *e, char *err, size_t errlen)
{
	const char *tn = need(e, "target", err, errlen);
	struct conf_node *t = tn ? target_node(root, e, tn, err, errlen) : NULL;
	struct conf_node *g = t ? conf_tree_find(t, "GROUP", e->name) : NULL;
	const char *w[2] = {"GROUP", e->name};

	if (!t)
		return -1;
	switch (e->verb) {
	case EDIT_ADD:
		if (g) {
			snprintf(err, errlen, "GROUP '%s' already exists in TARGET %s", e->name,
				 tn);
			return -1;
		}
		g = conf_tree_add(t, w, 2, true);
		if (!g) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		return put_attrs(g, e, err, errlen);
	case EDIT_REMOVE:
	case EDIT_SET:
		if (!g) {
			snprintf(err, errlen, "no GROUP '%s' in TARGET %s", e->name, tn);
			return -1;
		}
		if (e->verb == EDIT_REMOVE) {
			conf_tree_remove(t, (unsigned)child_index(t, g));
			return 0;
		}
		if (!has_attrs(e)) {
			snprintf(err, errlen, "set group %s: no attribute given (ATTR=VALUE)",
				 e->name);
			return -1;
		}
		return put_attrs(g, e, err, errlen);
	default:
		snprintf(err, errlen, "a GROUP is added, removed or set");
		return -1;
	}
}

/* ---- LUNs and initiators ---- */

static int lun_index(const struct conf_node *c, uint64_t lun)
{
	for (unsigned i = 0; i < c->nkids; i++) {
		uint64_t v;
		if (c->kids[i].nw >= 2 && !strcmp(c->kids[i].w[0], "LUN") &&
		    parse_u64(c->kids[i].w[1], &v) && v == lun)
			return (int)i;
	}
	return -1;
}

static int edit_lun(struct conf_node *root, const struct tgt_edit *e, char *err, size_t errlen)
{
	const char *tn = need(e, "target", err, errlen), *gn = opt(e, "group");
	struct conf_node *c;
	char where[300];
	uint64_t lun;
	int i;

	if (!tn)
		return -1;
	if (!parse_u64(e->name, &lun) || lun > 16383) {
		snprintf(err, errlen, "LUN '%s' is not a number 0..16383", e->name);
		return -1;
	}
	c = gn && gn[0] ? group_node(root, e, gn, err, errlen)
			: target_node(root, e, tn, err, errlen);
	if (!c)
		return -1;
	if (gn && gn[0])
		snprintf(where, sizeof(where), "GROUP %s of TARGET %s", gn, tn);
	else
		snprintf(where, sizeof(where), "TARGET %s", tn);
	i = lun_index(c, lun);
	if (e->verb == EDIT_REMOVE) {
		if (i < 0) {
			snprintf(err, errlen, "no LUN %llu in %s", (unsigned long long)lun, where);
			return -1;
		}
		conf_tree_remove(c, (unsigned)i);
		return 0;
	}
	if (e->verb == EDIT_ADD) {
		const char *dev = need(e, "device", err, errlen), *ro = opt(e, "read_only");
		char num[24];
		const char *w[3] = {"LUN", num, dev};
		struct conf_node *l;
		bool rov = false;

		if (!dev)
			return -1;
		if (i >= 0) {
			snprintf(err, errlen, "LUN %llu already exists in %s (DEVICE %s)",
				 (unsigned long long)lun, where,
				 c->kids[i].nw >= 3 ? c->kids[i].w[2] : "?");
			return -1;
		}
		if (ro && !parse_bool(ro, &rov)) {
			snprintf(err, errlen, "read_only=%s: expected 0 or 1", ro);
			return -1;
		}
		for (unsigned k = 0; k < e->nopts; k++)
			if (!placement_key(OBJ_LUN, e->opts[k].key)) {
				snprintf(err, errlen,
					 "a LUN has no attribute '%s' (read_only only)",
					 e->opts[k].key);
				return -1;
			}
		snprintf(num, sizeof(num), "%llu", (unsigned long long)lun);
		l = conf_tree_add(c, w, 3, rov);
		if (!l || (rov && !conf_tree_set(l, "read_only", "1"))) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		return 0;
	}
	snprintf(err, errlen, "a LUN is added or removed");
	return -1;
}

static int edit_initiator(struct conf_node *root, const struct tgt_edit *e, char *err,
			  size_t errlen)
{
	const char *gn = need(e, "group", err, errlen);
	struct conf_node *g = gn ? group_node(root, e, gn, err, errlen) : NULL;
	const char *w[2] = {"INITIATOR", e->name};
	int at = -1;

	if (!g)
		return -1;
	for (unsigned i = 0; i < g->nkids; i++)
		if (g->kids[i].nw >= 2 && !strcmp(g->kids[i].w[0], "INITIATOR") &&
		    !strcmp(g->kids[i].w[1], e->name))
			at = (int)i;
	if (e->verb == EDIT_ADD) {
		if (at >= 0) {
			snprintf(err, errlen, "INITIATOR '%s' is already in GROUP %s", e->name, gn);
			return -1;
		}
		if (!conf_tree_add(g, w, 2, false)) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		return 0;
	}
	if (e->verb == EDIT_REMOVE) {
		if (at < 0) {
			snprintf(err, errlen, "no INITIATOR '%s' in GROUP %s", e->name, gn);
			return -1;
		}
		conf_tree_remove(g, (unsigned)at);
		return 0;
	}
	snprintf(err, errlen, "an INITIATOR is added or removed");
	return -1;
}

static int edit_tgroup(struct conf_node *root, const struct tgt_edit *e, char *err, size_t errlen)
{
	const char *dg = need(e, "dgroup", err, errlen);
	struct conf_node *d = dg ? conf_tree_find(root, "DEVICE_GROUP", dg) : NULL;
	struct conf_node *tg = d ? conf_tree_find(d, "TARGET_GROUP", e->name) : NULL;

	if (!dg)
		return -1;
	if (!d) {
		snprintf(err, errlen, "no DEVICE_GROUP '%s'", dg);
		return -1;
	}
	if (!tg) {
		snprintf(err, errlen, "no TARGET_GROUP '%s' in DEVICE_GROUP %s", e->name, dg);
		return -1;
	}
	if (e->verb != EDIT_SET || !has_attrs(e)) {
		snprintf(err, errlen, "a TARGET_GROUP's attributes are set (state=, preferred=)");
		return -1;
	}
	return put_attrs(tg, e, err, errlen);
}

int tgt_edit_tree(struct conf_node *root, const struct tgt_config *cfg, const struct tgt_edit *e,
		  char *err, size_t errlen)
{
	if (!e->name || !e->name[0]) {
		snprintf(err, errlen, "no name given");
		return -1;
	}
	for (unsigned i = 0; i < e->nopts; i++)
		if (!e->opts[i].key[0]) {
			snprintf(err, errlen, "an option without a name ('=%s')", e->opts[i].value);
			return -1;
		}
	switch (e->obj) {
	case OBJ_DEVICE:
		return edit_device(root, cfg, e, err, errlen);
	case OBJ_TARGET:
		return edit_target(root, e, err, errlen);
	case OBJ_DRIVER:
		return edit_driver(root, e, err, errlen);
	case OBJ_GROUP:
		return edit_group(root, e, err, errlen);
	case OBJ_LUN:
		return edit_lun(root, e, err, errlen);
	case OBJ_INITIATOR:
		return edit_initiator(root, e, err, errlen);
	case OBJ_TGROUP:
		return edit_tgroup(root, e, err, errlen);
	}
	snprintf(err, errlen, "unknown object");
	return -1;
}

/* The loader's first error, as the verb's answer. */
struct first_error {
	char msg[400];
	bool have;
};

static void keep_first_error(struct diag *d, bool error, int line, const char *msg)
{
	struct first_error *f = d->priv;

	(void)line;
	if (error && !f->have) {
		snprintf(f->msg, sizeof(f->msg), "%s", msg);
		f->have = true;
	}
}

struct tgt_config *tgt_edit_config(const struct tgt_config *cfg, const struct tgt_edit *e,
				   char *err, size_t errlen)
{
	struct first_error fe = {.have = false};
	struct diag d = {.file = cfg->path, .emit = keep_first_error, .priv = &fe};
	struct tgt_config *next = NULL;
	struct conf_node *root = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	tgt_config_print(cfg, f);
	if (fclose(f) != 0 || !text) {
		free(text);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	root = conf_parse(text, len, &d);
	free(text);
	if (!root || d.errors) {
		conf_tree_free(root);
		snprintf(err, errlen, "the running configuration does not parse back: %s",
			 fe.have ? fe.msg : "out of memory");
		return NULL;
	}
	if (tgt_edit_tree(root, cfg, e, err, errlen) == 0) {
		next = tgt_config_from_tree(root, cfg->path, &d);
		if (!next)
			snprintf(err, errlen, "%s", fe.have ? fe.msg : "out of memory");
	}
	conf_tree_free(root);
	return next;
}
