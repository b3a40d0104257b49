/* The receive state machine fed byte by byte, in odd chunks, with and without digests, with
 * would-block pauses between reads; corrupt digests, truncation, oversized segments,
 * budgets and pauses; a burst of PDUs cut at every byte; large segments received in place. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transports/iscsi/iscsi_digest.h"
#include "transports/iscsi/iscsi_rx.h"

/* ---------------------------------------------------------------- stream builder */
struct stream {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct stream *s, const void *d, size_t n)
{
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2 + 256;
		s->p = realloc(s->p, s->cap);
	}
	memcpy(s->p + s->len, d, n);
	s->len += n;
}

static uint8_t pattern(size_t i, uint8_t seed)
{
	return (uint8_t)(i * 31 + seed);
}

/* Append one PDU; data is pattern(i, seed). */
static void add_pdu(struct stream *s, uint8_t op, const uint8_t *ahs, unsigned ahs_len,
		    uint32_t dsl, uint8_t seed, bool hd, bool dd)
{
	uint8_t h[48] = {0}, dig[4], pad[4] = {0};
	uint8_t *data = malloc(dsl + 1);
	uint32_t crc;

	h[0] = op;
	h[4] = (uint8_t)(ahs_len / 4);
	iscsi_put24(h + 5, dsl);
	iscsi_put32(h + 16, seed);
	put(s, h, 48);
	if (ahs_len)
		put(s, ahs, ahs_len);
	if (hd) {
		crc = iscsi_crc32c_update(ISCSI_CRC32C_INIT, h, 48);
		crc = iscsi_crc32c_final(iscsi_crc32c_update(crc, ahs, ahs_len));
		iscsi_digest_put(dig, crc);
		put(s, dig, 4);
	}
	if (dsl) {
		for (uint32_t i = 0; i < dsl; i++)
			data[i] = pattern(i, seed);
		put(s, data, dsl);
		put(s, pad, iscsi_pad4(dsl));
		if (dd) {
			struct iovec v = {data, dsl};

			iscsi_digest_put(dig, iscsi_crc32c_iov(&v, 1, iscsi_pad4(dsl)));
			put(s, dig, 4);
		}
	}
	free(data);
}

/* ---------------------------------------------------------------- byte source */
struct src {
	const uint8_t *p;
	size_t len, pos, chunk;
	bool block_next; /* alternate: a chunk, then EAGAIN */
	bool eof_at_end;
};

static ssize_t src_recv(void *arg, const struct iovec *iov, int cnt)
{
	struct src *s = arg;
	size_t n = 0, want = s->chunk;

	if (s->block_next) {
		s->block_next = false;
		errno = EAGAIN;
		return -1;
	}
	if (s->pos == s->len) {
		if (s->eof_at_end)
			return 0;
		errno = EAGAIN;
		return -1;
	}
	for (int i = 0; i < cnt && want && s->pos < s->len; i++) {
		size_t k = iov[i].iov_len;

		if (k > want)
			k = want;
		if (k > s->len - s->pos)
			k = s->len - s->pos;
		memcpy(iov[i].iov_base, s->p + s->pos, k);
		s->pos += k;
		want -= k;
		n += k;
	}
	s->block_next = true;
	return (ssize_t)n;
}

/* ---------------------------------------------------------------- recorder */
struct rec {
	int n;
	uint8_t op[16];
	uint32_t dsl[16];
	bool discard[16], dbad[16], data_ok[16];
	uint8_t cmd_buf[1024];
	int pause_at;
	bool bad_dst;
};

static int on_header(void *ctx, struct iscsit_rx *rx)
{
	struct rec *r = ctx;

	if (bhs_opcode(rx->bhs) == ISCSI_OP_SCSI_CMD && rx->dsl) {
		/* immediate data straight into "the task's buffer", split over two iovecs */
		struct iovec v[2] = {{r->cmd_buf, 100}, {r->cmd_buf + 100, rx->dsl - 100}};

		if (r->bad_dst)
			v[1].iov_len++;
		iscsit_rx_set_dst(rx, v, 2);
	}
	return RX_CB_OK;
}

