/* Command-line parsing. */
#include "initiator/cli.h"
#include "initiator/iscsi_url.h"
#include "initiator/units.h"
#include "common/diag.h"

#include <iscsi/iscsi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void ub_bench_defaults(struct ub_bench *b)
{
	memset(b, 0, sizeof(*b));
	b->mp.policy = UB_POL_RR;
	b->mp.rr_iops = 1;
	b->mp.reconnect_delay_ms = 500;
	b->mp.no_path_timeout_ms = 15000;
	b->mp.max_retries = 32;
	b->mp.eng.header_digest = -1;
	b->mp.eng.data_digest = -1;
	b->mp.eng.nodelay = -1;
	b->mp.eng.initial_r2t = -1;
	b->mp.eng.immediate_data = -1;
	b->mp.eng.io_timeout_s = 30;
	b->mp.eng.connect_timeout_ms = 5000;
	b->mp.eng.nop_interval_ms = 5000;
	b->mp.eng.nop_timeout_ms = 5000;
	b->progress = -1;
	b->fmt = UB_OUT_NORMAL;
	b->cdm_passes = 1;
	snprintf(b->sweep_plot, sizeof(b->sweep_plot), "utgt-bench-sweep.png");
}

void ub_bench_free(struct ub_bench *b)
{
	for (unsigned i = 0; i < b->npaths; i++)
		free(b->paths[i]);
	b->npaths = 0;
	for (unsigned i = 0; i < b->nsections; i++)
		free(b->sections[i]);
	b->nsections = 0;
	ub_joblist_free(&b->jobs);
}

void ub_cli_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: utgt-bench [options] [jobfile ...]\n"
	    "\n"
	    "Job options (fio syntax; options before the first --name apply to every job):\n"
	    "  --name=NAME --filename=URL|PATH --rw=read|write|randread|randwrite|rw|randrw\n"
	    "  --rwmixread=PCT --bs=SIZE --iodepth=N --numjobs=N --size=SIZE|PCT%% --offset=SIZE\n"
	    "  --runtime=TIME --time_based --ramp_time=TIME --stonewall --new_group\n"
	    "  --group_reporting --direct=0|1 --verify=crc32c --do_verify=0|1 --loops=N\n"
	    "  --randseed=N --ioengine=iscsi|block (libaio, io_uring, psync... map to block)\n"
	    "  --write_bw_log=PREFIX   per-second bandwidth log PREFIX_bw.N.log (fio format)\n"
	    "Targets: iscsi://[user%%secret@]host[:port]/target-iqn/lun (iser://... over iSER,\n"
	    "  bs<=256k), a block device or file\n"
	    "\n"
	    "Multipath:\n"
	    "  --paths=URL,URL,...      one LU over several paths (checked with VPD 83)\n"
	    "  --policy=rr|rr-all|queue-length --rr-iops=N (switch path every N commands, 1)\n"
	    "  --sweep-paths=1,2,4      run the workload over 1..N paths, table + PNG\n"
	    "  --sweep-plot=FILE.png    (utgt-bench-sweep.png)\n"
	    "  --reconnect-delay=TIME (500ms) --no-path-timeout=TIME (15s) --max-retries=N (32)\n"
	    "\n"
	    "iSCSI session (libiscsi):\n"
	    "  --initiator-name=IQN --header-digest=none|crc32c|none,crc32c|crc32c,none\n"
	    "  --data-digest=none|crc32c --nodelay=0|1 --max-recv-dsl=BYTES\n"
	    "  --initial-r2t=yes|no --immediate-data=yes|no --connect-timeout=TIME (5s)\n"
	    "  --io-timeout=SECONDS (30) --nop-interval=TIME (5s, 0: no pings) --nop-timeout=TIME (5s)\n"
	    "\n"
	    "Presets and output:\n"
	    "  --preset=cdm|seed-rbd|rados-bench   --cdm-passes=N (1)\n"
	    "  --output-format=normal,terse,json,json+ (any list) --output=FILE\n"
	    "  --progress=auto|always|never  --parse-only (check job files)  --section=NAME\n"
	    "  --help --version\n");
}

struct kv {
	char key[64];
	const char *val;
};

static bool header_digest(const char *v, int *out)
{
	if (!strcmp(v, "none"))
		*out = ISCSI_HEADER_DIGEST_NONE;
	else if (!strcmp(v, "crc32c"))
		*out = ISCSI_HEADER_DIGEST_CRC32C;
	else if (!strcmp(v, "none,crc32c"))
		*out = ISCSI_HEADER_DIGEST_NONE_CRC32C;
	else if (!strcmp(v, "crc32c,none"))
		*out = ISCSI_HEADER_DIGEST_CRC32C_NONE;
	else
		return false;
	return true;
}

