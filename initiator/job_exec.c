/* One job's event loop: keep iodepth commands in flight through multipath (I/O chosen by
 * iogen), pace them (rate, rate_iops, thinktime, flow), measure each, sample once a second,
 * honour ramp_time/runtime/size/io_size/number_ios, flush (fsync=, end_fsync), check verify
 * blocks (inline with verify_backlog, or a read-back pass), steer the depth for
 * latency_target, stop at steady state, then report. */
#include "initiator/bench.h"
#include "initiator/iobuf.h"
#include "initiator/iogen.h"
#include "initiator/iolog.h"
#include "initiator/scsi_info.h"
#include "initiator/verify.h"
#include "initiator/workload.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define SEC  1000000000ull
#define USEC 1000ull

enum slot_kind { K_IO, K_VREAD, K_FLUSH };

struct jrun;

struct slot {
	struct ub_mio mio;
	struct iovec iov;
	uint8_t *buf;
	enum slot_kind kind;
	int ddir;
	uint64_t off, len, chunk;
	uint16_t prio;
	uint64_t t_start, t_sub;
	uint64_t gen;
	struct jrun *jr;
	struct slot *next_free;
};

struct jrun {
	const struct ub_exec *x;
	const struct ub_job *j;
	struct ub_job_res *res;
	struct ub_mpath mp;
	struct ub_iogen gen;
	struct ub_iolog log;
	uint32_t lbs;
	uint64_t first_lba, region, vbs, nchunks;
	struct slot *slots;
	struct slot *free;
	struct ub_iobufs bufs;
	unsigned nslots, depth, inflight;
	/* limits */
	uint64_t issued_bytes, issue_limit, issued_ios;
	bool stopping, measuring, failed, verify_phase, verify_only;
	uint64_t t0, t_measure, t_ramp_end, t_end, next_tick, last_done;
	uint64_t sec_bytes[UB_NDDIR], sec_ios[UB_NDDIR];
	unsigned sec;
	/* the next I/O, chosen but held back by pacing */
	bool have_next;
	struct ub_ionext next;
	/* pacing */
	uint64_t rate_next[UB_NDDIR];
	uint64_t think_until, think_count;
	uint64_t rng;
	/* flushes */
	unsigned writes_since_sync;
	bool flush_due;
	/* verify */
	struct ub_vtrack vt;
	struct ub_vspec vs;
	bool verify;
	uint64_t vgen;
	uint32_t vseed;
	uint64_t vnext;
	uint64_t *backlog; /* written chunks waiting for their inline check */
	unsigned nbacklog;
	bool draining;
	/* latency_target */
	struct ub_hist *lt_hist;
	uint64_t lt_window_end;
	unsigned lt_low, lt_high;
	/* rados bench ticks */
	uint64_t started, finished;
	uint64_t last_lat;
	struct ub_lat tick_lat;
};

/* flow=: one counter per flow_id shared by every job of the run (fio's flow.c). */
static long flow_counter[1024];

