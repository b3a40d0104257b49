/* scsi/spc_pr_out.c: every PERSISTENT RESERVE OUT service action with two or three I_T nexuses,
 * the UNIT ATTENTIONs each one establishes (and where), generation counting, and malformed
 * CDBs and parameter lists. */
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

#define KA 0xaaaa000000000001ull
#define KB 0xbbbb000000000002ull
#define KC 0xcccc000000000003ull

static void register_abc(void)
{
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KB));
	assert_good(prout(&e.c, PRO_REGISTER, 0, 0, KC));
}

/* ---- REGISTER / REGISTER AND IGNORE EXISTING KEY ---- */

static void register_keys_and_generation(void)
{
	uint64_t k[4];
	unsigned n;
	uint32_t g0 = pr_read_keys(&e.a, k, 4, &n);

	cr_assert_eq(n, 0);
	register_abc();
	cr_assert_eq(pr_read_keys(&e.a, k, 4, &n), g0 + 3);
	cr_assert_eq(n, 3);
	cr_assert_eq(k[0], KA);
	cr_assert_eq(k[1], KB);
	cr_assert_eq(k[2], KC);
}
Test(pr_out_ram, register_keys_and_generation, .init = up_ram, .fini = down)
{
	register_keys_and_generation();
}
Test(pr_out_file, register_keys_and_generation, .init = up_file, .fini = down)
{
	register_keys_and_generation();
}

Test(pr_out_ram, register_unregistered_with_nonzero_key_conflicts, .init = up_ram, .fini = down)
{
	uint64_t k[2];
	unsigned n;

	assert_conflict(prout(&e.a, PRO_REGISTER, 0, 0x1234, KA));
	pr_read_keys(&e.a, k, 2, &n);
	cr_assert_eq(n, 0);
}

Test(pr_out_ram, register_zero_key_unregistered_is_noop, .init = up_ram, .fini = down)
{
	uint64_t k[2];
	unsigned n;
	uint32_t g0 = pr_read_keys(&e.a, k, 2, &n);

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, 0));
	cr_assert_eq(pr_read_keys(&e.a, k, 2, &n), g0, "generation must not move");
	cr_assert_eq(n, 0);
}

Test(pr_out_ram, reregister_changes_key_only_with_right_key, .init = up_ram, .fini = down)
{
	uint64_t k[2];
	unsigned n;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_conflict(prout(&e.a, PRO_REGISTER, 0, KB, KC));
	assert_good(prout(&e.a, PRO_REGISTER, 0, KA, KC));
	pr_read_keys(&e.a, k, 2, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(k[0], KC);
}

Test(pr_out_ram, unregister_removes_and_counts, .init = up_ram, .fini = down)
{
	uint64_t k[2];
	unsigned n;
	uint32_t g;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	g = pr_read_keys(&e.a, k, 2, &n);
	assert_good(prout(&e.a, PRO_REGISTER, 0, KA, 0));
	cr_assert_eq(pr_read_keys(&e.a, k, 2, &n), g + 1);
	cr_assert_eq(n, 0);
}

Test(pr_out_ram, register_ignore_existing_key, .init = up_ram, .fini = down)
{
	uint64_t k[2];
	unsigned n;

	/* unregistered: RESERVATION KEY is ignored */
	assert_good(prout(&e.a, PRO_REGISTER_IGNORE, 0, 0x999, KA));
	/* registered: a wrong key does not matter either */
	assert_good(prout(&e.a, PRO_REGISTER_IGNORE, 0, 0x777, KB));
	pr_read_keys(&e.a, k, 2, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(k[0], KB);
	assert_good(prout(&e.a, PRO_REGISTER_IGNORE, 0, 0, 0));
	pr_read_keys(&e.a, k, 2, &n);
	cr_assert_eq(n, 0);
}

Test(pr_out_ram, unregister_holder_of_ro_releases_with_ua, .init = up_ram, .fini = down)
{
	uint64_t key;
	uint8_t type;

	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE_RO, KA, 0));
	assert_good(prout(&e.a, PRO_REGISTER, 0, KA, 0));
	cr_assert_not(pr_read_res(&e.a, &key, &type));
	assert_ua(&e.b, PR_UA_RESERVATIONS_RELEASED);
	assert_ua(&e.c, PR_UA_RESERVATIONS_RELEASED);
	assert_no_ua(&e.a);
}

Test(pr_out_ram, unregister_holder_of_we_releases_silently, .init = up_ram, .fini = down)
{
	uint64_t key;
	uint8_t type;

	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	assert_good(prout(&e.a, PRO_REGISTER, 0, KA, 0));
	cr_assert_not(pr_read_res(&e.b, &key, &type));
	assert_no_ua(&e.b);
	assert_no_ua(&e.c);
}

