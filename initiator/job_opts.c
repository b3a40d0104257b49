/* The fio options utgt-bench understands, their types and ranges, in one table; and the ones
 * accepted without effect, each with the reason it has none here. */
#include "initiator/job.h"
#include "initiator/iobuf.h"
#include "initiator/job_opts.h"
#include "initiator/opt_values.h"
#include "initiator/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BAD(...)                                                                                   \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		return UB_OPT_BAD;                                                                 \
	} while (0)

typedef bool (*custom_fn)(struct ub_job *j, const char *key, const char *val, char *err,
			  size_t errlen);

enum opt_type { T_STR, T_SIZE, T_UINT, T_FLAG, T_TIME, T_TIME_US, T_CUSTOM, T_LOG };

struct opt_def {
	const char *name;
	enum opt_type type;
	size_t off;
	size_t len;	  /* T_STR: buffer size; T_UINT: field width */
	uint64_t min, max; /* T_TIME: max is the default unit in ns */
	custom_fn fn;
};

#define O(field)  offsetof(struct ub_job, field)
#define S(field)  O(field), sizeof(((struct ub_job *)0)->field)
#define U(field)  O(field), sizeof(((struct ub_job *)0)->field)
#define US	  1000ull
#define SECS	  1000000000ull
#define C(name, fn) {name, T_CUSTOM, 0, 0, 0, 0, fn}

/* ---- custom readers ---- */

static bool c_rw(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	return ub_val_rw(v, j, err, errlen);
}

static void bs_max(struct ub_job *j)
{
	j->bs = 0;
	for (int d = 0; d < 3; d++)
		if (j->bsd[d].max > j->bs)
			j->bs = j->bsd[d].max;
}

static bool c_bs(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	uint64_t sz[3];
	void *out[3] = {&sz[0], &sz[1], &sz[2]};
	bool set[3];

	(void)k;
	for (int d = 0; d < 3; d++)
		j->bsd[d] = ub_job_bsspec(j, d);
	if (!ub_ddir_list(v, ub_val_size, out, set, err, errlen))
		return false;
	for (int d = 0; d < 3; d++) {
		if (!set[d])
			continue;
		if (!sz[d] || sz[d] > 1ull << 30) {
			snprintf(err, errlen, "block size '%s' out of range (1..1g)", v);
			return false;
		}
		memset(&j->bsd[d], 0, sizeof(j->bsd[d]));
		j->bsd[d].min = j->bsd[d].max = sz[d];
	}
	j->bs_set = true;
	bs_max(j);
	return true;
}

static bool c_bsspec(struct ub_job *j, bool split, const char *v, char *err, size_t errlen)
{
	struct ub_bsspec b[3];
	void *out[3] = {&b[0], &b[1], &b[2]};
	bool set[3];

	for (int d = 0; d < 3; d++)
		j->bsd[d] = ub_job_bsspec(j, d);
	if (!ub_ddir_list(v, split ? ub_val_bssplit : ub_val_bsrange, out, set, err, errlen))
		return false;
	for (int d = 0; d < 3; d++) {
		if (!set[d])
			continue;
		if (b[d].max > 1ull << 30) {
			snprintf(err, errlen, "block size in '%s' above 1g", v);
			return false;
		}
		j->bsd[d] = b[d];
	}
	j->bs_set = true;
	bs_max(j);
	return true;
}

static bool c_bsrange(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	return c_bsspec(j, false, v, err, errlen);
}

static bool c_bssplit(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	return c_bsspec(j, true, v, err, errlen);
}

static bool c_rates(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	bool iops = strstr(k, "iops") != NULL, min = strstr(k, "min") != NULL;
	uint64_t *dst = iops ? (min ? j->rate_iops_min : j->rate_iops) : (min ? j->rate_min : j->rate);
	uint64_t val[3] = {0, 0, 0};
	void *out[3] = {&val[0], &val[1], &val[2]};
	bool set[3];

	if (!ub_ddir_list(v, ub_val_size, out, set, err, errlen))
		return false;
	for (int d = 0; d < 3; d++)
		if (set[d])
			dst[d] = val[d];
	return true;
}

static bool c_rate_process(struct ub_job *j, const char *k, const char *v, char *err,
			   size_t errlen)
{
	(void)k;
	if (!strcmp(v, "linear"))
		j->rate_poisson = false;
	else if (!strcmp(v, "poisson"))
		j->rate_poisson = true;
	else {
		snprintf(err, errlen, "'%s': expected linear or poisson", v);
		return false;
	}
	return true;
}