static int on_pdu(void *ctx, struct iscsit_rx *rx)
{
	struct rec *r = ctx;
	int i = r->n++;
	const uint8_t *d = rx->to_scratch ? iscsit_rx_data(rx) : r->cmd_buf;
	uint8_t seed = (uint8_t)bhs_itt(rx->bhs);

	if (i >= 16) /* long streams are only counted */
		return RX_CB_OK;
	r->op[i] = bhs_opcode(rx->bhs);
	r->dsl[i] = rx->dsl;
	r->discard[i] = rx->discard;
	r->dbad[i] = rx->ddigest_bad;
	r->data_ok[i] = true;
	if (!rx->discard)
		for (uint32_t k = 0; k < rx->dsl; k++)
			if (d[k] != pattern(k, seed))
				r->data_ok[i] = false;
	if (r->pause_at == r->n)
		return RX_CB_PAUSE;
	return RX_CB_OK;
}

static const struct iscsit_rx_ops ops = {on_header, on_pdu};

static void build_sample(struct stream *s, bool hd, bool dd)
{
	uint8_t ahs[20] = {0};

	iscsi_put16(ahs, 17); /* extended CDB of 16 more bytes */
	ahs[2] = 1;
	add_pdu(s, ISCSI_OP_LOGIN_REQ, NULL, 0, 13, 1, hd, dd);
	add_pdu(s, ISCSI_OP_SCSI_CMD, ahs, 20, 700, 2, hd, dd);
	add_pdu(s, ISCSI_OP_NOP_OUT, NULL, 0, 0, 3, hd, dd);
	add_pdu(s, ISCSI_OP_DATA_OUT, NULL, 0, 5000, 4, hd, dd); /* over max_dsl: discarded */
	add_pdu(s, ISCSI_OP_TEXT_REQ, NULL, 0, 100, 5, hd, dd);
}

static void check_sample(const struct rec *r)
{
	static const uint8_t ops_want[5] = {ISCSI_OP_LOGIN_REQ, ISCSI_OP_SCSI_CMD, ISCSI_OP_NOP_OUT,
					    ISCSI_OP_DATA_OUT, ISCSI_OP_TEXT_REQ};
	static const uint32_t dsl_want[5] = {13, 700, 0, 5000, 100};

	cr_assert_eq(r->n, 5);
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(r->op[i], ops_want[i], "pdu %d", i);
		cr_assert_eq(r->dsl[i], dsl_want[i], "pdu %d", i);
		cr_assert(!r->dbad[i], "pdu %d digest", i);
		cr_assert_eq(r->discard[i], i == 3, "pdu %d discard", i);
		cr_assert(r->data_ok[i], "pdu %d data", i);
	}
}

static void run_all(struct iscsit_rx *rx, struct src *s, struct rec *r)
{
	for (int guard = 0; guard < 10000000; guard++) {
		enum iscsit_rx_result res = iscsit_rx_run(rx, src_recv, s, &ops, r, 1000);

		cr_assert(res == RX_WOULD_BLOCK || res == RX_BUDGET, "result %d (%s)", res,
			  rx->why ? rx->why : "");
		if (res == RX_WOULD_BLOCK && s->pos == s->len && !iscsit_rx_staged(rx) &&
		    !s->block_next)
			return;
	}
	cr_assert_fail("did not finish");
}

static void one_run(size_t chunk, bool hd, bool dd)
{
	struct stream st = {0};
	struct iscsit_rx rx;
	struct src s = {0};
	struct rec r = {0};

	build_sample(&st, hd, dd);
	cr_assert_eq(iscsit_rx_init(&rx), 0);
	rx.max_dsl = 4096;
	rx.hdigest_on = hd;
	rx.ddigest_on = dd;
	s.p = st.p;
	s.len = st.len;
	s.chunk = chunk;
	run_all(&rx, &s, &r);
	check_sample(&r);
	cr_assert(iscsit_rx_idle(&rx));
	cr_assert_eq(rx.bytes, st.len);
	cr_assert_eq(rx.pdus, 5);
	iscsit_rx_free(&rx);
	free(st.p);
}

