/* One iSER connection over a fake verbs layer (iser_io replaced): the CM request accepted with
 * the iSER REP and buffer sizes, malformed private data refused, every received SEND checked
 * before the upper layer sees it (short, bad iSER flags, over the negotiated length, a PDU
 * before login, Login in FFP) with the connection dropped and later input discarded, PDUs sent
 * behind the iSER header within the negotiated length, and the way down. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#define ISER_FAKE_CHECK(c) cr_assert(c)
#include "iser_fake.h"

#define NBUF NSEND

/* what the upper layer saw */
static struct {
	unsigned npdu, ndown;
	uint8_t last_op;
	uint32_t last_dsl;
	struct iser_hdr last_h;
	char last_data[64];
} seen;

static void up_pdu(struct iser_conn *ic, const struct iser_hdr *h, const uint8_t *bhs,
		   const uint8_t *data, uint32_t dsl, struct rdma_buf *b)
{
	seen.npdu++;
	seen.last_op = bhs[0] & 0x3f;
	seen.last_dsl = dsl;
	seen.last_h = *h;
	memset(seen.last_data, 0, sizeof(seen.last_data));
	memcpy(seen.last_data, data,
	       dsl < sizeof(seen.last_data) - 1 ? dsl : sizeof(seen.last_data) - 1);
	iser_conn_repost(ic, b);
}

static void up_down(struct iser_conn *ic)
{
	seen.ndown++;
	iser_conn_release(ic); /* nothing of its own in flight */
}

static const struct iser_upper upper = {.pdu = up_pdu, .down = up_down};
static const struct rdma_io *saved_io;

static void setup(void)
{
	iser_fake_reset(&upper, NULL, NULL);
	memset(&seen, 0, sizeof(seen));
	/* the connection layer alone: a drop is only recorded, as if the CM event came later */
	f.down_on_disconnect = false;
	saved_io = iser_io;
	iser_io = &fake_io;
}

static void teardown(void)
{
	if (f.priv)
		iser_conn_ops.down(FC);
	iser_io = saved_io;
}

TestSuite(iser_conn, .init = setup, .fini = teardown);

static void connect_ib_iser(void)
{
	const uint8_t priv[56] = {ISER_CM_ZBVA_NOT_SUP | ISER_CM_SEND_W_INV_NOT_SUP};
	struct rdma_conn_req req = {.priv = priv, .priv_len = sizeof(priv)};

	iser_conn_ops.request(FC, &req);
	cr_assert(f.accepted);
	cr_assert_not_null(f.priv);
	iser_conn_ops.established(FC);
}

/* Deliver one SEND: iSER header flags, BHS opcode, dsl bytes of data ("text" repeated). */
static void deliver(uint8_t iser_flags, uint8_t op, uint32_t dsl, int32_t len_delta)
{
	memset(f.rdata[0], 0, ISER_HEADERS_LEN);
	f.rdata[0][0] = iser_flags;
	uint8_t *bhs = f.rdata[0] + ISER_HDR_LEN;
	bhs[0] = op;
	bhs[5] = dsl >> 16;
	bhs[6] = dsl >> 8;
	bhs[7] = dsl;
	for (uint32_t i = 0; i < dsl; i++)
		f.rdata[0][ISER_HEADERS_LEN + i] = "text"[i % 4];
	iser_conn_ops.recv(FC, &f.rbuf[0],
			   (uint32_t)((int32_t)(ISER_HEADERS_LEN + dsl) + len_delta));
}

Test(iser_conn, accepts_ib_iser_with_rep_and_buffer_sizes)
{
	connect_ib_iser();
	struct iser_conn *ic = f.priv;

	cr_assert_eq(f.rep[0], 0xc0, "REP: no ZBVA, no Send with Invalidate");
	cr_assert_eq(f.params.priv_len, ISER_CM_HDR_LEN);
	cr_assert_eq(f.params.recv_size, ISER_HEADERS_LEN + 8192);
	cr_assert_eq(f.params.recv_depth, 32 + 4);
	cr_assert_geq(f.params.send_size, ISER_HEADERS_LEN + 8192);
	cr_assert(ic->cm.zbva_not_sup && ic->cm.send_w_inv_not_sup);
	cr_assert_eq(ic->state, ISER_CONN_LOGIN);
	cr_assert_eq(ic->recv_dsl, 8192);
}

