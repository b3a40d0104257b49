/* GET LBA STATUS on an RBD image: the first run of blocks that share one state (mapped or
 * deallocated) from an offset on, decided from the allocated extents librbd reports
 * (rbd_diff_iterate2 against the image's creation, whole objects: the object map answers,
 * one read however large the image).  No librbd here, so it is unit-tested with made-up
 * extents (tests/unit/test_bs_rbd_extent.c); bs_rbd.c feeds it librbd's. */
#ifndef UTGT_BS_RBD_EXTENT_H
#define UTGT_BS_RBD_EXTENT_H

#include <stdbool.h>
#include <stdint.h>

struct bs_rbd_run {
	uint64_t off, end; /* the question: [off, end), block aligned */
	uint32_t block;	   /* a block partly allocated counts as mapped */
	bool started;	   /* the state at off is known */
	bool mapped;
	bool decided; /* the run's end is known too: stop iterating */
	uint64_t edge; /* where the run known so far ends */
};

void bs_rbd_run_init(struct bs_rbd_run *r, uint64_t off, uint64_t len, uint32_t block);
/* One extent as librbd reports it, in increasing offset order (exists: allocated; not:
 * a hole).  true once the run is decided: the caller stops the iteration. */
bool bs_rbd_run_extent(struct bs_rbd_run *r, uint64_t off, uint64_t len, bool exists);
/* The answer once the extents ended or the run was decided: the state at off and how many
 * bytes from off on share it (> 0, a multiple of the block, at most the length asked). */
void bs_rbd_run_result(const struct bs_rbd_run *r, bool *mapped, uint64_t *run);

#endif
