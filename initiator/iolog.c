/* Latency, bandwidth and IOPS logs in fio's format. */
#include "initiator/iolog.h"

#include <errno.h>
#include <string.h>

static FILE *open_log(const char *prefix, const char *kind, unsigned index, char *err,
		      size_t errlen, bool *ok)
{
	char path[600];
	FILE *f;

	if (!*ok)
		return NULL;
	snprintf(path, sizeof(path), "%s_%s.%u.log", prefix, kind, index);
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		*ok = false;
	}
	return f;
}

bool ub_iolog_open(struct ub_iolog *l, const struct ub_job *j, unsigned index, char *err,
		   size_t errlen)
{
	bool ok = true;

	memset(l, 0, sizeof(*l));
	l->avg_ms = j->log_avg_msec;
	l->with_offset = j->log_offset;
	l->with_prio = j->log_prio;
	if (j->lat_log[0]) {
		l->lat = open_log(j->lat_log, "lat", index, err, errlen, &ok);
		l->clat = open_log(j->lat_log, "clat", index, err, errlen, &ok);
		l->slat = open_log(j->lat_log, "slat", index, err, errlen, &ok);
	}
	if (l->avg_ms && j->bw_log[0])
		l->bw = open_log(j->bw_log, "bw", index, err, errlen, &ok);
	if (l->avg_ms && j->iops_log[0])
		l->iops = open_log(j->iops_log, "iops", index, err, errlen, &ok);
	if (!ok)
		ub_iolog_close(l, 0);
	return ok;
}

static void line(struct ub_iolog *l, FILE *f, uint64_t t, uint64_t v, int d, uint64_t bs,
		 uint64_t off, unsigned prio)
{
	if (!f)
		return;
	fprintf(f, "%llu, %llu, %d, %llu", (unsigned long long)t, (unsigned long long)v, d,
		(unsigned long long)bs);
	if (l->with_offset)
		fprintf(f, ", %llu", (unsigned long long)off);
	fprintf(f, ", %u\n", l->with_prio ? prio : 0);
}

void ub_iolog_io(struct ub_iolog *l, uint64_t t_ms, int ddir, uint64_t bs, uint64_t off,
		 unsigned prio, uint64_t slat, uint64_t clat, uint64_t lat)
{
	struct ub_iolog_win *w = &l->win[ddir];

	l->bs = bs;
	if (!l->avg_ms) {
		line(l, l->lat, t_ms, lat, ddir, bs, off, prio);
		line(l, l->clat, t_ms, clat, ddir, bs, off, prio);
		line(l, l->slat, t_ms, slat, ddir, bs, off, prio);
		return;
	}
	ub_iolog_tick(l, t_ms);
	w->n++;
	w->bytes += bs;
	w->lat += (double)lat;
	w->clat += (double)clat;
	w->slat += (double)slat;
}

static void flush_window(struct ub_iolog *l, uint64_t t_end)
{
	for (int d = 0; d < UB_NDDIR; d++) {
		struct ub_iolog_win *w = &l->win[d];
		if (!w->n)
			continue;
		line(l, l->lat, t_end, (uint64_t)(w->lat / (double)w->n), d, l->bs, 0, 0);
		line(l, l->clat, t_end, (uint64_t)(w->clat / (double)w->n), d, l->bs, 0, 0);
		line(l, l->slat, t_end, (uint64_t)(w->slat / (double)w->n), d, l->bs, 0, 0);
		line(l, l->bw, t_end, w->bytes * 1000 / 1024 / l->avg_ms, d, l->bs, 0, 0);
		line(l, l->iops, t_end, w->n * 1000 / l->avg_ms, d, l->bs, 0, 0);
		memset(w, 0, sizeof(*w));
	}
}

void ub_iolog_tick(struct ub_iolog *l, uint64_t t_ms)
{
	if (!l->avg_ms)
		return;
	while (t_ms >= l->win_start_ms + l->avg_ms) {
		l->win_start_ms += l->avg_ms;
		flush_window(l, l->win_start_ms);
	}
}

void ub_iolog_close(struct ub_iolog *l, uint64_t t_ms)
{
	FILE **fs[] = {&l->lat, &l->clat, &l->slat, &l->bw, &l->iops};

	if (l->avg_ms) {
		ub_iolog_tick(l, t_ms);
		flush_window(l, t_ms > l->win_start_ms ? t_ms : l->win_start_ms + l->avg_ms);
	}
	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++)
		if (*fs[i]) {
			fclose(*fs[i]);
			*fs[i] = NULL;
		}
}
