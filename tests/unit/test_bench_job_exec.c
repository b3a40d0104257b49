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
