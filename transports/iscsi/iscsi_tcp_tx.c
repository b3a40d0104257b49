/* TCP transmit: a FIFO of entries (prebuilt PDUs, or a read's Data-In stream) turned into a
 * ring of wire slots, written with one sendmsg() of header + data + trailer iovecs per slot.
 * Data is sent straight from the task's buffer, or from the store's memory the core lent the
 * READ; only headers, pads and digests are ours.
 *
 * StatSN is assigned when an entry is queued (a Data-In stream reserves the StatSN of its
 * status-carrying PDU then), so the wire order of StatSN is the queue order even though
 * Data-In headers are generated lazily. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "transports/iscsi/iscsi_digest.h"
#include "transports/iscsi/iscsi_tcp.h"

void iscsit_tcp_queue(struct iscsit_conn *c, struct iscsit_txe *e)
{
	struct iscsit_tx *tx = &iscsit_tcp_of(c)->tx;

	e->next = NULL;
	if (tx->tail)
		tx->tail->next = e;
	else
		tx->head = e;
	tx->tail = e;
	tx->nqueued++;
	if (e->kind == TXE_PDU)
		tx->qbytes += e->dlen;
	iscsit_tcp_backlog_update(c);
	iscsit_conn_mark_dirty(c);
}

bool iscsit_tcp_backlog_update(struct iscsit_conn *c)
{
	struct iscsit_tcp *tc = iscsit_tcp_of(c);
	struct iscsit_tx *tx = &tc->tx;

	if (!tc->tx_backlog &&
	    (tx->nqueued > ISCSIT_TX_HIGH || tx->qbytes > ISCSIT_TX_HIGH_BYTES)) {
		tc->tx_backlog = c->tx_full = true;
		c->rx_throttled++;
		return true;
	}
	if (tc->tx_backlog && tx->nqueued < ISCSIT_TX_LOW && tx->qbytes < ISCSIT_TX_LOW_BYTES) {
		tc->tx_backlog = c->tx_full = false;
		return true;
	}
	return false;
}

/* ---------------------------------------------------------------- slot generation */

static bool hdigest_on(const struct iscsit_conn *c)
{
	return c->state != CONN_LOGIN && c->state != CONN_LOGIN_WAIT && c->sess &&
	       c->sess->p.header_digest;
}

static bool ddigest_on(const struct iscsit_conn *c)
{
	return c->state != CONN_LOGIN && c->state != CONN_LOGIN_WAIT && c->sess &&
	       c->sess->p.data_digest;
}

/* Lay out one PDU in slot s: header [+ digest], data, pad [+ digest]. */
static void slot_fill(struct iscsit_conn *c, struct iscsit_tx_slot *s, const uint8_t *hdr,
		      const void *data, uint32_t dlen, bool nodigest)
{
	unsigned hlen = ISCSI_BHS_LEN, pad = iscsi_pad4(dlen), tl = 0;

	if (hdr != s->hdr)
		memcpy(s->hdr, hdr, ISCSI_BHS_LEN);
	if (!nodigest && hdigest_on(c)) {
		iscsi_digest_put(s->hdr + ISCSI_BHS_LEN, iscsi_crc32c(s->hdr, ISCSI_BHS_LEN));
		hlen += ISCSI_DIGEST_LEN;
	}
	s->iov[0].iov_base = s->hdr;
	s->iov[0].iov_len = hlen;
	s->iovcnt = 1;
	s->len = hlen;
	s->off = 0;
	if (dlen) {
		s->iov[1].iov_base = (void *)(uintptr_t)data;
		s->iov[1].iov_len = dlen;
		s->iovcnt = 2;
		memset(s->trailer, 0, pad);
		tl = pad;
		if (!nodigest && ddigest_on(c)) {
			struct iovec v = {(void *)(uintptr_t)data, dlen};

			iscsi_digest_put(s->trailer + pad, iscsi_crc32c_iov(&v, 1, pad));
			tl += ISCSI_DIGEST_LEN;
		}
		if (tl) {
			s->iov[2].iov_base = s->trailer;
			s->iov[2].iov_len = tl;
			s->iovcnt = 3;
		}
		s->len += dlen + tl;
	}
}

