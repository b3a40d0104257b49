/* ACL resolution (acl.c): SCST wildcard semantics and which LUN set an initiator gets. */
#include <criterion/criterion.h>

#include "tests/unit/conf_test_util.h"

Test(acl, wildcard_literal_star_and_question)
{
	cr_assert(tgt_wildcard_match("iqn.x:host", "iqn.x:host"));
	cr_assert_not(tgt_wildcard_match("iqn.x:host", "iqn.x:hos"));
	cr_assert_not(tgt_wildcard_match("iqn.x:host", "iqn.x:hostt"));
	cr_assert(tgt_wildcard_match("*", ""));
	cr_assert(tgt_wildcard_match("*", "anything"));
	cr_assert(tgt_wildcard_match("iqn.*", "iqn."));
	cr_assert(tgt_wildcard_match("iqn.*:db-*", "iqn.1993-08.org.debian:db-7"));
	cr_assert_not(tgt_wildcard_match("iqn.*:db-*", "iqn.1993-08.org.debian:web-7"));
	cr_assert(tgt_wildcard_match("bl?h.*", "blah.xxx"), "SCST README's own example");
	cr_assert_not(tgt_wildcard_match("bl?h.*", "blh.xxx"));
	cr_assert(tgt_wildcard_match("21:*:e0:?b:83:*", "21:00:00:e0:8b:83:00:01"));
	cr_assert(tgt_wildcard_match("a*b*c", "a-b-b-c"));
	cr_assert_not(tgt_wildcard_match("a*b*c", "a-b-b-d"));
	cr_assert(tgt_wildcard_match("*c", "ccc"));
	cr_assert(tgt_wildcard_match("**", "x"));
	cr_assert_not(tgt_wildcard_match("?", ""));
	cr_assert(tgt_wildcard_match("", ""));
	cr_assert_not(tgt_wildcard_match("", "x"));
}

Test(acl, wildcard_is_case_insensitive)
{
	cr_assert(tgt_wildcard_match("IQN.2026-12.ORG.X:*", "iqn.2026-12.org.x:Host"));
}

Test(acl, leading_bang_inverts_the_whole_pattern)
{
	cr_assert(tgt_wildcard_match("!bl?h.*", "ah.xxx"), "SCST README's own example");
	cr_assert_not(tgt_wildcard_match("!bl?h.*", "blah.xxx"));
	cr_assert(tgt_wildcard_match("!", "x"), "'!' alone: everything but the empty name");
	cr_assert_not(tgt_wildcard_match("!", ""));
	cr_assert(tgt_wildcard_match("a!b", "a!b"), "only a leading '!' is special");
}

Test(acl, pathological_pattern_is_fast)
{
	char name[4001];
	memset(name, 'a', 4000);
	name[4000] = '\0';
	/* exponential for naive recursion; linear-ish here */
	cr_assert_not(tgt_wildcard_match("*a*a*a*a*a*a*a*a*a*a*a*a*b", name));
}

Test(acl, null_arguments)
{
	cr_assert_not(tgt_wildcard_match(NULL, "x"));
	cr_assert_not(tgt_wildcard_match("x", NULL));
}

static const char acl_conf[] = "HANDLER ramdisk {\n"
			       " DEVICE dflt { size_mb 1 }\n"
			       " DEVICE db { size_mb 1 }\n"
			       " DEVICE bk { size_mb 1 }\n"
			       " DEVICE out { size_mb 1 }\n"
			       "}\n"
			       "TARGET_DRIVER iscsi {\n"
			       " TARGET t {\n"
			       "  enabled 1\n"
			       "  LUN 0 dflt\n"
			       "  GROUP db {\n"
			       "   INITIATOR iqn.x:db-*\n"
			       "   INITIATOR iqn.x:db?\n"
			       "   LUN 0 db\n"
			       "  }\n"
			       "  GROUP backup {\n"
			       "   INITIATOR iqn.x:db-backup\n" /* shadowed by db-* above */
			       "   INITIATOR iqn.x:backup\n"
			       "   LUN 0 bk { read_only 1 }\n"
			       "  }\n"
			       "  GROUP outsiders {\n"
			       "   INITIATOR !iqn.x:*\n"
			       "   LUN 7 out\n"
			       "  }\n"
			       " }\n"
			       " TARGET plain {\n"
			       "  enabled 1\n"
			       " }\n"
			       "}\n";

static const struct scsi_dev *lun0(const struct scsi_lun_table *tab)
{
	const struct scsi_lun_entry *e = NULL;
	for (unsigned i = 0; i < tab->n; i++)
		if (tab->e[i].lun == 0)
			e = &tab->e[i];
	return e ? e->dev : NULL;
}

