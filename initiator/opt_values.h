/* Readers for the structured values of fio options: per-direction lists ("4k,8k,"), bssplit,
 * bsrange, rw with an offset modifier, random_distribution, percentile lists, CPU and NUMA
 * node lists, data patterns, steady-state criteria.  Each returns false with a reason. */
#ifndef UB_OPT_VALUES_H
#define UB_OPT_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "initiator/job.h"

/* fio's per-direction rule: "a", "a,b", "a,b,c", ",b", "a,b," ... A value not followed by a
 * comma also applies to the directions after it; an empty one leaves that direction alone.
 * parse_one(text, out) reads one value.  set[d] says which directions were given. */
bool ub_ddir_list(const char *val, bool (*parse_one)(const char *, void *, char *, size_t),
		  void *out[3], bool set[3], char *err, size_t errlen);

bool ub_val_size(const char *s, void *out, char *err, size_t errlen);
bool ub_val_bsrange(const char *s, void *out, char *err, size_t errlen); /* ub_bsspec */
bool ub_val_bssplit(const char *s, void *out, char *err, size_t errlen); /* ub_bsspec */
bool ub_val_rw(const char *s, struct ub_job *j, char *err, size_t errlen);
bool ub_val_distribution(const char *s, struct ub_job *j, char *err, size_t errlen);
bool ub_val_percentiles(const char *s, double *out, unsigned max, unsigned *n, char *err,
			size_t errlen);
/* "0-3,6": bit mask of up to 1024 entries (max is the number of bits). */
bool ub_val_cpulist(const char *s, uint64_t *mask, unsigned max, char *err, size_t errlen);
/* "0xaa55", "'text'", "12" (and several of them joined): up to cap bytes. */
bool ub_val_pattern(const char *s, uint8_t *out, unsigned cap, unsigned *len, char *err,
		    size_t errlen);
bool ub_val_verify(const char *s, enum ub_verify *v, char *err, size_t errlen);
bool ub_val_cmdprio_bssplit(const char *s, struct ub_job *j, char *err, size_t errlen);
bool ub_val_numa_policy(const char *s, struct ub_job *j, char *err, size_t errlen);
bool ub_val_steadystate(const char *s, struct ub_job *j, char *err, size_t errlen);
bool ub_val_continue_on_error(const char *s, unsigned *mask, char *err, size_t errlen);
bool ub_val_sg_mode(const char *s, int *mode, char *err, size_t errlen);
const char *ub_verify_name(enum ub_verify v);

#endif
