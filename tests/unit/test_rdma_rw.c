/* RDMA READ/WRITE work request lists: every byte of the transfer appears exactly once, in
 * order, at the right remote address; limits (SGEs per request, array room, bytes per
 * request) are honoured; transfers larger than the descriptors are refused. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "transports/rdma/rdma_rw.h"

static struct ibv_send_wr wr[RDMA_RW_MAX_WR];
static struct ibv_sge sge[RDMA_RW_MAX_SGE];

/* Walk the chain and check it maps local byte i to remote byte i for i < bytes. */
static void check_chain(int n, const struct rdma_rseg *rem, unsigned nrem,
			const struct rdma_seg *loc, unsigned nloc, uint64_t bytes, unsigned max_sge,
			enum ibv_wr_opcode op)
{
	uint64_t done = 0;
	unsigned ri = 0, li = 0;
	uint64_t roff = 0, loff = 0;

	cr_assert_gt(n, 0);
	for (int i = 0; i < n; i++) {
		struct ibv_send_wr *w = &wr[i];
		uint64_t raddr = w->wr.rdma.remote_addr;

		cr_assert_eq(w->opcode, op);
		cr_assert_eq(w->next, i + 1 < n ? &wr[i + 1] : NULL, "chain link %d", i);
		cr_assert_leq((unsigned)w->num_sge, max_sge);
		cr_assert_gt(w->num_sge, 0);
		cr_assert_eq(w->send_flags, 0, "unsignaled: the caller marks the last");
		while (ri < nrem && roff == rem[ri].len) {
			ri++;
			roff = 0;
		}
		cr_assert_eq(raddr, rem[ri].addr + roff, "wr %d remote address", i);
		cr_assert_eq(w->wr.rdma.rkey, rem[ri].rkey);
		for (int s = 0; s < w->num_sge; s++) {
			while (li < nloc && loff == loc[li].len) {
				li++;
				loff = 0;
			}
			cr_assert_eq(w->sg_list[s].addr, (uintptr_t)loc[li].addr + loff);
			cr_assert_eq(w->sg_list[s].lkey, loc[li].lkey);
			loff += w->sg_list[s].length;
			roff += w->sg_list[s].length;
			done += w->sg_list[s].length;
			cr_assert_leq(loff, loc[li].len);
			cr_assert_leq(roff, rem[ri].len, "a WR never crosses a remote descriptor");
		}
	}
	cr_assert_eq(done, bytes);
}

Test(rdma_rw, one_to_one)
{
	static char buf[4096];
	struct rdma_rseg rem = {0x10000, 0x77, 4096};
	struct rdma_seg loc = {buf, 4096, 5};
	int n = rdma_rw_build(IBV_WR_RDMA_WRITE, &rem, 1, &loc, 1, 4096, 30, wr, RDMA_RW_MAX_WR,
			      sge, RDMA_RW_MAX_SGE);

	cr_assert_eq(n, 1);
	check_chain(n, &rem, 1, &loc, 1, 4096, 30, IBV_WR_RDMA_WRITE);
}

Test(rdma_rw, local_chunks_gathered_under_max_sge)
{
	static char buf[64 * 1024];
	struct rdma_seg loc[16];
	struct rdma_rseg rem = {0x100000, 9, 16 * 4096};
	int n;

	for (int i = 0; i < 16; i++)
		loc[i] = (struct rdma_seg){buf + i * 4096, 4096, (uint32_t)i};
	n = rdma_rw_build(IBV_WR_RDMA_READ, &rem, 1, loc, 16, 16 * 4096, 4, wr, RDMA_RW_MAX_WR, sge,
			  RDMA_RW_MAX_SGE);
	cr_assert_eq(n, 4, "16 chunks, 4 SGEs per request");
	check_chain(n, &rem, 1, loc, 16, 16 * 4096, 4, IBV_WR_RDMA_READ);
}

Test(rdma_rw, remote_descriptors_split_local_segments)
{
	static char buf[12288];
	struct rdma_seg loc = {buf, 12288, 1};
	struct rdma_rseg rem[3] = {{0x1000, 1, 1000}, {0x9000, 2, 10000}, {0x40000, 3, 1288}};
	int n = rdma_rw_build(IBV_WR_RDMA_WRITE, rem, 3, &loc, 1, 12288, 30, wr, RDMA_RW_MAX_WR,
			      sge, RDMA_RW_MAX_SGE);

	cr_assert_eq(n, 3);
	check_chain(n, rem, 3, &loc, 1, 12288, 30, IBV_WR_RDMA_WRITE);
}

Test(rdma_rw, partial_transfer_and_zero_length_descriptors)
{
	static char buf[8192];
	struct rdma_seg loc = {buf, 8192, 1};
	struct rdma_rseg rem[3] = {{0x1000, 1, 0}, {0x2000, 2, 8192}, {0x9000, 3, 100}};
	int n = rdma_rw_build(IBV_WR_RDMA_WRITE, rem, 3, &loc, 1, 512, 30, wr, RDMA_RW_MAX_WR, sge,
			      RDMA_RW_MAX_SGE);

	/* data-in shorter than the descriptors: only the first 512 bytes are written */
	cr_assert_eq(n, 1);
	cr_assert_eq(wr[0].wr.rdma.remote_addr, 0x2000);
	check_chain(n, rem, 3, &loc, 1, 512, 30, IBV_WR_RDMA_WRITE);
	cr_assert_eq(rdma_rw_build(IBV_WR_RDMA_WRITE, rem, 3, &loc, 1, 0, 30, wr, RDMA_RW_MAX_WR,
				   sge, RDMA_RW_MAX_SGE),
		     0);
}

