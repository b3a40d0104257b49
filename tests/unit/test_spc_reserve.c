/* scsi/spc_reserve.c: RESERVE/RELEASE 6 and 10 -- holder by I_T nexus, non-holder RELEASE,
 * unsupported third-party/extent bits, and SPC-4 5.13.3's rules next to persistent
 * reservations (CRH=1). */
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

#define KA 0x11ull
#define KB 0x22ull

static struct th_result cmd6(struct th_nexus *n, uint8_t op, uint8_t b1)
{
	uint8_t cdb[6] = {op, b1, 0, 0, 0, 0};
	return th_exec(n, 0, cdb, 6, SCSI_DIR_NONE, NULL, 0);
}

static struct th_result cmd10(struct th_nexus *n, uint8_t op, uint8_t b1)
{
	uint8_t cdb[10] = {op, b1, 0, 0, 0, 0, 0, 0, 0, 0};
	return th_exec(n, 0, cdb, 10, SCSI_DIR_NONE, NULL, 0);
}

#define RESERVE6  0x16
#define RELEASE6  0x17
#define RESERVE10 0x56
#define RELEASE10 0x57

static void reserve_release_cycle(bool ten)
{
	struct th_result (*c)(struct th_nexus *, uint8_t, uint8_t) = ten ? cmd10 : cmd6;
	uint8_t rsv = ten ? RESERVE10 : RESERVE6, rel = ten ? RELEASE10 : RELEASE6;
	uint8_t buf[512];

	assert_good(c(&e.a, rsv, 0));
	assert_good(c(&e.a, rsv, 0)); /* again, by the holder */
	assert_conflict(c(&e.b, rsv, 0));
	cr_assert(e.dev->pr->st.spc2);
	assert_good(c(&e.b, rel, 0)); /* non-holder: GOOD, nothing released */
	cr_assert(e.dev->pr->st.spc2);
	assert_conflict(read10(&e.b, 0, buf));
	assert_good(c(&e.a, rel, 0));
	cr_assert_not(e.dev->pr->st.spc2);
	assert_good(c(&e.b, rsv, 0));
	assert_good(c(&e.b, rel, 0));
	assert_good(c(&e.b, rel, 0)); /* nothing reserved: still GOOD */
}
Test(reserve_ram, reserve_release_6, .init = up_ram, .fini = down)
{
	reserve_release_cycle(false);
}
Test(reserve_ram, reserve_release_10, .init = up_ram, .fini = down)
{
	reserve_release_cycle(true);
}
Test(reserve_file, reserve_release_6, .init = up_file, .fini = down)
{
	reserve_release_cycle(false);
}

Test(reserve_ram, six_and_ten_share_the_reservation, .init = up_ram, .fini = down)
{
	assert_good(cmd6(&e.a, RESERVE6, 0));
	assert_conflict(cmd10(&e.b, RESERVE10, 0));
	assert_good(cmd10(&e.a, RELEASE10, 0));
	assert_good(cmd10(&e.b, RESERVE10, 0));
}

Test(reserve_ram, third_party_and_extents_refused, .init = up_ram, .fini = down)
{
	struct th_result r;

	r = cmd10(&e.a, RESERVE10, 0x10); /* 3RDPTY */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	cr_assert_eq(r.sense[15], 0x80 | 0x40 | 0x08 | 4);
	cr_assert_eq(get_be16(r.sense + 16), 1);
	r = cmd10(&e.a, RESERVE10, 0x02); /* LONGID */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	r = cmd10(&e.a, RELEASE10, 0x10);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	r = cmd6(&e.a, RESERVE6, 0x01); /* SCSI-2 extent bit */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	cr_assert_eq(r.sense[15], 0x80 | 0x40 | 0x08 | 0);
	cr_assert_not(e.dev->pr->st.spc2);
}

/* ---- next to persistent reservations (SPC-4 5.13.3, CRH=1) ---- */

Test(reserve_ram, registrations_make_reserve_and_release_conflict, .init = up_ram, .fini = down)
{
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	/* a stranger, and a registrant without a reservation */
	assert_conflict(cmd6(&e.b, RESERVE6, 0));
	assert_conflict(cmd6(&e.b, RELEASE6, 0));
	assert_conflict(cmd6(&e.a, RESERVE6, 0));
	assert_conflict(cmd10(&e.a, RELEASE10, 0));
	cr_assert_not(e.dev->pr->st.spc2);
}

Test(reserve_ram, pr_holder_gets_good_noop, .init = up_ram, .fini = down)
{
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	assert_good(cmd6(&e.a, RESERVE6, 0));
	assert_good(cmd6(&e.a, RELEASE6, 0));
	cr_assert_not(e.dev->pr->st.spc2);
	/* the persistent reservation is untouched */
	assert_conflict(prout(&e.b, PRO_RESERVE, PR_TYPE_WE, 0, 0));
	assert_good(prout(&e.a, PRO_RELEASE, PR_TYPE_WE, KA, 0));
}

Test(reserve_ram, registrant_under_registrants_only_gets_good_noop, .init = up_ram, .fini = down)
{
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KB));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE_RO, KA, 0));
	assert_good(cmd10(&e.b, RESERVE10, 0));
	assert_good(cmd10(&e.b, RELEASE10, 0));
	cr_assert_not(e.dev->pr->st.spc2);
	assert_conflict(cmd10(&e.c, RESERVE10, 0));
}

Test(reserve_ram, registrant_under_write_exclusive_conflicts, .init = up_ram, .fini = down)
{
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KB));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	assert_conflict(cmd10(&e.b, RESERVE10, 0));
}

Test(reserve_ram, reservation_released_when_registrations_gone, .init = up_ram, .fini = down)
{
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_conflict(cmd6(&e.b, RESERVE6, 0));
	assert_good(prout(&e.a, PRO_REGISTER, 0, KA, 0));
	assert_good(cmd6(&e.b, RESERVE6, 0));
}
