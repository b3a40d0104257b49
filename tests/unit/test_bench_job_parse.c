/* utgt-bench job files (job_parse.c): the seed template, [global] scoping, and a
 * file:line message for every kind of bad line. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "initiator/job.h"
#include "initiator/presets.h"
#include "common/diag.h"

struct captured {
	int line;
	bool error;
	char msg[512];
	char file[128];
	int nwarn, nerr;
	char warn[512];
};

static void capture(struct diag *d, bool error, int line, const char *msg)
{
	struct captured *c = d->priv;

	if (!error) {
		c->nwarn++;
		snprintf(c->warn, sizeof(c->warn), "%s", msg);
		return;
	}
	c->nerr++;
	if (c->msg[0])
		return;
	c->line = line;
	c->error = error;
	snprintf(c->msg, sizeof(c->msg), "%s", msg);
	snprintf(c->file, sizeof(c->file), "%s", d->file ? d->file : "");
}

static bool parse(const char *text, struct ub_joblist *l, struct captured *c)
{
	struct diag d = {.emit = capture, .priv = c};
	struct ub_job g;

	memset(c, 0, sizeof(*c));
	ub_job_defaults(&g);
	return ub_jobfile_parse(text, "t.fio", &g, l, &d);
}

Test(bench_job_parse, the_seed_template_as_it_is)
{
	struct ub_joblist l = {0};
	struct captured c;

	cr_assert(parse(ub_seed_rbd_template, &l, &c), "%s", c.msg);
	cr_assert_eq(l.n, 4);
	cr_assert_str_eq(l.jobs[0].name, "seq-read");
	cr_assert_str_eq(l.jobs[3].name, "rand-write");
	for (unsigned i = 0; i < 4; i++) {
		cr_assert_str_eq(l.jobs[i].ioengine, "libaio");
		cr_assert_str_eq(l.jobs[i].filename, "/dev/rbd2");
		cr_assert_eq(l.jobs[i].iodepth, 100);
		cr_assert_eq(l.jobs[i].size, 1ull << 30);
		cr_assert_eq(l.jobs[i].runtime_ns, 60000000000ull);
		cr_assert(l.jobs[i].direct);
		cr_assert(l.jobs[i].stonewall);
	}
	cr_assert_eq(l.jobs[0].rw, UB_RW_READ);
	cr_assert_eq(l.jobs[0].bs, 4u << 20);
	cr_assert_eq(l.jobs[1].rw, UB_RW_RANDREAD);
	cr_assert_eq(l.jobs[1].bs, 4096);
	cr_assert_eq(l.jobs[2].rw, UB_RW_WRITE);
	cr_assert_eq(l.jobs[3].rw, UB_RW_RANDWRITE);
	cr_assert_eq(l.jobs[3].bs, 4096, "bs=4K");
	cr_assert_eq(l.jobs[1].line, 14, "the section's line is kept for messages");
	ub_joblist_free(&l);
}

Test(bench_job_parse, global_applies_only_to_jobs_after_it)
{
	struct ub_joblist l = {0};
	struct captured c;

	cr_assert(parse("; comment\n# another\n[global]\nbs=8k\n[a]\n[global]\nbs=16k\n[b]\n"
			"iodepth = 4 \n",
			&l, &c),
		  "%s", c.msg);
	cr_assert_eq(l.n, 2);
	cr_assert_eq(l.jobs[0].bs, 8192);
	cr_assert_eq(l.jobs[1].bs, 16384);
	cr_assert_eq(l.jobs[1].iodepth, 4, "spaces around '=' are fine");
	ub_joblist_free(&l);
}

static void bad(const char *text, int line, const char *needle)
{
	struct ub_joblist l = {0};
	struct captured c;

	cr_assert_not(parse(text, &l, &c), "accepted: %s", text);
	cr_assert_eq(c.line, line, "'%s': line %d, want %d (%s)", text, c.line, line, c.msg);
	cr_assert_str_eq(c.file, "t.fio");
	cr_assert(strstr(c.msg, needle), "'%s' not in '%s'", needle, c.msg);
	ub_joblist_free(&l);
}

Test(bench_job_parse, bad_lines_name_file_and_line)
{
	bad("[a]\nbs=4x\n", 2, "invalid size '4x'");
	bad("[a]\nrw=sideways\n", 2, "sideways");
	bad("[a]\n\n\nfrobnicate=1\n", 4, "unknown option 'frobnicate'");
	bad("bs=4k\n[a]\n", 1, "outside of any [section]");
	bad("[a\nbs=4k\n", 1, "unterminated section");
	bad("[]\n", 1, "empty section");
	bad("[a] x\n", 1, "text after section header");
	bad("[a]\n=4k\n", 2, "missing option name");
	bad("[a]\nbs 4k\n", 2, "malformed line");
	bad("[a]\niodepth=0\n", 2, "out of range");
	bad("[a]\nrwmixread=101\n", 2, "out of range");
	bad("[a]\nverify=xxhash\n", 2, "not supported");
	bad("[a]\nruntime=5x\n", 2, "invalid time");
	bad("[a]\nsize=0%\n", 2, "percentage");
	bad("[a]\nbs\n", 2, "needs a value");
}

Test(bench_job_parse, flags_and_special_values)
{
	struct ub_joblist l = {0};
	struct captured c;

	cr_assert(parse("[a]\nstonewall\ntime_based\ngroup_reporting=1\nrwmixwrite=30\nsize=50%\n"
			"verify=crc32c\ndirect=0\nthread\nreadwrite=randrw\nrandseed=7\n",
			&l, &c),
		  "%s", c.msg);
	cr_assert(l.jobs[0].stonewall && l.jobs[0].time_based && l.jobs[0].group_reporting);
	cr_assert_eq(l.jobs[0].rwmixread, 70);
	cr_assert_eq(l.jobs[0].size_pct, 50);
	cr_assert_eq(l.jobs[0].verify, UB_VERIFY_CRC32C);
	cr_assert_not(l.jobs[0].direct);
	cr_assert_eq(l.jobs[0].rw, UB_RW_RANDRW);
	cr_assert(l.jobs[0].randseed_set && l.jobs[0].randseed == 7);
	cr_assert_eq(c.nwarn, 1, "'thread' is accepted with a warning");
	ub_joblist_free(&l);
}

Test(bench_job_parse, load_reports_missing_file_and_binary)
{
	struct ub_joblist l = {0};
	struct captured c = {0};
	struct diag d = {.emit = capture, .priv = &c};
	struct ub_job g;
	char path[] = "/tmp/ub-job-XXXXXX";
	int fd = mkstemp(path);

	ub_job_defaults(&g);
	cr_assert_not(ub_jobfile_load("/nonexistent/x.fio", &g, &l, &d));
	cr_assert(strstr(c.msg, "cannot open"), "%s", c.msg);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "[a]\nbs=4k\0\n", 11), 11);
	close(fd);
	memset(&c, 0, sizeof(c));
	cr_assert_not(ub_jobfile_load(path, &g, &l, &d));
	cr_assert(strstr(c.msg, "binary"), "%s", c.msg);
	unlink(path);
	ub_joblist_free(&l);
}

Test(bench_job_parse, trailing_comments_are_cut)
{
	struct ub_joblist l = {0};
	struct captured c;

	cr_assert(parse("[a] ; a job\nnumjobs=4\t; four threads\nbs=8k # eight\n"
			"filename=data#1.img\n",
			&l, &c),
		  "%s", c.msg);
	cr_assert_eq(l.jobs[0].numjobs, 4);
	cr_assert_eq(l.jobs[0].bs, 8192);
	cr_assert_str_eq(l.jobs[0].filename, "data#1.img", "a '#' inside a value stays");
	ub_joblist_free(&l);
}

Test(bench_job_parse, environment_variables_expand)
{
	struct ub_joblist l = {0};
	struct captured c;

	setenv("UB_TEST_BS", "16k", 1);
	unsetenv("UB_TEST_UNSET");
	cr_assert(parse("[a]\nbs=${UB_TEST_BS}\n", &l, &c), "%s", c.msg);
	cr_assert_eq(l.jobs[0].bs, 16384);
	ub_joblist_free(&l);
	bad("[a]\nrw=${UB_TEST_UNSET}\n", 2, "UB_TEST_UNSET is not set");
}

Test(bench_job_parse, escaped_colons_and_several_files)
{
	struct ub_joblist l = {0};
	struct captured c;

	cr_assert(parse("[iscsi]\nfilename=iscsi\\://127.0.0.1/iqn.2016-02.com.fio\\:system\\:fio/1\n",
			&l, &c),
		  "%s", c.msg);
	cr_assert_str_eq(l.jobs[0].filename, "iscsi://127.0.0.1/iqn.2016-02.com.fio:system:fio/1");
	ub_joblist_free(&l);
	cr_assert(parse("[u]\nfilename=iscsi://h:3260/iqn.x:y/0\n", &l, &c), "%s", c.msg);
	cr_assert_str_eq(l.jobs[0].filename, "iscsi://h:3260/iqn.x:y/0", "URLs need no escapes");
	ub_joblist_free(&l);
	bad("[a]\nfilename=/dev/sda:/dev/sdb\n", 2, "several files");
}

Test(bench_job_parse, every_error_of_a_file_is_reported)
{
	struct ub_joblist l = {0};
	struct captured c;

	cr_assert_not(parse("[a]\nbs=4x\nrw=sideways\n[b]\nfrobnicate=1\n", &l, &c));
	cr_assert_eq(c.nerr, 3, "got %d errors", c.nerr);
	cr_assert_eq(c.line, 2, "the first is kept by the fixture");
	ub_joblist_free(&l);
}

Test(bench_job_parse, an_option_without_effect_warns_once_per_file)
{
	struct ub_joblist l = {0};
	struct captured c;

	cr_assert(parse("[global]\nthread\n[a]\nthread\ndirectory=/x\n[b]\nthread\n", &l, &c),
		  "%s", c.msg);
	cr_assert_eq(c.nwarn, 2, "thread once, directory once: %d", c.nwarn);
	cr_assert_eq(l.n, 2);
	ub_joblist_free(&l);
}

Test(bench_job_parse, include_reads_a_file_beside_this_one)
{
	char dir[] = "/tmp/ub-inc-XXXXXX", main_p[300], inc_p[300];
	struct ub_joblist l = {0};
	struct captured c;
	struct diag d = {.emit = capture, .priv = &c};
	struct ub_job g;
	FILE *f;

	memset(&c, 0, sizeof(c));
	cr_assert_not_null(mkdtemp(dir));
	snprintf(main_p, sizeof(main_p), "%s/main.fio", dir);
	snprintf(inc_p, sizeof(inc_p), "%s/common.fio", dir);
	f = fopen(inc_p, "w");
	fputs("bs=64k\nbadopt=1\n", f);
	fclose(f);
	f = fopen(main_p, "w");
	fputs("[global]\ninclude common.fio\n[a]\nrw=write\n", f);
	fclose(f);
	ub_job_defaults(&g);
	cr_assert_not(ub_jobfile_load(main_p, &g, &l, &d));
	cr_assert_eq(c.line, 2);
	cr_assert(strstr(c.file, "common.fio"), "errors name the included file: %s", c.file);
	cr_assert_eq(l.n, 1);
	cr_assert_eq(l.jobs[0].bs, 65536, "the include set [global]");
	ub_joblist_free(&l);
	unlink(main_p);
	unlink(inc_p);
	rmdir(dir);
}

Test(bench_job_parse, stonewall_wait_for_and_numjobs)
{
	struct ub_joblist l = {0};
	struct captured c;

	cr_assert(parse("[global]\ngroup_reporting\n[w]\nnumjobs=4\n[r]\nnew_group\n"
			"wait_for=w\n[s]\nstonewall\n",
			&l, &c),
		  "%s", c.msg);
	cr_assert_eq(l.jobs[0].numjobs, 4);
	cr_assert(l.jobs[0].group_reporting);
	cr_assert_str_eq(l.jobs[1].wait_for, "w");
	cr_assert(l.jobs[1].new_group);
	cr_assert(l.jobs[2].stonewall);
	ub_joblist_free(&l);
}