Test(acl, resolution_follows_scst_rules)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str(acl_conf, &c, &d);
	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	const struct tgt_target *t = &cfg->drivers[0].targets[0];
	const struct scsi_dev *dflt = tgt_config_device(cfg, "dflt")->dev;
	const struct scsi_dev *db = tgt_config_device(cfg, "db")->dev;
	const struct scsi_dev *bk = tgt_config_device(cfg, "bk")->dev;

	/* first matching GROUP in file order */
	cr_assert_eq(tgt_acl_resolve(t, "iqn.x:db-1"), &t->groups[0].table);
	cr_assert_eq(lun0(tgt_acl_resolve(t, "iqn.x:db-1")), db);
	cr_assert_eq(lun0(tgt_acl_resolve(t, "iqn.x:db7")), db);
	cr_assert_eq(lun0(tgt_acl_resolve(t, "IQN.X:DB7")), db, "names are case-insensitive");
	cr_assert_eq(tgt_acl_resolve(t, "iqn.x:db-backup"), &t->groups[0].table,
		     "an earlier GROUP's wildcard wins over a later exact name");
	cr_assert_eq(lun0(tgt_acl_resolve(t, "iqn.x:backup")), bk);
	cr_assert(tgt_acl_resolve(t, "iqn.x:backup")->e[0].read_only);
	/* no GROUP matches: the target's own LUN set */
	cr_assert_eq(tgt_acl_resolve(t, "iqn.x:web1"), &t->table);
	cr_assert_eq(lun0(tgt_acl_resolve(t, "iqn.x:web1")), dflt);
	/* a negated pattern matches everyone else */
	const struct scsi_lun_table *o = tgt_acl_resolve(t, "iqn.1991-05.com.microsoft:w");
	cr_assert_eq(o, &t->groups[2].table);
	cr_assert_eq(o->n, 1);
	cr_assert_eq(o->e[0].lun, 7);
	cr_assert_null(lun0(o));
	/* unknown initiator name (NULL): the default set */
	cr_assert_eq(tgt_acl_resolve(t, NULL), &t->table);
	/* a target without LUNs resolves to an empty table, never NULL */
	const struct tgt_target *p = &cfg->drivers[0].targets[1];
	cr_assert_not_null(tgt_acl_resolve(p, "iqn.x:db-1"));
	cr_assert_eq(tgt_acl_resolve(p, "iqn.x:db-1")->n, 0);
	tgt_config_free(cfg);
}

/* per_portal_acl 1 (iSCSI-SCST): the name matched is "<initiator>#<portal address>", so an
 * initiator can be given other LUNs through another portal; without it '#' patterns never
 * match a plain initiator name. */
static const char portal_conf[] = "HANDLER ramdisk {\n"
				  " DEVICE dflt { size_mb 1 }\n"
				  " DEVICE a { size_mb 1 }\n"
				  " DEVICE b { size_mb 1 }\n"
				  " DEVICE v6 { size_mb 1 }\n"
				  "}\n"
				  "TARGET_DRIVER iscsi {\n"
				  " TARGET pp {\n"
				  "  enabled 1\n"
				  "  per_portal_acl 1\n"
				  "  LUN 0 dflt\n"
				  "  GROUP a {\n"
				  "   INITIATOR iqn.x:host\\#10.0.0.1\n"
				  "   LUN 0 a\n"
				  "  }\n"
				  "  GROUP b {\n"
				  "   INITIATOR iqn.x:*\\#192.168.*\n"
				  "   LUN 0 b\n"
				  "  }\n"
				  "  GROUP v6 {\n"
				  "   INITIATOR *\\#[fe80::1]\n"
				  "   LUN 0 v6\n"
				  "  }\n"
				  " }\n"
				  " TARGET plain {\n"
				  "  enabled 1\n"
				  "  LUN 0 dflt\n"
				  "  GROUP a {\n"
				  "   INITIATOR iqn.x:host\\#10.0.0.1\n"
				  "   LUN 0 a\n"
				  "  }\n"
				  " }\n"
				  "}\n";

Test(acl, per_portal_acl_matches_name_hash_portal)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str(portal_conf, &c, &d);
	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	const struct tgt_target *t = &cfg->drivers[0].targets[0];
	const struct tgt_target *plain = &cfg->drivers[0].targets[1];

	cr_assert(t->per_portal_acl);
	cr_assert_not(plain->per_portal_acl);
	cr_assert_eq(tgt_acl_resolve_portal(t, "iqn.x:host", "10.0.0.1"), &t->groups[0].table);
	cr_assert_eq(tgt_acl_resolve_portal(t, "iqn.x:host", "10.0.0.2"), &t->table,
		     "same initiator, other portal: the default LUN set");
	cr_assert_eq(tgt_acl_resolve_portal(t, "iqn.x:other", "192.168.7.1"), &t->groups[1].table);
	cr_assert_eq(tgt_acl_resolve_portal(t, "iqn.y:v", "[fe80::1]"), &t->groups[2].table);
	cr_assert_eq(tgt_acl_resolve_portal(t, "iqn.x:host", NULL), &t->table,
		     "portal unknown: the bare name, which no '#' pattern matches");
	/* without per_portal_acl the portal is not part of the name */
	cr_assert_eq(tgt_acl_resolve_portal(plain, "iqn.x:host", "10.0.0.1"), &plain->table);
	cr_assert_eq(tgt_acl_resolve(plain, "iqn.x:host#10.0.0.1"), &plain->groups[0].table);
	tgt_config_free(cfg);
}
