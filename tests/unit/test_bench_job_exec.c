/* utgt-bench job execution end to end on a scratch file through the block engine: sizes,
 * runtimes, verify passes and failures with the LBA, region errors. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "initiator/bench.h"
#include "initiator/verify.h"

static char path[] = "/var/tmp/ub-exec-XXXXXX";
static struct ub_bench b;

static void setup(void)
{
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 4 << 20), 0);
	close(fd);
	ub_bench_defaults(&b);
}

static void teardown(void)
{
	unlink(path);
}

TestSuite(bench_job_exec, .init = setup, .fini = teardown);

static struct ub_job job(enum ub_rw rw, uint64_t bs, unsigned depth)
{
	struct ub_job j;

	ub_job_defaults(&j);
	snprintf(j.name, sizeof(j.name), "t");
	snprintf(j.filename, sizeof(j.filename), "%s", path);
	j.rw = rw;
	j.bs = bs;
	j.iodepth = depth;
	return j;
}

static int exec(const struct ub_job *j, struct ub_job_res *r)
{
	struct ub_exec x = {.job = j, .bench = &b};

	cr_assert(ub_res_init(r));
	return ub_job_exec(&x, r);
}

Test(bench_job_exec, sized_job_moves_exactly_size_bytes)
{
	struct ub_job j = job(UB_RW_RANDWRITE, 8192, 4);
	struct ub_job_res r;

	j.size = 1 << 20;
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_eq(r.d[1].bytes, 1 << 20);
	cr_assert_eq(r.d[1].ios, 128);
	cr_assert_eq(r.d[0].ios, 0);
	cr_assert_eq(r.issued[1], 128);
	cr_assert_eq(r.d[1].clat_hist->total, 128);
	cr_assert_eq(r.npaths, 1);
	cr_assert_eq(r.paths[0].ios[1], 128);
	cr_assert_str_eq(r.engine, "block");
	cr_assert_eq(r.lu_bs, 4096);
	ub_res_free(&r);
}

Test(bench_job_exec, loops_repeat_the_region)
{
	struct ub_job j = job(UB_RW_READ, 65536, 2);
	struct ub_job_res r;

	j.size = 1 << 20;
	j.loops = 3;
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_eq(r.d[0].bytes, 3 << 20);
	ub_res_free(&r);
}

Test(bench_job_exec, time_based_runs_for_the_runtime)
{
	struct ub_job j = job(UB_RW_RANDRW, 4096, 4);
	struct ub_job_res r;

	j.time_based = true;
	j.runtime_ns = 300000000ull;
	j.ramp_ns = 100000000ull;
	j.rwmixread = 50;
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_geq(r.runtime_ns, 300000000ull);
	cr_assert_lt(r.runtime_ns, 1300000000ull);
	cr_assert_gt(r.d[0].ios, 0);
	cr_assert_gt(r.d[1].ios, 0);
	ub_res_free(&r);
}

Test(bench_job_exec, verify_write_then_read_back_passes)
{
	struct ub_job j = job(UB_RW_RANDWRITE, 16384, 8);
	struct ub_job_res r;

	j.verify = UB_VERIFY_CRC32C;
	j.size = 2 << 20;
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_eq(r.verify_errors, 0);
	cr_assert_eq(r.verify_blocks, 512, "every 4 KiB block of 2 MiB read back");
	ub_res_free(&r);
	j.rw = UB_RW_READ;
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_eq(r.verify_blocks, 512);
	ub_res_free(&r);
}

Test(bench_job_exec, corrupted_block_fails_the_run_with_its_lba)
{
	struct ub_job j = job(UB_RW_WRITE, 65536, 4);
	struct ub_job_res r;
	char junk[16] = "overwritten!!!!";
	int fd;

	j.verify = UB_VERIFY_CRC32C;
	j.size = 1 << 20;
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	ub_res_free(&r);
	fd = open(path, O_WRONLY);
	cr_assert_eq(pwrite(fd, junk, sizeof(junk), 37 * 4096 + 100), (ssize_t)sizeof(junk));
	close(fd);
	j.rw = UB_RW_RANDREAD;
	j.bs = 4096;
	cr_assert_neq(exec(&j, &r), 0);
	cr_assert_eq(r.verify_errors, 1);
	cr_assert(strstr(r.verify_msg, "LBA 37 ") && strstr(r.verify_msg, "path 0") &&
		      strstr(r.verify_msg, "CRC32C"),
		  "%s", r.verify_msg);
	cr_assert_str_eq(r.errmsg, r.verify_msg);
	ub_res_free(&r);
}

Test(bench_job_exec, reading_never_written_blocks_with_verify_fails)
{
	struct ub_job j = job(UB_RW_READ, 4096, 1);
	struct ub_job_res r;

	j.verify = UB_VERIFY_CRC32C;
	j.size = 8192;
	cr_assert_neq(exec(&j, &r), 0);
	cr_assert(strstr(r.verify_msg, "no verify header"), "%s", r.verify_msg);
	ub_res_free(&r);
}

Test(bench_job_exec, mixed_verify_job_checks_what_it_wrote)
{
	struct ub_job j = job(UB_RW_RANDRW, 4096, 8);
	struct ub_job_res r;

	j.verify = UB_VERIFY_CRC32C;
	j.size = 1 << 20;
	j.loops = 4;
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_eq(r.verify_errors, 0);
	cr_assert_gt(r.verify_blocks, 0);
	ub_res_free(&r);
}

Test(bench_job_exec, region_errors)
{
	struct ub_job j = job(UB_RW_READ, 6144, 1);
	struct ub_job_res r;

	cr_assert_neq(exec(&j, &r), 0);
	cr_assert(strstr(r.errmsg, "not a multiple of the LU block size 4096"), "%s", r.errmsg);
	ub_res_free(&r);
	j = job(UB_RW_READ, 4096, 1);
	j.offset = 8 << 20;
	cr_assert_neq(exec(&j, &r), 0);
	cr_assert(strstr(r.errmsg, "beyond the LU"), "%s", r.errmsg);
	ub_res_free(&r);
	j = job(UB_RW_READ, 4096, 1);
	j.size = 64 << 20;
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert(strstr(r.note, "capped"), "%s", r.note);
	cr_assert_eq(r.d[0].bytes, 4 << 20);
	ub_res_free(&r);
}

Test(bench_job_exec, unknown_target_fails_cleanly)
{
	struct ub_job j = job(UB_RW_READ, 4096, 1);
	struct ub_job_res r;

	snprintf(j.filename, sizeof(j.filename), "/nonexistent/dev");
	cr_assert_neq(exec(&j, &r), 0);
	cr_assert(strstr(r.errmsg, "No such file"), "%s", r.errmsg);
	ub_res_free(&r);
}

static void opt(struct ub_job *j, const char *k, const char *v)
{
	char err[256];

	cr_assert_eq(ub_job_set(j, k, v, err, sizeof(err)), UB_OPT_OK, "%s: %s", k, err);
}

Test(bench_job_exec, number_ios_io_size_and_trims)
{
	struct ub_job j = job(UB_RW_RANDWRITE, 4096, 4);
	struct ub_job_res r;

	opt(&j, "number_ios", "37");
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_eq(r.d[1].ios, 37);
	ub_res_free(&r);
	j = job(UB_RW_READ, 4096, 2);
	opt(&j, "size", "64k");
	opt(&j, "io_size", "256k");
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_eq(r.d[0].bytes, 256 << 10, "io_size wraps a smaller region");
	ub_res_free(&r);
	j = job(UB_RW_TRIM, 65536, 2);
	opt(&j, "size", "1m");
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_eq(r.d[2].ios, 16, "trims counted as fio's third direction");
	cr_assert_eq(r.d[0].ios + r.d[1].ios, 0);
	ub_res_free(&r);
}

Test(bench_job_exec, bssplit_and_fsync_are_measured)
{
	struct ub_job j = job(UB_RW_RANDWRITE, 4096, 4);
	struct ub_job_res r;

	opt(&j, "bssplit", "4k/50:16k/50");
	opt(&j, "fsync", "8");
	opt(&j, "end_fsync", "1");
	opt(&j, "number_ios", "64");
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_eq(r.d[1].ios, 64);
	cr_assert_eq(r.sync_lat.n, 9, "one flush per 8 writes, and one at the end");
	cr_assert_eq(r.bs_min[1], 4096);
	cr_assert_eq(r.bs_max[1], 16384);
	cr_assert_gt(r.d[1].bytes, 64 * 4096);
	ub_res_free(&r);
}

Test(bench_job_exec, rate_iops_paces_the_job)
{
	struct ub_job j = job(UB_RW_READ, 4096, 4);
	struct ub_job_res r;

	opt(&j, "rate_iops", "200");
	opt(&j, "number_ios", "40");
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	/* 40 I/Os at 200/s take about 200 ms; a busy machine only makes it longer */
	cr_assert_geq(r.runtime_ns, 180000000ull, "%llu", (unsigned long long)r.runtime_ns);
	ub_res_free(&r);
}

