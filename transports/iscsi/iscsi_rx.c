/* Resumable PDU receive state machine (see iscsi_rx.h). */
#include "transports/iscsi/iscsi_rx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transports/iscsi/iscsi_digest.h"

#define LOGIN_DSL 8192 /* MaxRecvDataSegmentLength before anything was negotiated */

int iscsit_rx_init(struct iscsit_rx *rx)
{
	memset(rx, 0, sizeof(*rx));
	rx->stage = malloc(ISCSIT_RX_STAGE);
	return rx->stage ? 0 : -1;
}

void iscsit_rx_free(struct iscsit_rx *rx)
{
	free(rx->stage);
	free(rx->scratch);
	rx->stage = NULL;
	rx->scratch = NULL;
}

void iscsit_rx_set_dst(struct iscsit_rx *rx, const struct iovec *iov, int cnt)
{
	rx->dst_cnt = 0;
	for (int i = 0; i < cnt && rx->dst_cnt < ISCSIT_RX_DST_MAX; i++)
		if (iov[i].iov_len)
			rx->dst[rx->dst_cnt++] = iov[i];
}

static bool scratch_reserve(struct iscsit_rx *rx, size_t need)
{
	uint8_t *p;

	if (need <= rx->scratch_cap)
		return true;
	p = realloc(rx->scratch, need);
	if (!p)
		return false;
	rx->scratch = p;
	rx->scratch_cap = need;
	return true;
}

/* The header is complete: ask the owner where the data goes. */
static int header_done(struct iscsit_rx *rx, const struct iscsit_rx_ops *ops, void *ctx)
{
	uint32_t limit = rx->max_dsl ? rx->max_dsl : LOGIN_DSL;
	int rc;

	rx->dst_cnt = 0;
	rx->dst_idx = 0;
	rx->dst_off = 0;
	rx->discard = false;
	rx->to_scratch = false;
	rx->ddigest_bad = false;
	rx->crc = ISCSI_CRC32C_INIT;
	rc = ops->on_header(ctx, rx);
	if (rc < 0)
		return rc;
	if (rx->dsl && !rx->dst_cnt && !rx->discard) {
		/* +1 so text data can always be NUL-terminated in place */
		if (rx->dsl <= limit && scratch_reserve(rx, (size_t)rx->dsl + 1)) {
			rx->dst[0].iov_base = rx->scratch;
			rx->dst[0].iov_len = rx->dsl;
			rx->dst_cnt = 1;
			rx->to_scratch = true;
		} else {
			rx->discard = true;
		}
	}
	if (rx->dst_cnt && !rx->discard) {
		size_t total = 0;

		for (int i = 0; i < rx->dst_cnt; i++)
			total += rx->dst[i].iov_len;
		if (total != rx->dsl)
			return -1; /* owner bug: refuse rather than overrun */
	}
	return 0;
}

/* Where the next bytes go, and how many the current field still wants. */
static uint8_t *region(struct iscsit_rx *rx, size_t *need)
{
	switch (rx->state) {
	case RX_BHS:
		*need = ISCSI_BHS_LEN - rx->got;
		return rx->bhs + rx->got;
	case RX_AHS:
		*need = rx->ahs_len - rx->got;
		return rx->ahs + rx->got;
	case RX_HDIGEST:
		*need = ISCSI_DIGEST_LEN - rx->got;
		return rx->hdigest + rx->got;
	case RX_DATA:
		if (rx->discard) {
			size_t left = rx->dsl - rx->got;

			*need = left < sizeof(rx->sink) ? left : sizeof(rx->sink);
			return rx->sink;
		}
		*need = rx->dst[rx->dst_idx].iov_len - rx->dst_off;
		return (uint8_t *)rx->dst[rx->dst_idx].iov_base + rx->dst_off;
	case RX_PAD:
		*need = rx->pad_len - rx->got;
		return rx->pad + rx->got;
	case RX_DDIGEST:
		*need = ISCSI_DIGEST_LEN - rx->got;
		return rx->ddigest + rx->got;
	}
	*need = 0;
	return NULL;
}