static bool c_dist(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	return ub_val_distribution(v, j, err, errlen);
}

static bool pct_or_size(const char *v, uint64_t *bytes, unsigned *pct, char *err, size_t errlen)
{
	size_t n = strlen(v);
	uint64_t x;

	*pct = 0;
	if (n > 1 && v[n - 1] == '%') {
		char num[16];
		if (n > sizeof(num)) {
			snprintf(err, errlen, "invalid percentage '%s'", v);
			return false;
		}
		memcpy(num, v, n - 1);
		num[n - 1] = '\0';
		if (!ub_parse_uint(num, &x) || x > 100) {
			snprintf(err, errlen, "invalid percentage '%s' (0%%..100%%)", v);
			return false;
		}
		*pct = (unsigned)x;
		*bytes = 0;
		return true;
	}
	if (!ub_parse_size(v, bytes)) {
		snprintf(err, errlen, "invalid size '%s' (e.g. 4k, 1m, 1g, 50%%)", v);
		return false;
	}
	return true;
}

static bool c_size(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	if (!pct_or_size(v, &j->size, &j->size_pct, err, errlen))
		return false;
	if (j->size_pct == 0 && strchr(v, '%')) {
		snprintf(err, errlen, "invalid percentage '%s' (1%%..100%%)", v);
		return false;
	}
	return true;
}

static bool c_offset(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	return pct_or_size(v, &j->offset, &j->offset_pct, err, errlen);
}

static bool c_mixwrite(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	uint64_t x;

	(void)k;
	if (!ub_parse_uint(v, &x) || x > 100) {
		snprintf(err, errlen, "invalid percentage '%s' (0..100)", v);
		return false;
	}
	j->rwmixread = 100 - (unsigned)x;
	return true;
}

static bool c_buffered(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	bool b = true;

	(void)k;
	if (v && *v && !ub_parse_bool(v, &b)) {
		snprintf(err, errlen, "expected 0/1, got '%s'", v);
		return false;
	}
	j->direct = !b;
	return true;
}

static bool c_verify(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	return ub_val_verify(v, &j->verify, err, errlen);
}

static bool c_pattern(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	bool ver = !strncmp(k, "verify", 6);

	return ub_val_pattern(v, ver ? j->verify_pattern : j->buffer_pattern,
			      sizeof(j->verify_pattern),
			      ver ? &j->verify_pattern_len : &j->buffer_pattern_len, err, errlen);
}

static bool c_percentiles(struct ub_job *j, const char *k, const char *v, char *err,
			  size_t errlen)
{
	(void)k;
	return ub_val_percentiles(v, j->percentiles, UB_MAX_PCT, &j->npercentiles, err, errlen);
}

static bool c_cpus(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	if (!strcmp(k, "cpumask")) {
		uint64_t m;
		if (!ub_parse_uint(v, &m)) {
			snprintf(err, errlen, "invalid CPU mask '%s'", v);
			return false;
		}
		memset(j->cpus_allowed, 0, sizeof(j->cpus_allowed));
		j->cpus_allowed[0] = m;
		return true;
	}
	return ub_val_cpulist(v, j->cpus_allowed, 1024, err, errlen);
}

static bool c_cpus_policy(struct ub_job *j, const char *k, const char *v, char *err,
			  size_t errlen)
{
	(void)k;
	if (strcmp(v, "shared") && strcmp(v, "split")) {
		snprintf(err, errlen, "'%s': expected shared or split", v);
		return false;
	}
	j->cpus_split = !strcmp(v, "split");
	return true;
}

static bool c_numa_nodes(struct ub_job *j, const char *k, const char *v, char *err,
			 size_t errlen)
{
	(void)k;
	return ub_val_cpulist(v, &j->numa_nodes, 64, err, errlen);
}

static bool c_numa_mem(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	return ub_val_numa_policy(v, j, err, errlen);
}

static bool c_startdelay(struct ub_job *j, const char *k, const char *v, char *err,
			 size_t errlen)
{
	const char *dash = strchr(v, '-');
	char lo[64];

	(void)k;
	j->startdelay_max_ns = 0;
	if (dash && (size_t)(dash - v) < sizeof(lo)) {
		memcpy(lo, v, (size_t)(dash - v));
		lo[dash - v] = '\0';
		if (ub_parse_time(lo, SECS, &j->startdelay_ns) &&
		    ub_parse_time(dash + 1, SECS, &j->startdelay_max_ns) &&
		    j->startdelay_max_ns >= j->startdelay_ns)
			return true;
	} else if (ub_parse_time(v, SECS, &j->startdelay_ns)) {
		return true;
	}
	snprintf(err, errlen, "invalid time '%s' (e.g. 10, 500ms, 2-5)", v);
	return false;
}

