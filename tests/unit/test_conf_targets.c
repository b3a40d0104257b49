/* TARGET_DRIVER / TARGET / LUN / GROUP / INITIATOR (conf_targets.c): what loads into the model,
 * rel_tgt_id rules, LUN tables, and the malformed forms with their exact message and line.
 * Unknown-attribute cases use copy_manager, whose (built-in) transport is always present, so
 * the results do not depend on which transports this build has. */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/unit/conf_test_util.h"

#define RAM2 "HANDLER ramdisk {\n DEVICE d0 { size_mb 1 }\n DEVICE d1 { size_mb 1 }\n}\n"

Test(conf_targets, luns_groups_and_tables)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str(RAM2				 /* lines 1-4 */
					  "TARGET_DRIVER iscsi {\n"	 /* 5 */
					  " TARGET iqn.x:t {\n"		 /* 6 */
					  "  enabled 1\n"		 /* 7 */
					  "  LUN 5 d1 { read_only 1 }\n" /* 8 */
					  "  LUN 0 d0\n"		 /* 9 */
					  "  LUN 0x10 d0\n"		 /* 10: same device twice */
					  "  GROUP g1 {\n"		 /* 11 */
					  "   INITIATOR iqn.a:*\n"	 /* 12 */
					  "   INITIATOR \"!iqn.b:*\"\n"	 /* 13 */
					  "   LUN 0 d1\n"		 /* 14 */
					  "  }\n"
					  "  GROUP empty\n"
					  " }\n"
					  "}\n",
					  &c, &d);
	assert_loads(cfg, c, 0);
	const struct tgt_target *t = &cfg->drivers[0].targets[0];
	cr_assert_eq(t->nluns, 3);
	cr_assert_eq(t->luns[0].lun, 5);
	cr_assert(t->luns[0].read_only);
	cr_assert_eq(t->luns[0].line, 8);
	cr_assert_eq(t->luns[2].lun, 16);
	/* the table is sorted by LUN and carries read_only */
	cr_assert_eq(t->table.n, 3);
	cr_assert_eq(t->table.e[0].lun, 0);
	cr_assert_eq(t->table.e[1].lun, 5);
	cr_assert_eq(t->table.e[2].lun, 16);
	cr_assert(t->table.e[1].read_only);
	cr_assert_not(t->table.e[0].read_only);
	cr_assert_eq(t->table.e[1].dev, tgt_config_device(cfg, "d1")->dev);
	cr_assert_eq(t->ngroups, 2);
	cr_assert_str_eq(t->groups[0].name, "g1");
	cr_assert_eq(t->groups[0].ninitiators, 2);
	cr_assert_str_eq(t->groups[0].initiators[1], "!iqn.b:*");
	cr_assert_eq(t->groups[0].table.n, 1);
	cr_assert_eq(t->groups[0].table.e[0].dev, tgt_config_device(cfg, "d1")->dev);
	cr_assert_eq(t->groups[1].nluns, 0);
	cr_assert_eq(t->groups[1].table.n, 0);
	tgt_config_free(cfg);
}

Test(conf_targets, rel_tgt_ids_are_assigned_lowest_free_in_file_order)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("TARGET_DRIVER iscsi {\n"
					  " TARGET a { enabled 1 }\n"
					  " TARGET b {\n  enabled 1\n  rel_tgt_id 1\n }\n"
					  " TARGET c {\n  enabled 1\n  rel_tgt_id 3\n }\n"
					  " TARGET d { enabled 1 }\n"
					  "}\n"
					  "TARGET_DRIVER copy_manager {\n TARGET e\n}\n",
					  &c, &d);
	assert_loads(cfg, c, 0);
	cr_assert_eq(cfg->drivers[0].targets[0].rel_tgt_id, 2);
	cr_assert_eq(cfg->drivers[0].targets[1].rel_tgt_id, 1);
	cr_assert_eq(cfg->drivers[0].targets[2].rel_tgt_id, 3);
	cr_assert_eq(cfg->drivers[0].targets[3].rel_tgt_id, 4);
	cr_assert_eq(cfg->drivers[1].targets[0].rel_tgt_id, 5);
	tgt_config_free(cfg);
}

