/* libFuzzer: the iSCSI receive state machine and the BHS parsers.  The input's first byte
 * chooses digests, the data limit and the read chunk size; the rest is the byte stream.  SCSI
 * Command and Data-Out PDUs get their data placed in a "task buffer" as the target does. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "transports/iscsi/iscsi_rx.h"

struct src {
	const uint8_t *p;
	size_t len, pos, chunk;
};

static ssize_t src_recv(void *arg, const struct iovec *iov, int cnt)
{
	struct src *s = arg;
	size_t n = 0, want = s->chunk;

	if (s->pos == s->len) {
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
	return (ssize_t)n;
}

static uint8_t task_buf[65536];

static int on_header(void *ctx, struct iscsit_rx *rx)
{
	uint8_t op = bhs_opcode(rx->bhs);

	(void)ctx;
	if ((op == ISCSI_OP_SCSI_CMD || op == ISCSI_OP_DATA_OUT) && rx->dsl &&
	    rx->dsl <= sizeof(task_buf)) {
		/* split the placement over two iovecs like a task buffer at an offset would */
		struct iovec v[2] = {{task_buf, rx->dsl / 2},
				     {task_buf + rx->dsl / 2, rx->dsl - rx->dsl / 2}};

		iscsit_rx_set_dst(rx, v, 2);
	}
	return RX_CB_OK;
}

static int on_pdu(void *ctx, struct iscsit_rx *rx)
{
	uint8_t cdb[ISCSI_CDB_MAX];
	struct iscsi_scsi_cmd cmd;
	struct iscsi_login_req lr;

	(void)ctx;
	switch (bhs_opcode(rx->bhs)) {
	case ISCSI_OP_SCSI_CMD:
		if (iscsi_parse_scsi_cmd(rx->bhs, rx->ahs, rx->ahs_len, cdb, sizeof(cdb), &cmd) &&
		    cmd.cdb_len > ISCSI_CDB_MAX)
			__builtin_trap();
		break;
	case ISCSI_OP_LOGIN_REQ:
		iscsi_parse_login_req(rx->bhs, &lr);
		break;
	default:
		break;
	}
	if (rx->to_scratch && rx->dsl > rx->scratch_cap)
		__builtin_trap();
	return (rx->bhs[2] & 0x3f) == 0x2a ? RX_CB_PAUSE : RX_CB_OK;
}

static const struct iscsit_rx_ops ops = {on_header, on_pdu};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct iscsit_rx rx;
	struct src s;

	if (size < 1)
		return 0;
	if (iscsit_rx_init(&rx))
		return 0;
	rx.hdigest_on = data[0] & 1;
	rx.ddigest_on = data[0] & 2;
	rx.max_dsl = (data[0] & 4) ? 512 : 0;
	s.p = data + 1;
	s.len = size - 1;
	s.pos = 0;
	s.chunk = 1 + (size_t)(data[0] >> 3) * 37;
	for (int guard = 0; guard < 100000; guard++) {
		enum iscsit_rx_result r = iscsit_rx_run(&rx, src_recv, &s, &ops, NULL, 8);

		if (r == RX_ERROR || r == RX_EOF)
			break;
		if (r == RX_WOULD_BLOCK && s.pos == s.len)
			break;
	}
	iscsit_rx_free(&rx);
	return 0;
}
