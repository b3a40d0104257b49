/* One job's event loop: keep iodepth commands in flight through multipath, measure each,
 * sample once a second, honour ramp_time/runtime/size, check verify blocks, then (for writing
 * verify jobs) read everything back. */
#include "initiator/bench.h"
#include "initiator/verify.h"
#include "initiator/workload.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define SEC 1000000000ull

struct jrun;

struct slot {
	struct ub_mio mio;
	struct iovec iov;
	uint8_t *buf;
	uint64_t chunk;
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
	struct ub_gen gen;
	uint32_t lbs;
	uint64_t first_lba, nchunks, chunk_blocks;
	struct slot *slots;
	struct slot *free;
	unsigned inflight;
	uint64_t issued_bytes, issue_limit; /* limit 0: until the deadline */
	bool stopping, measuring, failed, verify_phase;
	uint64_t t_measure, t_ramp_end, t_end, next_tick, last_done;
	uint64_t sec_bytes[2], sec_ios[2];
	unsigned sec;
	struct ub_vtrack vt;
	bool verify;
	uint64_t vgen;
	uint32_t vseed;
	uint64_t vnext; /* verify phase cursor */
	uint64_t started, finished;
	uint64_t last_lat;
	struct ub_lat tick_lat;
};

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
	for (uint64_t k = 0; k < jr->chunk_blocks; k++) {
		uint64_t lba = s->mio.io.lba + k;
		struct ub_vhdr got;
		enum ub_vres r = ub_verify_check(s->buf + k * jr->lbs, jr->lbs, lba, expect, &got);

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
		fail_job(jr, "%s", jr->res->verify_msg);
		return;
	}
}

static void record(struct jrun *jr, struct slot *s, uint64_t now)
{
	int d = s->mio.io.write ? 1 : 0;
	struct ub_ddir_res *dr = &jr->res->d[d];
	uint64_t bytes = (uint64_t)s->mio.io.nblocks * jr->lbs;
	uint64_t clat = now - s->t_sub, lat = now - s->t_start;

	jr->last_lat = lat;
	ub_lat_add(&jr->tick_lat, lat);
	if (!jr->measuring)
		return;
	dr->ios++;
	dr->bytes += bytes;
	ub_lat_add(&dr->slat, s->t_sub - s->t_start);
	ub_lat_add(&dr->clat, clat);
	ub_lat_add(&dr->lat, lat);
	ub_hist_add(dr->clat_hist, clat);
	jr->sec_bytes[d] += bytes;
	jr->sec_ios[d]++;
	if (jr->x->live) {
		live_add(&jr->x->live->ios[d], 1);
		live_add(&jr->x->live->bytes[d], bytes);
	}
}

static void io_done(struct ub_mio *mio)
{
	struct slot *s = (struct slot *)((char *)mio - offsetof(struct slot, mio));
	struct jrun *jr = s->jr;
	uint64_t now = ub_now_ns();
	bool write = mio->io.write;

	jr->inflight--;
	jr->finished++;
	jr->last_done = now;
	if (jr->verify)
		jr->vt.busy[s->chunk] = 0;
	if (mio->io.result != UB_IO_OK) {
		if (jr->verify && write)
			jr->vt.gen[s->chunk] = 0;
		fail_job(jr, "%s error on LBA %llu (+%u blocks): %s", write ? "write" : "read",
			 (unsigned long long)mio->io.lba, mio->io.nblocks,
			 mio->errmsg[0] ? mio->errmsg : "I/O error");
	} else if (jr->verify && write) {
		jr->vt.gen[s->chunk] = s->gen;
	} else if (jr->verify) {
		uint64_t expect = jr->vt.gen[s->chunk];
		check_chunk(jr, s, expect, !expect && ub_rw_writes(jr->j) && !jr->verify_phase);
	}
	if (!jr->verify_phase)
		record(jr, s, now);
	s->next_free = jr->free;
	jr->free = s;
}

