/* scsi/spc_pr_check.c: which commands conflict under each persistent reservation type for the
 * holder, a registrant and a stranger; CDB-dependent classes; SPC-2 reservations against every
 * nexus; what LU reset and I_T nexus reset do to each kind. */
#include "pr_harness.h"

static struct pr_env e;

static void up_ram(void)
{
	pr_env_up(&e, "ramdisk", false);
}
static void up_file(void)
{
	pr_env_up(&e, "vdisk_fileio", false);
}
static void down(void)
{
	pr_env_down(&e);
}

#define KA 0xa1ull
#define KB 0xb2ull

enum { OK = 0, RC = 1 };

struct row {
	uint8_t type;
	/* holder read/write, registrant read/write, stranger read/write */
	int hr, hw, rr, rw, sr, sw;
};

/* SPC-4 5.13.1 / SBC-3 4.17: READ is a read-class command, WRITE a write-class one. */
static const struct row matrix[] = {
    {PR_TYPE_WE, OK, OK, OK, RC, OK, RC},    {PR_TYPE_EA, OK, OK, RC, RC, RC, RC},
    {PR_TYPE_WE_RO, OK, OK, OK, OK, OK, RC}, {PR_TYPE_EA_RO, OK, OK, OK, OK, RC, RC},
    {PR_TYPE_WE_AR, OK, OK, OK, OK, OK, RC}, {PR_TYPE_EA_AR, OK, OK, OK, OK, RC, RC},
};

static void expect(struct th_result r, int want, const char *who, uint8_t type)
{
	if (want == OK)
		cr_assert_eq(r.status, SAM_STAT_GOOD, "%s type %u: status %#x", who, type,
			     r.status);
	else
		cr_assert_eq(r.status, SAM_STAT_RESERVATION_CONFLICT, "%s type %u: status %#x", who,
			     type, r.status);
}

static void conflict_matrix(void)
{
	uint8_t buf[512];

	memset(buf, 0x5a, sizeof(buf));
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KB));
	for (unsigned i = 0; i < sizeof(matrix) / sizeof(matrix[0]); i++) {
		const struct row *m = &matrix[i];
		assert_good(prout(&e.a, PRO_RESERVE, m->type, KA, 0));
		expect(read10(&e.a, 0, buf), m->hr, "holder read", m->type);
		expect(write10(&e.a, 0, buf), m->hw, "holder write", m->type);
		expect(read10(&e.b, 0, buf), m->rr, "registrant read", m->type);
		expect(write10(&e.b, 0, buf), m->rw, "registrant write", m->type);
		expect(read10(&e.c, 0, buf), m->sr, "stranger read", m->type);
		expect(write10(&e.c, 0, buf), m->sw, "stranger write", m->type);
		/* allowed under every type, for everyone */
		assert_good(tur_on(&e.c));
		assert_good(prout(&e.a, PRO_RELEASE, m->type, KA, 0));
		if (pr_type_reg_only(m->type) || pr_type_all_reg(m->type))
			assert_ua(&e.b, PR_UA_RESERVATIONS_RELEASED);
	}
}
Test(pr_check_ram, conflict_matrix, .init = up_ram, .fini = down)
{
	conflict_matrix();
}
Test(pr_check_file, conflict_matrix, .init = up_file, .fini = down)
{
	conflict_matrix();
}

Test(pr_check_ram, inquiry_and_report_luns_always_allowed, .init = up_ram, .fini = down)
{
	uint8_t inq[6] = {0x12, 0, 0, 0, 36, 0};
	uint8_t rl[12] = {0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0};
	uint8_t buf[64];

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA, KA, 0));
	assert_good(th_exec(&e.c, 0, inq, 6, SCSI_DIR_READ, buf, 36));
	assert_good(th_exec(&e.c, 0, rl, 12, SCSI_DIR_READ, buf, 64));
}

