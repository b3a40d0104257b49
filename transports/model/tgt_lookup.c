/* Lookups on the loaded model: attributes by key, drivers, targets and devices by name.
 * Attribute keys compare case-insensitively: SCST's names are CamelCase for iSCSI keys
 * (IncomingUser) and lower case elsewhere, and people mix them up; object names are exact. */
#include <string.h>
#include <strings.h>

#include "transports/model/tgt_model.h"

const struct utgt_attr *tgt_attr_find(const struct tgt_attrs *as, const char *key)
{
	if (!as || !key)
		return NULL;
	for (unsigned i = as->n; i-- > 0;)
		if (!strcasecmp(as->a[i].key, key))
			return &as->a[i];
	return NULL;
}

const char *tgt_attr_get(const struct tgt_attrs *as, const char *key)
{
	const struct utgt_attr *a = tgt_attr_find(as, key);
	return a ? a->value : NULL;
}

unsigned tgt_attr_get_all(const struct tgt_attrs *as, const char *key, const char **vals,
			  unsigned max)
{
	unsigned n = 0;

	if (!as || !key)
		return 0;
	for (unsigned i = 0; i < as->n; i++) {
		if (strcasecmp(as->a[i].key, key))
			continue;
		if (vals && n < max)
			vals[n] = as->a[i].value;
		n++;
	}
	return n;
}

const struct tgt_driver *tgt_config_driver(const struct tgt_config *cfg, const char *name)
{
	for (unsigned i = 0; cfg && name && i < cfg->ndrivers; i++)
		if (!strcmp(cfg->drivers[i].name, name))
			return &cfg->drivers[i];
	return NULL;
}

const struct tgt_target *tgt_driver_target(const struct tgt_driver *drv, const char *name)
{
	for (unsigned i = 0; drv && name && i < drv->ntargets; i++)
		if (!strcmp(drv->targets[i].name, name))
			return &drv->targets[i];
	return NULL;
}

const struct tgt_device *tgt_config_device(const struct tgt_config *cfg, const char *name)
{
	for (unsigned i = 0; cfg && name && i < cfg->ndevices; i++)
		if (!strcmp(cfg->devices[i].name, name))
			return &cfg->devices[i];
	return NULL;
}
