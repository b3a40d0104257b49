/* fio 3 style text report. */
#include "initiator/opt_values.h"
#include "initiator/report.h"
#include "initiator/runner.h"
#include "initiator/units.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const ddir_name[UB_NDDIR] = {"read", "write", "trim"};
static const char *const ddir_upper[UB_NDDIR] = {"READ", "WRITE", "TRIM"};

void ub_sample_stats(const uint64_t *v, unsigned n, double scale, struct ub_sample_stats *s)
{
	double sum = 0, sq = 0;

	memset(s, 0, sizeof(*s));
	s->n = n;
	if (!n)
		return;
	s->min = s->max = (double)v[0] / scale;
	for (unsigned i = 0; i < n; i++) {
		double x = (double)v[i] / scale;
		sum += x;
		if (x < s->min)
			s->min = x;
		if (x > s->max)
			s->max = x;
	}
	s->avg = sum / n;
	for (unsigned i = 0; i < n; i++) {
		double d = (double)v[i] / scale - s->avg;
		sq += d * d;
	}
	s->stdev = n > 1 ? sqrt(sq / (n - 1)) : 0;
}

int ub_lat_unit(uint64_t min, uint64_t max, double stdev)
{
	/* fio switches to a coarser unit only when all of min, max and stdev are large in
	 * the finer one, so small numbers keep their precision. */
	if (min > 2000000 && max > 99999999ull && stdev > 1000000.0)
		return 2;
	if (min > 2000 && max > 99999 && stdev > 1000.0)
		return 1;
	return 0;
}

static const char *const unit_name[] = {"nsec", "usec", "msec"};
static const double unit_div[] = {1, 1e3, 1e6};

static void show_lat(FILE *f, const char *what, const struct ub_lat *l)
{
	double sd = ub_lat_stdev(l);
	int u;

	if (!l->n)
		return;
	u = ub_lat_unit(l->min, l->max, sd);
	fprintf(f, "    %s (%s): min=%llu, max=%llu, avg=%.2f, stdev=%.2f\n", what, unit_name[u],
		(unsigned long long)((double)l->min / unit_div[u]),
		(unsigned long long)((double)l->max / unit_div[u]), l->mean / unit_div[u],
		sd / unit_div[u]);
}

/* Percentiles come from bucket midpoints; clamp them to the observed range so that the top
 * percentile never reads higher than max (nor the bottom lower than min). */
static void show_percentiles(FILE *f, const struct ub_hist *h, const struct ub_lat *l,
			     const double *pcts, size_t n)
{
	uint64_t v[UB_MAX_PCT];
	int u = 0, width;
	uint64_t maxv = 0;

	if (!h->total)
		return;
	for (size_t i = 0; i < n; i++) {
		v[i] = ub_hist_percentile(h, pcts[i]);
		if (l->n && v[i] > l->max)
			v[i] = l->max;
		if (l->n && v[i] < l->min)
			v[i] = l->min;
		if (v[i] > maxv)
			maxv = v[i];
	}
	if (v[0] > 2000000 && maxv > 99999999ull)
		u = 2;
	else if (v[0] > 2000 && maxv > 99999)
		u = 1;
	width = 1;
	for (uint64_t m = (uint64_t)((double)maxv / unit_div[u]); m >= 10; m /= 10)
		width++;
	if (width < 5)
		width = 5;
	fprintf(f, "    clat percentiles (%s):\n", unit_name[u]);
	for (size_t i = 0; i < n; i++) {
		if (i % 4 == 0)
			fprintf(f, "     |");
		fprintf(f, " %5.2fth=[%*llu]%s", pcts[i], width,
			(unsigned long long)((double)v[i] / unit_div[u]),
			i + 1 == n ? "\n" : (i % 4 == 3 ? ",\n" : ","));
	}
}

