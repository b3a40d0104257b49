/* A job's I/O buffers, where fio puts them for the same job.  fio allocates iodepth buffers of
 * the largest block size in one piece (memory.c: malloc, mmap, shmget, or their huge-page
 * forms) and hands out consecutive slices; it rounds the start up to a page and adds mem_align
 * only for O_DIRECT or a mem_align (backend.c, init_io_u_buffers), and otherwise uses the
 * address as the allocator returns it.  The kernel's copy between the page cache and a
 * buffered job's buffers costs more when they do not start on a page boundary, so a tester
 * that aligned them where fio does not would report more IOPS for the same job. */
#include "initiator/iobuf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t huge_page_size(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Hugepagesize: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb ? kb * 1024 : 2u << 20;
}

bool ub_iobufs_alloc(struct ub_iobufs *b, unsigned n, uint64_t bs, enum ub_mem mem, bool direct,
		     uint64_t mem_align, char *err, size_t errlen)
{
	bool huge = mem == UB_MEM_MMAPHUGE || mem == UB_MEM_SHMHUGE;
	bool shared = mem == UB_MEM_MMAPSHARED || mem == UB_MEM_SHM || mem == UB_MEM_SHMHUGE;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t grain = huge ? huge_page_size() : page;
	uint64_t off, len;
	void *m;

	memset(b, 0, sizeof(*b));
	if (direct || mem_align)
		off = mem_align; /* fio: PTR_ALIGN(orig_buffer, page_mask) + mem_align */
	else
		off = mem == UB_MEM_MALLOC ? UB_MALLOC_OFFSET : 0;
	if (!n || !bs || bs > (UINT64_MAX - off - grain) / n) {
		snprintf(err, errlen, "no room for %u buffers of %llu bytes", n,
			 (unsigned long long)bs);
		return false;
	}
	len = (off + n * bs + grain - 1) / grain * grain;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS | (huge ? MAP_HUGETLB : 0), -1,
		 0);
	if (m == MAP_FAILED) {
		int e = errno;
		if (huge)
			snprintf(err, errlen,
				 "mem=%s: no %llu KiB huge pages for %llu bytes of buffers (%s; "
				 "see vm.nr_hugepages)",
				 mem == UB_MEM_SHMHUGE ? "shmhuge" : "mmaphuge",
				 (unsigned long long)grain >> 10, (unsigned long long)len,
				 strerror(e));
		else
			snprintf(err, errlen, "out of memory for %u buffers of %llu bytes: %s", n,
				 (unsigned long long)bs, strerror(e));
		return false;
	}
	b->map = m;
	b->maplen = len;
	b->base = (uint8_t *)m + off;
	b->stride = bs;
	b->n = n;
	return true;
}

uint8_t *ub_iobufs_at(const struct ub_iobufs *b, unsigned i)
{
	return i < b->n ? b->base + (size_t)i * b->stride : NULL;
}

void ub_iobufs_free(struct ub_iobufs *b)
{
	if (b->map)
		munmap(b->map, b->maplen);
	memset(b, 0, sizeof(*b));
}

bool ub_iobufs_parse_mem(const char *v, enum ub_mem *out, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		enum ub_mem mem;
	} kinds[] = {{"malloc", UB_MEM_MALLOC},		{"mmap", UB_MEM_MMAP},
		     {"mmapshared", UB_MEM_MMAPSHARED}, {"shm", UB_MEM_SHM},
		     {"mmaphuge", UB_MEM_MMAPHUGE},	{"shmhuge", UB_MEM_SHMHUGE}};
	const char *colon = strchr(v, ':');
	size_t len = colon ? (size_t)(colon - v) : strlen(v);

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strlen(kinds[i].name) != len || strncmp(v, kinds[i].name, len))
			continue;
		if (colon) {
			snprintf(err, errlen,
				 "'%s': buffers in a named file are not supported (give %s without "
				 "':FILE': anonymous memory%s)",
				 v, kinds[i].name,
				 kinds[i].mem == UB_MEM_MMAPHUGE ? " with MAP_HUGETLB" : "");
			return false;
		}
		*out = kinds[i].mem;
		return true;
	}
	if (len == strlen("cudamalloc") && !strncmp(v, "cudamalloc", len))
		snprintf(err, errlen, "'%s' is not supported: utgt-bench uses no GPU memory", v);
	else
		snprintf(err, errlen,
			 "'%s': expected malloc, mmap, mmapshared, shm, mmaphuge or shmhuge", v);
	return false;
}
