/* utgt-bench: fio-style workloads against iSCSI targets (libiscsi) or block devices, with
 * multipath over several portals, presets for the seeds' tools, and path-scaling sweeps. */
#include "initiator/cli.h"
#include "initiator/engine.h"
#include "initiator/presets.h"
#include "initiator/report.h"
#include "initiator/runner.h"
#include "common/diag.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VERSION "utgt-bench-" UTGT_VERSION

static void on_signal(int sig)
{
	(void)sig;
	if (ub_stop_requested)
		_Exit(130);
	ub_stop_requested = 1;
}

static void print_errors(const struct ub_run *run)
{
	for (unsigned i = 0; i < run->nres; i++)
		if (run->res[i].error)
			fprintf(stderr, "utgt-bench: job %s: %s\n", run->res[i].name,
				run->res[i].errmsg);
}

static const char *engine_name(const struct ub_bench *b, const struct ub_job *j)
{
	char note[256], err[256];
	const struct ub_engine *e =
	    ub_engine_resolve(j->ioengine, b->npaths ? b->paths[0] : j->filename, note,
			      sizeof(note), err, sizeof(err));
	return e ? e->name : j->ioengine;
}

static void header(FILE *out, const struct ub_bench *b, const struct ub_joblist *jobs)
{
	unsigned *gid = calloc(jobs->n ? jobs->n : 1, sizeof(unsigned)), threads = 0;

	if (!gid)
		return;
	ub_assign_groups(jobs, gid);
	for (unsigned i = 0; i < jobs->n; i++) {
		ub_report_job_line(out, &jobs->jobs[i], gid[i], engine_name(b, &jobs->jobs[i]));
		threads += jobs->jobs[i].numjobs;
	}
	fprintf(out, "%s\nStarting %u thread%s", VERSION, threads, threads == 1 ? "" : "s");
	if (b->npaths > 1)
		fprintf(out, " over %u paths (policy %s)", b->npaths, ub_policy_name(b->mp.policy));
	fprintf(out, "\n");
	fflush(out);
	free(gid);
}

/* Per-second bw and iops logs (with log_avg_msec the job wrote them itself, iolog.c). */
static void bw_logs(const struct ub_run *run, const struct ub_joblist *jobs)
{
	for (unsigned i = 0; i < run->nres; i++) {
		const struct ub_job *j = NULL;
		char err[600];
		for (unsigned k = 0; k < jobs->n && !j; k++)
			if (!strcmp(jobs->jobs[k].name, run->res[i].name))
				j = &jobs->jobs[k];
		if (!j || j->log_avg_msec)
			continue;
		if (j->bw_log[0] && !ub_write_bw_log(j->bw_log, i, &run->res[i], err, sizeof(err)))
			fprintf(stderr, "utgt-bench: bw log: %s\n", err);
		if (j->iops_log[0] &&
		    !ub_write_iops_log(j->iops_log, i, &run->res[i], err, sizeof(err)))
			fprintf(stderr, "utgt-bench: iops log: %s\n", err);
	}
}

static void report(FILE *out, const struct ub_run *run, const struct ub_bench *b)
{
	if (b->fmt & UB_OUT_NORMAL)
		ub_report_text(out, run, b);
	if (b->fmt & UB_OUT_TERSE)
		ub_report_terse(out, run);
	if (b->fmt & (UB_OUT_JSON | UB_OUT_JSONPLUS))
		ub_report_json(out, run, b);
}

static int run_normal(FILE *out, const struct ub_bench *b)
{
	struct ub_run run;
	int rc;

	if (b->fmt & UB_OUT_NORMAL)
		header(out, b, &b->jobs);
	rc = ub_run_jobs(b, &b->jobs, b->paths, b->npaths, NULL, &run);
	print_errors(&run);
	report(out, &run, b);
	bw_logs(&run, &b->jobs);
	ub_run_free(&run);
	return rc;
}