static bool yesno(const char *v, int *out)
{
	bool b;

	if (!ub_parse_bool(v, &b))
		return false;
	*out = b;
	return true;
}

static bool ms_opt(const char *v, unsigned *out)
{
	uint64_t ns;

	if (!ub_parse_time(v, 1000000ull, &ns) || ns / 1000000 > 86400000)
		return false;
	*out = (unsigned)(ns / 1000000);
	return true;
}

/* Two iSCSI URLs with the same portal and target are one network path opened twice (only the
 * ISID differs): refused, so no sweep reports a "speedup" from it.  Other engines' targets
 * given twice word for word get a warning (SRP channels to one port are distinct), and are
 * refused with --sweep-paths. */
static bool distinct_paths(struct ub_bench *b, struct diag *d)
{
	struct ub_iscsi_url u, v;
	char e[128];
	bool ok = true;

	for (unsigned i = 0; i < b->npaths; i++)
		for (unsigned k = 0; k < i; k++) {
			if (ub_iscsi_url_parse(b->paths[i], &u, e, sizeof(e)) &&
			    ub_iscsi_url_parse(b->paths[k], &v, e, sizeof(e))) {
				if (strcasecmp(u.host, v.host) || u.port != v.port ||
				    strcasecmp(u.target, v.target))
					continue;
				diag_error(d, 0,
					      "--paths: paths %u and %u both reach portal %s target %s: "
					      "the same path twice, not two paths",
					      k, i, u.portal, u.target);
				ok = false;
			} else if (!strcmp(b->paths[i], b->paths[k])) {
				if (b->nsweep) {
					diag_error(d, 0,
						      "--paths: paths %u and %u are the same target; "
						      "--sweep-paths would measure one path twice",
						      k, i);
					ok = false;
				} else {
					diag_warn(d, 0, "--paths: paths %u and %u are the same target",
						     k, i);
				}
			}
		}
	return ok;
}

static bool add_paths(struct ub_bench *b, const char *v, struct diag *d)
{
	const char *p = v;

	while (*p) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (n) {
			if (b->npaths == UB_MAX_PATHS) {
				diag_error(d, 0, "--paths: at most %d paths", UB_MAX_PATHS);
				return false;
			}
			b->paths[b->npaths] = strndup(p, n);
			if (!b->paths[b->npaths])
				return false;
			b->npaths++;
		}
		p = c ? c + 1 : p + n;
	}
	if (!b->npaths) {
		diag_error(d, 0, "--paths: no path given");
		return false;
	}
	return true;
}

static bool sweep_list(struct ub_bench *b, const char *v, struct diag *d)
{
	char *dup = strdup(v), *save = NULL, *tok;
	bool ok = true;

	if (!dup)
		return false;
	for (tok = strtok_r(dup, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t n;
		if (!ub_parse_uint(tok, &n) || !n || n > UB_MAX_PATHS ||
		    b->nsweep == UB_MAX_PATHS) {
			diag_error(d, 0, "--sweep-paths: bad path count '%s'", tok);
			ok = false;
		} else {
			b->sweep[b->nsweep++] = (unsigned)n;
		}
	}
	free(dup);
	if (ok && !b->nsweep) {
		diag_error(d, 0, "--sweep-paths: empty list");
		ok = false;
	}
	return ok;
}

/* "normal,json+": fio takes a comma-separated list and prints each. */
static bool output_formats(const char *v, unsigned *fmt)
{
	char buf[128], *save = NULL, *tok;

	if (strlen(v) >= sizeof(buf))
		return false;
	strcpy(buf, v);
	*fmt = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "normal"))
			*fmt |= UB_OUT_NORMAL;
		else if (!strcmp(tok, "json"))
			*fmt |= UB_OUT_JSON;
		else if (!strcmp(tok, "json+"))
			*fmt |= UB_OUT_JSONPLUS;
		else if (!strcmp(tok, "terse"))
			*fmt |= UB_OUT_TERSE;
		else
			return false;
	}
	/* json+ is json with the histogram: one document, not two */
	if (*fmt & UB_OUT_JSONPLUS)
		*fmt &= ~(unsigned)UB_OUT_JSON;
	return *fmt != 0;
}

/* 1: handled, 0: not a bench option, -1: bad value (reported). */
static int bench_opt(struct ub_bench *b, enum ub_preset *preset, const char *key, const char *v,
		     struct diag *d)
{
	char k[64];
	size_t i;
	uint64_t n;
	bool ok = true;

