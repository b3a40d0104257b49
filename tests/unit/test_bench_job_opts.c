/* utgt-bench job options (job_opts.c): names, aliases, per-direction values, flags, options
 * accepted without effect, validation, rw helpers, and that docs/utgt-bench.md lists every
 * option of the table. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "initiator/job.h"
#include "initiator/job_opts.h"

static struct ub_job j;
static char err[512];

static void init(void)
{
	ub_job_defaults(&j);
	snprintf(j.name, sizeof(j.name), "x");
}

TestSuite(bench_job_opts, .init = init);

static enum ub_opt_result set(const char *k, const char *v)
{
	err[0] = '\0';
	return ub_job_set(&j, k, v, err, sizeof(err));
}

Test(bench_job_opts, dash_and_underscore_are_the_same)
{
	cr_assert_eq(set("ramp-time", "2s"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.ramp_ns, 2000000000ull);
	cr_assert_eq(set("time-based", NULL), UB_OPT_OK);
	cr_assert(j.time_based);
	cr_assert(ub_job_is_option("write-bw-log"));
	cr_assert_not(ub_job_is_option("paths"));
}

Test(bench_job_opts, bs_per_direction_follows_fios_comma_rule)
{
	struct ub_bsspec r, w, t;

	cr_assert_eq(set("bs", "8k,32k"), UB_OPT_OK, "%s", err);
	r = ub_job_bsspec(&j, 0), w = ub_job_bsspec(&j, 1), t = ub_job_bsspec(&j, 2);
	cr_assert_eq(r.min, 8192);
	cr_assert_eq(w.min, 32768);
	cr_assert_eq(t.min, 32768, "a last value without a comma applies to trims too");
	cr_assert_eq(j.bs, 32768, "bs is the largest, for buffers");
	ub_job_defaults(&j);
	cr_assert_eq(set("bs", ",8k,"), UB_OPT_OK, "%s", err);
	cr_assert_eq(ub_job_bsspec(&j, 0).min, 4096, "an empty value keeps the default");
	cr_assert_eq(ub_job_bsspec(&j, 1).min, 8192);
	cr_assert_eq(ub_job_bsspec(&j, 2).min, 4096);
	cr_assert_eq(set("bs", "0"), UB_OPT_BAD);
	cr_assert_eq(set("bs", "4k,8k,16k,32k"), UB_OPT_BAD);
	cr_assert(strstr(err, "three"), "%s", err);
}

Test(bench_job_opts, bssplit_and_bsrange)
{
	struct ub_bsspec r, w;

	cr_assert_eq(set("bssplit", "64k/40:1024k/60,1024k/100"), UB_OPT_OK, "%s", err);
	r = ub_job_bsspec(&j, 0);
	w = ub_job_bsspec(&j, 1);
	cr_assert_eq(r.nsplit, 2);
	cr_assert_eq(r.split[0].bs, 65536);
	cr_assert_eq(r.split[0].pct, 40);
	cr_assert_eq(r.min, 65536);
	cr_assert_eq(r.max, 1 << 20);
	cr_assert_eq(w.nsplit, 1);
	cr_assert_eq(w.split[0].pct, 100);
	cr_assert_eq(set("bssplit", "4k/50:8k/:16k/"), UB_OPT_OK, "%s", err);
	cr_assert_eq(ub_job_bsspec(&j, 0).split[1].pct, 25, "the rest shared equally");
	cr_assert_eq(set("bssplit", "4k/70:8k/40"), UB_OPT_BAD);
	cr_assert(strstr(err, "110"), "%s", err);
	cr_assert_eq(set("bsrange", "4k-16k"), UB_OPT_OK, "%s", err);
	cr_assert_eq(ub_job_bsspec(&j, 1).min, 4096);
	cr_assert_eq(ub_job_bsspec(&j, 1).max, 16384);
	cr_assert_eq(set("bsrange", "16k-4k"), UB_OPT_BAD);
}

Test(bench_job_opts, rw_with_offset_modifiers_and_trim_modes)
{
	cr_assert_eq(set("rw", "read:-8k"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.rw, UB_RW_READ);
	cr_assert_eq(j.rw_skip, -8192);
	cr_assert_eq(set("rw", "write:112k"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.rw_skip, 112 * 1024);
	cr_assert_eq(set("readwrite", "randread:8"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.rw_rand_seq, 8);
	cr_assert_eq(j.rw_skip, 0);
	for (int m = UB_RW_TRIM; m <= UB_RW_RANDTRIMWRITE; m++) {
		cr_assert_eq(set("rw", ub_rw_name((enum ub_rw)m)), UB_OPT_OK, "%s", err);
		cr_assert_eq(j.rw, (enum ub_rw)m);
		cr_assert(ub_rw_trims(&j));
	}
	cr_assert_eq(set("rw", "sideways"), UB_OPT_BAD);
	cr_assert(strstr(err, "sideways"), "%s", err);
}

Test(bench_job_opts, rates_times_and_numbers)
{
	cr_assert_eq(set("rate", "300,300,300"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.rate[0], 300);
	cr_assert_eq(j.rate[2], 300);
	cr_assert_eq(set("rate_iops", ",50"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.rate_iops[0], 0);
	cr_assert_eq(j.rate_iops[1], 50);
	cr_assert_eq(set("ratemin", "1m"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.rate_min[1], 1 << 20);
	cr_assert_eq(set("rate_process", "poisson"), UB_OPT_OK);
	cr_assert(j.rate_poisson);
	cr_assert_eq(set("thinktime", "2000"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.thinktime_us, 2000, "thinktime is in microseconds");
	cr_assert_eq(set("thinktime", "2ms"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.thinktime_us, 2000);
	cr_assert_eq(set("latency_target", "500000"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.latency_target_ns, 500000000ull, "latency_target is in microseconds");
	cr_assert_eq(set("startdelay", "2-5"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.startdelay_ns, 2000000000ull);
	cr_assert_eq(j.startdelay_max_ns, 5000000000ull);
	cr_assert_eq(set("number_ios", "1000"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.number_ios, 1000);
	cr_assert_eq(set("io_size", "120g"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.io_size, 120ull << 30);
	cr_assert_eq(set("offset", "50%"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.offset_pct, 50);
	cr_assert_eq(set("flow", "-8"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.flow, -8);
	cr_assert_eq(set("percentile_list", "99.0:99.9:100"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.npercentiles, 3);
	cr_assert_float_eq(j.percentiles[1], 99.9, 1e-9);
}

Test(bench_job_opts, verify_variants_and_patterns)
{
	static const char *const names[] = {"md5", "sha1", "sha256", "crc64", "crc32", "meta",
					    "crc32c-intel"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_assert_eq(set("verify", names[i]), UB_OPT_OK, "%s: %s", names[i], err);
	cr_assert_eq(j.verify, UB_VERIFY_CRC32C);
	cr_assert_eq(set("verify", "xxhash"), UB_OPT_BAD);
	cr_assert_eq(set("verify_pattern", "0xaa555aa5"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.verify_pattern_len, 4);
	cr_assert_eq(j.verify_pattern[0], 0xaa);
	cr_assert_eq(j.verify_pattern[3], 0xa5);
	cr_assert_eq(set("buffer_pattern", "0x01"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.buffer_pattern_len, 1);
	cr_assert_eq(set("buffer_pattern", "'ab'"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.buffer_pattern_len, 2);
	cr_assert_eq(j.buffer_pattern[1], 'b');
	cr_assert_eq(set("verify_backlog", "16"), UB_OPT_OK);
	cr_assert_eq(set("verify_only", NULL), UB_OPT_OK);
	cr_assert(j.verify_only);
}

Test(bench_job_opts, buffered_is_the_opposite_of_direct)
{
	cr_assert(j.direct);
	cr_assert_eq(set("buffered", "1"), UB_OPT_OK);
	cr_assert_not(j.direct);
	cr_assert_eq(set("buffered", "0"), UB_OPT_OK);
	cr_assert(j.direct);
	cr_assert_eq(set("sync", "1"), UB_OPT_OK);
	cr_assert(j.sync_writes);
}

/* Where the buffers start changes what a buffered job measures (docs/utgt-bench.md): fio's
 * mem and mem_align are options with an effect, not warnings. */
