/* Attribute classification (conf_scst_attrs.c): ours, SCST-only, read-only, unknown. */
#include <criterion/criterion.h>

#include "target/conf_scst_attrs.h"
#include "target/tgt_config.h"

static const char *const fake_drv[] = {"listen", NULL};
static const char *const fake_tgt[] = {"IncomingUser", "allowed_portal", NULL};
static const struct tgt_transport fake_iscsi = {
    .driver = "iscsi", .driver_attrs = fake_drv, .target_attrs = fake_tgt};

Test(conf_scst_attrs, generic_ours)
{
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "enabled"),
		     CONF_ATTR_OURS);
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_TARGET, "ib_srpt", NULL, "rel_tgt_id"),
		     CONF_ATTR_OURS);
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_LUN, "iscsi", NULL, "read_only"),
		     CONF_ATTR_OURS);
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_TARGET_GROUP, NULL, NULL, "state"),
		     CONF_ATTR_OURS);
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_TG_TARGET, NULL, NULL, "rel_tgt_id"),
		     CONF_ATTR_OURS);
}

Test(conf_scst_attrs, transport_lists_make_attributes_ours)
{
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_DRIVER, "iscsi", &fake_iscsi, "listen"),
		     CONF_ATTR_OURS);
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "incominguser"),
		     CONF_ATTR_OURS, "case-insensitive");
}

Test(conf_scst_attrs, scst_attributes_a_transport_lacks_are_scst_only)
{
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "QueuedCommands"),
		     CONF_ATTR_SCST_ONLY);
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "cpu_mask"),
		     CONF_ATTR_SCST_ONLY);
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_DRIVER, "iscsi", &fake_iscsi, "iSNSServer"),
		     CONF_ATTR_SCST_ONLY);
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_GLOBAL, NULL, NULL, "max_tasklet_cmd"),
		     CONF_ATTR_SCST_ONLY);
}

Test(conf_scst_attrs, read_only_ones)
{
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "tid"),
		     CONF_ATTR_READ_ONLY);
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_DRIVER, "iscsi", &fake_iscsi, "open_state"),
		     CONF_ATTR_READ_ONLY);
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_GLOBAL, NULL, NULL, "version"),
		     CONF_ATTR_READ_ONLY);
}

Test(conf_scst_attrs, unknown_with_a_transport_unchecked_without)
{
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "MaxBurst"),
		     CONF_ATTR_UNKNOWN);
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_TARGET, "iscsi", NULL, "MaxBurst"),
		     CONF_ATTR_UNCHECKED, "no transport in the build: it would decide");
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_TARGET, "iscsi", NULL, "QueuedCommands"),
		     CONF_ATTR_UNCHECKED);
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_TARGET, "qla2x00t", NULL, "anything"),
		     CONF_ATTR_UNCHECKED, "unknown drivers are kept as written");
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_GLOBAL, NULL, NULL, "nonsense"),
		     CONF_ATTR_UNKNOWN);
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_LUN, "iscsi", NULL, "ro"), CONF_ATTR_UNKNOWN);
}

Test(conf_scst_attrs, repeatable)
{
	cr_assert(conf_attr_repeatable("IncomingUser"));
	cr_assert(conf_attr_repeatable("allowed_portal"));
	cr_assert(conf_attr_repeatable("listen"));
	cr_assert_not(conf_attr_repeatable("OutgoingUser"));
	cr_assert_not(conf_attr_repeatable("enabled"));
}

static const char *const fake_srp_tgt[] = {"enabled", "rel_tgt_id", NULL};
static const struct tgt_transport fake_srpt = {
    .driver = "ib_srpt", .driver_attrs = fake_drv, .target_attrs = fake_srp_tgt};

/* What scstadmin -write_config writes on an SCST 3.x system (issue 12's list, and the rest of
 * the SCST README's): each has a class, none is unknown. */
Test(conf_scst_attrs, every_attribute_scst_writes_is_known)
{
	static const struct {
		enum conf_scope scope;
		const char *driver;
		const struct tgt_transport *tp;
		const char *key;
		enum conf_attr_class want;
	} cases[] = {
	    {CONF_SCOPE_GLOBAL, NULL, NULL, "async_lun_replace", CONF_ATTR_SCST_ONLY},
	    {CONF_SCOPE_DRIVER, "iscsi", &fake_iscsi, "isns_entity_name", CONF_ATTR_SCST_ONLY},
	    {CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "OFMarker", CONF_ATTR_SCST_ONLY},
	    {CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "IFMarker", CONF_ATTR_SCST_ONLY},
	    {CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "MaxAHSLength", CONF_ATTR_SCST_ONLY},
	    {CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "sg_tablesize", CONF_ATTR_READ_ONLY},
	    {CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "dif_capabilities", CONF_ATTR_READ_ONLY},
	    {CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "read_cmd_count", CONF_ATTR_READ_ONLY},
	    {CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "write_io_count_kb", CONF_ATTR_READ_ONLY},
	    {CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "hw_target", CONF_ATTR_READ_ONLY},
	    {CONF_SCOPE_GROUP, "iscsi", &fake_iscsi, "per_sess_dedicated_tgt_threads",
	     CONF_ATTR_SCST_ONLY},
	    {CONF_SCOPE_TARGET, "ib_srpt", &fake_srpt, "comp_v_mask", CONF_ATTR_SCST_ONLY},
	    {CONF_SCOPE_TARGET, "ib_srpt", &fake_srpt, "port_id", CONF_ATTR_SCST_ONLY},
	    {CONF_SCOPE_TARGET, "ib_srpt", &fake_srpt, "device", CONF_ATTR_READ_ONLY},
	    {CONF_SCOPE_TARGET, "ib_srpt", &fake_srpt, "link_layer", CONF_ATTR_READ_ONLY},
	    {CONF_SCOPE_TARGET, "ib_srpt", &fake_srpt, "login_info", CONF_ATTR_READ_ONLY},
	    {CONF_SCOPE_TARGET, "ib_srpt", &fake_srpt, "sg_tablesize", CONF_ATTR_READ_ONLY},
	    {CONF_SCOPE_TARGET, "ib_srpt", &fake_srpt, "dif_capabilities", CONF_ATTR_READ_ONLY},
	    {CONF_SCOPE_TARGET, "ib_srpt", &fake_srpt, "read_cmd_count", CONF_ATTR_READ_ONLY},
	    {CONF_SCOPE_TARGET, "ib_srpt", &fake_srpt, "hw_target", CONF_ATTR_READ_ONLY},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_assert_eq(
		    conf_attr_classify(cases[i].scope, cases[i].driver, cases[i].tp, cases[i].key),
		    cases[i].want, "%s", cases[i].key);
	/* an HCA port's read-only attributes belong to ib_srpt, not to iSCSI */
	cr_assert_eq(conf_attr_classify(CONF_SCOPE_TARGET, "iscsi", &fake_iscsi, "link_layer"),
		     CONF_ATTR_UNKNOWN);
}
