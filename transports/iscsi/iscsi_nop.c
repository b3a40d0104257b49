/* NOP-Out / NOP-In (RFC 7143 11.18-11.19): answering the initiator's pings, and our own
 * NopInInterval pings whose silence past NopInTimeout drops a dead connection. */
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

int iscsit_nop_pdu(struct iscsit_conn *c, struct iscsit_rx *rx)
{
	const uint8_t *h = rx->bhs;
	uint32_t itt = bhs_itt(h), ttt = bhs_w20(h), cmd_sn = bhs_w24(h);
	bool imm = bhs_immediate(h);
	uint8_t hdr[ISCSI_BHS_LEN];
	struct iscsi_sn sn;

	if (ttt != ISCSI_RSVD_TAG) {
		/* the answer to one of our pings: it carries no CmdSN and gets no reply */
		if (itt != ISCSI_RSVD_TAG)
			iscsit_send_reject(c, h, ISCSI_REJECT_PROTOCOL);
		return RX_CB_OK;
	}
	if (itt == ISCSI_RSVD_TAG) {
		/* a one-way ping (must be immediate): nothing to answer */
		if (!imm)
			iscsit_send_reject(c, h, ISCSI_REJECT_PROTOCOL);
		return RX_CB_OK;
	}
	if (iscsit_cmdsn_check(c->sess, cmd_sn, imm, false) == CMDSN_DROP)
		return RX_CB_OK;
	iscsit_conn_sn(c, &sn, true);
	iscsi_bhs_nop_in(hdr, bhs_lun(h), itt, ISCSI_RSVD_TAG, &sn, rx->dsl);
	/* the ping data is echoed back */
	if (iscsit_tx_pdu(c, hdr, rx->dsl ? iscsit_rx_data(rx) : NULL, rx->dsl, true))
		return RX_CB_FATAL;
	return RX_CB_OK;
}

void iscsit_nop_ping(struct iscsit_conn *c)
{
	uint8_t hdr[ISCSI_BHS_LEN];
	struct iscsi_sn sn;

	if (c->next_ttt == ISCSI_RSVD_TAG)
		c->next_ttt = 1;
	c->nop_ttt = c->next_ttt++;
	c->nop_sent = iscsit_now(c->w);
	/* A ping does not consume a StatSN (RFC 7143 11.19.6). */
	iscsit_conn_sn(c, &sn, false);
	iscsi_bhs_nop_in(hdr, NULL, ISCSI_RSVD_TAG, c->nop_ttt, &sn, 0);
	iscsit_tx_pdu(c, hdr, NULL, 0, false);
}