static const size_t chunks[] = {1,  2,	3,  5,	 7,   13,   47,	   48,
				49, 52, 64, 100, 777, 4096, 20000, 1 << 20};

Test(iscsi_rx, chunks_no_digests)
{
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
		one_run(chunks[i], false, false);
}

Test(iscsi_rx, chunks_header_digest)
{
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
		one_run(chunks[i], true, false);
}

Test(iscsi_rx, chunks_both_digests)
{
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
		one_run(chunks[i], true, true);
}

static enum iscsit_rx_result feed(struct stream *st, struct rec *r, bool hd, bool dd, size_t chunk,
				  bool eof, struct iscsit_rx *rx)
{
	struct src s = {.p = st->p, .len = st->len, .chunk = chunk, .eof_at_end = eof};
	enum iscsit_rx_result res;

	do {
		rx->hdigest_on = hd;
		rx->ddigest_on = dd;
		res = iscsit_rx_run(rx, src_recv, &s, &ops, r, 1000);
	} while (res == RX_WOULD_BLOCK && (s.pos < s.len || s.block_next || eof));
	return res;
}

Test(iscsi_rx, bad_header_digest_is_fatal)
{
	struct stream st = {0};
	struct iscsit_rx rx;
	struct rec r = {0};

	add_pdu(&st, ISCSI_OP_NOP_OUT, NULL, 0, 8, 1, true, false);
	st.p[48] ^= 1; /* first digest byte */
	iscsit_rx_init(&rx);
	cr_assert_eq(feed(&st, &r, true, false, 3, false, &rx), RX_ERROR);
	cr_assert_str_eq(rx.why, "header digest mismatch");
	cr_assert_eq(r.n, 0, "nothing delivered");
	iscsit_rx_free(&rx);
	free(st.p);
}

Test(iscsi_rx, bad_data_digest_is_reported_and_stream_continues)
{
	struct stream st = {0};
	struct iscsit_rx rx;
	struct rec r = {0};

	add_pdu(&st, ISCSI_OP_NOP_OUT, NULL, 0, 10, 1, false, true);
	st.p[50] ^= 0x80; /* a data byte */
	add_pdu(&st, ISCSI_OP_TEXT_REQ, NULL, 0, 6, 2, false, true);
	iscsit_rx_init(&rx);
	cr_assert_eq(feed(&st, &r, false, true, 5, false, &rx), RX_WOULD_BLOCK);
	cr_assert_eq(r.n, 2);
	cr_assert(r.dbad[0]);
	cr_assert(!r.dbad[1]);
	cr_assert(r.data_ok[1]);
	iscsit_rx_free(&rx);
	free(st.p);
}

Test(iscsi_rx, eof_inside_and_between_pdus)
{
	struct stream st = {0};
	struct iscsit_rx rx;
	struct rec r = {0};

	add_pdu(&st, ISCSI_OP_NOP_OUT, NULL, 0, 0, 1, false, false);
	add_pdu(&st, ISCSI_OP_TEXT_REQ, NULL, 0, 100, 2, false, false);
	st.len -= 30; /* truncated in the data of the second */
	iscsit_rx_init(&rx);
	cr_assert_eq(feed(&st, &r, false, false, 7, true, &rx), RX_EOF);
	cr_assert_str_eq(rx.why, "connection closed inside a PDU");
	cr_assert_eq(r.n, 1);
	iscsit_rx_free(&rx);

	memset(&r, 0, sizeof(r));
	st.len = 48; /* exactly one PDU */
	iscsit_rx_init(&rx);
	cr_assert_eq(feed(&st, &r, false, false, 7, true, &rx), RX_EOF);
	cr_assert_str_eq(rx.why, "connection closed");
	cr_assert_eq(r.n, 1);
	iscsit_rx_free(&rx);

	memset(&r, 0, sizeof(r));
	st.len = 20; /* truncated header then close */
	iscsit_rx_init(&rx);
	cr_assert_eq(feed(&st, &r, false, false, 1, true, &rx), RX_EOF);
	cr_assert_str_eq(rx.why, "connection closed inside a PDU");
	cr_assert_eq(r.n, 0);
	iscsit_rx_free(&rx);
	free(st.p);
}

