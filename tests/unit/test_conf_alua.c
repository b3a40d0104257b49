/* DEVICE_GROUP / TARGET_GROUP (conf_alua.c): the resolved ALUA groups the core sees, local and
 * remote ports, rel_tgt_id hand-over, and the malformed forms with exact message and line. */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/unit/conf_test_util.h"

/* lines 1-9 */
#define ALUA_BASE                                                                                  \
	"HANDLER ramdisk {\n DEVICE a { size_mb 1 }\n DEVICE b { size_mb 1 }\n}\n"                 \
	"TARGET_DRIVER iscsi {\n"                                                                  \
	" TARGET t1 {\n  enabled 1\n  LUN 0 a\n }\n"                                               \
	" TARGET t2 { enabled 1\n LUN 0 a }\n"                                                     \
	"}\n"

Test(conf_alua, groups_ports_and_states)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str(ALUA_BASE "DEVICE_GROUP dg {\n" /* 13 */
						    " DEVICE a\n"
						    " DEVICE b\n"
						    " TARGET_GROUP tg1 {\n"
						    "  group_id 1\n"
						    "  state active\n"
						    "  preferred 1\n"
						    "  TARGET t1\n"
						    " }\n"
						    " TARGET_GROUP tg2 {\n"
						    "  group_id 2\n"
						    "  state nonoptimized\n"
						    "  TARGET t2 { rel_tgt_id 9 }\n"
						    "  TARGET remote { rel_tgt_id 42 }\n"
						    " }\n"
						    " TARGET_GROUP tg3 {\n"
						    "  group_id 3\n"
						    "  state transitioning\n"
						    " }\n"
						    "}\n",
					  &c, &d);
	assert_loads(cfg, c, 0);
	cr_assert_eq(cfg->nalua_groups, 1);
	const struct scsi_alua_group *ag = &cfg->alua_groups[0];
	cr_assert_str_eq(ag->name, "dg");
	cr_assert_eq(ag->ntpgs, 3);
	cr_assert_eq(ag->tpgs[0].group_id, 1);
	cr_assert_eq(ag->tpgs[0].state, ALUA_ACTIVE_OPTIMIZED);
	cr_assert(ag->tpgs[0].preferred);
	cr_assert_eq(ag->tpgs[0].nports, 1);
	/* t1 had no rel_tgt_id: it got the lowest free one (1) and the group sees it */
	const struct tgt_target *t1 = &cfg->drivers[0].targets[0];
	const struct tgt_target *t2 = &cfg->drivers[0].targets[1];
	cr_assert_eq(t1->rel_tgt_id, 1);
	cr_assert_eq(ag->tpgs[0].rel_tgt_ids[0], 1);
	/* t2 got its id from the TARGET_GROUP entry */
	cr_assert_eq(t2->rel_tgt_id, 9);
	cr_assert_eq(ag->tpgs[1].state, ALUA_ACTIVE_NONOPTIMIZED);
	cr_assert_not(ag->tpgs[1].preferred);
	cr_assert_eq(ag->tpgs[1].nports, 2);
	cr_assert_eq(ag->tpgs[1].rel_tgt_ids[0], 9);
	cr_assert_eq(ag->tpgs[1].rel_tgt_ids[1], 42);
	cr_assert_eq(ag->tpgs[2].state, ALUA_TRANSITIONING);
	cr_assert_eq(ag->tpgs[2].nports, 0);
	/* a group with a target of this file is local (alua_follow_lock announces it) */
	cr_assert(ag->tpgs[0].local);
	cr_assert(ag->tpgs[1].local, "t2 is here, remote is not");
	cr_assert_not(ag->tpgs[2].local);
	const struct tgt_device_group *dg = &cfg->device_groups[0];
	cr_assert_eq(dg->alua, ag);
	cr_assert_eq(dg->tgroups[0].targets[0].local, t1);
	cr_assert_null(dg->tgroups[1].targets[1].local, "'remote' is on another node");
	/* both devices point at the group; the core reads dev->alua */
	cr_assert_eq(tgt_config_device(cfg, "a")->dev->alua, ag);
	cr_assert_eq(tgt_config_device(cfg, "b")->dev->alua, ag);
	tgt_config_free(cfg);
}

