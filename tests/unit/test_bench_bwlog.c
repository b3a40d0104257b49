/* utgt-bench per-second bandwidth log (fio format). */
#include <unistd.h>

#include "bench_res_fixture.h"
#include "initiator/report.h"

Test(bench_bwlog, one_line_per_second_in_fio_format)
{
	struct ub_job_res r;
	char dir[] = "/tmp/ub-bw-XXXXXX", prefix[256], path[300], err[256], text[256] = {0};
	FILE *f;

	fixture_res(&r, "j", 0);
	cr_assert_not_null(mkdtemp(dir));
	snprintf(prefix, sizeof(prefix), "%s/run", dir);
	cr_assert(ub_write_bw_log(prefix, 0, &r, err, sizeof(err)), "%s", err);
	snprintf(path, sizeof(path), "%s_bw.1.log", prefix);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	cr_assert_gt(fread(text, 1, sizeof(text) - 1, f), 0);
	fclose(f);
	cr_assert_str_eq(text, "1000, 1000, 0, 4096, 0\n2000, 3000, 0, 4096, 0\n");
	unlink(path);
	snprintf(prefix, sizeof(prefix), "%s/nodir/run", dir);
	cr_assert_not(ub_write_bw_log(prefix, 0, &r, err, sizeof(err)));
	cr_assert(strstr(err, "No such file"), "%s", err);
	rmdir(dir);
	ub_res_free(&r);
}
