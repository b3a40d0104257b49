/* The config's bump allocator (tgt_arena.c). */
#include <criterion/criterion.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "target/tgt_arena.h"

Test(tgt_arena, zeroed_aligned_and_distinct)
{
	struct tgt_arena *a = tgt_arena_new();
	unsigned char *prev = NULL;
	cr_assert_not_null(a);
	for (int i = 1; i < 3000; i++) {
		unsigned char *p = tgt_arena_alloc(a, (size_t)(i % 97) + 1);
		cr_assert_not_null(p);
		cr_assert_eq((uintptr_t)p % alignof(max_align_t), 0);
		for (int k = 0; k < i % 97 + 1; k++)
			cr_assert_eq(p[k], 0);
		memset(p, 0xff, (size_t)(i % 97) + 1);
		cr_assert_neq(p, prev);
		prev = p;
	}
	tgt_arena_free(a);
}

Test(tgt_arena, big_blocks_and_strings)
{
	struct tgt_arena *a = tgt_arena_new();
	char *small = tgt_arena_strdup(a, "hello");
	char *big = tgt_arena_alloc(a, 1 << 20);
	char *after = tgt_arena_strdup(a, "world");
	cr_assert_not_null(big);
	memset(big, 'x', 1 << 20);
	cr_assert_str_eq(small, "hello");
	cr_assert_str_eq(after, "world");
	cr_assert_null(tgt_arena_calloc(a, SIZE_MAX / 2, 4), "overflow is refused");
	cr_assert_not_null(tgt_arena_calloc(a, 0, 8));
	tgt_arena_free(a);
	tgt_arena_free(NULL);
}