/* Next Data-In PDU of a read.  Returns true when it was the last one. */
static bool datain_next(struct iscsit_conn *c, struct iscsit_txe *e, struct iscsit_tx_slot *s)
{
	struct iscsit_task *t = e->task;
	struct iscsit_session *sess = c->sess;
	uint32_t end = e->din_end ? e->din_end : t->din_len;
	uint32_t left = end - t->din_off;
	uint32_t n = left < sess->p.max_xmit_dsl ? left : sess->p.max_xmit_dsl;
	uint32_t burst = sess->p.max_burst;
	uint32_t burst_end = (t->din_off / burst + 1) * burst;
	uint8_t flags = 0;
	bool last, final;
	struct iscsi_sn sn;

	/* A Data-In sequence ends at MaxBurstLength (F bit), as RFC 7143 13.13 bounds it; a
	 * piece of a READ sent in pieces ends where the next begins, which is no sequence end. */
	if (t->din_off + n > burst_end)
		n = burst_end - t->din_off;
	last = t->din_off + n == end;
	final = last && !e->din_end;
	if (final || t->din_off + n == burst_end)
		flags |= ISCSI_FLAG_FINAL;
	sn.stat_sn = t->stat_sn;
	sn.exp_cmd_sn = iscsit_session_exp_cmd_sn(sess);
	sn.max_cmd_sn = iscsit_session_max_cmd_sn(sess);
	if (final && t->din_status) {
		flags |= ISCSI_DATAIN_STATUS | ISCSI_FLAG_FINAL;
		if (t->st.resid_kind == SCSI_RESID_UNDER)
			flags |= ISCSI_DATAIN_UNDER;
		else if (t->st.resid_kind == SCSI_RESID_OVER)
			flags |= ISCSI_DATAIN_OVER;
	}
	iscsi_bhs_data_in(
	    s->hdr, t->lun_raw, t->itt, flags, t->st.status, t->din_sn++, t->din_off,
	    (flags & ISCSI_DATAIN_STATUS) && t->st.resid_kind != SCSI_RESID_NONE ? t->st.resid : 0,
	    &sn, n);
	/* a TCP buffer is one piece (tcp_buf_get); a READ sent in pieces uses it as a ring, in
	 * which no piece wraps; lent data is one piece of the store, held until the task is
	 * freed after its last byte went into the socket */
	slot_fill(c, s, s->hdr,
		  t->st.din_lent ? (const uint8_t *)t->st.din_lent + t->din_off
				 : (uint8_t *)t->iov[0].iov_base + t->din_off % t->buflen,
		  n, false);
	t->din_off += n;
	return last;
}

/* Turn queued entries into slots until the ring is full. */
static void fill_slots(struct iscsit_conn *c)
{
	struct iscsit_tx *tx = &iscsit_tcp_of(c)->tx;

	while (tx->head && tx->s_count < ISCSIT_TX_SLOTS) {
		struct iscsit_txe *e = tx->head;
		struct iscsit_tx_slot *s = &tx->slots[(tx->s_head + tx->s_count) % ISCSIT_TX_SLOTS];
		bool last = true;

		if (e->kind == TXE_PDU)
			slot_fill(c, s, e->hdr, e->data, e->dlen, e->nodigest);
		else
			last = datain_next(c, e, s);
		s->owner = e;
		s->last = last;
		tx->s_count++;
		c->tx_pdus++;
		if (last) {
			tx->head = e->next;
			if (!tx->head)
				tx->tail = NULL;
			tx->nqueued--;
		}
	}
}

int iscsit_tcp_build_iov(struct iscsit_conn *c, struct iovec *iov, int max)
{
	struct iscsit_tx *tx = &iscsit_tcp_of(c)->tx;
	int n = 0;

	fill_slots(c);
	for (unsigned i = 0; i < tx->s_count && n + 3 <= max; i++) {
		struct iscsit_tx_slot *s = &tx->slots[(tx->s_head + i) % ISCSIT_TX_SLOTS];
		size_t skip = s->off;

		for (int k = 0; k < s->iovcnt; k++) {
			if (skip >= s->iov[k].iov_len) {
				skip -= s->iov[k].iov_len;
				continue;
			}
			iov[n].iov_base = (uint8_t *)s->iov[k].iov_base + skip;
			iov[n].iov_len = s->iov[k].iov_len - skip;
			skip = 0;
			n++;
		}
	}
	return n;
}

void iscsit_tcp_consumed(struct iscsit_conn *c, size_t n)
{
	struct iscsit_tx *tx = &iscsit_tcp_of(c)->tx;

	c->tx_bytes += n;
	while (n && tx->s_count) {
		struct iscsit_tx_slot *s = &tx->slots[tx->s_head];
		size_t left = s->len - s->off;

		if (n < left) {
			s->off += n;
			return;
		}
		n -= left;
		s->off = s->len;
		tx->s_head = (tx->s_head + 1) % ISCSIT_TX_SLOTS;
		tx->s_count--;
		if (s->last) {
			if (s->owner->kind == TXE_PDU)
				tx->qbytes -= s->owner->dlen; /* counted until it is out */
			iscsit_txe_done(c, s->owner);
		}
	}
}

int iscsit_tcp_flush(struct iscsit_conn *c)
{
	struct iscsit_tcp *tc = iscsit_tcp_of(c);
	struct iovec iov[ISCSIT_TX_SLOTS * 3];

	for (;;) {
		int n = iscsit_tcp_build_iov(c, iov, (int)(sizeof(iov) / sizeof(iov[0])));
		struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
		ssize_t r;

		if (n == 0) {
			tc->tx.blocked = false;
			return 0;
		}
		r = sendmsg(tc->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				tc->tx.blocked = true;
				return 0;
			}
			return -1;
		}
		iscsit_tcp_consumed(c, (size_t)r);
	}
}

void iscsit_tcp_discard(struct iscsit_conn *c)
{
	struct iscsit_tx *tx = &iscsit_tcp_of(c)->tx;

	/* Slots first (they are older), each owner once at its last slot. */
	while (tx->s_count) {
		struct iscsit_tx_slot *s = &tx->slots[tx->s_head];

		tx->s_head = (tx->s_head + 1) % ISCSIT_TX_SLOTS;
		tx->s_count--;
		/* A stream not fully generated is still at the queue head: freed below. */
		if (s->last)
			iscsit_txe_done(c, s->owner);
	}
	while (tx->head) {
		struct iscsit_txe *e = tx->head;

		tx->head = e->next;
		iscsit_txe_done(c, e);
	}
	tx->tail = NULL;
	tx->nqueued = 0;
	tx->qbytes = 0;
}