Test(iser_conn, bigger_trdsl_grows_receive_buffers)
{
	f.ctx.cfg.keys.trdsl = 65536;
	connect_ib_iser();
	cr_assert_eq(f.params.recv_size, ISER_HEADERS_LEN + 65536);
}

Test(iser_conn, truncated_private_data_is_refused)
{
	const uint8_t priv[2] = {0xc0, 0};
	struct rdma_conn_req req = {.priv = priv, .priv_len = sizeof(priv)};

	iser_conn_ops.request(FC, &req);
	cr_assert(f.rejected);
	cr_assert_not(f.accepted);
	cr_assert_null(f.priv);
}

Test(iser_conn, failed_accept_leaves_nothing_behind)
{
	struct rdma_conn_req req = {0};

	f.accept_rc = -ENOMEM;
	iser_conn_ops.request(FC, &req);
	cr_assert(f.accepted);
	cr_assert(f.rejected, "a failed accept is answered with a reject");
	cr_assert_null(f.priv);
}

Test(iser_conn, login_pdu_reaches_the_upper_layer)
{
	connect_ib_iser();
	deliver(0x10, ISCSI_OP_LOGIN_REQ | 0x40, 12, 0);
	cr_assert_eq(seen.npdu, 1);
	cr_assert_eq(seen.last_op, ISCSI_OP_LOGIN_REQ);
	cr_assert_eq(seen.last_dsl, 12);
	cr_assert_str_eq(seen.last_data, "texttexttext");
	cr_assert_eq(f.reposted, 1);
	cr_assert_not(f.disconnected);
}

Test(iser_conn, pdu_before_login_drops_the_connection)
{
	connect_ib_iser();
	deliver(0x10, ISCSI_OP_SCSI_CMD, 0, 0);
	cr_assert_eq(seen.npdu, 0);
	cr_assert(f.disconnected);
	cr_assert_eq(f.reposted, 1, "the buffer goes back");
	cr_assert_str_eq(((struct iser_conn *)f.priv)->why, "PDU before login");
	/* later input is discarded */
	deliver(0x10, ISCSI_OP_LOGIN_REQ, 0, 0);
	cr_assert_eq(seen.npdu, 0);
	cr_assert_eq(f.reposted, 2);
}

Test(iser_conn, short_send_drops)
{
	connect_ib_iser();
	deliver(0x10, ISCSI_OP_LOGIN_REQ, 0, -1);
	cr_assert(f.disconnected);
	cr_assert_eq(seen.npdu, 0);
	cr_assert(strstr(((struct iser_conn *)f.priv)->why, "shorter"));
}

Test(iser_conn, bad_iser_flags_drop)
{
	connect_ib_iser();
	deliver(0x13, ISCSI_OP_LOGIN_REQ, 0, 0);
	cr_assert(f.disconnected);
	deliver(0x20, ISCSI_OP_LOGIN_REQ, 0, 0); /* Hello: already closing, discarded */
	cr_assert_eq(seen.npdu, 0);
}

Test(iser_conn, hello_drops)
{
	connect_ib_iser();
	deliver(0x20, ISCSI_OP_LOGIN_REQ, 0, 0);
	cr_assert(f.disconnected);
	cr_assert(strstr(((struct iser_conn *)f.priv)->why, "opcode"));
}

Test(iser_conn, login_data_over_8k_drops)
{
	connect_ib_iser();
	deliver(0x10, ISCSI_OP_LOGIN_REQ, 8193, 0);
	cr_assert(f.disconnected);
	cr_assert(strstr(((struct iser_conn *)f.priv)->why, "longer than negotiated"));
}