Test(conf_alua, every_state_name)
{
	static const struct {
		const char *name;
		enum scsi_alua_state st;
	} states[] = {{"active", ALUA_ACTIVE_OPTIMIZED}, {"nonoptimized", ALUA_ACTIVE_NONOPTIMIZED},
		      {"standby", ALUA_STANDBY},	 {"unavailable", ALUA_UNAVAILABLE},
		      {"offline", ALUA_OFFLINE},	 {"transitioning", ALUA_TRANSITIONING}};
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		char text[512];
		struct captured c;
		struct diag d;
		snprintf(text, sizeof(text),
			 ALUA_BASE
			 "DEVICE_GROUP dg {\n DEVICE a\n TARGET_GROUP g {\n  group_id 0\n  "
			 "state %s\n }\n}\n",
			 states[i].name);
		struct tgt_config *cfg = load_str(text, &c, &d);
		assert_loads(cfg, c, 0);
		cr_assert_eq(cfg->alua_groups[0].tpgs[0].state, states[i].st, "%s", states[i].name);
		tgt_config_free(cfg);
	}
}

Test(conf_alua, devices_outside_groups_stay_symmetric)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str(ALUA_BASE "DEVICE_GROUP dg {\n DEVICE a\n}\n", &c, &d);
	assert_loads(cfg, c, 0);
	cr_assert_not_null(tgt_config_device(cfg, "a")->dev->alua);
	cr_assert_null(tgt_config_device(cfg, "b")->dev->alua);
	tgt_config_free(cfg);
}

Test(conf_alua_errors, undefined_device)
{
	assert_fails_with(
	    ALUA_BASE "DEVICE_GROUP dg {\n DEVICE zz\n}\n", 14,
	    "DEVICE_GROUP dg: device 'zz' is not defined (no DEVICE zz in any HANDLER)");
}

Test(conf_alua_errors, device_in_two_groups)
{
	assert_fails_with(
	    ALUA_BASE "DEVICE_GROUP dg {\n DEVICE a\n}\nDEVICE_GROUP dh {\n DEVICE "
		      "a\n}\n",
	    17,
	    "device 'a' is already in DEVICE_GROUP dg (line 14); a device belongs to one "
	    "DEVICE_GROUP at most");
}

Test(conf_alua_errors, device_twice_in_one_group)
{
	assert_fails_with(ALUA_BASE "DEVICE_GROUP dg {\n DEVICE a\n DEVICE a\n}\n", 15,
			  "duplicate DEVICE 'a' in DEVICE_GROUP dg (first at line 14)");
}

Test(conf_alua_errors, duplicate_device_group)
{
	assert_fails_with(ALUA_BASE "DEVICE_GROUP dg {\n}\nDEVICE_GROUP dg {\n}\n", 15,
			  "duplicate DEVICE_GROUP 'dg' (first at line 13)");
}

Test(conf_alua_errors, duplicate_target_group)
{
	assert_fails_with(ALUA_BASE "DEVICE_GROUP dg {\n TARGET_GROUP g { group_id 1 }\n "
				    "TARGET_GROUP g { group_id 2 }\n}\n",
			  15, "duplicate TARGET_GROUP 'g' in DEVICE_GROUP dg (first at line 14)");
}

Test(conf_alua_errors, missing_group_id)
{
	assert_fails_with(ALUA_BASE "DEVICE_GROUP dg {\n TARGET_GROUP g {\n  state active\n "
				    "}\n}\n",
			  14, "TARGET_GROUP g has no group_id");
}

Test(conf_alua_errors, group_id_out_of_range)
{
	assert_fails_with(ALUA_BASE "DEVICE_GROUP dg {\n TARGET_GROUP g {\n  group_id 65536\n "
				    "}\n}\n",
			  15, "invalid group_id '65536': expected an integer 0..65535");
}

Test(conf_alua_errors, duplicate_group_id)
{
	assert_fails_with(
	    ALUA_BASE "DEVICE_GROUP dg {\n TARGET_GROUP g {\n  group_id 4\n }\n "
		      "TARGET_GROUP h {\n  group_id 4\n }\n}\n",
	    18, "group_id 4 of TARGET_GROUP h is already used by TARGET_GROUP g (line 15)");
}

Test(conf_alua_errors, bad_state)
{
	assert_fails_with(ALUA_BASE "DEVICE_GROUP dg {\n TARGET_GROUP g {\n  group_id 1\n  state "
				    "optimized\n }\n}\n",
			  16,
			  "invalid ALUA state 'optimized': expected active, nonoptimized, standby, "
			  "unavailable, offline or transitioning");
}

