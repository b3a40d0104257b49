/* utgt-bench's run-wide settings (everything that is not a per-job fio option) and the
 * per-job execution entry point. */
#ifndef UB_BENCH_H
#define UB_BENCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "initiator/job.h"
#include "initiator/mpath.h"
#include "initiator/results.h"

/* --output-format: any combination, printed in this order. */
enum ub_outfmt { UB_OUT_NORMAL = 1, UB_OUT_TERSE = 2, UB_OUT_JSON = 4, UB_OUT_JSONPLUS = 8 };

struct ub_bench {
	char *paths[UB_MAX_PATHS]; /* --paths, owned */
	unsigned npaths;
	struct ub_mpath_cfg mp;
	char initiator[224];
	unsigned fmt; /* enum ub_outfmt bits */
	char output[256];
	char preset[32];
	unsigned sweep[UB_MAX_PATHS];
	unsigned nsweep;
	char sweep_plot[256];
	char bw_log[256];
	int progress; /* -1 auto (terminal only), 0 never, 1 always */
	unsigned cdm_passes;
	bool show_help, show_version;
	bool parse_only;
	char *sections[32]; /* --section: run only these jobs (fio's) */
	unsigned nsections;
	char filename_check[1024]; /* --filename given with --paths */
	struct ub_joblist jobs;
};

void ub_bench_defaults(struct ub_bench *b);
void ub_bench_free(struct ub_bench *b);

/* Live counters a job publishes for the progress line (relaxed atomics). */
struct ub_live {
	uint64_t ios[2], bytes[2];
	uint64_t eta_end_ns; /* expected end, 0 when unknown */
	int state;	     /* 0 starting, 1 running, 2 done */
};

/* Once a second while measuring (rados bench's table). */
struct ub_tick {
	unsigned sec;
	unsigned inflight;
	uint64_t started, finished;
	uint64_t bytes_total, bytes_sec;
	double last_lat_s, avg_lat_s, min_lat_s, max_lat_s;
};

struct ub_exec {
	const struct ub_job *job;
	const struct ub_bench *bench;
	char *const *targets; /* paths for this run (a prefix of --paths when sweeping) */
	unsigned ntargets;
	unsigned clone; /* 0..numjobs-1 */
	unsigned groupid;
	struct ub_live *live;
	void (*on_tick)(void *arg, const struct ub_tick *t);
	void *tick_arg;
	volatile sig_atomic_t *stop;
	uint64_t size_override; /* bytes for a read-back phase (rados seq), 0: none */
	unsigned log_index;	/* fio's job number for log names, from 1 */
};

/* Run one job (one numjobs clone) to the end.  res must be ub_res_init()ed.  Returns 0, or
 * non-zero with res->error/res->errmsg set. */
int ub_job_exec(const struct ub_exec *x, struct ub_job_res *res);

#endif
