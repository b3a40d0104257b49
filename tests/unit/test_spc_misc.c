/* scsi/spc_misc.c: TEST UNIT READY, REQUEST SENSE, START STOP UNIT, PREVENT ALLOW MEDIUM
 * REMOVAL (the libiscsi StartStopUnit / PreventAllow scenarios included). */
#include "spc_fixture.h"

static const uint8_t tur[6] = {0};

static struct th_result run6(struct th_nexus *n, uint8_t op, uint8_t b1, uint8_t b4)
{
	uint8_t cdb[6] = {op, b1, 0, 0, b4, 0};
	return th_exec(n, 0, cdb, 6, SCSI_DIR_NONE, NULL, 0);
}
static struct th_result ssu(uint8_t immed, uint8_t pc, bool loej, bool start)
{
	return run6(&fx_nx, 0x1b, immed, (uint8_t)(pc << 4 | (loej ? 2 : 0) | (start ? 1 : 0)));
}
static struct th_result pa(struct th_nexus *n, uint8_t prevent)
{
	return run6(n, 0x1e, 0, prevent);
}
static struct th_result request_sense(struct th_nexus *n, bool desc, uint8_t alloc, uint8_t *b)
{
	uint8_t cdb[6] = {0x03, desc ? 1 : 0, 0, 0, alloc, 0};
	return th_exec(n, 0, cdb, 6, SCSI_DIR_READ, b, alloc);
}

BOTH_STORES(misc, test_unit_ready)
{
	struct th_result r;

	r = th_exec(&fx_nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x00);
	r = th_exec(&fx_nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_NONE);
	pthread_mutex_lock(&fx_dev->lock);
	fx_dev->sanitizing = true;
	pthread_mutex_unlock(&fx_dev->lock);
	r = th_exec(&fx_nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x1b);
}

BOTH_STORES(misc, request_sense_formats_and_states)
{
	uint8_t b[252];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	r = request_sense(&fx_nx, false, 252, b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 18);
	cr_assert_eq(b[0], 0x70);
	cr_assert_eq(b[7], 10);
	cr_assert_eq(b[2], SK_NO_SENSE);
	/* allocation length cuts, exactly */
	memset(b, 0xee, sizeof(b));
	r = request_sense(&fx_nx, false, 8, b);
	cr_assert_eq(r.data_len, 8);
	cr_assert_eq(b[8], 0xee);
	/* stopped: NOT READY, INITIALIZING COMMAND REQUIRED, as data with GOOD */
	r = ssu(0, 0, false, false);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = request_sense(&fx_nx, false, 252, b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[2] & 0xf, SK_NOT_READY);
	cr_assert_eq(b[12], 0x04);
	cr_assert_eq(b[13], 0x02);
	r = request_sense(&fx_nx, true, 252, b);
	cr_assert_eq(b[0], 0x72);
	cr_assert_eq(b[1], SK_NOT_READY);
	cr_assert_eq(b[2], 0x04);
	cr_assert_eq(b[3], 0x02);
	cr_assert_eq(r.data_len, 8);
	/* reserved bits in byte 1 */
	uint8_t cdb[6] = {0x03, 0x02, 0, 0, 18, 0};
	r = th_exec(&fx_nx, 0, cdb, 6, SCSI_DIR_READ, b, 18);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, 1, 1);
}

BOTH_STORES(misc, start_stop_fixed_medium)
{
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	/* LOEJ on a non-removable LU fails and changes nothing */
	r = ssu(1, 0, true, false);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, 1, 4);
	r = th_exec(&fx_nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	/* stop, then media commands are NOT READY; start again */
	r = ssu(0, 0, false, false);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = th_exec(&fx_nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x02);
	uint8_t r10[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0}, data[512];
	r = th_exec(&fx_nx, 0, r10, 10, SCSI_DIR_READ, data, 512);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x02);
	r = ssu(1, 0, false, true);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = th_exec(&fx_nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
}

