/* The data pool's allocator (unregistered: no device): all-or-nothing allocation in chunks,
 * neighbours merged, capacity grown by slabs up to the cap, FIFO waiters served in order as
 * chunks come back, nothing lost or handed out twice. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transports/rdma/rdma_pool.h"

#define CHUNK 4096u
#define SLAB  (16u * CHUNK)

static uint64_t seg_bytes(const struct rdma_seg *s, int n)
{
	uint64_t b = 0;
	for (int i = 0; i < n; i++)
		b += s[i].len;
	return b;
}

Test(rdma_pool, bad_parameters)
{
	cr_assert_null(rdma_pool_create(NULL, 0, SLAB, SLAB));
	cr_assert_null(rdma_pool_create(NULL, CHUNK, CHUNK - 1, SLAB));
	cr_assert_null(rdma_pool_create(NULL, CHUNK, SLAB, CHUNK - 1));
}

Test(rdma_pool, grows_on_demand_and_merges)
{
	struct rdma_pool *p = rdma_pool_create(NULL, CHUNK, SLAB, 4 * SLAB);
	struct rdma_seg s[64];
	int n;

	cr_assert_eq(rdma_pool_capacity(p), 0);
	n = rdma_pool_get(p, 5 * CHUNK + 1, s, 64, NULL);
	cr_assert_eq(n, 1, "fresh slab: one contiguous segment");
	cr_assert_eq(s[0].len, 5 * CHUNK + 1);
	cr_assert_eq(rdma_pool_capacity(p), SLAB);
	cr_assert_eq(rdma_pool_free_bytes(p), SLAB - 6 * CHUNK);
	memset(s[0].addr, 0xab, s[0].len); /* really memory */
	rdma_pool_put(p, s, (unsigned)n);
	cr_assert_eq(rdma_pool_free_bytes(p), SLAB);
	cr_assert_eq(rdma_pool_get(p, 0, s, 64, NULL), 0);
	rdma_pool_destroy(p);
}

Test(rdma_pool, grow_up_to_the_cap)
{
	struct rdma_pool *p = rdma_pool_create(NULL, CHUNK, SLAB, 2 * SLAB + 3 * CHUNK);
	struct rdma_seg s[128];

	cr_assert_eq(rdma_pool_grow(p, 100 * SLAB), 0);
	cr_assert_eq(rdma_pool_capacity(p), 2 * SLAB + 3 * CHUNK, "last slab cut to the cap");
	cr_assert_eq(rdma_pool_get(p, 2 * SLAB + 4 * CHUNK, s, 128, NULL), -E2BIG);
	cr_assert_eq(rdma_pool_get(p, 2 * SLAB + 3 * CHUNK, s, 128, NULL) > 0, 1);
	cr_assert_eq(rdma_pool_free_bytes(p), 0);
	rdma_pool_destroy(p);
}

Test(rdma_pool, too_many_chunks_for_the_array)
{
	struct rdma_pool *p = rdma_pool_create(NULL, CHUNK, SLAB, SLAB);
	struct rdma_seg s[4];

	cr_assert_eq(rdma_pool_get(p, 5 * CHUNK, s, 4, NULL), -E2BIG);
	cr_assert_eq(rdma_pool_get(p, 4 * CHUNK, s, 4, NULL), 1);
	rdma_pool_destroy(p);
}

struct w {
	struct rdma_pool_waiter pw;
	struct rdma_seg segs[32];
	int got;
	int order;
};
static int served;

static void ready(struct rdma_pool_waiter *pw, int n)
{
	struct w *x = (struct w *)pw;
	x->got = n;
	x->order = ++served;
}

Test(rdma_pool, waiters_fifo)
{
	struct rdma_pool *p = rdma_pool_create(NULL, CHUNK, SLAB, SLAB);
	struct rdma_seg all[32], one[32];
	struct w big = {.pw.ready = ready}, small = {.pw.ready = ready};
	int n;

	served = 0;
	n = rdma_pool_get(p, SLAB, all, 32, NULL);
	cr_assert_eq(n, 1);
	cr_assert_eq(rdma_pool_get(p, 8 * CHUNK, big.segs, 32, &big.pw), -EAGAIN);
	cr_assert_eq(rdma_pool_get(p, CHUNK, small.segs, 32, &small.pw), -EAGAIN,
		     "queued behind the big one even once a chunk is free");
	/* give back 4 chunks: not enough for the head; the small one must still wait */
	one[0] = (struct rdma_seg){all[0].addr, 4 * CHUNK, all[0].lkey};
	rdma_pool_put(p, one, 1);
	cr_assert_eq(served, 0);
	one[0] = (struct rdma_seg){(char *)all[0].addr + 4 * CHUNK, 4 * CHUNK, all[0].lkey};
	rdma_pool_put(p, one, 1);
	cr_assert_eq(big.order, 1);
	cr_assert_eq(seg_bytes(big.segs, big.got), 8 * CHUNK);
	cr_assert_eq(small.order, 0, "nothing free for it yet");
	one[0] = (struct rdma_seg){(char *)all[0].addr + 8 * CHUNK, CHUNK, all[0].lkey};
	rdma_pool_put(p, one, 1);
	cr_assert_eq(small.order, 2);
	cr_assert_eq(small.got, 1);
	rdma_pool_destroy(p);
}

