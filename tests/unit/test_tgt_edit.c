/* Live administration's verbs as configuration edits (tgt_edit.c): each verb on a running
 * configuration gives the next one (checked in the model), and each refusal says why in the
 * verb's own terms. */
#include <criterion/criterion.h>

#include "target/tgt_edit.h"
#include "tests/unit/conf_test_util.h"

#define T "iqn.2026-12.org.utgt:edit"

static const char *CONF =
    "HANDLER ramdisk {\n DEVICE d0 { size_mb 1 }\n DEVICE d1 { size_mb 2 }\n"
    " DEVICE spare { size_mb 1 }\n}\n"
    "HANDLER vcdrom {\n DEVICE cd\n}\n"
    "TARGET_DRIVER iscsi {\n listen 127.0.0.1:3260\n TARGET " T " {\n"
    "  enabled 1\n  LUN 0 d0\n  GROUP g {\n   INITIATOR iqn.x:a\n   LUN 0 d1\n"
    "  }\n }\n}\n"
    "TARGET_DRIVER copy_manager {\n TARGET copy_manager_tgt {\n  LUN 0 d0\n"
    "  LUN 1 spare\n }\n}\n"
    "DEVICE_GROUP dg {\n DEVICE spare\n TARGET_GROUP tg {\n  group_id 1\n"
    "  TARGET " T "\n }\n}\n";

static struct tgt_config *cfg;

static void setup(void)
{
	struct captured c;
	struct diag d;

	cfg = load_str(CONF, &c, &d);
	cr_assert_not_null(cfg, "%s", cap_dump(&c));
}

static void teardown(void)
{
	tgt_config_free(cfg);
}

TestSuite(tgt_edit, .init = setup, .fini = teardown);

#define OPTS(...) ((const struct tgt_edit_opt[]){__VA_ARGS__})
#define NOPTS(...)                                                                                 \
	(sizeof((const struct tgt_edit_opt[]){__VA_ARGS__}) / sizeof(struct tgt_edit_opt))

static struct tgt_config *edit_ok(enum tgt_edit_verb v, enum tgt_edit_obj o, const char *name,
				  const struct tgt_edit_opt *opts, unsigned n)
{
	struct tgt_edit e = {v, o, name, opts, n};
	char err[512] = "";
	struct tgt_config *next = tgt_edit_config(cfg, &e, err, sizeof(err));

	cr_assert_not_null(next, "refused: %s", err);
	cr_assert_str_eq(next->path, cfg->path);
	return next;
}

static void edit_fails(enum tgt_edit_verb v, enum tgt_edit_obj o, const char *name,
		       const struct tgt_edit_opt *opts, unsigned n, const char *msg)
{
	struct tgt_edit e = {v, o, name, opts, n};
	char err[512] = "";
	struct tgt_config *next = tgt_edit_config(cfg, &e, err, sizeof(err));

	cr_assert_null(next, "accepted, expected: %s", msg);
	cr_assert_str_eq(err, msg);
}

static const struct tgt_target *target(const struct tgt_config *c)
{
	return tgt_driver_target(tgt_config_driver(c, "iscsi"), T);
}

