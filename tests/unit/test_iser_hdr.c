/* iSER header and CM private data codec: byte-exact layout against hand-written wire images
 * (as ib_iser builds them), round trips, and every malformed-input error path. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "transports/iser/iser_proto.h"

/* A SCSI READ as ib_iser sends it: opcode 1, RSV, read STag 0x11223344 at VA 0x0102..08. */
static const uint8_t read_hdr[ISER_HDR_LEN] = {
    0x14, 0, 0,	   0,	 0,    0,    0,	   0,	 0,    0,    0,	   0,	 0,    0,
    0,	  0, 0x11, 0x22, 0x33, 0x44, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
};

Test(iser_hdr, decodes_read_header_fields)
{
	struct iser_hdr h;

	cr_assert_eq(iser_hdr_decode(read_hdr, sizeof(read_hdr), &h), ISER_OK);
	cr_assert_eq(h.opcode, ISER_OP_ISCSI_CTRL);
	cr_assert(h.rsv);
	cr_assert_not(h.wsv);
	cr_assert_eq(h.read_stag, 0x11223344u);
	cr_assert_eq(h.read_va, 0x0102030405060708ull);
	cr_assert_eq(h.write_stag, 0);
	cr_assert_eq(h.write_va, 0);
}

Test(iser_hdr, encode_decode_round_trip_both_stags)
{
	struct iser_hdr in = {.opcode = ISER_OP_ISCSI_CTRL,
			      .wsv = true,
			      .rsv = true,
			      .write_stag = 0xdeadbeef,
			      .write_va = 0xffff888012345000ull,
			      .read_stag = 0x0badf00d,
			      .read_va = 0x7f0000001000ull};
	struct iser_hdr out;
	uint8_t b[ISER_HDR_LEN];

	iser_hdr_encode(b, &in);
	cr_assert_eq(b[0], 0x1c);
	cr_assert_eq(b[1] | b[2] | b[3], 0, "reserved bytes are zero");
	cr_assert_eq(b[4], 0xde);
	cr_assert_eq(b[7], 0xef);
	cr_assert_eq(b[8], 0xff);
	cr_assert_eq(b[15], 0x00);
	cr_assert_eq(b[14], 0x50);
	cr_assert_eq(iser_hdr_decode(b, sizeof(b), &out), ISER_OK);
	cr_assert_eq(out.wsv, true);
	cr_assert_eq(out.rsv, true);
	cr_assert_eq(out.write_stag, in.write_stag);
	cr_assert_eq(out.write_va, in.write_va);
	cr_assert_eq(out.read_stag, in.read_stag);
	cr_assert_eq(out.read_va, in.read_va);
}

Test(iser_hdr, target_header_is_ctrl_without_stags)
{
	uint8_t b[ISER_HDR_LEN], zero[ISER_HDR_LEN - 1] = {0};

	memset(b, 0xee, sizeof(b));
	iser_hdr_encode_tgt(b);
	cr_assert_eq(b[0], 0x10);
	cr_assert_eq(memcmp(b + 1, zero, sizeof(zero)), 0);
}

Test(iser_hdr, rejects_short_hello_and_reserved_flags)
{
	uint8_t b[ISER_HDR_LEN];
	struct iser_hdr h;

	memcpy(b, read_hdr, sizeof(b));
	cr_assert_eq(iser_hdr_decode(b, ISER_HDR_LEN - 1, &h), ISER_E_SHORT);
	cr_assert_eq(iser_hdr_decode(b, 0, &h), ISER_E_SHORT);
	b[0] = 0x20; /* Hello: iWARP only */
	cr_assert_eq(iser_hdr_decode(b, sizeof(b), &h), ISER_E_OPCODE);
	b[0] = 0x30;
	cr_assert_eq(iser_hdr_decode(b, sizeof(b), &h), ISER_E_OPCODE);
	b[0] = 0x00;
	cr_assert_eq(iser_hdr_decode(b, sizeof(b), &h), ISER_E_OPCODE);
	b[0] = 0xf4;
	cr_assert_eq(iser_hdr_decode(b, sizeof(b), &h), ISER_E_OPCODE);
	b[0] = 0x11;
	cr_assert_eq(iser_hdr_decode(b, sizeof(b), &h), ISER_E_FLAGS);
	b[0] = 0x12;
	cr_assert_eq(iser_hdr_decode(b, sizeof(b), &h), ISER_E_FLAGS);
	cr_assert_str_neq(iser_strerror(ISER_E_FLAGS), "unknown iSER error");
}

