/* LUN addressing and the per-nexus LUN table (what an initiator may see, built by ACLs). */
#ifndef UTGT_SCSI_LUN_H
#define UTGT_SCSI_LUN_H

#include <stdbool.h>
#include <stdint.h>

struct scsi_dev;

struct scsi_lun_entry {
	uint64_t lun;
	struct scsi_dev *dev;
	bool read_only; /* LUN-level read_only (SCST: LUN n dev { read_only 1 }) */
};

/* Sorted by lun; immutable once published to a nexus. */
struct scsi_lun_table {
	unsigned n;
	struct scsi_lun_entry *e;
};

const struct scsi_lun_entry *scsi_lun_lookup(const struct scsi_lun_table *t, uint64_t lun);
/* Same LUN numbers mapped to the same LUs with the same read_only (NULL is empty). */
bool scsi_lun_tables_equal(const struct scsi_lun_table *a, const struct scsi_lun_table *b);

/* SAM-5 LUN encoding: peripheral (0..255), flat space (256..16383), extended flat space
 * (up to 2^24-1).  Decode returns SCSI_LUN_INVALID for addressing we do not serve. */
#define SCSI_LUN_INVALID UINT64_MAX
uint64_t scsi_lun_decode(const uint8_t lun[8]);
void scsi_lun_encode(uint64_t lun, uint8_t out[8]);

#endif
