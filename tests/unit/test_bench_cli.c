/* utgt-bench command line (cli.c): fio-style job options, job files with command-line
 * overrides, presets, multipath and iSCSI options. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iscsi/iscsi.h>

#include "initiator/cli.h"
#include "common/diag.h"

static char lasterr[512];

static void capture(struct diag *d, bool error, int line, const char *msg)
{
	(void)line;
	if (error && !lasterr[0])
		snprintf(lasterr, sizeof(lasterr), "%s: %s", d->file ? d->file : "", msg);
}

static bool run(struct ub_bench *b, enum ub_preset *p, int argc, char **argv)
{
	struct diag d = {.emit = capture};

	lasterr[0] = '\0';
	ub_bench_defaults(b);
	return ub_cli_parse(argc, argv, b, p, &d);
}

#define ARGV(...)                                                                                  \
	(char *[])                                                                                 \
	{                                                                                          \
		"utgt-bench", __VA_ARGS__, NULL                                                    \
	}
#define ARGC(...)      ((int)(sizeof((char *[]){"utgt-bench", __VA_ARGS__}) / sizeof(char *)))
#define RUN(b, p, ...) run(b, p, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

Test(bench_cli, fio_style_jobs_with_globals)
{
	struct ub_bench b;
	enum ub_preset p;

	cr_assert(RUN(&b, &p, "--filename=iscsi://h/iqn.a/0", "--bs=8k", "--name=a",
		      "--rw=randread", "--iodepth=32", "--name=b", "--rw=write", "--bs=64k"),
		  "%s", lasterr);
	cr_assert_eq(b.jobs.n, 2);
	cr_assert_str_eq(b.jobs.jobs[0].name, "a");
	cr_assert_eq(b.jobs.jobs[0].rw, UB_RW_RANDREAD);
	cr_assert_eq(b.jobs.jobs[0].bs, 8192);
	cr_assert_eq(b.jobs.jobs[0].iodepth, 32);
	cr_assert_str_eq(b.jobs.jobs[1].filename, "iscsi://h/iqn.a/0");
	cr_assert_eq(b.jobs.jobs[1].bs, 65536, "a job's own option wins over the global");
	cr_assert_eq(b.jobs.jobs[1].iodepth, 1);
	ub_bench_free(&b);
}

Test(bench_cli, options_without_name_make_one_job)
{
	struct ub_bench b;
	enum ub_preset p;

	cr_assert(RUN(&b, &p, "--filename=/dev/null", "--rw=randwrite"), "%s", lasterr);
	cr_assert_eq(b.jobs.n, 1);
	cr_assert_str_eq(b.jobs.jobs[0].name, "randwrite");
	ub_bench_free(&b);
}

Test(bench_cli, seed_template_file_runs_with_command_line_target)
{
	struct ub_bench b;
	enum ub_preset p;
	char path[] = "/tmp/ub-seed-XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, ub_seed_rbd_template, strlen(ub_seed_rbd_template)),
		     (ssize_t)strlen(ub_seed_rbd_template));
	close(fd);
	cr_assert(RUN(&b, &p, path, "--filename=iscsi://127.0.0.1/iqn.t/0", "--ioengine=iscsi",
		      "--runtime=2"),
		  "%s", lasterr);
	cr_assert_eq(b.jobs.n, 4);
	for (unsigned i = 0; i < 4; i++) {
		cr_assert_str_eq(b.jobs.jobs[i].filename, "iscsi://127.0.0.1/iqn.t/0");
		cr_assert_str_eq(b.jobs.jobs[i].ioengine, "iscsi");
		cr_assert_eq(b.jobs.jobs[i].runtime_ns, 2000000000ull);
		cr_assert_eq(b.jobs.jobs[i].iodepth, 100, "the file's own values stay");
	}
	unlink(path);
	ub_bench_free(&b);
}

Test(bench_cli, paths_replace_filenames_and_sweep_is_checked)
{
	struct ub_bench b;
	enum ub_preset p;

	cr_assert(RUN(&b, &p, "--paths=iscsi://a/iqn.x/0,iscsi://b/iqn.x/0",
		      "--policy=queue-length", "--rr-iops=4", "--name=j", "--sweep-paths=1,2"),
		  "%s", lasterr);
	cr_assert_eq(b.npaths, 2);
	cr_assert_str_eq(b.paths[1], "iscsi://b/iqn.x/0");
	cr_assert_str_eq(b.jobs.jobs[0].filename, "iscsi://a/iqn.x/0");
	cr_assert_eq(b.mp.policy, UB_POL_QUEUE_LENGTH);
	cr_assert_eq(b.mp.rr_iops, 4);
	cr_assert_eq(b.nsweep, 2);
	ub_bench_free(&b);
	cr_assert_not(RUN(&b, &p, "--paths=iscsi://a/iqn.x/0", "--name=j", "--sweep-paths=1,2"));
	cr_assert(strstr(lasterr, "--sweep-paths asks for 2"), "%s", lasterr);
	ub_bench_free(&b);
	/* one portal and target twice is one path, whatever the LUN spelling or the case */
	cr_assert_not(RUN(&b, &p, "--paths=iscsi://a:3260/iqn.x/0,iscsi://A/IQN.X/0", "--name=j"));
	cr_assert(strstr(lasterr, "paths 0 and 1 both reach portal") &&
		      strstr(lasterr, "the same path twice"),
		  "%s", lasterr);
	ub_bench_free(&b);
	cr_assert(RUN(&b, &p, "--paths=iscsi://a:3260/iqn.x/0,iscsi://a:3261/iqn.x/0", "--name=j"),
		  "two portals of one target are two paths: %s", lasterr);
	ub_bench_free(&b);
}

