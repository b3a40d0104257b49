/* Output entries: every PDU goes to the connection's transport in order, copied or not as
 * asked; a closing connection completes entries itself; a close-after PDU marks the
 * connection once the transport is done with it. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

static struct iscsit_txe *taken[4];
static int ntaken, nsent;

static void take(struct iscsit_conn *c, struct iscsit_txe *e)
{
	(void)c;
	cr_assert_lt(ntaken, 4);
	taken[ntaken++] = e;
}

static void count_sent(struct iscsit_txe *e)
{
	(void)e;
	nsent++;
}

static const struct iscsit_xport xp = {.name = "test", .queue = take};

Test(iscsi_tx, the_transport_takes_every_entry_in_order)
{
	struct iscsit_conn c = {.xp = &xp, .state = CONN_FFP};
	uint8_t hdr[48] = {0};
	char big[600];

	memset(big, 'x', sizeof(big));
	hdr[0] = ISCSI_OP_NOP_IN;
	cr_assert_eq(iscsit_tx_pdu(&c, hdr, "abc", 3, true), 0);
	hdr[0] = ISCSI_OP_SCSI_RSP;
	cr_assert_eq(iscsit_tx_pdu(&c, hdr, big, sizeof(big), true), 0);
	hdr[0] = ISCSI_OP_R2T;
	cr_assert_eq(iscsit_tx_pdu(&c, hdr, big, 10, false), 0);
	cr_assert_eq(ntaken, 3);
	cr_assert_eq(bhs_opcode(taken[0]->hdr), ISCSI_OP_NOP_IN);
	cr_assert_eq(taken[0]->dlen, 3);
	cr_assert_eq(memcmp(taken[0]->data, "abc", 3), 0);
	cr_assert_eq(taken[0]->data, taken[0]->inline_data, "small data copied inline");
	cr_assert_eq(bhs_opcode(taken[1]->hdr), ISCSI_OP_SCSI_RSP);
	cr_assert_eq(taken[1]->data, taken[1]->owned, "large data copied to owned memory");
	cr_assert_eq(memcmp(taken[1]->data, big, sizeof(big)), 0);
	cr_assert_eq(taken[2]->data, big, "not copied when not asked");
	for (int i = 0; i < ntaken; i++)
		iscsit_txe_done(&c, taken[i]);
	cr_assert_not(c.close_after_flush);
}

Test(iscsi_tx, close_after_marks_the_connection_when_done)
{
	struct iscsit_conn c = {.xp = &xp, .state = CONN_FFP};
	uint8_t hdr[48] = {0};

	hdr[0] = ISCSI_OP_LOGOUT_RSP;
	iscsit_tx_pdu_then_close(&c, hdr, "logged out");
	cr_assert_eq(ntaken, 1);
	cr_assert(taken[0]->close_after);
	cr_assert_str_eq(c.close_why, "logged out");
	cr_assert_not(c.close_after_flush, "not before the transport sent it");
	taken[0]->sent = count_sent;
	iscsit_txe_done(&c, taken[0]);
	cr_assert(c.close_after_flush);
	cr_assert_eq(nsent, 1);
}

Test(iscsi_tx, a_closing_connection_completes_entries_itself)
{
	struct iscsit_conn c = {.xp = &xp, .state = CONN_CLOSING};
	struct iscsit_txe *e = iscsit_txe_new();

	e->sent = count_sent;
	e->close_after = true;
	iscsit_tx_queue(&c, e);
	cr_assert_eq(ntaken, 0, "never reaches the transport");
	cr_assert_eq(nsent, 1);
	cr_assert_not(c.close_after_flush, "already closing");
}
