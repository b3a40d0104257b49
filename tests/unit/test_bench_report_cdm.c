/* utgt-bench CrystalDiskMark table. */
#include "bench_res_fixture.h"
#include "initiator/report.h"

Test(bench_report_cdm, rows_in_cdm_units)
{
	struct ub_job_res r[2];
	struct ub_bench b;
	char *out = NULL;

	memset(&b, 0, sizeof(b));
	b.mp.rr_iops = 1;
	b.npaths = 2;
	fixture_res(&r[0], "RND4K-Q32T1-read", 0);
	fixture_res(&r[1], "RND4K-Q32T1-write", 1);
	r[0].iodepth = r[1].iodepth = 32;
	r[1].rw = UB_RW_RANDWRITE;
	{ /* the same numbers as writes */
		struct ub_ddir_res t = r[1].d[1];
		r[1].d[1] = r[1].d[0];
		r[1].d[0] = t;
	}
	CAPTURE(out, ub_report_cdm(f, r, 2, "iscsi://h/iqn.t/0", 1, 1ull << 30, &b));
	/* 4096000 bytes in 2 s = 2.048 MB/s, 500 IOPS, mean latency 600 us */
	cr_assert(strstr(out,
			 "[Read]\n  RND    4KiB (Q= 32, T= 1):     2.048 MB/s [    500.0 IOPS] "
			 "<   600.00 us>\n"),
		  "%s", out);
	cr_assert(strstr(out, "[Write]\n  RND    4KiB (Q= 32, T= 1):     2.048 MB/s"), "%s", out);
	cr_assert(strstr(out, "Test: 1024 MiB (x1)"), "%s", out);
	cr_assert(strstr(out, "<paths: 2, policy rr iops=1>"), "%s", out);
	cr_assert(strstr(out, " Target: iscsi://h/iqn.t/0"), "%s", out);
	free(out);
	ub_res_free(&r[0]);
	ub_res_free(&r[1]);
}
