/* Attribute knowledge tables (SCST 3.x sysfs names, from SCST's and iSCSI-SCST's READMEs). */
#include "target/conf_scst_attrs.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "target/tgt_config.h"

#define END NULL

/* What utgt itself implements in each scope (transports add theirs). */
static const char *const ours_driver[] = {"enabled", END};
static const char *const ours_target[] = {"enabled", "rel_tgt_id", "comment", END};
static const char *const ours_group[] = {"comment", END};
static const char *const ours_lun[] = {"read_only", END};
static const char *const ours_device_group[] = {"comment", END};
static const char *const ours_target_group[] = {"group_id", "state", "preferred", "comment", END};
static const char *const ours_tg_target[] = {"rel_tgt_id", END};

/* Writable in SCST's kernel, meaningless to utgt. */
static const char *const scst_global[] = {
    "setup_id", "max_tasklet_cmd",	 "threads",	    "suspend",	    "trace_level",
    "poll_us",	"force_global_sgv_pool", "measure_latency", "cluster_name", "async_lun_replace",
    END};
static const char *const scst_handler[] = {"trace_level", END};
static const char *const scst_driver[] = {"trace_level", END};
static const char *const scst_target[] = {"addr_method", "cpu_mask",	"io_grouping_type",
					  "black_hole",	 "forwarding",	"aen_disabled",
					  "forward_src", "forward_dst", END};
static const char *const scst_group[] = {"addr_method", "cpu_mask", "io_grouping_type",
					 "black_hole",
					 /* iSCSI-SCST: a kernel thread pool per session */
					 "per_sess_dedicated_tgt_threads", END};

/* Read-only in SCST; 'scstadmin -write_config -nonkey' writes some of them. */
static const char *const ro_global[] = {"version", "last_sysfs_mgmt_res", "trace_cmds",
					"trace_mcmds", END};
static const char *const ro_handler[] = {"type", END};
static const char *const ro_driver[] = {"version", "open_state", END};
/* Every target driver's statistics and capabilities (scst_sysfs.c) */
static const char *const ro_target[] = {"hw_target",	     "tid",
					"dif_checks_failed", "sg_tablesize",
					"dif_capabilities",  "read_cmd_count",
					"write_cmd_count",   "bidi_cmd_count",
					"none_cmd_count",    "unknown_cmd_count",
					"read_io_count_kb",  "write_io_count_kb",
					"bidi_io_count_kb",  END};

/* iSCSI-SCST (driver "iscsi", over TCP and iSER alike: SCST's isert module is a transport of
 * iscsi-scst, not a driver of its own). */
static const char *const iscsi_driver[] = {"IncomingUser",	"OutgoingUser",	    "iSNSServer",
					   "iSNSAccessControl", "internal_portal",  "link_local",
					   "per_portal_acl",	"isns_entity_name", END};
static const char *const iscsi_target[] = {
    "IncomingUser", "OutgoingUser", "HeaderDigest", "DataDigest", "InitialR2T", "ImmediateData",
    "MaxRecvDataSegmentLength", "MaxXmitDataSegmentLength", "MaxBurstLength", "FirstBurstLength",
    "MaxOutstandingR2T", "MaxSessions", "QueuedCommands", "RspTimeout", "NopInInterval",
    "NopInTimeout", "DataPDUInOrder", "DataSequenceInOrder", "ErrorRecoveryLevel",
    "DefaultTime2Wait", "DefaultTime2Retain", "MaxConnections", "allowed_portal", "per_portal_acl",
    "redirect", "alias",
    /* RFC 3720 keys that RFC 7143 removed: utgt answers
     * OFMarker/IFMarker No and sends no AHS it would limit */
    "OFMarker", "IFMarker", "OFMarkInt", "IFMarkInt", "MaxAHSLength", END};
/* ib_srpt (srpt/README): the completion vector mask and the SRP target port id are SCST
 * kernel settings; device, link_layer and login_info describe the HCA port. */
static const char *const srpt_target[] = {"comp_v_mask", "port_id", END};
static const char *const srpt_ro_target[] = {"device", "link_layer", "login_info", END};
static const char *const copy_manager_driver[] = {"allow_not_connected_copy", END};
static const char *const none[] = {END};

