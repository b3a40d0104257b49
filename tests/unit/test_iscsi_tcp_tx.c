/* The TCP transmit ring: headers, pads and digests laid out as iovecs; Data-In cut by the
 * initiator's MaxRecvDataSegmentLength and MaxBurstLength, F bits at sequence ends, status
 * and residual in the last PDU, StatSN reserved at queue time; partial writes; discard; lent
 * data-in. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transports/iscsi/iscsi_digest.h"
#include "transports/iscsi/iscsi_tcp.h"

struct txfix {
	struct iscsit_worker w;
	struct iscsit_session s;
	struct iscsit_conn c;
	struct iscsit_tcp tc;
};

static void fx_init(struct txfix *f, uint32_t mrdsl, uint32_t burst, bool hd, bool dd)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->s.lock, NULL);
	f->s.exp_cmd_sn = 100;
	f->s.queued_cmds = 32;
	f->s.p.max_xmit_dsl = mrdsl;
	f->s.p.max_burst = burst;
	f->s.p.header_digest = hd;
	f->s.p.data_digest = dd;
	f->c.w = &f->w;
	f->c.sess = &f->s;
	f->c.state = CONN_FFP;
	f->c.xp = &iscsit_tcp_xport;
	f->c.xp_priv = &f->tc;
	f->tc.fd = -1;
	f->tc.conn = &f->c;
	f->c.stat_sn = 50;
}

/* A PDU entry queued like iscsit_tx_pdu does, with a completion to count. */
static struct iscsit_txe *queue_pdu(struct iscsit_conn *c, const uint8_t *hdr, const void *data,
				    uint32_t dlen, void (*sent)(struct iscsit_txe *))
{
	struct iscsit_txe *e = iscsit_txe_new();

	cr_assert_not_null(e);
	e->kind = TXE_PDU;
	memcpy(e->hdr, hdr, 48);
	if (dlen) { /* a copy, as iscsit_tx_pdu makes: the caller may reuse its buffer */
		e->owned = malloc(dlen);
		memcpy(e->owned, data, dlen);
		e->data = e->owned;
	}
	e->dlen = dlen;
	e->sent = sent;
	iscsit_tx_queue(c, e);
	return e;
}

