/* What LIO's configfs says about a user backstore, for the limits utgt announces on its
 * behalf: VPD B0 comes from utgt, so its MAXIMUM TRANSFER LENGTH must not promise more than
 * the LIO device's hw_max_sectors. */
#ifndef UTGT_TCMU_LIO_H
#define UTGT_TCMU_LIO_H

#include <stdint.h>

/* hw_max_sectors * hw_block_size of <root>/core/user_<hba>/<dev>/attrib, in bytes; 0 when
 * unknown (attributes unreadable) or beyond 4 GiB. */
uint32_t tcmu_lio_max_xfer(const char *root, unsigned hba, const char *dev);

#endif
