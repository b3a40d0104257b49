/* utgt-bench --output-format=json. */
#include "bench_json_check.h"
#include "bench_res_fixture.h"
#include "initiator/report.h"
#include "initiator/runner.h"

Test(bench_report_json, fio_layout_with_paths_events_verify)
{
	struct ub_job_res r[2];
	struct ub_run run = {.res = r, .nres = 2, .ngroups = 2};
	struct ub_bench b;
	char *out = NULL;

	memset(&b, 0, sizeof(b));
	b.mp.rr_iops = 1;
	fixture_res(&r[0], "a\"b", 0);
	fixture_res(&r[1], "c", 1);
	r[1].verify = true;
	r[1].verify_blocks = 8;
	CAPTURE(out, ub_report_json(f, &run, &b));
	cr_assert(json_valid(out), "invalid JSON:\n%s", out);
	cr_assert(strstr(out, "\"jobname\" : \"a\\\"b\""));
	cr_assert(strstr(out, "\"io_bytes\" : 4096000"));
	cr_assert(strstr(out, "\"bw_bytes\" : 2048000"));
	cr_assert(strstr(out, "\"iops\" : 500.000000"));
	cr_assert(strstr(out, "\"total_ios\" : 1000"));
	cr_assert(strstr(out, "\"clat_ns\" : {"));
	cr_assert(strstr(out, "\"50.000000\" : "));
	cr_assert(strstr(out, "\"share\" : 0.600000"));
	cr_assert(strstr(out, "\"message\" : \"path 1 failed: test\""));
	cr_assert(strstr(out, "\"blocks\" : 8"));
	cr_assert(strstr(out, "\"groupid\" : 1"));
	free(out);
	ub_res_free(&r[0]);
	ub_res_free(&r[1]);
}