Test(iscsi_rx, huge_segment_is_discarded_and_resynced)
{
	struct stream st = {0};
	struct iscsit_rx rx;
	struct rec r = {0};

	add_pdu(&st, ISCSI_OP_TEXT_REQ, NULL, 0, 3 << 20, 1, false, true);
	add_pdu(&st, ISCSI_OP_NOP_OUT, NULL, 0, 4, 2, false, true);
	iscsit_rx_init(&rx);
	rx.max_dsl = 8192;
	cr_assert_eq(feed(&st, &r, false, true, 65536, false, &rx), RX_WOULD_BLOCK);
	cr_assert_eq(r.n, 2);
	cr_assert(r.discard[0]);
	cr_assert(!r.dbad[0], "discarded data is still digested");
	cr_assert(!r.discard[1]);
	cr_assert(r.data_ok[1]);
	cr_assert(rx.scratch_cap <= 8193, "scratch never grew past the limit");
	iscsit_rx_free(&rx);
	free(st.p);
}

Test(iscsi_rx, budget_and_pause)
{
	struct stream st = {0};
	struct iscsit_rx rx;
	struct rec r = {0};
	struct src s;

	for (int i = 0; i < 4; i++)
		add_pdu(&st, ISCSI_OP_NOP_OUT, NULL, 0, 0, (uint8_t)i, false, false);
	s = (struct src){.p = st.p, .len = st.len, .chunk = 1 << 20};
	iscsit_rx_init(&rx);
	cr_assert_eq(iscsit_rx_run(&rx, src_recv, &s, &ops, &r, 1), RX_BUDGET);
	cr_assert_eq(r.n, 1);
	cr_assert(iscsit_rx_staged(&rx) > 0, "the rest was read ahead");
	r.pause_at = 2;
	cr_assert_eq(iscsit_rx_run(&rx, src_recv, &s, &ops, &r, 100), RX_PAUSED);
	cr_assert_eq(r.n, 2);
	cr_assert_eq(iscsit_rx_run(&rx, src_recv, &s, &ops, &r, 100), RX_WOULD_BLOCK);
	cr_assert_eq(r.n, 4);
	iscsit_rx_free(&rx);
	free(st.p);
}

Test(iscsi_rx, destination_must_match_segment_length)
{
	struct stream st = {0};
	struct iscsit_rx rx;
	struct rec r = {.bad_dst = true};

	add_pdu(&st, ISCSI_OP_SCSI_CMD, NULL, 0, 700, 2, false, false);
	iscsit_rx_init(&rx);
	cr_assert_eq(feed(&st, &r, false, false, 100, false, &rx), RX_ERROR);
	iscsit_rx_free(&rx);
	free(st.p);
}

Test(iscsi_rx, login_limit_without_negotiation)
{
	struct stream st = {0};
	struct iscsit_rx rx;
	struct rec r = {0};

	/* before anything is negotiated, scratch data is bounded by 8192 */
	add_pdu(&st, ISCSI_OP_LOGIN_REQ, NULL, 0, 8192, 1, false, false);
	add_pdu(&st, ISCSI_OP_LOGIN_REQ, NULL, 0, 8193, 2, false, false);
	iscsit_rx_init(&rx);
	cr_assert_eq(feed(&st, &r, false, false, 1000, false, &rx), RX_WOULD_BLOCK);
	cr_assert_eq(r.n, 2);
	cr_assert(!r.discard[0]);
	cr_assert(r.discard[1]);
	iscsit_rx_free(&rx);
	free(st.p);
}

/* ---------------------------------------------------------------- whole-PDU feed (iSER) */

/* Each sample PDU handed over whole, as an iSER SEND carries it (no digests, no padding):
 * the same callbacks see the same headers and data as the byte-stream path. */
