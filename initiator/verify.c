/* Verify block format: header + deterministic pseudo-random payload + CRC32C. */
#include "initiator/verify.h"

#include <endian.h>
#include <isa-l/crc.h>
#include <stdlib.h>
#include <string.h>

static const char *const vres_names[] = {
    [UB_V_OK] = "ok",
    [UB_V_BAD_MAGIC] = "no verify header (block never written by a verify run, or overwritten)",
    [UB_V_BAD_SIZE] = "header block size differs",
    [UB_V_BAD_CRC] = "CRC32C mismatch (block content damaged)",
    [UB_V_BAD_LBA] = "header carries another LBA (misplaced write/read)",
    [UB_V_BAD_GEN] = "stale generation (an older write, a newer one was lost)",
};

const char *ub_vres_str(enum ub_vres r)
{
	return vres_names[r];
}

static uint32_t block_crc(const uint8_t *blk, uint32_t blksz)
{
	static const uint8_t zero[4];
	uint32_t crc = crc32_iscsi((unsigned char *)blk, 4, 0xffffffffu);

	crc = crc32_iscsi((unsigned char *)zero, 4, crc);
	return crc32_iscsi((unsigned char *)blk + 8, (int)(blksz - 8), crc);
}

void ub_verify_fill(void *blk, uint32_t blksz, uint64_t lba, uint64_t gen, uint32_t seed)
{
	uint8_t *b = blk;
	uint64_t x = (lba * 0x9e3779b97f4a7c15ull) ^ (gen << 17) ^ seed ^ 0x2545f4914f6cdd1dull;
	uint32_t v32;
	uint64_t v64;

	if (!x)
		x = 1;
	/* xorshift64: cheap, and a different pattern per (lba, gen) so stale data is unlike
	 * current data even if a header were to survive. */
	for (uint32_t off = UB_VERIFY_HDR; off + 8 <= blksz; off += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(b + off, &x, 8);
	}
	v32 = htole32(UB_VERIFY_MAGIC);
	memcpy(b, &v32, 4);
	memset(b + 4, 0, 4);
	v64 = htole64(lba);
	memcpy(b + 8, &v64, 8);
	v64 = htole64(gen);
	memcpy(b + 16, &v64, 8);
	v32 = htole32(seed);
	memcpy(b + 24, &v32, 4);
	v32 = htole32(blksz);
	memcpy(b + 28, &v32, 4);
	v32 = htole32(block_crc(b, blksz));
	memcpy(b + 4, &v32, 4);
}

enum ub_vres ub_verify_check(const void *blk, uint32_t blksz, uint64_t lba, uint64_t expect_gen,
			     struct ub_vhdr *got)
{
	const uint8_t *b = blk;
	struct ub_vhdr h;

	memcpy(&h.magic, b, 4);
	memcpy(&h.crc, b + 4, 4);
	memcpy(&h.lba, b + 8, 8);
	memcpy(&h.gen, b + 16, 8);
	memcpy(&h.seed, b + 24, 4);
	memcpy(&h.blksz, b + 28, 4);
	h.magic = le32toh(h.magic);
	h.crc = le32toh(h.crc);
	h.lba = le64toh(h.lba);
	h.gen = le64toh(h.gen);
	h.seed = le32toh(h.seed);
	h.blksz = le32toh(h.blksz);
	if (got)
		*got = h;
	if (h.magic != UB_VERIFY_MAGIC)
		return UB_V_BAD_MAGIC;
	if (h.blksz != blksz)
		return UB_V_BAD_SIZE;
	if (h.crc != block_crc(b, blksz))
		return UB_V_BAD_CRC;
	if (h.lba != lba)
		return UB_V_BAD_LBA;
	if (expect_gen && h.gen != expect_gen)
		return UB_V_BAD_GEN;
	return UB_V_OK;
}

bool ub_vtrack_init(struct ub_vtrack *t, uint64_t nchunks)
{
	t->nchunks = nchunks;
	t->gen = calloc(nchunks ? nchunks : 1, sizeof(*t->gen));
	t->busy = calloc(nchunks ? nchunks : 1, 1);
	if (!t->gen || !t->busy) {
		ub_vtrack_free(t);
		return false;
	}
	return true;
}

void ub_vtrack_free(struct ub_vtrack *t)
{
	free(t->gen);
	free(t->busy);
	t->gen = NULL;
	t->busy = NULL;
	t->nchunks = 0;
}