Test(conf_targets, enabled_defaults)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("TARGET_DRIVER iscsi {\n"
					  " enabled 0\n"
					  " TARGET a\n"
					  " TARGET b { enabled 0 }\n"
					  "}\n"
					  "TARGET_DRIVER ib_srpt {\n TARGET fe80:0000:0000:0000:0002:c903:000f:41a7 { enabled 1 }\n}\n",
					  &c, &d);
	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	cr_assert_eq(c.n, 1, "%s", cap_dump(&c));
	cr_assert(cap_has(&c, false, 3,
			  "TARGET a has no 'enabled 1': it is configured but "
			  "accepts no logins (SCST's default)"),
		  "%s", cap_dump(&c));
	cr_assert_not(cfg->drivers[0].enabled);
	cr_assert_not(cfg->drivers[0].targets[0].enabled);
	cr_assert(cfg->drivers[1].enabled, "drivers are on unless 'enabled 0'");
	cr_assert(cfg->drivers[1].targets[0].enabled);
	tgt_config_free(cfg);
}

Test(conf_targets, hw_target_keyword)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("TARGET_DRIVER ib_srpt {\n TARGET fe80:0000:0000:0000:0002:c903:000f:41a7 {\n  HW_TARGET\n  "
					  "enabled 1\n }\n}\n",
					  &c, &d);
	assert_loads(cfg, c, 0);
	cr_assert(cfg->drivers[0].targets[0].hw_target);
	tgt_config_free(cfg);
}

Test(conf_targets, lun_set_without_lun_0_is_a_warning)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str(RAM2 "TARGET_DRIVER iscsi {\n"
					       " TARGET t {\n"
					       "  enabled 1\n"
					       "  LUN 1 d0\n"
					       "  GROUP g {\n"
					       "   LUN 2 d1\n"
					       "   INITIATOR i\n"
					       "  }\n"
					       " }\n"
					       "}\n",
					  &c, &d);
	assert_loads(cfg, c, 2);
	cr_assert(
	    cap_has(&c, false, 6, "TARGET t: its LUN set has no LUN 0; initiators may not scan it"),
	    "%s", cap_dump(&c));
	cr_assert(cap_has(&c, false, 9,
			  "GROUP g of TARGET t: its LUN set has no LUN 0; "
			  "initiators may not scan it"),
		  "%s", cap_dump(&c));
	tgt_config_free(cfg);
}

Test(conf_targets, shared_rel_tgt_id_between_disabled_targets_is_a_warning)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("TARGET_DRIVER iscsi {\n"
					  " TARGET a {\n  enabled 1\n  rel_tgt_id 7\n }\n"
					  " TARGET b {\n  enabled 0\n  rel_tgt_id 7\n }\n"
					  "}\n",
					  &c, &d);
	assert_loads(cfg, c, 1);
	cr_assert(cap_has(&c, false, 8,
			  "rel_tgt_id 7 of TARGET b is also used by TARGET a (line "
			  "4); only one of them can be enabled"),
		  "%s", cap_dump(&c));
	tgt_config_free(cfg);
}

Test(conf_targets, same_target_name_in_two_drivers_is_fine)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("TARGET_DRIVER iscsi {\n TARGET x { enabled 1 }\n}\n"
					  "TARGET_DRIVER qla2x00t {\n TARGET x { enabled 1 }\n}\n",
					  &c, &d);
	assert_loads(cfg, c, 1); /* the one warning: qla2x00t is kept, not served */
	tgt_config_free(cfg);
}

/* ---- malformed ---- */

Test(conf_target_errors, iser_is_not_a_driver)
{
	assert_fails_with("TARGET_DRIVER iser {\n TARGET x { enabled 1 }\n}\n", 1,
			  "TARGET_DRIVER iser: SCST has no such driver; iSER targets are iSCSI "
			  "targets (TARGET_DRIVER iscsi, RDMAExtensions Yes, the default; "
			  "listen_iser ADDR:PORT for the RDMA/CM portal, docs/iser.md)");
}

