/* Preset job lists. */
#include "initiator/presets.h"
#include "initiator/units.h"
#include "common/diag.h"

#include <stdio.h>
#include <string.h>

/* The fio template from the seed (ceph-devel, "Performance problems or expected behavior?"),
 * verbatim: it names libaio and /dev/rbd2, which the command line replaces. */
const char ub_seed_rbd_template[] = "[global]\n"
				    "ioengine=libaio\n"
				    "iodepth=100\n"
				    "size=1g\n"
				    "direct=1\n"
				    "runtime=60\n"
				    "filename=/dev/rbd2\n"
				    "\n"
				    "[seq-read]\n"
				    "rw=read\n"
				    "bs=4M\n"
				    "stonewall\n"
				    "\n"
				    "[rand-read]\n"
				    "rw=randread\n"
				    "bs=4k\n"
				    "stonewall\n"
				    "\n"
				    "[seq-write]\n"
				    "rw=write\n"
				    "bs=4M\n"
				    "stonewall\n"
				    "\n"
				    "[rand-write]\n"
				    "rw=randwrite\n"
				    "bs=4K\n"
				    "stonewall\n";

bool ub_preset_parse(const char *name, enum ub_preset *p)
{
	if (!strcmp(name, "cdm") || !strcmp(name, "crystaldiskmark"))
		*p = UB_PRESET_CDM;
	else if (!strcmp(name, "seed-rbd") || !strcmp(name, "rbd"))
		*p = UB_PRESET_SEED_RBD;
	else if (!strcmp(name, "rados-bench") || !strcmp(name, "rados"))
		*p = UB_PRESET_RADOS;
	else
		return false;
	return true;
}

uint64_t ub_cdm_test_size(const struct ub_job *base)
{
	return base->size ? base->size : 1ull << 30;
}

static bool add(struct ub_joblist *out, const struct ub_job *base, const char *name, enum ub_rw rw,
		uint64_t bs, unsigned qd, uint64_t runtime_ns)
{
	struct ub_job *j = ub_joblist_add(out, base);

	if (!j)
		return false;
	snprintf(j->name, sizeof(j->name), "%s", name);
	j->rw = rw;
	j->bs = bs;
	j->iodepth = qd;
	j->numjobs = 1;
	j->runtime_ns = runtime_ns;
	j->stonewall = true;
	return true;
}

bool ub_preset_jobs(enum ub_preset p, const struct ub_job *base, struct ub_joblist *out,
		    struct diag *d)
{
	struct ub_job b = *base;

	switch (p) {
	case UB_PRESET_NONE:
		return true;
	case UB_PRESET_SEED_RBD: {
		struct ub_job g;
		ub_job_defaults(&g);
		return ub_jobfile_parse(ub_seed_rbd_template, "<preset seed-rbd>", &g, out, d);
	}
	case UB_PRESET_CDM: {
		/* CrystalDiskMark 7 "Default": SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1,
		 * each read then write, time based (5 s unless runtime= is given) over 1 GiB. */
		static const struct {
			const char *name;
			bool rnd;
			uint64_t bs;
			unsigned qd;
		} t[] = {
		    {"SEQ1M-Q8T1", false, 1 << 20, 8},
		    {"SEQ1M-Q1T1", false, 1 << 20, 1},
		    {"RND4K-Q32T1", true, 4096, 32},
		    {"RND4K-Q1T1", true, 4096, 1},
		};
		uint64_t rt = b.runtime_ns ? b.runtime_ns : 5 * UB_NSEC_PER_SEC;
		b.time_based = true;
		b.size = ub_cdm_test_size(base);
		for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			char n[64];
			snprintf(n, sizeof(n), "%s-read", t[i].name);
			if (!add(out, &b, n, t[i].rnd ? UB_RW_RANDREAD : UB_RW_READ, t[i].bs,
				 t[i].qd, rt))
				return false;
			snprintf(n, sizeof(n), "%s-write", t[i].name);
			if (!add(out, &b, n, t[i].rnd ? UB_RW_RANDWRITE : UB_RW_WRITE, t[i].bs,
				 t[i].qd, rt))
				return false;
		}
		return true;
	}
	case UB_PRESET_RADOS: {
		/* rados bench <secs> write -b 4M -t 16: 16 writes of 4 MiB in flight for the
		 * given time (10 s unless runtime=), wrapping over the LU.  The seq phase is a
		 * second run that reads back what was written. */
		b.time_based = true;
		if (!add(out, &b, "rados-write", UB_RW_WRITE, 4u << 20, 16,
			 b.runtime_ns ? b.runtime_ns : 10 * UB_NSEC_PER_SEC))
			return false;
		out->jobs[out->n - 1].stonewall = false;
		return true;
	}
	}
	diag_error(d, 0, "unknown preset");
	return false;
}

bool ub_preset_override_ok(enum ub_preset p, const char *key)
{
	static const char *const cdm_fixed[] = {
	    "rw",   "readwrite",  "bs",	       "blocksize", "iodepth",	  "numjobs",
	    "name", "time_based", "stonewall", "rwmixread", "rwmixwrite", "new_group"};
	char k[64];
	size_t i;

	if (p != UB_PRESET_CDM)
		return true;
	for (i = 0; key[i] && i + 1 < sizeof(k); i++)
		k[i] = key[i] == '-' ? '_' : key[i];
	k[i] = '\0';
	for (i = 0; i < sizeof(cdm_fixed) / sizeof(cdm_fixed[0]); i++)
		if (!strcmp(k, cdm_fixed[i]))
			return false;
	return true;
}