Test(pr_check_ram, start_stop_and_prevent_depend_on_cdb, .init = up_ram, .fini = down)
{
	uint8_t start[6] = {0x1b, 0, 0, 0, 0x01, 0};
	uint8_t stop[6] = {0x1b, 0, 0, 0, 0x00, 0};
	uint8_t allow[6] = {0x1e, 0, 0, 0, 0x00, 0};
	uint8_t prevent[6] = {0x1e, 0, 0, 0, 0x01, 0};

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	/* START=1, POWER CONDITION 0 and PREVENT=0 are allowed; the rest conflict */
	cr_assert_neq(th_exec(&e.c, 0, start, 6, SCSI_DIR_NONE, NULL, 0).status,
		      SAM_STAT_RESERVATION_CONFLICT);
	assert_conflict(th_exec(&e.c, 0, stop, 6, SCSI_DIR_NONE, NULL, 0));
	cr_assert_neq(th_exec(&e.c, 0, allow, 6, SCSI_DIR_NONE, NULL, 0).status,
		      SAM_STAT_RESERVATION_CONFLICT);
	assert_conflict(th_exec(&e.c, 0, prevent, 6, SCSI_DIR_NONE, NULL, 0));
}

Test(pr_check_ram, pr_out_sorted_by_the_handler, .init = up_ram, .fini = down)
{
	/* under Exclusive Access a stranger may still register (PRC_PROUT is not blocked) */
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA, KA, 0));
	assert_good(prout(&e.c, PRO_REGISTER, 0, 0, KB));
	assert_conflict(prout(&e.c, PRO_RESERVE, PR_TYPE_EA, KB, 0));
}

Test(pr_check_ram, persistent_reservation_survives_resets, .init = up_ram, .fini = down)
{
	uint64_t key;
	uint8_t type;
	uint8_t buf[512];

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA, KA, 0));
	scsi_reservation_lu_reset(e.dev, 0x29, 0x03, NULL, NULL);
	scsi_reservation_reset(e.dev, &e.a.nx);
	cr_assert(pr_read_res(&e.a, &key, &type));
	assert_conflict(read10(&e.c, 0, buf));
}

/* ---- SPC-2 RESERVE/RELEASE against the dispatcher ---- */

Test(pr_check_ram, spc2_reservation_blocks_other_nexuses, .init = up_ram, .fini = down)
{
	uint8_t inq[6] = {0x12, 0, 0, 0, 36, 0};
	uint8_t buf[512];

	assert_good(reserve6(&e.a));
	assert_good(read10(&e.a, 0, buf));
	assert_good(write10(&e.a, 0, buf));
	assert_conflict(read10(&e.b, 0, buf));
	assert_conflict(write10(&e.b, 0, buf));
	assert_conflict(tur_on(&e.b));
	/* INQUIRY and RELEASE are SPC2_OK: allowed, and RELEASE by a stranger does nothing */
	assert_good(th_exec(&e.b, 0, inq, 6, SCSI_DIR_READ, buf, 36));
	assert_good(release6(&e.b));
	assert_conflict(read10(&e.b, 0, buf));
	assert_good(release6(&e.a));
	assert_good(read10(&e.b, 0, buf));
}

