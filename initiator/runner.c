/* Group scheduling, one thread per job clone, progress line, result merging. */
#include "initiator/opt_values.h"
#include "initiator/runner.h"
#include "initiator/units.h"

#include <sched.h>
#include <sys/syscall.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t ub_stop_requested;

struct thr {
	pthread_t t;
	bool running;
	struct ub_exec x;
	struct ub_job_res res;
	struct ub_live live;
	int rc;
	volatile sig_atomic_t stop;
	struct thr *deps; /* wait_for: the threads of the job waited for */
	unsigned ndeps;
	unsigned cpu;	  /* cpus_allowed_policy=split: which CPU of the set */
};

unsigned ub_assign_groups(const struct ub_joblist *jobs, unsigned *groupid)
{
	unsigned g = 0;

	for (unsigned i = 0; i < jobs->n; i++) {
		if (i && (jobs->jobs[i].stonewall || jobs->jobs[i].new_group))
			g++;
		groupid[i] = g;
	}
	return jobs->n ? g + 1 : 0;
}

/* Jobs between stonewalls run together; new_group only starts a new reporting group. */
static unsigned assign_phases(const struct ub_joblist *jobs, unsigned *phase)
{
	unsigned p = 0;

	for (unsigned i = 0; i < jobs->n; i++) {
		if (i && jobs->jobs[i].stonewall)
			p++;
		phase[i] = p;
	}
	return jobs->n ? p + 1 : 0;
}

static void pause_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	nanosleep(&ts, NULL);
}

static bool deps_done(const struct thr *t)
{
	for (unsigned i = 0; i < t->ndeps; i++)
		if (t->deps[i].running &&
		    __atomic_load_n(&t->deps[i].live.state, __ATOMIC_ACQUIRE) != 2)
			return false;
	return true;
}

static void place(const struct thr *t)
{
	const struct ub_job *j = t->x.job;
	cpu_set_t set;
	unsigned n = 0;
	bool any = false;

	CPU_ZERO(&set);
	for (unsigned c = 0; c < 1024 && c < CPU_SETSIZE; c++)
		if (j->cpus_allowed[c / 64] >> (c % 64) & 1) {
			/* split: clone k gets the k-th CPU of the set (round robin) */
			if (!j->cpus_split)
				CPU_SET(c, &set);
			n++;
			any = true;
		}
	if (any && j->cpus_split) {
		unsigned want = t->cpu % n, k = 0;
		for (unsigned c = 0; c < 1024 && c < CPU_SETSIZE; c++)
			if (j->cpus_allowed[c / 64] >> (c % 64) & 1 && k++ == want)
				CPU_SET(c, &set);
	}
	for (unsigned node = 0; node < 64; node++) {
		char path[96], list[256];
		FILE *f;
		if (!(j->numa_nodes >> node & 1))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%u/cpulist", node);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(list, sizeof(list), f)) {
			uint64_t mask[16];
			char err[64];
			list[strcspn(list, "\n")] = '\0';
			if (ub_val_cpulist(list, mask, 1024, err, sizeof(err)))
				for (unsigned c = 0; c < 1024 && c < CPU_SETSIZE; c++)
					if (mask[c / 64] >> (c % 64) & 1) {
						CPU_SET(c, &set);
						any = true;
					}
		}
		fclose(f);
	}
	if (any)
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (j->numa_mem_mode) {
		/* MPOL_DEFAULT 0, MPOL_PREFERRED 1, MPOL_BIND 2, MPOL_INTERLEAVE 3, MPOL_LOCAL 4 */
		static const int mode[] = {0, 2, 3, 1, 4};
		unsigned long nodes = (unsigned long)j->numa_mem_nodes;
		syscall(SYS_set_mempolicy, mode[j->numa_mem_mode], nodes ? &nodes : NULL,
			nodes ? 64 : 0);
	}
}