Test(iser_conn, ffp_limits_follow_the_negotiated_lengths)
{
	struct iser_keys k;

	f.ctx.cfg.keys.trdsl = 65536;
	connect_ib_iser();
	struct iser_conn *ic = f.priv;
	iser_keys_init(&k, &f.ctx.cfg.keys);
	k.trdsl = 16384;
	k.irdsl = 1024;
	iser_conn_enter_ffp(ic, &k);
	cr_assert_eq(ic->state, ISER_CONN_FFP);
	deliver(0x18, ISCSI_OP_SCSI_CMD, 16384, 0); /* immediate data, Write STag valid */
	cr_assert_eq(seen.npdu, 1);
	cr_assert(seen.last_h.wsv);
	cr_assert_not(f.disconnected);
	deliver(0x10, ISCSI_OP_DATA_OUT, 16385, 0);
	cr_assert(f.disconnected, "STag-less data beyond TargetRecvDataSegmentLength");
	cr_assert_eq(seen.npdu, 1);
}

Test(iser_conn, login_in_ffp_and_target_opcodes_drop)
{
	struct iser_keys k;

	connect_ib_iser();
	iser_keys_init(&k, &f.ctx.cfg.keys);
	iser_conn_enter_ffp(f.priv, &k);
	deliver(0x10, ISCSI_OP_NOP_OUT | 0x40, 0, 0);
	cr_assert_eq(seen.npdu, 1);
	deliver(0x10, ISCSI_OP_LOGIN_REQ, 0, 0);
	cr_assert(f.disconnected);
	iser_conn_ops.down(FC); /* a fresh connection for the second case */
	setup();
	connect_ib_iser();
	iser_conn_enter_ffp(f.priv, &k);
	deliver(0x10, ISCSI_OP_SCSI_RSP, 0, 0);
	cr_assert(f.disconnected);
	cr_assert_eq(seen.npdu, 0);
}

Test(iser_conn, send_pdu_puts_the_iser_header_first)
{
	uint8_t bhs[48] = {ISCSI_OP_LOGIN_RSP, 0x87};

	connect_ib_iser();
	cr_assert_eq(iser_conn_send_pdu(f.priv, bhs, "TargetRecvDataSegmentLength=8192", 33, NULL),
		     0);
	cr_assert_eq(f.nsent, 1);
	cr_assert_eq(f.sent_len[0], ISER_HEADERS_LEN + 33);
	cr_assert_eq(f.sent[0][0], 0x10);
	for (int i = 1; i < ISER_HDR_LEN; i++)
		cr_assert_eq(f.sent[0][i], 0, "byte %d", i);
	cr_assert_eq(memcmp(f.sent[0] + ISER_HDR_LEN, bhs, 48), 0);
	cr_assert_str_eq((char *)f.sent[0] + ISER_HEADERS_LEN, "TargetRecvDataSegmentLength=8192");
}

Test(iser_conn, send_pdu_limits_and_errors)
{
	static uint8_t big[9000];
	uint8_t bhs[48] = {ISCSI_OP_NOP_IN};
	struct iser_keys k;

	connect_ib_iser();
	cr_assert_eq(iser_conn_send_pdu(f.priv, bhs, big, 8193, NULL), -EMSGSIZE);
	iser_keys_init(&k, &f.ctx.cfg.keys);
	k.irdsl = 512;
	iser_conn_enter_ffp(f.priv, &k);
	cr_assert_eq(iser_conn_send_pdu(f.priv, bhs, big, 513, NULL), -EMSGSIZE);
	cr_assert_eq(iser_conn_send_pdu(f.priv, bhs, big, 512, NULL), 0);
	f.send_rc = -EAGAIN;
	cr_assert_eq(iser_conn_send_pdu(f.priv, bhs, NULL, 0, NULL), -EAGAIN);
	for (unsigned i = 0; i < NBUF; i++)
		cr_assert_not(f.sbusy[i], "a failed send gives its buffer back");
	f.send_rc = 0;
	iser_conn_drop(f.priv, "test");
	cr_assert_eq(iser_conn_send_pdu(f.priv, bhs, NULL, 0, NULL), -ENOTCONN);
	cr_assert_eq(f.nsent, 1);
}

Test(iser_conn, down_tells_the_upper_layer_and_releases)
{
	connect_ib_iser();
	iser_conn_ops.down(FC);
	cr_assert_eq(seen.ndown, 1);
	cr_assert(f.released);
	cr_assert_null(f.priv);
}

/* Data-In: one RDMA WRITE to the Read STag chained with the SCSI Response SEND (iSER header
 * first); nothing written beyond the STag; a response without data is a plain SEND; errors
 * give the send buffer back. */
