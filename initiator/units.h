/* Numbers the way fio reads and prints them, so job files and reports look familiar.
 * Parsing: sizes with k/m/g/t/p suffixes (base 1024, as fio's default kb_base), times with
 * us/ms/s/m/h/d suffixes.  Printing: fio 3's num2str (significant digits, SI or IEC prefixes). */
#ifndef UB_UNITS_H
#define UB_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool ub_parse_uint(const char *s, uint64_t *out);
bool ub_parse_size(const char *s, uint64_t *out);
/* default_unit_ns: what a bare number means (fio: seconds for runtime/ramp_time). */
bool ub_parse_time(const char *s, uint64_t default_unit_ns, uint64_t *out_ns);
bool ub_parse_bool(const char *s, bool *out);

enum ub_unit { UB_U_NONE, UB_U_BYTE, UB_U_BYTEPERSEC };

/* fio's num2str: reduce by 1000 (or 1024 when iec) until at most maxlen digits remain,
 * then fill the remaining digits with decimals.  Writes e.g. "63.7MiB/s", "16.3k", "1024MiB". */
void ub_num2str(char *buf, size_t len, uint64_t num, int maxlen, bool iec, enum ub_unit unit);

/* "63.7MiB/s (66.8MB/s)" as fio 3 prints a bandwidth in bytes per second. */
void ub_bw2str(char *buf, size_t len, uint64_t bytes_per_sec);

/* "00m:06s" / "1h:02m:03s" for the progress line's eta. */
void ub_eta2str(char *buf, size_t len, uint64_t secs);

#define UB_NSEC_PER_SEC	 1000000000ull
#define UB_NSEC_PER_MSEC 1000000ull
#define UB_NSEC_PER_USEC 1000ull

#endif
