/* Result bookkeeping and merging. */
#include "initiator/results.h"

#include <stdlib.h>
#include <string.h>

bool ub_res_init(struct ub_job_res *r)
{
	memset(r, 0, sizeof(*r));
	r->njobs = 1;
	for (int d = 0; d < UB_NDDIR; d++) {
		r->d[d].clat_hist = calloc(1, sizeof(struct ub_hist));
		if (!r->d[d].clat_hist) {
			ub_res_free(r);
			return false;
		}
	}
	r->sync_hist = calloc(1, sizeof(struct ub_hist));
	if (!r->sync_hist) {
		ub_res_free(r);
		return false;
	}
	r->pcts = ub_default_percentiles;
	r->npcts = (unsigned)ub_default_npercentiles;
	return true;
}

void ub_res_free(struct ub_job_res *r)
{
	free(r->sync_hist);
	r->sync_hist = NULL;
	for (int d = 0; d < UB_NDDIR; d++) {
		free(r->d[d].clat_hist);
		free(r->d[d].sec_bytes);
		free(r->d[d].sec_ios);
		r->d[d].clat_hist = NULL;
		r->d[d].sec_bytes = r->d[d].sec_ios = NULL;
	}
	free(r->events);
	r->events = NULL;
	r->nevents = 0;
}

static bool grow(struct ub_ddir_res *d, uint32_t need)
{
	uint32_t cap;
	uint64_t *a, *b;

	if (need <= d->capsec)
		return true;
	cap = d->capsec ? d->capsec : 64;
	while (cap < need)
		cap *= 2;
	a = realloc(d->sec_bytes, cap * sizeof(*a));
	if (!a)
		return false;
	d->sec_bytes = a;
	b = realloc(d->sec_ios, cap * sizeof(*b));
	if (!b)
		return false;
	d->sec_ios = b;
	memset(a + d->capsec, 0, (cap - d->capsec) * sizeof(*a));
	memset(b + d->capsec, 0, (cap - d->capsec) * sizeof(*b));
	d->capsec = cap;
	return true;
}

void ub_res_add_sec(struct ub_ddir_res *d, uint64_t bytes, uint64_t ios)
{
	if (!grow(d, d->nsec + 1))
		return;
	d->sec_bytes[d->nsec] = bytes;
	d->sec_ios[d->nsec] = ios;
	d->nsec++;
}

void ub_ddir_reset(struct ub_ddir_res *d)
{
	struct ub_hist *h = d->clat_hist;

	d->ios = d->bytes = 0;
	memset(&d->slat, 0, sizeof(d->slat));
	memset(&d->clat, 0, sizeof(d->clat));
	memset(&d->lat, 0, sizeof(d->lat));
	if (h)
		memset(h, 0, sizeof(*h));
	d->nsec = 0;
}