static bool next_chunk(struct jrun *jr, uint64_t *chunk)
{
	if (jr->verify_phase) {
		while (jr->vnext < jr->nchunks && !jr->vt.gen[jr->vnext])
			jr->vnext++;
		if (jr->vnext >= jr->nchunks)
			return false;
		*chunk = jr->vnext++;
		return true;
	}
	if (!jr->verify) {
		*chunk = ub_gen_next(&jr->gen);
		return true;
	}
	/* Never two commands on one chunk at once: a read must see one definite write. */
	for (uint64_t tries = 0; tries < jr->nchunks && tries < 4096; tries++) {
		uint64_t c = ub_gen_next(&jr->gen);
		if (!jr->vt.busy[c]) {
			*chunk = c;
			return true;
		}
	}
	return false;
}

static bool issue_one(struct jrun *jr)
{
	struct slot *s = jr->free;
	bool write;
	uint64_t chunk;

	if (!s || !next_chunk(jr, &chunk))
		return false;
	jr->free = s->next_free;
	write = jr->verify_phase ? false : !ub_gen_is_read(&jr->gen);
	s->chunk = chunk;
	if (jr->verify)
		jr->vt.busy[chunk] = 1;
	memset(&s->mio, 0, sizeof(s->mio));
	s->mio.io.write = write;
	s->mio.io.lba = jr->first_lba + chunk * jr->chunk_blocks;
	s->mio.io.nblocks = (uint32_t)jr->chunk_blocks;
	s->mio.io.iov = &s->iov;
	s->mio.io.iovcnt = 1;
	s->mio.done = io_done;
	if (write && jr->verify) {
		s->gen = ++jr->vgen;
		for (uint64_t k = 0; k < jr->chunk_blocks; k++)
			ub_verify_fill(s->buf + k * jr->lbs, jr->lbs, s->mio.io.lba + k, s->gen,
				       jr->vseed);
	}
	s->t_start = ub_now_ns();
	ub_mpath_submit(&jr->mp, &s->mio);
	s->t_sub = ub_now_ns();
	jr->inflight++;
	jr->started++;
	jr->issued_bytes += (uint64_t)jr->chunk_blocks * jr->lbs;
	if (!jr->verify_phase) {
		jr->res->issued[write ? 1 : 0]++;
		jr->res->depth[depth_bucket(jr->inflight)]++;
	}
	return true;
}

static bool can_issue(struct jrun *jr)
{
	if (jr->stopping)
		return false;
	if (jr->verify_phase)
		return jr->vnext < jr->nchunks;
	return !jr->issue_limit || jr->issued_bytes < jr->issue_limit;
}

static void tick(struct jrun *jr)
{
	jr->sec++;
	for (int d = 0; d < 2; d++) {
		ub_res_add_sec(&jr->res->d[d], jr->sec_bytes[d], jr->sec_ios[d]);
	}
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
	jr->sec_bytes[0] = jr->sec_bytes[1] = 0;
	jr->sec_ios[0] = jr->sec_ios[1] = 0;
	jr->next_tick += SEC;
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
	for (int d = 0; d < 2; d++)
		ub_ddir_reset(&jr->res->d[d]);
	memset(jr->res->depth, 0, sizeof(jr->res->depth));
	jr->res->issued[0] = jr->res->issued[1] = 0;
	ub_mpath_reset_stats(&jr->mp);
}

