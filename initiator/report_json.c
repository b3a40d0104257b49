/* --output-format=json: fio's JSON layout (jobs[], read/write objects with *_ns latency
 * objects and percentiles), plus paths[], events[] and verify per job. */
#include "initiator/json.h"
#include "initiator/report.h"
#include "initiator/runner.h"

#include <stdio.h>
#include <time.h>

static void lat_obj(struct ub_json *j, const char *name, const struct ub_lat *l,
		    const struct ub_hist *h)
{
	ub_json_obj(j, name);
	ub_json_u64(j, "min", l->n ? l->min : 0);
	ub_json_u64(j, "max", l->max);
	ub_json_dbl(j, "mean", l->mean);
	ub_json_dbl(j, "stddev", ub_lat_stdev(l));
	ub_json_u64(j, "N", l->n);
	if (h && h->total) {
		ub_json_obj(j, "percentile");
		for (size_t i = 0; i < ub_default_npercentiles; i++) {
			char k[32];
			snprintf(k, sizeof(k), "%.6f", ub_default_percentiles[i]);
			uint64_t v = ub_hist_percentile(h, ub_default_percentiles[i]);
			ub_json_u64(j, k, v > l->max ? l->max : v < l->min ? l->min : v);
		}
		ub_json_end_obj(j);
	}
	ub_json_end_obj(j);
}

static void ddir_obj(struct ub_json *j, const struct ub_job_res *r, int d)
{
	const struct ub_ddir_res *dr = &r->d[d];
	struct ub_sample_stats bs, is;

	ub_sample_stats(dr->sec_bytes, dr->nsec, 1024, &bs);
	ub_sample_stats(dr->sec_ios, dr->nsec, 1, &is);
	ub_json_obj(j, d ? "write" : "read");
	ub_json_u64(j, "io_bytes", dr->bytes);
	ub_json_u64(j, "io_kbytes", dr->bytes / 1024);
	ub_json_u64(j, "bw_bytes", ub_res_bw(r, d));
	ub_json_u64(j, "bw", ub_res_bw(r, d) / 1024);
	ub_json_dbl(j, "iops", ub_res_iops(r, d));
	ub_json_u64(j, "runtime", r->runtime_ns / 1000000);
	ub_json_u64(j, "total_ios", dr->ios);
	lat_obj(j, "slat_ns", &dr->slat, NULL);
	lat_obj(j, "clat_ns", &dr->clat, dr->clat_hist);
	lat_obj(j, "lat_ns", &dr->lat, NULL);
	ub_json_dbl(j, "bw_min", bs.min);
	ub_json_dbl(j, "bw_max", bs.max);
	ub_json_dbl(j, "bw_mean", bs.avg);
	ub_json_dbl(j, "bw_dev", bs.stdev);
	ub_json_u64(j, "bw_samples", bs.n);
	ub_json_dbl(j, "iops_min", is.min);
	ub_json_dbl(j, "iops_max", is.max);
	ub_json_dbl(j, "iops_mean", is.avg);
	ub_json_dbl(j, "iops_stddev", is.stdev);
	ub_json_u64(j, "iops_samples", is.n);
	ub_json_end_obj(j);
}