Test(rdma_rw, refuses_more_than_described)
{
	static char buf[4096];
	struct rdma_seg loc = {buf, 4096, 1};
	struct rdma_rseg rem = {0x1000, 1, 2048};

	cr_assert_eq(rdma_rw_build(IBV_WR_RDMA_READ, &rem, 1, &loc, 1, 4096, 30, wr, RDMA_RW_MAX_WR,
				   sge, RDMA_RW_MAX_SGE),
		     -EINVAL, "remote too small");
	rem.len = 8192;
	cr_assert_eq(rdma_rw_build(IBV_WR_RDMA_READ, &rem, 1, &loc, 1, 8192, 30, wr, RDMA_RW_MAX_WR,
				   sge, RDMA_RW_MAX_SGE),
		     -EINVAL, "local too small");
	cr_assert_eq(rdma_rw_build(IBV_WR_RDMA_READ, &rem, 1, &loc, 1, 100, 0, wr, RDMA_RW_MAX_WR,
				   sge, RDMA_RW_MAX_SGE),
		     -EINVAL);
}

Test(rdma_rw, array_limits)
{
	static char buf[64 * 512];
	struct rdma_seg loc[64];
	struct rdma_rseg rem[64];

	for (int i = 0; i < 64; i++) {
		loc[i] = (struct rdma_seg){buf + i * 512, 512, 1};
		rem[i] = (struct rdma_rseg){0x100000u + (uint64_t)i * 4096, 2, 512};
	}
	cr_assert_eq(rdma_rw_build(IBV_WR_RDMA_WRITE, rem, 64, loc, 64, 64 * 512, 30, wr, 63, sge,
				   RDMA_RW_MAX_SGE),
		     -E2BIG, "64 requests needed");
	cr_assert_eq(
	    rdma_rw_build(IBV_WR_RDMA_WRITE, rem, 64, loc, 64, 64 * 512, 30, wr, 64, sge, 63),
	    -E2BIG, "64 SGEs needed");
	cr_assert_eq(
	    rdma_rw_build(IBV_WR_RDMA_WRITE, rem, 64, loc, 64, 64 * 512, 30, NULL, 64, NULL, 64),
	    64, "count only");
}

Test(rdma_rw, huge_descriptor_split_by_bytes)
{
	/* One 3 GiB remote descriptor and local segments that are never touched (count mode). */
	struct rdma_rseg rem = {0x1000, 1, 0xc0000000u};
	struct rdma_seg loc[3] = {{(void *)0x10000, 0x40000000u, 1},
				  {(void *)0x50000000, 0x40000000u, 1},
				  {(void *)0x90000000, 0x40000000u, 1}};

	cr_assert_eq(
	    rdma_rw_build(IBV_WR_RDMA_READ, &rem, 1, loc, 3, 0xc0000000u, 30, NULL, 16, NULL, 16),
	    3, "no request above 1 GiB");
}

/* Random shapes: the chain always covers the transfer exactly (checked byte by byte). */
Test(rdma_rw, random_shapes)
{
	static char buf[1 << 20];
	unsigned seed = 99;

	for (int it = 0; it < 2000; it++) {
		struct rdma_seg loc[32];
		struct rdma_rseg rem[32];
		unsigned nloc = 1 + (unsigned)rand_r(&seed) % 32,
			 nrem = 1 + (unsigned)rand_r(&seed) % 32;
		uint64_t ltot = 0, rtot = 0, bytes;
		unsigned max_sge = 1 + (unsigned)rand_r(&seed) % 8;
		int n;

		for (unsigned i = 0; i < nloc; i++) {
			uint32_t l = (uint32_t)rand_r(&seed) % 8192;
			loc[i] = (struct rdma_seg){buf + ltot, l, i};
			ltot += l;
		}
		for (unsigned i = 0; i < nrem; i++) {
			uint32_t l = (uint32_t)rand_r(&seed) % 8192;
			rem[i] = (struct rdma_rseg){0x1000000u * (i + 1), i, l};
			rtot += l;
		}
		bytes = ltot < rtot ? ltot : rtot;
		if (bytes)
			bytes = 1 + (uint64_t)rand_r(&seed) % bytes;
		n = rdma_rw_build(IBV_WR_RDMA_WRITE, rem, nrem, loc, nloc, bytes, max_sge, wr,
				  RDMA_RW_MAX_WR, sge, RDMA_RW_MAX_SGE);
		if (!bytes) {
			cr_assert_eq(n, 0);
			continue;
		}
		if (n == -E2BIG)
			continue;
		check_chain(n, rem, nrem, loc, nloc, bytes, max_sge, IBV_WR_RDMA_WRITE);
	}
}