static void run_loop(struct jrun *jr)
{
	for (;;) {
		uint64_t now;
		int ms;

		while (jr->inflight < jr->j->iodepth && can_issue(jr) && issue_one(jr))
			;
		if (!jr->inflight && !can_issue(jr))
			break;
		if (!jr->inflight && !jr->free) /* cannot happen; guards a silent spin */
			break;
		now = ub_now_ns();
		ms = 100;
		if (jr->measuring && jr->next_tick > now && (jr->next_tick - now) / 1000000 < 100)
			ms = (int)((jr->next_tick - now) / 1000000);
		ub_mpath_poll(&jr->mp, ms);
		now = ub_now_ns();
		if (jr->verify_phase)
			continue;
		if (!jr->measuring && now >= jr->t_ramp_end)
			start_measuring(jr, now);
		while (jr->measuring && now >= jr->next_tick && !jr->stopping &&
		       (!jr->t_end || jr->next_tick <= jr->t_end))
			tick(jr);
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

	if (j->bs % jr->lbs) {
		snprintf(err, errlen, "bs=%llu is not a multiple of the LU block size %u",
			 (unsigned long long)j->bs, jr->lbs);
		return false;
	}
	if (off % jr->lbs || off >= cap) {
		snprintf(err, errlen,
			 "offset=%llu is not aligned to %u or beyond the LU (%llu bytes)",
			 (unsigned long long)off, jr->lbs, (unsigned long long)cap);
		return false;
	}
	size = j->size_pct ? cap * j->size_pct / 100 : j->size;
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
	if (j->verify && j->numjobs > 1) {
		size /= j->numjobs;
		off += size / j->bs * j->bs * jr->x->clone;
	}
	jr->nchunks = size / j->bs;
	if (!jr->nchunks) {
		snprintf(err, errlen, "the region (%llu bytes) is smaller than bs=%llu",
			 (unsigned long long)size, (unsigned long long)j->bs);
		return false;
	}
	jr->chunk_blocks = j->bs / jr->lbs;
	jr->first_lba = off / jr->lbs;
	jr->issue_limit = j->time_based ? 0 : jr->nchunks * j->bs * j->loops;
	if (jr->x->size_override && !j->time_based)
		jr->issue_limit = jr->nchunks * j->bs;
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

int ub_job_exec(const struct ub_exec *x, struct ub_job_res *res)
{
	const struct ub_job *j = x->job;
	struct jrun *jr = calloc(1, sizeof(*jr));
	struct ub_mpath_cfg cfg = x->bench->mp;
	const struct ub_engine *eng;
	char note[256], err[600];
	struct rusage ru0, ru1;
	char *fname[1];
	char *const *targets = x->targets;
	unsigned ntargets = x->ntargets;
	uint64_t now;

	if (!jr) {
		res->error = ENOMEM;
		snprintf(res->errmsg, sizeof(res->errmsg), "out of memory");
		return -1;
	}
	getrusage(RUSAGE_THREAD, &ru0);
	jr->x = x;
	jr->j = j;
	jr->res = res;
	snprintf(res->name, sizeof(res->name), "%s", j->name);
	res->groupid = x->groupid;
	res->rw = j->rw;
	res->bs = j->bs;
	res->iodepth = j->iodepth;
	res->group_reporting = j->group_reporting;
	res->verify = j->verify != UB_VERIFY_NONE;
	if (!ntargets) {
		fname[0] = (char *)j->filename;
		targets = fname;
		ntargets = 1;
	}
	eng = ub_engine_resolve(j->ioengine, targets[0], note, sizeof(note), err, sizeof(err));
	if (!eng) {
		res->error = EINVAL;
		snprintf(res->errmsg, sizeof(res->errmsg), "%.500s", err);
		free(jr);
		return -1;
	}
	snprintf(res->engine, sizeof(res->engine), "%s", eng->name);
	if (note[0])
		snprintf(res->note, sizeof(res->note), "%s", note);
	cfg.eng.direct = j->direct;
	cfg.eng.queue_depth = j->iodepth < 4096 ? j->iodepth * 2 : 8192;
	cfg.eng.max_io_bytes = j->bs;
	if (!ub_mpath_open(&jr->mp, eng, &cfg, targets, ntargets, err, sizeof(err))) {
		res->error = EHOSTUNREACH;
		snprintf(res->errmsg, sizeof(res->errmsg), "%.500s", err);
		free(jr);
		return -1;
	}
	jr->lbs = jr->mp.block_size;
	if (!setup_region(jr, err, sizeof(err))) {
		res->error = EINVAL;
		snprintf(res->errmsg, sizeof(res->errmsg), "job %.100s: %.380s", j->name, err);
		goto out;
	}
	jr->verify = j->verify != UB_VERIFY_NONE;
	/* 9 bytes of state per chunk: past 2^27 chunks (1.1 GiB of state) ask for a smaller
	 * region rather than thrash. */
	if (jr->verify && jr->nchunks > (1ull << 27)) {
		res->error = EINVAL;
		snprintf(res->errmsg, sizeof(res->errmsg),
			 "job %.100s: verify over %llu blocks of %llu bytes needs too much state; "
			 "give a smaller size= or a larger bs=",
			 j->name, (unsigned long long)jr->nchunks, (unsigned long long)j->bs);
		goto out;
	}
	if (jr->verify && !ub_vtrack_init(&jr->vt, jr->nchunks)) {
		res->error = ENOMEM;
		snprintf(res->errmsg, sizeof(res->errmsg), "out of memory for verify state");
		goto out;
	}
	jr->vseed = (uint32_t)(ub_now_ns() ^ (uint64_t)getpid());
	jr->slots = calloc(j->iodepth, sizeof(*jr->slots));
	if (!jr->slots)
		goto oom;
	for (unsigned i = 0; i < j->iodepth; i++) {
		struct slot *s = &jr->slots[i];
		uint64_t seed = i + 1;
		s->buf = aligned_alloc(4096, (j->bs + 4095) / 4096 * 4096);
		if (!s->buf)
			goto oom;
		/* Incompressible payload for plain writes; verify writes refill per I/O. */
		for (uint64_t k = 0; k + 8 <= j->bs; k += 8) {
			uint64_t v = ub_rand64(&seed);
			memcpy(s->buf + k, &v, 8);
		}
		s->iov.iov_base = s->buf;
		s->iov.iov_len = j->bs;
		s->jr = jr;
		s->next_free = jr->free;
		jr->free = s;
	}
	ub_gen_init(&jr->gen, j->rw, j->rwmixread, jr->nchunks,
		    j->randseed_set ? j->randseed : 0x5eed0000ull + x->clone);
	now = ub_now_ns();
	jr->t_ramp_end = now + j->ramp_ns;
	jr->t_end = j->runtime_ns ? jr->t_ramp_end + j->runtime_ns : 0;
	if (x->live) {
		__atomic_store_n(&x->live->eta_end_ns, jr->t_end, __ATOMIC_RELAXED);
		__atomic_store_n(&x->live->state, 1, __ATOMIC_RELAXED);
	}
	jr->mp.t0 = now;
	if (!j->ramp_ns)
		start_measuring(jr, now);
	run_loop(jr);
	now = ub_now_ns();
	if (!jr->measuring)
		start_measuring(jr, now);
	res->runtime_ns = (jr->last_done > jr->t_measure ? jr->last_done : now) - jr->t_measure;
	if (!res->d[0].nsec && !res->d[1].nsec && res->runtime_ns)
		for (int d = 0; d < 2; d++)
			ub_res_add_sec(&res->d[d], res->d[d].bytes * SEC / res->runtime_ns,
				       res->d[d].ios * SEC / res->runtime_ns);
	collect_paths(jr);
	if (jr->verify && ub_rw_writes(j) && j->do_verify && !jr->failed &&
	    !(x->stop && *x->stop)) {
		jr->verify_phase = true;
		jr->stopping = false;
		jr->vnext = 0;
		run_loop(jr);
	}
	collect_end(jr);
	goto out;
oom:
	res->error = ENOMEM;
	snprintf(res->errmsg, sizeof(res->errmsg), "out of memory for %u buffers of %llu bytes",
		 j->iodepth, (unsigned long long)j->bs);
out:
	/* Drain anything still in flight before the buffers go away. */
	while (jr->inflight && jr->mp.n) {
		jr->stopping = true;
		ub_mpath_poll(&jr->mp, 100);
	}
	ub_mpath_close(&jr->mp);
	if (jr->slots)
		for (unsigned i = 0; i < j->iodepth; i++)
			free(jr->slots[i].buf);
	free(jr->slots);
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