static int run_cdm(FILE *out, const struct ub_bench *b)
{
	struct ub_run best = {0};
	int rc = 0;

	for (unsigned pass = 0; pass < b->cdm_passes && !ub_stop_requested; pass++) {
		struct ub_run run;
		int r = ub_run_jobs(b, &b->jobs, b->paths, b->npaths, NULL, &run);
		print_errors(&run);
		if (r > rc)
			rc = r;
		if (!best.res) {
			best = run;
			continue;
		}
		/* CrystalDiskMark reports the best of its passes. */
		for (unsigned i = 0; i < run.nres && i < best.nres; i++) {
			int d = run.res[i].rw == UB_RW_WRITE || run.res[i].rw == UB_RW_RANDWRITE;
			if (ub_res_bw(&run.res[i], d) > ub_res_bw(&best.res[i], d)) {
				struct ub_job_res tmp = best.res[i];
				best.res[i] = run.res[i];
				run.res[i] = tmp;
			}
		}
		ub_run_free(&run);
	}
	if (b->fmt & (UB_OUT_JSON | UB_OUT_JSONPLUS | UB_OUT_TERSE))
		report(out, &best, b);
	else
		ub_report_cdm(out, best.res, best.nres,
			      b->npaths ? b->paths[0] : (b->jobs.n ? b->jobs.jobs[0].filename : ""),
			      b->cdm_passes, b->jobs.n ? ub_cdm_test_size(&b->jobs.jobs[0]) : 0, b);
	ub_run_free(&best);
	return rc;
}

static int run_rados(FILE *out, const struct ub_bench *b)
{
	struct ub_rados_state st = {.f = out, .write = true};
	struct ub_run_hooks hooks = {.on_tick = ub_rados_tick, .tick_arg = &st};
	struct ub_joblist seq = {0};
	struct ub_run run;
	uint64_t written;
	int rc;

	st.bs = b->jobs.jobs[0].bs;
	fprintf(out,
		"Maintaining %u concurrent writes of %llu bytes to LU for up to %llu seconds\n",
		b->jobs.jobs[0].iodepth, (unsigned long long)st.bs,
		(unsigned long long)(b->jobs.jobs[0].runtime_ns / 1000000000ull));
	rc = ub_run_jobs(b, &b->jobs, b->paths, b->npaths, &hooks, &run);
	print_errors(&run);
	if (!run.nres) {
		ub_run_free(&run);
		return rc ? rc : 3;
	}
	ub_rados_summary(&st, &run.res[0]);
	written = run.res[0].d[1].bytes;
	ub_run_free(&run);
	if (rc || !written || ub_stop_requested)
		return rc;
	/* rados bench seq: read back what was written, as fast as possible. */
	if (!ub_joblist_add(&seq, &b->jobs.jobs[0]))
		return 3;
	snprintf(seq.jobs[0].name, sizeof(seq.jobs[0].name), "rados-seq");
	seq.jobs[0].rw = UB_RW_READ;
	seq.jobs[0].time_based = false;
	seq.jobs[0].verify = b->jobs.jobs[0].verify;
	memset(&st, 0, sizeof(st));
	st.f = out;
	st.bs = seq.jobs[0].bs;
	hooks.size_override = written;
	fprintf(out, "\n");
	rc = ub_run_jobs(b, &seq, b->paths, b->npaths, &hooks, &run);
	print_errors(&run);
	if (run.nres)
		ub_rados_summary(&st, &run.res[0]);
	ub_run_free(&run);
	ub_joblist_free(&seq);
	return rc;
}

