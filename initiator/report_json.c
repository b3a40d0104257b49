/* --output-format=json and json+: fio's JSON layout field for field (what fio's own tools and
 * scripts read: "fio version", timestamps, per job "job options", read/write/trim/sync with
 * *_ns latency objects and percentiles, bw_* and iops_* sample statistics, latency_ns/us/ms
 * buckets, cpu, iodepth levels; json+ adds clat_ns "bins"), plus utgt-bench's own blocks
 * (paths[], events[], verify, groups[]). */
#include "initiator/json.h"
#include "initiator/opt_values.h"
#include "initiator/report.h"
#include "initiator/runner.h"

#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static const char *const ddir_key[UB_NDDIR] = {"read", "write", "trim"};

static void percentiles(struct ub_json *j, const struct ub_job_res *r, const struct ub_lat *l,
			const struct ub_hist *h)
{
	ub_json_obj(j, "percentile");
	for (unsigned i = 0; i < r->npcts; i++) {
		char k[32];
		uint64_t v = ub_hist_percentile(h, r->pcts[i]);
		snprintf(k, sizeof(k), "%.6f", r->pcts[i]);
		ub_json_u64(j, k, v > l->max ? l->max : v < l->min ? l->min : v);
	}
	ub_json_end_obj(j);
}

/* json+: every non-empty histogram bucket, keyed by its lowest value in ns, as fio's bins. */
static void bins(struct ub_json *j, const struct ub_hist *h)
{
	ub_json_obj(j, "bins");
	for (unsigned i = 0; i < UB_HIST_BUCKETS; i++)
		if (h->bucket[i]) {
			char k[32];
			snprintf(k, sizeof(k), "%llu", (unsigned long long)ub_hist_bucket_lo(i));
			ub_json_u64(j, k, h->bucket[i]);
		}
	ub_json_end_obj(j);
}

static void lat_obj(struct ub_json *j, const char *name, const struct ub_job_res *r,
		    const struct ub_lat *l, const struct ub_hist *h, bool plus)
{
	ub_json_obj(j, name);
	ub_json_u64(j, "min", l->n ? l->min : 0);
	ub_json_u64(j, "max", l->max);
	ub_json_dbl(j, "mean", l->mean);
	ub_json_dbl(j, "stddev", ub_lat_stdev(l));
	ub_json_u64(j, "N", l->n);
	if (h && h->total) {
		percentiles(j, r, l, h);
		if (plus)
			bins(j, h);
	}
	ub_json_end_obj(j);
}

static void ddir_obj(struct ub_json *j, const struct ub_job_res *r, int d, uint64_t group_bytes,
		     bool plus)
{
	const struct ub_ddir_res *dr = &r->d[d];
	struct ub_sample_stats bs, is;

	ub_sample_stats(dr->sec_bytes, dr->nsec, 1024, &bs);
	ub_sample_stats(dr->sec_ios, dr->nsec, 1, &is);
	ub_json_obj(j, ddir_key[d]);
	ub_json_u64(j, "io_bytes", dr->bytes);
	ub_json_u64(j, "io_kbytes", dr->bytes / 1024);
	ub_json_u64(j, "bw_bytes", ub_res_bw(r, d));
	ub_json_u64(j, "bw", ub_res_bw(r, d) / 1024);
	ub_json_dbl(j, "iops", ub_res_iops(r, d));
	ub_json_u64(j, "runtime", dr->ios ? r->runtime_ns / 1000000 : 0);
	ub_json_u64(j, "total_ios", dr->ios);
	ub_json_u64(j, "short_ios", r->short_ios[d]);
	ub_json_u64(j, "drop_ios", 0);
	lat_obj(j, "slat_ns", r, &dr->slat, NULL, plus);
	lat_obj(j, "clat_ns", r, &dr->clat, dr->clat_hist, plus);
	lat_obj(j, "lat_ns", r, &dr->lat, NULL, plus);
	ub_json_dbl(j, "bw_min", bs.n ? bs.min : 0);
	ub_json_dbl(j, "bw_max", bs.n ? bs.max : 0);
	ub_json_dbl(j, "bw_agg", group_bytes ? 100.0 * (double)dr->bytes / (double)group_bytes : 0);
	ub_json_dbl(j, "bw_mean", bs.avg);
	ub_json_dbl(j, "bw_dev", bs.stdev);
	ub_json_u64(j, "bw_samples", bs.n);
	ub_json_dbl(j, "iops_min", is.n ? is.min : 0);
	ub_json_dbl(j, "iops_max", is.n ? is.max : 0);
	ub_json_dbl(j, "iops_mean", is.avg);
	ub_json_dbl(j, "iops_stddev", is.stdev);
	ub_json_u64(j, "iops_samples", is.n);
	ub_json_end_obj(j);
}

