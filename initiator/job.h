/* One fio-style job: what to run, against what, for how long.  Filled from job files
 * ([global] + sections of key=value) and from fio-style command-line options. */
#ifndef UB_JOB_H
#define UB_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "initiator/iobuf.h"

struct diag;

enum ub_rw {
	UB_RW_READ,
	UB_RW_WRITE,
	UB_RW_RANDREAD,
	UB_RW_RANDWRITE,
	UB_RW_RW,
	UB_RW_RANDRW,
	UB_RW_TRIM,
	UB_RW_RANDTRIM,
	UB_RW_TRIMWRITE,
	UB_RW_RANDTRIMWRITE,
};
#define UB_NRW 10

/* Data directions as fio counts them. */
enum ub_ddir { UB_DD_READ, UB_DD_WRITE, UB_DD_TRIM };
#define UB_NDDIR 3

enum ub_verify {
	UB_VERIFY_NONE,
	UB_VERIFY_CRC32C,
	UB_VERIFY_CRC32,
	UB_VERIFY_CRC64,
	UB_VERIFY_MD5,
	UB_VERIFY_SHA1,
	UB_VERIFY_SHA256,
	UB_VERIFY_SHA512,
	UB_VERIFY_META,	   /* header only: LBA, generation, seed */
	UB_VERIFY_PATTERN, /* verify_pattern alone: every byte is the pattern */
};

enum ub_dist { UB_DIST_RANDOM, UB_DIST_ZIPF, UB_DIST_PARETO, UB_DIST_NORMAL, UB_DIST_ZONED };
enum ub_zonemode { UB_ZONE_NONE, UB_ZONE_STRIDED };
enum ub_exit_what { UB_EXIT_GROUP, UB_EXIT_STONEWALL, UB_EXIT_ALL };

#define UB_MAX_SPLIT 32
#define UB_MAX_PCT   64
#define UB_MAX_ZONES 16

struct ub_bssplit {
	uint64_t bs;
	unsigned pct;
};

/* Block sizes of one direction: a range (bsrange, bs) or a weighted list (bssplit). */
struct ub_bsspec {
	uint64_t min, max;
	unsigned nsplit;
	struct ub_bssplit split[UB_MAX_SPLIT];
};

/* random_distribution=zoned:50/5:30/15:20/ -> pct of accesses to pct of the region */
struct ub_zone {
	unsigned access_pct, size_pct;
};

/* cmdprio_bssplit entry: percentage of I/Os of this size sent with class/level */
struct ub_prio_split {
	uint64_t bs;
	unsigned pct;
	int cls, level; /* -1: the job's cmdprio_class/cmdprio */
	uint8_t ddir;
};

struct ub_job {
	char name[128];
	char filename[1024];
	char ioengine[32];
	enum ub_rw rw;
	int64_t rw_skip;	 /* rw=read:8k: bytes skipped (negative: backwards) after each I/O */
	unsigned rw_rand_seq;	 /* rw=randread:8: a new random offset every N I/Os */
	unsigned rwmixread;	 /* percent of I/Os that read in rw/randrw */
	uint64_t bs;		 /* the largest block size of any direction (buffers) */
	bool bs_set;		 /* bsd[] given explicitly (bs=R,W,T, bsrange, bssplit) */
	struct ub_bsspec bsd[3]; /* per direction */
	uint64_t blockalign;	 /* random offsets aligned to this (0: the direction's min bs) */
	bool norandommap;
	bool randrepeat;
	enum ub_dist dist;
	double dist_arg; /* zipf theta, pareto h, normal stddev percent */
	unsigned nzones;
	struct ub_zone zones[UB_MAX_ZONES];
	enum ub_zonemode zonemode;
	uint64_t zonesize, zoneskip, zonerange;
	unsigned iodepth;
	unsigned iodepth_batch; /* block engine: SQEs per io_uring_submit (fio: 1, at once) */
	unsigned numjobs;
	uint64_t size;	   /* bytes per job; 0: from offset to the end of the LU */
	unsigned size_pct; /* size=N%: fraction of the LU, resolved when the LU is known */
	bool fill_device;
	uint64_t offset;
	unsigned offset_pct;
	uint64_t offset_increment;
	uint64_t io_size;     /* bytes to transfer (may wrap the region); 0: size * loops */
	uint64_t number_ios;  /* stop after this many I/Os; 0: no limit */
	uint64_t runtime_ns;  /* 0: until size is done */
	bool time_based;
	uint64_t ramp_ns;
	uint64_t startdelay_ns, startdelay_max_ns; /* a range picks at random */
	bool stonewall, new_group, group_reporting;
	char wait_for[128];
	bool exitall;
	enum ub_exit_what exit_what;
	bool direct;
	enum ub_mem mem;    /* fio's mem/iomem: what the buffers are and so where they start */
	uint64_t mem_align; /* fio's mem_align: buffers start this far past a page boundary */
	/* pacing */
	uint64_t rate[3], rate_min[3];	   /* bytes/s per direction */
	uint64_t rate_iops[3], rate_iops_min[3];
	bool rate_poisson;
	uint64_t thinktime_us, thinktime_spin_us;
	unsigned thinktime_blocks;
	unsigned flow_id;
	int flow;
	unsigned flow_watermark;
	unsigned flow_sleep_us;
	/* data integrity */
	enum ub_verify verify;
	bool do_verify; /* read back and check after a writing job (fio default) */
	bool verify_only;
	unsigned verify_backlog;
	uint8_t verify_pattern[64];
	unsigned verify_pattern_len;
	uint8_t buffer_pattern[64];
	unsigned buffer_pattern_len;
	unsigned buffer_compress_pct, dedupe_pct;
	bool zero_buffers;
	unsigned continue_on_error; /* bit per ddir: 1 read, 2 write, 4 verify */
	/* flushes: SYNCHRONIZE CACHE every fsync writes; sync=1 writes with FUA */
	unsigned fsync, fdatasync;
	bool sync_writes, end_fsync;
	/* SCSI write modes of fio's sg engine */
	int sg_write_mode; /* enum ub_sg_mode */
	/* priorities (the block engine's io_uring ioprio) */
	int prioclass, prio;
	unsigned cmdprio_pct;
	int cmdprio_class, cmdprio;
	unsigned nprio_split;
	struct ub_prio_split prio_split[UB_MAX_SPLIT];
	/* placement */
	uint64_t cpus_allowed[16]; /* bit mask, up to 1024 CPUs; all zero: no pinning */
	bool cpus_split;
	uint64_t numa_nodes; /* numa_cpu_nodes as a bit mask; 0: not set */
	int numa_mem_mode;   /* 0 none, 1 bind, 2 interleave, 3 preferred, 4 local */
	uint64_t numa_mem_nodes;
	/* io_uring options of the block engine */
	bool sqthread_poll, registerfiles, hipri;
	int nonvectored; /* -1: READ/WRITE when the kernel has them, as fio's probe */
	int sqthread_poll_cpu;
	/* measurement */
	unsigned loops;
	uint64_t randseed;
	bool randseed_set;
	double percentiles[UB_MAX_PCT];
	unsigned npercentiles;
	char bw_log[256], lat_log[256], iops_log[256];
	unsigned log_avg_msec;
	bool log_offset, log_prio;
	/* latency_target: find the depth whose latency_percentile stays under the target */
	uint64_t latency_target_ns, latency_window_ns;
	double latency_percentile;
	/* steady state: stop when the metric's last ss_dur seconds are flat */
	int ss_mode; /* 0 none, 1 iops, 2 iops_slope, 3 bw, 4 bw_slope */
	double ss_limit;
	bool ss_pct;
	uint64_t ss_dur_ns, ss_ramp_ns;
	/* The options as given, "key=value\n" each, for the JSON report's "job options". */
	char given[1536];
	/* Where the job was defined, for error messages ("file:line"). */
	char origin[256];
	int line;
};

