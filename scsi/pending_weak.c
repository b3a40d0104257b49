/* TEMPORARY during parallel bring-up: weak fallbacks so the tree links while each area is
 * being written.  Every real definition overrides these (libraries are linked whole-archive).
 * The lead deletes this file once every area has landed; nothing here may remain in a release. */
#include <string.h>

#include "scsi/scsi_cmd.h"

#define PENDING __attribute__((weak))

PENDING enum scsi_sr spc_test_unit_ready(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_request_sense(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_inquiry(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_report_luns(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_mode_sense(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_mode_select(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_start_stop_unit(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_prevent_allow(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_report_supported_opcodes(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_report_supported_tmfs(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_report_target_port_groups(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_reserve(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_release(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_pr_in(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_pr_out(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_extended_copy(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr spc_receive_copy_results(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_read_capacity10(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_read_capacity16(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_read(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_write(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_write_verify(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_verify(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_pre_fetch(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_orwrite(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_write_same(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_unmap(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_get_lba_status(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_sync_cache(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_compare_and_write(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_sanitize(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_read_defect_data(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING enum scsi_sr sbc_write_atomic(struct scsi_task *t)
{
	(void)t;
	return SR_INVALID_OPCODE;
}

PENDING struct scsi_pr *scsi_pr_create(struct scsi_dev *dev)
{
	(void)dev;
	return NULL;
}

PENDING void scsi_pr_destroy(struct scsi_pr *pr)
{
	(void)pr;
}

PENDING enum scsi_sr scsi_reservation_check(struct scsi_task *t)
{
	(void)t;
	return SR_OK;
}

PENDING void scsi_reservation_reset(struct scsi_dev *dev, const struct scsi_nexus *nx)
{
	(void)dev;
	(void)nx;
}

PENDING struct scsi_xcopy *scsi_xcopy_create(struct scsi_dev *dev)
{
	(void)dev;
	return NULL;
}

PENDING void scsi_xcopy_destroy(struct scsi_xcopy *xc)
{
	(void)xc;
}

PENDING struct scsi_rangelock *scsi_rangelock_create(void)
{
	return NULL;
}

PENDING void scsi_rangelock_destroy(struct scsi_rangelock *rl)
{
	(void)rl;
}

PENDING void sbc_get_limits(const struct scsi_dev *dev, struct sbc_limits *out)
{
	(void)dev;
	memset(out, 0, sizeof(*out));
}

/* Engineer C needs these from the core (A): a UA raised by predicate over the nexuses an LU
 * knows, and PREEMPT AND ABORT's task abort by nexus predicate. */
PENDING void scsi_ua_raise_match(struct scsi_dev *dev,
				 bool (*match)(const char *initiator_port, uint16_t rel_tgt_id,
					       void *arg),
				 void *arg, uint8_t asc, uint8_t ascq)
{
	(void)dev;
	(void)match;
	(void)arg;
	(void)asc;
	(void)ascq;
}

PENDING void scsi_ts_abort_nexuses(struct scsi_dev *dev,
				   bool (*match)(const struct scsi_nexus *nx, void *arg), void *arg,
				   const struct scsi_task *keep)
{
	(void)dev;
	(void)match;
	(void)arg;
	(void)keep;
}
