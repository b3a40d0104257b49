/* CrystalDiskMark 7's text export layout for --preset cdm.  Units as CDM prints them:
 * MB/s = 1,000,000 bytes/s, latency in microseconds. */
#include "initiator/report.h"

#include <string.h>
#include <time.h>

static void row(FILE *f, const struct ub_job_res *r, int d)
{
	const struct ub_ddir_res *dr = &r->d[d];
	double secs = (double)r->runtime_ns / 1e9;
	double mbs = secs > 0 ? (double)dr->bytes / secs / 1e6 : 0;
	double iops = secs > 0 ? (double)dr->ios / secs : 0;
	bool seq = r->rw == UB_RW_READ || r->rw == UB_RW_WRITE;
	char bs[32];

	if (r->bs >= 1 << 20)
		snprintf(bs, sizeof(bs), "%lluMiB", (unsigned long long)(r->bs >> 20));
	else
		snprintf(bs, sizeof(bs), "%lluKiB", (unsigned long long)(r->bs >> 10));
	if (r->error) {
		fprintf(f, "  %s %7s (Q=%3u, T=%2u): error: %s\n", seq ? "SEQ" : "RND", bs,
			r->iodepth, r->njobs, r->errmsg);
		return;
	}
	fprintf(f, "  %s %7s (Q=%3u, T=%2u): %9.3f MB/s [%9.1f IOPS] <%9.2f us>\n",
		seq ? "SEQ" : "RND", bs, r->iodepth, r->njobs, mbs, iops, dr->lat.mean / 1e3);
}

void ub_report_cdm(FILE *f, const struct ub_job_res *res, unsigned n, const char *target,
		   unsigned passes, uint64_t test_bytes, const struct ub_bench *b)
{
	time_t now = time(NULL);
	char date[64];

	strftime(date, sizeof(date), "%Y/%m/%d %H:%M:%S", localtime(&now));
	fprintf(f,
		"------------------------------------------------------------------------------\n"
		"utgt-bench --preset cdm (CrystalDiskMark 7 default profile)\n"
		"------------------------------------------------------------------------------\n"
		"* MB/s = 1,000,000 bytes/s [SATA/600 = 600,000,000 bytes/s]\n"
		"* KB = 1000 bytes, KiB = 1024 bytes\n\n");
	for (int d = 0; d < 2; d++) {
		fprintf(f, "[%s]\n", d ? "Write" : "Read");
		for (unsigned i = 0; i < n; i++)
			if ((res[i].rw == UB_RW_READ || res[i].rw == UB_RW_RANDREAD) == (d == 0))
				row(f, &res[i], d);
		fprintf(f, "\n");
	}
	fprintf(f,
		"Profile: Default\n   Test: %llu MiB (x%u) [Interval: 0 sec] <paths: %u, policy "
		"%s",
		(unsigned long long)(test_bytes >> 20), passes, b->npaths ? b->npaths : 1,
		ub_policy_name(b->mp.policy));
	if (b->mp.policy != UB_POL_QUEUE_LENGTH)
		fprintf(f, " iops=%u", b->mp.rr_iops ? b->mp.rr_iops : 1);
	fprintf(f, ">\n   Date: %s\n Target: %s\n", date, target);
	if (n && res[0].lu[0])
		fprintf(f, "     LU: %s\n", res[0].lu);
}