enum step {
	STEP_CONTINUE,
	STEP_PDU_DONE,
	STEP_ERROR,
};

/* Account n bytes placed at p; move to the next field when the current one is complete. */
static enum step advance(struct iscsit_rx *rx, const uint8_t *p, size_t n,
			 const struct iscsit_rx_ops *ops, void *ctx)
{
	rx->bytes += n;
	switch (rx->state) {
	case RX_DATA:
		if (rx->ddigest_on)
			rx->crc = iscsi_crc32c_update(rx->crc, p, n);
		rx->got += n;
		if (!rx->discard) {
			rx->dst_off += n;
			if (rx->dst_off == rx->dst[rx->dst_idx].iov_len) {
				rx->dst_idx++;
				rx->dst_off = 0;
			}
		}
		if (rx->got < rx->dsl)
			return STEP_CONTINUE;
		rx->got = 0;
		if (rx->pad_len) {
			rx->state = RX_PAD;
			return STEP_CONTINUE;
		}
		goto data_done;
	case RX_PAD:
		if (rx->ddigest_on)
			rx->crc = iscsi_crc32c_update(rx->crc, p, n);
		rx->got += n;
		if (rx->got < rx->pad_len)
			return STEP_CONTINUE;
		rx->got = 0;
		goto data_done;
	case RX_DDIGEST:
		rx->got += n;
		if (rx->got < ISCSI_DIGEST_LEN)
			return STEP_CONTINUE;
		rx->got = 0;
		rx->ddigest_bad = iscsi_digest_get(rx->ddigest) != iscsi_crc32c_final(rx->crc);
		return STEP_PDU_DONE;
	default:
		break;
	}

	/* header fields */
	rx->got += n;
	switch (rx->state) {
	case RX_BHS:
		if (rx->got < ISCSI_BHS_LEN)
			return STEP_CONTINUE;
		rx->got = 0;
		rx->ahs_len = bhs_ahs_len(rx->bhs);
		rx->dsl = bhs_dsl(rx->bhs);
		rx->pad_len = iscsi_pad4(rx->dsl);
		if (rx->ahs_len) {
			rx->state = RX_AHS;
			return STEP_CONTINUE;
		}
		break;
	case RX_AHS:
		if (rx->got < rx->ahs_len)
			return STEP_CONTINUE;
		rx->got = 0;
		break;
	case RX_HDIGEST:
		if (rx->got < ISCSI_DIGEST_LEN)
			return STEP_CONTINUE;
		rx->got = 0;
		{
			uint32_t crc =
			    iscsi_crc32c_update(ISCSI_CRC32C_INIT, rx->bhs, ISCSI_BHS_LEN);

			crc = iscsi_crc32c_final(iscsi_crc32c_update(crc, rx->ahs, rx->ahs_len));
			if (crc != iscsi_digest_get(rx->hdigest)) {
				rx->why = "header digest mismatch";
				return STEP_ERROR;
			}
		}
		goto header_complete;
	default:
		break;
	}
	/* end of BHS or AHS */
	if (rx->hdigest_on) {
		rx->state = RX_HDIGEST;
		return STEP_CONTINUE;
	}
header_complete:
	if (header_done(rx, ops, ctx) < 0) {
		if (!rx->why)
			rx->why = "rejected header";
		return STEP_ERROR;
	}
	if (rx->dsl) {
		rx->state = RX_DATA;
		return STEP_CONTINUE;
	}
	return STEP_PDU_DONE;

data_done:
	if (rx->ddigest_on) {
		rx->state = RX_DDIGEST;
		return STEP_CONTINUE;
	}
	return STEP_PDU_DONE;
}

