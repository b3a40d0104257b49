/* Grace periods with per-thread counters (scsi/scsi_srcu.h).
 *
 * Reader: idx = parity of `cur`; lock[idx]++ in this thread's slot; full barrier; read the
 * published pointers.  Its end: unlock[idx]++ in the slot of whichever thread ends it.
 *
 * Writer (scsi_srcu_synchronize), after its release stores of the new pointers: first wait
 * until the inactive parity has no reader (only readers that read `cur` just before the
 * previous flip can be there), flip `cur`, then wait until the old parity has no reader.  A
 * parity is idle when the sum of its unlock counters, read first, equals the sum of its lock
 * counters, read after a barrier: a section ended during the scan was also begun before its
 * end, so its lock is seen whenever its unlock is; a section begun after the lock scan comes
 * after the writer's barrier and sees the new pointers.  This is the argument of Linux's
 * SRCU (srcu_readers_active_idx_check), with threads in place of CPUs. */
#include "scsi/scsi_srcu.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

struct slot {
	uint64_t lock[2], unlock[2];
	struct slot *next; /* the list only grows: a writer walks it without a lock */
	bool in_use;	   /* owned by a live thread (under reg_mu) */
} __attribute__((aligned(64)));

static struct slot *slots;
static struct slot spare; /* for a thread that could not get one of its own: shared, still exact */
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t sync_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static unsigned cur;
static __thread struct slot *mine;

/* A thread exits: its slot goes back to the pool with its counts (they stay in the sums). */
static void slot_release(void *p)
{
	struct slot *s = p;

	pthread_mutex_lock(&reg_mu);
	s->in_use = false;
	pthread_mutex_unlock(&reg_mu);
}

static void make_key(void)
{
	pthread_key_create(&key, slot_release);
	__atomic_store_n(&slots, &spare, __ATOMIC_RELEASE);
}

static struct slot *slot_get(void)
{
	struct slot *s;

	if (mine)
		return mine;
	pthread_once(&key_once, make_key);
	pthread_mutex_lock(&reg_mu);
	for (s = slots; s && (s == &spare || s->in_use); s = s->next)
		;
	if (!s && (s = aligned_alloc(64, sizeof(*s))) != NULL) {
		*s = (struct slot){.next = slots};
		__atomic_store_n(&slots, s, __ATOMIC_RELEASE);
	}
	if (s) {
		s->in_use = true;
		pthread_setspecific(key, s);
	}
	pthread_mutex_unlock(&reg_mu);
	mine = s ? s : &spare;
	return mine;
}

unsigned scsi_srcu_lock(void)
{
	struct slot *s = slot_get();
	unsigned idx = __atomic_load_n(&cur, __ATOMIC_RELAXED) & 1;

	__atomic_fetch_add(&s->lock[idx], 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return idx;
}

void scsi_srcu_unlock(unsigned idx)
{
	__atomic_fetch_add(&slot_get()->unlock[idx & 1], 1, __ATOMIC_RELEASE);
}

static uint64_t sum(unsigned idx, bool unlocks)
{
	uint64_t n = 0;

	for (struct slot *s = __atomic_load_n(&slots, __ATOMIC_ACQUIRE); s;
	     s = __atomic_load_n(&s->next, __ATOMIC_ACQUIRE))
		n += __atomic_load_n(unlocks ? &s->unlock[idx] : &s->lock[idx], __ATOMIC_ACQUIRE);
	return n;
}

static bool idle(unsigned idx)
{
	uint64_t u = sum(idx, true);

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return sum(idx, false) == u;
}

/* Commands take micro- to milliseconds: poll from 20 us, doubling up to 1 ms. */
static void wait_idle(unsigned idx)
{
	long ns = 20000;

	while (!idle(idx)) {
		struct timespec ts = {0, ns};
		nanosleep(&ts, NULL);
		if (ns < 1000000)
			ns *= 2;
	}
}

void scsi_srcu_synchronize(void)
{
	unsigned c;

	pthread_once(&key_once, make_key);
	pthread_mutex_lock(&sync_mu);
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* the caller's publications come first */
	c = __atomic_load_n(&cur, __ATOMIC_RELAXED);
	wait_idle((c + 1) & 1);
	__atomic_store_n(&cur, c + 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	wait_idle(c & 1);
	pthread_mutex_unlock(&sync_mu);
}

unsigned long scsi_srcu_readers(void)
{
	uint64_t u, l;

	pthread_once(&key_once, make_key);
	u = sum(0, true) + sum(1, true);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	l = sum(0, false) + sum(1, false);
	return (unsigned long)(l - u);
}