Test(tgt_edit, devices)
{
	struct tgt_config *n;

	n = edit_ok(EDIT_ADD, OBJ_DEVICE, "n0",
		    OPTS({"handler", "vdisk_nullio"}, {"size_mb", "5"}, {"t10_vend_id", "X"}), 3);
	cr_assert_eq(n->ndevices, 5);
	cr_assert_str_eq(tgt_config_device(n, "n0")->handler, "vdisk_nullio");
	cr_assert_eq(tgt_config_device(n, "n0")->dev->bs->size, 5 << 20);
	tgt_config_free(n);
	edit_fails(EDIT_ADD, OBJ_DEVICE, "d1", OPTS({"handler", "ramdisk"}), 1,
		   "DEVICE 'd1' already exists (HANDLER ramdisk)");
	edit_fails(EDIT_ADD, OBJ_DEVICE, "x", NULL, 0, "handler=NAME is needed");
	edit_fails(EDIT_ADD, OBJ_DEVICE, "x", OPTS({"handler", "dev_disk"}), 1,
		   "handler 'dev_disk' passes commands through to a SCSI device of the host "
		   "(/dev/sg*), which needs a SCSI host in the kernel and utgt runs in user space "
		   "without one; export the device's block node with vdisk_blockio instead");
	edit_fails(EDIT_ADD, OBJ_DEVICE, "x", OPTS({"handler", "ramdisk"}), 1,
		   "DEVICE x: ramdisk needs size or size_mb");

	/* in use by a LUN: refused; only copy_manager's and a DEVICE_GROUP's: they follow */
	edit_fails(EDIT_REMOVE, OBJ_DEVICE, "d1", NULL, 0,
		   "DEVICE d1 is used by LUN 0 of GROUP g of TARGET " T
		   " (driver iscsi); remove the LUN first");
	edit_fails(EDIT_REMOVE, OBJ_DEVICE, "nope", NULL, 0, "no DEVICE 'nope'");
	n = edit_ok(EDIT_REMOVE, OBJ_DEVICE, "spare", NULL, 0);
	cr_assert_null(tgt_config_device(n, "spare"));
	cr_assert_eq(
	    tgt_driver_target(tgt_config_driver(n, "copy_manager"), "copy_manager_tgt")->nluns, 1);
	cr_assert_eq(n->device_groups[0].ndevices, 0);
	tgt_config_free(n);

	n = edit_ok(EDIT_SET, OBJ_DEVICE, "d0", OPTS({"size", "3M"}, {"prod_id", "P"}), 2);
	cr_assert_eq(tgt_config_device(n, "d0")->dev->bs->size, 3 << 20, "size replaces size_mb");
	cr_assert_null(tgt_attr_find(&tgt_config_device(n, "d0")->attrs, "size_mb"));
	cr_assert_str_eq(tgt_config_device(n, "d0")->dev->p.product, "P");
	tgt_config_free(n);
	n = edit_ok(EDIT_SET, OBJ_DEVICE, "cd", OPTS({"filename", "/srv/a.iso"}), 1);
	cr_assert_str_eq(tgt_config_device(n, "cd")->dev->bs->filename, "/srv/a.iso",
			 "a DEVICE without a block gets one");
	tgt_config_free(n);
	edit_fails(EDIT_SET, OBJ_DEVICE, "d0", NULL, 0,
		   "set device d0: no attribute given (ATTR=VALUE)");
	edit_fails(EDIT_SET, OBJ_DEVICE, "d0", OPTS({"read_only", "maybe"}), 1,
		   "DEVICE d0: bad read_only 'maybe': expected 0 or 1");
	edit_fails(EDIT_ENABLE, OBJ_DEVICE, "d0", NULL, 0, "a DEVICE is added, removed or set");
}

