/* Output entries, whatever the transport: a PDU or a read's data is built as a struct
 * iscsit_txe and handed to the connection's transport in order (xp->queue), which gives it
 * back through iscsit_txe_done once it went out or was dropped.  StatSN is assigned when an
 * entry is built, so the order of StatSN on the wire is the queue order. */
#include <stdlib.h>
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

struct iscsit_txe *iscsit_txe_new(void)
{
	return calloc(1, sizeof(struct iscsit_txe));
}

void iscsit_txe_done(struct iscsit_conn *c, struct iscsit_txe *e)
{
	if (e->close_after)
		c->close_after_flush = true;
	if (e->sent)
		e->sent(e);
	free(e->owned);
	free(e);
}

void iscsit_tx_queue(struct iscsit_conn *c, struct iscsit_txe *e)
{
	if (c->state == CONN_CLOSING) {
		/* nobody will read it: run its completion now */
		e->close_after = false;
		iscsit_txe_done(c, e);
		return;
	}
	c->xp->queue(c, e);
}

static struct iscsit_txe *pdu_entry(const uint8_t *hdr, const void *data, uint32_t dlen, bool copy)
{
	struct iscsit_txe *e = iscsit_txe_new();

	if (!e)
		return NULL;
	e->kind = TXE_PDU;
	memcpy(e->hdr, hdr, ISCSI_BHS_LEN);
	if (dlen) {
		if (!copy) {
			e->data = data;
		} else if (dlen <= sizeof(e->inline_data)) {
			memcpy(e->inline_data, data, dlen);
			e->data = e->inline_data;
		} else {
			e->owned = malloc(dlen);
			if (!e->owned) {
				free(e);
				return NULL;
			}
			memcpy(e->owned, data, dlen);
			e->data = e->owned;
		}
		e->dlen = dlen;
	}
	return e;
}

int iscsit_tx_pdu(struct iscsit_conn *c, const uint8_t *hdr, const void *data, uint32_t dlen,
		  bool copy)
{
	struct iscsit_txe *e = pdu_entry(hdr, data, dlen, copy);

	if (!e)
		return -1;
	iscsit_tx_queue(c, e);
	return 0;
}

void iscsit_tx_pdu_then_close(struct iscsit_conn *c, const uint8_t *hdr, const char *why)
{
	struct iscsit_txe *e = pdu_entry(hdr, NULL, 0, false);

	if (!e) {
		iscsit_conn_close(c, why);
		return;
	}
	e->close_after = true;
	c->close_why = why;
	iscsit_tx_queue(c, e);
}
