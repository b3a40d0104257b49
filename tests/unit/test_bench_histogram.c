/* utgt-bench latency histogram and running statistics. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "initiator/histogram.h"

Test(bench_histogram, every_value_lands_in_a_bucket_that_contains_it)
{
	uint64_t v = 0;

	for (int i = 0; i < 200000; i++) {
		unsigned idx = ub_hist_index(v);
		cr_assert_lt(idx, UB_HIST_BUCKETS);
		cr_assert_leq(ub_hist_bucket_lo(idx), v, "v=%llu idx=%u", (unsigned long long)v,
			      idx);
		cr_assert_geq(ub_hist_bucket_hi(idx), v, "v=%llu idx=%u", (unsigned long long)v,
			      idx);
		/* bounded relative width: at most 1/64 of the value */
		cr_assert_leq((ub_hist_bucket_hi(idx) - ub_hist_bucket_lo(idx)) * 64, v + 64);
		v = v < 1000 ? v + 1 : v + v / 97 + 1;
		if (v >> 43)
			break;
	}
}

Test(bench_histogram, buckets_are_contiguous)
{
	for (unsigned i = 1; i < UB_HIST_BUCKETS; i++)
		cr_assert_eq(ub_hist_bucket_lo(i), ub_hist_bucket_hi(i - 1) + 1, "bucket %u", i);
}

Test(bench_histogram, huge_values_clamp_to_last_bucket)
{
	cr_assert_eq(ub_hist_index(UINT64_MAX), UB_HIST_BUCKETS - 1);
	cr_assert_eq(ub_hist_index(1ull << 50), UB_HIST_BUCKETS - 1);
}

Test(bench_histogram, percentiles_of_a_known_distribution)
{
	struct ub_hist *h = calloc(1, sizeof(*h));

	cr_assert_eq(ub_hist_percentile(h, 50), 0, "empty histogram");
	for (uint64_t v = 1; v <= 100000; v++)
		ub_hist_add(h, v * 1000); /* 1 us .. 100 ms, uniform */
	cr_assert_eq(h->total, 100000);
	for (double p = 1; p <= 99; p += 7) {
		double want = p / 100 * 100000 * 1000;
		double got = (double)ub_hist_percentile(h, p);
		cr_assert(fabs(got - want) / want < 1.0 / 64, "p%.0f: %.0f vs %.0f", p, got, want);
	}
	cr_assert_geq(ub_hist_percentile(h, 100), 99000000);
	free(h);
}

Test(bench_histogram, single_sample_percentiles_are_that_sample)
{
	struct ub_hist *h = calloc(1, sizeof(*h));

	ub_hist_add(h, 42);
	for (size_t i = 0; i < ub_default_npercentiles; i++)
		cr_assert_eq(ub_hist_percentile(h, ub_default_percentiles[i]), 42);
	free(h);
}

Test(bench_histogram, merge_equals_adding_everything_to_one)
{
	struct ub_hist *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b)),
		       *c = calloc(1, sizeof(*c));

	for (uint64_t v = 0; v < 5000; v++) {
		ub_hist_add(v % 2 ? a : b, v * 37);
		ub_hist_add(c, v * 37);
	}
	ub_hist_merge(a, b);
	cr_assert_eq(a->total, c->total);
	for (unsigned i = 0; i < UB_HIST_BUCKETS; i++)
		cr_assert_eq(a->bucket[i], c->bucket[i]);
	free(a);
	free(b);
	free(c);
}

Test(bench_histogram, fraction_le)
{
	struct ub_hist *h = calloc(1, sizeof(*h));

	for (int i = 0; i < 10; i++)
		ub_hist_add(h, 10);
	for (int i = 0; i < 30; i++)
		ub_hist_add(h, 1000000);
	cr_assert_float_eq(ub_hist_fraction_le(h, 20), 0.25, 1e-9);
	cr_assert_float_eq(ub_hist_fraction_le(h, 2000000), 1.0, 1e-9);
	free(h);
}

Test(bench_histogram, lat_stats_match_direct_computation)
{
	struct ub_lat l = {0}, a = {0}, b = {0};
	double sum = 0, sq = 0, mean;
	const int n = 1000;

	for (int i = 0; i < n; i++) {
		uint64_t v = (uint64_t)(i * i % 977 + 3);
		ub_lat_add(&l, v);
		ub_lat_add(i < 300 ? &a : &b, v);
		sum += (double)v;
	}
	mean = sum / n;
	for (int i = 0; i < n; i++) {
		double d = (double)(i * i % 977 + 3) - mean;
		sq += d * d;
	}
	cr_assert_float_eq(l.mean, mean, 1e-9);
	cr_assert_float_eq(ub_lat_stdev(&l), sqrt(sq / (n - 1)), 1e-6);
	cr_assert_eq(l.min, 3);
	ub_lat_merge(&a, &b);
	cr_assert_eq(a.n, l.n);
	cr_assert_eq(a.min, l.min);
	cr_assert_eq(a.max, l.max);
	cr_assert_float_eq(a.mean, l.mean, 1e-9);
	cr_assert_float_eq(ub_lat_stdev(&a), ub_lat_stdev(&l), 1e-6);
}

Test(bench_histogram, lat_stdev_of_fewer_than_two_is_zero)
{
	struct ub_lat l = {0};

	cr_assert_float_eq(ub_lat_stdev(&l), 0, 1e-12);
	ub_lat_add(&l, 5);
	cr_assert_float_eq(ub_lat_stdev(&l), 0, 1e-12);
}