Test(pr_out_ram, all_registrants_reservation_ends_with_last_registrant, .init = up_ram,
     .fini = down)
{
	uint64_t key;
	uint8_t type;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KB));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA_AR, KA, 0));
	assert_good(prout(&e.a, PRO_REGISTER, 0, KA, 0)); /* a leaves: b still holds */
	cr_assert(pr_read_res(&e.b, &key, &type));
	cr_assert_eq(type, PR_TYPE_EA_AR);
	cr_assert_eq(key, 0);
	assert_good(prout(&e.b, PRO_REGISTER, 0, KB, 0));
	cr_assert_not(pr_read_res(&e.b, &key, &type));
}

/* ---- RESERVE ---- */

static void reserve_each_type(void)
{
	static const uint8_t types[] = {PR_TYPE_WE,    PR_TYPE_EA,    PR_TYPE_WE_RO,
					PR_TYPE_EA_RO, PR_TYPE_WE_AR, PR_TYPE_EA_AR};
	uint64_t key;
	uint8_t type;

	register_abc();
	for (unsigned i = 0; i < sizeof(types); i++) {
		assert_good(prout(&e.a, PRO_RESERVE, types[i], KA, 0));
		cr_assert(pr_read_res(&e.a, &key, &type));
		cr_assert_eq(type, types[i]);
		cr_assert_eq(key, pr_type_all_reg(types[i]) ? 0 : KA, "type %u key %llx", types[i],
			     (unsigned long long)key);
		/* the holder asking again for the same type: GOOD, nothing changes */
		assert_good(prout(&e.a, PRO_RESERVE, types[i], KA, 0));
		assert_good(prout(&e.a, PRO_RELEASE, types[i], KA, 0));
		cr_assert_not(pr_read_res(&e.a, &key, &type));
		/* registrants-only and all-registrants releases told b and c: consume it */
		if (pr_type_reg_only(types[i]) || pr_type_all_reg(types[i])) {
			assert_ua(&e.b, PR_UA_RESERVATIONS_RELEASED);
			assert_ua(&e.c, PR_UA_RESERVATIONS_RELEASED);
		}
	}
}
Test(pr_out_ram, reserve_each_type, .init = up_ram, .fini = down)
{
	reserve_each_type();
}
Test(pr_out_file, reserve_each_type, .init = up_file, .fini = down)
{
	reserve_each_type();
}

Test(pr_out_ram, reserve_needs_registration_and_key, .init = up_ram, .fini = down)
{
	assert_conflict(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, 0, 0));
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_conflict(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KB, 0));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
}

Test(pr_out_ram, reserve_conflicts_with_existing, .init = up_ram, .fini = down)
{
	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA, KA, 0));
	/* another registrant, any type */
	assert_conflict(prout(&e.b, PRO_RESERVE, PR_TYPE_EA, KB, 0));
	assert_conflict(prout(&e.b, PRO_RESERVE, PR_TYPE_WE, KB, 0));
	/* the holder, another type */
	assert_conflict(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
}

Test(pr_out_ram, reserve_all_registrants_by_any_registrant, .init = up_ram, .fini = down)
{
	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE_AR, KA, 0));
	/* every registrant holds an all-registrants reservation: same type is GOOD */
	assert_good(prout(&e.b, PRO_RESERVE, PR_TYPE_WE_AR, KB, 0));
	assert_conflict(prout(&e.b, PRO_RESERVE, PR_TYPE_EA_AR, KB, 0));
}

Test(pr_out_ram, reserve_invalid_type_and_scope, .init = up_ram, .fini = down)
{
	static const uint8_t bad[] = {0, 2, 4, 9, 0xf};
	struct th_result r;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	for (unsigned i = 0; i < sizeof(bad); i++) {
		r = prout(&e.a, PRO_RESERVE, bad[i], KA, 0);
		th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
		/* field pointer: C/D=1, BPV=1, bit 3 of CDB byte 2 */
		cr_assert_eq(r.sense[15], 0x80 | 0x40 | 0x08 | 3);
		cr_assert_eq(get_be16(r.sense + 16), 2);
	}
	r = prout(&e.a, PRO_RESERVE, 0x10 | PR_TYPE_WE, KA, 0); /* scope 1 */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	cr_assert_eq(r.sense[15], 0x80 | 0x40 | 0x08 | 7);
	cr_assert_eq(get_be16(r.sense + 16), 2);
}

/* ---- RELEASE ---- */

Test(pr_out_ram, release_wrong_type_is_invalid_release, .init = up_ram, .fini = down)
{
	uint64_t key;
	uint8_t type;
	struct th_result r;

	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	r = prout(&e.a, PRO_RELEASE, PR_TYPE_EA, KA, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x04);
	cr_assert(pr_read_res(&e.a, &key, &type));
	cr_assert_eq(type, PR_TYPE_WE);
}

Test(pr_out_ram, release_by_non_holder_is_good_noop, .init = up_ram, .fini = down)
{
	uint64_t key;
	uint8_t type;

	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	assert_good(prout(&e.b, PRO_RELEASE, PR_TYPE_WE, KB, 0));
	cr_assert(pr_read_res(&e.a, &key, &type));
	cr_assert_eq(key, KA);
	/* not registered at all: conflict; registered with a wrong key: conflict */
	assert_good(prout(&e.c, PRO_REGISTER, 0, KC, 0));
	assert_conflict(prout(&e.c, PRO_RELEASE, PR_TYPE_WE, KC, 0));
	assert_conflict(prout(&e.b, PRO_RELEASE, PR_TYPE_WE, KA, 0));
	/* no reservation: GOOD */
	assert_good(prout(&e.a, PRO_RELEASE, PR_TYPE_WE, KA, 0));
	assert_good(prout(&e.a, PRO_RELEASE, PR_TYPE_WE, KA, 0));
}