struct driver_knowledge {
	const char *driver;
	const char *const *driver_attrs;
	const char *const *target_attrs;
	const char *const *ro_target_attrs; /* read-only ones only this driver has */
};

/* Drivers whose SCST attributes we know; others (tcmu, qla2x00t, ...) are not checked. */
static const struct driver_knowledge scst_drivers[] = {
    {"iscsi", iscsi_driver, iscsi_target, none},
    {"ib_srpt", none, srpt_target, srpt_ro_target},
    {"copy_manager", copy_manager_driver, none, none},
};

static const char *const repeatable[] = {"IncomingUser", "allowed_portal", "listen", "listen_iser",
					 END};

static bool in(const char *const *list, const char *key)
{
	for (; list && *list; list++)
		if (!strcasecmp(*list, key))
			return true;
	return false;
}

static const struct driver_knowledge *knowledge(const char *driver)
{
	for (size_t i = 0; driver && i < sizeof(scst_drivers) / sizeof(scst_drivers[0]); i++)
		if (!strcmp(scst_drivers[i].driver, driver))
			return &scst_drivers[i];
	return NULL;
}

bool conf_attr_repeatable(const char *key)
{
	return in(repeatable, key);
}

static enum conf_attr_class classify_generic(const char *const *ours, const char *const *scst,
					     const char *const *ro, const char *key)
{
	if (in(ours, key))
		return CONF_ATTR_OURS;
	if (in(scst, key))
		return CONF_ATTR_SCST_ONLY;
	if (in(ro, key))
		return CONF_ATTR_READ_ONLY;
	return CONF_ATTR_UNKNOWN;
}

/* DRIVER and TARGET scopes: generic rules, then the transport, then what SCST's driver has. */
static enum conf_attr_class classify_driver_scope(bool target, const char *driver,
						  const struct tgt_transport *tp, const char *key)
{
	const struct driver_knowledge *k = knowledge(driver);
	enum conf_attr_class c;

	if (!tgt_driver_is_known(driver) && !k)
		return CONF_ATTR_UNCHECKED; /* qla2x00t & co: kept as written */
	c = target ? classify_generic(ours_target, scst_target, ro_target, key)
		   : classify_generic(ours_driver, scst_driver, ro_driver, key);
	if (c == CONF_ATTR_OURS)
		return c;
	if (tp && in(target ? tp->target_attrs : tp->driver_attrs, key))
		return CONF_ATTR_OURS;
	if (c != CONF_ATTR_UNKNOWN)
		return c;
	if (k && target && in(k->ro_target_attrs, key))
		return CONF_ATTR_READ_ONLY;
	if (k && in(target ? k->target_attrs : k->driver_attrs, key))
		/* SCST has it: our transport does not implement it, or is not in this build */
		return tp ? CONF_ATTR_SCST_ONLY : CONF_ATTR_UNCHECKED;
	if (!tp)
		return CONF_ATTR_UNCHECKED; /* its transport is not in this build: it would decide
					     */
	return CONF_ATTR_UNKNOWN;
}

enum conf_attr_class conf_attr_classify(enum conf_scope scope, const char *driver,
					const struct tgt_transport *tp, const char *key)
{
	switch (scope) {
	case CONF_SCOPE_GLOBAL:
		return classify_generic(NULL, scst_global, ro_global, key);
	case CONF_SCOPE_HANDLER:
		return classify_generic(NULL, scst_handler, ro_handler, key);
	case CONF_SCOPE_DRIVER:
		return classify_driver_scope(false, driver, tp, key);
	case CONF_SCOPE_TARGET:
		return classify_driver_scope(true, driver, tp, key);
	case CONF_SCOPE_GROUP:
		if (!tgt_driver_is_known(driver) && !knowledge(driver))
			return CONF_ATTR_UNCHECKED;
		return classify_generic(ours_group, scst_group, NULL, key);
	case CONF_SCOPE_LUN:
		return classify_generic(ours_lun, NULL, NULL, key);
	case CONF_SCOPE_DEVICE_GROUP:
		return classify_generic(ours_device_group, NULL, NULL, key);
	case CONF_SCOPE_TARGET_GROUP:
		return classify_generic(ours_target_group, NULL, NULL, key);
	case CONF_SCOPE_TG_TARGET:
		return classify_generic(ours_tg_target, NULL, NULL, key);
	}
	return CONF_ATTR_UNKNOWN;
}
