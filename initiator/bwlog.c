/* fio's bandwidth and IOPS log format, one line per second and direction. */
#include "initiator/report.h"

#include <errno.h>
#include <string.h>

static bool write_log(const char *prefix, const char *kind, unsigned index,
		      const struct ub_job_res *r, bool iops, char *err, size_t errlen)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s_%s.%u.log", prefix, kind, index + 1);
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return false;
	}
	for (uint32_t s = 0;; s++) {
		bool any = false;
		for (int d = 0; d < UB_NDDIR; d++) {
			if (s >= r->d[d].nsec)
				continue;
			any = true;
			if (!r->d[d].ios)
				continue;
			fprintf(f, "%u, %llu, %d, %llu, 0\n", (s + 1) * 1000,
				(unsigned long long)(iops ? r->d[d].sec_ios[s]
							  : r->d[d].sec_bytes[s] / 1024),
				d, (unsigned long long)r->bs);
		}
		if (!any)
			break;
	}
	if (fclose(f) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return false;
	}
	return true;
}

bool ub_write_bw_log(const char *prefix, unsigned index, const struct ub_job_res *r, char *err,
		     size_t errlen)
{
	return write_log(prefix, "bw", index, r, false, err, errlen);
}

bool ub_write_iops_log(const char *prefix, unsigned index, const struct ub_job_res *r, char *err,
		       size_t errlen)
{
	return write_log(prefix, "iops", index, r, true, err, errlen);
}