Test(bench_cli, iscsi_keys)
{
	struct ub_bench b;
	enum ub_preset p;

	cr_assert(RUN(&b, &p, "--filename=/dev/null", "--header-digest=crc32c", "--nodelay=0",
		      "--initial-r2t=yes", "--immediate-data=no", "--max-recv-dsl=64k",
		      "--data-digest=crc32c", "--initiator-name=iqn.x:y", "--connect-timeout=2s",
		      "--io-timeout=10", "--reconnect-delay=100ms", "--no-path-timeout=3s"),
		  "%s", lasterr);
	cr_assert_eq(b.mp.eng.header_digest, ISCSI_HEADER_DIGEST_CRC32C);
	cr_assert_eq(b.mp.eng.nodelay, 0);
	cr_assert_eq(b.mp.eng.initial_r2t, 1);
	cr_assert_eq(b.mp.eng.immediate_data, 0);
	cr_assert_eq(b.mp.eng.max_recv_dsl, 65536);
	cr_assert_eq(b.mp.eng.data_digest, 1);
	cr_assert_str_eq(b.initiator, "iqn.x:y");
	cr_assert_eq(b.mp.eng.connect_timeout_ms, 2000);
	cr_assert_eq(b.mp.eng.io_timeout_s, 10);
	cr_assert_eq(b.mp.reconnect_delay_ms, 100);
	cr_assert_eq(b.mp.no_path_timeout_ms, 3000);
	ub_bench_free(&b);
}

Test(bench_cli, nop_pings)
{
	struct ub_bench b;
	enum ub_preset p;

	/* open-iscsi's defaults: a ping after 5 s of silence, 5 s for its answer */
	cr_assert(RUN(&b, &p, "--filename=/dev/null"), "%s", lasterr);
	cr_assert_eq(b.mp.eng.nop_interval_ms, 5000);
	cr_assert_eq(b.mp.eng.nop_timeout_ms, 5000);
	ub_bench_free(&b);
	cr_assert(RUN(&b, &p, "--filename=/dev/null", "--nop-interval=250ms", "--nop-timeout=2s"),
		  "%s", lasterr);
	cr_assert_eq(b.mp.eng.nop_interval_ms, 250);
	cr_assert_eq(b.mp.eng.nop_timeout_ms, 2000);
	ub_bench_free(&b);
	cr_assert(RUN(&b, &p, "--filename=/dev/null", "--nop-interval=0"), "%s", lasterr);
	cr_assert_eq(b.mp.eng.nop_interval_ms, 0, "0 turns the pings off");
	ub_bench_free(&b);
	cr_assert_not(RUN(&b, &p, "--filename=/dev/null", "--nop-timeout=0"));
	cr_assert(strstr(lasterr, "--nop-timeout"), "%s", lasterr);
	ub_bench_free(&b);
	cr_assert_not(RUN(&b, &p, "--filename=/dev/null", "--nop-interval=soon"));
	cr_assert(strstr(lasterr, "--nop-interval"), "%s", lasterr);
	ub_bench_free(&b);
}

