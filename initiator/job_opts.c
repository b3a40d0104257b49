/* The fio options utgt-bench understands, their types and ranges, in one table. */
#include "initiator/job.h"
#include "initiator/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum opt_type { T_STR, T_SIZE, T_UINT, T_FLAG, T_TIME, T_RW, T_VERIFY, T_SIZE_OR_PCT, T_MIXW };

struct opt_def {
	const char *name;
	enum opt_type type;
	size_t off;
	size_t len; /* T_STR: buffer size */
	uint64_t min, max;
};

#define O(field) offsetof(struct ub_job, field)
#define S(field) O(field), sizeof(((struct ub_job *)0)->field)

static const struct opt_def opts[] = {
    {"name", T_STR, S(name), 0, 0},
    {"filename", T_STR, S(filename), 0, 0},
    {"ioengine", T_STR, S(ioengine), 0, 0},
    {"rw", T_RW, O(rw), 0, 0, 0},
    {"readwrite", T_RW, O(rw), 0, 0, 0},
    {"rwmixread", T_UINT, O(rwmixread), 0, 0, 100},
    {"rwmixwrite", T_MIXW, O(rwmixread), 0, 0, 100},
    {"bs", T_SIZE, O(bs), 0, 1, 1ull << 30},
    {"blocksize", T_SIZE, O(bs), 0, 1, 1ull << 30},
    {"iodepth", T_UINT, O(iodepth), 0, 1, 65536},
    {"numjobs", T_UINT, O(numjobs), 0, 1, 1024},
    {"size", T_SIZE_OR_PCT, O(size), 0, 0, UINT64_MAX},
    {"offset", T_SIZE, O(offset), 0, 0, UINT64_MAX},
    {"runtime", T_TIME, O(runtime_ns), 0, 0, UINT64_MAX},
    {"timeout", T_TIME, O(runtime_ns), 0, 0, UINT64_MAX},
    {"time_based", T_FLAG, O(time_based), 0, 0, 0},
    {"ramp_time", T_TIME, O(ramp_ns), 0, 0, UINT64_MAX},
    {"stonewall", T_FLAG, O(stonewall), 0, 0, 0},
    {"wait_for_previous", T_FLAG, O(stonewall), 0, 0, 0},
    {"new_group", T_FLAG, O(new_group), 0, 0, 0},
    {"group_reporting", T_FLAG, O(group_reporting), 0, 0, 0},
    {"direct", T_FLAG, O(direct), 0, 0, 0},
    {"verify", T_VERIFY, O(verify), 0, 0, 0},
    {"do_verify", T_FLAG, O(do_verify), 0, 0, 0},
    {"loops", T_UINT, O(loops), 0, 1, 1000000},
    {"randseed", T_UINT, O(randseed), 0, 0, UINT64_MAX},
    {"write_bw_log", T_STR, S(bw_log), 0, 0},
};

/* fio options accepted so that existing job files run, which change nothing here: the
 * engines are asynchronous and direct, buffers are ours, and there is no page cache. */
static const char *const ignored[] = {
    "thread",
    "invalidate",
    "norandommap",
    "randrepeat",
    "refill_buffers",
    "scramble_buffers",
    "gtod_reduce",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "iodepth_batch",
    "iodepth_batch_complete",
    "iodepth_low",
    "description",
    "buffered",
    "fadvise_hint",
    "overwrite",
    "create_on_open",
    "allow_mounted_write",
    "ioscheduler",
    "kb_base",
    "unit_base",
    "clat_percentiles",
    "lat_percentiles",
    "log_avg_msec",
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

static bool is_ignored(const char *key)
{
	char k[64];

	normalize(key, k, sizeof(k));
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (!strcmp(k, ignored[i]))
			return true;
	return false;
}

bool ub_job_is_option(const char *key)
{
	return find(key) || is_ignored(key);
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
}

static const char *const rw_names[] = {
    [UB_RW_READ] = "read",	     [UB_RW_WRITE] = "write", [UB_RW_RANDREAD] = "randread",
    [UB_RW_RANDWRITE] = "randwrite", [UB_RW_RW] = "rw",	      [UB_RW_RANDRW] = "randrw",
};

const char *ub_rw_name(enum ub_rw rw)
{
	return rw_names[rw];
}

bool ub_rw_is_random(enum ub_rw rw)
{
	return rw == UB_RW_RANDREAD || rw == UB_RW_RANDWRITE || rw == UB_RW_RANDRW;
}

bool ub_rw_reads(const struct ub_job *j)
{
	return j->rw == UB_RW_READ || j->rw == UB_RW_RANDREAD ||
	       ((j->rw == UB_RW_RW || j->rw == UB_RW_RANDRW) && j->rwmixread > 0);
}

bool ub_rw_writes(const struct ub_job *j)
{
	return j->rw == UB_RW_WRITE || j->rw == UB_RW_RANDWRITE ||
	       ((j->rw == UB_RW_RW || j->rw == UB_RW_RANDRW) && j->rwmixread < 100);
}

static bool set_rw(enum ub_rw *rw, const char *v)
{
	if (!strcmp(v, "readwrite")) {
		*rw = UB_RW_RW;
		return true;
	}
	for (size_t i = 0; i < sizeof(rw_names) / sizeof(rw_names[0]); i++)
		if (!strcmp(v, rw_names[i])) {
			*rw = (enum ub_rw)i;
			return true;
		}
	return false;
}

#define BAD(...)                                                                                   \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		return UB_OPT_BAD;                                                                 \
	} while (0)

