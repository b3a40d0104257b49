/* utgt-bench terse output (report_terse.c): fio's version 3 line, field for field where
 * scripts read it (121 fields: read at 6.., write at 47.., cpu, depths, latencies). */
#include "bench_res_fixture.h"
#include "initiator/report.h"
#include "initiator/runner.h"

Test(bench_report_terse, a_version_3_line_per_job)
{
	struct ub_job_res r;
	struct ub_run run = {.res = &r, .nres = 1, .ngroups = 1};
	char *out = NULL, *fld[200], *save = NULL;
	unsigned n = 0;

	fixture_res(&r, "j", 0);
	CAPTURE(out, ub_report_terse(f, &run));
	cr_assert_eq(out[strlen(out) - 1], '\n');
	out[strlen(out) - 1] = '\0';
	for (char *t = strtok_r(out, ";", &save); t && n < 200; t = strtok_r(NULL, ";", &save))
		fld[n++] = t;
	cr_assert_eq(n, 121, "fio 3.33 prints 121 fields, got %u", n);
	cr_assert_str_eq(fld[0], "3");
	cr_assert_str_eq(fld[2], "j");
	cr_assert_str_eq(fld[5], "4000", "read KiB");
	cr_assert_str_eq(fld[6], "2000", "read KiB/s");
	cr_assert_str_eq(fld[7], "500", "read IOPS");
	cr_assert_str_eq(fld[8], "2000", "runtime ms");
	cr_assert_str_eq(fld[13], "100", "clat min in usec");
	cr_assert(!strncmp(fld[17], "1.000000%=", 10), "%s", fld[17]);
	cr_assert_str_eq(fld[34], "0%=0", "unused percentile slots");
	cr_assert_str_eq(fld[46], "0", "no write KiB");
	free(out);
	ub_res_free(&r);
}