Test(pr_out_ram, release_ro_and_ar_tell_other_registrants, .init = up_ram, .fini = down)
{
	static const uint8_t types[] = {PR_TYPE_WE_RO, PR_TYPE_EA_RO, PR_TYPE_WE_AR, PR_TYPE_EA_AR};

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KB));
	for (unsigned i = 0; i < sizeof(types); i++) {
		assert_good(prout(&e.a, PRO_RESERVE, types[i], KA, 0));
		assert_good(prout(&e.a, PRO_RELEASE, types[i], KA, 0));
		assert_ua(&e.b, PR_UA_RESERVATIONS_RELEASED);
		assert_no_ua(&e.a);
		assert_no_ua(&e.c); /* not registered: told nothing */
	}
}

Test(pr_out_ram, release_we_ea_tell_nobody, .init = up_ram, .fini = down)
{
	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA, KA, 0));
	assert_good(prout(&e.a, PRO_RELEASE, PR_TYPE_EA, KA, 0));
	assert_no_ua(&e.b);
	assert_no_ua(&e.c);
}

Test(pr_out_ram, release_does_not_count_generation, .init = up_ram, .fini = down)
{
	uint64_t k[4];
	unsigned n;
	uint32_t g;

	register_abc();
	g = pr_read_keys(&e.a, k, 4, &n);
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA, KA, 0));
	assert_good(prout(&e.a, PRO_RELEASE, PR_TYPE_EA, KA, 0));
	cr_assert_eq(pr_read_keys(&e.a, k, 4, &n), g);
}

/* ---- CLEAR ---- */

Test(pr_out_ram, clear_removes_everything_and_tells_others, .init = up_ram, .fini = down)
{
	uint64_t k[4], key;
	uint8_t type;
	unsigned n;
	uint32_t g;

	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	g = pr_read_keys(&e.a, k, 4, &n);
	assert_conflict(prout(&e.b, PRO_CLEAR, 0, KA, 0)); /* wrong key for b */
	assert_good(prout(&e.b, PRO_CLEAR, 0, KB, 0));
	cr_assert_eq(pr_read_keys(&e.b, k, 4, &n), g + 1);
	cr_assert_eq(n, 0);
	cr_assert_not(pr_read_res(&e.b, &key, &type));
	assert_ua(&e.a, PR_UA_RESERVATIONS_PREEMPTED);
	assert_ua(&e.c, PR_UA_RESERVATIONS_PREEMPTED);
	assert_no_ua(&e.b);
}

Test(pr_out_ram, clear_from_unregistered_conflicts, .init = up_ram, .fini = down)
{
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_conflict(prout(&e.b, PRO_CLEAR, 0, 0, 0));
}

/* ---- PREEMPT / PREEMPT AND ABORT ---- */

static void preempt_holder(uint8_t sa)
{
	uint64_t k[4], key;
	uint8_t type;
	unsigned n;
	uint32_t g;

	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	g = pr_read_keys(&e.a, k, 4, &n);
	assert_good(prout(&e.b, sa, PR_TYPE_EA, KB, KA));
	cr_assert_eq(pr_read_keys(&e.b, k, 4, &n), g + 1);
	cr_assert_eq(n, 2);
	cr_assert_eq(k[0], KB);
	cr_assert_eq(k[1], KC);
	cr_assert(pr_read_res(&e.b, &key, &type));
	cr_assert_eq(key, KB);
	cr_assert_eq(type, PR_TYPE_EA);
	/* a lost its registration; c kept its one but the type changed */
	assert_ua(&e.a, PR_UA_REGISTRATIONS_PREEMPTED);
	assert_ua(&e.c, PR_UA_RESERVATIONS_RELEASED);
	assert_no_ua(&e.b);
}
Test(pr_out_ram, preempt_holder, .init = up_ram, .fini = down)
{
	preempt_holder(PRO_PREEMPT);
}
Test(pr_out_file, preempt_holder, .init = up_file, .fini = down)
{
	preempt_holder(PRO_PREEMPT);
}
Test(pr_out_ram, preempt_and_abort_holder, .init = up_ram, .fini = down)
{
	preempt_holder(PRO_PREEMPT_AND_ABORT);
}

Test(pr_out_ram, preempt_holder_same_type_no_released_ua, .init = up_ram, .fini = down)
{
	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	assert_good(prout(&e.b, PRO_PREEMPT, PR_TYPE_WE, KB, KA));
	assert_ua(&e.a, PR_UA_REGISTRATIONS_PREEMPTED);
	assert_no_ua(&e.c);
}