Test(conf_target_errors, lun_names_undefined_device)
{
	assert_fails_with(RAM_D0 "TARGET_DRIVER iscsi {\n TARGET t {\n  LUN 0 d9\n }\n}\n", 8,
			  "LUN 0: device 'd9' is not defined (no DEVICE d9 in any HANDLER)");
}

Test(conf_target_errors, duplicate_lun_number)
{
	assert_fails_with(RAM2
			  "TARGET_DRIVER iscsi {\n TARGET t {\n  LUN 0 d0\n  LUN 0 d1\n }\n}\n",
			  8, "duplicate LUN 0 (first at line 7)");
}

Test(conf_target_errors, duplicate_lun_number_in_a_group)
{
	assert_fails_with(RAM2 "TARGET_DRIVER iscsi {\n TARGET t {\n  LUN 0 d0\n  GROUP g {\n"
			       "   LUN 3 d0\n   LUN 3 d1\n  }\n }\n}\n",
			  10, "duplicate LUN 3 (first at line 9)");
}

Test(conf_target_errors, lun_number_too_big)
{
	assert_fails_with(RAM_D0 "TARGET_DRIVER iscsi {\n TARGET t {\n  LUN 16384 d0\n }\n}\n", 8,
			  "invalid LUN number '16384': expected an integer 0..16383");
}

Test(conf_target_errors, lun_number_negative)
{
	assert_fails_with(RAM_D0 "TARGET_DRIVER iscsi {\n TARGET t {\n  LUN -1 d0\n }\n}\n", 8,
			  "invalid LUN number '-1': expected an integer 0..16383");
}

Test(conf_target_errors, lun_number_not_numeric)
{
	assert_fails_with(RAM_D0 "TARGET_DRIVER iscsi {\n TARGET t {\n  LUN zero d0\n }\n}\n", 8,
			  "invalid LUN number 'zero': expected an integer 0..16383");
}

Test(conf_target_errors, lun_number_overflows)
{
	assert_fails_with(
	    RAM_D0 "TARGET_DRIVER iscsi {\n TARGET t {\n  LUN 99999999999999999999 "
		   "d0\n }\n}\n",
	    8, "invalid LUN number '99999999999999999999': expected an integer 0..16383");
}

Test(conf_target_errors, lun_without_device)
{
	assert_fails_with(RAM_D0 "TARGET_DRIVER iscsi {\n TARGET t {\n  LUN 0\n }\n}\n", 8,
			  "expected 'LUN <number> <device> [{ read_only 1 }]'");
}

Test(conf_target_errors, lun_read_only_bad_value)
{
	assert_fails_with(RAM_D0 "TARGET_DRIVER iscsi {\n TARGET t {\n  LUN 0 d0 {\n   read_only "
				 "maybe\n  }\n }\n}\n",
			  9, "invalid value 'maybe' for read_only: expected 0 or 1");
}

Test(conf_target_errors, lun_unknown_attribute)
{
	assert_fails_with(RAM_D0 "TARGET_DRIVER iscsi {\n TARGET t {\n  LUN 0 d0 { readonly 1 }\n "
				 "}\n}\n",
			  8, "unknown attribute 'readonly' in LUN 0");
}

Test(conf_target_errors, duplicate_target)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n TARGET t\n\n TARGET t { enabled 1 }\n}\n", 4,
			  "duplicate TARGET 't' in TARGET_DRIVER iscsi (first at line 2)");
}

Test(conf_target_errors, duplicate_target_driver)
{
	assert_fails_with("TARGET_DRIVER ib_srpt {\n}\nTARGET_DRIVER ib_srpt {\n}\n", 3,
			  "duplicate TARGET_DRIVER 'ib_srpt' (first at line 1)");
}

Test(conf_target_errors, duplicate_group)
{
	assert_fails_with(RAM_D0 "TARGET_DRIVER iscsi {\n TARGET t {\n  GROUP g {\n  }\n  GROUP "
				 "g\n }\n}\n",
			  10, "duplicate GROUP 'g' in TARGET t (first at line 8)");
}

