/* utgt-bench path sweep table and plot. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "initiator/report.h"

Test(bench_report_sweep, speedup_and_efficiency)
{
	struct ub_sweep_row rows[3] = {
	    {1, 100.0, 25600, false}, {2, 190.0, 48640, false}, {4, 300.0, 76800, false}};
	char *out = NULL;
	size_t len;
	FILE *f = open_memstream(&out, &len);

	ub_report_sweep(f, rows, 3);
	fclose(f);
	cr_assert(strstr(out, " paths        MiB/s         IOPS   speedup  efficiency\n"), "%s",
		  out);
	cr_assert(strstr(out, "     1        100.0        25600     1.00x      100.0%\n"), "%s",
		  out);
	cr_assert(strstr(out, "     2        190.0        48640     1.90x       95.0%\n"), "%s",
		  out);
	cr_assert(strstr(out, "     4        300.0        76800     3.00x       75.0%\n"), "%s",
		  out);
	free(out);
}

Test(bench_report_sweep, failed_rows_are_marked)
{
	struct ub_sweep_row rows[2] = {{1, 100.0, 1, false}, {2, 0, 0, true}};
	char *out = NULL;
	size_t len;
	FILE *f = open_memstream(&out, &len);

	ub_report_sweep(f, rows, 2);
	fclose(f);
	cr_assert(strstr(out, "     2       failed"), "%s", out);
	free(out);
}

Test(bench_report_sweep, gnuplot_writes_a_png)
{
	struct ub_sweep_row rows[2] = {{1, 100.0, 25600, false}, {2, 190.0, 48640, false}};
	char dir[] = "/tmp/ub-sweep-XXXXXX", png[256], err[256], buf[8] = {0};
	struct stat st;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(png, sizeof(png), "%s/s.png", dir);
	if (access("/usr/bin/gnuplot", X_OK) != 0)
		cr_skip_test("gnuplot not installed");
	cr_assert(ub_sweep_plot(rows, 2, png, err, sizeof(err)), "%s", err);
	cr_assert_eq(stat(png, &st), 0);
	f = fopen(png, "rb");
	cr_assert_eq(fread(buf, 1, 8, f), 8);
	fclose(f);
	cr_assert_eq(memcmp(buf, "\x89PNG\r\n\x1a\n", 8), 0, "not a PNG");
	unlink(png);
	snprintf(png, sizeof(png), "%s/s.png.dat", dir);
	unlink(png);
	snprintf(png, sizeof(png), "%s/s.png.gp", dir);
	unlink(png);
	rmdir(dir);
}
