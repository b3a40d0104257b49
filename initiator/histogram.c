/* Log-linear latency histogram and Welford running statistics. */
#include "initiator/histogram.h"

#include <math.h>
#include <string.h>

const double ub_default_percentiles[] = {1.0,  5.0,  10.0, 20.0, 30.0, 40.0, 50.0,  60.0, 70.0,
					 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99};
const size_t ub_default_npercentiles = sizeof(ub_default_percentiles) / sizeof(double);

unsigned ub_hist_index(uint64_t v)
{
	unsigned msb, group, sub;

	if (v < UB_HIST_SUB)
		return (unsigned)v;
	msb = 63 - (unsigned)__builtin_clzll(v);
	if (msb >= UB_HIST_MAX_BITS)
		return UB_HIST_BUCKETS - 1;
	group = msb - UB_HIST_SUB_BITS + 1;
	sub = (unsigned)(v >> (msb - UB_HIST_SUB_BITS)) & (UB_HIST_SUB - 1);
	return group * UB_HIST_SUB + sub;
}

uint64_t ub_hist_bucket_lo(unsigned idx)
{
	unsigned group = idx / UB_HIST_SUB, sub = idx % UB_HIST_SUB;

	if (group == 0)
		return idx;
	return (uint64_t)(UB_HIST_SUB + sub) << (group - 1);
}

uint64_t ub_hist_bucket_hi(unsigned idx)
{
	unsigned group = idx / UB_HIST_SUB;

	if (group == 0)
		return idx;
	return ub_hist_bucket_lo(idx) + (1ull << (group - 1)) - 1;
}

void ub_hist_add(struct ub_hist *h, uint64_t v)
{
	h->bucket[ub_hist_index(v)]++;
	h->total++;
}

void ub_hist_merge(struct ub_hist *dst, const struct ub_hist *src)
{
	for (unsigned i = 0; i < UB_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->total += src->total;
}

uint64_t ub_hist_percentile(const struct ub_hist *h, double p)
{
	uint64_t rank, seen = 0;

	if (!h->total || p <= 0)
		return 0;
	if (p > 100)
		p = 100;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->total);
	if (rank == 0)
		rank = 1;
	for (unsigned i = 0; i < UB_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			return ub_hist_bucket_lo(i) +
			       (ub_hist_bucket_hi(i) - ub_hist_bucket_lo(i)) / 2;
	}
	return ub_hist_bucket_hi(UB_HIST_BUCKETS - 1);
}

double ub_hist_fraction_le(const struct ub_hist *h, uint64_t v)
{
	uint64_t n = 0;

	if (!h->total)
		return 0;
	for (unsigned i = 0; i < UB_HIST_BUCKETS && ub_hist_bucket_hi(i) <= v; i++)
		n += h->bucket[i];
	return (double)n / (double)h->total;
}

void ub_lat_add(struct ub_lat *l, uint64_t v)
{
	double d;

	if (!l->n || v < l->min)
		l->min = v;
	if (!l->n || v > l->max)
		l->max = v;
	l->n++;
	d = (double)v - l->mean;
	l->mean += d / (double)l->n;
	l->m2 += d * ((double)v - l->mean);
}

void ub_lat_merge(struct ub_lat *dst, const struct ub_lat *src)
{
	double n, d;

	if (!src->n)
		return;
	if (!dst->n) {
		*dst = *src;
		return;
	}
	n = (double)(dst->n + src->n);
	d = src->mean - dst->mean;
	dst->m2 += src->m2 + d * d * (double)dst->n * (double)src->n / n;
	dst->mean += d * (double)src->n / n;
	dst->n += src->n;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

double ub_lat_stdev(const struct ub_lat *l)
{
	if (l->n < 2)
		return 0;
	return sqrt(l->m2 / (double)(l->n - 1));
}
