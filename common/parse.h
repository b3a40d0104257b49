/* Strict number parsing: whole string, no sign surprises, overflow detected.  Accepts
 * decimal, 0x hex, and (parse_size only) K/M/G/T suffixes (powers of 1024). */
#ifndef UTGT_COMMON_PARSE_H
#define UTGT_COMMON_PARSE_H

#include <stdbool.h>
#include <stdint.h>

bool parse_u64(const char *s, uint64_t *out);
bool parse_bool(const char *s, bool *out); /* 0/1, yes/no, true/false, on/off, y/n */
bool parse_size(const char *s, uint64_t *out);
int parse_hex_digit(int c); /* 0-9, a-f, A-F -> 0..15; anything else (EOF too) -> -1 */

#endif