Test(pr_out_ram, preempt_self_changes_type_keeps_registration, .init = up_ram, .fini = down)
{
	uint64_t k[4], key;
	uint8_t type;
	unsigned n;

	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	assert_good(prout(&e.a, PRO_PREEMPT, PR_TYPE_EA_RO, KA, KA));
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 3);
	cr_assert(pr_read_res(&e.a, &key, &type));
	cr_assert_eq(key, KA);
	cr_assert_eq(type, PR_TYPE_EA_RO);
	assert_ua(&e.b, PR_UA_RESERVATIONS_RELEASED);
	assert_ua(&e.c, PR_UA_RESERVATIONS_RELEASED);
}

Test(pr_out_ram, preempt_non_holder_removes_registration_only, .init = up_ram, .fini = down)
{
	uint64_t k[4], key;
	uint8_t type;
	unsigned n;

	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	assert_good(prout(&e.b, PRO_PREEMPT, PR_TYPE_EA, KB, KC));
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 2);
	cr_assert_eq(k[0], KA);
	cr_assert_eq(k[1], KB);
	cr_assert(pr_read_res(&e.a, &key, &type));
	cr_assert_eq(key, KA);
	cr_assert_eq(type, PR_TYPE_WE, "TYPE is ignored when only registrations go");
	assert_ua(&e.c, PR_UA_REGISTRATIONS_PREEMPTED);
	assert_no_ua(&e.a);
}

Test(pr_out_ram, preempt_without_reservation_removes_every_match, .init = up_ram, .fini = down)
{
	uint64_t k[4];
	unsigned n;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KC)); /* b and c share a key */
	assert_good(prout(&e.c, PRO_REGISTER, 0, 0, KC));
	assert_good(prout(&e.a, PRO_PREEMPT, PR_TYPE_WE, KA, KC));
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(k[0], KA);
	assert_ua(&e.b, PR_UA_REGISTRATIONS_PREEMPTED);
	assert_ua(&e.c, PR_UA_REGISTRATIONS_PREEMPTED);
}

Test(pr_out_ram, preempt_unknown_key_conflicts, .init = up_ram, .fini = down)
{
	uint64_t k[4];
	unsigned n;
	uint32_t g;

	register_abc();
	g = pr_read_keys(&e.a, k, 4, &n);
	assert_conflict(prout(&e.a, PRO_PREEMPT, PR_TYPE_WE, KA, 0x5555));
	cr_assert_eq(pr_read_keys(&e.a, k, 4, &n), g);
	cr_assert_eq(n, 3);
}

Test(pr_out_ram, preempt_zero_key_without_all_registrants_is_invalid, .init = up_ram, .fini = down)
{
	struct th_result r;

	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	r = prout(&e.b, PRO_PREEMPT, PR_TYPE_WE, KB, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	r = prout(&e.b, PRO_REGISTER, 0, KB, KB); /* still registered */
	assert_good(r);
}

Test(pr_out_ram, preempt_all_registrants_with_zero_key, .init = up_ram, .fini = down)
{
	uint64_t k[4], key;
	uint8_t type;
	unsigned n;

	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE_AR, KA, 0));
	assert_good(prout(&e.b, PRO_PREEMPT, PR_TYPE_EA, KB, 0));
	pr_read_keys(&e.b, k, 4, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(k[0], KB);
	cr_assert(pr_read_res(&e.b, &key, &type));
	cr_assert_eq(key, KB);
	cr_assert_eq(type, PR_TYPE_EA);
	assert_ua(&e.a, PR_UA_REGISTRATIONS_PREEMPTED);
	assert_ua(&e.c, PR_UA_REGISTRATIONS_PREEMPTED);
	assert_no_ua(&e.b);
}

Test(pr_out_ram, preempt_all_registrants_with_key_removes_that_key, .init = up_ram, .fini = down)
{
	uint64_t k[4], key;
	uint8_t type;
	unsigned n;

	register_abc();
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA_AR, KA, 0));
	assert_good(prout(&e.b, PRO_PREEMPT, PR_TYPE_WE, KB, KC));
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 2);
	cr_assert(pr_read_res(&e.a, &key, &type));
	cr_assert_eq(type, PR_TYPE_EA_AR);
	assert_ua(&e.c, PR_UA_REGISTRATIONS_PREEMPTED);
}

Test(pr_out_ram, preempt_from_unregistered_conflicts, .init = up_ram, .fini = down)
{
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_conflict(prout(&e.b, PRO_PREEMPT, PR_TYPE_WE, 0, KA));
	assert_conflict(prout(&e.b, PRO_PREEMPT_AND_ABORT, PR_TYPE_WE, 0, KA));
}

Test(pr_out_ram, preempt_invalid_type, .init = up_ram, .fini = down)
{
	struct th_result r;

	register_abc();
	r = prout(&e.a, PRO_PREEMPT, 2, KA, KB);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	r = prout(&e.a, PRO_PREEMPT_AND_ABORT, 0x20 | PR_TYPE_WE, KA, KB);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
}

/* ---- SPEC_I_PT ---- */

