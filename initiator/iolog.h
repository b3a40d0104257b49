/* fio's per-I/O logs, written while the job runs: write_lat_log (PREFIX_lat/_clat/_slat.N.log)
 * one line per I/O, or the mean of each log_avg_msec window; and, when log_avg_msec is set,
 * write_bw_log / write_iops_log per window (without it those two are written per second
 * after the run, bwlog.c).  Lines: "msec, value, ddir, bs[, offset], prio" as fio 3 has them,
 * latencies in nanoseconds, bandwidth in KiB/s. */
#ifndef UB_IOLOG_H
#define UB_IOLOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "initiator/job.h"

struct ub_iolog_win {
	uint64_t n, bytes;
	double lat, clat, slat;
};

struct ub_iolog {
	FILE *lat, *clat, *slat, *bw, *iops;
	unsigned avg_ms;
	bool with_offset, with_prio;
	uint64_t bs;
	uint64_t win_start_ms;
	struct ub_iolog_win win[UB_NDDIR];
};

/* Opens the files the job asks for (index: fio's job number, from 1).  false with a reason. */
bool ub_iolog_open(struct ub_iolog *l, const struct ub_job *j, unsigned index, char *err,
		   size_t errlen);
void ub_iolog_io(struct ub_iolog *l, uint64_t t_ms, int ddir, uint64_t bs, uint64_t off,
		 unsigned prio, uint64_t slat, uint64_t clat, uint64_t lat);
/* Closes finished windows. */
void ub_iolog_tick(struct ub_iolog *l, uint64_t t_ms);
void ub_iolog_close(struct ub_iolog *l, uint64_t t_ms);

#endif
