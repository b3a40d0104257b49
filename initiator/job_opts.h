/* The option table behind ub_job_set(), listed for documentation checks and --help. */
#ifndef UB_JOB_OPTS_H
#define UB_JOB_OPTS_H

#include <stdbool.h>

/* The i-th option name (supported ones first, then those accepted without effect, with
 * *ignored set); NULL past the end. */
const char *ub_job_option_name(unsigned i, bool *ignored);

#endif