/* One iSCSI TransportID: format 01 when isid is non-NULL. */
static uint32_t put_iscsi_tid(uint8_t *p, const char *name, const char *isid)
{
	char s[256];
	uint32_t n, add;

	if (isid)
		snprintf(s, sizeof(s), "%s,i,0x%s", name, isid);
	else
		snprintf(s, sizeof(s), "%s", name);
	n = (uint32_t)strlen(s) + 1;
	add = (n + 3) & ~3u;
	if (add < 20)
		add = 20;
	memset(p, 0, 4 + add);
	p[0] = (uint8_t)((isid ? 0x40 : 0) | SCSI_PROTO_ISCSI);
	put_be16(p + 2, (uint16_t)add);
	memcpy(p + 4, s, n);
	return 4 + add;
}

static struct th_result register_spec_i_pt(struct th_nexus *n, uint64_t sark, const uint8_t *tids,
					   uint32_t tlen, uint8_t sa, uint8_t flags)
{
	uint8_t p[1024] = {0};

	put_be64(p + 8, sark);
	p[20] = 0x08 | flags;
	put_be32(p + 24, tlen);
	memcpy(p + 28, tids, tlen);
	return prout_raw(n, sa, 0, p, 28 + tlen);
}

Test(pr_out_ram, spec_i_pt_registers_listed_ports, .init = up_ram, .fini = down)
{
	uint8_t tids[512];
	uint32_t off = 0;
	uint64_t k[4];
	unsigned n;

	off += put_iscsi_tid(tids + off, PR_B, "230000000001"); /* b's port, format 01 */
	off += put_iscsi_tid(tids + off, PR_C, NULL);		/* every port of c, format 00 */
	/* ALL_TG_PT: c logs in through target port 2, a and b through 1 */
	assert_good(register_spec_i_pt(&e.a, KA, tids, off, PRO_REGISTER, 0x04));
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 3);
	/* b and c are registered with a's key: they can act with it */
	assert_good(prout(&e.b, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	assert_good(prout(&e.b, PRO_RELEASE, PR_TYPE_WE, KA, 0));
	assert_good(prout(&e.c, PRO_REGISTER, 0, KA, KC));
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 3);
	cr_assert_eq(k[2], KC);
}

Test(pr_out_ram, spec_i_pt_registers_through_the_receiving_port, .init = up_ram, .fini = down)
{
	uint8_t tids[512];
	uint32_t len = put_iscsi_tid(tids, PR_C, NULL);

	/* without ALL_TG_PT the registration is for a's target port (1); c is on port 2 */
	assert_good(register_spec_i_pt(&e.a, KA, tids, len, PRO_REGISTER, 0));
	assert_conflict(prout(&e.c, PRO_REGISTER, 0, KA, KC));
}

Test(pr_out_ram, spec_i_pt_malformed_tid_registers_nothing, .init = up_ram, .fini = down)
{
	uint8_t tids[512];
	uint32_t off = 0;
	uint64_t k[4];
	unsigned n;
	struct th_result r;

	uint32_t second;

	off += put_iscsi_tid(tids + off, PR_B, "230000000001");
	second = off;
	off += put_iscsi_tid(tids + off, PR_C, NULL);
	tids[second] = 0x07; /* protocol identifier 7: not one we serve */
	r = register_spec_i_pt(&e.a, KA, tids, off, PRO_REGISTER, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 0, "all or nothing");
}

Test(pr_out_ram, spec_i_pt_tid_overrunning_list_is_length_error, .init = up_ram, .fini = down)
{
	uint8_t tids[512];
	uint32_t len = put_iscsi_tid(tids, PR_B, "230000000001");
	struct th_result r;

	put_be16(tids + 2, (uint16_t)(get_be16(tids + 2) + 64)); /* claims more than is there */
	r = register_spec_i_pt(&e.a, KA, tids, len, PRO_REGISTER, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
}

Test(pr_out_ram, spec_i_pt_already_registered_is_invalid, .init = up_ram, .fini = down)
{
	uint8_t tids[512];
	uint32_t len = put_iscsi_tid(tids, PR_B, "230000000001");
	uint64_t k[4];
	unsigned n;
	struct th_result r;

	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KB));
	r = register_spec_i_pt(&e.a, KA, tids, len, PRO_REGISTER, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 1);
}

