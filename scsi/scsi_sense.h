/* The closed set of outcomes a command can have, and the one place they become status + sense.
 *
 * Handlers and backstores never build sense bytes themselves: they return an enum scsi_sr
 * (optionally after setting the field pointer / INFORMATION helpers below), and the core turns
 * it into SAM status and fixed or descriptor sense, per the LU's D_SENSE bit in the control
 * mode page, when the task completes (scsi_task_complete(), scsi/scsi_exec.c). */
#ifndef UTGT_SCSI_SENSE_H
#define UTGT_SCSI_SENSE_H

#include "scsi/scsi_task.h"

enum scsi_sense_key {
	SK_NO_SENSE        = 0x0,
	SK_RECOVERED_ERROR = 0x1,
	SK_NOT_READY       = 0x2,
	SK_MEDIUM_ERROR    = 0x3,
	SK_HARDWARE_ERROR  = 0x4,
	SK_ILLEGAL_REQUEST = 0x5,
	SK_UNIT_ATTENTION  = 0x6,
	SK_DATA_PROTECT    = 0x7,
	SK_BLANK_CHECK     = 0x8,
	SK_COPY_ABORTED    = 0xa,
	SK_ABORTED_COMMAND = 0xb,
	SK_MISCOMPARE      = 0xe,
};

/* X(name, status, key, asc, ascq) — one row per outcome; the table in scsi_sense.c is
 * generated from this list so the enum and the mapping cannot drift apart. */
#define SCSI_SR_LIST(X)                                                                            \
	X(SR_OK, SAM_STAT_GOOD, SK_NO_SENSE, 0x00, 0x00)                                           \
	X(SR_ASYNC, SAM_STAT_GOOD, SK_NO_SENSE, 0x00, 0x00) /* handler completes later */          \
	X(SR_CONDITION_MET, SAM_STAT_CONDITION_MET, SK_NO_SENSE, 0x00, 0x00)                       \
	X(SR_RESERVATION_CONFLICT, SAM_STAT_RESERVATION_CONFLICT, SK_NO_SENSE, 0x00, 0x00)         \
	X(SR_BUSY, SAM_STAT_BUSY, SK_NO_SENSE, 0x00, 0x00)                                         \
	X(SR_TASK_SET_FULL, SAM_STAT_TASK_SET_FULL, SK_NO_SENSE, 0x00, 0x00)                       \
	X(SR_ABORTED, SAM_STAT_TASK_ABORTED, SK_NO_SENSE, 0x00, 0x00) /* no response is sent */    \
	X(SR_UNIT_ATTENTION, SAM_STAT_CHECK_CONDITION, SK_UNIT_ATTENTION, 0x00, 0x00) /* asc from task */ \
	X(SR_INVALID_OPCODE, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x20, 0x00)             \
	X(SR_LBA_OUT_OF_RANGE, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x21, 0x00)           \
	X(SR_INVALID_FIELD_IN_CDB, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x24, 0x00)       \
	X(SR_LUN_NOT_SUPPORTED, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x25, 0x00)          \
	X(SR_INVALID_FIELD_IN_PARAM, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x26, 0x00)     \
	X(SR_PARAM_VALUE_INVALID, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x26, 0x02)        \
	X(SR_INVALID_RELEASE_OF_PR, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x26, 0x04)      \
	X(SR_TOO_MANY_TARGET_DESCRIPTORS, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x26, 0x06) \
	X(SR_UNSUPPORTED_TARGET_DESCRIPTOR, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x26, 0x07) \
	X(SR_TOO_MANY_SEGMENT_DESCRIPTORS, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x26, 0x08) \
	X(SR_UNSUPPORTED_SEGMENT_DESCRIPTOR, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x26, 0x09) \
	X(SR_PARAM_LIST_LENGTH_ERROR, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x1a, 0x00)    \
	X(SR_SAVING_PARAMS_UNSUP, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x39, 0x00)        \
	X(SR_INVALID_CMD_SEQUENCE, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x2c, 0x00)       \
	X(SR_MEDIUM_REMOVAL_PREVENTED, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x53, 0x02)   \
	X(SR_INSUFFICIENT_REG_RESOURCES, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x55, 0x04) \
	X(SR_OPERATION_IN_PROGRESS, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x00, 0x16)      \
	X(SR_WRITE_PROTECTED, SAM_STAT_CHECK_CONDITION, SK_DATA_PROTECT, 0x27, 0x00)               \
	X(SR_SPACE_ALLOC_FAILED, SAM_STAT_CHECK_CONDITION, SK_DATA_PROTECT, 0x27, 0x07)            \
	X(SR_MEDIUM_ERROR_READ, SAM_STAT_CHECK_CONDITION, SK_MEDIUM_ERROR, 0x11, 0x00)             \
	X(SR_MEDIUM_ERROR_WRITE, SAM_STAT_CHECK_CONDITION, SK_MEDIUM_ERROR, 0x0c, 0x00)            \
	X(SR_MISCOMPARE, SAM_STAT_CHECK_CONDITION, SK_MISCOMPARE, 0x1d, 0x00)                      \
	X(SR_NOT_READY_STOPPED, SAM_STAT_CHECK_CONDITION, SK_NOT_READY, 0x04, 0x02)                \
	X(SR_MEDIUM_NOT_PRESENT, SAM_STAT_CHECK_CONDITION, SK_NOT_READY, 0x3a, 0x00)               \
	X(SR_ALUA_TRANSITION, SAM_STAT_CHECK_CONDITION, SK_NOT_READY, 0x04, 0x0a)                  \
	X(SR_ALUA_STANDBY, SAM_STAT_CHECK_CONDITION, SK_NOT_READY, 0x04, 0x0b)                     \
	X(SR_ALUA_UNAVAILABLE, SAM_STAT_CHECK_CONDITION, SK_NOT_READY, 0x04, 0x0c)                 \
	X(SR_LU_TIMEOUT, SAM_STAT_CHECK_CONDITION, SK_ABORTED_COMMAND, 0x3e, 0x02) /* TIMEOUT ON LOGICAL UNIT */ \
	X(SR_SANITIZE_IN_PROGRESS, SAM_STAT_CHECK_CONDITION, SK_NOT_READY, 0x04, 0x1b)             \
	X(SR_SANITIZE_FAILED, SAM_STAT_CHECK_CONDITION, SK_MEDIUM_ERROR, 0x31, 0x03)               \
	X(SR_COPY_TARGET_UNREACHABLE, SAM_STAT_CHECK_CONDITION, SK_COPY_ABORTED, 0x0d, 0x02)       \
	X(SR_COPY_ABORTED_IO, SAM_STAT_CHECK_CONDITION, SK_COPY_ABORTED, 0x0d, 0x01)               \
	/* a segment the copy manager cannot carry out (range); field pointer on the segment */    \
	X(SR_COPY_ABORTED, SAM_STAT_CHECK_CONDITION, SK_COPY_ABORTED, 0x00, 0x00)                  \
	X(SR_INTERNAL_ERROR, SAM_STAT_CHECK_CONDITION, SK_HARDWARE_ERROR, 0x44, 0x00)              \
	X(SR_NO_MEMORY, SAM_STAT_CHECK_CONDITION, SK_ABORTED_COMMAND, 0x55, 0x03)                  \
	X(SR_COMMAND_ABORTED, SAM_STAT_CHECK_CONDITION, SK_ABORTED_COMMAND, 0x00, 0x00)           \
	/* transport-detected data transfer failures (iSCSI Data-Out at ErrorRecoveryLevel 0) */  \
	X(SR_DATA_PHASE_ERROR, SAM_STAT_CHECK_CONDITION, SK_ABORTED_COMMAND, 0x4b, 0x00)          \
	X(SR_DATA_OFFSET_ERROR, SAM_STAT_CHECK_CONDITION, SK_ABORTED_COMMAND, 0x4b, 0x05)         \
	X(SR_PROTOCOL_CRC_ERROR, SAM_STAT_CHECK_CONDITION, SK_ABORTED_COMMAND, 0x47, 0x05)         \
	/* a transport command IU the target cannot use (SRP_CMD: descriptors, CDB length) */     \
	X(SR_INVALID_FIELD_IN_IU, SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, 0x0e, 0x03)

