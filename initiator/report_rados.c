/* rados bench's output: a row per second ("sec Cur ops started finished avg MB/s cur MB/s
 * last lat avg lat"), a date/min/max/avg latency line and the header every 20 rows, and the
 * closing summary.  MB here is rados's: 1048576 bytes. */
#include "initiator/report.h"

#include <math.h>
#include <sys/time.h>
#include <time.h>

#define MIB 1048576.0

static void stamp(FILE *f, const struct ub_tick *t)
{
	struct timeval tv;
	struct tm tm;
	char buf[64];

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(f, "%s.%06ldmin lat: %g max lat: %g avg lat: %g\n", buf, (long)tv.tv_usec,
		t->min_lat_s, t->max_lat_s, t->avg_lat_s);
}

static void header(FILE *f)
{
	fprintf(f, "   sec Cur ops   started  finished  avg MB/s  cur MB/s  last lat   avg lat\n");
}

void ub_rados_tick(void *arg, const struct ub_tick *t)
{
	struct ub_rados_state *st = arg;
	double cur = (double)t->bytes_sec / MIB;
	double avg = t->sec ? (double)t->bytes_total / MIB / t->sec : 0;

	if (st->rows % 20 == 0) {
		if (st->rows)
			stamp(st->f, t);
		header(st->f);
	}
	st->rows++;
	fprintf(st->f, "%6u %7u %9llu %9llu %9.6g %9.6g %9.6g %9.6g\n", t->sec, t->inflight,
		(unsigned long long)t->started, (unsigned long long)t->finished, avg, cur,
		t->last_lat_s, t->avg_lat_s);
	fflush(st->f);
	if (!st->bw_n || cur < st->bw_min)
		st->bw_min = cur;
	if (!st->bw_n || cur > st->bw_max)
		st->bw_max = cur;
	st->bw_sum += cur;
	st->bw_sq += cur * cur;
	st->bw_n++;
}

void ub_rados_summary(struct ub_rados_state *st, const struct ub_job_res *r)
{
	int d = st->write ? 1 : 0;
	const struct ub_ddir_res *dr = &r->d[d];
	double secs = (double)r->runtime_ns / 1e9;
	double mean = st->bw_n ? st->bw_sum / st->bw_n : 0;
	double var = st->bw_n > 1 ? (st->bw_sq - st->bw_n * mean * mean) / (st->bw_n - 1) : 0;

	if (r->error) {
		fprintf(st->f, "error during benchmark: %s\n", r->errmsg);
		return;
	}
	fprintf(st->f, "Total time run:         %f\n", secs);
	fprintf(st->f, "Total %s made:      %llu\n", st->write ? "writes" : "reads",
		(unsigned long long)dr->ios);
	fprintf(st->f, "%s size:             %llu\n", st->write ? "Write" : "Read",
		(unsigned long long)st->bs);
	fprintf(st->f, "Bandwidth (MB/sec):     %.3f\n",
		secs > 0 ? (double)dr->bytes / MIB / secs : 0);
	fprintf(st->f, "\n");
	if (st->write) {
		fprintf(st->f, "Stddev Bandwidth:       %g\n", var > 0 ? sqrt(var) : 0);
		fprintf(st->f, "Max bandwidth (MB/sec): %g\n", st->bw_max);
		fprintf(st->f, "Min bandwidth (MB/sec): %g\n", st->bw_min);
	}
	fprintf(st->f, "Average IOPS:           %.0f\n", secs > 0 ? (double)dr->ios / secs : 0);
	fprintf(st->f, "Average Latency:        %g\n", dr->lat.mean / 1e9);
	if (st->write)
		fprintf(st->f, "Stddev Latency:         %g\n", ub_lat_stdev(&dr->lat) / 1e9);
	fprintf(st->f, "Max latency:            %g\n", (double)dr->lat.max / 1e9);
	fprintf(st->f, "Min latency:            %g\n", (double)dr->lat.min / 1e9);
}
