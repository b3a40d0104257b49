/* utgt-bench rados bench table and summary. */
#include "bench_res_fixture.h"
#include "initiator/report.h"

Test(bench_report_rados, rows_and_summary)
{
	struct ub_rados_state st = {.write = true, .bs = 4194304};
	struct ub_tick t = {.sec = 1,
			    .inflight = 16,
			    .started = 45,
			    .finished = 29,
			    .bytes_total = 29ull * 4194304,
			    .bytes_sec = 29ull * 4194304,
			    .last_lat_s = 0.4166,
			    .avg_lat_s = 0.37};
	struct ub_job_res r;
	char *out = NULL;

	CAPTURE(out, (st.f = f, ub_rados_tick(&st, &t), t.sec = 2, t.bytes_sec = 31ull * 4194304,
		      t.bytes_total += t.bytes_sec, ub_rados_tick(&st, &t)));
	cr_assert(strstr(out, "   sec Cur ops   started  finished  avg MB/s  cur MB/s  last lat"
			      "   avg lat\n"
			      "     1      16        45        29       116       116    0.4166"
			      "      0.37\n"
			      "     2      16        45        29       120       124    0.4166"),
		  "%s", out);
	free(out);
	fixture_res(&r, "rados-write", 0);
	{ /* the same numbers as writes */
		struct ub_ddir_res t = r.d[1];
		r.d[1] = r.d[0];
		r.d[0] = t;
	}
	CAPTURE(out, (st.f = f, ub_rados_summary(&st, &r)));
	cr_assert(strstr(out, "Total time run:         2.000000\nTotal writes made:      1000\n"
			      "Write size:             4194304\nBandwidth (MB/sec):     1.953\n"),
		  "%s", out);
	cr_assert(strstr(out, "Max bandwidth (MB/sec): 124\nMin bandwidth (MB/sec): 116\n"), "%s",
		  out);
	cr_assert(strstr(out, "Average Latency:        0.0006\n"), "%s", out);
	free(out);
	ub_res_free(&r);
}
