/* utgt-bench latency/iops/bw logs written while running (iolog.c): per I/O lines, averaged
 * windows, offsets and priorities as fio writes them. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "initiator/iolog.h"

static char dir[] = "/tmp/ub-iolog-XXXXXX";

static void slurp(const char *kind, char *buf, size_t len)
{
	char path[300];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/j_%s.1.log", dir, kind);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(path);
}

Test(bench_iolog, per_io_latency_lines)
{
	struct ub_job j;
	struct ub_iolog l;
	char err[256], text[512];

	cr_assert_not_null(mkdtemp(dir));
	ub_job_defaults(&j);
	snprintf(j.lat_log, sizeof(j.lat_log), "%s/j", dir);
	j.log_offset = true;
	cr_assert(ub_iolog_open(&l, &j, 1, err, sizeof(err)), "%s", err);
	ub_iolog_io(&l, 5, 0, 4096, 8192, 0, 100, 2000, 2100);
	ub_iolog_io(&l, 7, 1, 4096, 0, 0, 200, 3000, 3200);
	ub_iolog_close(&l, 10);
	slurp("lat", text, sizeof(text));
	cr_assert_str_eq(text, "5, 2100, 0, 4096, 8192, 0\n7, 3200, 1, 4096, 0, 0\n");
	slurp("clat", text, sizeof(text));
	cr_assert_str_eq(text, "5, 2000, 0, 4096, 8192, 0\n7, 3000, 1, 4096, 0, 0\n");
	slurp("slat", text, sizeof(text));
	cr_assert(strstr(text, "5, 100, 0"), "%s", text);
	rmdir(dir);
}

Test(bench_iolog, averaged_windows_for_every_log)
{
	struct ub_job j;
	struct ub_iolog l;
	char err[256], text[512];

	cr_assert_not_null(mkdtemp(dir));
	ub_job_defaults(&j);
	snprintf(j.lat_log, sizeof(j.lat_log), "%s/j", dir);
	snprintf(j.bw_log, sizeof(j.bw_log), "%s/j", dir);
	snprintf(j.iops_log, sizeof(j.iops_log), "%s/j", dir);
	j.log_avg_msec = 100;
	cr_assert(ub_iolog_open(&l, &j, 1, err, sizeof(err)), "%s", err);
	for (int i = 0; i < 10; i++)
		ub_iolog_io(&l, 10 + i, 0, 4096, 0, 0, 0, 1000 + i * 100, 1000 + i * 100);
	ub_iolog_io(&l, 150, 0, 4096, 0, 0, 0, 500, 500);
	ub_iolog_close(&l, 200);
	slurp("lat", text, sizeof(text));
	cr_assert_str_eq(text, "100, 1450, 0, 4096, 0\n200, 500, 0, 4096, 0\n");
	slurp("iops", text, sizeof(text));
	cr_assert_str_eq(text, "100, 100, 0, 4096, 0\n200, 10, 0, 4096, 0\n");
	slurp("bw", text, sizeof(text));
	cr_assert_str_eq(text, "100, 400, 0, 4096, 0\n200, 40, 0, 4096, 0\n", "%s", text);
	slurp("clat", text, sizeof(text));
	slurp("slat", text, sizeof(text));
	rmdir(dir);
}
