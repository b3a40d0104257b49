/* Attribute lookup on the loaded model.  Keys compare case-insensitively: SCST's names are
 * CamelCase for iSCSI keys (IncomingUser) and lower case elsewhere, and people mix them up. */
#include <strings.h>

#include "target/tgt_model.h"

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