Test(bench_cli, cdm_preset_keeps_its_tests)
{
	struct ub_bench b;
	enum ub_preset p;

	cr_assert(RUN(&b, &p, "--preset=cdm", "--filename=iscsi://h/iqn.a/0", "--runtime=1",
		      "--bs=64k", "--size=64m"),
		  "%s", lasterr);
	cr_assert_eq(p, UB_PRESET_CDM);
	cr_assert_eq(b.jobs.n, 8);
	cr_assert_str_eq(b.jobs.jobs[0].name, "SEQ1M-Q8T1-read");
	cr_assert_eq(b.jobs.jobs[0].bs, 1u << 20, "--bs does not change CDM's tests");
	cr_assert_eq(b.jobs.jobs[0].iodepth, 8);
	cr_assert_eq(b.jobs.jobs[5].rw, UB_RW_RANDWRITE);
	cr_assert_eq(b.jobs.jobs[5].iodepth, 32);
	cr_assert_eq(b.jobs.jobs[7].iodepth, 1);
	for (unsigned i = 0; i < 8; i++) {
		cr_assert_eq(b.jobs.jobs[i].runtime_ns, 1000000000ull);
		cr_assert_eq(b.jobs.jobs[i].size, 64u << 20);
		cr_assert(b.jobs.jobs[i].time_based && b.jobs.jobs[i].stonewall);
	}
	ub_bench_free(&b);
}

Test(bench_cli, rados_preset_takes_bs_and_depth)
{
	struct ub_bench b;
	enum ub_preset p;

	cr_assert(RUN(&b, &p, "--preset=rados-bench", "--filename=iscsi://h/iqn.a/0"), "%s",
		  lasterr);
	cr_assert_eq(b.jobs.jobs[0].bs, 4u << 20);
	cr_assert_eq(b.jobs.jobs[0].iodepth, 16);
	cr_assert_eq(b.jobs.jobs[0].runtime_ns, 10000000000ull);
	ub_bench_free(&b);
	cr_assert(RUN(&b, &p, "--preset=rados-bench", "--filename=iscsi://h/iqn.a/0", "--bs=4096",
		      "--iodepth=32", "--runtime=300"),
		  "%s", lasterr);
	cr_assert_eq(b.jobs.jobs[0].bs, 4096, "as in 'rados bench 300 write -b 4096 -t 32'");
	cr_assert_eq(b.jobs.jobs[0].iodepth, 32);
	cr_assert_eq(b.jobs.jobs[0].runtime_ns, 300000000000ull);
	ub_bench_free(&b);
}

Test(bench_cli, seed_rbd_preset)
{
	struct ub_bench b;
	enum ub_preset p;

	cr_assert(RUN(&b, &p, "--preset=seed-rbd", "--filename=iscsi://h/iqn.a/0", "--size=16m"),
		  "%s", lasterr);
	cr_assert_eq(b.jobs.n, 4);
	cr_assert_eq(b.jobs.jobs[0].size, 16u << 20);
	cr_assert_str_eq(b.jobs.jobs[2].filename, "iscsi://h/iqn.a/0");
	ub_bench_free(&b);
}

