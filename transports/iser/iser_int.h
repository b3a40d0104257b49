/* Internals of the iSER front end shared by its files and unit tests: the verbs layer as iSER
 * uses it (one table, iser_io, so tests can run connections without an RDMA device, as SRP's
 * srpt_io does) and one iSER connection. */
#ifndef UTGT_ISER_INT_H
#define UTGT_ISER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "transports/iscsi/iscsi_int.h"
#include "transports/iser/iser_keys.h"
#include "transports/iser/iser_plan.h"
#include "transports/iser/iser_proto.h"
#include "transports/rdma/rdma_io.h"
#include "transports/rdma/rdma.h"

extern const struct rdma_io *iser_io;

/* Login PDUs carry at most 8 KiB of data (ib_iser's login buffers). */
#define ISER_LOGIN_DSL 8192

struct iser_conn_cfg {
	struct iser_key_cfg keys;
	uint32_t queue_depth; /* commands in flight per connection (the CmdSN window) */
	uint32_t unexpected;  /* extra receive buffers for NOP-Out, TMF, Logout, Text */
};
void iser_conn_cfg_default(struct iser_conn_cfg *c);

struct iser_conn;

/* What sits on top of a connection (the iSCSI glue, iser_iscsi.c). */
struct iser_upper {
	/* A connection was accepted: set up (ic->up_priv).  0, or -1: it is dropped (and
	 * goes down as any other). */
	int (*accept)(struct iser_conn *ic, const struct rdma_conn_req *req);
	/* A checked PDU: bhs points at the 48-byte BHS, data at dsl bytes of data segment (AHS,
	 * if any, between them).  The upper layer owns b until iser_conn_repost(). */
	void (*pdu)(struct iser_conn *ic, const struct iser_hdr *h, const uint8_t *bhs,
		    const uint8_t *data, uint32_t dsl, struct rdma_buf *b);
	/* Send room came back after an -EAGAIN. */
	void (*sq_space)(struct iser_conn *ic);
	/* The connection is down: nothing more can be posted; operations already posted still
	 * complete (flushed).  Once its own work is done, the upper layer calls
	 * iser_conn_release(ic). */
	void (*down)(struct iser_conn *ic);
};

/* rdma_srv context of the iSER service. */
struct iser_srv_ctx {
	struct iser_conn_cfg cfg;
	const struct iser_upper *up;
	void *up_ctx;
};

enum iser_conn_state {
	ISER_CONN_LOGIN,   /* accepted: only Login Requests */
	ISER_CONN_FFP,	   /* full feature phase */
	ISER_CONN_CLOSING, /* dropped or logging out: input is discarded */
};

struct iser_conn {
	struct rdma_conn *c;
	struct iser_srv_ctx *ctx;
	enum iser_conn_state state;
	struct iser_cm_req cm;
	uint32_t recv_dsl; /* the most data we accept in one SEND (login: 8 KiB; FFP: TRDSL) */
	uint32_t send_dsl; /* the most data we put in one SEND (login: 8 KiB; FFP: IRDSL) */
	uint64_t rx_pdus, tx_pdus;
	const char *why; /* why the connection was dropped, for the log (NULL: it was not) */
	char why_buf[128];
	void *up_priv; /* the upper layer's */
	/* the iSCSI connection it carries (iser_iscsi.c) */
	struct iscsit_conn *conn;
	struct iser_keys keys;
	struct iser_hdr cur;	/* iSER header of the PDU being fed */
	struct iser_held *held; /* PDUs received while input was paused, in order */
	unsigned nheld, held_first, held_cap;
	struct iscsit_txe *pend, *pend_tail; /* output waiting for send room, in order */
	struct iscsit_task **rd_wait;	     /* RDMA READs waiting for send room */
	unsigned nrd_wait, rd_cap;
	struct rdma_op close_op; /* the SEND after which the connection closes */
	bool close_e;		 /* ... is posted and not yet complete */
	bool down;		 /* the link is gone: nothing can be posted */
	bool in_close;		 /* the iSCSI connection is closing it right now */
};

/* A received SEND held back while the iSCSI connection's input is paused. */
struct iser_held {
	struct rdma_buf *b;
	struct iser_hdr h;
	uint32_t bhs_off, dsl, data_off;
};

/* The connection's rdma_conn_ops (request/established/recv/down). */
extern const struct rdma_conn_ops iser_conn_ops;

/* The RDMA connection parameters and REP private data iSER accepts with. */
void iser_conn_params(const struct iser_conn_cfg *cfg, struct rdma_conn_params *p,
		      uint8_t rep[ISER_CM_HDR_LEN]);
/* Send one PDU: iSER header, the 48-byte BHS, dsl bytes of data; op->done (op may be NULL)
 * once it completed.  0, -EMSGSIZE (data over the negotiated limit), -EAGAIN (no send buffer
 * or send queue full), -ENOTCONN. */
int iser_conn_send_pdu(struct iser_conn *ic, const uint8_t *bhs, const void *data, uint32_t dsl,
		       struct rdma_op *op);
/* Data-In (RFC 7145 7.3.5): RDMA WRITE `bytes` from loc to the initiator's Read STag/VA rem,
 * then the SCSI Response PDU (bhs + dsl bytes of sense) in a SEND in the same chain, so the
 * initiator sees the data before the status.  bytes 0: only the SEND.  op->done runs when the
 * chain completed.  0, -EINVAL (bytes beyond rem->len), -EMSGSIZE, -EAGAIN, -ENOTCONN. */
int iser_conn_write_rsp(struct iser_conn *ic, const struct rdma_rseg *rem,
			const struct rdma_seg *loc, unsigned nloc, uint32_t bytes,
			const uint8_t *bhs, const void *data, uint32_t dsl, struct rdma_op *op);
/* Data-Out (RFC 7145 7.3.6): RDMA READ `bytes` from the initiator's Write STag/VA rem into
 * loc; op->done when all of it arrived.  0, -EINVAL (0 bytes, or beyond rem->len), -EAGAIN,
 * -ENOTCONN. */
int iser_conn_read(struct iser_conn *ic, const struct rdma_rseg *rem, const struct rdma_seg *loc,
		   unsigned nloc, uint32_t bytes, struct rdma_op *op);
/* Give a received buffer back. */
void iser_conn_repost(struct iser_conn *ic, struct rdma_buf *b);
/* Login done: the negotiated lengths take effect. */
void iser_conn_enter_ffp(struct iser_conn *ic, const struct iser_keys *k);
/* Protocol error or end: log why, discard further input, disconnect. */
void iser_conn_drop(struct iser_conn *ic, const char *why);
/* The upper layer is done with a connection that went down: it is freed. */
void iser_conn_release(struct iser_conn *ic);

#endif