/* A SEND: iSER header + BHS (+ AHS) + data segment of dsl bytes, total len. */
static size_t mk_send(uint8_t *b, uint8_t ahs_words, uint32_t dsl, size_t data_bytes)
{
	memset(b, 0, ISER_HEADERS_LEN + ahs_words * 4 + data_bytes);
	iser_hdr_encode_tgt(b);
	uint8_t *bhs = b + ISER_HDR_LEN;
	bhs[0] = 0x01;
	bhs[4] = ahs_words;
	bhs[5] = dsl >> 16;
	bhs[6] = dsl >> 8;
	bhs[7] = dsl;
	return ISER_HEADERS_LEN + ahs_words * 4 + data_bytes;
}

Test(iser_hdr, pdu_check_accepts_exact_and_padded_framing)
{
	static uint8_t b[ISER_HEADERS_LEN + 64 + 9000];
	struct iser_hdr h;
	uint32_t dsl = 99, off = 99;
	size_t n;

	n = mk_send(b, 0, 0, 0);
	cr_assert_eq(iser_pdu_check(b, n, 8192, &h, &dsl, &off), ISER_OK);
	cr_assert_eq(dsl, 0);
	cr_assert_eq(off, ISER_HEADERS_LEN);

	n = mk_send(b, 0, 8192, 8192);
	cr_assert_eq(iser_pdu_check(b, n, 8192, &h, &dsl, &off), ISER_OK);
	cr_assert_eq(dsl, 8192);

	n = mk_send(b, 2, 5, 5); /* unpadded, as ib_iser sends login text */
	cr_assert_eq(iser_pdu_check(b, n, 8192, &h, &dsl, &off), ISER_OK);
	cr_assert_eq(dsl, 5);
	cr_assert_eq(off, ISER_HEADERS_LEN + 8);
	n = mk_send(b, 0, 5, 8); /* padded to 4 as on TCP */
	cr_assert_eq(iser_pdu_check(b, n, 8192, &h, &dsl, &off), ISER_OK);
	cr_assert_eq(dsl, 5);
}

Test(iser_hdr, pdu_check_rejects_bad_framing_and_oversize)
{
	static uint8_t b[ISER_HEADERS_LEN + 64 + 9000];
	struct iser_hdr h;
	uint32_t dsl, off;
	size_t n;

	cr_assert_eq(iser_pdu_check(b, ISER_HEADERS_LEN - 1, 8192, &h, &dsl, &off), ISER_E_SHORT);
	cr_assert_eq(iser_pdu_check(b, ISER_HDR_LEN, 8192, &h, &dsl, &off), ISER_E_SHORT);
	n = mk_send(b, 0, 100, 100);
	cr_assert_eq(iser_pdu_check(b, n - 1, 8192, &h, &dsl, &off), ISER_E_LENGTH);
	cr_assert_eq(iser_pdu_check(b, n + 4, 8192, &h, &dsl, &off), ISER_E_LENGTH);
	n = mk_send(b, 1, 0, 0); /* AHS announced, bytes missing */
	cr_assert_eq(iser_pdu_check(b, n - 4, 8192, &h, &dsl, &off), ISER_E_LENGTH);
	n = mk_send(b, 0, 8193, 8193);
	cr_assert_eq(iser_pdu_check(b, n, 8192, &h, &dsl, &off), ISER_E_TOO_LONG);
	n = mk_send(b, 0, 0xffffff, 0); /* huge DSL in a small SEND */
	cr_assert_eq(iser_pdu_check(b, n, 8192, &h, &dsl, &off), ISER_E_LENGTH);
	n = mk_send(b, 0, 0, 0);
	b[0] = 0x13;
	cr_assert_eq(iser_pdu_check(b, n, 8192, &h, &dsl, &off), ISER_E_FLAGS);
}

