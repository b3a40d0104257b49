/* Everything utgt-bench prints about a run: fio-style text, JSON, the CrystalDiskMark table,
 * rados bench's per-second table and summary, the path sweep table, per-second bw logs. */
#ifndef UB_REPORT_H
#define UB_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "initiator/bench.h"
#include "initiator/results.h"

struct ub_run;

/* "name: (g=0): rw=randread, bs=(R) 4096B-4096B, ..., ioengine=iscsi, iodepth=32" */
void ub_report_job_line(FILE *f, const struct ub_job *j, unsigned groupid, const char *engine);
/* One job block (fio 3 layout) including per-path rows, events and verify outcome. */
void ub_report_job_text(FILE *f, const struct ub_job_res *r, uint64_t group_bytes[UB_NDDIR],
			const struct ub_bench *b);
/* "Run status group N (all jobs):" and its READ/WRITE lines. */
void ub_report_group_text(FILE *f, const struct ub_job_res *res, unsigned n, unsigned groupid);
void ub_report_text(FILE *f, const struct ub_run *run, const struct ub_bench *b);
void ub_report_json(FILE *f, const struct ub_run *run, const struct ub_bench *b);
/* fio's terse format, version 3: one line per job. */
void ub_report_terse(FILE *f, const struct ub_run *run);

/* Sample statistics (per-second bandwidth in KiB/s or IOPS). */
struct ub_sample_stats {
	double min, max, avg, stdev;
	unsigned n;
};
void ub_sample_stats(const uint64_t *v, unsigned n, double scale, struct ub_sample_stats *s);
/* Latency unit fio would pick for these numbers: 0 nsec, 1 usec, 2 msec. */
int ub_lat_unit(uint64_t min, uint64_t max, double stdev);

/* CrystalDiskMark table from the 8 results of --preset cdm, in preset order. */
void ub_report_cdm(FILE *f, const struct ub_job_res *res, unsigned n, const char *target,
		   unsigned passes, uint64_t test_bytes, const struct ub_bench *b);

/* rados bench: live rows (on_tick) and the closing summary. */
struct ub_rados_state {
	FILE *f;
	bool write;
	unsigned rows;
	uint64_t bs;
	double bw_min, bw_max, bw_sum, bw_sq;
	unsigned bw_n;
};
void ub_rados_tick(void *arg, const struct ub_tick *t);
void ub_rados_summary(struct ub_rados_state *st, const struct ub_job_res *r);

/* Sweep table and gnuplot PNG. */
struct ub_sweep_row {
	unsigned paths;
	double mib_s, iops;
	bool failed;
};
void ub_report_sweep(FILE *f, const struct ub_sweep_row *rows, unsigned n);
/* Writes <png>.dat and runs gnuplot; false with a reason when gnuplot is missing/fails. */
bool ub_sweep_plot(const struct ub_sweep_row *rows, unsigned n, const char *png, char *err,
		   size_t errlen);

/* fio-format bandwidth log: "<msec>, <KiB/s>, <ddir>, <bs>, 0" per second per direction.
 * Writes <prefix>_bw.<index>.log; false with a reason on I/O error. */
bool ub_write_bw_log(const char *prefix, unsigned index, const struct ub_job_res *r, char *err,
		     size_t errlen);
/* The same with I/Os per second: <prefix>_iops.<index>.log. */
bool ub_write_iops_log(const char *prefix, unsigned index, const struct ub_job_res *r, char *err,
		       size_t errlen);

#endif
