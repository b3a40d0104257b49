/* RDMA READ/WRITE work request lists (see rdma_rw.h). */
#include "transports/rdma/rdma_rw.h"

#include <errno.h>
#include <string.h>

int rdma_rw_build(enum ibv_wr_opcode opcode, const struct rdma_rseg *rem, unsigned nrem,
		  const struct rdma_seg *loc, unsigned nloc, uint64_t bytes, unsigned max_sge,
		  struct ibv_send_wr *wr, unsigned max_wr, struct ibv_sge *sge, unsigned max_sges)
{
	unsigned ri = 0, li = 0, nwr = 0, nsge = 0;
	uint64_t roff = 0, loff = 0, left = bytes;

	if (!max_sge)
		return -EINVAL;
	while (left) {
		struct ibv_send_wr *w = NULL;
		uint64_t wr_len = 0;
		unsigned wr_sges = 0;

		while (ri < nrem && roff == rem[ri].len) {
			ri++;
			roff = 0;
		}
		if (ri == nrem)
			return -EINVAL;
		if (nwr == max_wr)
			return -E2BIG;
		if (wr) {
			w = &wr[nwr];
			memset(w, 0, sizeof(*w));
			w->opcode = opcode;
			w->wr.rdma.remote_addr = rem[ri].addr + roff;
			w->wr.rdma.rkey = rem[ri].rkey;
			w->sg_list = &sge[nsge];
			if (nwr)
				wr[nwr - 1].next = w;
		}
		while (left && roff < rem[ri].len && wr_sges < max_sge &&
		       wr_len < RDMA_WR_MAX_BYTES) {
			uint64_t take;

			while (li < nloc && loff == loc[li].len) {
				li++;
				loff = 0;
			}
			if (li == nloc)
				return -EINVAL;
			if (nsge == max_sges)
				return -E2BIG;
			take = loc[li].len - loff;
			if (take > rem[ri].len - roff)
				take = rem[ri].len - roff;
			if (take > left)
				take = left;
			if (take > RDMA_WR_MAX_BYTES - wr_len)
				take = RDMA_WR_MAX_BYTES - wr_len;
			if (wr) {
				sge[nsge].addr = (uintptr_t)loc[li].addr + loff;
				sge[nsge].length = (uint32_t)take;
				sge[nsge].lkey = loc[li].lkey;
			}
			nsge++;
			wr_sges++;
			loff += take;
			roff += take;
			left -= take;
			wr_len += take;
		}
		if (w)
			w->num_sge = (int)wr_sges;
		nwr++;
	}
	return (int)nwr;
}
