/* utgt-bench verify block format: what each kind of damage looks like to the checker. */
#include <criterion/criterion.h>
#include <isa-l/crc.h>
#include <stdlib.h>
#include <string.h>

#include "initiator/job.h"
#include "initiator/verify.h"

static uint8_t blk[4096], other[4096];

Test(bench_verify, written_block_checks_ok)
{
	struct ub_vhdr h;

	ub_verify_fill(blk, 512, 1234, 7, 0xabcd);
	cr_assert_eq(ub_verify_check(blk, 512, 1234, 7, &h), UB_V_OK);
	cr_assert_eq(h.lba, 1234);
	cr_assert_eq(h.gen, 7);
	cr_assert_eq(h.seed, 0xabcd);
	cr_assert_eq(ub_verify_check(blk, 512, 1234, 0, NULL), UB_V_OK, "gen 0 accepts any");
}

Test(bench_verify, every_flipped_byte_is_caught)
{
	ub_verify_fill(blk, 512, 9, 3, 1);
	for (int i = 0; i < 512; i++) {
		blk[i] ^= 0x10;
		enum ub_vres r = ub_verify_check(blk, 512, 9, 3, NULL);
		cr_assert_neq(r, UB_V_OK, "flip at byte %d undetected", i);
		blk[i] ^= 0x10;
	}
	cr_assert_eq(ub_verify_check(blk, 512, 9, 3, NULL), UB_V_OK);
}

Test(bench_verify, misplaced_stale_and_foreign_blocks)
{
	ub_verify_fill(blk, 4096, 100, 5, 1);
	cr_assert_eq(ub_verify_check(blk, 4096, 101, 5, NULL), UB_V_BAD_LBA);
	cr_assert_eq(ub_verify_check(blk, 4096, 100, 6, NULL), UB_V_BAD_GEN);
	cr_assert_eq(ub_verify_check(blk, 512, 100, 5, NULL), UB_V_BAD_SIZE);
	memset(other, 0, sizeof(other));
	cr_assert_eq(ub_verify_check(other, 4096, 100, 5, NULL), UB_V_BAD_MAGIC);
	memset(other, 0xa5, sizeof(other));
	cr_assert_eq(ub_verify_check(other, 4096, 100, 0, NULL), UB_V_BAD_MAGIC);
}

Test(bench_verify, payload_differs_per_lba_and_generation)
{
	ub_verify_fill(blk, 512, 100, 5, 1);
	ub_verify_fill(other, 512, 100, 6, 1);
	cr_assert_neq(memcmp(blk + UB_VERIFY_HDR, other + UB_VERIFY_HDR, 512 - UB_VERIFY_HDR), 0);
	ub_verify_fill(other, 512, 101, 5, 1);
	cr_assert_neq(memcmp(blk + UB_VERIFY_HDR, other + UB_VERIFY_HDR, 512 - UB_VERIFY_HDR), 0);
	ub_verify_fill(other, 512, 100, 5, 1);
	cr_assert_eq(memcmp(blk, other, 512), 0, "deterministic");
}

Test(bench_verify, header_with_copied_payload_of_other_block_fails_crc)
{
	/* a block whose header is right but whose data came from elsewhere */
	ub_verify_fill(blk, 512, 100, 5, 1);
	ub_verify_fill(other, 512, 200, 5, 1);
	memcpy(blk + UB_VERIFY_HDR, other + UB_VERIFY_HDR, 512 - UB_VERIFY_HDR);
	cr_assert_eq(ub_verify_check(blk, 512, 100, 5, NULL), UB_V_BAD_CRC);
}

Test(bench_verify, tracker)
{
	struct ub_vtrack t;

	cr_assert(ub_vtrack_init(&t, 1000));
	cr_assert_eq(t.nchunks, 1000);
	for (int i = 0; i < 1000; i++)
		cr_assert(!t.gen[i] && !t.busy[i]);
	ub_vtrack_free(&t);
	cr_assert_null(t.gen);
	for (int r = UB_V_OK; r <= UB_V_BAD_GEN; r++)
		cr_assert_neq(strlen(ub_vres_str((enum ub_vres)r)), 0);
}

