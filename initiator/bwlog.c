/* fio's bandwidth log format, one line per second and direction. */
#include "initiator/report.h"

#include <errno.h>
#include <string.h>

bool ub_write_bw_log(const char *prefix, unsigned index, const struct ub_job_res *r, char *err,
		     size_t errlen)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s_bw.%u.log", prefix, index + 1);
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return false;
	}
	for (uint32_t s = 0;; s++) {
		bool any = false;
		for (int d = 0; d < 2; d++) {
			if (s >= r->d[d].nsec)
				continue;
			any = true;
			if (!r->d[d].ios)
				continue;
			fprintf(f, "%u, %llu, %d, %llu, 0\n", (s + 1) * 1000,
				(unsigned long long)(r->d[d].sec_bytes[s] / 1024), d,
				(unsigned long long)r->bs);
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