enum scsi_sr {
#define SCSI_SR_ENUM(name, st, key, asc, ascq) name,
	SCSI_SR_LIST(SCSI_SR_ENUM)
#undef SCSI_SR_ENUM
	SR__COUNT
};

struct scsi_sr_info {
	const char *name;
	uint8_t status, key, asc, ascq;
};
const struct scsi_sr_info *scsi_sr_info(enum scsi_sr sr);

/* Helpers that record sense details on the task and return the reason, so a handler writes
 * `return scsi_invalid_cdb(t, 2, 7);` */
enum scsi_sr scsi_invalid_cdb(struct scsi_task *t, uint16_t byte, int8_t bit);
enum scsi_sr scsi_invalid_param(struct scsi_task *t, uint16_t byte, int8_t bit);
enum scsi_sr scsi_set_info(struct scsi_task *t, enum scsi_sr sr, uint64_t info);
enum scsi_sr scsi_unit_attention(struct scsi_task *t, uint8_t asc, uint8_t ascq);

/* Build sense bytes into buf (fixed format 70h, or descriptor format 72h when desc).  Used by
 * the task completion path and by REQUEST SENSE.  Returns the sense length. */
size_t scsi_build_sense(uint8_t *buf, size_t buflen, bool desc, uint8_t key, uint8_t asc,
			uint8_t ascq, const struct scsi_task *details);

/* Fill task->status/sense from sr (and task->core details).  Called once per task. */
void scsi_task_set_result(struct scsi_task *t, enum scsi_sr sr, bool desc_sense);

#endif