BOTH_STORES(misc, start_stop_removable_eject_load)
{
	struct th_result r;

	fx_dev->p.removable = true;
	th_clear_ua(&fx_nx, 0);
	r = ssu(1, 0, true, false); /* eject */
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = th_exec(&fx_nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_NOT_READY, 0x3a, 0x00);
	uint8_t rc10[10] = {0x25}, cap[8];
	r = th_exec(&fx_nx, 0, rc10, 10, SCSI_DIR_READ, cap, 8);
	th_assert_sense(r, SK_NOT_READY, 0x3a, 0x00);
	r = ssu(1, 0, true, true); /* load */
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = th_exec(&fx_nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	/* START=0 without LOEJ leaves the loaded medium accessible (libiscsi NoLoej) */
	for (uint8_t immed = 0; immed < 2; immed++) {
		r = ssu(immed, 0, false, false);
		cr_assert_eq(r.status, SAM_STAT_GOOD);
		r = th_exec(&fx_nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
		cr_assert_eq(r.status, SAM_STAT_GOOD);
	}
	/* a non-zero power condition ignores START and LOEJ */
	for (uint8_t pc = 1; pc < 16; pc++) {
		r = ssu(1, pc, true, false);
		cr_assert_eq(r.status, SAM_STAT_GOOD, "pc %u", pc);
		r = th_exec(&fx_nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
		cr_assert_eq(r.status, SAM_STAT_GOOD, "medium still there after pc %u", pc);
	}
}

BOTH_STORES(misc, prevent_allow)
{
	struct th_result r;

	fx_dev->p.removable = true;
	th_clear_ua(&fx_nx, 0);
	th_clear_ua(&fx_nx2, 0);
	r = pa(&fx_nx, 1);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = ssu(0, 0, true, false);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x53, 0x02);
	r = th_exec(&fx_nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD, "still loaded");
	/* another nexus's ALLOW does not lift this nexus's PREVENT */
	r = pa(&fx_nx2, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = ssu(0, 0, true, false);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x53, 0x02);
	r = pa(&fx_nx, 0);
	r = ssu(0, 0, true, false);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = th_exec(&fx_nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_NOT_READY, 0x3a, 0x00);
	/* loading while prevented is refused too */
	r = pa(&fx_nx, 1);
	r = ssu(0, 0, true, true);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x53, 0x02);
	r = pa(&fx_nx, 0);
	r = ssu(0, 0, true, true);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	/* invalid PREVENT values */
	r = pa(&fx_nx, 2);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, 1, 4);
}

BOTH_STORES(misc, prevent_cleared_by_nexus_loss)
{
	struct th_result r;

	fx_dev->p.removable = true;
	th_clear_ua(&fx_nx, 0);
	r = pa(&fx_nx, 1);
	cr_assert_eq(fx_dev->prevent, 1);
	scsi_nexus_unregister(&fx_nx.nx); /* I_T nexus loss */
	cr_assert_eq(fx_dev->prevent, 0);
	scsi_nexus_register(&fx_nx.nx);
	r = pa(&fx_nx, 1);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(fx_dev->prevent, 1);
}

static int tmf_calls;
static void tmf_done(struct scsi_tmf *tmf)
{
	(void)tmf;
	tmf_calls++;
}

BOTH_STORES(misc, prevent_cleared_by_lu_reset)
{
	struct scsi_tmf tmf;

	fx_dev->p.removable = true;
	th_clear_ua(&fx_nx, 0);
	pa(&fx_nx, 1);
	cr_assert_eq(fx_dev->prevent, 1);
	memset(&tmf, 0, sizeof(tmf));
	tmf.fn = SCSI_TMF_LOGICAL_UNIT_RESET;
	tmf.nexus = &fx_nx2.nx;
	tmf.done = tmf_done;
	tmf_calls = 0;
	scsi_tmf_execute(&tmf);
	cr_assert_eq(tmf_calls, 1, "nothing running: completes before returning");
	cr_assert_eq(tmf.resp, SCSI_TMF_COMPLETE);
	cr_assert_eq(fx_dev->prevent, 0);
	struct th_result r = ssu(0, 0, true, false);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x03);
	r = ssu(0, 0, true, false);
	cr_assert_eq(r.status, SAM_STAT_GOOD, "eject allowed after the reset");
}

BOTH_STORES(misc, prevent_on_fixed_medium_is_accepted)
{
	th_clear_ua(&fx_nx, 0);
	struct th_result r = pa(&fx_nx, 1);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(fx_dev->prevent, 0, "nothing to prevent");
}
