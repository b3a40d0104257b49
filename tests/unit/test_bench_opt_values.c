/* utgt-bench structured option values (opt_values.c): the per-direction comma rule, patterns,
 * distributions, CPU lists, NUMA policies, steady-state criteria, cmdprio_bssplit. */
#include <criterion/criterion.h>
#include <string.h>

#include "initiator/job.h"
#include "initiator/opt_values.h"

static char err[256];

Test(bench_opt_values, ddir_list_applies_the_last_value_to_the_rest)
{
	uint64_t v[3] = {1, 1, 1};
	void *out[3] = {&v[0], &v[1], &v[2]};
	bool set[3];

	cr_assert(ub_ddir_list("4k", ub_val_size, out, set, err, sizeof(err)));
	cr_assert(set[0] && set[1] && set[2]);
	cr_assert_eq(v[2], 4096);
	v[0] = v[1] = v[2] = 1;
	cr_assert(ub_ddir_list("4k,8k,", ub_val_size, out, set, err, sizeof(err)));
	cr_assert(set[0] && set[1] && !set[2]);
	cr_assert_eq(v[1], 8192);
	cr_assert_eq(v[2], 1);
	cr_assert_not(ub_ddir_list("4k,x", ub_val_size, out, set, err, sizeof(err)));
	cr_assert(strstr(err, "'x'"), "%s", err);
}

Test(bench_opt_values, patterns)
{
	uint8_t p[8];
	unsigned n;

	cr_assert(ub_val_pattern("0xaa555aa5", p, sizeof(p), &n, err, sizeof(err)));
	cr_assert_eq(n, 4);
	cr_assert_eq(p[1], 0x55);
	cr_assert(ub_val_pattern("0x1", p, sizeof(p), &n, err, sizeof(err)));
	cr_assert_eq(n, 1);
	cr_assert_eq(p[0], 1);
	cr_assert(ub_val_pattern("'ab'0x00", p, sizeof(p), &n, err, sizeof(err)));
	cr_assert_eq(n, 3);
	cr_assert_eq(p[1], 'b');
	cr_assert(ub_val_pattern("258", p, sizeof(p), &n, err, sizeof(err)));
	cr_assert_eq(n, 2);
	cr_assert_eq(p[0], 2, "a decimal number is little-endian");
	cr_assert_not(ub_val_pattern("0x0102030405060708ff", p, sizeof(p), &n, err, sizeof(err)));
	cr_assert_not(ub_val_pattern("'open", p, sizeof(p), &n, err, sizeof(err)));
}

Test(bench_opt_values, distributions)
{
	struct ub_job j;

	ub_job_defaults(&j);
	cr_assert(ub_val_distribution("zipf:0.5", &j, err, sizeof(err)), "%s", err);
	cr_assert_eq(j.dist, UB_DIST_ZIPF);
	cr_assert_float_eq(j.dist_arg, 0.5, 1e-12);
	cr_assert(ub_val_distribution("pareto:0.9", &j, err, sizeof(err)), "%s", err);
	cr_assert(ub_val_distribution("normal:10", &j, err, sizeof(err)), "%s", err);
	cr_assert(ub_val_distribution("zoned:50/5:30/15:20/", &j, err, sizeof(err)), "%s", err);
	cr_assert_eq(j.nzones, 3);
	cr_assert_eq(j.zones[2].size_pct, 80, "an empty size takes the rest");
	cr_assert(ub_val_distribution("random", &j, err, sizeof(err)));
	cr_assert_eq(j.dist, UB_DIST_RANDOM);
	cr_assert_not(ub_val_distribution("zipf:1", &j, err, sizeof(err)));
	cr_assert_not(ub_val_distribution("zoned:50/5:30/15", &j, err, sizeof(err)));
	cr_assert(strstr(err, "100"), "%s", err);
	cr_assert_not(ub_val_distribution("zoned:50/5:50/95,10/10:90/90", &j, err, sizeof(err)));
	cr_assert_not(ub_val_distribution("lognormal:2", &j, err, sizeof(err)));
}

Test(bench_opt_values, cpu_lists_and_numa)
{
	uint64_t m[16];
	struct ub_job j;

	cr_assert(ub_val_cpulist("0-3,6,64", m, 1024, err, sizeof(err)), "%s", err);
	cr_assert_eq(m[0], 0x4f);
	cr_assert_eq(m[1], 1);
	cr_assert_not(ub_val_cpulist("3-1", m, 1024, err, sizeof(err)));
	cr_assert_not(ub_val_cpulist("2000", m, 1024, err, sizeof(err)));
	ub_job_defaults(&j);
	cr_assert(ub_val_numa_policy("interleave:0-1", &j, err, sizeof(err)), "%s", err);
	cr_assert_eq(j.numa_mem_mode, 2);
	cr_assert_eq(j.numa_mem_nodes, 3);
	cr_assert(ub_val_numa_policy("local", &j, err, sizeof(err)));
	cr_assert_not(ub_val_numa_policy("bind", &j, err, sizeof(err)));
}

Test(bench_opt_values, steady_state_and_cmdprio_bssplit)
{
	struct ub_job j;

	ub_job_defaults(&j);
	cr_assert(ub_val_steadystate("iops:10%", &j, err, sizeof(err)), "%s", err);
	cr_assert_eq(j.ss_mode, 1);
	cr_assert(j.ss_pct);
	cr_assert(ub_val_steadystate("bw_slope:1%", &j, err, sizeof(err)));
	cr_assert_eq(j.ss_mode, 4);
	cr_assert_not(ub_val_steadystate("latency:1", &j, err, sizeof(err)));
	cr_assert(ub_val_cmdprio_bssplit("64k/25/1/1:64k/75/3/2:1024k/0,1024k/0", &j, err,
					 sizeof(err)),
		  "%s", err);
	cr_assert_eq(j.nprio_split, 4);
	cr_assert_eq(j.prio_split[1].cls, 3);
	cr_assert_eq(j.prio_split[1].level, 2);
	cr_assert_eq(j.prio_split[3].ddir, 1);
	cr_assert_not(ub_val_cmdprio_bssplit("64k/25/1", &j, err, sizeof(err)));
}

Test(bench_opt_values, verify_and_sg_names)
{
	enum ub_verify v;
	int m;

	cr_assert(ub_val_verify("sha256", &v, err, sizeof(err)));
	cr_assert_eq(v, UB_VERIFY_SHA256);
	cr_assert_str_eq(ub_verify_name(UB_VERIFY_MD5), "md5");
	cr_assert(ub_val_sg_mode("verify_bytchk_11", &m, err, sizeof(err)));
	cr_assert_eq(m, UB_SG_VERIFY_11);
	cr_assert_not(ub_val_sg_mode("write_stream", &m, err, sizeof(err)));
	cr_assert(ub_val_continue_on_error("io", (unsigned *)&m, err, sizeof(err)));
	cr_assert_eq(m, 3);
}
