/* scsi/spc_xcopy_results.c: RECEIVE COPY RESULTS -- OPERATING PARAMETERS, COPY STATUS after a
 * good and a failed copy, FAILED SEGMENT DETAILS (kept until read in full), RECEIVE DATA, LIST
 * IDs of another nexus or not held. */
#include "xcopy_harness.h"

static struct scsi_dev *d0, *d1;
static struct th_nexus na, nb;

static void up(void)
{
	struct scsi_dev *devs[2];

	d0 = th_make_dev("ramdisk", "xr0", 1 << 20, 512);
	d1 = th_make_dev("vdisk_fileio", "xr1", 1 << 20, 512);
	devs[0] = d0;
	devs[1] = d1;
	th_nexus_init(&na, "iqn.2026-01.org.example:ra", 1, devs, 2);
	th_nexus_init(&nb, "iqn.2026-01.org.example:rb", 1, devs, 2);
	th_clear_ua(&na, 0);
	th_clear_ua(&nb, 0);
	th_clear_ua(&na, 1);
	th_clear_ua(&nb, 1);
}

static void down(void)
{
	scsi_nexus_unregister(&na.nx);
	scsi_nexus_unregister(&nb.nx);
	unlink(d1->bs->filename);
	scsi_dev_destroy(d0);
	scsi_dev_destroy(d1);
	scsi_core_shutdown();
}

Test(xcopy_results, operating_parameters, .init = up, .fini = down)
{
	uint8_t b[64];
	struct th_result r = xc_results(&na, 0, 0x03, 0, b, sizeof(b));

	xc_assert_good(r);
	cr_assert_eq(r.data_len, 46);
	cr_assert_eq(get_be32(b), 42);
	cr_assert_eq(b[4] & 0x01, 0x01, "SNLID");
	cr_assert_eq(get_be16(b + 8), XC_MAX_TARGETS);
	cr_assert_eq(get_be16(b + 10), XC_MAX_SEGMENTS);
	cr_assert_eq(get_be32(b + 12), XC_MAX_DESC_LIST_LEN);
	cr_assert_eq(get_be32(b + 16), XC_MAX_SEGMENT_LEN);
	cr_assert_eq(get_be32(b + 20), 0, "inline data");
	cr_assert_eq(get_be32(b + 24), 0, "held data");
	cr_assert_eq(get_be16(b + 34), XC_MAX_CONCURRENT);
	cr_assert_eq(b[36], XC_MAX_CONCURRENT);
	cr_assert_eq(b[37], 9, "data segment granularity: 512-byte blocks");
	cr_assert_eq(b[43], 2);
	cr_assert_eq(b[44], 0x02);
	cr_assert_eq(b[45], 0xe4);
	/* cut by the allocation length, full length still announced */
	r = xc_results(&na, 0, 0x03, 0, b, 8);
	xc_assert_good(r);
	cr_assert_eq(r.data_len, 8);
	cr_assert_eq(get_be32(b), 42);
}

Test(xcopy_results, status_after_good_copy, .init = up, .fini = down)
{
	uint8_t p[128], b[12];
	struct th_result r;

	xc_assert_good(xc_exec(&na, 0, p, xc_simple(p, 0x31, d0, d1, 8, 0, 8)));
	r = xc_results(&na, 0, 0x00, 0x31, b, sizeof(b));
	xc_assert_good(r);
	cr_assert_eq(r.data_len, 12);
	cr_assert_eq(get_be32(b), 8);
	cr_assert_eq(b[4], 0x01, "completed, no held data");
	cr_assert_eq(get_be16(b + 5), 1);
	cr_assert_eq(b[7], 0x00);
	cr_assert_eq(get_be32(b + 8), 4096);
	/* the status belongs to the copy manager of the LU the copy was sent to, per nexus */
	r = xc_results(&na, 1, 0x00, 0x31, b, sizeof(b));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	r = xc_results(&nb, 0, 0x00, 0x31, b, sizeof(b));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	cr_assert_eq(get_be16(r.sense + 16), 2, "points at LIST IDENTIFIER");
	/* no failure: no details */
	r = xc_results(&na, 0, 0x04, 0x31, b, sizeof(b));
	xc_assert_good(r);
	cr_assert_eq(r.data_len, 4);
	cr_assert_eq(get_be32(b), 0);
	/* nothing held */
	r = xc_results(&na, 0, 0x01, 0x31, b, sizeof(b));
	xc_assert_good(r);
	cr_assert_eq(r.data_len, 4);
	cr_assert_eq(get_be32(b), 0);
}

