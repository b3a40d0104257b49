/* What a job measured: per direction counts, latencies, per-second samples; per path
 * counters; multipath events; verify outcome.  Jobs of a group can be merged into one
 * (group_reporting), groups summarised ("Run status group"). */
#ifndef UB_RESULTS_H
#define UB_RESULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "initiator/histogram.h"
#include "initiator/job.h"
#include "initiator/mpath.h"

#define UB_DEPTH_BUCKETS 7 /* 1, 2, 4, 8, 16, 32, >=64 */

struct ub_ddir_res {
	uint64_t ios, bytes;
	struct ub_lat slat, clat, lat;
	struct ub_hist *clat_hist;
	uint64_t *sec_bytes, *sec_ios; /* one sample per second of the measured runtime */
	uint32_t nsec, capsec;
};

struct ub_path_res {
	char url[600];
	char state[16];
	int alua;
	uint64_t ios[2], bytes[2], lat_ns[2]; /* [0] read, [1] write (trims count as writes) */
	uint64_t failures, reconnects, retried;
};

struct ub_job_res {
	char name[128];
	unsigned groupid;
	unsigned njobs;
	bool group_reporting;
	enum ub_rw rw;
	uint64_t bs;
	unsigned iodepth;
	char engine[16];
	char note[256];
	int error; /* 0 ok; errno-like otherwise */
	char errmsg[512];
	struct ub_ddir_res d[UB_NDDIR]; /* read, write, trim */
	struct ub_lat sync_lat;		/* flushes (fsync=, end_fsync) */
	struct ub_hist *sync_hist;
	uint64_t short_ios[UB_NDDIR], errors_ignored;
	/* latency_target: the depth found, and the settings */
	unsigned lat_depth;
	bool lat_target_met;
	uint64_t lat_target_ns, lat_window_ns;
	double lat_percentile;
	const double *pcts; /* percentile_list, or fio's default list */
	unsigned npcts;
	uint64_t bs_min[UB_NDDIR], bs_max[UB_NDDIR];
	uint64_t elapsed_ms;
	bool ss_attained;
	char ss_msg[200];
	uint64_t runtime_ns;
	uint64_t usr_ns, sys_ns, ctx, majf, minf;
	uint64_t depth[UB_DEPTH_BUCKETS];
	uint64_t submit[UB_DEPTH_BUCKETS], complete[UB_DEPTH_BUCKETS]; /* batch sizes 0,4..64,>64 */
	char options[1536]; /* the job's options as given, key=value lines */
	uint64_t issued[UB_NDDIR];
	unsigned npaths;
	struct ub_path_res paths[UB_MAX_PATHS];
	struct ub_mpath_event *events;
	unsigned nevents;
	uint64_t retries, failovers;
	bool verify;
	int verify_alg; /* enum ub_verify */
	uint64_t verify_blocks, verify_errors;
	char verify_msg[512];
	char lu[160];
	uint32_t lu_bs;
	uint64_t lu_blocks;
};

bool ub_res_init(struct ub_job_res *r);
void ub_res_free(struct ub_job_res *r);
/* Add one second's sample (bytes and ios done in that second). */
void ub_res_add_sec(struct ub_ddir_res *d, uint64_t bytes, uint64_t ios);
void ub_ddir_reset(struct ub_ddir_res *d);
/* dst += src: counts, latencies, histograms, samples (summed per second index), paths
 * (matched by index), cpu; runtime is the max. */
bool ub_res_merge(struct ub_job_res *dst, const struct ub_job_res *src);

/* Group summary for "Run status group" lines. */
struct ub_group_sum {
	uint64_t bytes[UB_NDDIR];
	uint64_t min_bw[UB_NDDIR], max_bw[UB_NDDIR]; /* per job, bytes/s */
	uint64_t min_run_ms[UB_NDDIR], max_run_ms[UB_NDDIR];
	bool any[UB_NDDIR];
};
void ub_group_sum(const struct ub_job_res *jobs, unsigned n, unsigned groupid,
		  struct ub_group_sum *s);
/* bytes per second over the job's runtime */
uint64_t ub_res_bw(const struct ub_job_res *r, int d);
double ub_res_iops(const struct ub_job_res *r, int d);

#endif
