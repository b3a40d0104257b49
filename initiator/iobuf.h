/* A job's I/O buffers, placed where fio places them for the same job (fio's mem, iomem,
 * mem_align, direct), because where a buffer starts changes what is measured: the kernel copies
 * 1 MiB from the page cache into a buffer 16 bytes past a page boundary at about 1.4 times the
 * CPU cost of copying it into a page-aligned one (docs/utgt-bench.md, "utgt-bench against
 * fio"). */
#ifndef UB_IOBUF_H
#define UB_IOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* fio's mem= kinds (cudamalloc is refused when parsed: there is no GPU here). */
enum ub_mem {
	UB_MEM_MALLOC, /* fio's default */
	UB_MEM_MMAP,
	UB_MEM_MMAPSHARED,
	UB_MEM_SHM,
	UB_MEM_MMAPHUGE,
	UB_MEM_SHMHUGE,
};

/* Where glibc's malloc() puts a block it maps by itself (128 KiB and more): 16 bytes into
 * the first page, after the chunk header.  fio uses malloc's address as it comes unless it
 * has to align, so this is where its buffered jobs' buffers start. */
#define UB_MALLOC_OFFSET 16u

struct ub_iobufs {
	void *map; /* the mapping that holds them */
	size_t maplen;
	uint8_t *base;	 /* buffer 0 */
	uint64_t stride; /* buffer i is base + i * stride: one after another, as fio's io_us */
	unsigned n;
};

/* n buffers of bs bytes, placed as fio places them: page-aligned plus mem_align when
 * direct or mem_align is given (as fio's init_io_u_buffers), otherwise where the memory kind
 * puts them (malloc: UB_MALLOC_OFFSET past a page boundary; mmap and shm: on a page boundary;
 * the huge kinds: on a huge page boundary, from MAP_HUGETLB).  On failure err says why. */
bool ub_iobufs_alloc(struct ub_iobufs *b, unsigned n, uint64_t bs, enum ub_mem mem, bool direct,
		     uint64_t mem_align, char *err, size_t errlen);
uint8_t *ub_iobufs_at(const struct ub_iobufs *b, unsigned i);
void ub_iobufs_free(struct ub_iobufs *b);

/* fio's mem= value ("malloc", "mmap", "mmapshared", "shm", "mmaphuge", "shmhuge"). */
bool ub_iobufs_parse_mem(const char *v, enum ub_mem *out, char *err, size_t errlen);

#endif