Test(pr_out_ram, spec_i_pt_from_registered_is_invalid_cdb, .init = up_ram, .fini = down)
{
	uint8_t tids[512];
	uint32_t len = put_iscsi_tid(tids, PR_B, "230000000001");
	struct th_result r;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	r = register_spec_i_pt(&e.a, KA, tids, len, PRO_REGISTER, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
}

Test(pr_out_ram, spec_i_pt_only_with_register, .init = up_ram, .fini = down)
{
	uint8_t tids[512];
	uint32_t len = put_iscsi_tid(tids, PR_B, "230000000001");
	struct th_result r;

	r = register_spec_i_pt(&e.a, KA, tids, len, PRO_REGISTER_IGNORE, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	cr_assert_eq(get_be16(r.sense + 16), 20); /* field pointer: parameter byte 20 */
	cr_assert_eq(r.sense[15], 0x80 | 0x08 | 3);
	r = prout_flags(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0, 0x08);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
}

Test(pr_out_ram, spec_i_pt_zero_key_is_invalid, .init = up_ram, .fini = down)
{
	uint8_t tids[512];
	uint32_t len = put_iscsi_tid(tids, PR_B, "230000000001");
	struct th_result r;

	r = register_spec_i_pt(&e.a, 0, tids, len, PRO_REGISTER, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
}

/* ---- ALL_TG_PT ---- */

Test(pr_out_ram, all_tg_pt_registers_every_target_port, .init = up_ram, .fini = down)
{
	struct th_nexus a2;
	uint64_t key;
	uint8_t type;

	/* the same initiator port as a, through target port 7 */
	th_nexus_init(&a2, PR_A, 7, &e.dev, 1);
	th_clear_ua(&a2, 0);
	assert_good(prout_flags(&e.a, PRO_REGISTER, 0, 0, KA, 0x04));
	assert_good(prout(&a2, PRO_RESERVE, PR_TYPE_EA, KA, 0));
	cr_assert(pr_read_res(&e.a, &key, &type));
	cr_assert_eq(key, KA);
	scsi_nexus_unregister(&a2.nx);
}

Test(pr_out_ram, without_all_tg_pt_other_port_is_not_registered, .init = up_ram, .fini = down)
{
	struct th_nexus a2;

	th_nexus_init(&a2, PR_A, 7, &e.dev, 1);
	th_clear_ua(&a2, 0);
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_conflict(prout(&a2, PRO_RESERVE, PR_TYPE_EA, KA, 0));
	scsi_nexus_unregister(&a2.nx);
}

/* ---- REGISTER AND MOVE ---- */

static struct th_result move(struct th_nexus *n, uint64_t rk, uint64_t sark, uint16_t rtpi,
			     uint8_t flags17, const char *name, const char *isid)
{
	uint8_t p[512] = {0};
	uint32_t tl = put_iscsi_tid(p + 24, name, isid);

	put_be64(p, rk);
	put_be64(p + 8, sark);
	p[17] = flags17;
	put_be16(p + 18, rtpi);
	put_be32(p + 20, tl);
	return prout_raw(n, PRO_REGISTER_AND_MOVE, PR_TYPE_WE, p, 24 + tl);
}

Test(pr_out_ram, register_and_move_to_unregistered_port, .init = up_ram, .fini = down)
{
	uint64_t k[4], key;
	uint8_t type;
	unsigned n;
	uint32_t g;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA, KA, 0));
	g = pr_read_keys(&e.a, k, 4, &n);
	assert_good(move(&e.a, KA, KB, 1, 0x02 /* UNREG */, PR_B, "230000000001"));
	cr_assert_eq(pr_read_keys(&e.b, k, 4, &n), g + 1);
	cr_assert_eq(n, 1);
	cr_assert_eq(k[0], KB);
	cr_assert(pr_read_res(&e.b, &key, &type));
	cr_assert_eq(key, KB);
	cr_assert_eq(type, PR_TYPE_EA, "the type moves unchanged");
	/* b now holds it: its writes pass; a is a stranger */
	assert_good(prout(&e.b, PRO_RELEASE, PR_TYPE_EA, KB, 0));
	assert_conflict(prout(&e.a, PRO_RESERVE, PR_TYPE_EA, KA, 0));
}

Test(pr_out_ram, register_and_move_keeps_source_without_unreg, .init = up_ram, .fini = down)
{
	uint64_t k[4];
	unsigned n;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, 0x77));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	assert_good(move(&e.a, KA, KB, 1, 0, PR_B, "230000000001"));
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 2);
	cr_assert_eq(k[0], KA);
	cr_assert_eq(k[1], KB, "an existing destination takes the new key");
	/* a is no longer the holder */
	assert_good(prout(&e.a, PRO_RELEASE, PR_TYPE_WE, KA, 0));
	assert_good(prout(&e.b, PRO_RELEASE, PR_TYPE_WE, KB, 0));
}

Test(pr_out_ram, register_and_move_refusals, .init = up_ram, .fini = down)
{
	struct th_result r;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KB));
	/* no reservation: the sender is not the holder */
	assert_conflict(move(&e.a, KA, KC, 1, 0, PR_C, "230000000001"));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	/* not the holder */
	assert_conflict(move(&e.b, KB, KC, 1, 0, PR_C, "230000000001"));
	/* wrong key */
	assert_conflict(move(&e.a, KB, KC, 1, 0, PR_C, "230000000001"));
	/* to itself */
	r = move(&e.a, KA, KC, 2, 0, PR_A, "230000000001");
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	/* SARK 0 */
	r = move(&e.a, KA, 0, 1, 0, PR_C, "230000000001");
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	/* relative target port 0 does not exist */
	r = move(&e.a, KA, KC, 0, 0, PR_C, "230000000001");
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	/* all-registrants reservations cannot move */
	assert_good(prout(&e.a, PRO_RELEASE, PR_TYPE_WE, KA, 0));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE_AR, KA, 0));
	assert_conflict(move(&e.a, KA, KC, 1, 0, PR_C, "230000000001"));
}