	for (i = 0; key[i] && i + 1 < sizeof(k); i++)
		k[i] = key[i] == '_' ? '-' : key[i];
	k[i] = '\0';
#define NEED_VAL                                                                                   \
	if (!v || !*v) {                                                                           \
		diag_error(d, 0, "--%s needs a value", key);                                       \
		return -1;                                                                         \
	}
	if (!strcmp(k, "help")) {
		b->show_help = true;
	} else if (!strcmp(k, "parse-only")) {
		b->parse_only = true;
	} else if (!strcmp(k, "section")) {
		NEED_VAL if (b->nsections == sizeof(b->sections) / sizeof(b->sections[0])) ok = false;
		else ok = (b->sections[b->nsections++] = strdup(v)) != NULL;
	} else if (!strcmp(k, "version")) {
		b->show_version = true;
	} else if (!strcmp(k, "paths")) {
		NEED_VAL ok = add_paths(b, v, d);
		return ok ? 1 : -1;
	} else if (!strcmp(k, "policy")) {
		NEED_VAL ok = ub_policy_parse(v, &b->mp.policy);
	} else if (!strcmp(k, "rr-iops")) {
		NEED_VAL ok = ub_parse_uint(v, &n) && n >= 1 && n <= 1000000;
		b->mp.rr_iops = (unsigned)n;
	} else if (!strcmp(k, "preset")) {
		NEED_VAL ok = ub_preset_parse(v, preset);
		if (ok)
			snprintf(b->preset, sizeof(b->preset), "%s", v);
	} else if (!strcmp(k, "output-format")) {
		NEED_VAL ok = output_formats(v, &b->fmt);
	} else if (!strcmp(k, "output")) {
		NEED_VAL ok = strlen(v) < sizeof(b->output);
		if (ok)
			strcpy(b->output, v);
	} else if (!strcmp(k, "sweep-paths")) {
		NEED_VAL return sweep_list(b, v, d) ? 1 : -1;
	} else if (!strcmp(k, "sweep-plot")) {
		NEED_VAL ok = strlen(v) < sizeof(b->sweep_plot);
		if (ok)
			strcpy(b->sweep_plot, v);
	} else if (!strcmp(k, "progress") || !strcmp(k, "eta")) {
		NEED_VAL if (!strcmp(v, "auto")) b->progress = -1;
		else if (!strcmp(v, "always")) b->progress = 1;
		else if (!strcmp(v, "never")) b->progress = 0;
		else ok = false;
	} else if (!strcmp(k, "cdm-passes")) {
		NEED_VAL ok = ub_parse_uint(v, &n) && n >= 1 && n <= 100;
		b->cdm_passes = (unsigned)n;
	} else if (!strcmp(k, "initiator-name")) {
		NEED_VAL ok = strlen(v) < sizeof(b->initiator);
		if (ok)
			strcpy(b->initiator, v);
	} else if (!strcmp(k, "header-digest")) {
		NEED_VAL ok = header_digest(v, &b->mp.eng.header_digest);
	} else if (!strcmp(k, "data-digest")) {
		NEED_VAL if (!strcmp(v, "none")) b->mp.eng.data_digest = 0;
		else if (!strcmp(v, "crc32c")) b->mp.eng.data_digest = 1;
		else ok = false;
	} else if (!strcmp(k, "nodelay")) {
		NEED_VAL ok = yesno(v, &b->mp.eng.nodelay);
	} else if (!strcmp(k, "initial-r2t")) {
		NEED_VAL ok = yesno(v, &b->mp.eng.initial_r2t);
	} else if (!strcmp(k, "immediate-data")) {
		NEED_VAL ok = yesno(v, &b->mp.eng.immediate_data);
	} else if (!strcmp(k, "max-recv-dsl")) {
		NEED_VAL ok = ub_parse_size(v, &n) && n >= 512 && n <= 16777215;
		b->mp.eng.max_recv_dsl = (uint32_t)n;
	} else if (!strcmp(k, "connect-timeout")) {
		NEED_VAL ok = ms_opt(v, &b->mp.eng.connect_timeout_ms);
	} else if (!strcmp(k, "io-timeout")) {
		uint64_t ns;
		NEED_VAL ok = ub_parse_time(v, 1000000000ull, &ns) && ns / 1000000000ull <= 3600;
		b->mp.eng.io_timeout_s = (unsigned)(ns / 1000000000ull);
	} else if (!strcmp(k, "nop-interval")) {
		NEED_VAL ok = ms_opt(v, &b->mp.eng.nop_interval_ms);
	} else if (!strcmp(k, "nop-timeout")) {
		NEED_VAL ok = ms_opt(v, &b->mp.eng.nop_timeout_ms) && b->mp.eng.nop_timeout_ms;
	} else if (!strcmp(k, "reconnect-delay")) {
		NEED_VAL ok = ms_opt(v, &b->mp.reconnect_delay_ms);
	} else if (!strcmp(k, "no-path-timeout")) {
		NEED_VAL ok = ms_opt(v, &b->mp.no_path_timeout_ms);
	} else if (!strcmp(k, "max-retries")) {
		NEED_VAL ok = ub_parse_uint(v, &n) && n >= 1 && n <= 100000;
		b->mp.max_retries = (unsigned)n;
	} else {
		return 0;
	}
	if (!ok) {
		diag_error(d, 0, "--%s: invalid value '%s'", key, v ? v : "");
		return -1;
	}
	return 1;
}

