/* Group scheduling, one thread per job clone, progress line, result merging. */
#include "initiator/runner.h"
#include "initiator/units.h"

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

static void *thr_main(void *a)
{
	struct thr *t = a;

	t->rc = ub_job_exec(&t->x, &t->res);
	/* Whatever way the job ended (including failing to start), the waiter must see it. */
	__atomic_store_n(&t->live.state, 2, __ATOMIC_RELEASE);
	return NULL;
}

static char mode_char(enum ub_rw rw)
{
	static const char c[] = {
	    [UB_RW_READ] = 'R',	     [UB_RW_WRITE] = 'W', [UB_RW_RANDREAD] = 'r',
	    [UB_RW_RANDWRITE] = 'w', [UB_RW_RW] = 'M',	  [UB_RW_RANDRW] = 'm'};
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

static int run_group(const struct ub_bench *b, const struct ub_joblist *jobs,
		     const unsigned *groupid, unsigned g, char *const *targets, unsigned ntargets,
		     const struct ub_run_hooks *hooks, struct ub_run *out)
{
	unsigned n = 0, k = 0;
	struct thr *t;
	bool merge = false, show = show_progress(b, hooks);
	int rc = 0;
	uint64_t prev_b[2] = {0, 0}, prev_i[2] = {0, 0}, prev_ns, t0;

	for (unsigned i = 0; i < jobs->n; i++)
		if (groupid[i] == g) {
			n += jobs->jobs[i].numjobs;
			merge |= jobs->jobs[i].group_reporting;
		}
	t = calloc(n, sizeof(*t));
	if (!t)
		return 3;
	for (unsigned i = 0; i < jobs->n; i++) {
		if (groupid[i] != g)
			continue;
		for (unsigned c = 0; c < jobs->jobs[i].numjobs; c++, k++) {
			struct thr *x = &t[k];
			x->x.job = &jobs->jobs[i];
			x->x.bench = b;
			x->x.targets = targets;
			x->x.ntargets = ntargets;
			x->x.clone = c;
			x->x.groupid = g;
			x->x.live = &x->live;
			x->x.stop = &ub_stop_requested;
			if (hooks) {
				x->x.on_tick = hooks->on_tick;
				x->x.tick_arg = hooks->tick_arg;
				x->x.size_override = hooks->size_override;
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
		struct timespec ts = {0, 100 * 1000000};
		for (k = 0; k < n; k++)
			done += !t[k].running ||
				__atomic_load_n(&t[k].live.state, __ATOMIC_RELAXED) == 2;
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
		if (r->error)
			rc = rc > 1 ? rc : (r->error == EIO ? 1 : 3);
		if (merge && k) {
			ub_res_merge(&out->res[out->nres - 1], r);
			ub_res_free(r);
			continue;
		}
		out->res[out->nres++] = *r;
	}
	free(t);
	return rc;
}

int ub_run_jobs(const struct ub_bench *b, const struct ub_joblist *jobs, char *const *targets,
		unsigned ntargets, const struct ub_run_hooks *hooks, struct ub_run *out)
{
	unsigned *groupid = calloc(jobs->n ? jobs->n : 1, sizeof(unsigned));
	unsigned total = 0;

	memset(out, 0, sizeof(*out));
	if (!groupid)
		return out->rc = 3;
	out->ngroups = ub_assign_groups(jobs, groupid);
	for (unsigned i = 0; i < jobs->n; i++)
		total += jobs->jobs[i].numjobs;
	out->res = calloc(total ? total : 1, sizeof(*out->res));
	if (!out->res) {
		free(groupid);
		return out->rc = 3;
	}
	for (unsigned g = 0; g < out->ngroups && !ub_stop_requested; g++) {
		int rc = run_group(b, jobs, groupid, g, targets, ntargets, hooks, out);
		if (rc > out->rc)
			out->rc = rc;
		if (rc == 3)
			break; /* could not start: later groups would fail the same way */
	}
	free(groupid);
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