static bool c_zonemode(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	if (!strcmp(v, "none")) {
		j->zonemode = UB_ZONE_NONE;
		return true;
	}
	if (!strcmp(v, "strided")) {
		j->zonemode = UB_ZONE_STRIDED;
		return true;
	}
	if (!strcmp(v, "zbd"))
		snprintf(err, errlen,
			 "zbd is not supported: utgt-bench has no write-pointer model of zoned "
			 "devices (utgt's LUs are not zoned)");
	else
		snprintf(err, errlen, "'%s': expected none or strided", v);
	return false;
}

static bool c_exit_what(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	if (!strcmp(v, "group"))
		j->exit_what = UB_EXIT_GROUP;
	else if (!strcmp(v, "stonewall"))
		j->exit_what = UB_EXIT_STONEWALL;
	else if (!strcmp(v, "all"))
		j->exit_what = UB_EXIT_ALL;
	else {
		snprintf(err, errlen, "'%s': expected group, stonewall or all", v);
		return false;
	}
	return true;
}

static bool c_ss(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	return ub_val_steadystate(v, j, err, errlen);
}

static bool c_float_pct(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	char *end;
	double x = strtod(v, &end);

	(void)k;
	if (end == v || *end || x <= 0 || x > 100) {
		snprintf(err, errlen, "invalid percentile '%s' (0..100]", v);
		return false;
	}
	j->latency_percentile = x;
	return true;
}

static bool c_coe(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	return ub_val_continue_on_error(v, &j->continue_on_error, err, errlen);
}

static bool c_sg_mode(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	return ub_val_sg_mode(v, &j->sg_write_mode, err, errlen);
}

static bool c_cmdprio_bssplit(struct ub_job *j, const char *k, const char *v, char *err,
			      size_t errlen)
{
	(void)k;
	return ub_val_cmdprio_bssplit(v, j, err, errlen);
}

static bool c_sync(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	bool b = true;

	(void)k;
	/* fio 3.33 also takes none/sync/dsync */
	if (!v || !*v || !strcmp(v, "sync") || !strcmp(v, "dsync"))
		b = true;
	else if (!strcmp(v, "none"))
		b = false;
	else if (!ub_parse_bool(v, &b)) {
		snprintf(err, errlen, "expected 0/1, none, sync or dsync, got '%s'", v);
		return false;
	}
	j->sync_writes = b;
	return true;
}

static bool c_mem(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)k;
	return ub_iobufs_parse_mem(v, &j->mem, err, errlen);
}

static bool c_kb_base(struct ub_job *j, const char *k, const char *v, char *err, size_t errlen)
{
	(void)j;
	(void)k;
	if (strcmp(v, "1024")) {
		snprintf(err, errlen, "kb_base=%s is not supported: sizes are 1024-based here", v);
		return false;
	}
	return true;
}