static void job_options(struct ub_json *j, const char *given)
{
	const char *p = given;

	ub_json_obj(j, "job options");
	while (*p) {
		const char *nl = strchr(p, '\n'), *eq = strchr(p, '=');
		char k[64], v[600];
		if (!nl || !eq || eq > nl)
			break;
		snprintf(k, sizeof(k), "%.*s", (int)(eq - p), p);
		snprintf(v, sizeof(v), "%.*s", (int)(nl - eq - 1), eq + 1);
		ub_json_str(j, k, v);
		p = nl + 1;
	}
	ub_json_end_obj(j);
}

/* latency_ns/us/ms: the share of completions in each band, over all directions */
static void latency_bands(struct ub_json *j, const struct ub_job_res *r)
{
	static const unsigned edges[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
	static const char *const names[] = {"latency_ns", "latency_us", "latency_ms"};
	struct ub_hist h;

	memset(&h, 0, sizeof(h));
	for (int d = 0; d < UB_NDDIR; d++)
		ub_hist_merge(&h, r->d[d].clat_hist);
	for (int u = 0; u < 3; u++) {
		double scale = u == 0 ? 1 : u == 1 ? 1e3 : 1e6;
		double prev = u ? ub_hist_fraction_le(&h, (uint64_t)(1000 * scale / 1000)) : 0;
		ub_json_obj(j, names[u]);
		for (size_t k = 0; k < sizeof(edges) / sizeof(edges[0]); k++) {
			char key[16];
			double le = ub_hist_fraction_le(&h, (uint64_t)(edges[k] * scale));
			snprintf(key, sizeof(key), "%u", edges[k]);
			ub_json_dbl(j, key, (le - prev) * 100);
			prev = le;
		}
		if (u == 2) {
			double le = ub_hist_fraction_le(&h, (uint64_t)(2000 * scale));
			ub_json_dbl(j, "2000", (le - prev) * 100);
			ub_json_dbl(j, ">=2000", h.total ? (1 - le) * 100 : 0);
		}
		ub_json_end_obj(j);
	}
}

static void buckets(struct ub_json *j, const char *name, const uint64_t *v, bool batches)
{
	static const char *const lvl[] = {"1", "2", "4", "8", "16", "32", ">=64"};
	static const char *const bat[] = {"0", "4", "8", "16", "32", "64", ">=64"};
	uint64_t total = 0;

	for (int i = 0; i < UB_DEPTH_BUCKETS; i++)
		total += v[i];
	ub_json_obj(j, name);
	for (int i = 0; i < UB_DEPTH_BUCKETS; i++)
		ub_json_dbl(j, batches ? bat[i] : lvl[i],
			    total ? 100.0 * (double)v[i] / (double)total : 0);
	ub_json_end_obj(j);
}

static void extras(struct ub_json *j, const struct ub_job_res *r)
{
	uint64_t total = 0;

	ub_json_str(j, "lu", r->lu);
	ub_json_u64(j, "lu_block_size", r->lu_bs);
	ub_json_u64(j, "lu_blocks", r->lu_blocks);
	ub_json_u64(j, "retries", r->retries);
	ub_json_u64(j, "failovers", r->failovers);
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
			    ios ? (double)(p->lat_ns[0] + p->lat_ns[1]) / (double)ios : 0);
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
	ub_json_str(j, "algorithm", r->verify ? ub_verify_name((enum ub_verify)r->verify_alg) : "");
	ub_json_u64(j, "blocks", r->verify_blocks);
	ub_json_u64(j, "errors", r->verify_errors);
	ub_json_str(j, "message", r->verify_msg);
	ub_json_end_obj(j);
	if (r->ss_msg[0]) {
		ub_json_obj(j, "steadystate");
		ub_json_bool(j, "attained", r->ss_attained);
		ub_json_str(j, "message", r->ss_msg);
		ub_json_end_obj(j);
	}
}

