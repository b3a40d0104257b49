/* The one thread runtime every front end runs on: an event loop per thread that owns its
 * objects, and messages to reach it from anywhere (in the spirit of SPDK's spdk_thread).
 *
 * A ut_thread is an epoll set plus a lock-free inbox.  Other threads never touch what a thread
 * owns; they post a ut_msg and the message's function runs on the owning thread.  Each round
 * of the loop:
 *   1. wait for fds (no wait when messages or a busy poller are pending; otherwise until an
 *      fd, a message or the next timer, after an optional bounded poll: ut_thread_set_poll);
 *      timers wake the loop through a timerfd, so the wait itself has no timeout;
 *   2. run the ready fds' callbacks: hang-ups (EPOLLHUP/EPOLLRDHUP) of the batch first, so an
 *      object that went away releases its state before work that arrived with it elsewhere;
 *   3. run every posted message, in each sender's order;
 *   4. submit the SQEs queued on the thread's ring (ut_ring.h), if it has one, and run the
 *      completions already posted;
 *   5. run the pollers (each says whether it did work: then the next round does not sleep);
 *   6. run the timers that are due, then submit and reap the ring again before waiting.
 * A thread is started on its own pthread (ut_thread_start) or driven by the caller
 * (ut_thread_run).  Nothing here logs or allocates: errors are returned. */
#ifndef UTGT_COMMON_UT_THREAD_H
#define UTGT_COMMON_UT_THREAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ut_thread;
struct ut_ring;

/* A message: fn(m) runs on the thread it was posted to.  Embed it in what it carries. */
struct ut_msg {
	struct ut_msg *next;
	void (*fn)(struct ut_msg *m);
};

/* An fd the thread watches: fn(w, epoll events) runs on the thread when it is ready. */
struct ut_watch {
	void (*fn)(struct ut_watch *w, uint32_t events);
	int fd;
};

/* A periodic callback, every period_ms from when it was added (it may run up to one tick of
 * the coarse clock late). */
struct ut_timer {
	void (*fn)(struct ut_timer *tm);
	uint64_t period_ms;
	/* private */
	uint64_t due_ms;
	struct ut_timer *next;
};

/* Called once per round; returns true when it did work and wants the next round not to
 * sleep (busy polling, or work it left for the next round). */
struct ut_poller {
	bool (*fn)(struct ut_poller *p);
	/* private */
	struct ut_poller *next;
};

struct ut_thread {
	char name[16];
	int cpu; /* pinned to this CPU, or -1 */
	/* private */
	int epfd, evfd, tfd; /* tfd: the timerfd set for the earliest timer */
	struct ut_watch inbox_watch, timer_watch;
	uint64_t armed_ms;	 /* the due time tfd is set for (coarse clock), 0: none */
	uint64_t timer_slack_ms; /* the coarse clock's resolution */
	_Atomic(struct ut_msg *) inbox;
	struct ut_msg *local_head, *local_tail; /* posted from the thread itself */
	struct ut_timer *timers;
	struct ut_poller *pollers;
	struct ut_ring *ring; /* its own io_uring, or NULL (common/ut_ring.h) */
	unsigned poll_us;     /* ut_thread_set_poll */
	bool worked;	      /* the last round had fd events or messages */
	atomic_bool stop;
	bool started;
	pthread_t thr;
	uint64_t now_ms; /* CLOCK_MONOTONIC at the start of the current round */
	int err;	 /* errno that ended the loop, 0 when stopped on request */
	/* counters, read by the owner */
	uint64_t rounds, msgs;
};

/* Set up the epoll set and inbox (no thread yet).  0 or -errno. */
int ut_thread_init(struct ut_thread *t, const char *name);
/* Release what init took; the thread must not be running. */
void ut_thread_fini(struct ut_thread *t);
/* Run the loop on a new pthread, pinned to cpu unless cpu < 0 (a failed pin leaves it
 * unpinned and cpu = -1).  0 or -errno. */
int ut_thread_start(struct ut_thread *t, int cpu);
/* Run the loop on the calling thread until ut_thread_stop. */
void ut_thread_run(struct ut_thread *t);
/* Ask the loop to end after the current round (any thread; messages already posted run). */
void ut_thread_stop(struct ut_thread *t);
/* Stop and wait for a started thread's pthread to end. */
void ut_thread_join(struct ut_thread *t);
/* Wait for a started thread whose loop ends itself (a message or poller calls stop). */
void ut_thread_wait(struct ut_thread *t);

/* Post m from any thread; m->fn(m) runs on t.  From t itself it runs later in the same round,
 * without a system call. */
void ut_thread_post(struct ut_thread *t, struct ut_msg *m);
/* Run fn(arg) on t and wait for it (inline when called on t or t is not running). */
void ut_thread_call_sync(struct ut_thread *t, void (*fn)(void *arg), void *arg);
/* Run every message pending for t now (on t; for pollers that must see completions that
 * arrived during the round before deciding). */
unsigned ut_thread_drain(struct ut_thread *t);
/* The thread the caller runs on (NULL outside any ut_thread). */
struct ut_thread *ut_thread_current(void);
static inline bool ut_thread_is_current(const struct ut_thread *t)
{
	return ut_thread_current() == t;
}

/* fds, on t (or before it runs).  0 or -errno. */
int ut_thread_watch(struct ut_thread *t, struct ut_watch *w, uint32_t events);
int ut_thread_modify(struct ut_thread *t, struct ut_watch *w, uint32_t events);
void ut_thread_unwatch(struct ut_thread *t, struct ut_watch *w);

/* Timers and pollers, on t (or before it runs). */
void ut_thread_add_timer(struct ut_thread *t, struct ut_timer *tm);
void ut_thread_del_timer(struct ut_thread *t, struct ut_timer *tm);
void ut_thread_add_poller(struct ut_thread *t, struct ut_poller *p);
void ut_thread_del_poller(struct ut_thread *t, struct ut_poller *p);

/* Adaptive poll: a loop whose last round had work looks for more without sleeping for up to
 * `us` microseconds before it blocks (a wake-up saved per command at low queue depth, at the
 * price of CPU time spent polling).  0, the default, never polls.  Before the thread runs. */
void ut_thread_set_poll(struct ut_thread *t, unsigned us);

/* Monotonic time at the start of the current round, in ms (seconds: / 1000). */
static inline uint64_t ut_thread_now_ms(const struct ut_thread *t)
{
	return t->now_ms;
}
uint64_t ut_clock_ms(void);

/* A plain detached thread for one blocking job (SANITIZE, a cluster round trip, the blocking
 * command pool): 0 or the positive error of pthread_create.  fn owns arg from then on. */
int ut_spawn_detached(void *(*fn)(void *arg), void *arg);

#endif