Test(pr_out_ram, register_and_move_length_must_match, .init = up_ram, .fini = down)
{
	uint8_t p[128] = {0};
	struct th_result r;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	put_be64(p, KA);
	put_be64(p + 8, KB);
	put_be16(p + 18, 1);
	put_be32(p + 20, 64); /* but only 24 bytes follow */
	put_iscsi_tid(p + 24, PR_B, "230000000001");
	r = prout_raw(&e.a, PRO_REGISTER_AND_MOVE, 0, p, 48);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
}

/* ---- APTPL, lengths, service actions ---- */

Test(pr_out_ram, aptpl_without_state_directory_is_refused, .init = up_ram, .fini = down)
{
	struct th_result r = prout_flags(&e.a, PRO_REGISTER, 0, 0, KA, 0x01);
	uint64_t k[2];
	unsigned n;

	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	cr_assert_eq(get_be16(r.sense + 16), 20);
	pr_read_keys(&e.a, k, 2, &n);
	cr_assert_eq(n, 0);
}

Test(pr_out_ram, parameter_list_length_must_be_24, .init = up_ram, .fini = down)
{
	static const uint32_t lens[] = {0, 8, 23, 25, 32};
	uint8_t p[32] = {0};

	for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct th_result r = prout_raw(&e.a, PRO_REGISTER, 0, p, lens[i]);
		th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	}
}

Test(pr_out_ram, short_data_out_is_length_error, .init = up_ram, .fini = down)
{
	uint8_t cdb[10] = {0x5f, PRO_REGISTER, 0, 0, 0, 0, 0, 0, 24, 0};
	uint8_t p[24] = {0};
	struct th_result r;

	put_be64(p + 8, KA);
	r = th_exec(&e.a, 0, cdb, 10, SCSI_DIR_WRITE, p, 16); /* transport carries only 16 */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
}

Test(pr_out_ram, replace_lost_reservation_not_offered, .init = up_ram, .fini = down)
{
	struct th_result r = prout(&e.a, PRO_REPLACE_LOST, PR_TYPE_WE, 0, KA);

	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
}

Test(pr_out_ram, all_tg_pt_ignored_for_other_actions, .init = up_ram, .fini = down)
{
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout_flags(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0, 0x04));
	assert_good(prout_flags(&e.a, PRO_RELEASE, PR_TYPE_WE, KA, 0, 0x04));
}

/* ---- UNIT ATTENTIONs for registrations naming several I_T nexuses ---- */

Test(pr_out_ram, all_tg_pt_registrant_told_on_every_port, .init = up_ram, .fini = down)
{
	struct th_nexus a2;

	th_nexus_init(&a2, PR_A, 7, &e.dev, 1);
	th_clear_ua(&a2, 0); /* a2 has touched the LU: the LU knows that I_T nexus */
	assert_good(prout_flags(&e.a, PRO_REGISTER, 0, 0, KA, 0x04));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KB));
	assert_good(prout(&e.b, PRO_PREEMPT, PR_TYPE_WE, KB, KA));
	assert_ua(&e.a, PR_UA_REGISTRATIONS_PREEMPTED);
	assert_ua(&a2, PR_UA_REGISTRATIONS_PREEMPTED);
	assert_no_ua(&e.c);
	scsi_nexus_unregister(&a2.nx);
}

Test(pr_out_ram, name_only_registrant_told, .init = up_ram, .fini = down)
{
	uint8_t tids[64];
	uint32_t len = put_iscsi_tid(tids, PR_C, NULL);

	assert_good(register_spec_i_pt(&e.a, KA, tids, len, PRO_REGISTER, 0x04));
	assert_good(prout(&e.a, PRO_CLEAR, 0, KA, 0));
	assert_ua(&e.c, PR_UA_RESERVATIONS_PREEMPTED);
	assert_no_ua(&e.b);
	assert_no_ua(&e.a);
}

/* ---- PREEMPT AND ABORT aborts the preempted nexuses' tasks ---- */

#include <time.h>

#include "gate_store.h"

static void up_gate(void)
{
	memset(&e, 0, sizeof(e));
	e.dev = gate_make_dev("prgate", 1 << 20);
	pr_env_nexuses(&e);
}

static bool aborted_within(struct scsi_task *t, int seconds)
{
	struct timespec step = {0, 1000000};
	for (int i = 0; i < seconds * 1000; i++) {
		if (scsi_ts_aborted(e.dev->ts, t))
			return true;
		nanosleep(&step, NULL);
	}
	return false;
}

