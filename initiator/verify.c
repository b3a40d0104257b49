/* Verify block format: header + deterministic pseudo-random payload + CRC32C. */
#include "initiator/verify.h"

#include <endian.h>
#include <isa-l/crc.h>
#include <isa-l/crc64.h>
#include <openssl/evp.h>

#include "initiator/job.h"
#include <stdlib.h>
#include <string.h>

static const char *const vres_names[] = {
    [UB_V_OK] = "ok",
    [UB_V_BAD_MAGIC] = "no verify header (block never written by a verify run, or overwritten)",
    [UB_V_BAD_SIZE] = "header block size differs",
    [UB_V_BAD_CRC] = "CRC32C mismatch (block content damaged)",
    [UB_V_BAD_LBA] = "header carries another LBA (misplaced write/read)",
    [UB_V_BAD_GEN] = "stale generation (an older write, a newer one was lost)",
    [UB_V_BAD_PATTERN] = "data differs from verify_pattern",
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

/* The 32 bytes both header formats start with (struct ub_vhdr, little-endian); the CRC32C
 * field is written zero (UBV1 sets it afterwards, UBV2 leaves it). */
static void put_hdr(uint8_t *b, uint32_t magic, uint64_t lba, uint64_t gen, uint32_t seed,
		    uint32_t blksz)
{
	uint32_t v32;
	uint64_t v64;

	v32 = htole32(magic);
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
}

static void get_hdr(const uint8_t *b, struct ub_vhdr *h)
{
	uint32_t v32;
	uint64_t v64;

	memcpy(&v32, b, 4);
	h->magic = le32toh(v32);
	memcpy(&v32, b + 4, 4);
	h->crc = le32toh(v32);
	memcpy(&v64, b + 8, 8);
	h->lba = le64toh(v64);
	memcpy(&v64, b + 16, 8);
	h->gen = le64toh(v64);
	memcpy(&v32, b + 24, 4);
	h->seed = le32toh(v32);
	memcpy(&v32, b + 28, 4);
	h->blksz = le32toh(v32);
}

/* The payload from byte `from` on: the spec's pattern repeated, or else xorshift64: cheap, and
 * a different sequence per (lba, gen) so stale data is unlike current data even if a header
 * were to survive. */
static void fill_payload(uint8_t *b, uint32_t from, uint32_t blksz, uint64_t lba, uint64_t gen,
			 uint32_t seed, const struct ub_vspec *vs)
{
	uint64_t x = (lba * 0x9e3779b97f4a7c15ull) ^ (gen << 17) ^ seed ^ 0x2545f4914f6cdd1dull;

	if (vs && vs->plen) {
		for (uint32_t off = from; off < blksz; off++)
			b[off] = vs->pattern[off % vs->plen];
		return;
	}
	if (!x)
		x = 1;
	for (uint32_t off = from; off + 8 <= blksz; off += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(b + off, &x, 8);
	}
}

/* A UBV1 block: payload (vs's pattern, or the pseudo-random one when vs is NULL), header,
 * CRC32C over the whole. */
static void fill_v1(uint8_t *b, uint32_t blksz, uint64_t lba, uint64_t gen, uint32_t seed,
		    const struct ub_vspec *vs)
{
	uint32_t crc;

	fill_payload(b, UB_VERIFY_HDR, blksz, lba, gen, seed, vs);
	put_hdr(b, UB_VERIFY_MAGIC, lba, gen, seed, blksz);
	crc = htole32(block_crc(b, blksz));
	memcpy(b + 4, &crc, 4);
}

void ub_verify_fill(void *blk, uint32_t blksz, uint64_t lba, uint64_t gen, uint32_t seed)
{
	fill_v1(blk, blksz, lba, gen, seed, NULL);
}

enum ub_vres ub_verify_check(const void *blk, uint32_t blksz, uint64_t lba, uint64_t expect_gen,
			     struct ub_vhdr *got)
{
	const uint8_t *b = blk;
	struct ub_vhdr h;

	get_hdr(b, &h);
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

/* ---- other algorithms (UBV2 header) ---- */

static unsigned digest(int alg, const uint8_t *blk, uint32_t blksz, uint8_t out[64])
{
	static const uint8_t zero[64];
	const EVP_MD *md = NULL;
	unsigned n = 0;

	switch (alg) {
	case UB_VERIFY_CRC32: {
		uint32_t c = crc32_gzip_refl(0, (unsigned char *)blk, 40);
		c = crc32_gzip_refl(c, (unsigned char *)zero, 64);
		c = crc32_gzip_refl(c, (unsigned char *)blk + UB_VERIFY_HDR2,
				    blksz - UB_VERIFY_HDR2);
		memcpy(out, &c, 4);
		return 4;
	}
	case UB_VERIFY_CRC64: {
		uint64_t c = crc64_ecma_refl(0, blk, 40);
		c = crc64_ecma_refl(c, zero, 64);
		c = crc64_ecma_refl(c, blk + UB_VERIFY_HDR2, blksz - UB_VERIFY_HDR2);
		memcpy(out, &c, 8);
		return 8;
	}
	case UB_VERIFY_MD5:
		md = EVP_md5();
		break;
	case UB_VERIFY_SHA1:
		md = EVP_sha1();
		break;
	case UB_VERIFY_SHA256:
		md = EVP_sha256();
		break;
	case UB_VERIFY_SHA512:
		md = EVP_sha512();
		break;
	default:
		return 0; /* meta: the header alone */
	}
	{
		EVP_MD_CTX *c = EVP_MD_CTX_new();
		if (!c)
			return 0;
		EVP_DigestInit_ex(c, md, NULL);
		EVP_DigestUpdate(c, blk, 40);
		EVP_DigestUpdate(c, zero, 64);
		EVP_DigestUpdate(c, blk + UB_VERIFY_HDR2, blksz - UB_VERIFY_HDR2);
		EVP_DigestFinal_ex(c, out, &n);
		EVP_MD_CTX_free(c);
	}
	return n;
}

uint32_t ub_verify_min_block(const struct ub_vspec *vs)
{
	if (vs->alg == UB_VERIFY_PATTERN)
		return 1;
	return vs->alg == UB_VERIFY_CRC32C ? UB_VERIFY_HDR : UB_VERIFY_HDR2;
}

void ub_verify_fill_spec(void *blk, uint32_t blksz, uint64_t lba, uint64_t gen, uint32_t seed,
			 const struct ub_vspec *vs)
{
	uint8_t *b = blk, d[64];
	unsigned n;

	if (vs->alg == UB_VERIFY_PATTERN) {
		fill_payload(b, 0, blksz, lba, gen, seed, vs);
		return;
	}
	if (vs->alg == UB_VERIFY_CRC32C) {
		fill_v1(b, blksz, lba, gen, seed, vs);
		return;
	}
	fill_payload(b, UB_VERIFY_HDR2, blksz, lba, gen, seed, vs);
	memset(b, 0, UB_VERIFY_HDR2);
	put_hdr(b, UB_VERIFY_MAGIC2, lba, gen, seed, blksz);
	b[32] = (uint8_t)vs->alg;
	n = digest(vs->alg, b, blksz, d);
	b[33] = (uint8_t)n;
	/* the digest covers byte 33 (its length) but not the digest field itself */
	n = digest(vs->alg, b, blksz, d);
	memcpy(b + 40, d, n);
}

enum ub_vres ub_verify_check_spec(const void *blk, uint32_t blksz, uint64_t lba,
				  uint64_t expect_gen, struct ub_vhdr *got,
				  const struct ub_vspec *vs)
{
	const uint8_t *b = blk;
	uint8_t d[64];
	struct ub_vhdr h;
	unsigned n;

	if (vs->alg == UB_VERIFY_PATTERN) {
		if (got)
			memset(got, 0, sizeof(*got));
		for (uint32_t off = 0; off < blksz; off++)
			if (b[off] != vs->pattern[off % vs->plen])
				return UB_V_BAD_PATTERN;
		return UB_V_OK;
	}
	if (vs->alg == UB_VERIFY_CRC32C)
		return ub_verify_check(blk, blksz, lba, expect_gen, got);
	get_hdr(b, &h);
	h.crc = 0; /* UBV2 has no CRC32C field: its digest is at byte 40 */
	if (got)
		*got = h;
	if (h.magic != UB_VERIFY_MAGIC2 || b[32] != vs->alg)
		return UB_V_BAD_MAGIC;
	if (h.blksz != blksz)
		return UB_V_BAD_SIZE;
	n = digest(vs->alg, b, blksz, d);
	if (n != b[33] || memcmp(d, b + 40, n))
		return UB_V_BAD_CRC;
	if (h.lba != lba)
		return UB_V_BAD_LBA;
	if (expect_gen && h.gen != expect_gen)
		return UB_V_BAD_GEN;
	if (vs->plen)
		for (uint32_t off = UB_VERIFY_HDR2; off < blksz; off++)
			if (b[off] != vs->pattern[off % vs->plen])
				return UB_V_BAD_PATTERN;
	return UB_V_OK;
}
