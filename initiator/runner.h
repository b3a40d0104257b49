/* Runs a job list the fio way: jobs between stonewalls form a group and run concurrently
 * (each numjobs clone in its own thread with its own sessions), groups run one after another.
 * Shows a live progress line on a terminal. */
#ifndef UB_RUNNER_H
#define UB_RUNNER_H

#include "initiator/bench.h"
#include "initiator/results.h"

struct ub_run {
	struct ub_job_res *res; /* one per clone, or one per group with group_reporting */
	unsigned nres;
	unsigned ngroups;
	int rc; /* 0 ok, 1 I/O or verify error, 3 could not start (connect, login, config) */
};

struct ub_run_hooks {
	void (*on_tick)(void *arg, const struct ub_tick *t);
	void *tick_arg;
	uint64_t size_override;
	bool quiet; /* no progress line */
};

/* Group id of every job (index-aligned with jobs->jobs). */
unsigned ub_assign_groups(const struct ub_joblist *jobs, unsigned *groupid);
int ub_run_jobs(const struct ub_bench *b, const struct ub_joblist *jobs, char *const *targets,
		unsigned ntargets, const struct ub_run_hooks *hooks, struct ub_run *out);
void ub_run_free(struct ub_run *r);

extern volatile sig_atomic_t ub_stop_requested;

#endif
