/* utgt-bench path selection: round robin every N commands, queue length, ALUA. */
#include <criterion/criterion.h>
#include <string.h>

#include "initiator/policy.h"
#include "initiator/scsi_info.h"

static struct ub_path_view up(int alua, unsigned inflight)
{
	return (struct ub_path_view){.usable = true, .alua = alua, .inflight = inflight};
}

Test(bench_policy, rr_iops_1_alternates_exactly)
{
	struct ub_path_view v[3] = {up(UB_ALUA_UNKNOWN, 0), up(UB_ALUA_UNKNOWN, 0),
				    up(UB_ALUA_UNKNOWN, 0)};
	struct ub_rr rr = {-1, 0};

	for (int i = 0; i < 100; i++)
		cr_assert_eq(ub_policy_pick(UB_POL_RR, 1, &rr, v, 2), i % 2, "pick %d", i);
	rr = (struct ub_rr){-1, 0};
	for (int i = 0; i < 99; i++)
		cr_assert_eq(ub_policy_pick(UB_POL_RR, 1, &rr, v, 3), i % 3);
}

Test(bench_policy, rr_iops_n_sends_n_then_switches)
{
	struct ub_path_view v[2] = {up(UB_ALUA_UNKNOWN, 0), up(UB_ALUA_UNKNOWN, 0)};
	struct ub_rr rr = {-1, 0};
	const int want[] = {0, 0, 0, 1, 1, 1, 0, 0, 0, 1};

	for (int i = 0; i < 10; i++)
		cr_assert_eq(ub_policy_pick(UB_POL_RR, 3, &rr, v, 2), want[i], "pick %d", i);
}

Test(bench_policy, rr_skips_unusable_and_reports_none)
{
	struct ub_path_view v[3] = {up(UB_ALUA_UNKNOWN, 0), up(UB_ALUA_UNKNOWN, 0),
				    up(UB_ALUA_UNKNOWN, 0)};
	struct ub_rr rr = {-1, 0};

	v[1].usable = false;
	for (int i = 0; i < 10; i++)
		cr_assert_neq(ub_policy_pick(UB_POL_RR, 1, &rr, v, 3), 1);
	v[0].usable = v[2].usable = false;
	cr_assert_eq(ub_policy_pick(UB_POL_RR, 1, &rr, v, 3), -1);
	v[1].usable = true;
	cr_assert_eq(ub_policy_pick(UB_POL_RR, 1, &rr, v, 3), 1, "a path that comes back is used");
}

Test(bench_policy, queue_length_takes_the_least_busy)
{
	struct ub_path_view v[3] = {up(UB_ALUA_UNKNOWN, 5), up(UB_ALUA_UNKNOWN, 2),
				    up(UB_ALUA_UNKNOWN, 9)};
	struct ub_rr rr = {-1, 0};
	int count[3] = {0};

	cr_assert_eq(ub_policy_pick(UB_POL_QUEUE_LENGTH, 1, &rr, v, 3), 1);
	v[1].usable = false;
	cr_assert_eq(ub_policy_pick(UB_POL_QUEUE_LENGTH, 1, &rr, v, 3), 0);
	/* equal queues: the load is spread, not piled on the first path */
	v[0] = v[1] = v[2] = up(UB_ALUA_UNKNOWN, 4);
	for (int i = 0; i < 30; i++)
		count[ub_policy_pick(UB_POL_QUEUE_LENGTH, 1, &rr, v, 3)]++;
	cr_assert(count[0] == 10 && count[1] == 10 && count[2] == 10, "%d %d %d", count[0],
		  count[1], count[2]);
}

Test(bench_policy, rr_goes_round_the_optimized_paths_only)
{
	struct ub_path_view v[3] = {up(UB_ALUA_ANO, 0), up(UB_ALUA_AO, 0), up(UB_ALUA_AO, 0)};
	struct ub_rr rr = {-1, 0};
	int count[3] = {0};

	for (int i = 0; i < 10; i++)
		count[ub_policy_pick(UB_POL_RR, 1, &rr, v, 3)]++;
	cr_assert(count[0] == 0 && count[1] == 5 && count[2] == 5, "ANO used while AO lives: "
		  "%d %d %d", count[0], count[1], count[2]);
	v[1].usable = false;
	for (int i = 0; i < 4; i++)
		cr_assert_eq(ub_policy_pick(UB_POL_RR, 1, &rr, v, 3), 2, "the AO path left");
	v[2].usable = false;
	cr_assert_eq(ub_policy_pick(UB_POL_RR, 1, &rr, v, 3), 0, "ANO when no AO is left");
	/* a state change (RTPG after 2A/06) moves the I/O at the next pick */
	v[1].usable = v[2].usable = true;
	v[0].alua = UB_ALUA_AO;
	v[1].alua = v[2].alua = UB_ALUA_ANO;
	for (int i = 0; i < 4; i++)
		cr_assert_eq(ub_policy_pick(UB_POL_RR, 1, &rr, v, 3), 0, "the new AO path");
}

Test(bench_policy, rr_all_shares_every_active_path)
{
	struct ub_path_view v[2] = {up(UB_ALUA_ANO, 0), up(UB_ALUA_AO, 0)};
	struct ub_rr rr = {-1, 0};
	int count[2] = {0};

	for (int i = 0; i < 10; i++)
		count[ub_policy_pick(UB_POL_RR_ALL, 1, &rr, v, 2)]++;
	cr_assert(count[0] == 5 && count[1] == 5, "%d %d", count[0], count[1]);
}

Test(bench_policy, standby_ports_are_avoided_by_every_policy)
{
	struct ub_path_view v[2] = {up(UB_ALUA_STANDBY, 0), up(UB_ALUA_AO, 7)};
	struct ub_rr rr = {-1, 0};

	for (int pol = UB_POL_RR; pol <= UB_POL_QUEUE_LENGTH; pol++)
		for (int i = 0; i < 5; i++)
			cr_assert_eq(ub_policy_pick((enum ub_policy)pol, 1, &rr, v, 2), 1,
				     "policy %d", pol);
	v[1].usable = false;
	cr_assert_eq(ub_policy_pick(UB_POL_RR, 1, &rr, v, 2), 0, "last resort: the standby port");
}

Test(bench_policy, names)
{
	enum ub_policy p;

	cr_assert(ub_policy_parse("rr", &p) && p == UB_POL_RR);
	cr_assert(ub_policy_parse("queue-length", &p) && p == UB_POL_QUEUE_LENGTH);
	cr_assert(ub_policy_parse("alua", &p) && p == UB_POL_RR, "the old name of ALUA-aware rr");
	cr_assert(ub_policy_parse("rr-all", &p) && p == UB_POL_RR_ALL);
	cr_assert_str_eq(ub_policy_name(UB_POL_RR_ALL), "rr-all");
	cr_assert_not(ub_policy_parse("random", &p));
	cr_assert_str_eq(ub_policy_name(UB_POL_QUEUE_LENGTH), "queue-length");
}
