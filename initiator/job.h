/* One fio-style job: what to run, against what, for how long.  Filled from job files
 * ([global] + sections of key=value) and from fio-style command-line options. */
#ifndef UB_JOB_H
#define UB_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diag;

enum ub_rw { UB_RW_READ, UB_RW_WRITE, UB_RW_RANDREAD, UB_RW_RANDWRITE, UB_RW_RW, UB_RW_RANDRW };
enum ub_verify { UB_VERIFY_NONE, UB_VERIFY_CRC32C };

struct ub_job {
	char name[128];
	char filename[1024];
	char ioengine[32];
	enum ub_rw rw;
	unsigned rwmixread; /* percent of I/Os that read in rw/randrw */
	uint64_t bs;
	unsigned iodepth;
	unsigned numjobs;
	uint64_t size;	   /* bytes per job; 0: from offset to the end of the LU */
	unsigned size_pct; /* size=N%: fraction of the LU, resolved when the LU is known */
	uint64_t offset;
	uint64_t runtime_ns; /* 0: until size is done */
	bool time_based;
	uint64_t ramp_ns;
	bool stonewall, new_group, group_reporting;
	bool direct;
	enum ub_verify verify;
	bool do_verify; /* read back and check after a writing job (fio default) */
	unsigned loops;
	uint64_t randseed;
	bool randseed_set;
	char bw_log[256];
	/* Where the job was defined, for error messages ("file:line"). */
	char origin[256];
	int line;
};

/* Defaults as fio has them (bs=4k, iodepth=1, numjobs=1, rw=read, direct=0 -> we default to
 * direct I/O since the engines are direct by nature). */
void ub_job_defaults(struct ub_job *j);

enum ub_opt_result { UB_OPT_OK, UB_OPT_IGNORED, UB_OPT_UNKNOWN, UB_OPT_BAD };
/* Apply one option; key may use '-' or '_'.  val may be NULL for flags ("stonewall").
 * On UB_OPT_UNKNOWN/UB_OPT_BAD err holds the reason; UB_OPT_IGNORED means a fio option we
 * accept for compatibility but that changes nothing here (err names it). */
enum ub_opt_result ub_job_set(struct ub_job *j, const char *key, const char *val, char *err,
			      size_t errlen);
bool ub_job_is_option(const char *key);
/* Checks that need the whole job (after all options are in). */
bool ub_job_validate(const struct ub_job *j, char *err, size_t errlen);

const char *ub_rw_name(enum ub_rw rw);
bool ub_rw_is_random(enum ub_rw rw);
bool ub_rw_reads(const struct ub_job *j);
bool ub_rw_writes(const struct ub_job *j);

/* A list of jobs, growing. */
struct ub_joblist {
	struct ub_job *jobs;
	unsigned n, cap;
};
struct ub_job *ub_joblist_add(struct ub_joblist *l, const struct ub_job *proto);
void ub_joblist_free(struct ub_joblist *l);

/* Parse fio job-file text.  name is used in messages ("name:line: ...").  Jobs are appended
 * to out; the [global] state persists in *global so callers can continue with more text.
 * Returns false (and reports through d) on the first bad line. */
bool ub_jobfile_parse(const char *text, const char *name, struct ub_job *global,
		      struct ub_joblist *out, struct diag *d);
bool ub_jobfile_load(const char *path, struct ub_job *global, struct ub_joblist *out,
		     struct diag *d);

#endif