Test(conf_alua_errors, bad_preferred)
{
	assert_fails_with(ALUA_BASE "DEVICE_GROUP dg {\n TARGET_GROUP g {\n  group_id 1\n  "
				    "preferred 2\n }\n}\n",
			  16, "invalid value '2' for preferred: expected 0 or 1");
}

Test(conf_alua_errors, remote_target_without_rel_tgt_id)
{
	assert_fails_with(
	    ALUA_BASE "DEVICE_GROUP dg {\n TARGET_GROUP g {\n  group_id 1\n  TARGET "
		      "elsewhere\n }\n}\n",
	    16,
	    "TARGET elsewhere in TARGET_GROUP g is not defined in this file and has no "
	    "rel_tgt_id (a target on another node is known by its rel_tgt_id)");
}

Test(conf_alua_errors, local_target_with_a_different_rel_tgt_id)
{
	assert_fails_with(
	    "TARGET_DRIVER iscsi {\n TARGET t {\n  enabled 1\n  rel_tgt_id 5\n }\n}\n"
	    "DEVICE_GROUP dg {\n TARGET_GROUP g {\n  group_id 1\n  TARGET t {\n   "
	    "rel_tgt_id 6\n  }\n }\n}\n",
	    11,
	    "rel_tgt_id 6 of TARGET t in TARGET_GROUP g differs from the target's own "
	    "rel_tgt_id 5 (line 4)");
}

Test(conf_alua_errors, target_in_two_target_groups)
{
	assert_fails_with(ALUA_BASE "DEVICE_GROUP dg {\n TARGET_GROUP g {\n  group_id 1\n  TARGET "
				    "t1\n }\n TARGET_GROUP h {\n  group_id 2\n  TARGET t1\n }\n}\n",
			  20,
			  "TARGET t1 is already in TARGET_GROUP g of DEVICE_GROUP dg (line 16)");
}

Test(conf_alua_errors, unknown_target_group_attribute)
{
	assert_fails_with(ALUA_BASE "DEVICE_GROUP dg {\n TARGET_GROUP g {\n  group_id 1\n  "
				    "pref 1\n }\n}\n",
			  16, "unknown attribute 'pref' in TARGET_GROUP g");
}

Test(conf_alua_errors, device_with_a_block)
{
	assert_fails_with(ALUA_BASE "DEVICE_GROUP dg {\n DEVICE a {\n }\n}\n", 14,
			  "'DEVICE' cannot have a { block }");
}

Test(conf_alua_errors, lun_in_a_device_group)
{
	assert_fails_with(ALUA_BASE "DEVICE_GROUP dg {\n LUN 0 a\n}\n", 14,
			  "'LUN' is not allowed inside DEVICE_GROUP (DEVICE, TARGET_GROUP and "
			  "attributes only)");
}

Test(conf_alua_errors, bad_rel_tgt_id_in_target_group)
{
	assert_fails_with(ALUA_BASE "DEVICE_GROUP dg {\n TARGET_GROUP g {\n  group_id 1\n  TARGET "
				    "r { rel_tgt_id x }\n }\n}\n",
			  16, "invalid rel_tgt_id 'x': expected an integer 1..65535");
}

Test(conf_alua, device_group_before_everything_it_names)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg =
	    load_str("DEVICE_GROUP dg {\n"
		     " DEVICE late\n"
		     " TARGET_GROUP g {\n"
		     "  group_id 5\n"
		     "  TARGET t { rel_tgt_id 12 }\n"
		     " }\n"
		     "}\n"
		     "TARGET_DRIVER iscsi {\n TARGET t {\n  enabled 1\n  LUN 0 late\n }\n}\n"
		     "HANDLER vdisk_nullio {\n DEVICE late\n}\n",
		     &c, &d);
	assert_loads(cfg, c, 0);
	cr_assert_eq(cfg->drivers[0].targets[0].rel_tgt_id, 12);
	cr_assert_eq(cfg->device_groups[0].tgroups[0].targets[0].local,
		     &cfg->drivers[0].targets[0]);
	cr_assert_eq(tgt_config_device(cfg, "late")->dev->alua, &cfg->alua_groups[0]);
	tgt_config_free(cfg);
}