static bool apply(struct ub_job *j, const char *key, const char *val, struct diag *d)
{
	char err[256];

	switch (ub_job_set(j, key, val, err, sizeof(err))) {
	case UB_OPT_OK:
		return true;
	case UB_OPT_IGNORED:
		diag_warn(d, 0, "%s", err);
		return true;
	default:
		diag_error(d, 0, "--%s: %s", key, err);
		return false;
	}
}

/* Keep only the jobs --section names (fio's --section). */
static void select_sections(struct ub_bench *b)
{
	unsigned w = 0;

	for (unsigned i = 0; i < b->jobs.n; i++) {
		bool keep = false;
		for (unsigned k = 0; k < b->nsections && !keep; k++)
			keep = !strcmp(b->jobs.jobs[i].name, b->sections[k]);
		if (keep)
			b->jobs.jobs[w++] = b->jobs.jobs[i];
	}
	b->jobs.n = w;
}

static bool find_job(const struct ub_joblist *l, const char *name, unsigned before)
{
	for (unsigned i = 0; i < before; i++)
		if (!strcmp(l->jobs[i].name, name))
			return true;
	return false;
}

/* Options given before the first --name override what job files and presets say. */
static bool apply_globals(struct ub_job *j, const struct kv *g, unsigned n, enum ub_preset p,
			  struct diag *d)
{
	for (unsigned k = 0; k < n; k++)
		if (ub_preset_override_ok(p, g[k].key) && !apply(j, g[k].key, g[k].val, d))
			return false;
	return true;
}