Test(conf_target_errors, initiator_in_two_groups_of_one_target)
{
	assert_fails_with(
	    RAM_D0 "TARGET_DRIVER iscsi {\n"
		   " TARGET t {\n"
		   "  LUN 0 d0\n"
		   "  GROUP a {\n"
		   "   INITIATOR iqn.1993-08.org.debian:01:host\n"
		   "  }\n"
		   "  GROUP b {\n"
		   "   INITIATOR iqn.1993-08.org.debian:01:host\n"
		   "  }\n"
		   " }\n"
		   "}\n",
	    13,
	    "initiator 'iqn.1993-08.org.debian:01:host' is already in GROUP a of TARGET "
	    "t (line 10); an initiator may belong to one GROUP per target");
}

Test(conf_target_errors, initiator_patterns_compare_case_insensitively)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n TARGET t {\n  GROUP a { INITIATOR IQN.X:* }\n"
			  "  GROUP b { INITIATOR iqn.x:* }\n }\n}\n",
			  4,
			  "initiator 'iqn.x:*' is already in GROUP a of TARGET t (line 3); an "
			  "initiator may belong to one GROUP per target");
}

Test(conf_target_errors, same_initiator_in_two_targets_is_fine)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg =
	    load_str("TARGET_DRIVER iscsi {\n"
		     " TARGET t1 {\n  enabled 1\n  GROUP a { INITIATOR i }\n }\n"
		     " TARGET t2 {\n  enabled 1\n  GROUP a { INITIATOR i }\n }\n"
		     "}\n",
		     &c, &d);
	assert_loads(cfg, c, 0);
	tgt_config_free(cfg);
}

Test(conf_target_errors, duplicate_initiator_in_one_group)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n TARGET t {\n  GROUP a {\n   INITIATOR i\n   "
			  "INITIATOR i\n  }\n }\n}\n",
			  5, "duplicate INITIATOR 'i' in GROUP a (first at line 4)");
}

Test(conf_target_errors, empty_initiator_pattern)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n TARGET t {\n  GROUP a {\n   INITIATOR \"\"\n  "
			  "}\n }\n}\n",
			  4, "empty INITIATOR pattern");
}

Test(conf_target_errors, initiator_with_a_block)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n TARGET t {\n  GROUP a {\n   INITIATOR i {\n   "
			  "}\n  }\n }\n}\n",
			  4, "'INITIATOR' cannot have a { block }");
}

Test(conf_target_errors, initiator_outside_a_group)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n TARGET t {\n  INITIATOR i\n }\n}\n", 3,
			  "'INITIATOR' is not allowed inside TARGET (LUN, GROUP, HW_TARGET and "
			  "attributes only)");
}

Test(conf_target_errors, hw_target_with_a_value)
{
	assert_fails_with("TARGET_DRIVER ib_srpt {\n TARGET t {\n  HW_TARGET 1\n }\n}\n", 3,
			  "expected 'HW_TARGET'");
}

Test(conf_targets, rel_tgt_id_zero_means_unset)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("TARGET_DRIVER iscsi {\n TARGET t {\n  enabled 1\n  "
					  "rel_tgt_id 0\n }\n}\n",
					  &c, &d);
	assert_loads(cfg, c, 1);
	cr_assert(cap_has(&c, false, 4,
			  "rel_tgt_id 0 means 'not set' in SCST; TARGET t gets one assigned"),
		  "%s", cap_dump(&c));
	cr_assert_eq(cfg->drivers[0].targets[0].rel_tgt_id, 1);
	cr_assert_eq(cfg->drivers[0].targets[0].rel_tgt_id_line, 0);
	tgt_config_free(cfg);
}

Test(conf_target_errors, rel_tgt_id_not_a_number)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n TARGET t {\n  rel_tgt_id one\n }\n}\n", 3,
			  "invalid rel_tgt_id 'one': expected an integer 1..65535");
}

Test(conf_target_errors, rel_tgt_id_too_big)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n TARGET t {\n  rel_tgt_id 65536\n }\n}\n", 3,
			  "invalid rel_tgt_id '65536': expected an integer 1..65535");
}