Test(iscsi_rx, feed_whole_pdus_like_the_stream)
{
	uint8_t ahs[20] = {0};
	static const struct {
		uint8_t op;
		bool ahs;
		uint32_t dsl;
	} pdus[5] = {{ISCSI_OP_LOGIN_REQ, false, 13},
		     {ISCSI_OP_SCSI_CMD, true, 700},
		     {ISCSI_OP_NOP_OUT, false, 0},
		     {ISCSI_OP_DATA_OUT, false, 5000},
		     {ISCSI_OP_TEXT_REQ, false, 100}};
	struct iscsit_rx rx = {0};
	struct rec r = {0};

	iscsi_put16(ahs, 17);
	ahs[2] = 1;
	cr_assert_eq(iscsit_rx_init(&rx), 0);
	rx.max_dsl = 4096;
	for (int i = 0; i < 5; i++) {
		struct stream s = {0};
		unsigned al = pdus[i].ahs ? 20 : 0;

		add_pdu(&s, pdus[i].op, pdus[i].ahs ? ahs : NULL, al, pdus[i].dsl, (uint8_t)(i + 1),
			false, false);
		cr_assert_eq(iscsit_rx_feed(&rx, s.p, 48 + al + pdus[i].dsl, &ops, &r), RX_CB_OK,
			     "pdu %d: %s", i, rx.why ? rx.why : "");
		free(s.p);
	}
	check_sample(&r);
	cr_assert_eq(rx.pdus, 5);
	cr_assert(iscsit_rx_idle(&rx));
	iscsit_rx_free(&rx);
}

/* A SEND whose length disagrees with the PDU's header (too short, padded, or shorter than a
 * BHS) is fatal before any callback runs; on_pdu's pause passes through. */
Test(iscsi_rx, feed_refuses_length_mismatch_and_passes_pause)
{
	struct iscsit_rx rx = {0};
	struct rec r = {0};
	struct stream s = {0};

	cr_assert_eq(iscsit_rx_init(&rx), 0);
	add_pdu(&s, ISCSI_OP_TEXT_REQ, NULL, 0, 13, 5, false, false);
	cr_assert_eq(iscsit_rx_feed(&rx, s.p, 48 + 12, &ops, &r), RX_CB_FATAL);
	cr_assert_not_null(rx.why);
	cr_assert_eq(iscsit_rx_feed(&rx, s.p, 48 + 16, &ops, &r), RX_CB_FATAL);
	cr_assert_eq(iscsit_rx_feed(&rx, s.p, 47, &ops, &r), RX_CB_FATAL);
	cr_assert_eq(r.n, 0);
	r.pause_at = 1;
	cr_assert_eq(iscsit_rx_feed(&rx, s.p, 48 + 13, &ops, &r), RX_CB_PAUSE);
	cr_assert_eq(r.n, 1);
	cr_assert(r.data_ok[0]);
	r.bad_dst = true; /* owner bug: destination larger than the segment */
	free(s.p);
	s = (struct stream){0};
	add_pdu(&s, ISCSI_OP_SCSI_CMD, NULL, 0, 300, 2, false, false);
	cr_assert_eq(iscsit_rx_feed(&rx, s.p, 48 + 300, &ops, &r), RX_CB_FATAL);
	cr_assert_eq(r.n, 1);
	free(s.p);
	iscsit_rx_free(&rx);
}

/* A stream source that counts its receives and never blocks on its own: what a socket
 * holding everything at once looks like. */
struct counting_src {
	struct src s;
	unsigned calls;
};

static ssize_t counting_recv(void *arg, const struct iovec *iov, int cnt)
{
	struct counting_src *cs = arg;

	cs->calls++;
	cs->s.block_next = false;
	return src_recv(&cs->s, iov, cnt);
}

