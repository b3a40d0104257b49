/* The resolved-configuration printer (conf_print.c): its output loads back into the same model
 * (print -> load -> print is a fixed point), quoting survives, secrets can be masked. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tests/unit/conf_test_util.h"

static char *print_to_string(const struct tgt_config *cfg, unsigned flags)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	tgt_config_print_opts(cfg, f, flags);
	fclose(f);
	return buf;
}

/* Everything after the first line (which names the source file), without the note on
 * assigned rel_tgt_ids (once printed, they are explicit). */
static const char *body(char *s)
{
	static const char note[] = "\t# assigned by utgtd";
	char *p;
	while ((p = strstr(s, note)))
		memmove(p, p + sizeof(note) - 1, strlen(p + sizeof(note) - 1) + 1);
	const char *nl = strchr(s, '\n');
	return nl ? nl + 1 : s;
}

static void assert_round_trip(const char *text, const char *what)
{
	struct captured c;
	struct diag d;
	struct tgt_config *a = load_str(text, &c, &d);
	cr_assert_not_null(a, "%s did not load:\n%s", what, cap_dump(&c));
	char *pa = print_to_string(a, 0);
	struct tgt_config *b = load_str(pa, &c, &d);
	cr_assert_not_null(b, "%s: printed form does not load:\n%s\n%s", what, cap_dump(&c), pa);
	char *pb = print_to_string(b, 0);
	cr_assert_str_eq(body(pb), body(pa), "%s: not a fixed point", what);
	/* and the models agree where it matters */
	cr_assert_eq(a->ndevices, b->ndevices);
	cr_assert_eq(a->ndrivers, b->ndrivers);
	for (unsigned i = 0; i < a->ndrivers; i++) {
		cr_assert_eq(a->drivers[i].ntargets, b->drivers[i].ntargets);
		for (unsigned t = 0; t < a->drivers[i].ntargets; t++) {
			const struct tgt_target *x = &a->drivers[i].targets[t];
			const struct tgt_target *y = &b->drivers[i].targets[t];
			cr_assert_str_eq(x->name, y->name);
			cr_assert_eq(x->enabled, y->enabled);
			cr_assert_eq(x->rel_tgt_id, y->rel_tgt_id);
			cr_assert_eq(x->table.n, y->table.n);
			cr_assert_eq(x->ngroups, y->ngroups);
		}
	}
	cr_assert_eq(a->nalua_groups, b->nalua_groups);
	free(pa);
	free(pb);
	tgt_config_free(a);
	tgt_config_free(b);
}

Test(conf_print, every_example_round_trips)
{
	DIR *dir = opendir("conf");
	struct dirent *e;
	unsigned n = 0;
	cr_assert_not_null(dir, "run from the repository root");
	while ((e = readdir(dir))) {
		size_t nl = strlen(e->d_name);
		char path[512];
		if (nl < 6 || strcmp(e->d_name + nl - 5, ".conf"))
			continue;
		snprintf(path, sizeof(path), "conf/%s", e->d_name);
		FILE *f = fopen(path, "r");
		char *text = calloc(1, 1 << 20);
		size_t len = fread(text, 1, (1 << 20) - 1, f);
		fclose(f);
		text[len] = '\0';
		assert_round_trip(text, path);
		free(text);
		n++;
	}
	closedir(dir);
	cr_assert_geq(n, 7);
}

Test(conf_print, awkward_names_and_values_are_quoted)
{
	assert_round_trip("HANDLER vdisk_fileio {\n"
			  " DEVICE \"disk #1 {x}\" {\n"
			  "  filename \"/tmp/a \\\"b\\\\c.img\"\n"
			  " }\n"
			  "}\n"
			  "TARGET_DRIVER iscsi {\n"
			  " TARGET t {\n"
			  "  enabled 1\n"
			  "  comment \"\"\n"
			  "  LUN 0 \"disk #1 {x}\"\n"
			  " }\n"
			  "}\n",
			  "quoting");
}

Test(conf_print, groups_alua_and_unknown_drivers_round_trip)
{
	assert_round_trip(
	    "HANDLER ramdisk {\n DEVICE a { size_mb 1 }\n}\n"
	    "TARGET_DRIVER iscsi {\n"
	    " TARGET t {\n  enabled 1\n  LUN 0 a\n"
	    "  GROUP g {\n   INITIATOR \"!iqn.*\"\n   LUN 0 a { read_only 1 }\n   "
	    "comment x\n  }\n }\n}\n"
	    "TARGET_DRIVER qla2x00t {\n TARGET 25:00 {\n  HW_TARGET\n  enabled 1\n  LUN 0 "
	    "a\n }\n}\n"
	    "DEVICE_GROUP dg {\n DEVICE a\n TARGET_GROUP tg {\n  group_id 7\n  state "
	    "standby\n  TARGET t\n  TARGET far { rel_tgt_id 77 }\n }\n}\n",
	    "groups");
}

