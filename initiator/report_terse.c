/* --output-format=terse: fio's semicolon-separated version 3 line per job (read and write
 * sections, cpu, depth and latency distributions), for scripts written against fio. */
#include "initiator/report.h"
#include "initiator/runner.h"

#include <stdio.h>
#include <string.h>

#define TERSE_PCTS 20 /* fio prints 20 percentile slots, "0%=0" when unused */

static void lat4(FILE *f, const struct ub_lat *l)
{
	fprintf(f, ";%llu;%llu;%f;%f", (unsigned long long)(l->n ? l->min / 1000 : 0),
		(unsigned long long)(l->max / 1000), l->mean / 1000, ub_lat_stdev(l) / 1000);
}

static void ddir(FILE *f, const struct ub_job_res *r, int d, uint64_t group_bytes)
{
	const struct ub_ddir_res *dr = &r->d[d];
	struct ub_sample_stats bs;

	fprintf(f, ";%llu;%llu;%llu;%llu", (unsigned long long)(dr->bytes >> 10),
		(unsigned long long)(ub_res_bw(r, d) / 1024),
		(unsigned long long)(ub_res_iops(r, d) + 0.5),
		(unsigned long long)(dr->ios ? r->runtime_ns / 1000000 : 0));
	lat4(f, &dr->slat);
	lat4(f, &dr->clat);
	for (unsigned i = 0; i < TERSE_PCTS; i++) {
		if (i < r->npcts && dr->clat_hist->total) {
			uint64_t v = ub_hist_percentile(dr->clat_hist, r->pcts[i]);
			if (v > dr->clat.max)
				v = dr->clat.max;
			fprintf(f, ";%f%%=%llu", r->pcts[i], (unsigned long long)(v / 1000));
		} else if (i < r->npcts) {
			fprintf(f, ";%f%%=0", r->pcts[i]);
		} else {
			fprintf(f, ";0%%=0");
		}
	}
	lat4(f, &dr->lat);
	ub_sample_stats(dr->sec_bytes, dr->nsec, 1024, &bs);
	fprintf(f, ";%llu;%llu;%f%%;%f;%f", (unsigned long long)bs.min, (unsigned long long)bs.max,
		group_bytes ? 100.0 * (double)dr->bytes / (double)group_bytes : 0, bs.avg,
		bs.stdev);
}

void ub_report_terse(FILE *f, const struct ub_run *run)
{
	static const unsigned us_edges[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
	static const unsigned ms_edges[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000};

	for (unsigned i = 0; i < run->nres; i++) {
		const struct ub_job_res *r = &run->res[i];
		double wall = (double)r->runtime_ns * r->njobs, prev;
		struct ub_group_sum s;
		struct ub_hist h;
		uint64_t total = 0;

		ub_group_sum(run->res, run->nres, r->groupid, &s);
		fprintf(f, "3;utgt-bench-" UTGT_VERSION ";%s;%u;%d", r->name, r->groupid, r->error);
		ddir(f, r, 0, s.bytes[0]);
		ddir(f, r, 1, s.bytes[1]);
		fprintf(f, ";%f%%;%f%%;%llu;%llu;%llu",
			wall > 0 ? 100.0 * (double)r->usr_ns / wall : 0,
			wall > 0 ? 100.0 * (double)r->sys_ns / wall : 0, (unsigned long long)r->ctx,
			(unsigned long long)r->majf, (unsigned long long)r->minf);
		for (int k = 0; k < UB_DEPTH_BUCKETS; k++)
			total += r->depth[k];
		for (int k = 0; k < UB_DEPTH_BUCKETS; k++)
			fprintf(f, ";%3.1f%%", total ? 100.0 * (double)r->depth[k] / (double)total : 0);
		memset(&h, 0, sizeof(h));
		for (int d = 0; d < UB_NDDIR; d++)
			ub_hist_merge(&h, r->d[d].clat_hist);
		prev = 0;
		for (size_t k = 0; k < 10; k++) {
			double le = ub_hist_fraction_le(&h, us_edges[k] * 1000ull);
			fprintf(f, ";%3.2f%%", (le - prev) * 100);
			prev = le;
		}
		for (size_t k = 0; k < 11; k++) {
			double le = ub_hist_fraction_le(&h, ms_edges[k] * 1000000ull);
			fprintf(f, ";%3.2f%%", (le - prev) * 100);
			prev = le;
		}
		fprintf(f, ";%3.2f%%\n", h.total ? (1 - prev) * 100 : 0);
	}
}