Test(iscsi_rx, short_receive_ends_the_run_without_asking_again)
{
	struct stream st = {0};
	struct iscsit_rx rx;
	struct rec r = {0};
	struct counting_src cs = {0};

	/* 32 commands without data, as an initiator at QD32 sends them: one receive holds all */
	for (int i = 0; i < 32; i++)
		add_pdu(&st, ISCSI_OP_NOP_OUT, NULL, 0, 0, (uint8_t)i, false, false);
	cs.s = (struct src){.p = st.p, .len = st.len, .chunk = 1 << 20};
	iscsit_rx_init(&rx);
	cr_assert_eq(iscsit_rx_run(&rx, counting_recv, &cs, &ops, &r, 1000), RX_WOULD_BLOCK);
	cr_assert_eq(r.n, 32, "every PDU of the one receive was handled");
	cr_assert_eq(cs.calls, 1, "no second receive after a short one (got %u)", cs.calls);

	iscsit_rx_free(&rx);
	free(st.p);

	/* More than one receive can take (BHS + stage): a full receive is followed by
	 * another, and the short one after it ends the run. */
	st = (struct stream){0};
	memset(&r, 0, sizeof(r));
	for (int i = 0; i < 400; i++)
		add_pdu(&st, ISCSI_OP_NOP_OUT, NULL, 0, 0, (uint8_t)i, false, false);
	cr_assert_gt(st.len, 48 + ISCSIT_RX_STAGE);
	cs = (struct counting_src){.s = {.p = st.p, .len = st.len, .chunk = 1 << 20}};
	iscsit_rx_init(&rx);
	cr_assert_eq(iscsit_rx_run(&rx, counting_recv, &cs, &ops, &r, 1000), RX_WOULD_BLOCK);
	cr_assert_eq(r.n, 400);
	cr_assert_eq(cs.calls, 2, "one full receive, one short (got %u)", cs.calls);
	iscsit_rx_free(&rx);
	free(st.p);
}

/* ---------------------------------------------------------------- batches across receives */

/* A socket that holds the stream up to `limit` (EAGAIN there), each receive filling the
 * iovecs as far as it can: what a burst cut anywhere by the network looks like. */
struct cut_src {
	const uint8_t *p;
	size_t len, pos, limit;
	unsigned calls;
	size_t in_place; /* bytes received straight into a destination over `big` */
	const uint8_t *big;
	size_t big_len;
};

static ssize_t cut_recv(void *arg, const struct iovec *iov, int cnt)
{
	struct cut_src *s = arg;
	size_t n = 0;

	s->calls++;
	if (s->pos == s->limit) {
		errno = EAGAIN;
		return -1;
	}
	for (int i = 0; i < cnt && s->pos < s->limit; i++) {
		size_t k = iov[i].iov_len;
		const uint8_t *b = iov[i].iov_base;

		if (k > s->limit - s->pos)
			k = s->limit - s->pos;
		memcpy(iov[i].iov_base, s->p + s->pos, k);
		if (s->big && b >= s->big && b < s->big + s->big_len)
			s->in_place += k;
		s->pos += k;
		n += k;
	}
	return (ssize_t)n;
}

static enum iscsit_rx_result run_to_block(struct iscsit_rx *rx, struct cut_src *s,
					  const struct iscsit_rx_ops *o, void *ctx)
{
	enum iscsit_rx_result res;

	do
		res = iscsit_rx_run(rx, cut_recv, s, o, ctx, 1000);
	while (res == RX_BUDGET);
	return res;
}

Test(iscsi_rx, batch_cut_at_every_byte_with_digests)
{
	struct stream st = {0};
	size_t ends[3];

	/* a command with immediate data (to its buffer), one without data, a text request
	 * (to scratch), with header and data digests: a QD burst as one receive sees it */
	add_pdu(&st, ISCSI_OP_SCSI_CMD, NULL, 0, 700, 2, true, true);
	ends[0] = st.len;
	add_pdu(&st, ISCSI_OP_NOP_OUT, NULL, 0, 0, 3, true, true);
	ends[1] = st.len;
	add_pdu(&st, ISCSI_OP_TEXT_REQ, NULL, 0, 101, 5, true, true);
	ends[2] = st.len;
	for (size_t cut = 1; cut < st.len; cut++) {
		struct iscsit_rx rx;
		struct rec r = {0};
		struct cut_src s = {.p = st.p, .len = st.len, .limit = cut};
		int whole = 0;

		cr_assert_eq(iscsit_rx_init(&rx), 0);
		rx.max_dsl = 4096;
		rx.hdigest_on = rx.ddigest_on = true;
		cr_assert_eq(run_to_block(&rx, &s, &ops, &r), RX_WOULD_BLOCK, "cut %zu", cut);
		for (int i = 0; i < 3; i++)
			whole += ends[i] <= cut;
		cr_assert_eq(r.n, whole, "cut %zu: %d PDUs handled, %d whole ones received", cut,
			     r.n, whole);
		cr_assert_eq(rx.bytes + iscsit_rx_staged(&rx), cut, "cut %zu: every byte kept",
			     cut);
		s.limit = st.len;
		cr_assert_eq(run_to_block(&rx, &s, &ops, &r), RX_WOULD_BLOCK, "cut %zu", cut);
		cr_assert_eq(r.n, 3, "cut %zu", cut);
		for (int i = 0; i < 3; i++) {
			cr_assert(r.data_ok[i], "cut %zu pdu %d data", cut, i);
			cr_assert(!r.dbad[i], "cut %zu pdu %d digest", cut, i);
		}
		cr_assert(iscsit_rx_idle(&rx));
		cr_assert_eq(rx.bytes, st.len);
		iscsit_rx_free(&rx);
	}
	free(st.p);
}