Test(conf_target_errors, rel_tgt_id_used_twice_by_enabled_targets)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n"
			  " TARGET a {\n  enabled 1\n  rel_tgt_id 7\n }\n"
			  "}\n"
			  "TARGET_DRIVER ib_srpt {\n"
			  " TARGET b {\n  enabled 1\n  rel_tgt_id 7\n }\n"
			  "}\n",
			  10, "rel_tgt_id 7 of TARGET b is already used by TARGET a (line 4)");
}

Test(conf_target_errors, enabled_not_boolean)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n TARGET t {\n  enabled \"yes please\"\n }\n}\n",
			  3, "invalid value 'yes please' for enabled: expected 0 or 1");
}

Test(conf_target_errors, driver_enabled_not_boolean)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n enabled 2\n}\n", 2,
			  "invalid value '2' for enabled: expected 0 or 1");
}

Test(conf_target_errors, target_name_too_long)
{
	char text[512];
	char name[300];
	memset(name, 'n', 230);
	name[230] = '\0';
	snprintf(text, sizeof(text), "TARGET_DRIVER iscsi {\n TARGET %s\n}\n", name);
	assert_fails_with(text, 2,
			  "target name 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...' is longer than 223 "
			  "characters");
}

Test(conf_target_errors, device_block_inside_a_target)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n TARGET t {\n  DEVICE d0\n }\n}\n", 3,
			  "'DEVICE' is not allowed inside TARGET (LUN, GROUP, HW_TARGET and "
			  "attributes only)");
}

Test(conf_target_errors, lun_directly_in_a_driver)
{
	assert_fails_with(RAM_D0 "TARGET_DRIVER iscsi {\n LUN 0 d0\n}\n", 7,
			  "'LUN' is not allowed inside TARGET_DRIVER (TARGET and attributes only)");
}

Test(conf_target_errors, unknown_target_attribute)
{
	assert_fails_with("TARGET_DRIVER copy_manager {\n TARGET copy_manager_tgt {\n  foo 1\n "
			  "}\n}\n",
			  3, "unknown attribute 'foo' in TARGET copy_manager_tgt");
}

Test(conf_target_errors, unknown_driver_attribute)
{
	assert_fails_with("TARGET_DRIVER copy_manager {\n bar 1\n}\n", 2,
			  "unknown attribute 'bar' in TARGET_DRIVER copy_manager");
}

Test(conf_target_errors, attribute_given_twice)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n TARGET t {\n  enabled 1\n  enabled 0\n }\n}\n",
			  4, "attribute 'enabled' given twice in TARGET t (first at line 3)");
}

Test(conf_target_errors, unknown_group_attribute)
{
	assert_fails_with("TARGET_DRIVER iscsi {\n TARGET t {\n  GROUP g {\n   foo 1\n  }\n "
			  "}\n}\n",
			  4, "unknown attribute 'foo' in GROUP g");
}

Test(conf_target_errors, target_inside_a_group)
{
	assert_fails_with(
	    "TARGET_DRIVER iscsi {\n TARGET t {\n  GROUP g {\n   TARGET u\n  }\n "
	    "}\n}\n",
	    4, "'TARGET' is not allowed inside GROUP (LUN, INITIATOR and attributes only)");
}

Test(conf_target_errors, target_driver_without_name)
{
	assert_fails_with("TARGET_DRIVER {\n}\n", 1, "expected 'TARGET_DRIVER <name> { ... }'");
}

Test(conf_target_errors, repeatable_attributes_are_not_duplicates)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg =
	    load_str("TARGET_DRIVER iscsi {\n"
		     " TARGET t {\n  enabled 1\n"
		     "  allowed_portal 127.0.0.1\n  allowed_portal 127.0.0.2\n"
		     "  IncomingUser \"a 12charsecret\"\n  IncomingUser \"b 12charsecret\"\n"
		     " }\n}\n",
		     &c, &d);
	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	cr_assert_eq(cap_count(&c, true), 0);
	const char *v[4];
	cr_assert_eq(tgt_attr_get_all(&cfg->drivers[0].targets[0].attrs, "allowed_portal", v, 4),
		     2);
	tgt_config_free(cfg);
}
