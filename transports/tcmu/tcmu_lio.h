/* What LIO's configfs says about a user backstore: the limits utgt announces on its behalf
 * (VPD B0 comes from utgt, so its MAXIMUM TRANSFER LENGTH must not promise more than the LIO
 * device's hw_max_sectors), whether the kernel waits for netlink replies about it, and which
 * fabric exports it (the protocol identifier of its nexus). */
#ifndef UTGT_TCMU_LIO_H
#define UTGT_TCMU_LIO_H

#include <stddef.h>
#include <stdint.h>

#include "scsi/scsi_task.h"

/* hw_max_sectors * hw_block_size of <root>/core/user_<hba>/<dev>/attrib, in bytes; 0 when
 * unknown (attributes unreadable) or beyond 4 GiB. */
uint32_t tcmu_lio_max_xfer(const char *root, unsigned hba, const char *dev);
/* Does the kernel wait for a reply to this device's netlink events?  Its
 * attrib/nl_reply_supported is the answer once the device is enabled (LIO copies the module's
 * setting into it unless it was set below 0); unreadable (an older kernel): true, as
 * tcmu-runner always replies. */
bool tcmu_lio_wants_reply(const char *root, unsigned hba, const char *dev);

/* The fabrics whose LUNs link to the device: <root>/<fabric>/<wwn>/<tpg>/lun/<lun>/<link>
 * pointing at core/user_<hba>/<dev>.  Writes their configfs names to fabrics (" "-separated,
 * "" when no LUN links to it) and returns the protocol identifier when every link is from one
 * fabric whose protocol is known (srpt and ibmvscsis: SRP; iscsi: iSCSI; qla2xxx, tcm_fc,
 * efct: FCP); otherwise SAS, the placeholder (tcm_loop, vhost and xen-pvscsi present
 * themselves as SAS too). */
enum scsi_proto_id tcmu_lio_fabric(const char *root, unsigned hba, const char *dev, char *fabrics,
				   size_t len);
/* "srp", "iscsi", "fcp", "sas". */
const char *tcmu_lio_proto_name(enum scsi_proto_id p);

#endif