Test(bench_job_exec, thinktime_spaces_the_ios)
{
	struct ub_job j = job(UB_RW_READ, 4096, 1);
	struct ub_job_res r;

	opt(&j, "thinktime", "20ms");
	opt(&j, "thinktime_blocks", "2");
	opt(&j, "number_ios", "10");
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_geq(r.runtime_ns, 80000000ull, "4 pauses of 20 ms at least");
	ub_res_free(&r);
}

Test(bench_job_exec, verify_variants_backlog_and_verify_only)
{
	static const char *const algs[] = {"md5", "sha1", "sha256", "crc64", "crc32", "meta"};
	struct ub_job j;
	struct ub_job_res r;

	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		j = job(UB_RW_RANDWRITE, 8192, 4);
		opt(&j, "verify", algs[i]);
		opt(&j, "size", "512k");
		opt(&j, "verify_backlog", "16");
		cr_assert_eq(exec(&j, &r), 0, "%s: %s", algs[i], r.errmsg);
		cr_assert_eq(r.verify_errors, 0);
		cr_assert_geq(r.verify_blocks, 128 + 3 * 32, "%s: inline and final checks (%llu)", algs[i],
			      (unsigned long long)r.verify_blocks);
		ub_res_free(&r);
	}
	opt(&j, "verify_only", "1");
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_eq(r.verify_blocks, 128, "verify_only reads the region once");
	cr_assert_eq(r.d[1].ios, 0);
	ub_res_free(&r);
	j = job(UB_RW_WRITE, 4096, 2);
	opt(&j, "verify", "pattern");
	opt(&j, "verify_pattern", "0xaa555aa5");
	opt(&j, "size", "64k");
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_eq(r.verify_errors, 0);
	ub_res_free(&r);
}