static const struct opt_def opts[] = {
    {"name", T_STR, S(name), 0, 0, NULL},
    {"filename", T_STR, S(filename), 0, 0, NULL},
    {"ioengine", T_STR, S(ioengine), 0, 0, NULL},
    C("rw", c_rw),
    C("readwrite", c_rw),
    {"rwmixread", T_UINT, U(rwmixread), 0, 100, NULL},
    C("rwmixwrite", c_mixwrite),
    C("bs", c_bs),
    C("blocksize", c_bs),
    C("bsrange", c_bsrange),
    C("blocksize_range", c_bsrange),
    C("bssplit", c_bssplit),
    {"blockalign", T_SIZE, U(blockalign), 1, 1ull << 30, NULL},
    {"ba", T_SIZE, U(blockalign), 1, 1ull << 30, NULL},
    {"norandommap", T_FLAG, U(norandommap), 0, 0, NULL},
    {"randrepeat", T_FLAG, U(randrepeat), 0, 0, NULL},
    C("random_distribution", c_dist),
    C("zonemode", c_zonemode),
    {"zonesize", T_SIZE, U(zonesize), 1, UINT64_MAX, NULL},
    {"zoneskip", T_SIZE, U(zoneskip), 0, UINT64_MAX, NULL},
    {"zonerange", T_SIZE, U(zonerange), 1, UINT64_MAX, NULL},
    {"iodepth", T_UINT, U(iodepth), 1, 65536, NULL},
    {"iodepth_batch", T_UINT, U(iodepth_batch), 0, 65536, NULL},
    {"iodepth_batch_submit", T_UINT, U(iodepth_batch), 0, 65536, NULL},
    {"numjobs", T_UINT, U(numjobs), 1, 1024, NULL},
    C("size", c_size),
    {"fill_device", T_FLAG, U(fill_device), 0, 0, NULL},
    {"fill_fs", T_FLAG, U(fill_device), 0, 0, NULL},
    C("offset", c_offset),
    {"offset_increment", T_SIZE, U(offset_increment), 0, UINT64_MAX, NULL},
    {"io_size", T_SIZE, U(io_size), 1, UINT64_MAX, NULL},
    {"io_limit", T_SIZE, U(io_size), 1, UINT64_MAX, NULL},
    {"number_ios", T_UINT, U(number_ios), 0, UINT64_MAX, NULL},
    {"runtime", T_TIME, U(runtime_ns), 0, SECS, NULL},
    {"timeout", T_TIME, U(runtime_ns), 0, SECS, NULL},
    {"time_based", T_FLAG, U(time_based), 0, 0, NULL},
    {"ramp_time", T_TIME, U(ramp_ns), 0, SECS, NULL},
    C("startdelay", c_startdelay),
    {"stonewall", T_FLAG, U(stonewall), 0, 0, NULL},
    {"wait_for_previous", T_FLAG, U(stonewall), 0, 0, NULL},
    {"new_group", T_FLAG, U(new_group), 0, 0, NULL},
    {"group_reporting", T_FLAG, U(group_reporting), 0, 0, NULL},
    {"wait_for", T_STR, S(wait_for), 0, 0, NULL},
    {"exitall", T_FLAG, U(exitall), 0, 0, NULL},
    C("exit_what", c_exit_what),
    {"direct", T_FLAG, U(direct), 0, 0, NULL},
    C("buffered", c_buffered),
    C("mem", c_mem),
    C("iomem", c_mem),
    {"mem_align", T_SIZE, U(mem_align), 0, 1ull << 30, NULL},
    {"iomem_align", T_SIZE, U(mem_align), 0, 1ull << 30, NULL},
    C("rate", c_rates),
    C("rate_min", c_rates),
    C("ratemin", c_rates),
    C("rate_iops", c_rates),
    C("rate_iops_min", c_rates),
    C("rate_process", c_rate_process),
    {"thinktime", T_TIME_US, U(thinktime_us), 0, US, NULL},
    {"thinktime_spin", T_TIME_US, U(thinktime_spin_us), 0, US, NULL},
    {"thinktime_blocks", T_UINT, U(thinktime_blocks), 1, 1u << 30, NULL},
    {"flow_id", T_UINT, U(flow_id), 0, 1023, NULL},
    {"flow", T_CUSTOM, 0, 0, 0, 0, NULL}, /* signed: handled in ub_job_set */
    {"flow_watermark", T_UINT, U(flow_watermark), 0, 1u << 30, NULL},
    {"flow_sleep", T_UINT, U(flow_sleep_us), 0, 10000000, NULL},
    C("verify", c_verify),
    {"do_verify", T_FLAG, U(do_verify), 0, 0, NULL},
    {"verify_only", T_FLAG, U(verify_only), 0, 0, NULL},
    {"verify_backlog", T_UINT, U(verify_backlog), 0, 1u << 30, NULL},
    C("verify_pattern", c_pattern),
    C("buffer_pattern", c_pattern),
    {"buffer_compress_percentage", T_UINT, U(buffer_compress_pct), 0, 100, NULL},
    {"dedupe_percentage", T_UINT, U(dedupe_pct), 0, 100, NULL},
    {"zero_buffers", T_FLAG, U(zero_buffers), 0, 0, NULL},
    C("continue_on_error", c_coe),
    {"fsync", T_UINT, U(fsync), 0, 1u << 30, NULL},
    {"fdatasync", T_UINT, U(fdatasync), 0, 1u << 30, NULL},
    C("sync", c_sync),
    {"end_fsync", T_FLAG, U(end_fsync), 0, 0, NULL},
    {"fsync_on_close", T_FLAG, U(end_fsync), 0, 0, NULL},
    C("sg_write_mode", c_sg_mode),
    {"prioclass", T_UINT, U(prioclass), 0, 3, NULL},
    {"prio", T_UINT, U(prio), 0, 7, NULL},
    {"cmdprio_percentage", T_UINT, U(cmdprio_pct), 0, 100, NULL},
    {"cmdprio_class", T_UINT, U(cmdprio_class), 0, 3, NULL},
    {"cmdprio", T_UINT, U(cmdprio), 0, 7, NULL},
    C("cmdprio_bssplit", c_cmdprio_bssplit),
    C("cpus_allowed", c_cpus),
    C("cpumask", c_cpus),
    C("cpus_allowed_policy", c_cpus_policy),
    C("numa_cpu_nodes", c_numa_nodes),
    C("numa_mem_policy", c_numa_mem),
    {"sqthread_poll", T_FLAG, U(sqthread_poll), 0, 0, NULL},
    {"sqthread_poll_cpu", T_UINT, U(sqthread_poll_cpu), 0, 1023, NULL},
    {"registerfiles", T_FLAG, U(registerfiles), 0, 0, NULL},
    {"nonvectored", T_UINT, U(nonvectored), 0, 1, NULL},
    {"loops", T_UINT, U(loops), 1, 1000000, NULL},
    {"randseed", T_UINT, U(randseed), 0, UINT64_MAX, NULL},
    C("percentile_list", c_percentiles),
    {"write_bw_log", T_LOG, S(bw_log), 0, 0, NULL},
    {"write_lat_log", T_LOG, S(lat_log), 0, 0, NULL},
    {"write_iops_log", T_LOG, S(iops_log), 0, 0, NULL},
    {"log_avg_msec", T_UINT, U(log_avg_msec), 0, 86400000, NULL},
    {"log_offset", T_FLAG, U(log_offset), 0, 0, NULL},
    {"log_prio", T_FLAG, U(log_prio), 0, 0, NULL},
    {"latency_target", T_TIME, U(latency_target_ns), 0, US, NULL},
    {"latency_window", T_TIME, U(latency_window_ns), 0, US, NULL},
    C("latency_percentile", c_float_pct),
    C("ss", c_ss),
    C("steadystate", c_ss),
    {"ss_dur", T_TIME, U(ss_dur_ns), 1, SECS, NULL},
    {"steadystate_duration", T_TIME, U(ss_dur_ns), 1, SECS, NULL},
    {"ss_ramp", T_TIME, U(ss_ramp_ns), 0, SECS, NULL},
    {"steadystate_ramp_time", T_TIME, U(ss_ramp_ns), 0, SECS, NULL},
    C("kb_base", c_kb_base),
};

