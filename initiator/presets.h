/* Built-in workloads: CrystalDiskMark's default profile, the seed's fio template for an RBD
 * device, and rados bench's write-then-seq run. */
#ifndef UB_PRESETS_H
#define UB_PRESETS_H

#include "initiator/job.h"

struct diag;

enum ub_preset { UB_PRESET_NONE, UB_PRESET_CDM, UB_PRESET_SEED_RBD, UB_PRESET_RADOS };

bool ub_preset_parse(const char *name, enum ub_preset *p);
extern const char ub_seed_rbd_template[];
/* Append the preset's jobs built on base (job defaults); the caller then applies the command
 * line's global options on top (for cdm only those that do not define the test). */
bool ub_preset_override_ok(enum ub_preset p, const char *key);
bool ub_preset_jobs(enum ub_preset p, const struct ub_job *base, struct ub_joblist *out,
		    struct diag *d);
/* Test size CDM uses (1 GiB unless size= was given). */
uint64_t ub_cdm_test_size(const struct ub_job *base);

#endif