Test(bench_cli, errors_are_clear)
{
	struct ub_bench b;
	enum ub_preset p;

	cr_assert_not(RUN(&b, &p, "--filename=/dev/null", "--frob=1"));
	cr_assert(strstr(lasterr, "unknown option '--frob'"), "%s", lasterr);
	ub_bench_free(&b);
	cr_assert_not(RUN(&b, &p, "--filename=/dev/null", "--bs=4q"));
	cr_assert(strstr(lasterr, "command line") && strstr(lasterr, "invalid size"), "%s",
		  lasterr);
	ub_bench_free(&b);
	cr_assert_not(RUN(&b, &p, "--policy=random", "--filename=/dev/null"));
	cr_assert(strstr(lasterr, "--policy"), "%s", lasterr);
	ub_bench_free(&b);
	cr_assert_not(RUN(&b, &p, "--preset=iometer"));
	ub_bench_free(&b);
	cr_assert_not(RUN(&b, &p, "--name=x"));
	cr_assert(strstr(lasterr, "no filename"), "%s", lasterr);
	ub_bench_free(&b);
	cr_assert_not(RUN(&b, &p, "/nonexistent/job.fio"));
	cr_assert(strstr(lasterr, "cannot open"), "%s", lasterr);
	ub_bench_free(&b);
	cr_assert_not(RUN(&b, &p, "--paths="));
	ub_bench_free(&b);
	cr_assert_not(RUN(&b, &p, "--header-digest=md5", "--filename=/dev/null"));
	ub_bench_free(&b);
}

Test(bench_cli, help_needs_no_job)
{
	struct ub_bench b;
	enum ub_preset p;

	cr_assert(RUN(&b, &p, "--help"));
	cr_assert(b.show_help);
	ub_bench_free(&b);
}

Test(bench_cli, parse_only_sections_and_output_formats)
{
	struct ub_bench b;
	enum ub_preset p;
	char path[] = "/tmp/ub-cli-XXXXXX";
	int fd = mkstemp(path);
	const char text[] = "[global]\nrw=randread\n[a]\nbs=8k\n[b]\nbs=16k\n";

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	cr_assert(RUN(&b, &p, "--parse-only", path), "%s", lasterr);
	cr_assert(b.parse_only);
	cr_assert_eq(b.jobs.n, 2, "no filename needed to check a file");
	ub_bench_free(&b);
	cr_assert(RUN(&b, &p, "--section=b", "--filename=/dev/null", path), "%s", lasterr);
	cr_assert_eq(b.jobs.n, 1);
	cr_assert_str_eq(b.jobs.jobs[0].name, "b");
	ub_bench_free(&b);
	cr_assert(RUN(&b, &p, "--output-format=normal,json+", "--filename=/dev/null", path));
	cr_assert_eq(b.fmt, UB_OUT_NORMAL | UB_OUT_JSONPLUS);
	ub_bench_free(&b);
	cr_assert(RUN(&b, &p, "--output-format=terse", "--filename=/dev/null", path));
	cr_assert_eq(b.fmt, UB_OUT_TERSE);
	ub_bench_free(&b);
	cr_assert_not(RUN(&b, &p, "--output-format=xml", "--filename=/dev/null", path));
	ub_bench_free(&b);
	unlink(path);
}

Test(bench_cli, wait_for_must_name_an_earlier_job)
{
	struct ub_bench b;
	enum ub_preset p;

	cr_assert_not(RUN(&b, &p, "--filename=/dev/null", "--name=a", "--wait_for=zz"));
	cr_assert(strstr(lasterr, "wait_for=zz"), "%s", lasterr);
	ub_bench_free(&b);
	cr_assert(RUN(&b, &p, "--filename=/dev/null", "--name=a", "--name=b", "--wait_for=a"),
		  "%s", lasterr);
	ub_bench_free(&b);
}

Test(bench_cli, filename_next_to_paths_is_kept_for_the_identity_check)
{
	struct ub_bench b;
	enum ub_preset p;

	cr_assert(RUN(&b, &p, "--paths=iscsi://h/iqn.a/0,iscsi://h2/iqn.a/0",
		      "--filename=iscsi://h3/iqn.b/0", "--name=x"),
		  "%s", lasterr);
	cr_assert_str_eq(b.filename_check, "iscsi://h3/iqn.b/0");
	cr_assert_str_eq(b.jobs.jobs[0].filename, "iscsi://h/iqn.a/0");
	ub_bench_free(&b);
}
