/* Live changes of what an I_T nexus may address (a LUN added to or removed from its target or
 * group, an ACL change that moves the initiator to another group): scsi_nexus_set_luns().
 *
 * The new table is published with a release store; a command reads the nexus's table once,
 * on arrival, inside a read-side section (scsi_srcu.h), so it sees either the old table or
 * the new one, and the caller frees the old table (or closes an LU that left every table)
 * only after scsi_srcu_synchronize().  What SPC-4 asks of the change itself happens here:
 * REPORTED LUNS DATA HAS CHANGED for the nexus on every LU it still addresses, set before the
 * new table is visible, so an initiator learns of the change on its next command to any of
 * them; and for an LU the nexus loses, what an I_T nexus loss would release (its PREVENT
 * ALLOW MEDIUM REMOVAL and SPC-2 reservation; persistent reservations stay). */
#include <stdio.h>

#include "scsi/scsi_core.h"

static bool has_dev(const struct scsi_lun_table *t, const struct scsi_dev *dev)
{
	for (unsigned i = 0; t && i < t->n; i++)
		if (t->e[i].dev == dev)
			return true;
	return false;
}

bool scsi_nexus_set_luns(struct scsi_nexus *nx, const struct scsi_lun_table *luns)
{
	const struct scsi_lun_table *old = __atomic_load_n(&nx->luns, __ATOMIC_ACQUIRE);
	bool changed = !scsi_lun_tables_equal(old, luns);

	if (changed) {
		for (unsigned i = 0; luns && i < luns->n; i++)
			scsi_ua_raise(luns->e[i].dev, nx->initiator_port, nx->rel_tgt_id, 0x3f,
				      0x0e); /* REPORTED LUNS DATA HAS CHANGED */
		scsi_stats_table_nexus(old, -1);
		scsi_stats_table_nexus(luns, +1);
	}
	__atomic_store_n(&nx->luns, luns, __ATOMIC_RELEASE);
	for (unsigned i = 0; changed && old && i < old->n; i++) {
		struct scsi_dev *dev = old->e[i].dev;

		if (!dev || has_dev(luns, dev))
			continue;
		scsi_ua_clear_prevent(dev, nx);
		scsi_reservation_reset(dev, nx);
	}
	return changed;
}
