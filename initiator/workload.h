/* Where the next I/O goes and whether it reads or writes.  Sequential jobs walk the region;
 * random jobs visit every block of the region exactly once per pass in a pseudo-random order
 * (fio's random map, without the map: a keyed bijection over the next power of two). */
#ifndef UB_WORKLOAD_H
#define UB_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "initiator/job.h"

struct ub_gen {
	bool random;
	unsigned rwmixread;
	bool mixed, reads;
	uint64_t nchunks;
	uint64_t pos;	 /* chunks emitted in the current pass */
	uint64_t ctr;	 /* permutation input counter */
	uint64_t passes; /* completed passes */
	uint64_t mask;
	unsigned shift;
	uint64_t key[3], mul[3];
	uint64_t rng;
};

uint64_t ub_rand64(uint64_t *state);
void ub_gen_init(struct ub_gen *g, enum ub_rw rw, unsigned rwmixread, uint64_t nchunks,
		 uint64_t seed);
/* Next chunk index in [0, nchunks); a pass ends after nchunks calls and the next begins
 * (with a new order when random). */
uint64_t ub_gen_next(struct ub_gen *g);
bool ub_gen_is_read(struct ub_gen *g);

#endif