static void *thr_main(void *a)
{
	struct thr *t = a;
	const struct ub_job *j = t->x.job;
	uint64_t delay = j->startdelay_ns;

	place(t);
	while (!deps_done(t) && !t->stop)
		pause_ns(10000000);
	if (j->startdelay_max_ns > j->startdelay_ns)
		delay += (uint64_t)rand() % (j->startdelay_max_ns - j->startdelay_ns + 1);
	for (uint64_t end = ub_now_ns() + delay; !t->stop && ub_now_ns() < end;)
		pause_ns(end - ub_now_ns() < 50000000 ? end - ub_now_ns() : 50000000);
	if (t->stop) {
		t->res.error = 0;
		snprintf(t->res.name, sizeof(t->res.name), "%s", j->name);
		snprintf(t->res.note, sizeof(t->res.note), "stopped before it started (exitall)");
		t->res.groupid = t->x.groupid;
		t->res.rw = j->rw;
		t->res.bs = j->bs;
		t->res.iodepth = j->iodepth;
		t->rc = 0;
	} else {
		t->rc = ub_job_exec(&t->x, &t->res);
	}
	/* Whatever way the job ended (including failing to start), the waiter must see it. */
	__atomic_store_n(&t->live.state, 2, __ATOMIC_RELEASE);
	return NULL;
}

static char mode_char(enum ub_rw rw)
{
	static const char c[UB_NRW] = {
	    [UB_RW_READ] = 'R',	     [UB_RW_WRITE] = 'W',      [UB_RW_RANDREAD] = 'r',
	    [UB_RW_RANDWRITE] = 'w', [UB_RW_RW] = 'M',	       [UB_RW_RANDRW] = 'm',
	    [UB_RW_TRIM] = 'D',	     [UB_RW_RANDTRIM] = 'd',   [UB_RW_TRIMWRITE] = 'T',
	    [UB_RW_RANDTRIMWRITE] = 't'};
	return c[rw];
}

static void progress(struct thr *t, unsigned n, uint64_t *prev_bytes, uint64_t *prev_ios,
		     uint64_t *prev_ns, uint64_t t0)
{
	uint64_t bytes[2] = {0, 0}, ios[2] = {0, 0}, now = ub_now_ns(), eta_end = 0;
	unsigned running = 0;
	char modes[64], rb[32], wb[32], ri[32], wi[32], eta[32], pct[16];
	size_t w = 0;
	double dt = (double)(now - *prev_ns) / 1e9;

	for (unsigned i = 0; i < n; i++) {
		int st = __atomic_load_n(&t[i].live.state, __ATOMIC_RELAXED);
		uint64_t e = __atomic_load_n(&t[i].live.eta_end_ns, __ATOMIC_RELAXED);
		for (int d = 0; d < 2; d++) {
			bytes[d] += __atomic_load_n(&t[i].live.bytes[d], __ATOMIC_RELAXED);
			ios[d] += __atomic_load_n(&t[i].live.ios[d], __ATOMIC_RELAXED);
		}
		running += st == 1;
		if (st == 1 && e > eta_end)
			eta_end = e;
		if (w + 2 < sizeof(modes))
			modes[w++] = st == 2 ? '_' : st == 1 ? mode_char(t[i].x.job->rw) : 'P';
	}
	modes[w] = '\0';
	if (dt <= 0)
		dt = 1;
	ub_num2str(rb, sizeof(rb), (uint64_t)((double)(bytes[0] - prev_bytes[0]) / dt), 4, true,
		   UB_U_BYTEPERSEC);
	ub_num2str(wb, sizeof(wb), (uint64_t)((double)(bytes[1] - prev_bytes[1]) / dt), 4, true,
		   UB_U_BYTEPERSEC);
	ub_num2str(ri, sizeof(ri), (uint64_t)((double)(ios[0] - prev_ios[0]) / dt), 4, false,
		   UB_U_NONE);
	ub_num2str(wi, sizeof(wi), (uint64_t)((double)(ios[1] - prev_ios[1]) / dt), 4, false,
		   UB_U_NONE);
	if (eta_end > now) {
		ub_eta2str(eta, sizeof(eta), (eta_end - now + 999999999ull) / 1000000000ull);
		snprintf(pct, sizeof(pct), "%.1f%%",
			 100.0 * (double)(now - t0) / (double)(eta_end - t0));
	} else {
		snprintf(eta, sizeof(eta), "--m:--s");
		snprintf(pct, sizeof(pct), "-.-%%");
	}
	printf("\rJobs: %u (f=%u): [%s][%s][r=%s,w=%s][r=%s,w=%s IOPS][eta %s]\033[K", running,
	       running, modes, pct, rb, wb, ri, wi, eta);
	fflush(stdout);
	memcpy(prev_bytes, bytes, sizeof(bytes));
	memcpy(prev_ios, ios, sizeof(ios));
	*prev_ns = now;
}

