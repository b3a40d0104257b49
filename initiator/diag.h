/* Messages about the command line and job files: "FILE:LINE: error: ..." on stderr, or to a
 * callback (tests).  utgt-bench's own, so the tester shares no code with the target. */
#ifndef UB_DIAG_H
#define UB_DIAG_H

#include <stdbool.h>

struct ub_diag {
	const char *file;
	int errors;
	int warnings;
	/* where messages go; NULL means stderr */
	void (*emit)(struct ub_diag *d, bool error, int line, const char *msg);
	void *priv;
};

void ub_diag_error(struct ub_diag *d, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ub_diag_warn(struct ub_diag *d, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