static void job_obj(struct ub_json *j, const struct ub_job_res *r)
{
	static const char *const lvl[] = {"1", "2", "4", "8", "16", "32", ">=64"};
	double wall = (double)r->runtime_ns * r->njobs;
	uint64_t total = 0;

	ub_json_obj(j, NULL);
	ub_json_str(j, "jobname", r->name);
	ub_json_u64(j, "groupid", r->groupid);
	ub_json_u64(j, "jobs", r->njobs);
	ub_json_i64(j, "error", r->error);
	if (r->error)
		ub_json_str(j, "error_message", r->errmsg);
	ub_json_str(j, "ioengine", r->engine);
	ub_json_str(j, "rw", ub_rw_name(r->rw));
	ub_json_u64(j, "bs", r->bs);
	ub_json_u64(j, "iodepth", r->iodepth);
	ub_json_u64(j, "job_runtime", r->runtime_ns / 1000000);
	ddir_obj(j, r, 0);
	ddir_obj(j, r, 1);
	ub_json_dbl(j, "usr_cpu", wall > 0 ? 100.0 * (double)r->usr_ns / wall : 0);
	ub_json_dbl(j, "sys_cpu", wall > 0 ? 100.0 * (double)r->sys_ns / wall : 0);
	ub_json_u64(j, "ctx", r->ctx);
	ub_json_u64(j, "majf", r->majf);
	ub_json_u64(j, "minf", r->minf);
	for (int i = 0; i < UB_DEPTH_BUCKETS; i++)
		total += r->depth[i];
	ub_json_obj(j, "iodepth_level");
	for (int i = 0; i < UB_DEPTH_BUCKETS; i++)
		ub_json_dbl(j, lvl[i], total ? 100.0 * (double)r->depth[i] / (double)total : 0);
	ub_json_end_obj(j);
	ub_json_str(j, "lu", r->lu);
	ub_json_u64(j, "lu_block_size", r->lu_bs);
	ub_json_u64(j, "lu_blocks", r->lu_blocks);
	ub_json_u64(j, "retries", r->retries);
	ub_json_u64(j, "failovers", r->failovers);
	total = 0;
	for (unsigned i = 0; i < r->npaths; i++)
		total += r->paths[i].ios[0] + r->paths[i].ios[1];
	ub_json_arr(j, "paths");
	for (unsigned i = 0; i < r->npaths; i++) {
		const struct ub_path_res *p = &r->paths[i];
		uint64_t ios = p->ios[0] + p->ios[1];
		ub_json_obj(j, NULL);
		ub_json_u64(j, "index", i);
		ub_json_str(j, "url", p->url);
		ub_json_str(j, "state", p->state);
		ub_json_str(j, "alua", ub_alua_state_str(p->alua));
		ub_json_u64(j, "read_ios", p->ios[0]);
		ub_json_u64(j, "write_ios", p->ios[1]);
		ub_json_u64(j, "read_bytes", p->bytes[0]);
		ub_json_u64(j, "write_bytes", p->bytes[1]);
		ub_json_dbl(j, "share", total ? (double)ios / (double)total : 0);
		ub_json_dbl(j, "lat_mean_ns",
			    ios ? (double)(p->lat_ns[0] + p->lat_ns[1]) / ios : 0);
		ub_json_u64(j, "failures", p->failures);
		ub_json_u64(j, "reconnects", p->reconnects);
		ub_json_u64(j, "retried", p->retried);
		ub_json_end_obj(j);
	}
	ub_json_end_arr(j);
	ub_json_arr(j, "events");
	for (unsigned i = 0; i < r->nevents; i++) {
		ub_json_obj(j, NULL);
		ub_json_dbl(j, "time_s", (double)r->events[i].t_ns / 1e9);
		ub_json_i64(j, "path", r->events[i].path);
		ub_json_str(j, "message", r->events[i].msg);
		ub_json_end_obj(j);
	}
	ub_json_end_arr(j);
	ub_json_obj(j, "verify");
	ub_json_bool(j, "enabled", r->verify);
	ub_json_u64(j, "blocks", r->verify_blocks);
	ub_json_u64(j, "errors", r->verify_errors);
	ub_json_str(j, "message", r->verify_msg);
	ub_json_end_obj(j);
	ub_json_end_obj(j);
}

void ub_report_json(FILE *f, const struct ub_run *run, const struct ub_bench *b)
{
	struct ub_json j;
	time_t now = time(NULL);
	char tbuf[64];

	strftime(tbuf, sizeof(tbuf), "%a %b %e %H:%M:%S %Y", localtime(&now));
	ub_json_init(&j, f);
	ub_json_obj(&j, NULL);
	ub_json_str(&j, "fio version", "utgt-bench-0.1");
	ub_json_u64(&j, "timestamp", (uint64_t)now);
	ub_json_str(&j, "time", tbuf);
	ub_json_obj(&j, "global options");
	ub_json_str(&j, "policy", ub_policy_name(b->mp.policy));
	ub_json_u64(&j, "rr_iops", b->mp.rr_iops ? b->mp.rr_iops : 1);
	ub_json_u64(&j, "paths", b->npaths);
	ub_json_end_obj(&j);
	ub_json_arr(&j, "jobs");
	for (unsigned i = 0; i < run->nres; i++)
		job_obj(&j, &run->res[i]);
	ub_json_end_arr(&j);
	ub_json_arr(&j, "groups");
	for (unsigned g = 0; g < run->ngroups; g++) {
		struct ub_group_sum s;
		ub_group_sum(run->res, run->nres, g, &s);
		ub_json_obj(&j, NULL);
		ub_json_u64(&j, "groupid", g);
		for (int d = 0; d < 2; d++) {
			uint64_t ms = s.max_run_ms[d] ? s.max_run_ms[d] : 1;
			ub_json_obj(&j, d ? "write" : "read");
			ub_json_u64(&j, "io_bytes", s.bytes[d]);
			ub_json_u64(&j, "bw_bytes", s.any[d] ? s.bytes[d] * 1000 / ms : 0);
			ub_json_u64(&j, "min_bw_bytes", s.min_bw[d]);
			ub_json_u64(&j, "max_bw_bytes", s.max_bw[d]);
			ub_json_u64(&j, "min_run_ms", s.min_run_ms[d]);
			ub_json_u64(&j, "max_run_ms", s.max_run_ms[d]);
			ub_json_end_obj(&j);
		}
		ub_json_end_obj(&j);
	}
	ub_json_end_arr(&j);
	ub_json_end_obj(&j);
}