Test(tgt_edit, targets_and_drivers)
{
	struct tgt_config *n;

	n = edit_ok(EDIT_ADD, OBJ_TARGET, "iqn.2026-12.org.utgt:new", OPTS({"driver", "iscsi"}), 1);
	cr_assert_not(
	    tgt_driver_target(tgt_config_driver(n, "iscsi"), "iqn.2026-12.org.utgt:new")->enabled,
	    "SCST: a new target is disabled");
	cr_assert_eq(tgt_driver_target(tgt_config_driver(n, "iscsi"), "iqn.2026-12.org.utgt:new")
			 ->rel_tgt_id,
		     3, "the lowest free id (copy_manager_tgt has 2)");
	tgt_config_free(n);
	edit_fails(EDIT_ADD, OBJ_TARGET, T, OPTS({"driver", "iscsi"}), 1,
		   "TARGET '" T "' already exists in driver iscsi");
	edit_fails(EDIT_ADD, OBJ_TARGET, "t", NULL, 0, "driver=NAME is needed");
	n = edit_ok(EDIT_DISABLE, OBJ_TARGET, T, OPTS({"driver", "iscsi"}), 1);
	cr_assert_not(target(n)->enabled);
	tgt_config_free(n);
	n = edit_ok(EDIT_SET, OBJ_TARGET, T,
		    OPTS({"driver", "iscsi"}, {"IncomingUser", "joe 12charsecret"}), 2);
	cr_assert_str_eq(tgt_attr_get(&target(n)->attrs, "IncomingUser"), "joe 12charsecret");
	tgt_config_free(n);
	edit_fails(EDIT_SET, OBJ_TARGET, T, OPTS({"driver", "iscsi"}, {"HeaderDigest", "Foo"}), 2,
		   "HeaderDigest: expected CRC32C, None or both, got 'Foo'");
	n = edit_ok(EDIT_REMOVE, OBJ_TARGET, T, OPTS({"driver", "iscsi"}), 1);
	cr_assert_eq(tgt_config_driver(n, "iscsi")->ntargets, 0);
	tgt_config_free(n);
	edit_fails(EDIT_REMOVE, OBJ_TARGET, "x", OPTS({"driver", "iscsi"}), 1,
		   "no TARGET 'x' in driver iscsi");
	edit_fails(EDIT_REMOVE, OBJ_TARGET, "x", OPTS({"driver", "fc"}), 1,
		   "no TARGET_DRIVER 'fc'");

	n = edit_ok(EDIT_SET, OBJ_DRIVER, "iscsi", OPTS({"nodelay", "0"}), 1);
	cr_assert_str_eq(tgt_attr_get(&tgt_config_driver(n, "iscsi")->attrs, "nodelay"), "0");
	tgt_config_free(n);
	edit_fails(EDIT_ADD, OBJ_DRIVER, "iscsi", NULL, 0,
		   "a TARGET_DRIVER's attributes are set (set driver NAME ATTR=V)");
}

Test(tgt_edit, groups_luns_initiators)
{
	struct tgt_config *n;
	const struct tgt_edit_opt where[] = {{"driver", "iscsi"}, {"target", T}};

	n = edit_ok(EDIT_ADD, OBJ_LUN, "7",
		    OPTS({"driver", "iscsi"}, {"target", T}, {"device", "d1"}, {"read_only", "1"}),
		    4);
	cr_assert_eq(target(n)->nluns, 2);
	cr_assert_eq(target(n)->luns[1].lun, 7);
	cr_assert(target(n)->luns[1].read_only);
	tgt_config_free(n);
	edit_fails(EDIT_ADD, OBJ_LUN, "0",
		   OPTS({"driver", "iscsi"}, {"target", T}, {"device", "d1"}), 3,
		   "LUN 0 already exists in TARGET " T " (DEVICE d0)");
	edit_fails(EDIT_ADD, OBJ_LUN, "1",
		   OPTS({"driver", "iscsi"}, {"target", T}, {"device", "zz"}), 3,
		   "LUN 1: device 'zz' is not defined (no DEVICE zz in any HANDLER)");
	edit_fails(EDIT_ADD, OBJ_LUN, "x", where, 2, "LUN 'x' is not a number 0..16383");
	edit_fails(EDIT_ADD, OBJ_LUN, "20000", where, 2, "LUN '20000' is not a number 0..16383");
	edit_fails(EDIT_ADD, OBJ_LUN, "1",
		   OPTS({"driver", "iscsi"}, {"target", T}, {"device", "d1"}, {"nv_cache", "1"}), 4,
		   "a LUN has no attribute 'nv_cache' (read_only only)");
	n = edit_ok(EDIT_ADD, OBJ_LUN, "3",
		    OPTS({"driver", "iscsi"}, {"target", T}, {"group", "g"}, {"device", "d0"}), 4);
	cr_assert_eq(target(n)->groups[0].nluns, 2);
	tgt_config_free(n);
	n = edit_ok(EDIT_REMOVE, OBJ_LUN, "0", where, 2);
	cr_assert_eq(target(n)->nluns, 0);
	tgt_config_free(n);
	edit_fails(EDIT_REMOVE, OBJ_LUN, "5", where, 2, "no LUN 5 in TARGET " T);
	edit_fails(EDIT_REMOVE, OBJ_LUN, "0",
		   OPTS({"driver", "iscsi"}, {"target", T}, {"group", "h"}), 3,
		   "no GROUP 'h' in TARGET " T);

	n = edit_ok(EDIT_ADD, OBJ_GROUP, "h", where, 2);
	cr_assert_eq(target(n)->ngroups, 2);
	tgt_config_free(n);
	edit_fails(EDIT_ADD, OBJ_GROUP, "g", where, 2, "GROUP 'g' already exists in TARGET " T);
	n = edit_ok(EDIT_REMOVE, OBJ_GROUP, "g", where, 2);
	cr_assert_eq(target(n)->ngroups, 0);
	tgt_config_free(n);

	n = edit_ok(EDIT_ADD, OBJ_INITIATOR, "iqn.y:*",
		    OPTS({"driver", "iscsi"}, {"target", T}, {"group", "g"}), 3);
	cr_assert_eq(target(n)->groups[0].ninitiators, 2);
	tgt_config_free(n);
	edit_fails(EDIT_ADD, OBJ_INITIATOR, "iqn.x:a",
		   OPTS({"driver", "iscsi"}, {"target", T}, {"group", "g"}), 3,
		   "INITIATOR 'iqn.x:a' is already in GROUP g");
	n = edit_ok(EDIT_REMOVE, OBJ_INITIATOR, "iqn.x:a",
		    OPTS({"driver", "iscsi"}, {"target", T}, {"group", "g"}), 3);
	cr_assert_eq(target(n)->groups[0].ninitiators, 0);
	tgt_config_free(n);
	edit_fails(EDIT_REMOVE, OBJ_INITIATOR, "iqn.q",
		   OPTS({"driver", "iscsi"}, {"target", T}, {"group", "g"}), 3,
		   "no INITIATOR 'iqn.q' in GROUP g");
	edit_fails(EDIT_ADD, OBJ_INITIATOR, "iqn.q", where, 2, "group=NAME is needed");
}