bool ub_cli_parse(int argc, char **argv, struct ub_bench *b, enum ub_preset *preset, struct diag *d)
{
	struct kv *glob = calloc((size_t)argc + 1, sizeof(*glob));
	unsigned nglob = 0;
	struct ub_joblist cli = {0};
	struct ub_job base, *cur = NULL;
	const char **files = calloc((size_t)argc + 1, sizeof(char *));
	unsigned nfiles = 0;
	bool ok = true;
	const char *saved = d->file;

	*preset = UB_PRESET_NONE;
	d->file = "command line";
	if (!glob || !files) {
		free(glob);
		free(files);
		return false;
	}
	ub_job_defaults(&base);
	for (int i = 1; i < argc && ok; i++) {
		char *a = argv[i], key[64];
		const char *val = NULL;
		int r;

		if (!strcmp(a, "-h")) {
			b->show_help = true;
			continue;
		}
		if (strncmp(a, "--", 2)) {
			files[nfiles++] = a;
			continue;
		}
		a += 2;
		{
			const char *eq = strchr(a, '=');
			size_t n = eq ? (size_t)(eq - a) : strlen(a);
			if (n >= sizeof(key) || !n) {
				diag_error(d, 0, "bad option '%s'", argv[i]);
				ok = false;
				break;
			}
			memcpy(key, a, n);
			key[n] = '\0';
			val = eq ? eq + 1 : NULL;
		}
		r = bench_opt(b, preset, key, val, d);
		if (r < 0) {
			ok = false;
			break;
		}
		if (r > 0)
			continue;
		if (!ub_job_is_option(key)) {
			diag_error(d, 0, "unknown option '--%s' (see --help)", key);
			ok = false;
			break;
		}
		if (!strcmp(key, "name")) {
			if (!val || !*val) {
				diag_error(d, 0, "--name needs a value");
				ok = false;
				break;
			}
			if (!strcmp(val, "global")) {
				cur = NULL; /* fio's --name=global: what follows is global */
				continue;
			}
			cur = ub_joblist_add(&cli, &base);
			if (!cur) {
				ok = false;
				break;
			}
			snprintf(cur->name, sizeof(cur->name), "%s", val);
			snprintf(cur->origin, sizeof(cur->origin), "command line");
			continue;
		}
		if (cur) {
			ok = apply(cur, key, val, d);
		} else {
			/* Check it now so the error points at the command line. */
			struct ub_job tmp = base;
			ok = apply(&tmp, key, val, d);
			if (ok) {
				base = tmp;
				strcpy(glob[nglob].key, key);
				glob[nglob].val = val;
				nglob++;
			}
		}
	}
	/* Job files, then preset, then command-line jobs.  Every file is read even after an
	 * error, so one run lists every problem. */
	for (unsigned f = 0; f < nfiles; f++) {
		struct ub_job g;
		ub_job_defaults(&g);
		if (!ub_jobfile_load(files[f], &g, &b->jobs, d))
			ok = false;
	}
	if (ok && b->nsections)
		select_sections(b);
	if (ok && *preset != UB_PRESET_NONE) {
		struct ub_job pb;
		unsigned first = b->jobs.n;
		ub_job_defaults(&pb);
		ok = ub_preset_jobs(*preset, &pb, &b->jobs, d);
		for (unsigned i = 0; ok && i < b->jobs.n; i++)
			ok = apply_globals(&b->jobs.jobs[i], glob, nglob,
					   i >= first ? *preset : UB_PRESET_NONE, d);
	} else {
		for (unsigned i = 0; ok && i < b->jobs.n; i++)
			ok = apply_globals(&b->jobs.jobs[i], glob, nglob, UB_PRESET_NONE, d);
	}
	for (unsigned i = 0; i < cli.n && ok; i++)
		ok = ub_joblist_add(&b->jobs, &cli.jobs[i]) != NULL;
	/* Options but no --name and no job file: one job, as the options describe it. */
	if (ok && !b->jobs.n && nglob && !b->show_help && !b->show_version) {
		struct ub_job *j = ub_joblist_add(&b->jobs, &base);
		if (j && !j->name[0])
			snprintf(j->name, sizeof(j->name), "%s", ub_rw_name(j->rw));
		ok = j != NULL;
	}
	/* --filename next to --paths must name one of the paths' LU: remember it, the run
	 * checks its identity (VPD 83) with the paths'. */
	for (unsigned k = 0; k < nglob && b->npaths; k++)
		if (!strcmp(glob[k].key, "filename") && glob[k].val)
			snprintf(b->filename_check, sizeof(b->filename_check), "%s", glob[k].val);
	if (ok && b->npaths)
		for (unsigned i = 0; i < b->jobs.n; i++)
			snprintf(b->jobs.jobs[i].filename, sizeof(b->jobs.jobs[i].filename), "%s",
				 b->paths[0]);
	/* every job is checked, so one run lists every problem */
	for (unsigned i = 0; (ok || d->errors) && i < b->jobs.n; i++) {
		char err[600];
		if (!b->jobs.jobs[i].name[0])
			snprintf(b->jobs.jobs[i].name, sizeof(b->jobs.jobs[i].name), "job%u",
				 i + 1);
		if (!ub_job_validate(&b->jobs.jobs[i], !b->parse_only, err, sizeof(err))) {
			d->file =
			    b->jobs.jobs[i].origin[0] ? b->jobs.jobs[i].origin : "command line";
			diag_error(d, b->jobs.jobs[i].line, "%s", err);
			ok = false;
		}
	}
	for (unsigned i = 0; b->jobs.n && d->errors == 0 && i < b->jobs.n; i++)
		if (b->jobs.jobs[i].wait_for[0] && !find_job(&b->jobs, b->jobs.jobs[i].wait_for, i)) {
			d->file = b->jobs.jobs[i].origin[0] ? b->jobs.jobs[i].origin : "command line";
			diag_error(d, b->jobs.jobs[i].line,
				      "job '%s': wait_for=%s names no job defined before it",
				      b->jobs.jobs[i].name, b->jobs.jobs[i].wait_for);
			ok = false;
		}
	if (ok && b->npaths > 1)
		ok = distinct_paths(b, d);
	if (ok && b->nsweep) {
		for (unsigned i = 0; i < b->nsweep; i++)
			if (b->sweep[i] > b->npaths) {
				diag_error(d, 0,
					   "--sweep-paths asks for %u paths but --paths gives %u",
					   b->sweep[i], b->npaths);
				ok = false;
				break;
			}
	}
	if (ok && !b->jobs.n && !b->show_help && !b->show_version) {
		diag_error(d, 0, "no job given (a job file, --name=..., options, or --preset)");
		ok = false;
	}
	ub_joblist_free(&cli);
	free(glob);
	free(files);
	d->file = saved;
	return ok;
}