/* fio's sg_write_mode values that utgt-bench's SCSI engines send. */
enum ub_sg_mode { UB_SG_WRITE, UB_SG_VERIFY_00, UB_SG_VERIFY_01, UB_SG_VERIFY_11, UB_SG_SAME_NDOB };

/* Defaults as fio has them (bs=4k, iodepth=1, numjobs=1, rw=read), except direct=1: the engines
 * are direct by nature and the block engine measures the device, not the page cache. */
void ub_job_defaults(struct ub_job *j);

enum ub_opt_result { UB_OPT_OK, UB_OPT_IGNORED, UB_OPT_UNKNOWN, UB_OPT_BAD };
/* Apply one option; key may use '-' or '_'.  val may be NULL for flags ("stonewall").
 * On UB_OPT_UNKNOWN/UB_OPT_BAD err holds the reason; UB_OPT_IGNORED means a fio option we
 * accept for compatibility but that changes nothing here (err names it). */
enum ub_opt_result ub_job_set(struct ub_job *j, const char *key, const char *val, char *err,
			      size_t errlen);
bool ub_job_is_option(const char *key);
/* Checks that need the whole job (after all options are in).  need_target: a filename is
 * required (not for --parse-only: the target comes with the command line). */
bool ub_job_validate(const struct ub_job *j, bool need_target, char *err, size_t errlen);
/* The block sizes of one direction (bsd[] when set, else bs). */
struct ub_bsspec ub_job_bsspec(const struct ub_job *j, int ddir);
uint64_t ub_job_min_bs(const struct ub_job *j);

const char *ub_rw_name(enum ub_rw rw);
bool ub_rw_parse(const char *s, enum ub_rw *rw);
bool ub_rw_is_random(enum ub_rw rw);
bool ub_rw_reads(const struct ub_job *j);
bool ub_rw_writes(const struct ub_job *j);
bool ub_rw_trims(const struct ub_job *j);

/* A list of jobs, growing. */
struct ub_joblist {
	struct ub_job *jobs;
	unsigned n, cap;
};
struct ub_job *ub_joblist_add(struct ub_joblist *l, const struct ub_job *proto);
void ub_joblist_free(struct ub_joblist *l);

/* Parse fio job-file text.  name is used in messages ("name:line: ...").  Jobs are appended
 * to out; the [global] state persists in *global so callers can continue with more text.
 * Every bad line is reported through d; false when there was any. */
bool ub_jobfile_parse(const char *text, const char *name, struct ub_job *global,
		      struct ub_joblist *out, struct diag *d);
bool ub_jobfile_load(const char *path, struct ub_job *global, struct ub_joblist *out,
		     struct diag *d);

#endif