/* Accepted so that existing job files run; each has nothing to act on in utgt-bench. */
static const struct {
	const char *name, *why;
} ignored[] = {
    {"thread", "jobs always run as threads"},
    {"threads", "jobs always run as threads"},
    {"description", "a comment"},
    {"directory", "a LU is given with filename=, not created in a directory"},
    {"filesize", "the LU's size is what it is (size= limits the region)"},
    {"nrfiles", "one LU per job"},
    {"openfiles", "one LU per job"},
    {"filename_format", "a LU is given with filename="},
    {"unlink", "nothing is created"},
    {"unlink_each_loop", "nothing is created"},
    {"create_on_open", "nothing is created"},
    {"create_serialize", "nothing is created"},
    {"allow_file_create", "nothing is created"},
    {"allow_mounted_write", "no file system check is made"},
    {"fallocate", "nothing is created"},
    {"pre_read", "there is no page cache to warm"},
    {"invalidate", "there is no page cache to drop for a LU"},
    {"fadvise_hint", "there is no page cache for a LU"},
    {"ioscheduler", "the kernel's scheduler is not in the path"},
    {"overwrite", "a LU is always overwritten in place"},
    {"gtod_reduce", "latencies are always measured"},
    {"disable_lat", "latencies are always measured"},
    {"disable_clat", "latencies are always measured"},
    {"disable_slat", "latencies are always measured"},
    {"disable_bw_measurement", "bandwidth is always measured"},
    {"clat_percentiles", "percentiles are always reported"},
    {"lat_percentiles", "percentiles are reported for clat"},
    {"slat_percentiles", "percentiles are reported for clat"},
    {"clocksource", "CLOCK_MONOTONIC is the clock"},
    {"random_generator", "utgt-bench has one generator (a keyed bijection, no repeats)"},
    {"io_submit_mode", "submission never waits for completions here"},
    {"iodepth_batch_complete", "completions are reaped as they come"},
    {"iodepth_batch_complete_min", "completions are reaped as they come"},
    {"iodepth_batch_complete_max", "completions are reaped as they come"},
    {"iodepth_low", "the queue is refilled at once"},
    {"userspace_reap", "completions are reaped by the engine"},
    {"refill_buffers", "write buffers are filled once per I/O slot (verify refills)"},
    {"scramble_buffers", "write buffers are already incompressible"},
    {"unit_base", "reports use fio's default units"},
    {"verify_dump", "a mismatch is described in the report instead"},
    {"verify_async", "verification runs in the job's own loop"},
    {"verify_fatal", "a verify mismatch always ends the job"},
    {"verify_interval", "every logical block carries its own header"},
    {"verify_offset", "every logical block carries its own header"},
    {"verify_state_save", "no verify state file is kept"},
    {"verify_state_load", "no verify state file is kept"},
    {"error_dump", "errors are described in the report"},
    {"ignore_error", "errors end the job unless continue_on_error says otherwise"},
    {"dedupe_mode", "dedupe_percentage repeats buffers from the whole working set"},
    {"dedupe_global", "dedupe_percentage repeats buffers from the whole working set"},
    {"dedupe_working_set_percentage", "dedupe_percentage repeats from the whole working set"},
    {"buffer_compress_chunk", "the compressible part is one run per buffer"},
    {"cmd_type", "SCSI commands are built by the engine"},
    {"group_id", "not a job option here"},
    {"stats", "statistics are always kept"},
    {"per_job_logs", "logs are always per job"},
    {"fixedbufs", "buffers are not registered with io_uring"},
    {"hipri", "completions are interrupt-driven: the loop sleeps in poll(), it does not spin"},
    {"lockmem", "no memory is locked"},
    {"read_beyond_wp", "only meaningful with zonemode=zbd"},
    {"max_open_zones", "only meaningful with zonemode=zbd"},
    {"exitall_on_error", "an error ends the job and the run reports it"},
    {"cgroup", "no control groups are managed"},
    {"nice", "job threads run at the tester's priority"},
};

