/* The resolved configuration in scst.conf syntax: what `utgtd --check` prints.  Defaults are
 * written out (enabled, rel_tgt_id, ALUA state), names and values are quoted where needed, and
 * facts the loader worked out are comments, so the output loads back into the same model. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "target/tgt_config.h"

struct printer {
	FILE *out;
	unsigned flags;
};

static bool needs_quotes(const char *s)
{
	if (!*s)
		return true;
	for (; *s; s++)
		if (strchr(" \t\"\\#{}", *s))
			return true;
	return false;
}

/* A word as the lexer will read it back. */
static void word(struct printer *p, const char *s)
{
	if (!needs_quotes(s)) {
		fputs(s, p->out);
		return;
	}
	fputc('"', p->out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', p->out);
		fputc(*s, p->out);
	}
	fputc('"', p->out);
}

static void indent(struct printer *p, int depth)
{
	for (int i = 0; i < depth; i++)
		fputc('\t', p->out);
}

static bool is_secret(const char *key)
{
	return !strcasecmp(key, "IncomingUser") || !strcasecmp(key, "OutgoingUser");
}

static void attr(struct printer *p, int depth, const char *key, const char *value)
{
	indent(p, depth);
	word(p, key);
	fputc(' ', p->out);
	const char *sp = strchr(value, ' ');
	if ((p->flags & TGT_PRINT_MASK_SECRETS) && is_secret(key) && sp) {
		char masked[256];
		snprintf(masked, sizeof(masked), "%.*s ********", (int)(sp - value), value);
		word(p, masked);
	} else {
		word(p, value);
	}
	fputc('\n', p->out);
}

/* Every attribute except the ones printed from model fields. */
static void attrs(struct printer *p, int depth, const struct tgt_attrs *as, const char *const *skip)
{
	for (unsigned i = 0; i < as->n; i++) {
		bool skipped = false;
		for (const char *const *s = skip; s && *s; s++)
			if (!strcasecmp(*s, as->a[i].key))
				skipped = true;
		if (!skipped)
			attr(p, depth, as->a[i].key, as->a[i].value);
	}
}

static void open_block(struct printer *p, int depth, const char *kw, const char *name)
{
	indent(p, depth);
	fprintf(p->out, "%s ", kw);
	word(p, name);
	fputs(" {\n", p->out);
}

static void close_block(struct printer *p, int depth)
{
	indent(p, depth);
	fputs("}\n", p->out);
}

/* ---- SCST's layout: "# Non-key attributes" ---- */

/* What utgt derived for a device and SCST would list as non-key: written when the block does
 * not set it, only for the handlers that take it, so the file loads back to the same LU. */
static bool handler_in(const char *h, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(*list, h))
			return true;
	return false;
}