Test(bench_verify, every_algorithm_fills_and_checks)
{
	static const int algs[] = {UB_VERIFY_CRC32C, UB_VERIFY_CRC32, UB_VERIFY_CRC64,
				   UB_VERIFY_MD5,    UB_VERIFY_SHA1,  UB_VERIFY_SHA256,
				   UB_VERIFY_SHA512, UB_VERIFY_META};
	static uint8_t blk[4096];
	const uint8_t pat[4] = {0xaa, 0x55, 0x5a, 0xa5};

	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		struct ub_vspec vs = {.alg = algs[i]};
		ub_verify_fill_spec(blk, sizeof(blk), 9, 3, 77, &vs);
		cr_assert_eq(ub_verify_check_spec(blk, sizeof(blk), 9, 3, NULL, &vs), UB_V_OK,
			     "alg %d", algs[i]);
		cr_assert_eq(ub_verify_check_spec(blk, sizeof(blk), 10, 3, NULL, &vs), UB_V_BAD_LBA);
		if (algs[i] != UB_VERIFY_META) {
			blk[2000] ^= 1;
			cr_assert_eq(ub_verify_check_spec(blk, sizeof(blk), 9, 3, NULL, &vs),
				     UB_V_BAD_CRC, "alg %d catches a flipped bit", algs[i]);
		}
		vs.pattern = pat;
		vs.plen = 4;
		ub_verify_fill_spec(blk, sizeof(blk), 9, 3, 77, &vs);
		cr_assert_eq(blk[4095], 0xa5, "verify_pattern fills the payload");
		cr_assert_eq(ub_verify_check_spec(blk, sizeof(blk), 9, 3, NULL, &vs), UB_V_OK);
	}
	{
		struct ub_vspec vs = {.alg = UB_VERIFY_PATTERN, .pattern = pat, .plen = 4};
		ub_verify_fill_spec(blk, sizeof(blk), 0, 0, 0, &vs);
		cr_assert_eq(ub_verify_check_spec(blk, sizeof(blk), 0, 0, NULL, &vs), UB_V_OK);
		blk[7] = 0;
		cr_assert_eq(ub_verify_check_spec(blk, sizeof(blk), 0, 0, NULL, &vs),
			     UB_V_BAD_PATTERN);
	}
}

/* The bytes on media do not change with the code: blocks written by an earlier utgt-bench
 * still check.  CRC32C (isa-l crc32_iscsi) of whole 4 KiB blocks, recorded from the
 * implementation that wrote each header format field by field. */
Test(bench_verify, on_media_format_is_fixed)
{
	static uint8_t b[4096];
	static const uint8_t pat[] = {0xde, 0xad, 0xbe};
	const struct ub_vspec specs[] = {
	    {.alg = UB_VERIFY_CRC32C},
	    {.alg = UB_VERIFY_CRC32C, .pattern = pat, .plen = 3},
	    {.alg = UB_VERIFY_SHA256, .pattern = pat, .plen = 3},
	};
	const uint32_t want[] = {0xe8d05fabu, 0xd3754882u, 0x11c65859u};

	for (unsigned i = 0; i < 3; i++) {
		ub_verify_fill_spec(b, sizeof(b), 7, 3, 0x1234, &specs[i]);
		cr_assert_eq(crc32_iscsi(b, sizeof(b), 0xffffffffu), want[i], "spec %u", i);
		cr_assert_eq(ub_verify_check_spec(b, sizeof(b), 7, 3, NULL, &specs[i]), UB_V_OK);
	}
	/* the common header: magic, lba, generation, seed, block size, little-endian */
	cr_assert_eq(b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24, UB_VERIFY_MAGIC2);
	cr_assert_eq(b[8], 7);
	cr_assert_eq(b[16], 3);
	cr_assert_eq(b[24] | b[25] << 8, 0x1234);
	cr_assert_eq(b[28] | b[29] << 8, 4096);
}
