/* Diagnostics: a sink that collects "FILE:LINE: message" lines.  Readers of files (the config
 * loader, utgt-bench's job files) call diag_error()/diag_warn() with the line; the sink prints
 * them (stderr, "<input>" when it has no file name) or hands them to emit (tests, reload). */
#ifndef UTGT_COMMON_DIAG_H
#define UTGT_COMMON_DIAG_H

#include <stdbool.h>

struct diag {
	const char *file;
	int errors;
	int warnings;
	/* where messages go; NULL means stderr */
	void (*emit)(struct diag *d, bool error, int line, const char *msg);
	void *priv;
};
void diag_error(struct diag *d, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_warn(struct diag *d, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
