/* Backstore handlers by SCST handler name. */
#include <string.h>

#include "scsi/backstore/backstore.h"

static const struct backstore_ops *const handlers[] = {
    &bs_fileio_ops,
    &bs_blockio_ops,
    &bs_nullio_ops,
    &bs_ramdisk_ops,
    &bs_vcdrom_ops,
    &bs_rbd_ops,
};

const struct backstore_ops *backstore_find(const char *handler)
{
	if (!handler)
		return NULL;
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (!strcmp(handlers[i]->name, handler))
			return handlers[i];
	return NULL;
}