Test(pr_out_gate, preempt_and_abort_aborts_and_waits, .init = up_gate, .fini = down)
{
	uint8_t rd_cdb[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0};
	uint8_t pa_cdb[10] = {0x5f, PRO_PREEMPT_AND_ABORT, PR_TYPE_EA, 0, 0, 0, 0, 0, 24, 0};
	uint8_t pl[24] = {0};
	struct async_task *rd, *pa;
	uint64_t k[4];
	unsigned n;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KB));
	assert_good(prout(&e.b, PRO_RESERVE, PR_TYPE_WE, KB, 0));

	rd = async_task_new(&e.b, 0, rd_cdb, 10, SCSI_DIR_READ, NULL, 512, 0x100);
	async_task_start(rd);
	gate_wait_reads(1); /* b's READ is in the store */

	put_be64(pl, KA);
	put_be64(pl + 8, KB);
	pa = async_task_new(&e.a, 0, pa_cdb, 10, SCSI_DIR_WRITE, pl, 24, 0x200);
	async_task_start(pa);
	cr_assert(aborted_within(&rd->t, 10), "b's READ was not aborted");
	/* the PREEMPT AND ABORT completes only after the task it aborted */
	pthread_mutex_lock(&pa->w.mu);
	cr_assert_not(pa->w.done);
	pthread_mutex_unlock(&pa->w.mu);
	gate_set(true);
	async_task_wait(rd);
	async_task_wait(pa);
	cr_assert(rd->t.aborted);
	cr_assert_eq(pa->t.status, SAM_STAT_GOOD);
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(k[0], KA);
	assert_ua(&e.b, PR_UA_REGISTRATIONS_PREEMPTED);
	free(rd);
	free(pa);
}

Test(pr_out_gate, plain_preempt_leaves_tasks_alone, .init = up_gate, .fini = down)
{
	uint8_t rd_cdb[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0};
	struct async_task *rd;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.b, PRO_REGISTER, 0, 0, KB));
	rd = async_task_new(&e.b, 0, rd_cdb, 10, SCSI_DIR_READ, NULL, 512, 0x100);
	async_task_start(rd);
	gate_wait_reads(1);
	assert_good(prout(&e.a, PRO_PREEMPT, PR_TYPE_WE, KA, KB));
	gate_set(true);
	async_task_wait(rd);
	cr_assert_not(rd->t.aborted);
	cr_assert_eq(rd->t.status, SAM_STAT_GOOD);
	free(rd);
}

Test(pr_out_ram, registration_table_full, .init = up_ram, .fini = down)
{
	static uint8_t tids[PR_MAX_REGS * 48];
	uint32_t off = 0;
	uint8_t *pl;
	uint64_t k[4];
	unsigned n;
	struct th_result r;

	/* a plus PR_MAX_REGS listed ports: one more than the table holds; nothing is kept */
	for (int i = 0; i < PR_MAX_REGS; i++) {
		char name[64];
		snprintf(name, sizeof(name), "iqn.2026-01.org.example:many-%d", i);
		off += put_iscsi_tid(tids + off, name, NULL);
	}
	pl = calloc(1, 28 + off);
	put_be64(pl + 8, KA);
	pl[20] = 0x08;
	put_be32(pl + 24, off);
	memcpy(pl + 28, tids, off);
	r = prout_raw(&e.a, PRO_REGISTER, 0, pl, 28 + off);
	free(pl);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x55, 0x04);
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 0);
}

Test(pr_out_ram, srp_port_told_whatever_its_spelling, .init = up_ram, .fini = down)
{
	struct th_nexus s;

	th_nexus_init(&s, "0xFE800000000000000002C90300A1B2C3", 1, &e.dev, 1);
	s.nx.proto = SCSI_PROTO_SRP;
	snprintf(s.nx.initiator_port, sizeof(s.nx.initiator_port), "%s", s.nx.initiator_name);
	th_clear_ua(&s, 0);
	assert_good(prout(&s, PRO_REGISTER, 0, 0, KB));
	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&e.a, PRO_PREEMPT, PR_TYPE_WE, KA, KB));
	assert_ua(&s, PR_UA_REGISTRATIONS_PREEMPTED);
	scsi_nexus_unregister(&s.nx);
}

Test(pr_out_ram, spec_i_pt_isid_case_does_not_matter, .init = up_ram, .fini = down)
{
	struct th_nexus d;
	uint8_t tids[64];
	uint32_t len = put_iscsi_tid(tids, "iqn.2026-01.org.example:d", "23000000abcd");

	th_nexus_init(&d, "iqn.2026-01.org.example:d", 1, &e.dev, 1);
	snprintf(d.nx.initiator_port, sizeof(d.nx.initiator_port),
		 "iqn.2026-01.org.example:d,i,0x23000000ABCD");
	th_clear_ua(&d, 0);
	assert_good(register_spec_i_pt(&e.a, KA, tids, len, PRO_REGISTER, 0));
	/* d is registered (with a's key) ... */
	assert_good(prout(&d, PRO_REGISTER, 0, KA, KB));
	/* ... and is told when it loses that registration */
	assert_good(prout(&e.a, PRO_PREEMPT, PR_TYPE_WE, KA, KB));
	assert_ua(&d, PR_UA_REGISTRATIONS_PREEMPTED);
	scsi_nexus_unregister(&d.nx);
}
