/* Logout (RFC 7143 11.14-11.15): close the session or this connection once the commands in
 * the SCSI core have answered; connection recovery (reason 2) needs ERL 2, which we do not
 * offer. */
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

static void send_logout_rsp(struct iscsit_conn *c, uint32_t itt, uint8_t response, bool close)
{
	uint8_t hdr[ISCSI_BHS_LEN];
	struct iscsi_sn sn;

	iscsit_conn_sn(c, &sn, true);
	iscsi_bhs_logout_rsp(hdr, itt, response, 0, 0, &sn);
	if (close)
		iscsit_tx_pdu_then_close(c, hdr, "logged out");
	else
		iscsit_tx_pdu(c, hdr, NULL, 0, false);
}

void iscsit_logout_maybe_answer(struct iscsit_conn *c)
{
	if (c->state != CONN_LOGOUT || c->nexec || c->ntmf)
		return;
	send_logout_rsp(c, c->logout_itt, ISCSI_LOGOUT_RSP_OK, true);
	/* answered: any later completion must not answer again */
	c->state = CONN_FFP;
	c->logout_itt = ISCSI_RSVD_TAG;
	iscsit_conn_pause(c);
}

int iscsit_logout_pdu(struct iscsit_conn *c, struct iscsit_rx *rx)
{
	const uint8_t *h = rx->bhs;
	uint8_t reason = h[1] & 0x7f;
	uint32_t itt = bhs_itt(h), cmd_sn = bhs_w24(h);
	uint16_t cid = iscsi_get16(h + 20);

	if (iscsit_cmdsn_check(c->sess, cmd_sn, bhs_immediate(h), false) == CMDSN_DROP)
		return RX_CB_OK;
	if (reason == ISCSI_LOGOUT_RECOVERY) {
		send_logout_rsp(c, itt, ISCSI_LOGOUT_RSP_NO_RECOVERY, false);
		return RX_CB_OK;
	}
	if (reason == ISCSI_LOGOUT_CONN && cid != c->cid) {
		/* one connection per session: no other CID to close */
		send_logout_rsp(c, itt, ISCSI_LOGOUT_RSP_NO_CID, false);
		return RX_CB_OK;
	}
	if (reason != ISCSI_LOGOUT_SESSION && reason != ISCSI_LOGOUT_CONN) {
		iscsit_send_reject(c, h, ISCSI_REJECT_INVALID_FIELD);
		return RX_CB_OK;
	}
	/* Commands still collecting data will get no more: drop them; those in the core
	 * finish and answer first, then the Logout Response goes out and we close. */
	iscsit_conn_drop_tasks(c);
	c->state = CONN_LOGOUT;
	c->logout_itt = itt;
	c->logout_reason = reason;
	iscsit_conn_pause(c);
	iscsit_logout_maybe_answer(c);
	return RX_CB_PAUSE;
}
