/* Per-worker command buffer cache: page alignment, size classes, reuse of the same buffer,
 * the per-class bound, large buffers bypassing the cache, no caching without a worker. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

Test(iscsi_buf, aligned_and_rounded_to_class)
{
	struct iscsit_worker w;
	size_t cap;
	void *p;

	memset(&w, 0, sizeof(w));
	p = iscsit_buf_get(&w, 36, &cap);
	cr_assert_not_null(p);
	cr_assert_eq((uintptr_t)p % 4096, 0);
	cr_assert_eq(cap, 4096);
	memset(p, 0xaa, cap); /* the whole class size is usable */
	iscsit_buf_put(&w, p, cap);
	p = iscsit_buf_get(&w, 1 << 20, &cap);
	cr_assert_eq(cap, 1 << 20);
	iscsit_buf_put(&w, p, cap);
	p = iscsit_buf_get(&w, (1 << 20) + 1, &cap);
	cr_assert_eq(cap, 2 << 20);
	iscsit_buf_put(&w, p, cap);
	iscsit_buf_drain(&w);
}

Test(iscsi_buf, reuses_the_same_buffer)
{
	struct iscsit_worker w;
	size_t cap, cap2;
	void *a, *b;

	memset(&w, 0, sizeof(w));
	a = iscsit_buf_get(&w, 1 << 20, &cap);
	iscsit_buf_put(&w, a, cap);
	cr_assert_eq(w.nbufs[8], 1, "1 MiB is class 8 (4 KiB << 8)");
	b = iscsit_buf_get(&w, 600000, &cap2);
	cr_assert_eq(b, a, "same class: the cached buffer comes back");
	cr_assert_eq(cap2, cap);
	cr_assert_eq(w.nbufs[8], 0);
	iscsit_buf_put(&w, b, cap2);
	iscsit_buf_drain(&w);
	cr_assert_eq(w.nbufs[8], 0);
	cr_assert_null(w.bufs[8]);
}

Test(iscsi_buf, cache_is_bounded)
{
	struct iscsit_worker w;
	void *p[100];
	size_t cap;

	memset(&w, 0, sizeof(w));
	for (int i = 0; i < 100; i++)
		p[i] = iscsit_buf_get(&w, 8192, &cap);
	for (int i = 0; i < 100; i++)
		iscsit_buf_put(&w, p[i], cap);
	cr_assert_eq(w.nbufs[1], 64, "at most 64 buffers per class");
	cr_assert_eq(w.cached, 64 * 8192);
	/* 16 MiB class: 64 MiB for every class together (512 KiB already kept) means 3 kept;
	 * freed memory kept for reuse is outside the memory budget, so it has a bound of its
	 * own */
	for (int i = 0; i < 6; i++)
		p[i] = iscsit_buf_get(&w, 16 << 20, &cap);
	for (int i = 0; i < 6; i++)
		iscsit_buf_put(&w, p[i], cap);
	cr_assert_eq(w.nbufs[12], 3);
	cr_assert_leq(w.cached, ISCSIT_BUF_CACHE_MAX);
	p[0] = iscsit_buf_get(&w, 16 << 20, &cap);
	cr_assert_eq(w.cached, 64 * 8192 + 2 * (16u << 20), "a buffer taken leaves the count");
	iscsit_buf_put(&w, p[0], cap);
	iscsit_buf_drain(&w);
	cr_assert_eq(w.cached, 0);
}

Test(iscsi_buf, large_and_workerless)
{
	struct iscsit_worker w;
	size_t cap;
	void *p;

	memset(&w, 0, sizeof(w));
	p = iscsit_buf_get(&w, (64 << 20) + 5, &cap);
	cr_assert_not_null(p);
	cr_assert_eq(cap, (size_t)(64 << 20) + 4096, "beyond the classes: page-rounded");
	iscsit_buf_put(&w, p, cap);
	for (int c = 0; c < ISCSIT_BUF_CLASSES; c++)
		cr_assert_eq(w.nbufs[c], 0);
	p = iscsit_buf_get(NULL, 100, &cap);
	cr_assert_not_null(p);
	iscsit_buf_put(NULL, p, cap);
	iscsit_buf_put(&w, NULL, 4096);
}