static void job_obj(struct ub_json *j, const struct ub_job_res *r, const uint64_t *group_bytes,
		    bool plus)
{
	double wall = (double)r->runtime_ns * r->njobs;

	ub_json_obj(j, NULL);
	ub_json_str(j, "jobname", r->name);
	ub_json_u64(j, "groupid", r->groupid);
	ub_json_u64(j, "jobs", r->njobs);
	ub_json_i64(j, "error", r->error);
	if (r->error)
		ub_json_str(j, "error_message", r->errmsg);
	ub_json_u64(j, "eta", 0);
	ub_json_u64(j, "elapsed", (r->elapsed_ms + 999) / 1000);
	job_options(j, r->options);
	ub_json_str(j, "ioengine", r->engine);
	ub_json_str(j, "rw", ub_rw_name(r->rw));
	ub_json_u64(j, "bs", r->bs);
	ub_json_u64(j, "iodepth", r->iodepth);
	for (int d = 0; d < UB_NDDIR; d++)
		ddir_obj(j, r, d, group_bytes[d], plus);
	ub_json_obj(j, "sync");
	ub_json_u64(j, "total_ios", r->sync_lat.n);
	lat_obj(j, "lat_ns", r, &r->sync_lat, r->sync_hist, plus);
	ub_json_end_obj(j);
	ub_json_u64(j, "job_runtime", r->runtime_ns / 1000000);
	ub_json_dbl(j, "usr_cpu", wall > 0 ? 100.0 * (double)r->usr_ns / wall : 0);
	ub_json_dbl(j, "sys_cpu", wall > 0 ? 100.0 * (double)r->sys_ns / wall : 0);
	ub_json_u64(j, "ctx", r->ctx);
	ub_json_u64(j, "majf", r->majf);
	ub_json_u64(j, "minf", r->minf);
	buckets(j, "iodepth_level", r->depth, false);
	buckets(j, "iodepth_submit", r->submit, true);
	buckets(j, "iodepth_complete", r->complete, true);
	latency_bands(j, r);
	ub_json_u64(j, "latency_depth", r->lat_depth ? r->lat_depth : r->iodepth);
	ub_json_u64(j, "latency_target", r->lat_target_ns);
	ub_json_dbl(j, "latency_percentile", r->lat_percentile);
	ub_json_u64(j, "latency_window", r->lat_window_ns);
	extras(j, r);
	ub_json_end_obj(j);
}

void ub_report_json(FILE *f, const struct ub_run *run, const struct ub_bench *b)
{
	struct ub_json j;
	struct timeval tv;
	time_t now;
	char tbuf[64];
	bool plus = b->fmt & UB_OUT_JSONPLUS;

	gettimeofday(&tv, NULL);
	now = tv.tv_sec;
	strftime(tbuf, sizeof(tbuf), "%a %b %e %H:%M:%S %Y", localtime(&now));
	ub_json_init(&j, f);
	ub_json_obj(&j, NULL);
	ub_json_str(&j, "fio version", "utgt-bench-" UTGT_VERSION);
	ub_json_u64(&j, "timestamp", (uint64_t)now);
	ub_json_u64(&j, "timestamp_ms", (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000);
	ub_json_str(&j, "time", tbuf);
	ub_json_obj(&j, "global options");
	ub_json_str(&j, "policy", ub_policy_name(b->mp.policy));
	ub_json_u64(&j, "rr_iops", b->mp.rr_iops ? b->mp.rr_iops : 1);
	ub_json_u64(&j, "paths", b->npaths);
	ub_json_end_obj(&j);
	ub_json_arr(&j, "jobs");
	for (unsigned i = 0; i < run->nres; i++) {
		struct ub_group_sum s;
		ub_group_sum(run->res, run->nres, run->res[i].groupid, &s);
		job_obj(&j, &run->res[i], s.bytes, plus);
	}
	ub_json_end_arr(&j);
	ub_json_arr(&j, "groups");
	for (unsigned g = 0; g < run->ngroups; g++) {
		struct ub_group_sum s;
		ub_group_sum(run->res, run->nres, g, &s);
		ub_json_obj(&j, NULL);
		ub_json_u64(&j, "groupid", g);
		for (int d = 0; d < UB_NDDIR; d++) {
			uint64_t ms = s.max_run_ms[d] ? s.max_run_ms[d] : 1;
			ub_json_obj(&j, ddir_key[d]);
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
