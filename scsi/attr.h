/* Configuration attributes as handed from the config loader to whatever they configure
 * (backstores, devices, transports), with the line they came from so errors can name it. */
#ifndef UTGT_ATTR_H
#define UTGT_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct utgt_attr {
	const char *key;
	const char *value;
	int line; /* 0 when not from a file */
};

/* Error reporting: a sink that collects "FILE:LINE: message" lines.  Components call
 * diag_error()/diag_warn() with the attribute's line; the config loader prints them. */
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

/* Strict number parsing shared by every attribute reader: whole string, no sign surprises,
 * overflow detected.  Accepts decimal, 0x hex, and (parse_size only) K/M/G/T suffixes. */
bool parse_u64(const char *s, uint64_t *out);
bool parse_bool(const char *s, bool *out); /* 0/1, yes/no, true/false, on/off */
bool parse_size(const char *s, uint64_t *out);

#endif