/* "lat (usec)   : 500=0.01%, 750=2.55%" — the share of commands per latency band. */
static void show_lat_bands(FILE *f, const struct ub_hist *h)
{
	static const unsigned edges[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
	static const char *const names[] = {"nsec", "usec", "msec"};

	if (!h->total)
		return;
	for (int u = 0; u < 3; u++) {
		char line[512];
		size_t w = 0;
		double scale = unit_div[u];
		double prev = u ? ub_hist_fraction_le(h, (uint64_t)(1000 * unit_div[u - 1])) : 0;
		for (size_t k = 0; k < sizeof(edges) / sizeof(edges[0]); k++) {
			double le = ub_hist_fraction_le(h, (uint64_t)(edges[k] * scale));
			double pct = (le - prev) * 100;
			prev = le;
			if (pct >= 0.01 && w < sizeof(line) - 32)
				w += (size_t)snprintf(line + w, sizeof(line) - w, "%s%u=%.2f%%",
						      w ? ", " : "", edges[k], pct);
		}
		if (u == 2) {
			double le = ub_hist_fraction_le(h, (uint64_t)(2000 * scale));
			double pct = (le - prev) * 100, rest = (1 - le) * 100;
			if (pct >= 0.01)
				w += (size_t)snprintf(line + w, sizeof(line) - w, "%s2000=%.2f%%",
						      w ? ", " : "", pct);
			if (rest >= 0.01)
				w += (size_t)snprintf(line + w, sizeof(line) - w, "%s>=2000=%.2f%%",
						      w ? ", " : "", rest);
		}
		if (w)
			fprintf(f, "  lat (%s)   : %s\n", names[u], line);
	}
}

static void show_ddir(FILE *f, const struct ub_job_res *r, int d, uint64_t group_bytes)
{
	const struct ub_ddir_res *dr = &r->d[d];
	char bw[64], iops[32], io[32], io_si[32];
	struct ub_sample_stats bs, is;
	uint64_t bps = ub_res_bw(r, d);

	if (!dr->ios)
		return;
	ub_bw2str(bw, sizeof(bw), bps);
	ub_num2str(iops, sizeof(iops), (uint64_t)(ub_res_iops(r, d) + 0.5), 4, false, UB_U_NONE);
	ub_num2str(io, sizeof(io), dr->bytes, 4, true, UB_U_BYTE);
	ub_num2str(io_si, sizeof(io_si), dr->bytes, 4, false, UB_U_BYTE);
	fprintf(f, "  %s: IOPS=%s, BW=%s(%s/%llumsec)\n", ddir_name[d], iops, bw, io,
		(unsigned long long)(r->runtime_ns / 1000000));
	(void)io_si;
	show_lat(f, "slat", &dr->slat);
	show_lat(f, "clat", &dr->clat);
	show_lat(f, " lat", &dr->lat);
	show_percentiles(f, dr->clat_hist, &dr->clat, r->pcts, r->npcts);
	ub_sample_stats(dr->sec_bytes, dr->nsec, 1024, &bs);
	ub_sample_stats(dr->sec_ios, dr->nsec, 1, &is);
	if (bs.n) {
		double per = group_bytes ? 100.0 * (double)dr->bytes / (double)group_bytes : 100;
		fprintf(f,
			"   bw (  KiB/s): min=%6.0f, max=%6.0f, per=%3.2f%%, avg=%.2f, "
			"stdev=%.2f, samples=%u\n",
			bs.min, bs.max, per, bs.avg, bs.stdev, bs.n);
		fprintf(f,
			"   iops        : min=%5.0f, max=%5.0f, avg=%.2f, stdev=%.2f, "
			"samples=%u\n",
			is.min, is.max, is.avg, is.stdev, is.n);
	}
}

static void show_paths(FILE *f, const struct ub_job_res *r, const struct ub_bench *b)
{
	uint64_t total = 0;

	if (!r->npaths)
		return;
	for (unsigned i = 0; i < r->npaths; i++)
		total += r->paths[i].ios[0] + r->paths[i].ios[1];
	fprintf(f, "  paths        : %u, policy=%s", r->npaths, ub_policy_name(b->mp.policy));
	if (b->mp.policy != UB_POL_QUEUE_LENGTH)
		fprintf(f, " rr-iops=%u", b->mp.rr_iops ? b->mp.rr_iops : 1);
	fprintf(f, ", LU %s (%llu x %u B), retries=%llu, failovers=%llu\n", r->lu[0] ? r->lu : "-",
		(unsigned long long)r->lu_blocks, r->lu_bs, (unsigned long long)r->retries,
		(unsigned long long)r->failovers);
	for (unsigned i = 0; i < r->npaths; i++) {
		const struct ub_path_res *p = &r->paths[i];
		uint64_t ios = p->ios[0] + p->ios[1];
		char by[32];
		ub_num2str(by, sizeof(by), p->bytes[0] + p->bytes[1], 4, true, UB_U_BYTE);
		fprintf(f,
			"     path %-2u   : %s, ios=r=%llu/w=%llu (%.1f%%), io=%s, "
			"avg lat=%.1fusec, failures=%llu, reconnects=%llu, retried=%llu%s%s, %s\n",
			i, p->state, (unsigned long long)p->ios[0], (unsigned long long)p->ios[1],
			total ? 100.0 * (double)ios / (double)total : 0.0, by,
			ios ? (double)(p->lat_ns[0] + p->lat_ns[1]) / (double)ios / 1e3 : 0.0,
			(unsigned long long)p->failures, (unsigned long long)p->reconnects,
			(unsigned long long)p->retried, p->alua != UB_ALUA_UNKNOWN ? ", alua=" : "",
			p->alua != UB_ALUA_UNKNOWN ? ub_alua_state_str(p->alua) : "", p->url);
	}
	if (r->nevents) {
		fprintf(f, "  events       :\n");
		for (unsigned i = 0; i < r->nevents; i++)
			fprintf(f, "     %9.3fs  %s\n", (double)r->events[i].t_ns / 1e9,
				r->events[i].msg);
	}
}

void ub_report_job_text(FILE *f, const struct ub_job_res *r, uint64_t group_bytes[UB_NDDIR],
			const struct ub_bench *b)
{
	uint64_t depth_total = 0;
	time_t now = time(NULL);
	char tbuf[64];
	double wall = (double)r->runtime_ns * r->njobs;

	strftime(tbuf, sizeof(tbuf), "%a %b %e %H:%M:%S %Y", localtime(&now));
	fprintf(f, "%s: (groupid=%u, jobs=%u): err=%2d: pid=%d: %s\n", r->name, r->groupid,
		r->njobs, r->error, (int)getpid(), tbuf);
	if (r->error)
		fprintf(f, "  error        : %s\n", r->errmsg);
	if (r->note[0])
		fprintf(f, "  note         : %s\n", r->note);
	if (r->error && !r->npaths && !r->d[0].ios && !r->d[1].ios)
		return; /* never started: the error is all there is to say */
	for (int d = 0; d < UB_NDDIR; d++)
		show_ddir(f, r, d, group_bytes ? group_bytes[d] : 0);
	if (r->sync_lat.n) {
		fprintf(f, "  fsync/fdatasync/sync_file_range:\n    sync (%s): min=%llu, max=%llu, "
			   "avg=%.2f, stdev=%.2f\n",
			"nsec", (unsigned long long)r->sync_lat.min,
			(unsigned long long)r->sync_lat.max, r->sync_lat.mean,
			ub_lat_stdev(&r->sync_lat));
	}
	for (int d = 0; d < UB_NDDIR; d++)
		show_lat_bands(f, r->d[d].clat_hist);
	fprintf(f, "  cpu          : usr=%.2f%%, sys=%.2f%%, ctx=%llu, majf=%llu, minf=%llu\n",
		wall > 0 ? 100.0 * (double)r->usr_ns / wall : 0.0,
		wall > 0 ? 100.0 * (double)r->sys_ns / wall : 0.0, (unsigned long long)r->ctx,
		(unsigned long long)r->majf, (unsigned long long)r->minf);
	for (int i = 0; i < UB_DEPTH_BUCKETS; i++)
		depth_total += r->depth[i];
	if (depth_total) {
		static const char *const lbl[] = {"1", "2", "4", "8", "16", "32", ">=64"};
		fprintf(f, "  IO depths    :");
		for (int i = 0; i < UB_DEPTH_BUCKETS; i++)
			fprintf(f, " %s=%.1f%%%s", lbl[i],
				100.0 * (double)r->depth[i] / (double)depth_total,
				i + 1 < UB_DEPTH_BUCKETS ? "," : "\n");
	}
	fprintf(f, "     issued rwts: total=%llu,%llu,%llu,%llu short=0,0,0,0 dropped=0,0,0,0\n",
		(unsigned long long)r->issued[0], (unsigned long long)r->issued[1],
		(unsigned long long)r->issued[2], (unsigned long long)r->sync_lat.n);
	fprintf(f, "     latency   : target=%llu, window=%llu, percentile=%.2f%%, depth=%u\n",
		(unsigned long long)(r->lat_target_ns / 1000),
		(unsigned long long)(r->lat_window_ns / 1000),
		r->lat_percentile > 0 ? r->lat_percentile : 100.0,
		r->lat_depth ? r->lat_depth : r->iodepth);
	if (r->ss_msg[0])
		fprintf(f, "  steadystate  : %s\n", r->ss_msg);
	if (r->errors_ignored)
		fprintf(f, "  errors       : %llu ignored (continue_on_error)\n",
			(unsigned long long)r->errors_ignored);
	show_paths(f, r, b);
	if (r->verify)
		fprintf(f, "  verify       : %s, %llu blocks checked, %llu errors%s%s\n",
			ub_verify_name((enum ub_verify)r->verify_alg),
			(unsigned long long)r->verify_blocks, (unsigned long long)r->verify_errors,
			r->verify_msg[0] ? "\n     " : "", r->verify_msg);
}

void ub_report_group_text(FILE *f, const struct ub_job_res *res, unsigned n, unsigned groupid)
{
	struct ub_group_sum s;

	ub_group_sum(res, n, groupid, &s);
	fprintf(f, "\nRun status group %u (all jobs):\n", groupid);
	for (int d = 0; d < UB_NDDIR; d++) {
		char agg[64], mn[64], mx[64], io[32], io_si[32], mn_si[32], mx_si[32];
		uint64_t agg_bw, ms;
		if (!s.any[d])
			continue;
		ms = s.max_run_ms[d] ? s.max_run_ms[d] : 1;
		agg_bw = s.bytes[d] * 1000 / ms;
		ub_bw2str(agg, sizeof(agg), agg_bw);
		ub_num2str(mn, sizeof(mn), s.min_bw[d], 4, true, UB_U_BYTEPERSEC);
		ub_num2str(mx, sizeof(mx), s.max_bw[d], 4, true, UB_U_BYTEPERSEC);
		ub_num2str(mn_si, sizeof(mn_si), s.min_bw[d], 4, false, UB_U_BYTEPERSEC);
		ub_num2str(mx_si, sizeof(mx_si), s.max_bw[d], 4, false, UB_U_BYTEPERSEC);
		ub_num2str(io, sizeof(io), s.bytes[d], 4, true, UB_U_BYTE);
		ub_num2str(io_si, sizeof(io_si), s.bytes[d], 4, false, UB_U_BYTE);
		fprintf(f, "%7s: bw=%s, %s-%s (%s-%s), io=%s (%s), run=%llu-%llumsec\n",
			ddir_upper[d], agg, mn, mx, mn_si, mx_si, io, io_si,
			(unsigned long long)s.min_run_ms[d], (unsigned long long)s.max_run_ms[d]);
	}
}

void ub_report_text(FILE *f, const struct ub_run *run, const struct ub_bench *b)
{
	for (unsigned g = 0; g < run->ngroups; g++) {
		struct ub_group_sum s;
		ub_group_sum(run->res, run->nres, g, &s);
		for (unsigned i = 0; i < run->nres; i++)
			if (run->res[i].groupid == g)
				ub_report_job_text(f, &run->res[i], s.bytes, b);
	}
	for (unsigned g = 0; g < run->ngroups; g++)
		ub_report_group_text(f, run->res, run->nres, g);
}

void ub_report_job_line(FILE *f, const struct ub_job *j, unsigned groupid, const char *engine)
{
	char lo[3][32], hi[3][32];

	for (int d = 0; d < UB_NDDIR; d++) {
		struct ub_bsspec b = ub_job_bsspec(j, d);
		ub_num2str(lo[d], sizeof(lo[d]), b.min, 4, true, UB_U_BYTE);
		ub_num2str(hi[d], sizeof(hi[d]), b.max, 4, true, UB_U_BYTE);
	}
	fprintf(f,
		"%s: (g=%u): rw=%s, bs=(R) %s-%s, (W) %s-%s, (T) %s-%s, ioengine=%s, "
		"iodepth=%u\n",
		j->name, groupid, ub_rw_name(j->rw), lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], engine,
		j->iodepth);
}