Test(iser_hdr, cm_req_flags_from_ib_iser)
{
	const uint8_t both[4] = {0xc0, 0, 0, 0}, zbva[56] = {0x80};
	struct iser_cm_req r;

	cr_assert_eq(iser_cm_req_parse(both, 4, &r), ISER_OK);
	cr_assert(r.zbva_not_sup);
	cr_assert(r.send_w_inv_not_sup);
	/* librdmacm hands the whole REQ private data area: trailing zeros are fine */
	cr_assert_eq(iser_cm_req_parse(zbva, sizeof(zbva), &r), ISER_OK);
	cr_assert(r.zbva_not_sup);
	cr_assert_not(r.send_w_inv_not_sup);
	const uint8_t none[4] = {0x01, 0, 0, 0}; /* reserved bit only */
	cr_assert_eq(iser_cm_req_parse(none, 4, &r), ISER_OK);
	cr_assert_not(r.zbva_not_sup);
	cr_assert_not(r.send_w_inv_not_sup);
}

Test(iser_hdr, cm_req_absent_or_truncated)
{
	struct iser_cm_req r = {0};
	const uint8_t two[2] = {0xc0, 0};

	cr_assert_eq(iser_cm_req_parse(NULL, 0, &r), ISER_OK);
	cr_assert(r.zbva_not_sup && r.send_w_inv_not_sup);
	cr_assert_eq(iser_cm_req_parse(two, 2, &r), ISER_E_CM_PRIV);
}

Test(iser_hdr, cm_rep_says_no_zbva_no_send_with_invalidate)
{
	uint8_t rep[ISER_CM_HDR_LEN];

	memset(rep, 0xff, sizeof(rep));
	iser_cm_rep_build(rep);
	cr_assert_eq(rep[0], 0xc0);
	cr_assert_eq(rep[1] | rep[2] | rep[3], 0);
}

/* Malformed input at scale: whatever iser_pdu_check accepts keeps the data segment inside the
 * SEND and under the limit; nothing it is given makes it read past len (run under ASan with
 * `make asan`). */
Test(iser_hdr, random_sends_never_escape_the_buffer)
{
	unsigned seed = 12345, accepted = 0;

	for (int i = 0; i < 200000; i++) {
		size_t len = rand_r(&seed) % 200;
		uint8_t *b = malloc(len ? len : 1);
		struct iser_hdr h;
		uint32_t dsl = 0, off = 0;

		for (size_t j = 0; j < len; j++)
			b[j] = rand_r(&seed);
		if (len > ISER_HEADERS_LEN && rand_r(&seed) % 2) {
			/* make many of them plausible so the length checks are exercised */
			b[0] = 0x10 | (b[0] & 0x0c);
			b[ISER_HDR_LEN + 4] = rand_r(&seed) % 4;
			b[ISER_HDR_LEN + 5] = 0;
			b[ISER_HDR_LEN + 6] = 0;
			b[ISER_HDR_LEN + 7] = rand_r(&seed) % 128;
		}
		if (iser_pdu_check(b, len, 100, &h, &dsl, &off) == ISER_OK) {
			accepted++;
			cr_assert_leq(dsl, 100);
			cr_assert_leq((size_t)off + dsl, len);
			cr_assert_geq(off, ISER_HEADERS_LEN);
		}
		free(b);
	}
	cr_assert_gt(accepted, 0, "some random SENDs must be well formed");
}