bool ub_res_merge(struct ub_job_res *dst, const struct ub_job_res *src)
{
	ub_lat_merge(&dst->sync_lat, &src->sync_lat);
	if (dst->sync_hist && src->sync_hist)
		ub_hist_merge(dst->sync_hist, src->sync_hist);
	dst->errors_ignored += src->errors_ignored;
	if (src->elapsed_ms > dst->elapsed_ms)
		dst->elapsed_ms = src->elapsed_ms;
	for (int k = 0; k < UB_NDDIR; k++) {
		struct ub_ddir_res *a = &dst->d[k];
		const struct ub_ddir_res *b = &src->d[k];
		a->ios += b->ios;
		a->bytes += b->bytes;
		ub_lat_merge(&a->slat, &b->slat);
		ub_lat_merge(&a->clat, &b->clat);
		ub_lat_merge(&a->lat, &b->lat);
		ub_hist_merge(a->clat_hist, b->clat_hist);
		if (!grow(a, b->nsec))
			return false;
		for (uint32_t i = 0; i < b->nsec; i++) {
			a->sec_bytes[i] += b->sec_bytes[i];
			a->sec_ios[i] += b->sec_ios[i];
		}
		if (b->nsec > a->nsec)
			a->nsec = b->nsec;
		dst->issued[k] += src->issued[k];
		dst->short_ios[k] += src->short_ios[k];
		if (!dst->bs_min[k] || (src->bs_min[k] && src->bs_min[k] < dst->bs_min[k]))
			dst->bs_min[k] = src->bs_min[k];
		if (src->bs_max[k] > dst->bs_max[k])
			dst->bs_max[k] = src->bs_max[k];
	}
	if (src->runtime_ns > dst->runtime_ns)
		dst->runtime_ns = src->runtime_ns;
	dst->usr_ns += src->usr_ns;
	dst->sys_ns += src->sys_ns;
	dst->ctx += src->ctx;
	dst->majf += src->majf;
	dst->minf += src->minf;
	for (int i = 0; i < UB_DEPTH_BUCKETS; i++) {
		dst->depth[i] += src->depth[i];
		dst->submit[i] += src->submit[i];
		dst->complete[i] += src->complete[i];
	}
	for (unsigned i = 0; i < src->npaths && i < UB_MAX_PATHS; i++) {
		struct ub_path_res *a = &dst->paths[i];
		const struct ub_path_res *b = &src->paths[i];
		if (i >= dst->npaths) {
			*a = *b;
			continue;
		}
		for (int k = 0; k < 2; k++) {
			a->ios[k] += b->ios[k];
			a->bytes[k] += b->bytes[k];
			a->lat_ns[k] += b->lat_ns[k];
		}
		a->failures += b->failures;
		a->reconnects += b->reconnects;
		a->retried += b->retried;
	}
	if (src->npaths > dst->npaths)
		dst->npaths = src->npaths;
	if (src->nevents) {
		struct ub_mpath_event *ev =
		    realloc(dst->events, (dst->nevents + src->nevents) * sizeof(*ev));
		if (!ev)
			return false;
		memcpy(ev + dst->nevents, src->events, src->nevents * sizeof(*ev));
		dst->events = ev;
		dst->nevents += src->nevents;
	}
	dst->retries += src->retries;
	dst->failovers += src->failovers;
	dst->verify_blocks += src->verify_blocks;
	dst->verify_errors += src->verify_errors;
	if (!dst->verify_msg[0] && src->verify_msg[0])
		memcpy(dst->verify_msg, src->verify_msg, sizeof(dst->verify_msg));
	if (!dst->error && src->error) {
		dst->error = src->error;
		memcpy(dst->errmsg, src->errmsg, sizeof(dst->errmsg));
	}
	dst->njobs += src->njobs;
	return true;
}

uint64_t ub_res_bw(const struct ub_job_res *r, int d)
{
	uint64_t ms = r->runtime_ns / 1000000;

	if (!ms)
		ms = 1;
	return r->d[d].bytes * 1000 / ms;
}

double ub_res_iops(const struct ub_job_res *r, int d)
{
	if (!r->runtime_ns)
		return 0;
	return (double)r->d[d].ios * 1e9 / (double)r->runtime_ns;
}

void ub_group_sum(const struct ub_job_res *jobs, unsigned n, unsigned groupid,
		  struct ub_group_sum *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < n; i++) {
		const struct ub_job_res *r = &jobs[i];
		if (r->groupid != groupid)
			continue;
		for (int d = 0; d < UB_NDDIR; d++) {
			uint64_t bw, ms;
			if (!r->d[d].ios)
				continue;
			bw = ub_res_bw(r, d);
			ms = r->runtime_ns / 1000000;
			s->bytes[d] += r->d[d].bytes;
			if (!s->any[d] || bw < s->min_bw[d])
				s->min_bw[d] = bw;
			if (!s->any[d] || bw > s->max_bw[d])
				s->max_bw[d] = bw;
			if (!s->any[d] || ms < s->min_run_ms[d])
				s->min_run_ms[d] = ms;
			if (!s->any[d] || ms > s->max_run_ms[d])
				s->max_run_ms[d] = ms;
			s->any[d] = true;
		}
	}
}
