/* scsi/scsi_srcu.c: a grace period waits for every section begun before it, including one
 * that ends on another thread than it began; sections of threads that exited are still
 * counted; and under load, a writer that frees what it unpublished after a grace period
 * never frees something a reader still holds (ASan turns a miss into a use-after-free). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

#include "scsi/scsi_srcu.h"

Test(srcu, no_reader_no_wait)
{
	cr_assert_eq(scsi_srcu_readers(), 0);
	scsi_srcu_synchronize();
	scsi_srcu_synchronize();
	cr_assert_eq(scsi_srcu_readers(), 0);
}

struct sync_arg {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool started, returned;
	int seen; /* `order` when synchronize returned */
	int *order;
};

static void *sync_main(void *p)
{
	struct sync_arg *a = p;

	pthread_mutex_lock(&a->mu);
	a->started = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	scsi_srcu_synchronize();
	pthread_mutex_lock(&a->mu);
	a->returned = true;
	a->seen = __atomic_load_n(a->order, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

struct unlock_arg {
	unsigned idx;
	int *order;
};

static void *unlock_main(void *p)
{
	struct unlock_arg *u = p;

	__atomic_store_n(u->order, 1, __ATOMIC_RELEASE);
	scsi_srcu_unlock(u->idx);
	return NULL;
}

/* A command begins on a transport thread and completes on a backstore thread: the grace
 * period started meanwhile ends only after that completion. */
Test(srcu, waits_for_a_section_ended_on_another_thread)
{
	static int order;
	struct sync_arg a = {
	    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false, -1, &order};
	struct unlock_arg u = {.order = &order};
	pthread_t st, ut;

	order = 0;
	u.idx = scsi_srcu_lock();
	cr_assert_eq(scsi_srcu_readers(), 1);
	cr_assert_eq(pthread_create(&st, NULL, sync_main, &a), 0);
	pthread_mutex_lock(&a.mu);
	while (!a.started)
		pthread_cond_wait(&a.cv, &a.mu);
	cr_assert_not(a.returned, "a grace period cannot end while a section is open");
	pthread_mutex_unlock(&a.mu);
	cr_assert_eq(pthread_create(&ut, NULL, unlock_main, &u), 0);
	pthread_join(ut, NULL);
	pthread_join(st, NULL);
	cr_assert(a.returned);
	cr_assert_eq(a.seen, 1, "synchronize returned only after the section ended");
	cr_assert_eq(scsi_srcu_readers(), 0);
}

static void *lock_and_exit(void *p)
{
	*(unsigned *)p = scsi_srcu_lock();
	return NULL;
}

/* A thread that began a section and exited (its slot reused by the next thread) still
 * counts until the section ends. */
Test(srcu, sections_of_exited_threads_still_count)
{
	unsigned idx[8];
	pthread_t t;

	for (int i = 0; i < 8; i++) {
		cr_assert_eq(pthread_create(&t, NULL, lock_and_exit, &idx[i]), 0);
		pthread_join(t, NULL);
	}
	cr_assert_eq(scsi_srcu_readers(), 8);
	for (int i = 0; i < 8; i++)
		scsi_srcu_unlock(idx[i]);
	cr_assert_eq(scsi_srcu_readers(), 0);
	scsi_srcu_synchronize();
}

/* ---- a published object replaced under load ---- */

#define MAGIC_LIVE 0x11feull
#define MAGIC_DEAD 0xdeadull

struct obj {
	uint64_t magic;
	uint64_t gen;
};

static struct obj *published;
static bool stop;
static unsigned long bad, sections;

static void *reader_main(void *p)
{
	unsigned long n = 0;

	(void)p;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		unsigned idx = scsi_srcu_lock();
		struct obj *o = __atomic_load_n(&published, __ATOMIC_ACQUIRE);
		uint64_t g = o->gen;

		for (int i = 0; i < 64; i++) /* hold it a little, as a command would */
			if (__atomic_load_n(&o->magic, __ATOMIC_RELAXED) != MAGIC_LIVE ||
			    o->gen != g)
				__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
		scsi_srcu_unlock(idx);
		__atomic_fetch_add(&sections, 1, __ATOMIC_RELEASE);
		n++;
	}
	return (void *)n;
}

Test(srcu, replaced_objects_are_freed_only_after_their_readers)
{
	pthread_t r[3];
	unsigned long reads = 0;

	published = calloc(1, sizeof(*published));
	published->magic = MAGIC_LIVE;
	stop = false;
	bad = sections = 0;
	for (int i = 0; i < 3; i++)
		cr_assert_eq(pthread_create(&r[i], NULL, reader_main, NULL), 0);
	for (uint64_t gen = 1; gen <= 100; gen++) {
		struct obj *n = calloc(1, sizeof(*n)), *old = published;
		unsigned long seen = __atomic_load_n(&sections, __ATOMIC_ACQUIRE);

		/* readers make progress between replacements, however busy the machine */
		while (__atomic_load_n(&sections, __ATOMIC_ACQUIRE) < seen + 3)
			sched_yield();

		n->magic = MAGIC_LIVE;
		n->gen = gen;
		__atomic_store_n(&published, n, __ATOMIC_RELEASE);
		scsi_srcu_synchronize();
		old->magic = MAGIC_DEAD; /* a reader still holding it would see this */
		free(old);
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	for (int i = 0; i < 3; i++) {
		void *n;
		pthread_join(r[i], &n);
		reads += (unsigned long)n;
	}
	cr_assert_eq(bad, 0, "a reader saw a replaced object die under it");
	cr_assert_gt(reads, 0);
	cr_assert_eq(scsi_srcu_readers(), 0);
	free(published);
}