static void nonkey_attr(struct printer *p, const struct tgt_device *d, bool *header,
			const char *key, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void nonkey_attr(struct printer *p, const struct tgt_device *d, bool *header,
			const char *key, const char *fmt, ...)
{
	char v[256];
	va_list ap;

	if (tgt_attr_find(&d->attrs, key))
		return; /* a key attribute: printed above */
	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	if (!*header) {
		if (d->attrs.n)
			fputc('\n', p->out);
		indent(p, 2);
		fputs("# Non-key attributes\n", p->out);
		*header = true;
	}
	attr(p, 2, key, v);
}

static void nonkey_device(struct printer *p, const struct tgt_device *d)
{
	static const char *const disk[] = {"vdisk_fileio", "vdisk_blockio", NULL};
	static const char *const thin[] = {"vdisk_fileio", "vdisk_blockio", "ramdisk", NULL};
	static const char *const fileio[] = {"vdisk_fileio", NULL};
	const struct scsi_dev *dev = d->dev;
	const struct backstore *bs = dev ? dev->bs : NULL;
	bool cd = dev && dev->p.type == SCSI_TYPE_CDROM, header = false;
	uint64_t size = 0;

	if (!dev || !bs)
		return;
	if (dev->open)
		size = dev->nr_blocks * dev->block_size;
	else if (!cd)
		size = bs->size;
	if (size && (!cd || !dev->medium_removed) && !tgt_attr_find(&d->attrs, "size_mb"))
		nonkey_attr(p, d, &header, "size", "%llu", (unsigned long long)size);
	if (!cd) {
		nonkey_attr(p, d, &header, "blocksize", "%u",
			    dev->block_size ? dev->block_size
					    : (bs->block_size ? bs->block_size : 512));
		nonkey_attr(p, d, &header, "read_only", "%d", bs->read_only);
		nonkey_attr(p, d, &header, "removable", "%d", dev->p.removable);
	}
	if (handler_in(d->handler, disk)) {
		nonkey_attr(p, d, &header, "nv_cache", "%d", bs->nv_cache);
		nonkey_attr(p, d, &header, "write_through", "%d", bs->write_through);
	}
	if (handler_in(d->handler, fileio))
		nonkey_attr(p, d, &header, "o_direct", "%d", bs->o_direct);
	if (handler_in(d->handler, thin))
		nonkey_attr(p, d, &header, "thin_provisioned", "%d", bs->thin_provisioned);
	nonkey_attr(p, d, &header, "rotational", "%d", dev->p.rotational);
	nonkey_attr(p, d, &header, "t10_vend_id", "%s", dev->p.vendor);
	nonkey_attr(p, d, &header, "prod_id", "%s", dev->p.product);
	nonkey_attr(p, d, &header, "prod_rev_lvl", "%s", dev->p.revision);
	if (strlen(dev->p.t10_dev_id) <= 25) /* SCST's limit; a longer default name is left out */
		nonkey_attr(p, d, &header, "t10_dev_id", "%s", dev->p.t10_dev_id);
	if (strlen(dev->p.usn) <= 20)
		nonkey_attr(p, d, &header, "usn", "%s", dev->p.usn);
	nonkey_attr(p, d, &header, "type", "%u", dev->p.type);
}

static void print_devices(struct printer *p, const struct tgt_config *cfg)
{
	for (unsigned i = 0; i < cfg->ndevices; i++) {
		const char *h = cfg->devices[i].handler;
		bool seen = false;
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(cfg->devices[j].handler, h))
				seen = true;
		if (seen)
			continue; /* its HANDLER block was printed with the first of them */
		open_block(p, 0, "HANDLER", h);
		for (unsigned j = i; j < cfg->ndevices; j++) {
			const struct tgt_device *dev = &cfg->devices[j];
			if (strcmp(dev->handler, h))
				continue;
			if (!dev->attrs.n && !(p->flags & TGT_PRINT_SCST)) {
				indent(p, 1);
				fputs("DEVICE ", p->out);
				word(p, dev->name);
				fputc('\n', p->out);
				continue;
			}
			open_block(p, 1, "DEVICE", dev->name);
			attrs(p, 2, &dev->attrs, NULL);
			if (p->flags & TGT_PRINT_SCST)
				nonkey_device(p, dev);
			close_block(p, 1);
		}
		close_block(p, 0);
		fputc('\n', p->out);
	}
	for (unsigned i = 0; i < cfg->handler_attrs.n && !(p->flags & TGT_PRINT_SCST); i++)
		fprintf(p->out, "# HANDLER attribute %s %s (SCST only; not used)\n",
			cfg->handler_attrs.a[i].key, cfg->handler_attrs.a[i].value);
}

static void print_luns(struct printer *p, int depth, const struct tgt_lun *luns, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		indent(p, depth);
		fprintf(p->out, "LUN %llu ", (unsigned long long)luns[i].lun);
		word(p, luns[i].device);
		if (luns[i].read_only)
			fputs(" { read_only 1 }", p->out);
		fputc('\n', p->out);
	}
}

static const char *const target_fields[] = {"enabled", "rel_tgt_id", NULL};

static void print_target(struct printer *p, const struct tgt_target *t)
{
	open_block(p, 1, "TARGET", t->name);
	if (t->hw_target) {
		indent(p, 2);
		fputs("HW_TARGET\n", p->out);
	}
	indent(p, 2);
	fprintf(p->out, "enabled %d\n", t->enabled);
	indent(p, 2);
	fprintf(p->out, "rel_tgt_id %u%s\n", t->rel_tgt_id,
		t->rel_tgt_id_line || (p->flags & TGT_PRINT_SCST) ? "" : "\t# assigned by utgtd");
	attrs(p, 2, &t->attrs, target_fields);
	print_luns(p, 2, t->luns, t->nluns);
	for (unsigned g = 0; g < t->ngroups; g++) {
		const struct tgt_group *grp = &t->groups[g];
		open_block(p, 2, "GROUP", grp->name);
		print_luns(p, 3, grp->luns, grp->nluns);
		for (unsigned i = 0; i < grp->ninitiators; i++) {
			indent(p, 3);
			fputs("INITIATOR ", p->out);
			word(p, grp->initiators[i]);
			fputc('\n', p->out);
		}
		attrs(p, 3, &grp->attrs, NULL);
		close_block(p, 2);
	}
	close_block(p, 1);
}

