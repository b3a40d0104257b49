/* utgt-bench I/O choice (iogen.c): sizes from bs lists, bssplit and bsrange; sequential walks
 * with holes and backwards; strided zones; distributions stay in the region and skew; the
 * random map covers every block; trimwrite pairs. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "initiator/iogen.h"

static struct ub_job j;
static struct ub_iogen g;
static char err[256];

static void init(void)
{
	ub_job_defaults(&j);
}

TestSuite(bench_iogen, .init = init);

static void set(const char *k, const char *v)
{
	cr_assert_eq(ub_job_set(&j, k, v, err, sizeof(err)), UB_OPT_OK, "%s=%s: %s", k, v, err);
}

static void start(uint64_t region)
{
	cr_assert(ub_iogen_init(&g, &j, region, 512, 7, err, sizeof(err)), "%s", err);
}

Test(bench_iogen, sequential_reads_walk_and_wrap)
{
	struct ub_ionext n;

	start(4 * 4096);
	for (int i = 0; i < 6; i++) {
		ub_iogen_next(&g, &n);
		cr_assert_eq(n.ddir, UB_DD_READ);
		cr_assert_eq(n.off, (uint64_t)(i % 4) * 4096);
		cr_assert_eq(n.len, 4096);
	}
}

Test(bench_iogen, holes_and_backwards)
{
	struct ub_ionext n;

	set("rw", "write:4k");
	start(64 * 1024);
	for (int i = 0; i < 3; i++) {
		ub_iogen_next(&g, &n);
		cr_assert_eq(n.off, (uint64_t)i * 8192, "a 4k hole after each 4k write");
	}
	init();
	set("rw", "read:-8k");
	start(16 * 1024);
	ub_iogen_next(&g, &n);
	cr_assert_eq(n.off, 12288, "backwards starts at the end");
	ub_iogen_next(&g, &n);
	cr_assert_eq(n.off, 8192);
	ub_iogen_next(&g, &n);
	cr_assert_eq(n.off, 4096);
}

Test(bench_iogen, bssplit_follows_the_weights)
{
	struct ub_ionext n;
	unsigned small = 0;

	set("bssplit", "4k/80:64k/20");
	set("rw", "randread");
	start(1 << 24);
	for (int i = 0; i < 10000; i++) {
		ub_iogen_next(&g, &n);
		cr_assert(n.len == 4096 || n.len == 65536);
		cr_assert_leq(n.off + n.len, 1u << 24);
		cr_assert_eq(n.off % 4096, 0, "aligned to the smallest size");
		small += n.len == 4096;
	}
	cr_assert(small > 7600 && small < 8400, "4k in %u of 10000", small);
}

Test(bench_iogen, bsrange_picks_multiples_of_the_minimum)
{
	set("bsrange", "4k-16k");
	start(1 << 20);
	for (int i = 0; i < 1000; i++) {
		uint64_t b = ub_iogen_bs(&g, UB_DD_READ);
		cr_assert(b >= 4096 && b <= 16384 && b % 4096 == 0, "%llu", (unsigned long long)b);
	}
}

Test(bench_iogen, per_direction_sizes_in_a_mix)
{
	struct ub_ionext n;

	set("rw", "randrw");
	set("bs", "4k,64k");
	start(1 << 22);
	for (int i = 0; i < 200; i++) {
		ub_iogen_next(&g, &n);
		cr_assert_eq(n.len, n.ddir == UB_DD_READ ? 4096u : 65536u);
	}
}

Test(bench_iogen, random_map_covers_every_block_once_per_pass)
{
	uint8_t seen[256] = {0};
	struct ub_ionext n;

	set("rw", "randwrite");
	start(256 * 4096);
	for (int i = 0; i < 256; i++) {
		ub_iogen_next(&g, &n);
		cr_assert_eq(seen[n.off / 4096]++, 0);
	}
}

Test(bench_iogen, zipf_and_zoned_skew_toward_hot_blocks)
{
	static unsigned hits[1024];
	struct ub_ionext n;
	unsigned top = 0, first5 = 0;

	set("rw", "randread");
	set("random_distribution", "zipf:1.2");
	start(1024 * 4096);
	memset(hits, 0, sizeof(hits));
	for (int i = 0; i < 20000; i++) {
		ub_iogen_next(&g, &n);
		hits[n.off / 4096]++;
	}
	for (int i = 0; i < 1024; i++)
		top = hits[i] > top ? hits[i] : top;
	cr_assert_gt(top, 20000 / 1024 * 20, "the hottest block is far above uniform: %u", top);
	init();
	set("rw", "randread");
	set("random_distribution", "zoned:50/5:50/");
	start(1000 * 4096);
	for (int i = 0; i < 10000; i++) {
		ub_iogen_next(&g, &n);
		first5 += n.off < 50 * 4096;
	}
	cr_assert(first5 > 4700 && first5 < 5300, "%u of 10000 in the first 5%%", first5);
}

Test(bench_iogen, strided_zones_skip)
{
	struct ub_ionext n;

	set("zonemode", "strided");
	set("zonesize", "8k");
	set("zoneskip", "8k");
	start(64 * 1024);
	uint64_t want[] = {0, 4096, 16384, 20480, 32768};
	for (size_t i = 0; i < 5; i++) {
		ub_iogen_next(&g, &n);
		cr_assert_eq(n.off, want[i], "step %zu: %llu", i, (unsigned long long)n.off);
	}
}

/* zonerange is the zone, zonesize what is done in it: 4k of each 16k zone, zones 16k apart. */
Test(bench_iogen, strided_zonerange_is_the_zone)
{
	struct ub_ionext n;

	set("zonemode", "strided");
	set("zonesize", "4k");
	set("zonerange", "16k");
	start(64 * 1024);
	uint64_t want[] = {0, 16384, 32768, 49152, 0};
	for (size_t i = 0; i < 5; i++) {
		ub_iogen_next(&g, &n);
		cr_assert_eq(n.off, want[i], "step %zu: %llu", i, (unsigned long long)n.off);
	}
	/* zonesize beyond zonerange goes round the zone again */
	set("zonesize", "16k");
	set("zonerange", "8k");
	start(64 * 1024);
	uint64_t again[] = {0, 4096, 0, 4096, 8192};
	for (size_t i = 0; i < 5; i++) {
		ub_iogen_next(&g, &n);
		cr_assert_eq(n.off, again[i], "round %zu: %llu", i, (unsigned long long)n.off);
	}
}

Test(bench_iogen, trimwrite_writes_what_it_trimmed)
{
	struct ub_ionext t, w;

	set("rw", "randtrimwrite");
	start(1 << 20);
	for (int i = 0; i < 10; i++) {
		ub_iogen_next(&g, &t);
		ub_iogen_next(&g, &w);
		cr_assert_eq(t.ddir, UB_DD_TRIM);
		cr_assert_eq(w.ddir, UB_DD_WRITE);
		cr_assert_eq(t.off, w.off);
	}
}

Test(bench_iogen, refuses_what_cannot_work)
{
	set("bs", "6k");
	cr_assert_not(ub_iogen_init(&g, &j, 1 << 20, 4096, 1, err, sizeof(err)));
	cr_assert(strstr(err, "multiple"), "%s", err);
	set("bs", "1m");
	cr_assert_not(ub_iogen_init(&g, &j, 65536, 512, 1, err, sizeof(err)));
	cr_assert(strstr(err, "smaller"), "%s", err);
}
