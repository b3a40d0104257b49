/* The verbs layer on its event threads (common/ut_thread.h): per thread, a watch on the RDMA/CM
 * event channel and on each device's completion channel, a 1 s timer (CM retries, connection
 * ticks) and a poller that, at the end of every round, polls each connection's completion
 * queues and arms those a completion is still to come to (rdma_cq.c), frees released
 * connections and, with poll_us, keeps the loop spinning on the queues while they have work.
 * The loop is the service's own (with an io_uring of its own, common/ut_ring.h, so file I/O
 * a command starts completes on the thread that answers it), or one the upper layer lent it;
 * either way everything of a connection runs on it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/ut_log.h"
#include "common/ut_ring.h"
#include "transports/rdma/rdma_int.h"

void rdma_log(const struct rdma_srv *s, int prio, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ut_log(prio, "%s: %s", s && s->cfg.name ? s->cfg.name : "rdma", buf);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void rdma_thread_call_sync(struct rdma_thread *t, void (*fn)(void *arg), void *arg)
{
	ut_thread_call_sync(t->ut, fn, arg);
}

void rdma_thread_comp_seen(struct rdma_thread *t)
{
	if (t->srv->cfg.poll_us)
		t->last_comp_us = now_us();
}

/* Every connection's queues polled and, with arm, armed where a completion is still to
 * come (rdma_conn_settle).  True when work turned up after arming (or, without arm, at all). */
static bool settle_all(struct rdma_thread *t, bool arm)
{
	bool any = false;

	for (struct rdma_conn *c = t->conns; c; c = c->next)
		c->busy++;
	for (struct rdma_conn *c = t->conns, *nx; c; c = nx) {
		if (arm)
			any |= rdma_conn_settle(c, true);
		else
			any |= rdma_conn_poll(c);
		nx = c->next;
		c->busy--;
		rdma_conn_maybe_free(c);
	}
	return any;
}

/* Connections released while something was still on the stack are freed here. */
static void reap(struct rdma_thread *t)
{
	for (struct rdma_conn *c = t->conns, *nx; c; c = nx) {
		nx = c->next;
		if (c->released && !c->busy)
			rdma_conn_maybe_free(c);
	}
}

/* ---- pin auto ---- */

void rdma_thread_note_recv(struct rdma_conn *c)
{
	struct rdma_thread *t = c->t;

	c->held++;
	if (!t || t->srv->cfg.pin != RDMA_PIN_AUTO)
		return;
	c->win_recvs++;
	t->win_recvs++;
	/* An answered request whose data is still going out is in progress too: with rxe a
	 * large transfer leaves from a tasklet after the doorbell call, and a thread that picks
	 * up each command as it arrives (polling) would otherwise see one at a time at QD8. */
	t->win_depth += c->held + (c->sq_used ? 1u : 0u);
}

/* End of a placement window: move to where rdma_place_cpu says (own threads only: a lent
 * loop's owner decides where it runs). */
static void place(struct rdma_thread *t)
{
	struct rdma_conn *busiest = NULL;
	cpu_set_t one;
	int cpu;

	for (struct rdma_conn *c = t->conns; c; c = c->next) {
		if (c->win_recvs && (!busiest || c->win_recvs > busiest->win_recvs))
			busiest = c;
		c->win_recvs = 0;
	}
	cpu = busiest ? busiest->cpu_hint : -1;
	if (t->srv->cfg.poll_us)
		cpu = rdma_place_beside(cpu, sysconf(_SC_NPROCESSORS_ONLN));
	cpu = rdma_place_cpu(t->win_recvs, t->win_depth, cpu, t->placed_cpu);
	t->win_recvs = t->win_depth = 0;
	if (cpu == t->placed_cpu || t->ut != &t->own)
		return;
	if (cpu >= 0) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
	}
	if (pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t),
				   cpu >= 0 ? &one : &t->free_set)) {
		rdma_log(t->srv, LOG_DEBUG, "thread %u: cannot move to CPU %d", t->idx, cpu);
		return;
	}
	t->placed_cpu = cpu;
	t->moves++;
	rdma_log(t->srv, LOG_DEBUG, "thread %u: %s", t->idx, cpu >= 0 ? "pinned" : "free");
}

static void place_maybe(struct rdma_thread *t, bool tick)
{
	if (t->srv->cfg.pin == RDMA_PIN_AUTO && t->win_recvs >= (tick ? 1u : RDMA_PLACE_WINDOW))
		place(t);
}