static const char *driver_status(const struct tgt_driver *drv)
{
	if (!drv->known)
		return "unknown to utgt: kept, not served";
	if (!drv->transport)
		return "not served by this build";
	if (!strcmp(drv->name, "copy_manager"))
		return "kept; the SCSI core decides EXTENDED COPY reach per initiator";
	if (!drv->enabled)
		return "disabled";
	return "served";
}

static void print_drivers(struct printer *p, const struct tgt_config *cfg)
{
	static const char *const driver_fields[] = {"enabled", NULL};

	for (unsigned d = 0; d < cfg->ndrivers; d++) {
		const struct tgt_driver *drv = &cfg->drivers[d];
		indent(p, 0);
		fputs("TARGET_DRIVER ", p->out);
		word(p, drv->name);
		if (p->flags & TGT_PRINT_SCST)
			fputs(" {\n", p->out);
		else
			fprintf(p->out, " {\t# %s\n", driver_status(drv));
		indent(p, 1);
		fprintf(p->out, "enabled %d\n", drv->enabled);
		attrs(p, 1, &drv->attrs, driver_fields);
		for (unsigned i = 0; i < drv->ntargets; i++)
			print_target(p, &drv->targets[i]);
		close_block(p, 0);
		fputc('\n', p->out);
	}
}

static void print_alua(struct printer *p, const struct tgt_config *cfg)
{
	static const char *const tg_fields[] = {"group_id", "state", "preferred", NULL};

	for (unsigned i = 0; i < cfg->nalua_groups; i++) {
		const struct tgt_device_group *dg = &cfg->device_groups[i];
		open_block(p, 0, "DEVICE_GROUP", dg->name);
		for (unsigned d = 0; d < dg->ndevices; d++) {
			indent(p, 1);
			fputs("DEVICE ", p->out);
			word(p, dg->devices[d]->name);
			fputc('\n', p->out);
		}
		attrs(p, 1, &dg->attrs, NULL);
		for (unsigned g = 0; g < dg->ntgroups; g++) {
			const struct tgt_target_group *tg = &dg->tgroups[g];
			const struct scsi_tpg *tpg = &dg->alua->tpgs[g];
			open_block(p, 1, "TARGET_GROUP", tg->name);
			indent(p, 2);
			fprintf(p->out, "group_id %u\n", tpg->group_id);
			indent(p, 2);
			fprintf(p->out, "state %s\n", scsi_alua_state_name(tpg->state));
			indent(p, 2);
			fprintf(p->out, "preferred %d\n", tpg->preferred);
			attrs(p, 2, &tg->attrs, tg_fields);
			for (unsigned t = 0; t < tg->ntargets; t++) {
				const struct tgt_tg_target *tt = &tg->targets[t];
				indent(p, 2);
				fputs("TARGET ", p->out);
				word(p, tt->name);
				if (p->flags & TGT_PRINT_SCST)
					fputs(" {\n", p->out);
				else
					fprintf(p->out, " {\t# %s\n",
						tt->local ? "local" : "on another node");
				indent(p, 3);
				fprintf(p->out, "rel_tgt_id %u\n", tt->rel_tgt_id);
				close_block(p, 2);
			}
			close_block(p, 1);
		}
		close_block(p, 0);
		fputc('\n', p->out);
	}
}

void tgt_config_print_opts(const struct tgt_config *cfg, FILE *out, unsigned flags)
{
	struct printer p = {.out = out, .flags = flags};

	if (flags & TGT_PRINT_SCST)
		fprintf(out, "# Written by utgtd (utgtadm write-config): the running configuration of "
			     "%s\n# in SCST's format, as 'scstadmin -write_config -nonkey' writes "
			     "it.\n",
			cfg->path);
	else if (!(flags & TGT_PRINT_NO_HEADER))
		fprintf(out, "# resolved configuration of %s\n", cfg->path);
	attrs(&p, 0, &cfg->globals, NULL);
	fputc('\n', out);
	print_devices(&p, cfg);
	print_drivers(&p, cfg);
	print_alua(&p, cfg);
}

void tgt_config_print(const struct tgt_config *cfg, FILE *out)
{
	tgt_config_print_opts(cfg, out, 0);
}
