/* utgt-bench presets (presets.c): names, job lists, which command-line options may change
 * a CrystalDiskMark run. */
#include <criterion/criterion.h>
#include <string.h>

#include "initiator/presets.h"
#include "common/diag.h"

Test(bench_presets, names)
{
	enum ub_preset p;

	cr_assert(ub_preset_parse("cdm", &p) && p == UB_PRESET_CDM);
	cr_assert(ub_preset_parse("crystaldiskmark", &p) && p == UB_PRESET_CDM);
	cr_assert(ub_preset_parse("seed-rbd", &p) && p == UB_PRESET_SEED_RBD);
	cr_assert(ub_preset_parse("rados-bench", &p) && p == UB_PRESET_RADOS);
	cr_assert_not(ub_preset_parse("iometer", &p));
}

Test(bench_presets, cdm_is_crystaldiskmarks_default_profile)
{
	static const struct {
		const char *name;
		enum ub_rw rw;
		uint64_t bs;
		unsigned qd;
	} want[] = {
	    {"SEQ1M-Q8T1-read", UB_RW_READ, 1 << 20, 8},
	    {"SEQ1M-Q8T1-write", UB_RW_WRITE, 1 << 20, 8},
	    {"SEQ1M-Q1T1-read", UB_RW_READ, 1 << 20, 1},
	    {"SEQ1M-Q1T1-write", UB_RW_WRITE, 1 << 20, 1},
	    {"RND4K-Q32T1-read", UB_RW_RANDREAD, 4096, 32},
	    {"RND4K-Q32T1-write", UB_RW_RANDWRITE, 4096, 32},
	    {"RND4K-Q1T1-read", UB_RW_RANDREAD, 4096, 1},
	    {"RND4K-Q1T1-write", UB_RW_RANDWRITE, 4096, 1},
	};
	struct ub_joblist l = {0};
	struct ub_job base;
	struct diag d = {0};

	ub_job_defaults(&base);
	cr_assert(ub_preset_jobs(UB_PRESET_CDM, &base, &l, &d));
	cr_assert_eq(l.n, 8);
	for (unsigned i = 0; i < 8; i++) {
		cr_assert_str_eq(l.jobs[i].name, want[i].name);
		cr_assert_eq(l.jobs[i].rw, want[i].rw);
		cr_assert_eq(l.jobs[i].bs, want[i].bs);
		cr_assert_eq(l.jobs[i].iodepth, want[i].qd);
		cr_assert_eq(l.jobs[i].numjobs, 1);
		cr_assert_eq(l.jobs[i].runtime_ns, 5000000000ull, "5 s per test by default");
		cr_assert_eq(l.jobs[i].size, 1ull << 30, "over 1 GiB by default");
		cr_assert(l.jobs[i].time_based && l.jobs[i].stonewall);
	}
	cr_assert_eq(ub_cdm_test_size(&base), 1ull << 30);
	ub_joblist_free(&l);
}

Test(bench_presets, cdm_keeps_its_test_definitions)
{
	cr_assert_not(ub_preset_override_ok(UB_PRESET_CDM, "bs"));
	cr_assert_not(ub_preset_override_ok(UB_PRESET_CDM, "iodepth"));
	cr_assert_not(ub_preset_override_ok(UB_PRESET_CDM, "time-based"));
	cr_assert(ub_preset_override_ok(UB_PRESET_CDM, "runtime"));
	cr_assert(ub_preset_override_ok(UB_PRESET_CDM, "filename"));
	cr_assert(ub_preset_override_ok(UB_PRESET_RADOS, "bs"));
}

Test(bench_presets, rados_and_seed)
{
	struct ub_joblist l = {0};
	struct ub_job base;
	struct diag d = {0};

	ub_job_defaults(&base);
	cr_assert(ub_preset_jobs(UB_PRESET_RADOS, &base, &l, &d));
	cr_assert_eq(l.n, 1);
	cr_assert_eq(l.jobs[0].rw, UB_RW_WRITE);
	cr_assert_eq(l.jobs[0].bs, 4u << 20, "rados bench's 4 MiB objects");
	cr_assert_eq(l.jobs[0].iodepth, 16, "rados bench's -t 16");
	cr_assert(l.jobs[0].time_based);
	ub_joblist_free(&l);
	cr_assert(ub_preset_jobs(UB_PRESET_SEED_RBD, &base, &l, &d));
	cr_assert_eq(l.n, 4);
	cr_assert_str_eq(l.jobs[0].filename, "/dev/rbd2");
	cr_assert(strstr(ub_seed_rbd_template, "[rand-write]\nrw=randwrite\nbs=4K\nstonewall\n"));
	ub_joblist_free(&l);
}