Test(tgt_edit, alua_target_group_state)
{
	struct tgt_config *n =
	    edit_ok(EDIT_SET, OBJ_TGROUP, "tg", OPTS({"dgroup", "dg"}, {"state", "standby"}), 2);

	cr_assert_eq(n->alua_groups[0].tpgs[0].state, ALUA_STANDBY);
	tgt_config_free(n);
	edit_fails(EDIT_SET, OBJ_TGROUP, "tg", OPTS({"dgroup", "dg"}, {"state", "sleepy"}), 2,
		   "invalid ALUA state 'sleepy': expected active, nonoptimized, standby, "
		   "unavailable, offline or transitioning");
	edit_fails(EDIT_SET, OBJ_TGROUP, "zz", OPTS({"dgroup", "dg"}, {"state", "standby"}), 2,
		   "no TARGET_GROUP 'zz' in DEVICE_GROUP dg");
	edit_fails(EDIT_SET, OBJ_TGROUP, "tg", OPTS({"dgroup", "nope"}), 1,
		   "no DEVICE_GROUP 'nope'");
}

Test(tgt_edit, hostile_names_and_values_stay_words)
{
	struct tgt_config *n =
	    edit_ok(EDIT_SET, OBJ_DEVICE, "d0", OPTS({"t10_dev_id", "a \"b\" {c} #d \\e"}), 1);

	cr_assert_str_eq(tgt_config_device(n, "d0")->dev->p.t10_dev_id, "a \"b\" {c} #d \\e");
	tgt_config_free(n);
	edit_fails(EDIT_SET, OBJ_DEVICE, "", OPTS({"a", "b"}), 1, "no name given");
	edit_fails(EDIT_SET, OBJ_DEVICE, "d0", OPTS({"", "b"}), 1,
		   "an option without a name ('=b')");
	edit_fails(EDIT_SET, OBJ_DEVICE, "d0", OPTS({"frobnicate", "1"}), 1,
		   "unknown attribute 'frobnicate' for ramdisk device d0");
}
