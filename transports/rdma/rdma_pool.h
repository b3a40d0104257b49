/* The registered data pool of one device (per event thread, so it takes no lock): memory the
 * SCSI core reads into and writes from, which RDMA READ fills and RDMA WRITE drains.
 *
 * Memory comes in slabs registered once (one memory region each) and is handed out in fixed
 * chunks; a transfer gets as many chunks as it needs, all at once or not at all, so nothing
 * waits holding part of what it needs.  Capacity grows by slabs as connections are accepted
 * (each asks for what its request limit can keep in flight), up to a cap.  When the chunks a
 * request needs are not free, it queues (FIFO, so a large transfer is not starved by small
 * ones) and is handed its chunks when enough come back.
 *
 * A pool made with pd == NULL registers nothing (lkey 0): the allocator alone, for tests. */
#ifndef UTGT_RDMA_POOL_H
#define UTGT_RDMA_POOL_H

#include <stdint.h>

#include "transports/rdma/rdma.h"

struct ibv_pd;

struct rdma_pool_waiter {
	uint64_t len;
	struct rdma_seg *segs;
	unsigned max;
	/* Called (on the pool's thread) with the segments filled in: nsegs chunks. */
	void (*ready)(struct rdma_pool_waiter *w, int nsegs);
	/* private */
	struct rdma_pool_waiter *next;
};

struct rdma_pool *rdma_pool_create(struct ibv_pd *pd, uint32_t chunk, uint64_t slab, uint64_t cap);
/* Every chunk must be back. */
void rdma_pool_destroy(struct rdma_pool *p);
/* Add at least bytes of capacity (whole slabs), up to the cap.  0 or -errno. */
int rdma_pool_grow(struct rdma_pool *p, uint64_t bytes);
/* Chunks for len bytes into segs (room for max; it must hold one per chunk, neighbours are
 * merged): the number of segments (0 for len 0); -EAGAIN: not free now, w queued (w == NULL:
 * not queued); -E2BIG: can never be served (more than the cap, or more chunks than max);
 * -ENOMEM or another -errno: growing (registering) failed. */
int rdma_pool_get(struct rdma_pool *p, uint64_t len, struct rdma_seg *segs, unsigned max,
		  struct rdma_pool_waiter *w);
void rdma_pool_cancel(struct rdma_pool *p, struct rdma_pool_waiter *w);
void rdma_pool_put(struct rdma_pool *p, const struct rdma_seg *segs, unsigned n);
uint64_t rdma_pool_capacity(const struct rdma_pool *p);
uint64_t rdma_pool_free_bytes(const struct rdma_pool *p);
uint32_t rdma_pool_chunk(const struct rdma_pool *p);

#endif
