/* utgt-bench job options (job_opts.c): names, aliases, flags, validation, rw helpers. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "initiator/job.h"

Test(bench_job_opts, dash_and_underscore_are_the_same)
{
	struct ub_job j;
	char err[128];

	ub_job_defaults(&j);
	cr_assert_eq(ub_job_set(&j, "ramp-time", "2s", err, sizeof(err)), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.ramp_ns, 2000000000ull);
	cr_assert_eq(ub_job_set(&j, "time-based", NULL, err, sizeof(err)), UB_OPT_OK);
	cr_assert(j.time_based);
	cr_assert(ub_job_is_option("write-bw-log"));
	cr_assert_not(ub_job_is_option("paths"));
}

Test(bench_job_opts, validation)
{
	struct ub_job j;
	char err[256];

	ub_job_defaults(&j);
	snprintf(j.name, sizeof(j.name), "x");
	cr_assert_not(ub_job_validate(&j, err, sizeof(err)));
	cr_assert(strstr(err, "no filename"), "%s", err);
	snprintf(j.filename, sizeof(j.filename), "/dev/null");
	cr_assert(ub_job_validate(&j, err, sizeof(err)), "%s", err);
	j.time_based = true;
	cr_assert_not(ub_job_validate(&j, err, sizeof(err)));
	cr_assert(strstr(err, "runtime"), "%s", err);
	j.time_based = false;
	j.size = 512;
	cr_assert_not(ub_job_validate(&j, err, sizeof(err)));
}

Test(bench_job_opts, rw_helpers)
{
	struct ub_job j;

	ub_job_defaults(&j);
	j.rw = UB_RW_RANDRW;
	j.rwmixread = 100;
	cr_assert(ub_rw_reads(&j));
	cr_assert_not(ub_rw_writes(&j));
	j.rwmixread = 0;
	cr_assert_not(ub_rw_reads(&j));
	cr_assert(ub_rw_writes(&j));
	cr_assert(ub_rw_is_random(UB_RW_RANDREAD));
	cr_assert_not(ub_rw_is_random(UB_RW_RW));
	cr_assert_str_eq(ub_rw_name(UB_RW_RANDWRITE), "randwrite");
}