enum iscsit_rx_result iscsit_rx_run(struct iscsit_rx *rx, iscsit_recv_fn recv, void *src,
				    const struct iscsit_rx_ops *ops, void *ctx, unsigned budget)
{
	unsigned done = 0;
	bool drained = false; /* a receive of this run came back short: the source is empty */

	rx->why = NULL;
	for (;;) {
		size_t need, n;
		uint8_t *p = region(rx, &need);
		enum step st;

		if (!rx->stage_len && drained) {
			/* Asking again would only return EAGAIN: one system call per wake-up
			 * saved.  Bytes that arrive meanwhile keep the socket readable for the
			 * next wait (level-triggered). */
			return RX_WOULD_BLOCK;
		}
		if (rx->stage_len) {
			n = need < rx->stage_len ? need : rx->stage_len;
			memcpy(p, rx->stage + rx->stage_off, n);
			rx->stage_off += n;
			rx->stage_len -= n;
			if (!rx->stage_len)
				rx->stage_off = 0;
		} else {
			struct iovec iov[2] = {{p, need}, {rx->stage, ISCSIT_RX_STAGE}};
			ssize_t r = recv(src, iov, 2);

			if (r < 0) {
				if (errno == EAGAIN || errno == EWOULDBLOCK)
					return RX_WOULD_BLOCK;
				if (errno == EINTR)
					continue;
				rx->err = errno;
				rx->why = "receive error";
				return RX_ERROR;
			}
			if (r == 0) {
				rx->why = iscsit_rx_idle(rx) ? "connection closed"
							     : "connection closed inside a PDU";
				return RX_EOF;
			}
			drained = (size_t)r < need + ISCSIT_RX_STAGE;
			n = (size_t)r < need ? (size_t)r : need;
			rx->stage_off = 0;
			rx->stage_len = (size_t)r - n;
		}
		st = advance(rx, p, n, ops, ctx);
		if (st == STEP_ERROR)
			return RX_ERROR;
		if (st == STEP_PDU_DONE) {
			int rc;

			rx->pdus++;
			rx->state = RX_BHS;
			rx->got = 0;
			rc = ops->on_pdu(ctx, rx);
			if (rc < 0) {
				if (!rx->why)
					rx->why = "protocol error";
				return RX_ERROR;
			}
			if (rc == RX_CB_PAUSE)
				return RX_PAUSED;
			if (++done >= budget)
				return RX_BUDGET;
		}
	}
}

int iscsit_rx_feed(struct iscsit_rx *rx, const uint8_t *pdu, size_t len,
		   const struct iscsit_rx_ops *ops, void *ctx)
{
	size_t off;
	int rc;

	rx->why = NULL;
	if (len < ISCSI_BHS_LEN) {
		rx->why = "PDU shorter than a BHS";
		return RX_CB_FATAL;
	}
	memcpy(rx->bhs, pdu, ISCSI_BHS_LEN);
	rx->ahs_len = bhs_ahs_len(rx->bhs);
	rx->dsl = bhs_dsl(rx->bhs);
	rx->pad_len = 0;
	if (len != (size_t)ISCSI_BHS_LEN + rx->ahs_len + rx->dsl) {
		rx->why = "PDU length disagrees with its header";
		return RX_CB_FATAL;
	}
	memcpy(rx->ahs, pdu + ISCSI_BHS_LEN, rx->ahs_len);
	off = ISCSI_BHS_LEN + rx->ahs_len;
	rx->state = RX_BHS;
	rx->got = 0;
	if (header_done(rx, ops, ctx) < 0) {
		if (!rx->why)
			rx->why = "rejected header";
		return RX_CB_FATAL;
	}
	/* Place the data segment where on_header (or the scratch rule) said. */
	if (!rx->discard) {
		for (int i = 0; i < rx->dst_cnt; i++) {
			memcpy(rx->dst[i].iov_base, pdu + off, rx->dst[i].iov_len);
			off += rx->dst[i].iov_len;
		}
	}
	rx->bytes += len;
	rx->pdus++;
	rc = ops->on_pdu(ctx, rx);
	if (rc < 0 && !rx->why)
		rx->why = "protocol error";
	return rc < 0 ? RX_CB_FATAL : rc;
}
