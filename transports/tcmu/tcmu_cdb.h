/* What the TCMU ring does not say about a CDB: its length and its data direction.  The ring
 * carries the CDB bytes and the data iovecs only, so the transport reads both from the
 * opcode, as any initiator-side SCSI stack does. */
#ifndef UTGT_TCMU_CDB_H
#define UTGT_TCMU_CDB_H

#include <stdbool.h>
#include <stdint.h>

/* CDB length from the group code (variable-length 0x7f: 8 + additional length).  Needs
 * cdb[0], and cdb[7] when cdb[0] == 0x7f. */
unsigned tcmu_cdb_len(const uint8_t *cdb);
/* Whether the command moves data from the initiator to us (data-out).  Anything else that
 * carries data is data-in. */
bool tcmu_cdb_data_out(const uint8_t *cdb);
/* The first LBA of a READ or WRITE (6, 10, 12, 16); false for any other command. */
bool tcmu_cdb_rw_lba(const uint8_t *cdb, uint64_t *lba);

#endif
