/* The next I/O of a job: its direction (rw mode, rwmixread, trimwrite pairs), its size (bs per
 * direction, bsrange, bssplit) and its offset in the job's region (sequential with holes or
 * backwards, strided zones, random through the random map or a distribution: zipf, pareto,
 * normal, zoned).  Pure computation over the job's options: no I/O, testable alone. */
#ifndef UB_IOGEN_H
#define UB_IOGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "initiator/job.h"
#include "initiator/workload.h"

struct ub_iogen {
	const struct ub_job *j;
	uint64_t region;     /* bytes */
	uint32_t lbs;	     /* LU block size: every offset and length is a multiple */
	uint64_t align;	     /* random offsets are multiples of this */
	struct ub_bsspec bs[UB_NDDIR];
	uint64_t pos[UB_NDDIR]; /* sequential cursors (bytes into the region) */
	struct ub_gen map;	/* random map, fixed block size only */
	bool use_map;
	uint64_t rng;
	unsigned seq_left; /* rw=randread:N: sequential I/Os left before a new random offset */
	uint64_t seq_next;
	bool pending_write; /* trimwrite: the write that follows a trim */
	uint64_t pending_off;
	uint64_t pending_len;
	uint64_t zone_start, zone_done; /* zonemode=strided */
	double zipf_zetan, zipf_eta, zipf_alpha, zipf_zeta2, pareto_pow;
	uint64_t nunits; /* region / align, for distributions */
};

struct ub_ionext {
	int ddir; /* enum ub_ddir */
	uint64_t off, len;
};

/* false with a reason when the options cannot work on this region and block size. */
bool ub_iogen_init(struct ub_iogen *g, const struct ub_job *j, uint64_t region, uint32_t lbs,
		   uint64_t seed, char *err, size_t errlen);
void ub_iogen_next(struct ub_iogen *g, struct ub_ionext *n);
/* Chosen size for a direction (exposed for tests). */
uint64_t ub_iogen_bs(struct ub_iogen *g, int ddir);
/* A uniform double in [0, 1). */
double ub_iogen_unit(uint64_t *rng);

#endif