enum ub_opt_result ub_job_set(struct ub_job *j, const char *key, const char *val, char *err,
			      size_t errlen)
{
	const struct opt_def *o = find(key);
	char *field;
	uint64_t v;
	bool b;

	if (!o) {
		if (is_ignored(key)) {
			snprintf(err, errlen,
				 "option '%s' has no effect here (accepted for fio "
				 "compatibility)",
				 key);
			return UB_OPT_IGNORED;
		}
		snprintf(err, errlen, "unknown option '%s'", key);
		return UB_OPT_UNKNOWN;
	}
	field = (char *)j + o->off;
	if (!val && o->type != T_FLAG)
		BAD("option '%s' needs a value", key);
	switch (o->type) {
	case T_STR:
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
	case T_RW:
		if (!set_rw((enum ub_rw *)field, val))
			BAD("%s: '%s' is not one of read, write, randread, randwrite, rw, randrw",
			    key, val);
		return UB_OPT_OK;
	case T_VERIFY:
		if (!strcmp(val, "crc32c") || !strcmp(val, "crc32c-intel"))
			*(enum ub_verify *)field = UB_VERIFY_CRC32C;
		else if (!strcmp(val, "0") || !strcmp(val, "none"))
			*(enum ub_verify *)field = UB_VERIFY_NONE;
		else
			BAD("%s: '%s' not supported (crc32c only)", key, val);
		return UB_OPT_OK;
	case T_TIME:
		if (!ub_parse_time(val, UB_NSEC_PER_SEC, &v))
			BAD("%s: invalid time '%s' (e.g. 60, 500ms, 2m)", key, val);
		*(uint64_t *)field = v;
		return UB_OPT_OK;
	case T_SIZE_OR_PCT: {
		size_t n = strlen(val);
		if (n > 1 && val[n - 1] == '%') {
			char num[16];
			if (n > sizeof(num))
				BAD("%s: invalid percentage '%s'", key, val);
			memcpy(num, val, n - 1);
			num[n - 1] = '\0';
			if (!ub_parse_uint(num, &v) || v < 1 || v > 100)
				BAD("%s: invalid percentage '%s' (1%%..100%%)", key, val);
			j->size_pct = (unsigned)v;
			j->size = 0;
			return UB_OPT_OK;
		}
		j->size_pct = 0;
	}
		/* fall through */
	case T_SIZE:
		if (!ub_parse_size(val, &v))
			BAD("%s: invalid size '%s' (e.g. 4k, 1m, 1g)", key, val);
		if (v < o->min || v > o->max)
			BAD("%s: %s out of range", key, val);
		*(uint64_t *)field = v;
		return UB_OPT_OK;
	case T_UINT:
	case T_MIXW:
		if (!ub_parse_uint(val, &v))
			BAD("%s: invalid number '%s'", key, val);
		if (v < o->min || v > o->max)
			BAD("%s: %s out of range (%llu..%llu)", key, val,
			    (unsigned long long)o->min, (unsigned long long)o->max);
		if (o->type == T_MIXW)
			v = 100 - v;
		if (o->off == O(randseed)) {
			j->randseed = v;
			j->randseed_set = true;
		} else {
			*(unsigned *)field = (unsigned)v;
		}
		return UB_OPT_OK;
	}
	BAD("%s: unhandled option type", key);
}

bool ub_job_validate(const struct ub_job *j, char *err, size_t errlen)
{
	if (!j->filename[0]) {
		snprintf(err, errlen, "job '%s': no filename (give --filename=URL|PATH or --paths)",
			 j->name);
		return false;
	}
	if (j->size && j->size < j->bs) {
		snprintf(err, errlen, "job '%s': size %llu is smaller than bs %llu", j->name,
			 (unsigned long long)j->size, (unsigned long long)j->bs);
		return false;
	}
	if (j->time_based && !j->runtime_ns) {
		snprintf(err, errlen, "job '%s': time_based needs a runtime", j->name);
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
