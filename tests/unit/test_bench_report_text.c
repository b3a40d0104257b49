/* utgt-bench fio-style text report. */
#include "bench_res_fixture.h"
#include "initiator/report.h"
#include "initiator/runner.h"

static struct ub_bench bench(void)
{
	struct ub_bench b;

	memset(&b, 0, sizeof(b));
	b.mp.policy = UB_POL_RR;
	b.mp.rr_iops = 1;
	return b;
}

static void has(const char *out, const char *needle)
{
	cr_assert(strstr(out, needle), "missing '%s' in:\n%s", needle, out);
}

Test(bench_report_text, job_block_like_fio)
{
	struct ub_job_res r;
	struct ub_bench b = bench();
	char *out = NULL;
	uint64_t gb[3] = {4096000, 0, 0};

	fixture_res(&r, "rand-read", 0);
	CAPTURE(out, ub_report_job_text(f, &r, gb, &b));
	has(out, "rand-read: (groupid=0, jobs=1): err= 0: pid=");
	/* 1000 x 4 KiB in 2 s: 500 IOPS, 2000 KiB/s = 1.95 MiB/s (2.05 MB/s), io=4000 KiB */
	has(out, "  read: IOPS=500, BW=2000KiB/s (2048kB/s)(4000KiB/2000msec)");
	has(out, "    slat (nsec): min=500, max=500, avg=500.00, stdev=0.00");
	has(out, "    clat (usec): min=100, max=1099, avg=599.50, stdev=288.82");
	has(out, "     lat (usec): min=100, max=1099");
	has(out, "    clat percentiles (usec):");
	/* exact where the histogram is exact, within a bucket (1/64) elsewhere, never past max */
	has(out, "|  1.00th=[  109],");
	has(out, "50.00th=[  602]");
	has(out, "99.99th=[ 1099]");
	has(out, "   bw (  KiB/s): min=  1000, max=  3000, per=100.00%, avg=2000.00, "
		 "stdev=1414.21, samples=2");
	has(out, "   iops        : min=  250, max=  750, avg=500.00");
	has(out, "  lat (usec)   : 250=15.00%, 500=25.00%, 750=24.60%, 1000=25.40%");
	has(out, "  lat (msec)   : 2=10.00%");
	has(out, "  IO depths    : 1=0.0%, 2=0.0%, 4=0.0%, 8=100.0%,");
	has(out, "     issued rwts: total=1000,0,0,0");
	has(out, "  paths        : 2, policy=rr rr-iops=1, LU naa.60a5");
	has(out, "     path 0    : up, ios=r=600/w=0 (60.0%), io=2400KiB, avg lat=600.0usec");
	has(out, "     path 1    : up, ios=r=400/w=0 (40.0%)");
	has(out, "failures=1, reconnects=1");
	has(out, "         1.500s  path 1 failed: test");
	cr_assert_null(strstr(out, "  write:"), "no write line for a read job");
	free(out);
	ub_res_free(&r);
}

Test(bench_report_text, error_and_verify_lines)
{
	struct ub_job_res r;
	struct ub_bench b = bench();
	char *out = NULL;

	fixture_res(&r, "v", 0);
	r.error = 5;
	snprintf(r.errmsg, sizeof(r.errmsg), "verify: mismatch at LBA 8");
	r.verify = true;
	r.verify_alg = UB_VERIFY_CRC32C;
	r.verify_blocks = 100;
	r.verify_errors = 1;
	snprintf(r.verify_msg, sizeof(r.verify_msg), "verify: mismatch at LBA 8");
	CAPTURE(out, ub_report_job_text(f, &r, NULL, &b));
	has(out, "err= 5");
	has(out, "  error        : verify: mismatch at LBA 8");
	has(out, "  verify       : crc32c, 100 blocks checked, 1 errors");
	free(out);
	ub_res_free(&r);
}

Test(bench_report_text, run_status_group)
{
	struct ub_job_res r[2];
	char *out = NULL;

	fixture_res(&r[0], "a", 0);
	fixture_res(&r[1], "b", 0);
	r[1].runtime_ns = 4000000000ull;
	CAPTURE(out, ub_report_group_text(f, r, 2, 0));
	/* 8000 KiB total over the longest run (4 s) */
	cr_assert(strstr(out, "Run status group 0 (all jobs):\n   READ: bw=2000KiB/s (2048kB/s), "
			      "1000KiB/s-2000KiB/s (1024kB/s-2048kB/s), io=8000KiB (8192kB), "
			      "run=2000-4000msec\n"),
		  "%s", out);
	free(out);
	ub_res_free(&r[0]);
	ub_res_free(&r[1]);
}

Test(bench_report_text, latency_units_switch_like_fio)
{
	cr_assert_eq(ub_lat_unit(100, 5000, 10), 0);
	cr_assert_eq(ub_lat_unit(50000, 200000, 5000), 1);
	cr_assert_eq(ub_lat_unit(50000, 200000, 500), 0, "small stdev keeps nsec");
	cr_assert_eq(ub_lat_unit(3000000, 900000000, 2e6), 2);
}

Test(bench_report_text, sample_stats)
{
	uint64_t v[] = {1024, 2048, 3072};
	struct ub_sample_stats s;

	ub_sample_stats(v, 3, 1024, &s);
	cr_assert_float_eq(s.min, 1, 1e-9);
	cr_assert_float_eq(s.max, 3, 1e-9);
	cr_assert_float_eq(s.avg, 2, 1e-9);
	cr_assert_float_eq(s.stdev, 1, 1e-9);
	ub_sample_stats(v, 0, 1, &s);
	cr_assert_eq(s.n, 0);
}

Test(bench_report_text, job_line)
{
	struct ub_job j;
	char *out = NULL;

	ub_job_defaults(&j);
	snprintf(j.name, sizeof(j.name), "seq-read");
	j.bs = 4u << 20;
	j.iodepth = 100;
	CAPTURE(out, ub_report_job_line(f, &j, 0, "iscsi"));
	cr_assert_str_eq(out,
			 "seq-read: (g=0): rw=read, bs=(R) 4096KiB-4096KiB, (W) "
			 "4096KiB-4096KiB, (T) 4096KiB-4096KiB, ioengine=iscsi, iodepth=100\n");
	free(out);
}