static void normalize(const char *key, char *out, size_t n)
{
	size_t i;

	for (i = 0; key[i] && i + 1 < n; i++)
		out[i] = key[i] == '-' ? '_' : key[i];
	out[i] = '\0';
}

static const struct opt_def *find(const char *key)
{
	char k[64];

	normalize(key, k, sizeof(k));
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (!strcmp(k, opts[i].name))
			return &opts[i];
	return NULL;
}

static const char *ignored_why(const char *key)
{
	char k[64];

	normalize(key, k, sizeof(k));
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (!strcmp(k, ignored[i].name))
			return ignored[i].why;
	return NULL;
}

bool ub_job_is_option(const char *key)
{
	return find(key) || ignored_why(key);
}

const char *ub_job_option_name(unsigned i, bool *ignored_out)
{
	size_t n = sizeof(opts) / sizeof(opts[0]);

	if (i < n) {
		*ignored_out = false;
		return opts[i].name;
	}
	i -= (unsigned)n;
	if (i < sizeof(ignored) / sizeof(ignored[0])) {
		*ignored_out = true;
		return ignored[i].name;
	}
	return NULL;
}

void ub_job_defaults(struct ub_job *j)
{
	memset(j, 0, sizeof(*j));
	j->rw = UB_RW_READ;
	j->rwmixread = 50;
	j->bs = 4096;
	j->iodepth = 1;
	j->numjobs = 1;
	j->direct = true;
	j->loops = 1;
	j->do_verify = true;
	j->randrepeat = true;
	j->flow_watermark = 1024;
	j->cmdprio_class = 1;
	j->prioclass = -1;
	j->prio = -1;
	j->sqthread_poll_cpu = -1;
	j->nonvectored = -1;
	j->iodepth_batch = 1;
	j->latency_percentile = 100.0;
	j->exit_what = UB_EXIT_GROUP;
}

struct ub_bsspec ub_job_bsspec(const struct ub_job *j, int ddir)
{
	struct ub_bsspec b;

	if (j->bs_set)
		return j->bsd[ddir];
	memset(&b, 0, sizeof(b));
	b.min = b.max = j->bs;
	return b;
}

uint64_t ub_job_min_bs(const struct ub_job *j)
{
	uint64_t m = UINT64_MAX;

	for (int d = 0; d < 3; d++) {
		struct ub_bsspec b = ub_job_bsspec(j, d);
		if (b.min < m)
			m = b.min;
	}
	return m;
}

