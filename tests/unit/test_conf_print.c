/* The resolved-configuration printer (conf_print.c): its output loads back into the same model
 * (print -> load -> print is a fixed point), quoting survives, secrets can be masked. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