Test(bench_job_opts, mem_and_mem_align_place_the_buffers)
{
	cr_assert_eq(j.mem, UB_MEM_MALLOC);
	cr_assert_eq(j.mem_align, 0);
	cr_assert_eq(set("mem_align", "4k"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.mem_align, 4096);
	cr_assert_eq(set("iomem_align", "512"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.mem_align, 512);
	cr_assert_eq(set("mem", "mmap"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.mem, UB_MEM_MMAP);
	cr_assert_eq(set("iomem", "shmhuge"), UB_OPT_OK, "%s", err);
	cr_assert_eq(j.mem, UB_MEM_SHMHUGE);
	cr_assert_eq(set("mem", "cudamalloc"), UB_OPT_BAD);
	cr_assert(strstr(err, "cudamalloc"), "%s", err);
}

Test(bench_job_opts, options_without_meaning_warn_and_unknown_ones_fail)
{
	cr_assert_eq(set("directory", "/data1"), UB_OPT_IGNORED);
	cr_assert(strstr(err, "directory"), "%s", err);
	cr_assert(strstr(err, "filename"), "the reason is given: %s", err);
	cr_assert_eq(set("thread", NULL), UB_OPT_IGNORED);
	cr_assert_eq(set("no_such_option", "1"), UB_OPT_UNKNOWN);
	cr_assert(strstr(err, "no_such_option"), "%s", err);
	cr_assert_eq(set("zonemode", "zbd"), UB_OPT_BAD);
	cr_assert(strstr(err, "zbd"), "%s", err);
	cr_assert_eq(set("zonemode", "strided"), UB_OPT_OK, "%s", err);
	cr_assert_eq(set("kb_base", "1000"), UB_OPT_BAD, "sizes would change meaning");
}

Test(bench_job_opts, the_given_options_are_remembered_for_the_report)
{
	set("bs", "4k");
	set("rw", "randread");
	set("bs", "8k");
	cr_assert_str_eq(j.given, "rw=randread\nbs=8k\n");
}

Test(bench_job_opts, validation)
{
	cr_assert_not(ub_job_validate(&j, true, err, sizeof(err)));
	cr_assert(strstr(err, "no filename"), "%s", err);
	cr_assert(ub_job_validate(&j, false, err, sizeof(err)), "--parse-only needs no target");
	snprintf(j.filename, sizeof(j.filename), "/dev/null");
	cr_assert(ub_job_validate(&j, true, err, sizeof(err)), "%s", err);
	j.size = 512;
	cr_assert_not(ub_job_validate(&j, true, err, sizeof(err)));
	j.size = 0;
	set("verify", "md5");
	set("bsrange", "4k-8k");
	cr_assert_not(ub_job_validate(&j, true, err, sizeof(err)));
	cr_assert(strstr(err, "one block size"), "%s", err);
	init();
	snprintf(j.filename, sizeof(j.filename), "/dev/null");
	set("zonemode", "strided");
	cr_assert_not(ub_job_validate(&j, true, err, sizeof(err)));
	cr_assert(strstr(err, "zonesize"), "%s", err);
}

Test(bench_job_opts, rw_helpers)
{
	j.rw = UB_RW_RANDRW;
	j.rwmixread = 100;
	cr_assert(ub_rw_reads(&j));
	cr_assert_not(ub_rw_writes(&j));
	j.rwmixread = 0;
	cr_assert_not(ub_rw_reads(&j));
	cr_assert(ub_rw_writes(&j));
	cr_assert(ub_rw_is_random(UB_RW_RANDREAD));
	cr_assert(ub_rw_is_random(UB_RW_RANDTRIM));
	cr_assert_not(ub_rw_is_random(UB_RW_RW));
	cr_assert_str_eq(ub_rw_name(UB_RW_RANDWRITE), "randwrite");
	j.rw = UB_RW_TRIMWRITE;
	cr_assert(ub_rw_writes(&j) && ub_rw_trims(&j));
}

/* The documentation is part of the interface: every option of the table is listed there. */
Test(bench_job_opts, docs_list_every_option)
{
	FILE *f = fopen("docs/utgt-bench.md", "r");
	static char text[1 << 17];
	size_t n;
	bool ign;
	const char *name;

	cr_assert_not_null(f, "run from the source tree");
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	for (unsigned i = 0; (name = ub_job_option_name(i, &ign)); i++) {
		char quoted[80];
		snprintf(quoted, sizeof(quoted), "`%s`", name);
		cr_expect(strstr(text, quoted), "docs/utgt-bench.md does not list `%s`%s", name,
			  ign ? " (accepted without effect)" : "");
	}
}