bool ub_rw_is_random(enum ub_rw rw)
{
	return rw == UB_RW_RANDREAD || rw == UB_RW_RANDWRITE || rw == UB_RW_RANDRW ||
	       rw == UB_RW_RANDTRIM || rw == UB_RW_RANDTRIMWRITE;
}

bool ub_rw_reads(const struct ub_job *j)
{
	return j->rw == UB_RW_READ || j->rw == UB_RW_RANDREAD ||
	       ((j->rw == UB_RW_RW || j->rw == UB_RW_RANDRW) && j->rwmixread > 0);
}

bool ub_rw_writes(const struct ub_job *j)
{
	return j->rw == UB_RW_WRITE || j->rw == UB_RW_RANDWRITE || j->rw == UB_RW_TRIMWRITE ||
	       j->rw == UB_RW_RANDTRIMWRITE ||
	       ((j->rw == UB_RW_RW || j->rw == UB_RW_RANDRW) && j->rwmixread < 100);
}

bool ub_rw_trims(const struct ub_job *j)
{
	return j->rw == UB_RW_TRIM || j->rw == UB_RW_RANDTRIM || j->rw == UB_RW_TRIMWRITE ||
	       j->rw == UB_RW_RANDTRIMWRITE;
}

/* Remember key=value for the report (a later value of the same key replaces it). */
static void remember(struct ub_job *j, const char *key, const char *val)
{
	char k[64], line[600];
	char *p = j->given;
	size_t n, kl;

	normalize(key, k, sizeof(k));
	kl = strlen(k);
	while (*p) {
		char *nl = strchr(p, '\n');
		if (!nl)
			break;
		if (!strncmp(p, k, kl) && p[kl] == '=') {
			memmove(p, nl + 1, strlen(nl + 1) + 1);
			continue;
		}
		p = nl + 1;
	}
	snprintf(line, sizeof(line), "%s=%s\n", k, val ? val : "");
	n = strlen(j->given);
	if (n + strlen(line) < sizeof(j->given))
		strcpy(j->given + n, line);
}

static enum ub_opt_result set_opt(struct ub_job *j, const char *key, const char *val, char *err,
				  size_t errlen);

enum ub_opt_result ub_job_set(struct ub_job *j, const char *key, const char *val, char *err,
			      size_t errlen)
{
	enum ub_opt_result r = set_opt(j, key, val, err, errlen);

	if (r == UB_OPT_OK || r == UB_OPT_IGNORED)
		remember(j, key, val);
	return r;
}

static enum ub_opt_result set_opt(struct ub_job *j, const char *key, const char *val, char *err,
				  size_t errlen)
{
	const struct opt_def *o = find(key);
	char *field;
	uint64_t v;
	bool b;

	if (!o) {
		const char *why = ignored_why(key);
		if (why) {
			snprintf(err, errlen, "option '%s' accepted without effect: %s", key, why);
			return UB_OPT_IGNORED;
		}
		snprintf(err, errlen, "unknown option '%s'", key);
		return UB_OPT_UNKNOWN;
	}
	field = (char *)j + o->off;
	if (!val && o->type != T_FLAG && o->type != T_LOG && strcmp(o->name, "buffered") &&
	    strcmp(o->name, "sync"))
		BAD("option '%s' needs a value", key);
	switch (o->type) {
	case T_STR:
		if (strlen(val) >= o->len)
			BAD("%s: value too long (max %zu characters)", key, o->len - 1);
		strcpy(field, val);
		return UB_OPT_OK;
	case T_LOG:
		/* write_bw_log without a value: fio names the log after the job */
		if (!val || !*val)
			val = j->name[0] ? j->name : "job";
		if (strlen(val) >= o->len)
			BAD("%s: value too long (max %zu characters)", key, o->len - 1);
		strcpy(field, val);
		return UB_OPT_OK;
	case T_FLAG:
		if (!val || !*val)
			b = true;
		else if (!ub_parse_bool(val, &b))
			BAD("%s: expected 0/1, got '%s'", key, val);
		*(bool *)field = b;
		return UB_OPT_OK;
	case T_TIME:
	case T_TIME_US:
		if (!ub_parse_time(val, o->max, &v))
			BAD("%s: invalid time '%s' (e.g. 60, 500ms, 2m)", key, val);
		if (o->min && !v)
			BAD("%s: must not be zero", key);
		/* thinktime and friends are kept in microseconds, as fio does */
		*(uint64_t *)field = o->type == T_TIME_US ? v / 1000 : v;
		return UB_OPT_OK;
	case T_SIZE:
		if (!ub_parse_size(val, &v))
			BAD("%s: invalid size '%s' (e.g. 4k, 1m, 1g)", key, val);
		if (v < o->min || v > o->max)
			BAD("%s: %s out of range", key, val);
		*(uint64_t *)field = v;
		return UB_OPT_OK;
	case T_UINT:
		if (!ub_parse_uint(val, &v))
			BAD("%s: invalid number '%s'", key, val);
		if (v < o->min || v > o->max)
			BAD("%s: %s out of range (%llu..%llu)", key, val,
			    (unsigned long long)o->min, (unsigned long long)o->max);
		if (o->off == O(randseed))
			j->randseed_set = true;
		if (o->len == sizeof(uint64_t))
			*(uint64_t *)field = v;
		else
			*(unsigned *)field = (unsigned)v;
		return UB_OPT_OK;
	case T_CUSTOM:
		if (!o->fn) { /* flow: a signed weight */
			long x;
			char *end;
			x = strtol(val, &end, 10);
			if (end == val || *end || x < -1000000 || x > 1000000)
				BAD("%s: invalid number '%s'", key, val);
			j->flow = (int)x;
			return UB_OPT_OK;
		}
		if (!o->fn(j, o->name, val, err, errlen)) {
			char tmp[300];
			snprintf(tmp, sizeof(tmp), "%s: %s", key, err);
			snprintf(err, errlen, "%s", tmp);
			return UB_OPT_BAD;
		}
		return UB_OPT_OK;
	}
	BAD("%s: unhandled option type", key);
}

