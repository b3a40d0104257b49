/* scst.conf -> struct tgt_config: the semantic pass over the syntax tree.
 *
 * Blocks may come in any order (a LUN may name a DEVICE defined further down), so the pass
 * walks the tree by kind: HANDLER/DEVICE first, then TARGET_DRIVER (conf_targets.c), then
 * DEVICE_GROUP (conf_alua.c), then the cross-checks that need everything (rel_tgt_id, LUN
 * tables).  Every problem is reported with its line and the pass goes on, so one --check run
 * lists them all; the config is returned only when there was no error. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/conf_load.h"

#define CONF_FILE_MAX (16u << 20) /* a config larger than this is a mistake */

/* ---- name index ---- */

static unsigned hash_name(const char *s, bool ci)
{
	unsigned h = 2166136261u;
	for (; *s; s++) {
		h ^= ci ? (unsigned char)tolower((unsigned char)*s) : (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

bool conf_index_init(struct conf_index *ix, unsigned expected, bool ci)
{
	unsigned cap = 16;
	while (cap < 2 * expected + 1)
		cap *= 2;
	ix->slot = calloc(cap, sizeof(*ix->slot));
	ix->cap = ix->slot ? cap : 0;
	ix->n = 0;
	ix->ci = ci;
	ix->oom = !ix->slot;
	return ix->slot != NULL;
}

static unsigned index_find(const struct conf_index *ix, const char *key)
{
	unsigned i = hash_name(key, ix->ci) & (ix->cap - 1);
	while (ix->slot[i].key &&
	       (ix->ci ? strcasecmp(ix->slot[i].key, key) : strcmp(ix->slot[i].key, key)))
		i = (i + 1) & (ix->cap - 1);
	return i;
}

void *conf_index_get(const struct conf_index *ix, const char *key)
{
	if (!ix->cap)
		return NULL;
	return ix->slot[index_find(ix, key)].val;
}

void *conf_index_put(struct conf_index *ix, const char *key, void *val)
{
	if (!ix->cap) {
		ix->oom = true;
		return NULL;
	}
	if (2 * (ix->n + 1) > ix->cap) { /* keep the load factor under 1/2 */
		struct conf_index big;
		if (!conf_index_init(&big, ix->cap, ix->ci)) {
			ix->oom = true;
			return NULL;
		}
		for (unsigned i = 0; i < ix->cap; i++)
			if (ix->slot[i].key) {
				unsigned j = index_find(&big, ix->slot[i].key);
				big.slot[j] = ix->slot[i];
				big.n++;
			}
		free(ix->slot);
		*ix = big;
	}
	unsigned i = index_find(ix, key);
	if (ix->slot[i].key)
		return ix->slot[i].val;
	ix->slot[i].key = key;
	ix->slot[i].val = val;
	ix->n++;
	return NULL;
}

void conf_index_free(struct conf_index *ix)
{
	free(ix->slot);
	memset(ix, 0, sizeof(*ix));
}

/* ---- helpers shared by every block kind ---- */

static const char *const kw_names[] = {
    [KW_NONE] = NULL,
    [KW_HANDLER] = "HANDLER",
    [KW_DEVICE] = "DEVICE",
    [KW_TARGET_DRIVER] = "TARGET_DRIVER",
    [KW_TARGET] = "TARGET",
    [KW_LUN] = "LUN",
    [KW_GROUP] = "GROUP",
    [KW_INITIATOR] = "INITIATOR",
    [KW_HW_TARGET] = "HW_TARGET",
    [KW_DEVICE_GROUP] = "DEVICE_GROUP",
    [KW_TARGET_GROUP] = "TARGET_GROUP",
};

const char *conf_kw_name(enum conf_kw kw)
{
	return kw_names[kw];
}

/* SCST's keywords are upper case, its attributes lower case, and two names are both: the
 * read-only target attributes `hw_target 1` and (ib_srpt) `device mlx4_0`. */
static bool lower_case_attribute(const struct conf_node *n)
{
	if (n->has_block || n->nw < 2)
		return false;
	for (const char *c = n->w[0]; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			return false;
	return true;
}

enum conf_kw conf_keyword(struct conf_loader *L, const struct conf_node *n)
{
	if (lower_case_attribute(n))
		return KW_NONE;
	for (unsigned k = KW_HANDLER; k <= KW_TARGET_GROUP; k++) {
		if (!strcmp(n->w[0], kw_names[k]))
			return k;
		if (!strcasecmp(n->w[0], kw_names[k])) {
			diag_error(L->d, n->line, "keyword '%s' must be written '%s'", n->w[0],
				   kw_names[k]);
			return k;
		}
	}
	return KW_NONE;
}

void conf_misplaced(struct conf_loader *L, const struct conf_node *n, const char *where)
{
	diag_error(L->d, n->line, "'%s' is not allowed %s", n->w[0], where);
}

bool conf_shape(struct conf_loader *L, const struct conf_node *n, unsigned nw, bool block_ok,
		const char *usage)
{
	if (n->nw != nw) {
		diag_error(L->d, n->line, "expected '%s'", usage);
		return false;
	}
	if (n->has_block && !block_ok) {
		diag_error(L->d, n->line, "'%s' cannot have a { block }", n->w[0]);
		return false;
	}
	return true;
}

bool conf_name(struct conf_loader *L, char *dst, size_t cap, const char *src, int line,
	       const char *what)
{
	size_t n = strlen(src);
	if (!n) {
		diag_error(L->d, line, "empty %s name", what);
		return false;
	}
	if (n >= cap) {
		diag_error(L->d, line, "%s name '%.32s...' is longer than %zu characters", what,
			   src, cap - 1);
		return false;
	}
	memcpy(dst, src, n + 1);
	return true;
}

unsigned conf_count_kw(const struct conf_node *n, const char *kw)
{
	unsigned c = 0;

	for (unsigned i = 0; i < n->nkids; i++)
		if (!strcasecmp(n->kids[i].w[0], kw))
			c++;
	return c;
}

void *conf_alloc(struct conf_loader *L, size_t n, size_t size)
{
	void *p = tgt_arena_calloc(L->ar, n, size);
	if (!p)
		L->oom = true;
	return p;
}

bool conf_attrs_reserve(struct conf_loader *L, struct tgt_attrs *as, unsigned n)
{
	as->n = 0;
	as->a = n ? conf_alloc(L, n, sizeof(*as->a)) : NULL;
	return !n || as->a;
}

/* The value is every word after the name: `IncomingUser joe secret` is `IncomingUser "joe
 * secret"`, which is how people write it by hand and how SCST's mgmt files take it. */
static char *join_value(struct conf_loader *L, const struct conf_node *n)
{
	size_t len = 0;
	for (unsigned i = 1; i < n->nw; i++)
		len += strlen(n->w[i]) + 1;
	char *v = conf_alloc(L, len ? len : 1, 1);
	if (!v)
		return NULL;
	for (unsigned i = 1; i < n->nw; i++) {
		if (i > 1)
			strcat(v, " ");
		strcat(v, n->w[i]);
	}
	return v;
}

/* name value... and no block */
static bool attr_shape(struct conf_loader *L, const struct conf_node *n)
{
	const char *key = n->w[0];

	if (!*key) {
		diag_error(L->d, n->line, "empty attribute name");
		return false;
	}
	if (n->has_block) {
		diag_error(L->d, n->line, "attribute '%s' cannot have a { block }", key);
		return false;
	}
	if (n->nw < 2) {
		diag_error(L->d, n->line, "attribute '%s' has no value", key);
		return false;
	}
	return true;
}

bool conf_attr(struct conf_loader *L, struct tgt_attrs *as, const struct conf_node *n,
	       enum conf_scope scope, const char *driver, const struct tgt_transport *tp,
	       const char *ctx)
{
	const char *key = n->w[0];
	enum conf_attr_class cls;

	if (!attr_shape(L, n))
		return false;
	cls = conf_attr_classify(scope, driver, tp, key);
	switch (cls) {
	case CONF_ATTR_UNKNOWN:
		diag_error(L->d, n->line, "unknown attribute '%s' in %s", key, ctx);
		return false;
	case CONF_ATTR_SCST_ONLY:
		diag_warn(L->d, n->line,
			  "attribute '%s' only means something to SCST's kernel; "
			  "kept, not used by utgt",
			  key);
		break;
	case CONF_ATTR_READ_ONLY:
		diag_warn(L->d, n->line,
			  "attribute '%s' is read-only in SCST "
			  "('scstadmin -write_config -nonkey' writes it); kept, not used",
			  key);
		break;
	case CONF_ATTR_OURS:
	case CONF_ATTR_UNCHECKED:
		break;
	}
	/* HANDLER attributes of every HANDLER block share one list, so repeats are expected */
	if (cls != CONF_ATTR_UNCHECKED && scope != CONF_SCOPE_HANDLER &&
	    !conf_attr_repeatable(key)) {
		const struct utgt_attr *prev = tgt_attr_find(as, key);
		if (prev) {
			diag_error(L->d, n->line,
				   "attribute '%s' given twice in %s (first at line %d)", key, ctx,
				   prev->line);
			return false;
		}
	}
	struct utgt_attr *a = &as->a[as->n];
	a->key = tgt_arena_strdup(L->ar, key);
	a->value = join_value(L, n);
	a->line = n->line;
	if (!a->key || !a->value) {
		L->oom = true;
		return false;
	}
	as->n++;
	return true;
}

bool conf_bool(struct conf_loader *L, const struct utgt_attr *a, bool *out)
{
	if (parse_bool(a->value, out))
		return true;
	diag_error(L->d, a->line, "invalid value '%s' for %s: expected 0 or 1", a->value, a->key);
	return false;
}

bool conf_uint(struct conf_loader *L, const char *s, int line, const char *what, uint64_t lo,
	       uint64_t hi, uint64_t *out)
{
	uint64_t v;
	if (parse_u64(s, &v) && v >= lo && v <= hi) {
		*out = v;
		return true;
	}
	diag_error(L->d, line, "invalid %s '%s': expected an integer %llu..%llu", what, s,
		   (unsigned long long)lo, (unsigned long long)hi);
	return false;
}

/* ---- HANDLER / DEVICE ---- */

/* SCST handler names utgt implements, and SCST's others (so the message can say which). */
static const char *const our_handlers[] = {"vdisk_fileio", "vdisk_blockio", "vdisk_nullio",
					   "vcdrom",	   "ramdisk",	    "vdisk_rbd",
					   NULL};
/* Pass-through handlers: they hand commands to a SCSI device of the target host's kernel. */
static const char *const passthrough_handlers[] = {
    "dev_disk",	     "dev_disk_perf", "dev_tape",   "dev_tape_perf", "dev_cdrom", "dev_changer",
    "dev_processor", "dev_raid",      "dev_modisk", "dev_modisk_perf", NULL};
static const char *const scst_handlers[] = {"vdisk", "scst_user", "vdisk_tape", NULL};

static bool in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (!strcmp(*l, s))
			return true;
	return false;
}

static bool check_handler(struct conf_loader *L, const struct conf_node *h)
{
	const char *name = h->w[1];
	const char *supported =
	    "vdisk_fileio, vdisk_blockio, vdisk_nullio, vcdrom, ramdisk, vdisk_rbd";

	if (in_list(our_handlers, name))
		return true;
	if (in_list(passthrough_handlers, name))
		diag_error(L->d, h->line,
			   "handler '%s' passes commands through to a SCSI device of the host "
			   "(/dev/sg*), which needs a SCSI host in the kernel and utgt runs in user "
			   "space without one; export the device's block node with vdisk_blockio "
			   "instead",
			   name);
	else if (in_list(scst_handlers, name))
		diag_error(
		    L->d, h->line,
		    "handler '%s' exists in SCST but is not supported by utgt (supported: %s)",
		    name, supported);
	else
		diag_error(L->d, h->line, "unknown handler '%s' (supported: %s)", name, supported);
	return false;
}

static void load_device(struct conf_loader *L, const struct conf_node *h, bool handler_ok,
			const struct conf_node *n)
{
	struct tgt_config *cfg = L->cfg;
	struct tgt_device *dev = &cfg->devices[cfg->ndevices];
	int errors0 = L->d->errors;

	if (!conf_shape(L, n, 2, true, "DEVICE <name> [{ attributes }]") ||
	    !conf_name(L, dev->name, sizeof(dev->name), n->w[1], n->line, "device"))
		return;
	snprintf(dev->handler, sizeof(dev->handler), "%s", h->w[1]);
	dev->line = n->line;
	struct tgt_device *first = conf_index_put(&L->devices, dev->name, dev);
	if (L->devices.oom) {
		L->oom = true;
		return;
	}
	if (first) {
		diag_error(L->d, n->line, "duplicate DEVICE '%s' (first defined at line %d)",
			   dev->name, first->line);
		return;
	}
	cfg->ndevices++;
	if (!conf_attrs_reserve(L, &dev->attrs, n->nkids))
		return;
	for (unsigned i = 0; i < n->nkids; i++) {
		const struct conf_node *a = &n->kids[i];
		if (conf_keyword(L, a) != KW_NONE) {
			conf_misplaced(L, a, "inside DEVICE (it takes attributes only)");
			continue;
		}
		/* device attributes are the device's business (scsi_dev_configure): pass them all,
		 * repeats included, in file order */
		if (!attr_shape(L, a))
			continue;
		struct utgt_attr *at = &dev->attrs.a[dev->attrs.n];
		at->key = tgt_arena_strdup(L->ar, a->w[0]);
		at->value = join_value(L, a);
		at->line = a->line;
		if (!at->key || !at->value) {
			L->oom = true;
			return;
		}
		dev->attrs.n++;
	}
	if (!handler_ok || L->d->errors != errors0 || L->oom)
		return;
	dev->dev = scsi_dev_configure_at(dev->handler, dev->name, dev->line, dev->attrs.a,
					 dev->attrs.n, L->d);
	if (!dev->dev && L->d->errors == errors0)
		diag_error(L->d, n->line, "DEVICE %s could not be configured", dev->name);
}

static void load_handler(struct conf_loader *L, const struct conf_node *h)
{
	char ctx[64];
	bool ok;

	if (!conf_shape(L, h, 2, true, "HANDLER <name> { DEVICE ... }"))
		return;
	ok = check_handler(L, h);
	snprintf(ctx, sizeof(ctx), "HANDLER %s", h->w[1]);
	for (unsigned i = 0; i < h->nkids && !L->oom; i++) {
		const struct conf_node *n = &h->kids[i];
		switch (conf_keyword(L, n)) {
		case KW_DEVICE:
			load_device(L, h, ok, n);
			break;
		case KW_NONE: {
			/* handler attributes (trace_level) are global in effect: collect them all
			 */
			struct tgt_attrs *as = &L->cfg->handler_attrs;
			conf_attr(L, as, n, CONF_SCOPE_HANDLER, NULL, NULL, ctx);
			break;
		}
		default: {
			char where[80];
			snprintf(where, sizeof(where), "inside %s", ctx);
			conf_misplaced(L, n, where);
			break;
		}
		}
	}
}

/* ---- the pass ---- */

struct top {
	const struct conf_node **handlers, **drivers, **dgroups;
	unsigned nhandlers, ndrivers, ndgroups;
	unsigned ndevices, nhandler_attrs;
};

static bool sort_top(struct conf_loader *L, const struct conf_node *root, struct top *t)
{
	t->handlers = conf_alloc(L, root->nkids, sizeof(*t->handlers));
	t->drivers = conf_alloc(L, root->nkids, sizeof(*t->drivers));
	t->dgroups = conf_alloc(L, root->nkids, sizeof(*t->dgroups));
	if (L->oom || !conf_attrs_reserve(L, &L->cfg->globals, root->nkids))
		return false;
	for (unsigned i = 0; i < root->nkids; i++) {
		const struct conf_node *n = &root->kids[i];
		switch (conf_keyword(L, n)) {
		case KW_HANDLER:
			t->handlers[t->nhandlers++] = n;
			t->nhandler_attrs += n->nkids;
			t->ndevices += conf_count_kw(n, "DEVICE");
			break;
		case KW_TARGET_DRIVER:
			t->drivers[t->ndrivers++] = n;
			break;
		case KW_DEVICE_GROUP:
			t->dgroups[t->ndgroups++] = n;
			break;
		case KW_NONE:
			conf_attr(L, &L->cfg->globals, n, CONF_SCOPE_GLOBAL, NULL, NULL,
				  "the top level");
			break;
		default:
			conf_misplaced(L, n, "at the top level");
			break;
		}
	}
	return true;
}

static void load_tree(struct conf_loader *L, const struct conf_node *root)
{
	struct top t = {0};

	if (!sort_top(L, root, &t))
		return;
	L->cfg->devices = conf_alloc(L, t.ndevices, sizeof(*L->cfg->devices));
	if (L->oom || !conf_attrs_reserve(L, &L->cfg->handler_attrs, t.nhandler_attrs) ||
	    !conf_index_init(&L->devices, t.ndevices, false)) {
		L->oom = true;
		return;
	}
	for (unsigned i = 0; i < t.nhandlers && !L->oom; i++)
		load_handler(L, t.handlers[i]);
	conf_load_targets(L, t.drivers, t.ndrivers);
	conf_load_alua(L, t.dgroups, t.ndgroups);
	conf_finish_targets(L);
	conf_finish_alua(L);
}

/* Transport-specific value checks (numbers, ranges) once the structure is sound. */
static void validate_transports(struct conf_loader *L)
{
	for (unsigned i = 0; i < L->cfg->ndrivers; i++) {
		const struct tgt_driver *drv = &L->cfg->drivers[i];
		if (drv->transport && drv->transport->validate)
			drv->transport->validate(drv, L->d);
	}
}

struct tgt_config *tgt_config_parse(const char *text, size_t len, const char *name, struct diag *d)
{
	struct tgt_config *cfg;
	struct conf_node *root;
	int errors0 = d->errors;

	if (!d->file)
		d->file = name;
	root = conf_parse(text, len, d);
	if (!root) {
		diag_error(d, 0, "out of memory while parsing");
		return NULL;
	}
	if (d->errors != errors0) { /* a broken tree would only add confusing follow-ups */
		conf_tree_free(root);
		return NULL;
	}
	cfg = tgt_config_from_tree(root, name, d);
	conf_tree_free(root);
	return cfg;
}

struct tgt_config *tgt_config_from_tree(const struct conf_node *root, const char *name,
					struct diag *d)
{
	struct conf_loader L = {.d = d};
	struct tgt_arena *ar;
	int errors0 = d->errors;

	ar = tgt_arena_new();
	L.ar = ar;
	L.cfg = ar ? tgt_arena_alloc(ar, sizeof(*L.cfg)) : NULL;
	if (!L.cfg) {
		tgt_arena_free(ar);
		diag_error(d, 0, "out of memory while loading");
		return NULL;
	}
	L.cfg->arena = ar;
	snprintf(L.cfg->path, sizeof(L.cfg->path), "%s", name ? name : "<config>");
	load_tree(&L, root);
	if (!L.oom && d->errors == errors0)
		validate_transports(&L);
	if (L.oom)
		diag_error(d, 0, "out of memory while loading");
	conf_index_free(&L.devices);
	conf_index_free(&L.targets);
	if (d->errors != errors0) {
		tgt_config_free(L.cfg);
		return NULL;
	}
	return L.cfg;
}

struct tgt_config *tgt_config_load(const char *path, struct diag *d)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd;

	if (!d->file)
		d->file = path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		diag_error(d, 0, "cannot open: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		diag_error(d, 0, "not a regular file");
		goto out;
	}
	if ((unsigned long long)st.st_size > CONF_FILE_MAX) {
		diag_error(d, 0, "file too large (%lld bytes; the limit is %u)",
			   (long long)st.st_size, CONF_FILE_MAX);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		diag_error(d, 0, "out of memory");
		goto out;
	}
	while (len < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + len, (size_t)st.st_size - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			diag_error(d, 0, "read error: %s", strerror(errno));
			free(buf);
			buf = NULL;
			goto out;
		}
		if (r == 0)
			break; /* shrank under us: parse what is there */
		len += (size_t)r;
	}
out:
	if (fd >= 0)
		close(fd);
	if (!buf)
		return NULL;
	struct tgt_config *cfg = tgt_config_parse(buf, len, path, d);
	free(buf);
	return cfg;
}

int tgt_config_open_devices(struct tgt_config *cfg, struct diag *d)
{
	int rc = 0;

	for (unsigned i = 0; i < cfg->ndevices; i++) {
		struct tgt_device *dev = &cfg->devices[i];
		const struct utgt_attr *fn = tgt_attr_find(&dev->attrs, "filename");
		char err[256] = "";

		if (!dev->dev)
			continue;
		if (scsi_dev_open(dev->dev, err, sizeof(err)) != 0) {
			/* the core's messages start with the device name already */
			size_t nl = strlen(dev->name);
			const char *why = err[0] ? err : "cannot open the backing store";
			if (!strncmp(why, dev->name, nl) && why[nl] == ':' && why[nl + 1] == ' ')
				why += nl + 2;
			diag_error(d, fn ? fn->line : dev->line, "DEVICE %s: %s", dev->name, why);
			rc = -1;
		}
	}
	return rc;
}

void tgt_config_free(struct tgt_config *cfg)
{
	if (!cfg)
		return;
	for (unsigned i = 0; i < cfg->ndevices; i++)
		if (cfg->devices[i].dev)
			scsi_dev_destroy(cfg->devices[i].dev);
	tgt_arena_free(cfg->arena); /* cfg lives in it too */
}