Test(conf_print, secrets_are_masked_on_request)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg =
	    load_str("TARGET_DRIVER iscsi {\n"
		     " IncomingUser \"disc 12charsecret\"\n"
		     " TARGET t {\n  enabled 1\n  OutgoingUser \"me 12charsecret9\"\n }\n"
		     "}\n",
		     &c, &d);
	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	char *plain = print_to_string(cfg, 0);
	char *masked = print_to_string(cfg, TGT_PRINT_MASK_SECRETS);
	cr_assert(strstr(plain, "IncomingUser \"disc 12charsecret\""), "%s", plain);
	cr_assert(strstr(masked, "IncomingUser \"disc ********\""), "%s", masked);
	cr_assert(strstr(masked, "OutgoingUser \"me ********\""), "%s", masked);
	cr_assert_null(strstr(masked, "12charsecret"), "%s", masked);
	free(plain);
	free(masked);
	tgt_config_free(cfg);
}

Test(conf_print, defaults_are_written_out)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("TARGET_DRIVER iscsi {\n TARGET t\n}\n", &c, &d);
	cr_assert_not_null(cfg);
	char *out = print_to_string(cfg, 0);
	cr_assert(strstr(out, "\tenabled 0\n"), "%s", out);
	cr_assert(strstr(out, "\trel_tgt_id 1\t# assigned by utgtd\n"), "%s", out);
	free(out);
	tgt_config_free(cfg);
}

/* ---- SCST's layout (utgtadm write-config) ---- */

static void dump_table(FILE *f, const struct tgt_config *cfg, const struct scsi_lun_table *t)
{
	for (unsigned i = 0; i < t->n; i++) {
		const char *name = "?";
		for (unsigned d = 0; d < cfg->ndevices; d++)
			if (cfg->devices[d].dev == t->e[i].dev)
				name = cfg->devices[d].name;
		fprintf(f, "  lun %llu %s ro %d\n", (unsigned long long)t->e[i].lun, name,
			t->e[i].read_only);
	}
}

/* enabled and rel_tgt_id are model fields (printed from them, compared as them) */
static void dump_attrs(FILE *f, const struct tgt_attrs *as)
{
	for (unsigned i = 0; i < as->n; i++)
		if (strcasecmp(as->a[i].key, "enabled") && strcasecmp(as->a[i].key, "rel_tgt_id"))
			fprintf(f, "  %s=%s\n", as->a[i].key, as->a[i].value);
}

/* What a running daemon would serve from cfg: the LU parameters and stores as configured,
 * the drivers, targets, LUN tables, groups and ALUA states. */
static char *running_state(const struct tgt_config *cfg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (unsigned i = 0; i < cfg->ndevices; i++) {
		const struct tgt_device *td = &cfg->devices[i];
		const struct scsi_dev_params *p = &td->dev->p;
		const struct backstore *b = td->dev->bs;
		fprintf(f, "device %s %s: %s|%s|%s|%s|%s|%u|", td->name, td->handler, p->vendor,
			p->product, p->revision, p->t10_dev_id, p->usn, p->naa_len);
		for (unsigned k = 0; k < p->naa_len; k++)
			fprintf(f, "%02x", p->naa_bytes[k]);
		fprintf(f, "|%u|", p->eui64_len);
		for (unsigned k = 0; k < p->eui64_len; k++)
			fprintf(f, "%02x", p->eui64[k]);
		fprintf(f, "|%s|%s|type %u rot %d rmb %d san %u pbe %d\n", p->vend_specific_id,
			p->scsi_device_name, p->type, p->rotational, p->removable,
			p->sanitize_rate_mb, p->lb_per_pb_exp);
		fprintf(f, "  store %s %s size %llu bs %u ro %d nv %d od %d wt %d thin %d dummy %d "
			   "rz %d\n",
			b->ops->name, b->filename, (unsigned long long)b->size,
			b->block_size ? b->block_size : 512, b->read_only, b->nv_cache, b->o_direct,
			b->write_through, b->thin_provisioned, b->dummy, b->read_zero);
	}
	for (unsigned d = 0; d < cfg->ndrivers; d++) {
		const struct tgt_driver *drv = &cfg->drivers[d];
		fprintf(f, "driver %s enabled %d known %d\n", drv->name, drv->enabled, drv->known);
		dump_attrs(f, &drv->attrs);
		for (unsigned i = 0; i < drv->ntargets; i++) {
			const struct tgt_target *t = &drv->targets[i];
			fprintf(f, " target %s enabled %d rtpi %u hw %d ppacl %d\n", t->name,
				t->enabled, t->rel_tgt_id, t->hw_target, t->per_portal_acl);
			dump_attrs(f, &t->attrs);
			dump_table(f, cfg, &t->table);
			for (unsigned g = 0; g < t->ngroups; g++) {
				fprintf(f, " group %s\n", t->groups[g].name);
				for (unsigned k = 0; k < t->groups[g].ninitiators; k++)
					fprintf(f, "  initiator %s\n", t->groups[g].initiators[k]);
				dump_attrs(f, &t->groups[g].attrs);
				dump_table(f, cfg, &t->groups[g].table);
			}
		}
	}
	for (unsigned i = 0; i < cfg->nalua_groups; i++) {
		const struct scsi_alua_group *g = &cfg->alua_groups[i];
		fprintf(f, "dgroup %s\n", cfg->device_groups[i].name);
		for (unsigned k = 0; k < cfg->device_groups[i].ndevices; k++)
			fprintf(f, "  device %s\n", cfg->device_groups[i].devices[k]->name);
		for (unsigned k = 0; k < g->ntpgs; k++) {
			fprintf(f, "  tpg %u state %u pref %d ports", g->tpgs[k].group_id,
				g->tpgs[k].state, g->tpgs[k].preferred);
			for (unsigned x = 0; x < g->tpgs[k].nports; x++)
				fprintf(f, " %u", g->tpgs[k].rel_tgt_ids[x]);
			fputc('\n', f);
		}
	}
	fclose(f);
	return buf;
}