bool ub_job_validate(const struct ub_job *j, bool need_target, char *err, size_t errlen)
{
	uint64_t minbs = ub_job_min_bs(j);

	if (need_target && !j->filename[0] && strcmp(j->ioengine, "null") &&
	    strcmp(j->ioengine, "cpp_null")) {
		snprintf(err, errlen, "job '%s': no filename (give --filename=URL|PATH or --paths)",
			 j->name);
		return false;
	}
	if (j->size && j->size < minbs) {
		snprintf(err, errlen, "job '%s': size %llu is smaller than bs %llu", j->name,
			 (unsigned long long)j->size, (unsigned long long)minbs);
		return false;
	}
	if (j->verify != UB_VERIFY_NONE) {
		for (int d = 0; d < 2; d++) {
			struct ub_bsspec b = ub_job_bsspec(j, d);
			if (b.min != b.max || b.nsplit > 1) {
				snprintf(err, errlen,
					 "job '%s': verify needs one block size (bsrange/bssplit "
					 "given)",
					 j->name);
				return false;
			}
		}
		if (ub_job_bsspec(j, 0).min != ub_job_bsspec(j, 1).min) {
			snprintf(err, errlen, "job '%s': verify needs the same bs for reads and "
					      "writes",
				 j->name);
			return false;
		}
	}
	if (j->verify == UB_VERIFY_PATTERN && !j->verify_pattern_len) {
		snprintf(err, errlen, "job '%s': verify=pattern needs verify_pattern", j->name);
		return false;
	}
	if (j->zonemode == UB_ZONE_STRIDED && !j->zonesize) {
		snprintf(err, errlen, "job '%s': zonemode=strided needs zonesize", j->name);
		return false;
	}
	if (j->latency_target_ns && !j->latency_window_ns) {
		snprintf(err, errlen, "job '%s': latency_target needs latency_window", j->name);
		return false;
	}
	if (j->ss_mode && !j->ss_dur_ns) {
		snprintf(err, errlen, "job '%s': ss needs ss_dur", j->name);
		return false;
	}
	return true;
}

struct ub_job *ub_joblist_add(struct ub_joblist *l, const struct ub_job *proto)
{
	if (l->n == l->cap) {
		unsigned cap = l->cap ? l->cap * 2 : 8;
		struct ub_job *nj = realloc(l->jobs, cap * sizeof(*nj));
		if (!nj)
			return NULL;
		l->jobs = nj;
		l->cap = cap;
	}
	l->jobs[l->n] = *proto;
	return &l->jobs[l->n++];
}

void ub_joblist_free(struct ub_joblist *l)
{
	free(l->jobs);
	l->jobs = NULL;
	l->n = l->cap = 0;
}