Test(bench_job_exec, null_engine_needs_no_target)
{
	struct ub_job j = job(UB_RW_RANDREAD, 4096, 8);
	struct ub_job_res r;

	j.filename[0] = '\0';
	opt(&j, "ioengine", "null");
	opt(&j, "size", "16m");
	opt(&j, "random_distribution", "zipf:0.8");
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_str_eq(r.engine, "null");
	cr_assert_eq(r.d[0].bytes, 16 << 20);
	ub_res_free(&r);
}

Test(bench_job_exec, latency_target_settles_on_a_depth)
{
	struct ub_job j = job(UB_RW_RANDREAD, 4096, 32);
	struct ub_job_res r;

	j.filename[0] = '\0';
	opt(&j, "ioengine", "null");
	opt(&j, "size", "64m");
	opt(&j, "time_based", "1");
	opt(&j, "runtime", "500ms");
	/* An unreachable target (1 ns) walks the depth down to 1 in six windows.  Windows of
	 * 2 ms leave a starved process (a loaded machine) far more than six of them. */
	opt(&j, "latency_target", "1ns");
	opt(&j, "latency_window", "2ms");
	opt(&j, "latency_percentile", "50");
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_eq(r.lat_depth, 1);
	cr_assert_not(r.lat_target_met);
	ub_res_free(&r);
}

/* A paced job ends with its next I/O chosen but held back; the read-back that follows must
 * not start with it (a read of a block never written, checked as if it had been). */
Test(bench_job_exec, paced_verify_job_reads_back_only_what_it_wrote)
{
	for (int k = 0; k < 3; k++) {
		struct ub_job j = job(UB_RW_RANDRW, 4096, 2);
		struct ub_job_res r;

		j.verify = UB_VERIFY_CRC32C;
		opt(&j, "rwmixread", "90");
		opt(&j, "rate_iops", "300");
		opt(&j, "time_based", NULL);
		opt(&j, "runtime", "200ms");
		cr_assert_eq(exec(&j, &r), 0, "round %d: %s", k, r.errmsg);
		cr_assert_eq(r.verify_errors, 0, "%s", r.verify_msg);
		ub_res_free(&r);
	}
}

/* The buffers are where fio puts them: mem_align=1 makes an O_DIRECT read's buffer odd, which
 * the kernel refuses for blocks on the device (fio 3.33 fails the same job with EINVAL);
 * mem_align=4096 keeps it on a page boundary and the job runs.  (A hole is read without the
 * device, so the region is written first.) */
Test(bench_job_exec, mem_align_moves_the_buffers_o_direct_refuses_an_odd_one)
{
	struct ub_job j = job(UB_RW_WRITE, 4096, 2);
	struct ub_job_res r;

	char err[128];

	j.size = 65536;
	ub_job_set(&j, "mem_align", "4096", err, sizeof(err));
	cr_assert_eq(exec(&j, &r), 0, "%s", r.errmsg);
	cr_assert_eq(r.d[1].ios, 16);
	ub_res_free(&r);
	j.rw = UB_RW_READ;
	ub_job_set(&j, "mem_align", "1", err, sizeof(err));
	cr_assert_neq(exec(&j, &r), 0, "an odd O_DIRECT buffer was accepted");
	cr_assert(strstr(r.errmsg, "Invalid argument"), "%s", r.errmsg);
	ub_res_free(&r);
}
