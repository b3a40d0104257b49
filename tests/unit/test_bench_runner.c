/* utgt-bench runner: groups, clones, group_reporting merge, exit codes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "initiator/runner.h"

static char path[] = "/var/tmp/ub-run-XXXXXX";

static void setup(void)
{
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 2 << 20), 0);
	close(fd);
}

static void teardown(void)
{
	unlink(path);
}

TestSuite(bench_runner, .init = setup, .fini = teardown);

static struct ub_job *add(struct ub_joblist *l, const char *name, enum ub_rw rw)
{
	struct ub_job j, *p;

	ub_job_defaults(&j);
	snprintf(j.name, sizeof(j.name), "%s", name);
	snprintf(j.filename, sizeof(j.filename), "%s", path);
	j.rw = rw;
	j.size = 512 << 10;
	p = ub_joblist_add(l, &j);
	cr_assert_not_null(p);
	return p;
}

Test(bench_runner, stonewall_and_new_group_start_groups)
{
	struct ub_joblist l = {0};
	unsigned gid[4];

	add(&l, "a", UB_RW_READ);
	add(&l, "b", UB_RW_READ);
	add(&l, "c", UB_RW_READ)->stonewall = true;
	add(&l, "d", UB_RW_READ)->new_group = true;
	cr_assert_eq(ub_assign_groups(&l, gid), 3);
	cr_assert(gid[0] == 0 && gid[1] == 0 && gid[2] == 1 && gid[3] == 2);
	ub_joblist_free(&l);
}

Test(bench_runner, clones_and_group_reporting)
{
	struct ub_joblist l = {0};
	struct ub_bench b;
	struct ub_run run;
	struct ub_run_hooks q = {.quiet = true};
	struct ub_job *w;

	ub_bench_defaults(&b);
	w = add(&l, "w", UB_RW_RANDWRITE);
	w->numjobs = 3;
	w->verify = UB_VERIFY_CRC32C; /* each clone gets its own slice */
	add(&l, "r", UB_RW_READ)->stonewall = true;
	l.jobs[1].numjobs = 2;
	l.jobs[1].group_reporting = true;
	cr_assert_eq(ub_run_jobs(&b, &l, NULL, 0, &q, &run), 0);
	cr_assert_eq(run.ngroups, 2);
	cr_assert_eq(run.nres, 4, "3 clones reported apart + 1 merged group");
	for (unsigned i = 0; i < 3; i++) {
		cr_assert_eq(run.res[i].groupid, 0);
		cr_assert_eq(run.res[i].verify_errors, 0);
		cr_assert_eq(run.res[i].d[1].bytes, (512 << 10) / 3 / 4096 * 4096);
	}
	cr_assert_eq(run.res[3].njobs, 2);
	cr_assert_eq(run.res[3].d[0].bytes, 2 * (512 << 10));
	ub_run_free(&run);
	ub_joblist_free(&l);
}

Test(bench_runner, a_job_that_cannot_start_gives_rc_3)
{
	struct ub_joblist l = {0};
	struct ub_bench b;
	struct ub_run run;
	struct ub_run_hooks q = {.quiet = true};

	ub_bench_defaults(&b);
	snprintf(add(&l, "x", UB_RW_READ)->filename, 64, "/nonexistent/x");
	add(&l, "never", UB_RW_READ)->stonewall = true;
	cr_assert_eq(ub_run_jobs(&b, &l, NULL, 0, &q, &run), 3);
	cr_assert_eq(run.nres, 1, "later groups are not started");
	cr_assert_neq(run.res[0].error, 0);
	ub_run_free(&run);
	ub_joblist_free(&l);
}