Test(iser_conn, write_rsp_chains_the_data_before_the_response)
{
	static uint8_t buf[65536];
	uint8_t bhs[48] = {ISCSI_OP_SCSI_RSP, 0x80};
	struct rdma_rseg rem = {.addr = 0x7f0000001000ull, .rkey = 0x1234, .len = 65536};
	struct rdma_seg loc = {.addr = buf, .len = sizeof(buf), .lkey = 9};
	struct rdma_op op = {0};

	connect_ib_iser();
	cr_assert_eq(iser_conn_write_rsp(f.priv, &rem, &loc, 1, 4096, bhs, NULL, 0, &op), 0);
	cr_assert_eq(f.nwrite, 1);
	cr_assert_eq(f.rem.addr, rem.addr);
	cr_assert_eq(f.rem.rkey, 0x1234);
	cr_assert_eq(f.nrem, 1);
	cr_assert_eq(f.bytes, 4096);
	cr_assert_eq(f.op, &op);
	cr_assert_eq(f.nsent, 1);
	cr_assert_eq(f.sent_len[0], ISER_HEADERS_LEN);
	cr_assert_eq(f.sent[0][0], 0x10);
	cr_assert_eq(memcmp(f.sent[0] + ISER_HDR_LEN, bhs, 48), 0);

	/* status only (no data produced): a SEND with the sense, no WRITE */
	cr_assert_eq(iser_conn_write_rsp(f.priv, &rem, &loc, 1, 0, bhs, "\x00\x12sense", 7, &op),
		     0);
	cr_assert_eq(f.nwrite, 1);
	cr_assert_eq(f.nsent, 2);
	cr_assert_eq(f.sent_len[1], ISER_HEADERS_LEN + 7);
	cr_assert_eq(memcmp(f.sent[1] + ISER_HEADERS_LEN, "\x00\x12sense", 7), 0);

	cr_assert_eq(iser_conn_write_rsp(f.priv, &rem, &loc, 1, 65537, bhs, NULL, 0, &op), -EINVAL);
	f.rdma_rc = -EAGAIN;
	cr_assert_eq(iser_conn_write_rsp(f.priv, &rem, &loc, 1, 512, bhs, NULL, 0, &op), -EAGAIN);
	for (unsigned i = 0; i < NBUF; i++)
		cr_assert_not(f.sbusy[i], "a failed chain gives its send buffer back");
	f.rdma_rc = 0;
	iser_conn_drop(f.priv, "test");
	cr_assert_eq(iser_conn_write_rsp(f.priv, &rem, &loc, 1, 512, bhs, NULL, 0, &op), -ENOTCONN);
	cr_assert_eq(f.nwrite, 1);
	cr_assert_eq(f.nsent, 2);
}

/* Data-Out: one RDMA READ from the Write STag, never beyond it, never empty. */
Test(iser_conn, read_pulls_from_the_write_stag)
{
	static uint8_t buf[8192];
	struct rdma_rseg rem = {.addr = 0x7f0000002000ull, .rkey = 0x55, .len = 8192};
	struct rdma_seg loc = {.addr = buf, .len = sizeof(buf), .lkey = 9};
	struct rdma_op op = {0};

	connect_ib_iser();
	cr_assert_eq(iser_conn_read(f.priv, &rem, &loc, 1, 8192, &op), 0);
	cr_assert_eq(f.nread, 1);
	cr_assert_eq(f.rem.rkey, 0x55);
	cr_assert_eq(f.bytes, 8192);
	cr_assert_eq(f.op, &op);
	cr_assert_eq(iser_conn_read(f.priv, &rem, &loc, 1, 8193, &op), -EINVAL);
	cr_assert_eq(iser_conn_read(f.priv, &rem, &loc, 1, 0, &op), -EINVAL);
	f.rdma_rc = -EAGAIN;
	cr_assert_eq(iser_conn_read(f.priv, &rem, &loc, 1, 512, &op), -EAGAIN);
	f.rdma_rc = 0;
	iser_conn_drop(f.priv, "test");
	cr_assert_eq(iser_conn_read(f.priv, &rem, &loc, 1, 512, &op), -ENOTCONN);
	cr_assert_eq(f.nread, 1);
	cr_assert_eq(f.nsent, 0);
}
