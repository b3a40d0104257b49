/* utgt-bench verify block format: what each kind of damage looks like to the checker. */
#include <criterion/criterion.h>
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
