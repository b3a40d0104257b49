/* scsi/scsi_sense.c: the outcome table, fixed and descriptor sense, field pointers,
 * INFORMATION, and the backstore status mapping. */
#include "scsi_harness.h"

#include "scsi/scsi_core.h"

Test(sense, table_matches_the_list)
{
	const struct scsi_sr_info *i = scsi_sr_info(SR_LBA_OUT_OF_RANGE);
	cr_assert_str_eq(i->name, "SR_LBA_OUT_OF_RANGE");
	cr_assert_eq(i->status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(i->key, SK_ILLEGAL_REQUEST);
	cr_assert_eq(i->asc, 0x21);
	i = scsi_sr_info(SR_RESERVATION_CONFLICT);
	cr_assert_eq(i->status, SAM_STAT_RESERVATION_CONFLICT);
	for (int s = 0; s < SR__COUNT; s++)
		cr_assert_not_null(scsi_sr_info((enum scsi_sr)s)->name, "row %d", s);
	/* out of range is an internal error, never a crash */
	cr_assert_eq(scsi_sr_info((enum scsi_sr)9999), scsi_sr_info(SR_INTERNAL_ERROR));
}

Test(sense, fixed_with_field_pointer)
{
	struct scsi_task t;

	memset(&t, 0, sizeof(t));
	cr_assert_eq(scsi_invalid_cdb(&t, 2, 5), SR_INVALID_FIELD_IN_CDB);
	scsi_task_set_result(&t, SR_INVALID_FIELD_IN_CDB, false);
	cr_assert_eq(t.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(t.sense_len, 18);
	cr_assert_eq(t.sense[0], 0x70, "no VALID without INFORMATION");
	cr_assert_eq(t.sense[2], SK_ILLEGAL_REQUEST);
	cr_assert_eq(t.sense[7], 10);
	cr_assert_eq(t.sense[12], 0x24);
	cr_assert_eq(t.sense[15], 0x80 | 0x40 | 0x08 | 5);
	cr_assert_eq(t.sense[16], 0);
	cr_assert_eq(t.sense[17], 2);

	memset(&t, 0, sizeof(t));
	scsi_invalid_param(&t, 0x1234, -1);
	scsi_task_set_result(&t, SR_INVALID_FIELD_IN_PARAM, false);
	cr_assert_eq(t.sense[12], 0x26);
	cr_assert_eq(t.sense[15], 0x80, "parameter list, whole byte");
	cr_assert_eq(get_be16(t.sense + 16), 0x1234);
}

Test(sense, fixed_with_information)
{
	struct scsi_task t;

	memset(&t, 0, sizeof(t));
	scsi_set_info(&t, SR_MISCOMPARE, 0x1234567);
	scsi_task_set_result(&t, SR_MISCOMPARE, false);
	cr_assert_eq(t.sense[0], 0xf0, "VALID");
	cr_assert_eq(get_be32(t.sense + 3), 0x1234567);
	cr_assert_eq(t.sense[2], SK_MISCOMPARE);
	cr_assert_eq(t.sense[12], 0x1d);
	cr_assert_eq(t.sense[15], 0, "no SKS");
	/* a 64-bit value does not fit the fixed format: VALID stays 0 */
	memset(&t, 0, sizeof(t));
	scsi_set_info(&t, SR_MEDIUM_ERROR_READ, 0x100000000ull);
	scsi_task_set_result(&t, SR_MEDIUM_ERROR_READ, false);
	cr_assert_eq(t.sense[0], 0x70);
}

Test(sense, descriptor_format)
{
	struct scsi_task t;

	memset(&t, 0, sizeof(t));
	scsi_set_info(&t, SR_LBA_OUT_OF_RANGE, 0x1122334455667788ull);
	scsi_invalid_cdb(&t, 9, -1);
	scsi_task_set_result(&t, SR_LBA_OUT_OF_RANGE, true);
	cr_assert_eq(t.sense[0], 0x72);
	cr_assert_eq(t.sense[1], SK_ILLEGAL_REQUEST);
	cr_assert_eq(t.sense[2], 0x21);
	cr_assert_eq(t.sense[3], 0x00);
	cr_assert_eq(t.sense[7], 12 + 8);
	cr_assert_eq(t.sense_len, 8 + 12 + 8);
	cr_assert_eq(t.sense[8], 0x00, "information descriptor");
	cr_assert_eq(t.sense[9], 0x0a);
	cr_assert_eq(t.sense[10], 0x80);
	cr_assert_eq(get_be64(t.sense + 12), 0x1122334455667788ull);
	cr_assert_eq(t.sense[20], 0x02, "sense key specific descriptor");
	cr_assert_eq(t.sense[21], 0x06);
	cr_assert_eq(t.sense[24], 0x80 | 0x40);
	cr_assert_eq(get_be16(t.sense + 25), 9);
	/* no details: just the 8-byte header */
	memset(&t, 0, sizeof(t));
	scsi_task_set_result(&t, SR_WRITE_PROTECTED, true);
	cr_assert_eq(t.sense_len, 8);
	cr_assert_eq(t.sense[1], SK_DATA_PROTECT);
	cr_assert_eq(t.sense[7], 0);
}

Test(sense, unit_attention_and_non_check_statuses)
{
	struct scsi_task t;

	memset(&t, 0, sizeof(t));
	scsi_task_set_result(&t, scsi_unit_attention(&t, 0x2a, 0x09), false);
	cr_assert_eq(t.sense[2], SK_UNIT_ATTENTION);
	cr_assert_eq(t.sense[12], 0x2a);
	cr_assert_eq(t.sense[13], 0x09);
	memset(&t, 0, sizeof(t));
	scsi_task_set_result(&t, SR_RESERVATION_CONFLICT, false);
	cr_assert_eq(t.status, SAM_STAT_RESERVATION_CONFLICT);
	cr_assert_eq(t.sense_len, 0);
	scsi_task_set_result(&t, SR_ABORTED, false);
	cr_assert_eq(t.status, SAM_STAT_TASK_ABORTED);
	scsi_task_set_result(&t, SR_CONDITION_MET, false);
	cr_assert_eq(t.status, SAM_STAT_CONDITION_MET);
	cr_assert_eq(t.sense_len, 0);
}

Test(sense, build_into_small_buffer)
{
	uint8_t b[10];
	memset(b, 0xee, sizeof(b));
	cr_assert_eq(scsi_build_sense(b, 8, false, SK_NOT_READY, 4, 2, NULL), 8);
	cr_assert_eq(b[2], SK_NOT_READY);
	cr_assert_eq(b[8], 0xee);
	cr_assert_eq(scsi_build_sense(b, sizeof(b), true, SK_NOT_READY, 4, 2, NULL), 8);
	cr_assert_eq(b[0], 0x72);
}

Test(sense, backstore_mapping)
{
	cr_assert_eq(scsi_sr_from_bs(BS_OK, false), SR_OK);
	cr_assert_eq(scsi_sr_from_bs(BS_EIO, false), SR_MEDIUM_ERROR_READ);
	cr_assert_eq(scsi_sr_from_bs(BS_EIO, true), SR_MEDIUM_ERROR_WRITE);
	cr_assert_eq(scsi_sr_from_bs(BS_ENOSPC, true), SR_SPACE_ALLOC_FAILED);
	cr_assert_eq(scsi_sr_from_bs(BS_EROFS, true), SR_WRITE_PROTECTED);
	cr_assert_eq(scsi_sr_from_bs(BS_ENOTSUP, true), SR_INVALID_OPCODE);
	cr_assert_eq(scsi_sr_from_bs(BS_ENOMEM, false), SR_NO_MEMORY);
	cr_assert_eq(scsi_sr_from_bs(BS_ERANGE, false), SR_INTERNAL_ERROR);
	cr_assert_eq(scsi_sr_from_bs((enum bs_status)77, false), SR_INTERNAL_ERROR);
}