Test(rdma_pool, cancel_a_waiter)
{
	struct rdma_pool *p = rdma_pool_create(NULL, CHUNK, SLAB, SLAB);
	struct rdma_seg all[32];
	struct w a = {.pw.ready = ready}, b = {.pw.ready = ready};
	int n;

	served = 0;
	n = rdma_pool_get(p, SLAB, all, 32, NULL);
	cr_assert_eq(rdma_pool_get(p, CHUNK, a.segs, 32, &a.pw), -EAGAIN);
	cr_assert_eq(rdma_pool_get(p, CHUNK, b.segs, 32, &b.pw), -EAGAIN);
	rdma_pool_cancel(p, &a.pw);
	rdma_pool_put(p, all, (unsigned)n);
	cr_assert_eq(a.order, 0, "cancelled: never served");
	cr_assert_eq(b.order, 1);
	rdma_pool_cancel(p, &b.pw); /* not queued any more: harmless */
	rdma_pool_destroy(p);
}

/* Random gets and puts: no chunk is ever handed out twice and all come back. */
Test(rdma_pool, random_no_double_allocation)
{
	struct rdma_pool *p = rdma_pool_create(NULL, CHUNK, SLAB, 8 * SLAB);
	static struct {
		struct rdma_seg s[64];
		int n;
	} held[64];
	static unsigned char owner[8 * 16];
	unsigned seed = 3;

	memset(held, 0, sizeof(held));
	for (int it = 0; it < 20000; it++) {
		int k = rand_r(&seed) % 64;

		if (held[k].n > 0) {
			for (int i = 0; i < held[k].n; i++)
				for (uint64_t off = 0; off < held[k].s[i].len; off += CHUNK)
					memset((char *)held[k].s[i].addr + off, 0, 1);
			rdma_pool_put(p, held[k].s, (unsigned)held[k].n);
			held[k].n = 0;
			continue;
		}
		uint64_t len = 1 + (uint64_t)rand_r(&seed) % (12 * CHUNK);
		int n = rdma_pool_get(p, len, held[k].s, 64, NULL);
		if (n == -EAGAIN)
			continue;
		cr_assert_gt(n, 0);
		cr_assert_eq(seg_bytes(held[k].s, n), len);
		held[k].n = n;
		/* mark: a chunk marked by someone else would be a double allocation */
		for (int i = 0; i < n; i++)
			for (uint64_t off = 0; off < held[k].s[i].len; off += CHUNK) {
				char *c = (char *)held[k].s[i].addr + off;
				cr_assert_eq(*c, 0, "chunk handed out twice");
				*c = 1;
			}
	}
	for (int k = 0; k < 64; k++)
		if (held[k].n > 0) {
			for (int i = 0; i < held[k].n; i++)
				for (uint64_t off = 0; off < held[k].s[i].len; off += CHUNK)
					memset((char *)held[k].s[i].addr + off, 0, 1);
			rdma_pool_put(p, held[k].s, (unsigned)held[k].n);
		}
	cr_assert_eq(rdma_pool_free_bytes(p), rdma_pool_capacity(p));
	(void)owner;
	rdma_pool_destroy(p);
}

Test(rdma_pool, grows_while_chunks_are_held)
{
	struct rdma_pool *p = rdma_pool_create(NULL, CHUNK, SLAB, 3 * SLAB);
	struct rdma_seg a[32], b[32];

	cr_assert_eq(rdma_pool_get(p, SLAB, a, 32, NULL), 1);
	cr_assert_eq(rdma_pool_get(p, SLAB, b, 32, NULL), 1, "below the cap: grow, not wait");
	cr_assert_eq(rdma_pool_capacity(p), 2 * SLAB);
	rdma_pool_put(p, a, 1);
	rdma_pool_put(p, b, 1);
	rdma_pool_destroy(p);
}