static void live_add(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static void fail_job(struct jrun *jr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_job(struct jrun *jr, const char *fmt, ...)
{
	va_list ap;

	jr->failed = true;
	jr->stopping = true;
	if (jr->res->error)
		return;
	jr->res->error = EIO;
	va_start(ap, fmt);
	vsnprintf(jr->res->errmsg, sizeof(jr->res->errmsg), fmt, ap);
	va_end(ap);
}

static unsigned depth_bucket(unsigned depth)
{
	unsigned b = 0;

	while (b < UB_DEPTH_BUCKETS - 1 && (1u << (b + 1)) <= depth)
		b++;
	return b;
}

static const char *path_name(struct jrun *jr, int idx)
{
	return idx >= 0 && (unsigned)idx < jr->mp.n ? jr->mp.path[idx].shown : "?";
}

/* Check every logical block of a chunk just read.  expect 0: generation unknown; lenient:
 * a block without header is fine (a mixed job reading what it has not written yet). */
static void check_chunk(struct jrun *jr, struct slot *s, uint64_t expect, bool lenient)
{
	for (uint64_t k = 0; k < s->len / jr->lbs; k++) {
		uint64_t lba = s->mio.io.lba + k;
		struct ub_vhdr got;
		enum ub_vres r =
		    ub_verify_check_spec(s->buf + k * jr->lbs, jr->lbs, lba, expect, &got, &jr->vs);

		jr->res->verify_blocks++;
		if (r == UB_V_OK || (r == UB_V_BAD_MAGIC && lenient))
			continue;
		jr->res->verify_errors++;
		if (!jr->res->verify_msg[0])
			snprintf(jr->res->verify_msg, sizeof(jr->res->verify_msg),
				 "verify: mismatch at LBA %llu (byte offset %llu) read via path %d "
				 "(%s): %s; header says lba=%llu gen=%llu, expected gen %llu",
				 (unsigned long long)lba, (unsigned long long)lba * jr->lbs,
				 s->mio.path, path_name(jr, s->mio.path), ub_vres_str(r),
				 (unsigned long long)(r == UB_V_BAD_MAGIC ? 0 : got.lba),
				 (unsigned long long)(r == UB_V_BAD_MAGIC ? 0 : got.gen),
				 (unsigned long long)expect);
		if (jr->j->continue_on_error & 4) {
			jr->res->errors_ignored++;
			return;
		}
		fail_job(jr, "%s", jr->res->verify_msg);
		return;
	}
}

static void record(struct jrun *jr, struct slot *s, uint64_t now)
{
	int d = s->ddir;
	struct ub_ddir_res *dr = &jr->res->d[d];
	uint64_t clat = now - s->t_sub, lat = now - s->t_start;

	jr->last_lat = lat;
	ub_lat_add(&jr->tick_lat, lat);
	if (jr->lt_hist)
		ub_hist_add(jr->lt_hist, clat);
	if (!jr->measuring)
		return;
	if (s->kind == K_FLUSH) {
		ub_lat_add(&jr->res->sync_lat, lat);
		ub_hist_add(jr->res->sync_hist, lat);
		return;
	}
	dr->ios++;
	dr->bytes += s->len;
	ub_lat_add(&dr->slat, s->t_sub - s->t_start);
	ub_lat_add(&dr->clat, clat);
	ub_lat_add(&dr->lat, lat);
	ub_hist_add(dr->clat_hist, clat);
	jr->sec_bytes[d] += s->len;
	jr->sec_ios[d]++;
	ub_iolog_io(&jr->log, (now - jr->t_measure) / 1000000, d, s->len, s->off, s->prio,
		    s->t_sub - s->t_start, clat, lat);
	if (jr->x->live) {
		live_add(&jr->x->live->ios[d < 2 ? d : 1], 1);
		live_add(&jr->x->live->bytes[d < 2 ? d : 1], s->len);
	}
}

static bool error_ignored(struct jrun *jr, struct slot *s)
{
	unsigned cls = s->ddir == UB_DD_READ ? 1 : 2;

	if (!(jr->j->continue_on_error & cls))
		return false;
	jr->res->errors_ignored++;
	return true;
}

static void io_done(struct ub_mio *mio)
{
	struct slot *s = (struct slot *)((char *)mio - offsetof(struct slot, mio));
	struct jrun *jr = s->jr;
	uint64_t now = mio->done_ns ? mio->done_ns : ub_now_ns();
	bool write = s->ddir == UB_DD_WRITE && s->kind == K_IO;

	jr->inflight--;
	jr->finished++;
	jr->last_done = now;
	if (jr->verify && s->kind != K_FLUSH)
		jr->vt.busy[s->chunk] = 0;
	if (mio->io.result != UB_IO_OK) {
		if (jr->verify && write)
			jr->vt.gen[s->chunk] = 0;
		if (!error_ignored(jr, s))
			fail_job(jr, "%s error on LBA %llu (+%u blocks): %s",
				 s->kind == K_FLUSH	   ? "flush"
				 : s->ddir == UB_DD_TRIM ? "trim"
				 : write		   ? "write"
							   : "read",
				 (unsigned long long)mio->io.lba, mio->io.nblocks,
				 mio->errmsg[0] ? mio->errmsg : "I/O error");
	} else if (jr->verify && write) {
		jr->vt.gen[s->chunk] = s->gen;
		/* room for verify_backlog entries plus what was in flight when it filled */
		if (jr->j->verify_backlog && jr->nbacklog < jr->j->verify_backlog + jr->nslots)
			jr->backlog[jr->nbacklog++] = s->chunk;
		if (jr->j->verify_backlog && jr->nbacklog >= jr->j->verify_backlog)
			jr->draining = true;
	} else if (jr->verify && s->ddir == UB_DD_READ) {
		uint64_t expect = jr->vt.gen[s->chunk];
		check_chunk(jr, s, expect,
			    !expect && ub_rw_writes(jr->j) && !jr->verify_phase && !jr->verify_only);
	}
	if (s->kind != K_VREAD && !jr->verify_phase)
		record(jr, s, now);
	s->next_free = jr->free;
	jr->free = s;
}

/* ---- choosing the next I/O ---- */

static uint16_t pick_prio(struct jrun *jr, uint64_t len, int ddir)
{
	const struct ub_job *j = jr->j;

	for (unsigned i = 0; i < j->nprio_split; i++) {
		const struct ub_prio_split *e = &j->prio_split[i];
		if (e->ddir != ddir || e->bs != len)
			continue;
		if (e->pct && ub_rand64(&jr->rng) % 100 < e->pct)
			return (uint16_t)((e->cls >= 0 ? e->cls : j->cmdprio_class) << 13 |
					  (e->level >= 0 ? e->level : j->cmdprio));
		break;
	}
	if (!j->nprio_split && j->cmdprio_pct && ub_rand64(&jr->rng) % 100 < j->cmdprio_pct)
		return (uint16_t)(j->cmdprio_class << 13 | j->cmdprio);
	if (j->prioclass >= 0 || j->prio >= 0)
		return (uint16_t)((j->prioclass >= 0 ? j->prioclass : 2) << 13 |
				  (j->prio >= 0 ? j->prio : 4));
	return 0;
}

/* With verify, never two commands on one chunk at once: a read must see one definite write. */
static bool choose(struct jrun *jr)
{
	if (jr->verify_phase || jr->verify_only) {
		while (jr->vnext < jr->nchunks && !jr->verify_only && !jr->vt.gen[jr->vnext])
			jr->vnext++;
		if (jr->vnext >= jr->nchunks)
			return false;
		jr->next.ddir = UB_DD_READ;
		jr->next.off = jr->vnext++ * jr->vbs;
		jr->next.len = jr->vbs;
		return true;
	}
	if (jr->draining) {
		while (jr->nbacklog) {
			uint64_t c = jr->backlog[--jr->nbacklog];
			if (jr->vt.busy[c] || !jr->vt.gen[c])
				continue;
			jr->next.ddir = UB_DD_READ;
			jr->next.off = c * jr->vbs;
			jr->next.len = jr->vbs;
			return true;
		}
		jr->draining = false;
	}
	for (unsigned tries = 0; tries < 4096; tries++) {
		ub_iogen_next(&jr->gen, &jr->next);
		if (!jr->verify || !jr->vt.busy[jr->next.off / jr->vbs])
			return true;
	}
	return false;
}

/* ---- pacing: rate, thinktime, flow ---- */

static uint64_t interval_ns(struct jrun *jr, int d, uint64_t len)
{
	const struct ub_job *j = jr->j;
	double ns = 0;

	if (j->rate_iops[d])
		ns = 1e9 / (double)j->rate_iops[d];
	if (j->rate[d]) {
		double b = 1e9 * (double)len / (double)j->rate[d];
		if (b > ns)
			ns = b;
	}
	if (ns > 0 && j->rate_poisson) /* exponential gaps with the same mean */
		ns *= -log(1.0 - ub_iogen_unit(&jr->rng) * 0.999999);
	return (uint64_t)ns;
}

/* May the chosen I/O go now?  Otherwise *wake says when to look again. */
static bool paced(struct jrun *jr, uint64_t now, uint64_t *wake)
{
	const struct ub_job *j = jr->j;
	int d = jr->next.ddir;

	if (jr->verify_phase || jr->verify_only)
		return true;
	if (jr->think_until > now) {
		*wake = jr->think_until;
		return false;
	}
	if (jr->rate_next[d] > now) {
		*wake = jr->rate_next[d];
		return false;
	}
	if (j->flow) {
		long c = __atomic_load_n(&flow_counter[j->flow_id], __ATOMIC_RELAXED);
		if ((j->flow > 0 ? c : -c) > (long)j->flow_watermark) {
			*wake = now + (j->flow_sleep_us ? j->flow_sleep_us * USEC : 1000 * USEC);
			return false;
		}
		__atomic_fetch_add(&flow_counter[j->flow_id], j->flow, __ATOMIC_RELAXED);
	}
	return true;
}

static void after_issue(struct jrun *jr, uint64_t now)
{
	const struct ub_job *j = jr->j;
	int d = jr->next.ddir;
	uint64_t gap = interval_ns(jr, d, jr->next.len);

	if (gap)
		jr->rate_next[d] = (jr->rate_next[d] > now - gap ? jr->rate_next[d] : now) + gap;
	if (j->thinktime_us && ++jr->think_count >= (j->thinktime_blocks ? j->thinktime_blocks : 1)) {
		uint64_t spin = j->thinktime_spin_us < j->thinktime_us ? j->thinktime_spin_us
								       : j->thinktime_us;
		uint64_t end = now + spin * USEC;
		jr->think_count = 0;
		/* thinktime_spin burns the CPU, the rest of thinktime sleeps */
		while (spin && ub_now_ns() < end)
			;
		jr->think_until = now + j->thinktime_us * USEC;
	}
	if (d == UB_DD_WRITE && (j->fsync || j->fdatasync) &&
	    ++jr->writes_since_sync >= (j->fsync ? j->fsync : j->fdatasync)) {
		jr->writes_since_sync = 0;
		jr->flush_due = true;
	}
	if (jr->verify && j->verify_backlog && jr->nbacklog >= j->verify_backlog)
		jr->draining = true;
}

/* ---- issuing ---- */

static void fill_write(struct jrun *jr, struct slot *s)
{
	const struct ub_job *j = jr->j;

	if (jr->verify) {
		s->gen = ++jr->vgen;
		for (uint64_t k = 0; k < s->len / jr->lbs; k++)
			ub_verify_fill_spec(s->buf + k * jr->lbs, jr->lbs, s->mio.io.lba + k, s->gen,
					    jr->vseed, &jr->vs);
		return;
	}
	if (j->dedupe_pct && ub_rand64(&jr->rng) % 100 < j->dedupe_pct) {
		/* a buffer seen before: the slot keeps its last contents, re-sent as is */
		return;
	}
	if (!j->buffer_pattern_len && !j->zero_buffers && !j->buffer_compress_pct) {
		/* fresh incompressible data in the first 8 bytes of each 4 KiB keeps blocks
		 * unique without refilling the whole buffer */
		for (uint64_t k = 0; k + 8 <= s->len; k += 4096) {
			uint64_t v = ub_rand64(&jr->rng);
			memcpy(s->buf + k, &v, 8);
		}
	}
}

static void prepare_sg(struct jrun *jr, struct slot *s)
{
	struct ub_io *io = &s->mio.io;
	uint32_t nb = (uint32_t)(s->len / jr->lbs);
	int m = jr->j->sg_write_mode;

	io->cdb_len = 16;
	if (m == UB_SG_SAME_NDOB) {
		ub_cdb_write_same16(io->cdb, io->lba, nb, true);
		io->xfer_len = 0;
		return;
	}
	ub_cdb_verify16(io->cdb, io->lba, nb, m == UB_SG_VERIFY_00 ? 0 : m == UB_SG_VERIFY_01 ? 1 : 3);
	io->xfer_len = m == UB_SG_VERIFY_00 ? 0 : m == UB_SG_VERIFY_11 ? jr->lbs : (uint32_t)s->len;
	s->iov.iov_len = io->xfer_len;
	io->write = io->xfer_len != 0;
}

static void submit_slot(struct jrun *jr, struct slot *s)
{
	s->t_start = ub_now_ns();
	ub_mpath_submit(&jr->mp, &s->mio);
	s->t_sub = ub_now_ns();
	jr->inflight++;
	jr->started++;
}

static struct slot *take_slot(struct jrun *jr)
{
	struct slot *s = jr->free;

	if (!s)
		return NULL;
	jr->free = s->next_free;
	memset(&s->mio, 0, sizeof(s->mio));
	s->mio.done = io_done;
	s->iov.iov_base = s->buf;
	return s;
}

static bool issue_flush(struct jrun *jr)
{
	struct slot *s = take_slot(jr);

	if (!s)
		return false;
	s->kind = K_FLUSH;
	s->ddir = UB_DD_WRITE;
	s->len = 0;
	s->off = 0;
	s->prio = 0;
	s->mio.io.op = UB_OP_FLUSH;
	s->mio.io.lba = jr->first_lba;
	submit_slot(jr, s);
	return true;
}

static void issue(struct jrun *jr)
{
	struct slot *s = take_slot(jr);
	const struct ub_ionext *n = &jr->next;
	bool vread = jr->verify_phase || jr->verify_only || jr->draining;

	s->kind = vread && !jr->verify_only ? K_VREAD : K_IO;
	s->ddir = n->ddir;
	s->off = n->off;
	s->len = n->len;
	s->chunk = jr->verify ? n->off / jr->vbs : 0;
	s->prio = pick_prio(jr, n->len, n->ddir);
	if (jr->verify)
		jr->vt.busy[s->chunk] = 1;
	s->iov.iov_len = n->len;
	s->mio.io.write = n->ddir == UB_DD_WRITE;
	s->mio.io.op = n->ddir == UB_DD_TRIM ? UB_OP_TRIM : UB_OP_RW;
	s->mio.io.fua = jr->j->sync_writes && n->ddir == UB_DD_WRITE;
	s->mio.io.ioprio = s->prio;
	s->mio.io.lba = jr->first_lba + n->off / jr->lbs;
	s->mio.io.nblocks = (uint32_t)(n->len / jr->lbs);
	s->mio.io.iov = &s->iov;
	s->mio.io.iovcnt = 1;
	if (s->mio.io.write)
		fill_write(jr, s);
	if (s->mio.io.write && jr->j->sg_write_mode != UB_SG_WRITE)
		prepare_sg(jr, s);
	submit_slot(jr, s);
	if (s->kind == K_IO && !jr->verify_only) {
		/* inline verify reads do not use the job's size, io_size or number_ios */
		jr->issued_bytes += n->len;
		jr->issued_ios++;
	}
	if (s->kind == K_IO && !jr->verify_phase) {
		jr->res->issued[n->ddir]++;
		jr->res->depth[depth_bucket(jr->inflight)]++;
		if (!jr->res->bs_min[n->ddir] || n->len < jr->res->bs_min[n->ddir])
			jr->res->bs_min[n->ddir] = n->len;
		if (n->len > jr->res->bs_max[n->ddir])
			jr->res->bs_max[n->ddir] = n->len;
	}
}

static bool can_issue(struct jrun *jr)
{
	const struct ub_job *j = jr->j;

	if (jr->stopping)
		return false;
	if (jr->verify_phase || jr->verify_only)
		return jr->vnext < jr->nchunks;
	if (jr->draining)
		return true;
	if (j->number_ios && jr->issued_ios >= j->number_ios)
		return false;
	return !jr->issue_limit || jr->issued_bytes < jr->issue_limit;
}

/* ---- once a second ---- */

static void check_rate_min(struct jrun *jr)
{
	const struct ub_job *j = jr->j;

	for (int d = 0; d < UB_NDDIR; d++) {
		if (j->rate_min[d] && jr->sec_bytes[d] < j->rate_min[d])
			fail_job(jr, "rate_min: %s bandwidth %llu B/s below the minimum %llu B/s",
				 d == 0 ? "read" : d == 1 ? "write" : "trim",
				 (unsigned long long)jr->sec_bytes[d],
				 (unsigned long long)j->rate_min[d]);
		if (j->rate_iops_min[d] && jr->sec_ios[d] < j->rate_iops_min[d])
			fail_job(jr, "rate_iops_min: %s %llu IOPS below the minimum %llu",
				 d == 0 ? "read" : d == 1 ? "write" : "trim",
				 (unsigned long long)jr->sec_ios[d],
				 (unsigned long long)j->rate_iops_min[d]);
	}
}

/* Steady state over the last ss_dur seconds: deviation from the mean, or the slope of a
 * least-squares line, within the limit (a percentage of the mean when given with '%'). */
static void check_steady(struct jrun *jr)
{
	const struct ub_job *j = jr->j;
	unsigned w = (unsigned)(j->ss_dur_ns / SEC), n = jr->sec;
	bool bw = j->ss_mode >= 3, slope = j->ss_mode == 2 || j->ss_mode == 4;
	double v[4096], mean = 0, crit = 0;

	if (!w || n < w || w > 4096 || (uint64_t)n * SEC < j->ss_ramp_ns + j->ss_dur_ns)
		return;
	for (unsigned i = 0; i < w; i++) {
		unsigned s = n - w + i;
		v[i] = 0;
		for (int d = 0; d < UB_NDDIR; d++)
			v[i] += (double)(bw ? jr->res->d[d].sec_bytes[s] : jr->res->d[d].sec_ios[s]);
		mean += v[i];
	}
	mean /= w;
	if (slope) {
		double sx = 0, sxy = 0, sxx = 0;
		for (unsigned i = 0; i < w; i++) {
			sx += i;
			sxy += i * v[i];
			sxx += (double)i * i;
		}
		crit = fabs((w * sxy - sx * mean * w) / (w * sxx - sx * sx));
	} else {
		for (unsigned i = 0; i < w; i++)
			if (fabs(v[i] - mean) > crit)
				crit = fabs(v[i] - mean);
	}
	if (j->ss_pct ? crit <= j->ss_limit / 100.0 * mean : crit <= j->ss_limit) {
		jr->res->ss_attained = true;
		snprintf(jr->res->ss_msg, sizeof(jr->res->ss_msg),
			 "%s attained after %us: %s %.3f (limit %.3f%s), mean %.1f",
			 bw ? "bw" : "iops", n, slope ? "slope" : "max deviation", crit,
			 j->ss_limit, j->ss_pct ? "%" : "", mean);
		jr->stopping = true;
	}
}

static void tick(struct jrun *jr)
{
	jr->sec++;
	for (int d = 0; d < UB_NDDIR; d++)
		ub_res_add_sec(&jr->res->d[d], jr->sec_bytes[d], jr->sec_ios[d]);
	if (jr->sec > 1)
		check_rate_min(jr);
	if (jr->j->ss_mode)
		check_steady(jr);
	if (jr->x->on_tick) {
		struct ub_tick t = {
		    .sec = jr->sec,
		    .inflight = jr->inflight,
		    .started = jr->started,
		    .finished = jr->finished,
		    .bytes_total = jr->res->d[0].bytes + jr->res->d[1].bytes,
		    .bytes_sec = jr->sec_bytes[0] + jr->sec_bytes[1],
		    .last_lat_s = (double)jr->last_lat / 1e9,
		    .avg_lat_s = jr->tick_lat.mean / 1e9,
		    .min_lat_s = (double)jr->tick_lat.min / 1e9,
		    .max_lat_s = (double)jr->tick_lat.max / 1e9,
		};
		jr->x->on_tick(jr->x->tick_arg, &t);
	}
	memset(jr->sec_bytes, 0, sizeof(jr->sec_bytes));
	memset(jr->sec_ios, 0, sizeof(jr->sec_ios));
	jr->next_tick += SEC;
}

/* latency_target: fio's search between depth 1 and iodepth, one window at a time. */
static void latency_window(struct jrun *jr, uint64_t now)
{
	const struct ub_job *j = jr->j;
	uint64_t p;
	bool ok;

	if (!jr->lt_hist || now < jr->lt_window_end)
		return;
	jr->lt_window_end = now + j->latency_window_ns;
	if (!jr->lt_hist->total)
		return;
	p = ub_hist_percentile(jr->lt_hist, j->latency_percentile);
	ok = p <= j->latency_target_ns;
	memset(jr->lt_hist, 0, sizeof(*jr->lt_hist));
	if (ok)
		jr->lt_low = jr->depth;
	else
		jr->lt_high = jr->depth > 1 ? jr->depth - 1 : 1;
	if (jr->lt_high < jr->lt_low)
		jr->lt_high = jr->lt_low;
	jr->depth = ok ? (jr->depth + jr->lt_high + 1) / 2 : (jr->depth + jr->lt_low) / 2;
	if (jr->depth < 1)
		jr->depth = 1;
	jr->res->lat_depth = jr->depth;
	jr->res->lat_target_met = ok;
}

static void start_measuring(struct jrun *jr, uint64_t now)
{
	jr->measuring = true;
	jr->t_measure = now;
	/* runtime counts from the end of the ramp as it really happened */
	if (jr->j->runtime_ns)
		jr->t_end = now + jr->j->runtime_ns;
	jr->next_tick = now + SEC;
	jr->started = jr->finished = 0;
	memset(&jr->tick_lat, 0, sizeof(jr->tick_lat));
	for (int d = 0; d < UB_NDDIR; d++)
		ub_ddir_reset(&jr->res->d[d]);
	memset(&jr->res->sync_lat, 0, sizeof(jr->res->sync_lat));
	memset(jr->res->depth, 0, sizeof(jr->res->depth));
	memset(jr->res->submit, 0, sizeof(jr->res->submit));
	memset(jr->res->complete, 0, sizeof(jr->res->complete));
	memset(jr->res->issued, 0, sizeof(jr->res->issued));
	ub_mpath_reset_stats(&jr->mp);
}

/* fio's iodepth_submit/complete buckets: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64 */
static unsigned batch_bucket(unsigned n)
{
	unsigned b = 0;

	if (!n)
		return 0;
	for (unsigned lim = 4; b < 5 && n > lim; lim *= 2)
		b++;
	return n > 64 ? 6 : b + 1;
}

static void run_loop(struct jrun *jr)
{
	for (;;) {
		uint64_t now = ub_now_ns(), wake = 0;
		unsigned batch = 0, reaped;
		int ms;

		if (jr->flush_due && jr->free && !jr->stopping && issue_flush(jr))
			jr->flush_due = false;
		while (jr->inflight < jr->depth && jr->free && can_issue(jr)) {
			if (!jr->have_next && !(jr->have_next = choose(jr)))
				break;
			if (!paced(jr, now, &wake))
				break;
			issue(jr);
			batch++;
			after_issue(jr, now);
			jr->have_next = false;
			if (jr->flush_due && jr->free && issue_flush(jr))
				jr->flush_due = false;
		}
		if (!jr->inflight && !can_issue(jr))
			break;
		if (!jr->inflight && !jr->free) /* cannot happen; guards a silent spin */
			break;
		ms = 100;
		if (jr->measuring && jr->next_tick > now && (jr->next_tick - now) / 1000000 < 100)
			ms = (int)((jr->next_tick - now) / 1000000);
		if (wake && wake > now && (wake - now) / 1000000 < (uint64_t)ms)
			ms = (int)((wake - now) / 1000000);
		if (wake && wake <= now + 1000000 && !jr->inflight) {
			struct timespec ts = {0, (long)(wake > now ? wake - now : 0)};
			nanosleep(&ts, NULL);
			ms = 0;
		}
		if (batch && jr->measuring && !jr->verify_phase)
			jr->res->submit[batch_bucket(batch)]++;
		reaped = ub_mpath_poll(&jr->mp, ms);
		if (reaped && jr->measuring && !jr->verify_phase)
			jr->res->complete[batch_bucket(reaped)]++;
		now = ub_now_ns();
		if (jr->verify_phase)
			continue;
		if (!jr->measuring && now >= jr->t_ramp_end)
			start_measuring(jr, now);
		while (jr->measuring && now >= jr->next_tick && !jr->stopping &&
		       (!jr->t_end || jr->next_tick <= jr->t_end))
			tick(jr);
		ub_iolog_tick(&jr->log, jr->measuring ? (now - jr->t_measure) / 1000000 : 0);
		latency_window(jr, now);
		if (jr->t_end && now >= jr->t_end)
			jr->stopping = true;
		if (jr->x->stop && *jr->x->stop)
			jr->stopping = true;
	}
}

static bool setup_region(struct jrun *jr, char *err, size_t errlen)
{
	const struct ub_job *j = jr->j;
	uint64_t cap = jr->mp.nblocks * jr->lbs, size, off = j->offset;

	if (j->offset_pct)
		off = cap * j->offset_pct / 100 / jr->lbs * jr->lbs;
	off += j->offset_increment * jr->x->clone;
	if (off % jr->lbs || off >= cap) {
		snprintf(err, errlen,
			 "offset=%llu is not aligned to %u or beyond the LU (%llu bytes)",
			 (unsigned long long)off, jr->lbs, (unsigned long long)cap);
		return false;
	}
	size = j->size_pct ? cap * j->size_pct / 100 : j->size;
	if (j->fill_device)
		size = 0;
	if (jr->x->size_override)
		size = jr->x->size_override;
	if (!size || size > cap - off) {
		if (size > cap - off)
			snprintf(jr->res->note, sizeof(jr->res->note),
				 "size=%llu capped to the LU's %llu bytes",
				 (unsigned long long)size, (unsigned long long)(cap - off));
		size = cap - off;
	}
	/* Verifying clones get their own slice: two writers on one block cannot be checked. */
	if (j->verify && j->numjobs > 1 && !j->offset_increment) {
		size /= j->numjobs;
		off += size / j->bs * j->bs * jr->x->clone;
	}
	size -= size % jr->lbs;
	jr->region = size;
	jr->first_lba = off / jr->lbs;
	if (!ub_iogen_init(&jr->gen, j, size, jr->lbs,
			   j->randseed_set ? j->randseed
			   : j->randrepeat ? 0x5eed0000ull + jr->x->clone
					   : ub_now_ns() ^ (uint64_t)getpid(),
			   err, errlen))
		return false;
	jr->vbs = j->bs;
	jr->nchunks = size / j->bs;
	if (j->io_size)
		jr->issue_limit = j->io_size;
	else
		jr->issue_limit = j->time_based ? 0 : size * j->loops;
	if (jr->x->size_override && !j->time_based)
		jr->issue_limit = size;
	return true;
}

static bool setup_verify(struct jrun *jr, char *err, size_t errlen)
{
	const struct ub_job *j = jr->j;

	jr->verify = j->verify != UB_VERIFY_NONE;
	jr->vs.alg = j->verify;
	jr->vs.pattern = j->verify_pattern;
	jr->vs.plen = j->verify_pattern_len;
	if (!jr->verify)
		return true;
	if (ub_rw_trims(j)) {
		snprintf(err, errlen, "verify with trims is not supported");
		return false;
	}
	if (j->bs % jr->lbs || j->rw_skip % (int64_t)j->bs || jr->lbs < ub_verify_min_block(&jr->vs)) {
		snprintf(err, errlen,
			 "verify needs bs and rw offsets in whole blocks of %llu, and LU blocks of "
			 "at least %u bytes",
			 (unsigned long long)j->bs, ub_verify_min_block(&jr->vs));
		return false;
	}
	/* 9 bytes of state per chunk: past 2^27 chunks (1.1 GiB of state) ask for a smaller
	 * region rather than thrash. */
	if (jr->nchunks > (1ull << 27)) {
		snprintf(err, errlen,
			 "verify over %llu blocks of %llu bytes needs too much state; give a "
			 "smaller size= or a larger bs=",
			 (unsigned long long)jr->nchunks, (unsigned long long)j->bs);
		return false;
	}
	if (!ub_vtrack_init(&jr->vt, jr->nchunks) ||
	    (j->verify_backlog &&
	     !(jr->backlog = calloc(j->verify_backlog + j->iodepth + 1, sizeof(uint64_t))))) {
		snprintf(err, errlen, "out of memory for verify state");
		return false;
	}
	jr->verify_only = j->verify_only;
	return true;
}

/* The slots and their buffers, placed as fio places its io_us' (initiator/iobuf.c). */
static bool setup_slots(struct jrun *jr, char *err, size_t errlen)
{
	const struct ub_job *j = jr->j;
	uint64_t seed = 1;

	jr->nslots = j->iodepth + 1; /* one spare for a flush */
	jr->slots = calloc(jr->nslots, sizeof(*jr->slots));
	if (!jr->slots) {
		snprintf(err, errlen, "out of memory for %u I/O slots", jr->nslots);
		return false;
	}
	if (!ub_iobufs_alloc(&jr->bufs, jr->nslots, j->bs, j->mem, j->direct, j->mem_align, err,
			     errlen))
		return false;
	for (unsigned i = 0; i < jr->nslots; i++) {
		struct slot *s = &jr->slots[i];
		s->buf = ub_iobufs_at(&jr->bufs, i);
		/* Write payload: incompressible unless a pattern, zeros or a compressible share
		 * are asked for (buffer_compress_percentage: that share of each buffer zeroed). */
		for (uint64_t k = 0; k + 8 <= j->bs; k += 8) {
			uint64_t v = ub_rand64(&seed);
			memcpy(s->buf + k, &v, 8);
		}
		if (j->zero_buffers)
			memset(s->buf, 0, j->bs);
		if (j->buffer_pattern_len)
			for (uint64_t k = 0; k < j->bs; k++)
				s->buf[k] = j->buffer_pattern[k % j->buffer_pattern_len];
		if (j->buffer_compress_pct)
			memset(s->buf, 0, j->bs * j->buffer_compress_pct / 100);
		s->jr = jr;
		s->next_free = jr->free;
		jr->free = s;
	}
	return true;
}

/* Per-path counters of the measured phase (before any verify read-back). */
static void collect_paths(struct jrun *jr)
{
	struct ub_job_res *r = jr->res;

	r->npaths = jr->mp.n;
	for (unsigned i = 0; i < jr->mp.n; i++) {
		struct ub_path *p = &jr->mp.path[i];
		struct ub_path_res *pr = &r->paths[i];
		snprintf(pr->url, sizeof(pr->url), "%s", p->shown);
		for (int d = 0; d < 2; d++) {
			pr->ios[d] = p->st.ios[d];
			pr->bytes[d] = p->st.bytes[d];
			pr->lat_ns[d] = p->st.lat_ns[d];
		}
	}
}

/* Path states, failure counters and events at the very end. */
static void collect_end(struct jrun *jr)
{
	struct ub_job_res *r = jr->res;

	for (unsigned i = 0; i < jr->mp.n; i++) {
		struct ub_path *p = &jr->mp.path[i];
		struct ub_path_res *pr = &r->paths[i];
		snprintf(pr->state, sizeof(pr->state), "%s", ub_mp_state_str(p->state));
		pr->alua = p->alua;
		pr->failures = p->st.failures;
		pr->reconnects = p->st.reconnects;
		pr->retried = p->st.retried;
	}
	if (jr->mp.nev) {
		r->events = malloc(jr->mp.nev * sizeof(*r->events));
		if (r->events) {
			memcpy(r->events, jr->mp.ev, jr->mp.nev * sizeof(*r->events));
			r->nevents = jr->mp.nev;
		}
	}
	r->retries = jr->mp.retries;
	r->failovers = jr->mp.failovers;
	snprintf(r->lu, sizeof(r->lu), "%s", jr->mp.have_ident ? jr->mp.ident_str : "");
	r->lu_bs = jr->lbs;
	r->lu_blocks = jr->mp.nblocks;
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * SEC + (uint64_t)tv.tv_usec * 1000;
}

static void final_flush(struct jrun *jr)
{
	if (!jr->j->end_fsync || jr->failed || !ub_rw_writes(jr->j))
		return;
	if (issue_flush(jr))
		while (jr->inflight)
			ub_mpath_poll(&jr->mp, 100);
}

static int open_paths(struct jrun *jr, const struct ub_exec *x, char *err, size_t errlen)
{
	const struct ub_job *j = x->job;
	struct ub_mpath_cfg cfg = x->bench->mp;
	const struct ub_engine *eng;
	char note[256];
	char *fname[1];
	char *const *targets = x->targets;
	unsigned ntargets = x->ntargets;

	if (!ntargets) {
		fname[0] = (char *)j->filename;
		targets = fname;
		ntargets = 1;
	}
	eng = ub_engine_resolve(j->ioengine, targets[0], note, sizeof(note), err, errlen);
	if (!eng)
		return EINVAL;
	snprintf(jr->res->engine, sizeof(jr->res->engine), "%s", eng->name);
	if (note[0])
		snprintf(jr->res->note, sizeof(jr->res->note), "%s", note);
	if (j->sg_write_mode != UB_SG_WRITE && eng->native_ops) {
		snprintf(err, errlen,
			 "sg_write_mode needs a SCSI engine (iscsi:// or srp: filename), not %s",
			 eng->name);
		return EINVAL;
	}
	cfg.eng.direct = j->direct;
	cfg.eng.queue_depth = j->iodepth < 4096 ? j->iodepth * 2 + 2 : 8194;
	cfg.eng.iodepth = j->iodepth;
	cfg.eng.max_io_bytes = j->bs; /* the largest of any direction */
	cfg.eng.sqpoll = j->sqthread_poll;
	cfg.eng.sqpoll_cpu = j->sqthread_poll_cpu;
	cfg.eng.registerfiles = j->registerfiles;
	cfg.eng.nonvectored = j->nonvectored;
	cfg.eng.submit_batch = j->iodepth_batch;
	cfg.eng.null_size = j->size ? j->size : j->io_size;
	if (!ub_mpath_open(&jr->mp, eng, &cfg, targets, ntargets, err, errlen))
		return EHOSTUNREACH;
	if (x->bench->filename_check[0] &&
	    !ub_mpath_same_lu(&jr->mp, x->bench->filename_check, err, errlen))
		return EINVAL;
	return 0;
}

int ub_job_exec(const struct ub_exec *x, struct ub_job_res *res)
{
	const struct ub_job *j = x->job;
	struct jrun *jr = calloc(1, sizeof(*jr));
	char err[600];
	struct rusage ru0, ru1;
	uint64_t now;
	int rc;

	if (!jr) {
		res->error = ENOMEM;
		snprintf(res->errmsg, sizeof(res->errmsg), "out of memory");
		return -1;
	}
	getrusage(RUSAGE_THREAD, &ru0);
	jr->x = x;
	jr->j = j;
	jr->res = res;
	jr->rng = 0x9e3779b97f4a7c15ull ^ x->clone;
	snprintf(res->name, sizeof(res->name), "%s", j->name);
	res->groupid = x->groupid;
	res->rw = j->rw;
	res->bs = j->bs;
	res->iodepth = j->iodepth;
	res->group_reporting = j->group_reporting;
	res->verify = j->verify != UB_VERIFY_NONE;
	res->verify_alg = (int)j->verify;
	snprintf(res->options, sizeof(res->options), "%s", j->given);
	res->lat_target_ns = j->latency_target_ns;
	res->lat_window_ns = j->latency_window_ns;
	res->lat_percentile = j->latency_percentile;
	if (j->npercentiles) {
		res->pcts = j->percentiles;
		res->npcts = j->npercentiles;
	}
	rc = open_paths(jr, x, err, sizeof(err));
	if (rc) {
		res->error = rc;
		snprintf(res->errmsg, sizeof(res->errmsg), "%.500s", err);
		if (rc == EINVAL)
			ub_mpath_close(&jr->mp);
		free(jr);
		return -1;
	}
	jr->lbs = jr->mp.block_size;
	if (!setup_region(jr, err, sizeof(err)) || !setup_verify(jr, err, sizeof(err))) {
		res->error = EINVAL;
		snprintf(res->errmsg, sizeof(res->errmsg), "job %.100s: %.380s", j->name, err);
		goto out;
	}
	jr->vseed = (uint32_t)(ub_now_ns() ^ (uint64_t)getpid());
	if (!setup_slots(jr, err, sizeof(err))) {
		res->error = ENOMEM;
		snprintf(res->errmsg, sizeof(res->errmsg), "job %.100s: %.380s", j->name, err);
		goto out;
	}
	if (!ub_iolog_open(&jr->log, j, x->log_index, err, sizeof(err))) {
		res->error = EINVAL;
		snprintf(res->errmsg, sizeof(res->errmsg), "%.500s", err);
		goto out;
	}
	jr->depth = j->iodepth;
	if (j->latency_target_ns) {
		jr->lt_hist = calloc(1, sizeof(*jr->lt_hist));
		if (!jr->lt_hist)
			goto oom;
		jr->lt_low = 1;
		jr->lt_high = j->iodepth;
		res->lat_depth = jr->depth;
	}
	now = ub_now_ns();
	jr->t0 = now;
	jr->t_ramp_end = now + j->ramp_ns;
	jr->t_end = j->runtime_ns ? jr->t_ramp_end + j->runtime_ns : 0;
	jr->lt_window_end = now + j->latency_window_ns;
	if (x->live) {
		__atomic_store_n(&x->live->eta_end_ns, jr->t_end, __ATOMIC_RELAXED);
		__atomic_store_n(&x->live->state, 1, __ATOMIC_RELAXED);
	}
	jr->mp.t0 = now;
	if (!j->ramp_ns)
		start_measuring(jr, now);
	run_loop(jr);
	final_flush(jr);
	now = ub_now_ns();
	if (!jr->measuring)
		start_measuring(jr, now);
	{
		uint64_t end = jr->last_done > jr->t_measure ? jr->last_done : now;

		/* a run its runtime stopped measured the whole window, also when its last
		 * completion came a moment before the window closed (as fio reports it) */
		if (jr->t_end && now >= jr->t_end && end < jr->t_end)
			end = jr->t_end;
		res->runtime_ns = end - jr->t_measure;
	}
	res->elapsed_ms = (now - jr->t0) / 1000000;
	if (!res->d[0].nsec && !res->d[1].nsec && res->runtime_ns)
		for (int d = 0; d < UB_NDDIR; d++)
			ub_res_add_sec(&res->d[d], res->d[d].bytes * SEC / res->runtime_ns,
				       res->d[d].ios * SEC / res->runtime_ns);
	collect_paths(jr);
	if (jr->verify && ub_rw_writes(j) && j->do_verify && !jr->failed && !jr->verify_only &&
	    !(x->stop && *x->stop)) {
		jr->verify_phase = true;
		jr->stopping = false;
		/* an I/O of the workload chosen but held back by pacing when it ended must not
		 * become the read-back's first command */
		jr->have_next = false;
		jr->vnext = 0;
		run_loop(jr);
	}
	collect_end(jr);
	goto out;
oom:
	res->error = ENOMEM;
	snprintf(res->errmsg, sizeof(res->errmsg), "out of memory");
out:
	/* Drain anything still in flight before the buffers go away. */
	while (jr->inflight && jr->mp.n) {
		jr->stopping = true;
		ub_mpath_poll(&jr->mp, 100);
	}
	ub_iolog_close(&jr->log, jr->measuring ? (ub_now_ns() - jr->t_measure) / 1000000 : 0);
	ub_mpath_close(&jr->mp);
	ub_iobufs_free(&jr->bufs);
	free(jr->slots);
	free(jr->backlog);
	free(jr->lt_hist);
	ub_vtrack_free(&jr->vt);
	getrusage(RUSAGE_THREAD, &ru1);
	res->usr_ns = tv_ns(ru1.ru_utime) - tv_ns(ru0.ru_utime);
	res->sys_ns = tv_ns(ru1.ru_stime) - tv_ns(ru0.ru_stime);
	res->ctx = (uint64_t)(ru1.ru_nvcsw - ru0.ru_nvcsw + ru1.ru_nivcsw - ru0.ru_nivcsw);
	res->majf = (uint64_t)(ru1.ru_majflt - ru0.ru_majflt);
	res->minf = (uint64_t)(ru1.ru_minflt - ru0.ru_minflt);
	free(jr);
	return res->error ? -1 : 0;
}
