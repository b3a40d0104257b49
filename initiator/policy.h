/* Which path gets the next command: round robin switching every N commands (ESXi's
 * VMW_PSP_RR iops=N) over the active/optimized ports only, non-optimized ones only when no
 * optimized one works (rr; also named alua); the same over every port that can serve I/O
 * (rr-all); or least outstanding commands (queue-length).  Pure functions over a snapshot of
 * the paths, so they are testable without a target. */
#ifndef UB_POLICY_H
#define UB_POLICY_H

#include <stdbool.h>

enum ub_policy { UB_POL_RR, UB_POL_RR_ALL, UB_POL_QUEUE_LENGTH };

struct ub_path_view {
	bool usable;	   /* connected and not being failed over */
	int alua;	   /* enum ub_alua_state; UB_ALUA_UNKNOWN when not reported */
	unsigned inflight; /* commands outstanding on the path */
};

struct ub_rr {
	int cur;       /* path used last, -1 before the first pick */
	unsigned used; /* commands sent to cur since it was chosen */
};

/* Index of the chosen path, or -1 when no path can take I/O. */
int ub_policy_pick(enum ub_policy pol, unsigned rr_iops, struct ub_rr *rr,
		   const struct ub_path_view *v, unsigned n);
const char *ub_policy_name(enum ub_policy pol);
bool ub_policy_parse(const char *s, enum ub_policy *pol);

#endif