/* Destinations for the large-segment test: each command's data to its own big buffer. */
struct big_rec {
	uint8_t *buf;
	uint32_t cap;
	int n;
	bool data_ok;
};

static int big_header(void *ctx, struct iscsit_rx *rx)
{
	struct big_rec *b = ctx;

	if (rx->dsl) {
		struct iovec v = {b->buf, rx->dsl};

		cr_assert_leq(rx->dsl, b->cap);
		iscsit_rx_set_dst(rx, &v, 1);
	}
	return RX_CB_OK;
}

static int big_pdu(void *ctx, struct iscsit_rx *rx)
{
	struct big_rec *b = ctx;
	uint8_t seed = (uint8_t)bhs_itt(rx->bhs);

	b->n++;
	for (uint32_t k = 0; k < rx->dsl; k++)
		if (b->buf[k] != pattern(k, seed)) {
			b->data_ok = false;
			break;
		}
	return RX_CB_OK;
}

Test(iscsi_rx, large_segments_land_in_place_after_small_pdus)
{
	static const struct iscsit_rx_ops big_ops = {big_header, big_pdu};
	const uint32_t seg = 256 * 1024 + 3; /* padded, over any stage */
	struct stream st = {0};
	struct big_rec b = {.cap = seg, .data_ok = true};
	struct iscsit_rx rx;
	struct cut_src s = {0};

	/* small PDUs, then two large Data-Out segments back to back, all in the socket */
	for (int i = 0; i < 5; i++)
		add_pdu(&st, ISCSI_OP_NOP_OUT, NULL, 0, 0, (uint8_t)(10 + i), false, true);
	add_pdu(&st, ISCSI_OP_DATA_OUT, NULL, 0, seg, 7, false, true);
	add_pdu(&st, ISCSI_OP_DATA_OUT, NULL, 0, seg, 8, false, true);
	b.buf = malloc(seg);
	s = (struct cut_src){.p = st.p, .len = st.len, .limit = st.len, .big = b.buf,
			     .big_len = seg};
	cr_assert_eq(iscsit_rx_init(&rx), 0);
	rx.max_dsl = seg;
	rx.ddigest_on = true;
	cr_assert_eq(run_to_block(&rx, &s, &big_ops, &b), RX_WOULD_BLOCK);
	cr_assert_eq(b.n, 7);
	cr_assert(b.data_ok, "data placed intact");
	/* only what was read ahead with a preceding header may be copied from the stage: the
	 * rest of each large segment is received straight into its destination */
	cr_assert_geq(s.in_place, 2 * ((size_t)seg - ISCSIT_RX_STAGE),
		      "in place: %zu of %u", s.in_place, 2 * seg);
	/* one receive for the small PDUs and the start of the first segment, one for each
	 * segment's rest (with the next read-ahead): several PDUs per receive */
	cr_assert_leq(s.calls, 4, "receives: %u", s.calls);
	cr_assert_eq(rx.bytes, st.len);
	iscsit_rx_free(&rx);
	free(b.buf);
	free(st.p);
}
