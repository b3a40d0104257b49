/* What SCST knows about attributes, so an scst.conf written for (or by) SCST loads: attributes
 * utgt implements are used, ones only SCST's kernel has are kept with a warning, read-only
 * ones that 'scstadmin -write_config -nonkey' writes are accepted, anything else is an error. */
#ifndef UTGT_CONF_SCST_ATTRS_H
#define UTGT_CONF_SCST_ATTRS_H

#include <stdbool.h>

struct tgt_transport;

enum conf_scope {
	CONF_SCOPE_GLOBAL,
	CONF_SCOPE_HANDLER,
	CONF_SCOPE_DRIVER,
	CONF_SCOPE_TARGET,
	CONF_SCOPE_GROUP,
	CONF_SCOPE_LUN,
	CONF_SCOPE_DEVICE_GROUP,
	CONF_SCOPE_TARGET_GROUP,
	CONF_SCOPE_TG_TARGET,
};

enum conf_attr_class {
	CONF_ATTR_OURS,	     /* utgt implements it */
	CONF_ATTR_SCST_ONLY, /* a writable SCST kernel attribute utgt does not implement */
	CONF_ATTR_READ_ONLY, /* read-only in SCST; only there because of -write_config -nonkey */
	CONF_ATTR_UNCHECKED, /* for a driver utgt knows nothing to check against */
	CONF_ATTR_UNKNOWN,
};

/* driver: the TARGET_DRIVER name for DRIVER/TARGET/GROUP/LUN scopes, else NULL.
 * tp: that driver's transport in this build, or NULL. */
enum conf_attr_class conf_attr_classify(enum conf_scope scope, const char *driver,
					const struct tgt_transport *tp, const char *key);
/* Attributes SCST allows several times in one block (IncomingUser, allowed_portal, listen). */
bool conf_attr_repeatable(const char *key);

#endif