static bool show_progress(const struct ub_bench *b, const struct ub_run_hooks *h)
{
	if (h && (h->quiet || h->on_tick))
		return false;
	if (b->progress >= 0)
		return b->progress > 0;
	return b->fmt == UB_OUT_NORMAL && !b->output[0] && isatty(STDOUT_FILENO);
}

/* exitall: a job that ends stops the others of its group, its phase, or the whole run. */
static void exit_others(struct thr *t, unsigned n, const struct thr *done, bool *stop_all)
{
	const struct ub_job *j = done->x.job;

	if (!j->exitall)
		return;
	if (j->exit_what == UB_EXIT_ALL)
		*stop_all = true;
	for (unsigned k = 0; k < n; k++)
		if (j->exit_what != UB_EXIT_GROUP || t[k].x.groupid == done->x.groupid)
			t[k].stop = 1;
}

static int run_phase(const struct ub_bench *b, const struct ub_joblist *jobs,
		     const unsigned *groupid, const unsigned *phase, unsigned p,
		     char *const *targets, unsigned ntargets, const struct ub_run_hooks *hooks,
		     unsigned *log_index, bool *stop_all, struct ub_run *out)
{
	unsigned n = 0, k = 0, *first = calloc(jobs->n ? jobs->n : 1, sizeof(unsigned));
	struct thr *t;
	bool show = show_progress(b, hooks), *ended;
	int rc = 0;
	uint64_t prev_b[2] = {0, 0}, prev_i[2] = {0, 0}, prev_ns, t0;

	for (unsigned i = 0; i < jobs->n; i++)
		if (phase[i] == p)
			n += jobs->jobs[i].numjobs;
	t = calloc(n ? n : 1, sizeof(*t));
	ended = calloc(n ? n : 1, sizeof(*ended));
	if (!t || !first || !ended) {
		free(t);
		free(first);
		free(ended);
		return 3;
	}
	for (unsigned i = 0; i < jobs->n; i++) {
		if (phase[i] != p)
			continue;
		first[i] = k;
		for (unsigned c = 0; c < jobs->jobs[i].numjobs; c++, k++) {
			struct thr *x = &t[k];
			x->x.job = &jobs->jobs[i];
			x->x.bench = b;
			x->x.targets = targets;
			x->x.ntargets = ntargets;
			x->x.clone = c;
			x->x.groupid = groupid[i];
			x->x.live = &x->live;
			x->x.stop = &x->stop;
			x->x.log_index = ++*log_index;
			x->cpu = c;
			if (hooks) {
				x->x.on_tick = hooks->on_tick;
				x->x.tick_arg = hooks->tick_arg;
				x->x.size_override = hooks->size_override;
			}
			/* wait_for names an earlier job of this phase (others are done by now) */
			for (unsigned w = 0; w < i && jobs->jobs[i].wait_for[0]; w++)
				if (phase[w] == p && !strcmp(jobs->jobs[w].name, jobs->jobs[i].wait_for)) {
					x->deps = &t[first[w]];
					x->ndeps = jobs->jobs[w].numjobs;
				}
			if (!ub_res_init(&x->res)) {
				rc = 3;
				break;
			}
		}
	}
	t0 = prev_ns = ub_now_ns();
	for (k = 0; k < n && !rc; k++) {
		if (pthread_create(&t[k].t, NULL, thr_main, &t[k]) != 0) {
			ub_stop_requested = 1;
			rc = 3;
			break;
		}
		t[k].running = true;
	}
	for (;;) {
		unsigned done = 0;
		struct timespec ts = {0, 20 * 1000000};
		for (k = 0; k < n; k++) {
			bool d = !t[k].running ||
				 __atomic_load_n(&t[k].live.state, __ATOMIC_ACQUIRE) == 2;
			if (d && !ended[k]) {
				ended[k] = true;
				exit_others(t, n, &t[k], stop_all);
			}
			if (ub_stop_requested)
				t[k].stop = 1;
			done += d;
		}
		if (done == n)
			break;
		nanosleep(&ts, NULL);
		if (show && ub_now_ns() - prev_ns >= 1000000000ull)
			progress(t, n, prev_b, prev_i, &prev_ns, t0);
	}
	for (k = 0; k < n; k++)
		if (t[k].running)
			pthread_join(t[k].t, NULL);
	if (show) {
		printf("\r\033[K");
		fflush(stdout);
	}
	for (k = 0; k < n; k++) {
		struct ub_job_res *r = &t[k].res;
		bool merged = false;
		if (r->error)
			rc = rc > 1 ? rc : (r->error == EIO ? 1 : 3);
		/* group_reporting: one result for the whole reporting group */
		for (unsigned g = 0; g < out->nres && !merged; g++)
			if (out->res[g].groupid == r->groupid && out->res[g].group_reporting &&
			    r->group_reporting) {
				ub_res_merge(&out->res[g], r);
				ub_res_free(r);
				merged = true;
			}
		if (!merged)
			out->res[out->nres++] = *r;
	}
	free(t);
	free(first);
	free(ended);
	return rc;
}