static void assert_scst_round_trip(const char *text, const char *what)
{
	struct captured c;
	struct diag d;
	struct tgt_config *a = load_str(text, &c, &d), *b;
	char *wa, *wb, *sa, *sb;

	cr_assert_not_null(a, "%s did not load:\n%s", what, cap_dump(&c));
	wa = print_to_string(a, TGT_PRINT_SCST);
	b = load_str(wa, &c, &d);
	cr_assert_not_null(b, "%s: the written file does not load:\n%s\n%s", what, cap_dump(&c), wa);
	cr_assert_eq(cap_count(&c, true), 0, "%s: errors:\n%s", what, cap_dump(&c));
	sa = running_state(a);
	sb = running_state(b);
	cr_assert_str_eq(sb, sa, "%s: another running state from the written file:\n%s", what, wa);
	/* written again from what was loaded (its non-key values now set): the same state */
	wb = print_to_string(b, TGT_PRINT_SCST);
	tgt_config_free(b);
	b = load_str(wb, &c, &d);
	cr_assert_not_null(b, "%s: the second written file does not load:\n%s", what, cap_dump(&c));
	free(sb);
	sb = running_state(b);
	cr_assert_str_eq(sb, sa, "%s: written twice, another running state:\n%s", what, wb);
	cr_assert(a->ndevices == 0 || strstr(wa, "\t\t# Non-key attributes\n"), "%s:\n%s", what, wa);
	free(wa);
	free(wb);
	free(sa);
	free(sb);
	tgt_config_free(a);
	tgt_config_free(b);
}

Test(conf_print, scst_layout_round_trips_every_example)
{
	DIR *dir = opendir("conf");
	struct dirent *e;
	unsigned n = 0;

	cr_assert_not_null(dir, "run from the repository root");
	while ((e = readdir(dir))) {
		size_t nl = strlen(e->d_name);
		char path[512], *text = calloc(1, 1 << 20);
		FILE *f;
		if (nl < 6 || strcmp(e->d_name + nl - 5, ".conf")) {
			free(text);
			continue;
		}
		snprintf(path, sizeof(path), "conf/%s", e->d_name);
		f = fopen(path, "r");
		text[fread(text, 1, (1 << 20) - 1, f)] = '\0';
		fclose(f);
		assert_scst_round_trip(text, path);
		free(text);
		n++;
	}
	closedir(dir);
	cr_assert_geq(n, 11, "%u examples", n);
}

/* The configurations the integration and guest tests run, in the shapes they use. */
Test(conf_print, scst_layout_round_trips_the_tests_configs)
{
	assert_scst_round_trip(
	    "HANDLER ramdisk {\n DEVICE rd0 { size_mb 32 }\n DEVICE rd1 { size_mb 8 }\n}\n"
	    "HANDLER vdisk_nullio {\n DEVICE n0 { dummy 1 }\n DEVICE n1\n}\n"
	    "HANDLER vdisk_fileio {\n DEVICE f0 {\n  filename /tmp/utgt-none/f0.img\n  size_mb 64\n"
	    "  thin_provisioned 1\n  t10_vend_id ACME\n  usn 1234\n  naa_id "
	    "0x6001405a1b2c3d4e5f60718293a4b5c6\n }\n}\n"
	    "HANDLER vcdrom {\n DEVICE cd0\n}\n"
	    "TARGET_DRIVER iscsi {\n listen 127.0.0.1:3260\n"
	    " TARGET iqn.2026-12.org.utgt:a {\n  enabled 1\n  per_portal_acl 1\n"
	    "  IncomingUser \"joe 12charsecret\"\n  LUN 0 rd0\n  LUN 3 f0 { read_only 1 }\n"
	    "  GROUP g {\n   INITIATOR iqn.1993-08.org.debian:01:x\\#10.0.0.1\n   LUN 0 rd1\n  }\n"
	    " }\n TARGET iqn.2026-12.org.utgt:b {\n  LUN 0 n0\n }\n}\n"
	    "DEVICE_GROUP dg {\n DEVICE rd0\n TARGET_GROUP local {\n  group_id 1\n  state "
	    "nonoptimized\n  preferred 1\n  TARGET iqn.2026-12.org.utgt:a\n }\n"
	    " TARGET_GROUP peer {\n  group_id 2\n  state standby\n  TARGET peer-tgt { rel_tgt_id 9 }\n"
	    " }\n}\n",
	    "tests' shapes");
}
