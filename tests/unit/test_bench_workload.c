/* utgt-bench offset generators: every block exactly once per pass, mixes. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "initiator/workload.h"

static void covers_once(enum ub_rw rw, uint64_t n, uint64_t seed)
{
	struct ub_gen g;
	uint8_t *seen = calloc(n, 1);

	ub_gen_init(&g, rw, 50, n, seed);
	for (int pass = 0; pass < 3; pass++) {
		for (uint64_t i = 0; i < n; i++) {
			uint64_t c = ub_gen_next(&g);
			cr_assert_lt(c, n);
			cr_assert_eq(seen[c], pass, "chunk %llu twice in pass %d (n=%llu)",
				     (unsigned long long)c, pass, (unsigned long long)n);
			seen[c]++;
		}
	}
	free(seen);
}

Test(bench_workload, random_visits_every_chunk_once_per_pass)
{
	static const uint64_t sizes[] = {1, 2, 3, 7, 64, 1000, 1024, 1025, 65537};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		covers_once(UB_RW_RANDREAD, sizes[i], 42 + i);
}

Test(bench_workload, random_order_is_not_sequential_and_changes_per_pass)
{
	struct ub_gen g;
	uint64_t first[64], in_order = 0, same = 0;

	ub_gen_init(&g, UB_RW_RANDWRITE, 0, 64, 1);
	for (int i = 0; i < 64; i++) {
		first[i] = ub_gen_next(&g);
		in_order += first[i] == (uint64_t)i;
	}
	for (int i = 0; i < 64; i++)
		same += ub_gen_next(&g) == first[i];
	cr_assert_lt(in_order, 16);
	cr_assert_lt(same, 16);
}

Test(bench_workload, sequential_walks_and_wraps)
{
	struct ub_gen g;

	covers_once(UB_RW_READ, 10, 0);
	ub_gen_init(&g, UB_RW_WRITE, 0, 5, 0);
	for (int i = 0; i < 12; i++)
		cr_assert_eq(ub_gen_next(&g), (uint64_t)(i % 5));
	cr_assert_eq(g.passes, 2);
}

Test(bench_workload, direction_and_mix)
{
	struct ub_gen g;
	int reads = 0;

	ub_gen_init(&g, UB_RW_READ, 0, 8, 0);
	cr_assert(ub_gen_is_read(&g));
	ub_gen_init(&g, UB_RW_RANDWRITE, 100, 8, 0);
	cr_assert_not(ub_gen_is_read(&g));
	ub_gen_init(&g, UB_RW_RANDRW, 70, 8, 3);
	for (int i = 0; i < 10000; i++)
		reads += ub_gen_is_read(&g);
	cr_assert(reads > 6700 && reads < 7300, "reads=%d of 10000 at rwmixread=70", reads);
}