int ub_run_jobs(const struct ub_bench *b, const struct ub_joblist *jobs, char *const *targets,
		unsigned ntargets, const struct ub_run_hooks *hooks, struct ub_run *out)
{
	unsigned *groupid = calloc(jobs->n ? jobs->n : 1, sizeof(unsigned));
	unsigned *phase = calloc(jobs->n ? jobs->n : 1, sizeof(unsigned));
	unsigned total = 0, nphases, log_index = 0;
	bool stop_all = false;

	memset(out, 0, sizeof(*out));
	if (!groupid || !phase) {
		free(groupid);
		free(phase);
		return out->rc = 3;
	}
	out->ngroups = ub_assign_groups(jobs, groupid);
	nphases = assign_phases(jobs, phase);
	for (unsigned i = 0; i < jobs->n; i++)
		total += jobs->jobs[i].numjobs;
	out->res = calloc(total ? total : 1, sizeof(*out->res));
	if (!out->res) {
		free(groupid);
		free(phase);
		return out->rc = 3;
	}
	for (unsigned p = 0; p < nphases && !ub_stop_requested && !stop_all; p++) {
		int rc = run_phase(b, jobs, groupid, phase, p, targets, ntargets, hooks, &log_index,
				   &stop_all, out);
		if (rc > out->rc)
			out->rc = rc;
		if (rc == 3)
			break; /* could not start: later phases would fail the same way */
	}
	free(groupid);
	free(phase);
	return out->rc;
}

void ub_run_free(struct ub_run *r)
{
	for (unsigned i = 0; i < r->nres; i++)
		ub_res_free(&r->res[i]);
	free(r->res);
	r->res = NULL;
	r->nres = 0;
}
