/* iSCSI over TCP, one of the connection transports (struct iscsit_xport): a non-blocking
 * socket on the worker's loop, the stream receive state machine, and the transmit ring that
 * turns queued entries into PDUs (headers, pads, digests, Data-In cut by the initiator's
 * MaxRecvDataSegmentLength and MaxBurstLength) written with one sendmsg() per round.
 * Shared by iscsi_tcp*.c and their unit tests. */
#ifndef UTGT_ISCSI_TCP_H
#define UTGT_ISCSI_TCP_H

#include "transports/iscsi/iscsi_int.h"

#define ISCSIT_TX_SLOTS 64
/* Backpressure (docs/security.md): over this many queued entries, or this many bytes of
 * queued PDU data (NOP-In echoes, text answers: copies outside the memory budget), the
 * connection stops reading until the initiator has read its answers down to the low marks. */
#define ISCSIT_TX_HIGH	     1024
#define ISCSIT_TX_LOW	     256
#define ISCSIT_TX_HIGH_BYTES (8u << 20)
#define ISCSIT_TX_LOW_BYTES  (2u << 20)

struct iscsit_tx_slot {
	uint8_t hdr[ISCSI_BHS_LEN + ISCSI_DIGEST_LEN];
	uint8_t trailer[8]; /* pad + data digest */
	struct iovec iov[3];
	int iovcnt;
	size_t len, off;
	struct iscsit_txe *owner;
	bool last; /* last slot of its owner */
};

struct iscsit_tx {
	struct iscsit_txe *head, *tail; /* not yet turned into slots */
	unsigned nqueued;
	uint64_t qbytes; /* data bytes of PDUs queued or in slots, until sent (a read's
			  * data is under the memory budget instead) */
	struct iscsit_tx_slot slots[ISCSIT_TX_SLOTS];
	unsigned s_head, s_count; /* ring of slots being written */
	bool blocked;		  /* last send hit EAGAIN: waiting for EPOLLOUT */
};

/* A TCP connection's transport state (c->xp_priv). */
struct iscsit_tcp {
	struct iscsit_conn *conn;
	int fd;
	struct ut_watch watch; /* the socket, on the worker's loop */
	struct iscsit_tx tx;
	bool rx_off;	 /* EPOLLIN withdrawn (closing, paused, or tx backlog) */
	bool want_out;	 /* EPOLLOUT registered */
	bool tx_backlog; /* too much output queued: stop reading until it drains */
};

/* A TCP task's transport state (iscsit_task_xp): its buffer is one piece of the worker's
 * buffer cache (iscsi_buf.c), of this size class. */
struct iscsit_tcp_task {
	size_t bufcap;
};

static inline struct iscsit_tcp *iscsit_tcp_of(const struct iscsit_conn *c)
{
	return c->xp_priv;
}

/* iscsi_tcp_tx.c: the transmit ring. */
void iscsit_tcp_queue(struct iscsit_conn *c, struct iscsit_txe *e);
/* Set or clear the backlog state from the queue's size (true when it changed). */
bool iscsit_tcp_backlog_update(struct iscsit_conn *c);
/* Write as much as the socket takes.  Returns 0, or -1 when the connection failed. */
int iscsit_tcp_flush(struct iscsit_conn *c);
/* Drop everything queued (connection closing): iscsit_txe_done on each entry. */
void iscsit_tcp_discard(struct iscsit_conn *c);
/* Pure part, for tests: turn queued entries into slots and fill iov (returns count). */
int iscsit_tcp_build_iov(struct iscsit_conn *c, struct iovec *iov, int max);
void iscsit_tcp_consumed(struct iscsit_conn *c, size_t n);

#endif