/* Under pin auto only a thread that serves one command at a time spins (pinned beside the
 * CPU its commands come from, place()): under load both CPUs are needed for the work itself. */
static bool may_poll(const struct rdma_thread *t)
{
	return t->srv->cfg.pin != RDMA_PIN_AUTO || t->placed_cpu >= 0;
}

static bool poller_fn(struct ut_poller *p)
{
	struct rdma_thread *t =
	    (struct rdma_thread *)((char *)p - offsetof(struct rdma_thread, poller));
	unsigned poll_us = t->srv->cfg.poll_us;

	bool busy;

	reap(t);
	if (poll_us && t->last_comp_us && may_poll(t)) {
		/* Spin while completions keep coming, without arming: the loop does not sleep
		 * while this returns true. */
		if (settle_all(t, false))
			t->last_comp_us = now_us();
		reap(t);
		if (now_us() - t->last_comp_us < poll_us)
			return true;
		t->last_comp_us = 0;
	}
	/* The loop may sleep after this round: what still waits for a completion is armed. */
	busy = settle_all(t, true);
	reap(t);
	place_maybe(t, false);
	return busy;
}

static void tick_fn(struct ut_timer *tm)
{
	struct rdma_thread *t = (struct rdma_thread *)((char *)tm - offsetof(struct rdma_thread, tick));

	rdma_cm_tick(t);
	/* timers run after the pollers: what the ticks posted is armed for here */
	settle_all(t, true);
	reap(t);
	place_maybe(t, true);
}

static void attach_fn(void *arg)
{
	struct rdma_thread *t = arg;

	t->placed_cpu = -1;
	if (t->ut == &t->own &&
	    pthread_getaffinity_np(pthread_self(), sizeof(t->free_set), &t->free_set)) {
		CPU_ZERO(&t->free_set);
		for (int i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &t->free_set);
	}

	t->poller.fn = poller_fn;
	ut_thread_add_poller(t->ut, &t->poller);
	t->tick.fn = tick_fn;
	t->tick.period_ms = 1000;
	ut_thread_add_timer(t->ut, &t->tick);
	t->attached = true;
	rdma_cm_tick(t); /* RDMA/CM channel and listeners right away, not after a second */
}

/* With cfg.pin, thread i on CPU i (modulo the CPUs online), as iSCSI's workers: with a
 * software device the kernel hands a command to the thread serving its channel in the
 * context of the CPU the initiator submitted on, and Linux's ib_srp picks a channel per
 * submitting CPU; a thread that stays on that CPU is woken without an interrupt to the
 * other one (under emulation, a vCPU the host has to schedule first).  It also keeps all of
 * a job on one CPU, which costs throughput: an option (docs/srp.md, "Figures"). */
static int own_cpu(const struct rdma_thread *t)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (t->srv->cfg.pin != RDMA_PIN_ON || n < 1)
		return -1;
	return (int)(t->idx % (unsigned long)n);
}

int rdma_thread_start(struct rdma_thread *t, struct ut_thread *lent)
{
	int rc;

	if (lent) {
		t->ut = lent;
	} else {
		char name[16];

		snprintf(name, sizeof(name), "rdma-ev%u", t->idx % 1000u);
		rc = ut_thread_init(&t->own, name);
		if (rc)
			return rc;
		t->own_inited = true;
		t->ut = &t->own;
		/* Without one, file I/O goes to the backstore's shared ring and its reaper,
		 * and every completion comes back through this thread's inbox: two thread
		 * wake-ups per command. */
		rc = ut_ring_attach(&t->own, RDMA_THREAD_RING_ENTRIES);
		if (rc)
			rdma_log(t->srv, LOG_INFO, "thread %u: no io_uring of its own (%s)", t->idx,
				 strerror(-rc));
		rc = ut_thread_start(&t->own, own_cpu(t));
		if (rc)
			return rc;
	}
	ut_thread_call_sync(t->ut, attach_fn, t);
	return 0;
}

void rdma_thread_detach(struct rdma_thread *t)
{
	if (!t->attached)
		return;
	ut_thread_del_poller(t->ut, &t->poller);
	ut_thread_del_timer(t->ut, &t->tick);
	t->attached = false;
}

void rdma_thread_stop(struct rdma_thread *t)
{
	if (!t->own_inited)
		return;
	ut_thread_join(&t->own);
	ut_thread_fini(&t->own);
	t->own_inited = false;
}
