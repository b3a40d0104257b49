/* verify=crc32c: every logical block written carries a header with its LBA, the generation
 * of the write that produced it and a CRC32C over the whole block, so a read can tell a good
 * block from a misplaced (wrong LBA), stale (old generation) or damaged (CRC) one. */
#ifndef UB_VERIFY_H
#define UB_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UB_VERIFY_MAGIC	 0x31564255u /* "UBV1" little-endian: CRC32C in the header */
#define UB_VERIFY_MAGIC2 0x32564255u /* "UBV2": the algorithm and its digest follow */
#define UB_VERIFY_HDR	 32u
#define UB_VERIFY_HDR2	 104u /* UBV2 header: 32 + alg, digest length, pad, 64-byte digest */

/* On-media header, little-endian, at the start of each logical block. */
struct ub_vhdr {
	uint32_t magic;
	uint32_t crc; /* CRC32C of the whole block with this field zero */
	uint64_t lba;
	uint64_t gen;  /* 0 never appears on media: it means "unknown" to the checker */
	uint32_t seed; /* run identity, reported on mismatch */
	uint32_t blksz;
};

enum ub_vres {
	UB_V_OK,
	UB_V_BAD_MAGIC, /* not a verify block: never written, or overwritten by something else */
	UB_V_BAD_SIZE,
	UB_V_BAD_CRC,
	UB_V_BAD_LBA,
	UB_V_BAD_GEN,
	UB_V_BAD_PATTERN,
};

/* How blocks are filled and checked: the algorithm (enum ub_verify) and an optional payload
 * pattern (verify_pattern); pattern alone means no header at all. */
struct ub_vspec {
	int alg;
	const uint8_t *pattern;
	unsigned plen;
};

const char *ub_vres_str(enum ub_vres r);

/* Fill one logical block (blksz >= UB_VERIFY_HDR, multiple of 8). */
void ub_verify_fill(void *blk, uint32_t blksz, uint64_t lba, uint64_t gen, uint32_t seed);
/* expect_gen 0 accepts any generation.  got receives the header as found (decoded). */
enum ub_vres ub_verify_check(const void *blk, uint32_t blksz, uint64_t lba, uint64_t expect_gen,
			     struct ub_vhdr *got);

/* The same with any algorithm; the header is UBV1 for crc32c (so old blocks still check). */
void ub_verify_fill_spec(void *blk, uint32_t blksz, uint64_t lba, uint64_t gen, uint32_t seed,
			 const struct ub_vspec *vs);
enum ub_vres ub_verify_check_spec(const void *blk, uint32_t blksz, uint64_t lba,
				  uint64_t expect_gen, struct ub_vhdr *got,
				  const struct ub_vspec *vs);
/* Smallest block a spec fits in. */
uint32_t ub_verify_min_block(const struct ub_vspec *vs);

/* Per-chunk (one chunk = one job block of bs bytes) expected generation and an in-flight mark,
 * so that two I/Os never overlap on a chunk and each read knows which write it must see. */
struct ub_vtrack {
	uint64_t nchunks;
	uint64_t *gen; /* 0: unknown (never written by this run, or a write failed) */
	uint8_t *busy;
};

bool ub_vtrack_init(struct ub_vtrack *t, uint64_t nchunks);
void ub_vtrack_free(struct ub_vtrack *t);

#endif
