/* Latency accounting: a log-linear histogram for percentiles (bounded relative error, fixed
 * memory, mergeable across jobs) and a running min/max/mean/stdev (Welford, also mergeable). */
#ifndef UB_HISTOGRAM_H
#define UB_HISTOGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Values below 2^UB_HIST_SUB_BITS are exact; above, every power of two is split into
 * 2^UB_HIST_SUB_BITS linear buckets, so a bucket is at most 1/64 (1.6%) wide relative to its
 * value.  Values are nanoseconds; the top group ends at 2^UB_HIST_MAX_BITS ns (~4.9 hours). */
#define UB_HIST_SUB_BITS 6
#define UB_HIST_SUB	 (1u << UB_HIST_SUB_BITS)
#define UB_HIST_MAX_BITS 44
#define UB_HIST_GROUPS	 (UB_HIST_MAX_BITS - UB_HIST_SUB_BITS + 1)
#define UB_HIST_BUCKETS	 (UB_HIST_GROUPS * UB_HIST_SUB)

struct ub_hist {
	uint64_t total;
	uint64_t bucket[UB_HIST_BUCKETS];
};

unsigned ub_hist_index(uint64_t v);
/* Smallest and largest value that land in bucket idx. */
uint64_t ub_hist_bucket_lo(unsigned idx);
uint64_t ub_hist_bucket_hi(unsigned idx);
void ub_hist_add(struct ub_hist *h, uint64_t v);
void ub_hist_merge(struct ub_hist *dst, const struct ub_hist *src);
/* Value at percentile p (0 < p <= 100): the representative (midpoint) of the bucket holding
 * the ceil(p/100 * total)-th smallest sample.  0 when empty. */
uint64_t ub_hist_percentile(const struct ub_hist *h, double p);
/* Fraction (0..1) of samples <= v, counting whole buckets whose upper bound is <= v. */
double ub_hist_fraction_le(const struct ub_hist *h, uint64_t v);

struct ub_lat {
	uint64_t n;
	uint64_t min, max;
	double mean, m2;
};

void ub_lat_add(struct ub_lat *l, uint64_t v);
void ub_lat_merge(struct ub_lat *dst, const struct ub_lat *src);
double ub_lat_stdev(const struct ub_lat *l);

/* The percentile list fio prints by default. */
extern const double ub_default_percentiles[];
extern const size_t ub_default_npercentiles;

#endif
