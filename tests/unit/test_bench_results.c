/* utgt-bench result merging (group_reporting) and group sums. */
#include "bench_res_fixture.h"

Test(bench_results, merge_adds_counts_samples_paths_events)
{
	struct ub_job_res a, b;

	fixture_res(&a, "j", 0);
	fixture_res(&b, "j", 0);
	b.runtime_ns = 3000000000ull;
	ub_res_add_sec(&b.d[0], 100, 1);
	b.error = 5;
	snprintf(b.errmsg, sizeof(b.errmsg), "boom");
	cr_assert(ub_res_merge(&a, &b));
	cr_assert_eq(a.njobs, 2);
	cr_assert_eq(a.d[0].ios, 2000);
	cr_assert_eq(a.d[0].bytes, 8192000);
	cr_assert_eq(a.d[0].clat.n, 2000);
	cr_assert_eq(a.d[0].clat_hist->total, 2000);
	cr_assert_eq(a.runtime_ns, 3000000000ull, "runtime is the longest");
	cr_assert_eq(a.d[0].nsec, 3);
	cr_assert_eq(a.d[0].sec_bytes[0], 2048000);
	cr_assert_eq(a.d[0].sec_bytes[2], 100);
	cr_assert_eq(a.paths[0].ios[0], 1200);
	cr_assert_eq(a.paths[1].failures, 2);
	cr_assert_eq(a.nevents, 2);
	cr_assert_eq(a.error, 5);
	cr_assert_str_eq(a.errmsg, "boom");
	ub_res_free(&a);
	ub_res_free(&b);
}

Test(bench_results, bandwidth_and_group_sum)
{
	struct ub_job_res r[3];
	struct ub_group_sum s;

	fixture_res(&r[0], "a", 0);
	fixture_res(&r[1], "b", 0);
	fixture_res(&r[2], "c", 1);
	r[1].runtime_ns = 1000000000ull;
	cr_assert_eq(ub_res_bw(&r[0], 0), 2048000);
	cr_assert_float_eq(ub_res_iops(&r[0], 0), 500.0, 1e-9);
	ub_group_sum(r, 3, 0, &s);
	cr_assert(s.any[0] && !s.any[1]);
	cr_assert_eq(s.bytes[0], 8192000);
	cr_assert_eq(s.min_bw[0], 2048000);
	cr_assert_eq(s.max_bw[0], 4096000);
	cr_assert_eq(s.min_run_ms[0], 1000);
	cr_assert_eq(s.max_run_ms[0], 2000);
	for (int i = 0; i < 3; i++)
		ub_res_free(&r[i]);
}

Test(bench_results, reset_clears_a_direction)
{
	struct ub_job_res r;

	fixture_res(&r, "a", 0);
	ub_ddir_reset(&r.d[0]);
	cr_assert_eq(r.d[0].ios, 0);
	cr_assert_eq(r.d[0].clat_hist->total, 0);
	cr_assert_eq(r.d[0].nsec, 0);
	cr_assert_eq(r.d[0].clat.n, 0);
	ub_res_free(&r);
}