/* Flatten what build_iov would send. */
static size_t flatten(struct iscsit_conn *c, uint8_t *out, size_t max)
{
	struct iovec iov[ISCSIT_TX_SLOTS * 3];
	int n = iscsit_tcp_build_iov(c, iov, ISCSIT_TX_SLOTS * 3);
	size_t len = 0;

	for (int i = 0; i < n; i++) {
		cr_assert(len + iov[i].iov_len <= max);
		memcpy(out + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	return len;
}

static int sent_count;
static void count_sent(struct iscsit_txe *e)
{
	(void)e;
	sent_count++;
}

Test(iscsi_tcp_tx, pdu_with_pad_and_digests)
{
	struct txfix f;
	uint8_t hdr[48] = {0}, out[256];
	struct iscsit_txe *e;
	size_t len;

	fx_init(&f, 8192, 65536, true, true);
	hdr[0] = ISCSI_OP_NOP_IN;
	iscsi_put24(hdr + 5, 5);
	e = queue_pdu(&f.c, hdr, "hello", 5, count_sent);
	cr_assert_not_null(e);
	cr_assert(f.c.on_dirty, "queued output marks the connection for flushing");
	len = flatten(&f.c, out, sizeof(out));
	cr_assert_eq(len, 48 + 4 + 5 + 3 + 4);
	cr_assert_eq(iscsi_digest_get(out + 48), iscsi_crc32c(out, 48));
	cr_assert_eq(memcmp(out + 52, "hello\0\0\0", 8), 0);
	cr_assert_eq(iscsi_digest_get(out + 60), iscsi_crc32c(out + 52, 8));
	sent_count = 0;
	iscsit_tcp_consumed(&f.c, 30); /* a partial write */
	cr_assert_eq(sent_count, 0);
	len = flatten(&f.c, out, sizeof(out));
	cr_assert_eq(len, 64 - 30, "resumes where the socket stopped");
	iscsit_tcp_consumed(&f.c, len);
	cr_assert_eq(sent_count, 1);
	cr_assert_eq(flatten(&f.c, out, sizeof(out)), 0);
}

Test(iscsi_tcp_tx, login_pdus_never_carry_digests)
{
	struct txfix f;
	uint8_t hdr[48] = {0}, out[128];
	struct iscsit_txe *e = iscsit_txe_new();

	fx_init(&f, 8192, 65536, true, true);
	memcpy(e->hdr, hdr, 48);
	e->kind = TXE_PDU;
	e->nodigest = true;
	e->data = "ab";
	e->dlen = 2;
	iscsit_tx_queue(&f.c, e);
	cr_assert_eq(flatten(&f.c, out, sizeof(out)), 48 + 4);
	iscsit_tcp_discard(&f.c);
}

static struct iscsit_task *read_task(uint32_t len, uint8_t status, enum scsi_resid rk,
				     uint32_t resid)
{
	struct iscsit_task *t = calloc(1, sizeof(*t));
	uint8_t *buf = malloc(len);

	for (uint32_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 3);
	t->iov1.iov_base = buf;
	t->iov1.iov_len = len;
	t->iov = &t->iov1;
	t->niov = 1;
	t->buflen = len;
	t->din_len = len;
	t->itt = 0x77;
	t->st.status = status;
	t->st.resid_kind = rk;
	t->st.resid = resid;
	return t;
}

Test(iscsi_tcp_tx, datain_split_by_mrdsl_and_burst)
{
	struct txfix f;
	struct iscsit_task *t = read_task(40000, 0, SCSI_RESID_UNDER, 24);
	struct iscsit_txe *e = iscsit_txe_new();
	uint8_t *out = malloc(200000);
	size_t len, off = 0;
	uint32_t data_off = 0, sn = 0;

	/* MRDSL 8192, burst 16384: 8192+8192 (F) | 8192+8192 (F) | 7232 (F, S) */
	fx_init(&f, 8192, 16384, false, true);
	t->conn = &f.c;
	t->din_status = true;
	t->stat_sn = 49;
	e->kind = TXE_DATAIN;
	e->task = t;
	iscsit_tx_queue(&f.c, e);
	len = flatten(&f.c, out, 200000);
	while (off < len) {
		const uint8_t *h = out + off;
		uint32_t dl = bhs_dsl(h);
		bool last = data_off + dl == 40000;

		cr_assert_eq(bhs_opcode(h), ISCSI_OP_DATA_IN);
		cr_assert_eq(bhs_w36(h), sn++, "DataSN");
		cr_assert_eq(bhs_w40(h), data_off, "offset");
		cr_assert(dl <= 8192);
		cr_assert_eq(!!(h[1] & ISCSI_FLAG_FINAL), last || (data_off + dl) % 16384 == 0,
			     "F at the end of each MaxBurstLength sequence");
		cr_assert_eq(!!(h[1] & ISCSI_DATAIN_STATUS), last);
		if (last) {
			cr_assert_eq(h[1] & ISCSI_DATAIN_UNDER, ISCSI_DATAIN_UNDER);
			cr_assert_eq(bhs_w44(h), 24);
			cr_assert_eq(bhs_w24(h), 49, "the StatSN reserved at queue time");
		}
		cr_assert_eq(bhs_w28(h), 100);
		cr_assert_eq(memcmp(h + 48, (uint8_t *)t->iov1.iov_base + data_off, dl), 0,
			     "data straight from the buffer");
		cr_assert_eq(iscsi_digest_get(h + 48 + dl + iscsi_pad4(dl)),
			     iscsi_crc32c(h + 48, dl + iscsi_pad4(dl)));
		off += 48 + dl + iscsi_pad4(dl) + 4;
		data_off += dl;
	}
	cr_assert_eq(sn, 5);
	cr_assert_eq(data_off, 40000);
	iscsit_tcp_consumed(&f.c, len);
	free(out);
	free(t->iov1.iov_base);
	free(t);
}

Test(iscsi_tcp_tx, long_stream_refills_the_ring)
{
	struct txfix f;
	struct iscsit_task *t = read_task(1 << 20, 0, SCSI_RESID_NONE, 0);
	struct iscsit_txe *e = iscsit_txe_new();
	uint8_t *out = malloc(2 << 20);
	size_t total = 0, len;
	unsigned pdus = 0;

	fx_init(&f, 512, 1 << 20, false, false); /* 2048 PDUs, far more than the ring */
	t->conn = &f.c;
	e->kind = TXE_DATAIN;
	e->task = t;
	iscsit_tx_queue(&f.c, e);
	while ((len = flatten(&f.c, out, 2 << 20)) > 0) {
		pdus += (unsigned)(len / (48 + 512));
		total += len;
		iscsit_tcp_consumed(&f.c, len);
	}
	cr_assert_eq(pdus, 2048);
	cr_assert_eq(total, 2048 * (48 + 512));
	free(out);
	free(t->iov1.iov_base);
	free(t);
}

/* A READ sent in pieces from a ring: two pieces of 48 KiB from a 96 KiB ring, then the last
 * 20000 bytes with the status.  DataSN and offsets run on across pieces, a piece's end is
 * no sequence end (F only at MaxBurstLength and at the very end), the S bit only on the
 * last PDU, and each piece's data comes from its place in the ring. */
Test(iscsi_tcp_tx, datain_in_pieces_from_a_ring)
{
	struct txfix f;
	const uint32_t room = 96 * 1024, piece = room / 2, total = 2 * piece + 20000;
	struct iscsit_task *t = read_task(room, 0, SCSI_RESID_NONE, 0);
	uint8_t *out = malloc(400000);
	uint32_t data_off = 0, sn = 0, ends[3] = {piece, 2 * piece, 0};
	size_t len, off = 0;

	fx_init(&f, 16384, 65536, false, false);
	t->conn = &f.c;
	t->din_status = true;
	t->stat_sn = 49;
	t->din_len = total;
	/* the ring's second lap: the last part overwrites the first piece's place */
	for (int k = 0; k < 3; k++) {
		struct iscsit_txe *e = iscsit_txe_new();

		e->kind = TXE_DATAIN;
		e->task = t;
		e->din_end = ends[k];
		iscsit_tx_queue(&f.c, e);
	}
	len = flatten(&f.c, out, 400000);
	while (off < len) {
		const uint8_t *h = out + off;
		uint32_t dl = bhs_dsl(h);
		bool last = data_off + dl == total;

		cr_assert_eq(bhs_opcode(h), ISCSI_OP_DATA_IN);
		cr_assert_eq(bhs_w36(h), sn++, "DataSN");
		cr_assert_eq(bhs_w40(h), data_off, "offset");
		cr_assert(dl <= 16384);
		cr_assert(data_off / piece == (data_off + dl - 1) / piece, "no PDU across pieces");
		cr_assert_eq(!!(h[1] & ISCSI_FLAG_FINAL), last || (data_off + dl) % 65536 == 0,
			     "F at %u", data_off + dl);
		cr_assert_eq(!!(h[1] & ISCSI_DATAIN_STATUS), last, "S only at the end");
		cr_assert_eq(memcmp(h + 48, (uint8_t *)t->iov1.iov_base + data_off % room, dl), 0,
			     "data from its place in the ring");
		off += 48 + dl + iscsi_pad4(dl);
		data_off += dl;
	}
	cr_assert_eq(data_off, total);
	cr_assert_eq(sn, 3 + 3 + 2, "3 + 3 PDUs of 16 KiB, then 16384 + 3616");
	iscsit_tcp_consumed(&f.c, len);
	free(out);
	free(t->iov1.iov_base);
	free(t);
}

Test(iscsi_tcp_tx, discard_runs_every_completion_once)
{
	struct txfix f;
	static uint8_t out[ISCSIT_TX_SLOTS * 200];
	uint8_t hdr[48] = {0};

	fx_init(&f, 512, 65536, false, false);
	sent_count = 0;
	for (int i = 0; i < 100; i++) {
		queue_pdu(&f.c, hdr, out, 100, count_sent);
	}
	flatten(&f.c, out, sizeof(out)); /* some are in slots, some still queued */
	iscsit_tcp_consumed(&f.c, 148 * 3 + 20);
	cr_assert_eq(sent_count, 3);
	iscsit_tcp_discard(&f.c);
	cr_assert_eq(sent_count, 100);
	cr_assert_eq(flatten(&f.c, out, sizeof(out)), 0);
}

/* Backpressure by bytes (without it a NOP-Out flood from a client that never reads queues
 * ~1 GiB of echoes): over ISCSIT_TX_HIGH_BYTES of queued PDU data the connection is full
 * (input stops after the current PDU) until what is queued or in slots drops under the low
 * mark; a read's Data-In is not counted (its buffer is under the memory budget). */
Test(iscsi_tcp_tx, backlog_by_bytes)
{
	static struct txfix f;
	static uint8_t data[256 * 1024];
	uint8_t hdr[48] = {0x20};
	unsigned n = 0;

	fx_init(&f, 262144, 262144, false, false);
	while (!f.c.tx_full) {
		queue_pdu(&f.c, hdr, data, sizeof(data), NULL);
		n++;
		cr_assert_lt(n, 1000);
	}
	cr_assert_eq(n, ISCSIT_TX_HIGH_BYTES / sizeof(data) + 1, "full just past 8 MiB: %u", n);
	cr_assert(f.tc.tx_backlog);
	cr_assert_eq(f.c.rx_throttled, 1);
	/* slots taken but not sent still count */
	{
		struct iovec iov[64 * 3];

		iscsit_tcp_build_iov(&f.c, iov, 64 * 3);
	}
	iscsit_tcp_backlog_update(&f.c);
	cr_assert(f.c.tx_full, "PDUs in slots are still held");
	/* the initiator reads all but 7 of them (1.75 MiB left): under the low mark */
	iscsit_tcp_consumed(&f.c, (size_t)(n - 7) * (48 + sizeof(data)));
	cr_assert(iscsit_tcp_backlog_update(&f.c));
	cr_assert_not(f.c.tx_full);
	cr_assert_eq(f.tc.tx.qbytes, 7 * sizeof(data));
	iscsit_tcp_discard(&f.c);
	cr_assert_eq(f.tc.tx.qbytes, 0);
}

/* A round's answers go out in one sendmsg() while the socket takes them; when it fills, the
 * batch stops where the socket did (inside a header or a data segment), the connection waits
 * for EPOLLOUT, and the rest follows in order, each completion run once, after its last
 * byte. */
/* A non-blocking socket pair whose sending side holds little, so sends come back short. */
static void small_socketpair(int sv[2])
{
	int sz = 4096;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
}

Test(iscsi_tcp_tx, batch_cut_by_a_full_socket)
{
	static struct txfix f;
	static uint8_t big[300 * 1024 + 1], want[1 << 20], got[1 << 20];
	static uint8_t small[4096];
	uint8_t hdr[48] = {0};
	size_t want_len, got_len = 0;
	int sv[2], rounds = 0;

	small_socketpair(sv);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 1);
	for (size_t i = 0; i < sizeof(small); i++)
		small[i] = (uint8_t)(i * 13 + 5);
	fx_init(&f, 1 << 20, 1 << 20, true, true);
	f.tc.fd = sv[0];
	sent_count = 0;
	/* 40 READ-sized answers with a large segment in the middle, digests on */
	for (int i = 0; i < 40; i++) {
		hdr[0] = ISCSI_OP_DATA_IN;
		hdr[19] = (uint8_t)i;
		if (i == 20)
			queue_pdu(&f.c, hdr, big, sizeof(big), count_sent);
		else
			queue_pdu(&f.c, hdr, small, sizeof(small), count_sent);
	}
	want_len = flatten(&f.c, want, sizeof(want));
	cr_assert_gt(want_len, 40 * (48 + 4096));

	for (;;) {
		ssize_t r;

		cr_assert_eq(iscsit_tcp_flush(&f.c), 0);
		if (!f.tc.tx.blocked)
			break;
		rounds++;
		cr_assert_lt(sent_count, 40, "a blocked batch has answers left");
		/* the initiator reads what is there: the socket becomes writable again */
		while ((r = read(sv[1], got + got_len, sizeof(got) - got_len)) > 0)
			got_len += (size_t)r;
		cr_assert(r < 0 && errno == EAGAIN);
		cr_assert_lt(rounds, 100000);
	}
	cr_assert_gt(rounds, 1, "the socket filled up (%d times)", rounds);
	cr_assert_eq(sent_count, 40, "every answer completed once");
	for (ssize_t r; (r = read(sv[1], got + got_len, sizeof(got) - got_len)) > 0;)
		got_len += (size_t)r;
	cr_assert_eq(got_len, want_len);
	cr_assert_eq(memcmp(got, want, want_len), 0, "the byte stream is the batch, in order");
	cr_assert_eq(f.c.tx_bytes, want_len);
	cr_assert_eq(f.c.tx_pdus, 40);
	close(sv[0]);
	close(sv[1]);
}

/* A READ whose data the core lent (scsi_task.h "Lent data-in"): its Data-In carries the lent
 * bytes, not the task's buffer, through a socket that takes a little at a time, with data
 * digests computed over them; the entry completes once, after its last byte went out. */
Test(iscsi_tcp_tx, lent_datain_through_partial_sends)
{
	static struct txfix f;
	static uint8_t lent[65536], got[1 << 18];
	struct iscsit_task *t = read_task(sizeof(lent), 0, SCSI_RESID_NONE, 0);
	struct iscsit_txe *e = iscsit_txe_new();
	size_t got_len = 0, off = 0;
	uint32_t data_off = 0;
	int sv[2], rounds = 0;

	small_socketpair(sv);
	for (size_t i = 0; i < sizeof(lent); i++)
		lent[i] = (uint8_t)(i * 11 + 7);
	fx_init(&f, 8192, 1 << 20, false, true);
	f.tc.fd = sv[0];
	t->conn = &f.c;
	t->st.din_lent = lent;
	t->din_status = true;
	t->stat_sn = 49;
	e->kind = TXE_DATAIN;
	e->task = t;
	e->sent = count_sent;
	sent_count = 0;
	iscsit_tx_queue(&f.c, e);
	for (;;) {
		ssize_t r;

		cr_assert_eq(iscsit_tcp_flush(&f.c), 0);
		while ((r = read(sv[1], got + got_len, sizeof(got) - got_len)) > 0)
			got_len += (size_t)r;
		if (!f.tc.tx.blocked)
			break;
		cr_assert_eq(sent_count, 0, "completed before its last byte went out");
		cr_assert_lt(++rounds, 100000);
	}
	cr_assert_gt(rounds, 1, "the socket never filled up");
	cr_assert_eq(sent_count, 1);
	while (off < got_len) {
		const uint8_t *h = got + off;
		uint32_t dl = bhs_dsl(h);

		cr_assert_eq(bhs_opcode(h), ISCSI_OP_DATA_IN);
		cr_assert_eq(bhs_w40(h), data_off);
		cr_assert_eq(memcmp(h + 48, lent + data_off, dl), 0, "not the lent bytes at %u",
			     data_off);
		cr_assert_eq(iscsi_digest_get(h + 48 + dl + iscsi_pad4(dl)),
			     iscsi_crc32c(h + 48, dl + iscsi_pad4(dl)));
		off += 48 + dl + iscsi_pad4(dl) + 4;
		data_off += dl;
	}
	cr_assert_eq(off, got_len);
	cr_assert_eq(data_off, sizeof(lent));
	close(sv[0]);
	close(sv[1]);
	free(t->iov1.iov_base);
	free(t);
}