static int run_sweep(FILE *out, const struct ub_bench *b)
{
	struct ub_sweep_row rows[UB_MAX_PATHS];
	struct ub_run_hooks quiet = {.quiet = true};
	char err[600];
	int rc = 0;

	for (unsigned s = 0; s < b->nsweep && !ub_stop_requested; s++) {
		struct ub_run run;
		uint64_t bytes = 0, ios = 0, ns = 0;
		unsigned k = b->sweep[s];
		int r = ub_run_jobs(b, &b->jobs, b->paths, k, &quiet, &run);

		print_errors(&run);
		if (r > rc)
			rc = r;
		for (unsigned g = 0; g < run.ngroups; g++) {
			uint64_t gmax = 0;
			for (unsigned i = 0; i < run.nres; i++) {
				if (run.res[i].groupid != g)
					continue;
				bytes += run.res[i].d[0].bytes + run.res[i].d[1].bytes;
				ios += run.res[i].d[0].ios + run.res[i].d[1].ios;
				if (run.res[i].runtime_ns > gmax)
					gmax = run.res[i].runtime_ns;
			}
			ns += gmax;
		}
		rows[s].paths = k;
		rows[s].failed = r != 0 || !ns;
		rows[s].mib_s = ns ? (double)bytes / 1048576.0 / ((double)ns / 1e9) : 0;
		rows[s].iops = ns ? (double)ios / ((double)ns / 1e9) : 0;
		fprintf(out, "sweep: %u path%s: %.1f MiB/s, %.0f IOPS", k, k == 1 ? "" : "s",
			rows[s].mib_s, rows[s].iops);
		if (run.nres && run.res[0].npaths > 1) {
			uint64_t tot = 0;
			for (unsigned p = 0; p < run.res[0].npaths; p++)
				tot += run.res[0].paths[p].ios[0] + run.res[0].paths[p].ios[1];
			fprintf(out, " (path shares:");
			for (unsigned p = 0; p < run.res[0].npaths; p++)
				fprintf(out, " %u=%.1f%%", p,
					tot ? 100.0 *
						  (double)(run.res[0].paths[p].ios[0] +
							   run.res[0].paths[p].ios[1]) /
						  (double)tot
					    : 0.0);
			fprintf(out, ")");
		}
		fprintf(out, "\n");
		fflush(out);
		ub_run_free(&run);
	}
	ub_report_sweep(out, rows, b->nsweep);
	if (ub_sweep_plot(rows, b->nsweep, b->sweep_plot, err, sizeof(err)))
		fprintf(out, "plot: %s\n", b->sweep_plot);
	else
		fprintf(stderr, "utgt-bench: plot not written: %s\n", err);
	return rc;
}

int main(int argc, char **argv)
{
	struct ub_bench b;
	enum ub_preset preset;
	struct diag d = {0};
	struct sigaction sa = {0};
	FILE *out = stdout;
	int rc;

	ub_bench_defaults(&b);
	if (!ub_cli_parse(argc, argv, &b, &preset, &d)) {
		fprintf(stderr, "utgt-bench: see --help\n");
		ub_bench_free(&b);
		return 2;
	}
	if (b.show_help) {
		ub_cli_usage(stdout);
		ub_bench_free(&b);
		return 0;
	}
	if (b.show_version) {
		printf("%s\n", VERSION);
		ub_bench_free(&b);
		return 0;
	}
	if (b.parse_only) {
		/* fio's --parse-only: the job file is valid (warnings were printed) */
		ub_bench_free(&b);
		return 0;
	}
	if (b.initiator[0])
		b.mp.eng.initiator_name = b.initiator;
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (b.output[0] && !(out = fopen(b.output, "w"))) {
		fprintf(stderr, "utgt-bench: %s: %s\n", b.output, strerror(errno));
		ub_bench_free(&b);
		return 2;
	}
	if (b.nsweep)
		rc = run_sweep(out, &b);
	else if (preset == UB_PRESET_CDM)
		rc = run_cdm(out, &b);
	else if (preset == UB_PRESET_RADOS)
		rc = run_rados(out, &b);
	else
		rc = run_normal(out, &b);
	if (out != stdout)
		fclose(out);
	ub_bench_free(&b);
	return rc;
}
