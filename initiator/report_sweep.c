/* --sweep-paths: the same workload over 1..N paths, as a table and a gnuplot PNG. */
#include "initiator/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void ub_report_sweep(FILE *f, const struct ub_sweep_row *rows, unsigned n)
{
	double base = 0;

	for (unsigned i = 0; i < n && !base; i++)
		if (rows[i].paths == 1 && !rows[i].failed)
			base = rows[i].mib_s;
	if (!base && n && !rows[0].failed)
		base = rows[0].mib_s / rows[0].paths; /* per-path figure when 1 was not run */
	fprintf(f, "\nPath sweep:\n");
	fprintf(f, "%6s %12s %12s %9s %11s\n", "paths", "MiB/s", "IOPS", "speedup", "efficiency");
	for (unsigned i = 0; i < n; i++) {
		const struct ub_sweep_row *r = &rows[i];
		if (r->failed) {
			fprintf(f, "%6u %12s %12s %9s %11s\n", r->paths, "failed", "-", "-", "-");
			continue;
		}
		double sp = base ? r->mib_s / base : 0;
		fprintf(f, "%6u %12.1f %12.0f %8.2fx %10.1f%%\n", r->paths, r->mib_s, r->iops, sp,
			r->paths ? 100.0 * sp / r->paths : 0);
	}
}

bool ub_sweep_plot(const struct ub_sweep_row *rows, unsigned n, const char *png, char *err,
		   size_t errlen)
{
	char dat[512], gp[512];
	FILE *f;
	pid_t pid;
	int st;

	snprintf(dat, sizeof(dat), "%s.dat", png);
	snprintf(gp, sizeof(gp), "%s.gp", png);
	f = fopen(dat, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", dat, strerror(errno));
		return false;
	}
	fprintf(f, "# paths MiB/s IOPS\n");
	for (unsigned i = 0; i < n; i++)
		if (!rows[i].failed)
			fprintf(f, "%u %.3f %.1f\n", rows[i].paths, rows[i].mib_s, rows[i].iops);
	fclose(f);
	f = fopen(gp, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", gp, strerror(errno));
		return false;
	}
	fprintf(f,
		"set terminal png size 800,500\n"
		"set output '%s'\n"
		"set title 'utgt-bench: throughput over paths to one LU'\n"
		"set xlabel 'paths'\nset ylabel 'MiB/s'\nset y2label 'IOPS'\n"
		"set ytics nomirror\nset y2tics\nset grid\nset key left top\n"
		"set xtics 1\nset yrange [0:*]\nset y2range [0:*]\n"
		"plot '%s' using 1:2 with linespoints lw 2 title 'MiB/s', "
		"'' using 1:3 axes x1y2 with linespoints lw 2 title 'IOPS'\n",
		png, dat);
	fclose(f);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return false;
	}
	if (!pid) {
		execlp("gnuplot", "gnuplot", gp, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(err, errlen, "gnuplot %s (exit %d)",
			 WIFEXITED(st) && WEXITSTATUS(st) == 127 ? "not found" : "failed",
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return false;
	}
	return true;
}
