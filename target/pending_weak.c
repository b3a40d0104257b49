/* TEMPORARY during parallel bring-up: weak fallbacks so the tree links while each area is
 * being written.  Every real definition overrides these (libraries are linked whole-archive).
 * The lead deletes this file once every area has landed; nothing here may remain in a release. */
#include "scsi/scsi_dev.h"

#define PENDING __attribute__((weak))

/* D: scsi/ device configuration from SCST attributes. */
PENDING struct scsi_dev *scsi_dev_configure_at(const char *handler, const char *name, int line,
					       const struct utgt_attr *attrs, unsigned nattrs,
					       struct diag *d)
{
	(void)handler;
	(void)line;
	(void)attrs;
	(void)nattrs;
	diag_error(d, 0, "DEVICE %s: scsi_dev_configure() is not in this build yet", name);
	return NULL;
}
