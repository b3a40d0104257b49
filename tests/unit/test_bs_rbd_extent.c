/* scsi/backstore/bs_rbd_extent.c: GET LBA STATUS's first run from the allocated extents a
 * fake librbd reports (rbd_diff_iterate2's callback, whole 4 MiB objects or byte extents). */
#include <criterion/criterion.h>

#include "scsi/backstore/bs_rbd_extent.h"

#define MIB (1024ull * 1024)
#define OBJ (4 * MIB)

struct ext {
	uint64_t off, len;
	bool exists;
};

/* Feed the extents as librbd would, stopping when told (the callback's -ECANCELED);
 * returns how many were fed. */
static unsigned feed(struct bs_rbd_run *r, const struct ext *e, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (bs_rbd_run_extent(r, e[i].off, e[i].len, e[i].exists))
			return i + 1;
	return n;
}

static void ask(uint64_t off, uint64_t len, const struct ext *e, unsigned n, bool *mapped,
		uint64_t *run)
{
	struct bs_rbd_run r;

	bs_rbd_run_init(&r, off, len, 512);
	feed(&r, e, n);
	bs_rbd_run_result(&r, mapped, run);
}

Test(bs_rbd_extent, nothing_allocated_is_one_deallocated_run)
{
	bool mapped = true;
	uint64_t run = 0;

	ask(0, 64 * MIB, NULL, 0, &mapped, &run);
	cr_assert_not(mapped);
	cr_assert_eq(run, 64 * MIB);
}

Test(bs_rbd_extent, a_hole_up_to_the_first_object)
{
	const struct ext e[] = {{2 * OBJ, OBJ, true}, {5 * OBJ, OBJ, true}};
	struct bs_rbd_run r;
	bool mapped;
	uint64_t run;

	bs_rbd_run_init(&r, 0, 64 * MIB, 512);
	cr_assert_eq(feed(&r, e, 2), 1, "decided at the first extent");
	bs_rbd_run_result(&r, &mapped, &run);
	cr_assert_not(mapped);
	cr_assert_eq(run, 2 * OBJ);
}

Test(bs_rbd_extent, contiguous_objects_are_one_mapped_run)
{
	const struct ext e[] = {{2 * OBJ, OBJ, true}, {3 * OBJ, OBJ, true}, {5 * OBJ, OBJ, true}};
	bool mapped;
	uint64_t run;

	ask(2 * OBJ, 62 * MIB - 2 * OBJ + 2 * MIB, e, 3, &mapped, &run);
	cr_assert(mapped);
	cr_assert_eq(run, 2 * OBJ);
}

Test(bs_rbd_extent, starting_inside_an_object)
{
	const struct ext e[] = {{0, OBJ, true}};
	bool mapped;
	uint64_t run;

	ask(MIB, 63 * MIB, e, 1, &mapped, &run);
	cr_assert(mapped);
	cr_assert_eq(run, 3 * MIB, "to the object's end, counted from the question");
}

Test(bs_rbd_extent, extents_before_the_question_are_skipped)
{
	const struct ext e[] = {{0, OBJ, true}, {2 * OBJ, OBJ, true}};
	bool mapped;
	uint64_t run;

	ask(OBJ, 60 * MIB, e, 2, &mapped, &run);
	cr_assert_not(mapped);
	cr_assert_eq(run, OBJ);
}

Test(bs_rbd_extent, partly_allocated_blocks_are_mapped_and_runs_are_blocks)
{
	/* byte extents (precise diff): 100 bytes at 1000, then 1 byte at 4096 */
	const struct ext e[] = {{1000, 100, true}, {4096, 1, true}};
	bool mapped;
	uint64_t run;

	ask(0, MIB, e, 2, &mapped, &run);
	cr_assert_not(mapped);
	cr_assert_eq(run, 512, "block 0 is a hole, block 1 holds bytes 1000-1099");
	ask(512, MIB, e, 2, &mapped, &run);
	cr_assert(mapped);
	cr_assert_eq(run, 1024, "blocks 1 and 2");
}

Test(bs_rbd_extent, holes_reported_as_such_are_not_allocations)
{
	const struct ext e[] = {{0, OBJ, false}, {OBJ, OBJ, true}};
	bool mapped;
	uint64_t run;

	ask(0, 16 * MIB, e, 2, &mapped, &run);
	cr_assert_not(mapped);
	cr_assert_eq(run, OBJ);
}

Test(bs_rbd_extent, a_run_never_passes_the_question)
{
	const struct ext e[] = {{0, OBJ, true}};
	bool mapped;
	uint64_t run;

	ask(0, MIB, e, 1, &mapped, &run);
	cr_assert(mapped);
	cr_assert_eq(run, MIB);
}
