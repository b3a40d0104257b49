/* RDMA READ/WRITE work request lists from the peer's descriptors and local registered segments:
 * one work request per stretch of a remote descriptor, each gathering up to max_sge local
 * segments, none longer than RDMA_WR_MAX_BYTES.  Pure (no device), so the splitting is unit
 * tested; rdma_conn.c posts what it builds. */
#ifndef UTGT_RDMA_RW_H
#define UTGT_RDMA_RW_H

#include <infiniband/verbs.h>

#include "transports/rdma/rdma.h"

#define RDMA_RW_MAX_WR	  256
#define RDMA_RW_MAX_SGE	  1024
#define RDMA_WR_MAX_BYTES (1u << 30)

/* Build the chain for bytes bytes (wr[i].next links them; all unsignaled, wr_id 0; the caller
 * marks the last).  With wr == NULL it only counts.  Returns the number of work requests,
 * -EINVAL when bytes exceed what rem or loc describe, -E2BIG when max_wr/max_sges are short. */
int rdma_rw_build(enum ibv_wr_opcode opcode, const struct rdma_rseg *rem, unsigned nrem,
		  const struct rdma_seg *loc, unsigned nloc, uint64_t bytes, unsigned max_sge,
		  struct ibv_send_wr *wr, unsigned max_wr, struct ibv_sge *sge, unsigned max_sges);

#endif
