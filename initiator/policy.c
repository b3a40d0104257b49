/* Path selection policies. */
#include "initiator/policy.h"
#include "initiator/scsi_info.h"

#include <string.h>

#define MAX_PATHS 64

static bool can_serve(int alua)
{
	return alua != UB_ALUA_STANDBY && alua != UB_ALUA_UNAVAILABLE && alua != UB_ALUA_OFFLINE;
}

/* Candidate set: usable paths in the best ALUA class present.  For rr (and its alias alua)
 * the classes are AO (or unknown) > ANO > anything usable, as dm-multipath's group_by_prio
 * with the alua prioritizer and ESXi's PSP_RR over an ALUA SATP group them; for rr-all and
 * queue-length every port that can serve I/O at all (not standby/unavailable/offline),
 * unless no other path is left. */
static unsigned candidates(enum ub_policy pol, const struct ub_path_view *v, unsigned n, bool *cand)
{
	unsigned cnt = 0;

	for (int pass = 0; pass < 3 && !cnt; pass++) {
		for (unsigned i = 0; i < n; i++) {
			bool ok = v[i].usable;
			if (ok && pol == UB_POL_RR && pass == 0)
				ok = v[i].alua == UB_ALUA_AO || v[i].alua == UB_ALUA_UNKNOWN;
			else if (ok && pol == UB_POL_RR && pass == 1)
				ok = v[i].alua == UB_ALUA_ANO;
			else if (ok && pass < 2)
				ok = can_serve(v[i].alua);
			cand[i] = ok;
			cnt += ok;
		}
	}
	return cnt;
}

int ub_policy_pick(enum ub_policy pol, unsigned rr_iops, struct ub_rr *rr,
		   const struct ub_path_view *v, unsigned n)
{
	bool cand[MAX_PATHS];
	int best = -1;

	if (n > MAX_PATHS)
		n = MAX_PATHS;
	if (!candidates(pol, v, n, cand))
		return -1;
	if (!rr_iops)
		rr_iops = 1;
	if (pol == UB_POL_QUEUE_LENGTH) {
		/* Least outstanding; ties go to the next path after the last pick so equal
		 * paths share the load instead of the first one taking everything. */
		for (unsigned k = 1; k <= n; k++) {
			unsigned i = (unsigned)(rr->cur + (int)k + (int)n) % n;
			if (cand[i] && (best < 0 || v[i].inflight < v[best].inflight))
				best = (int)i;
		}
		rr->cur = best;
		rr->used = 1;
		return best;
	}
	if (rr->cur >= 0 && (unsigned)rr->cur < n && cand[rr->cur] && rr->used < rr_iops) {
		rr->used++;
		return rr->cur;
	}
	for (unsigned k = 1; k <= n; k++) {
		unsigned i = (unsigned)(rr->cur + (int)k + (int)n) % n;
		if (cand[i]) {
			rr->cur = (int)i;
			rr->used = 1;
			return (int)i;
		}
	}
	return -1;
}

const char *ub_policy_name(enum ub_policy pol)
{
	switch (pol) {
	case UB_POL_RR:
		return "rr";
	case UB_POL_RR_ALL:
		return "rr-all";
	case UB_POL_QUEUE_LENGTH:
		return "queue-length";
	}
	return "?";
}

bool ub_policy_parse(const char *s, enum ub_policy *pol)
{
	/* alua: the name this policy had before rr honoured ALUA itself */
	if (!strcmp(s, "rr") || !strcmp(s, "round-robin") || !strcmp(s, "alua"))
		*pol = UB_POL_RR;
	else if (!strcmp(s, "rr-all"))
		*pol = UB_POL_RR_ALL;
	else if (!strcmp(s, "queue-length") || !strcmp(s, "ql") || !strcmp(s, "queue_length"))
		*pol = UB_POL_QUEUE_LENGTH;
	else
		return false;
	return true;
}