Test(xcopy_results, failed_copy_details, .init = up, .fini = down)
{
	uint8_t p[128], b[128];
	struct th_result r;

	/* out of range destination: the copy fails before moving anything */
	r = xc_exec(&na, 0, p, xc_simple(p, 0x32, d0, d1, 8, 0, (1 << 20) / 512));
	th_assert_sense(r, SK_COPY_ABORTED, 0x00, 0x00);
	r = xc_results(&na, 0, 0x00, 0x32, b, 12);
	xc_assert_good(r);
	cr_assert_eq(b[4], 0x02, "completed with errors");
	cr_assert_eq(get_be16(b + 5), 0);
	cr_assert_eq(get_be32(b + 8), 0);
	/* details cut short: still kept */
	r = xc_results(&na, 0, 0x04, 0x32, b, 30);
	xc_assert_good(r);
	cr_assert_eq(get_be32(b), 56 + 18);
	r = xc_results(&na, 0, 0x04, 0x32, b, sizeof(b));
	xc_assert_good(r);
	cr_assert_eq(r.data_len, 60 + 18);
	cr_assert_eq(b[56], SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(get_be16(b + 58), 18);
	cr_assert_eq(b[60], 0x70);
	cr_assert_eq(b[62] & 0x0f, SK_COPY_ABORTED);
	cr_assert_eq(b[72], 0x00);
	cr_assert_eq(b[73], 0x00);
	/* read in full: forgotten */
	r = xc_results(&na, 0, 0x04, 0x32, b, sizeof(b));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
}

Test(xcopy_results, not_held_list_ids_leave_nothing, .init = up, .fini = down)
{
	uint8_t p[128], b[12];
	struct th_result r;

	xc_simple(p, 0x33, d0, d1, 1, 0, 0);
	p[1] = XC_LID_NO_HOLD << 3;
	xc_assert_good(xc_exec(&na, 0, p, 108));
	r = xc_results(&na, 0, 0x00, 0x33, b, sizeof(b));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	p[0] = 0;
	p[1] = XC_LID_NONE << 3;
	xc_assert_good(xc_exec(&na, 0, p, 108));
	r = xc_results(&na, 0, 0x00, 0, b, sizeof(b));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
}

Test(xcopy_results, reusing_a_list_id_replaces_its_status, .init = up, .fini = down)
{
	uint8_t p[128], b[12];

	xc_assert_good(xc_exec(&na, 0, p, xc_simple(p, 0x34, d0, d1, 1, 0, 0)));
	xc_assert_good(xc_exec(&na, 0, p, xc_simple(p, 0x34, d0, d1, 4, 0, 0)));
	xc_assert_good(xc_results(&na, 0, 0x00, 0x34, b, sizeof(b)));
	cr_assert_eq(get_be32(b + 8), 4 * 512);
}

Test(xcopy_results, oldest_finished_status_evicted, .init = up, .fini = down)
{
	uint8_t p[128], b[12];
	struct th_result r;

	for (unsigned i = 0; i < XC_MAX_TRACKED + 1; i++)
		xc_assert_good(xc_exec(&na, 0, p, xc_simple(p, (uint8_t)i, d0, d1, 1, 0, 0)));
	r = xc_results(&na, 0, 0x00, 0, b, sizeof(b));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	xc_assert_good(xc_results(&na, 0, 0x00, 1, b, sizeof(b)));
	xc_assert_good(xc_results(&na, 0, 0x00, XC_MAX_TRACKED, b, sizeof(b)));
}

Test(xcopy_results, unknown_service_action, .init = up, .fini = down)
{
	uint8_t b[12];
	struct th_result r = xc_results(&na, 0, 0x05, 0, b, sizeof(b));

	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
}