Test(pr_check_ram, spc2_reservation_makes_pr_commands_conflict_for_all, .init = up_ram,
     .fini = down)
{
	uint8_t buf[64];

	assert_good(reserve6(&e.a));
	assert_conflict(prin(&e.a, PRI_READ_KEYS, buf, sizeof(buf)));
	assert_conflict(prin(&e.b, PRI_READ_KEYS, buf, sizeof(buf)));
	assert_conflict(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_conflict(prout(&e.b, PRO_REGISTER, 0, 0, KB));
}

Test(pr_check_ram, same_initiator_other_target_port_is_another_nexus, .init = up_ram, .fini = down)
{
	struct th_nexus a2;
	uint8_t buf[512];

	th_nexus_init(&a2, PR_A, 9, &e.dev, 1);
	th_clear_ua(&a2, 0);
	assert_good(reserve6(&e.a));
	assert_conflict(read10(&a2, 0, buf));
	scsi_nexus_unregister(&a2.nx);
}

Test(pr_check_ram, lu_reset_releases_spc2, .init = up_ram, .fini = down)
{
	uint8_t buf[512];

	assert_good(reserve6(&e.a));
	scsi_reservation_lu_reset(e.dev, 0x29, 0x03, NULL, NULL);
	assert_good(read10(&e.b, 0, buf));
	assert_good(reserve6(&e.b));
}

Test(pr_check_ram, nexus_reset_releases_only_the_holders, .init = up_ram, .fini = down)
{
	uint8_t buf[512];

	assert_good(reserve6(&e.a));
	scsi_reservation_reset(e.dev, &e.b.nx); /* not the holder: nothing */
	assert_conflict(read10(&e.b, 0, buf));
	scsi_reservation_reset(e.dev, &e.a.nx);
	assert_good(read10(&e.b, 0, buf));
}

Test(pr_check_ram, lu_reset_tmf_releases_spc2, .init = up_ram, .fini = down)
{
	uint8_t buf[512];

	assert_good(reserve6(&e.a));
	run_tmf(&e.b, SCSI_TMF_LOGICAL_UNIT_RESET);
	th_clear_ua(&e.b, 0);
	assert_good(read10(&e.b, 0, buf));
}

Test(pr_check_ram, nexus_reset_tmf_releases_spc2_of_that_nexus, .init = up_ram, .fini = down)
{
	uint8_t buf[512];

	assert_good(reserve6(&e.a));
	run_tmf(&e.b, SCSI_TMF_I_T_NEXUS_RESET);
	th_clear_ua(&e.b, 0);
	assert_conflict(read10(&e.b, 0, buf));
	run_tmf(&e.a, SCSI_TMF_I_T_NEXUS_RESET);
	assert_good(read10(&e.b, 0, buf));
}

/* ---- scsi_pr_conflicts(), the check EXTENDED COPY uses for the LUs it touches ---- */

Test(pr_check_ram, pr_conflicts_api, .init = up_ram, .fini = down)
{
	cr_assert_not(scsi_pr_conflicts(e.dev, &e.c.nx, PRC_WRITE));
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	cr_assert_not(scsi_pr_conflicts(e.dev, &e.a.nx, PRC_WRITE));
	cr_assert_not(scsi_pr_conflicts(e.dev, &e.c.nx, PRC_READ));
	cr_assert(scsi_pr_conflicts(e.dev, &e.c.nx, PRC_WRITE));
	cr_assert_not(scsi_pr_conflicts(e.dev, &e.c.nx, PRC_ALLOWED));
	assert_good(prout(&e.a, PRO_RELEASE, PR_TYPE_WE, KA, 0));
	assert_good(prout(&e.a, PRO_REGISTER, 0, KA, 0));
	assert_good(reserve6(&e.a));
	cr_assert(scsi_pr_conflicts(e.dev, &e.c.nx, PRC_READ));
	cr_assert_not(scsi_pr_conflicts(e.dev, &e.a.nx, PRC_WRITE));
}

Test(pr_check_ram, table_classes_of_other_commands, .init = up_ram, .fini = down)
{
	uint8_t rc10[10] = {0x25};
	uint8_t sync10[10] = {0x35};
	uint8_t msense6[6] = {0x1a, 0x08, 0x3f, 0, 64, 0};
	uint8_t buf[64];

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	/* Write Exclusive: READ CAPACITY and MODE SENSE pass, SYNCHRONIZE CACHE conflicts */
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	assert_good(th_exec(&e.c, 0, rc10, 10, SCSI_DIR_READ, buf, 8));
	assert_good(th_exec(&e.c, 0, msense6, 6, SCSI_DIR_READ, buf, 64));
	assert_conflict(th_exec(&e.c, 0, sync10, 10, SCSI_DIR_NONE, NULL, 0));
	assert_good(th_exec(&e.a, 0, sync10, 10, SCSI_DIR_NONE, NULL, 0));
	assert_good(prout(&e.a, PRO_RELEASE, PR_TYPE_WE, KA, 0));
	/* Exclusive Access: only READ CAPACITY still passes */
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA, KA, 0));
	assert_good(th_exec(&e.c, 0, rc10, 10, SCSI_DIR_READ, buf, 8));
	assert_conflict(th_exec(&e.c, 0, msense6, 6, SCSI_DIR_READ, buf, 64));
	assert_conflict(th_exec(&e.c, 0, sync10, 10, SCSI_DIR_NONE, NULL, 0));
}
