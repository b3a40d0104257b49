/* utgt-bench's I/O buffers start where fio's start for the same job: on a page boundary plus
 * mem_align for O_DIRECT or a mem_align, 16 bytes past one for a buffered malloc job, on a
 * page boundary for mmap and shm, one after another; fio's mem= values and their refusals. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "initiator/iobuf.h"

static char err[256];

static uintptr_t in_page(const struct ub_iobufs *b, unsigned i)
{
	return (uintptr_t)ub_iobufs_at(b, i) % 4096;
}

static struct ub_iobufs alloc(unsigned n, uint64_t bs, enum ub_mem mem, bool direct, uint64_t align)
{
	struct ub_iobufs b;

	cr_assert(ub_iobufs_alloc(&b, n, bs, mem, direct, align, err, sizeof(err)), "%s", err);
	/* every byte of every buffer is there and writable */
	for (unsigned i = 0; i < n; i++) {
		ub_iobufs_at(&b, i)[0] = 1;
		ub_iobufs_at(&b, i)[bs - 1] = 2;
	}
	return b;
}

Test(bench_iobuf, buffered_malloc_buffers_start_16_bytes_past_a_page_as_fio_s)
{
	struct ub_iobufs b = alloc(3, 1 << 20, UB_MEM_MALLOC, false, 0);

	for (unsigned i = 0; i < 3; i++)
		cr_assert_eq(in_page(&b, i), UB_MALLOC_OFFSET, "buffer %u at +%lu", i,
			     (unsigned long)in_page(&b, i));
	cr_assert_eq(ub_iobufs_at(&b, 2) - ub_iobufs_at(&b, 0), 2 << 20);
	cr_assert_null(ub_iobufs_at(&b, 3));
	ub_iobufs_free(&b);
}

Test(bench_iobuf, direct_buffers_are_page_aligned)
{
	struct ub_iobufs b = alloc(4, 1 << 20, UB_MEM_MALLOC, true, 0);

	for (unsigned i = 0; i < 4; i++)
		cr_assert_eq(in_page(&b, i), 0);
	ub_iobufs_free(&b);
}

Test(bench_iobuf, mem_align_is_added_to_a_page_boundary_direct_or_not)
{
	struct ub_iobufs b = alloc(2, 65536, UB_MEM_MALLOC, false, 512);

	cr_assert_eq(in_page(&b, 0), 512);
	cr_assert_eq(in_page(&b, 1), 512);
	ub_iobufs_free(&b);
	b = alloc(2, 65536, UB_MEM_MALLOC, true, 4096);
	cr_assert_eq(in_page(&b, 0), 0);
	ub_iobufs_free(&b);
	b = alloc(2, 65536, UB_MEM_MMAP, true, 1);
	cr_assert_eq(in_page(&b, 0), 1);
	ub_iobufs_free(&b);
}

Test(bench_iobuf, small_blocks_are_consecutive_slices_as_fio_s_io_us)
{
	struct ub_iobufs b = alloc(4, 1536, UB_MEM_MALLOC, true, 0);

	cr_assert_eq(in_page(&b, 0), 0);
	cr_assert_eq(in_page(&b, 1), 1536);
	cr_assert_eq(in_page(&b, 3), 3 * 1536 % 4096);
	ub_iobufs_free(&b);
}

Test(bench_iobuf, mmap_and_shm_buffers_start_on_a_page)
{
	enum ub_mem kinds[] = {UB_MEM_MMAP, UB_MEM_MMAPSHARED, UB_MEM_SHM};

	for (unsigned k = 0; k < 3; k++) {
		struct ub_iobufs b = alloc(2, 1 << 20, kinds[k], false, 0);
		cr_assert_eq(in_page(&b, 0), 0, "kind %u", k);
		cr_assert_eq(in_page(&b, 1), 0, "kind %u", k);
		ub_iobufs_free(&b);
	}
}

Test(bench_iobuf, huge_pages_or_a_reason_naming_nr_hugepages)
{
	struct ub_iobufs b;

	if (ub_iobufs_alloc(&b, 2, 1 << 20, UB_MEM_MMAPHUGE, false, 0, err, sizeof(err))) {
		cr_assert_eq((uintptr_t)ub_iobufs_at(&b, 0) % (2 << 20), 0);
		ub_iobufs_free(&b);
	} else {
		cr_assert(strstr(err, "mem=mmaphuge") && strstr(err, "vm.nr_hugepages"), "%s", err);
	}
}

Test(bench_iobuf, too_many_bytes_is_an_error_not_a_crash)
{
	struct ub_iobufs b;

	cr_assert_not(
	    ub_iobufs_alloc(&b, 65537, UINT64_MAX / 2, UB_MEM_MALLOC, false, 0, err, sizeof(err)));
	cr_assert(strstr(err, "65537 buffers"), "%s", err);
	cr_assert_not(ub_iobufs_alloc(&b, 0, 4096, UB_MEM_MALLOC, false, 0, err, sizeof(err)));
}

Test(bench_iobuf, fio_mem_values)
{
	enum ub_mem m;

	cr_assert(ub_iobufs_parse_mem("malloc", &m, err, sizeof(err)));
	cr_assert_eq(m, UB_MEM_MALLOC);
	cr_assert(ub_iobufs_parse_mem("mmapshared", &m, err, sizeof(err)));
	cr_assert_eq(m, UB_MEM_MMAPSHARED);
	cr_assert(ub_iobufs_parse_mem("shmhuge", &m, err, sizeof(err)));
	cr_assert_eq(m, UB_MEM_SHMHUGE);
	cr_assert_not(ub_iobufs_parse_mem("mmaphuge:/hugetlbfs/f", &m, err, sizeof(err)));
	cr_assert(strstr(err, "named file") && strstr(err, "MAP_HUGETLB"), "%s", err);
	cr_assert_not(ub_iobufs_parse_mem("cudamalloc", &m, err, sizeof(err)));
	cr_assert(strstr(err, "GPU"), "%s", err);
	cr_assert_not(ub_iobufs_parse_mem("mallocx", &m, err, sizeof(err)));
	cr_assert(strstr(err, "expected malloc"), "%s", err);
}
