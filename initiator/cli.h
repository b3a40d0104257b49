/* Command line: fio-style job options (--name starts a job; options before the first --name
 * apply to every job, including those from job files and presets), job files as positional
 * arguments, and utgt-bench's own options (paths, policy, iSCSI keys, presets, output). */
#ifndef UB_CLI_H
#define UB_CLI_H

#include "initiator/bench.h"
#include "initiator/presets.h"

#include <stdio.h>

struct diag;

/* Fills b (ub_bench_defaults() first).  false after reporting the problem through d. */
bool ub_cli_parse(int argc, char **argv, struct ub_bench *b, enum ub_preset *preset,
		  struct diag *d);
void ub_cli_usage(FILE *f);

#endif
