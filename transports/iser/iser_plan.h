/* Data movement for one SCSI command on an iSER connection (RFC 7145 sections 7.3-7.4), decided
 * from the command PDU alone, before any verbs are posted:
 *   - write data = immediate data in the command's SEND, then unsolicited Data-Out PDUs in
 *     SENDs (InitialR2T=No and the F bit clear: up to FirstBurstLength; the iSCSI layer
 *     checks them as over TCP), then the rest by one RDMA READ from the initiator's Write
 *     STag/VA.  As ib_iser advertises it, the Write VA already points past
 *     the unsolicited part, so the READ lands at local offset imm + unsol.  No R2T is sent.
 *   - read data = RDMA WRITE to the Read STag/VA, then the SCSI Response in a SEND.
 * Anything inconsistent (missing STag, more data than the command carries, a transfer beyond
 * what we accept) is a protocol error: the caller drops the connection. */
#ifndef UTGT_ISER_PLAN_H
#define UTGT_ISER_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "transports/iser/iser_proto.h"
#include "transports/rdma/rdma.h"

struct iser_plan_lim {
	bool immediate_data, initial_r2t; /* negotiated */
	uint32_t first_burst;		  /* negotiated FirstBurstLength */
	uint32_t max_xfer;		  /* most bytes one command may move (STag length bound) */
};

struct iser_plan_in {
	bool read, write; /* BHS R/W bits */
	bool final;	  /* F bit: no unsolicited Data-Out follows the command */
	uint32_t edtl;	  /* Expected Data Transfer Length */
	uint32_t imm;	  /* data segment length of the command's SEND */
	const struct iser_hdr *h;
};

struct iser_plan {
	uint32_t edtl;
	uint32_t imm;	       /* write bytes already in the command SEND */
	uint32_t unsol;	       /* write bytes still to arrive as Data-Out SENDs */
	struct rdma_rseg rd;   /* RDMA READ source for the rest (len 0: none) */
	uint32_t rd_local_off; /* its offset in the command's buffer */
	struct rdma_rseg wr;   /* RDMA WRITE sink for Data-In (len 0: none) */
};

/* Returns 0, or -EPROTO / -EMSGSIZE / -EOPNOTSUPP with *why set to a message for the log. */
int iser_plan_cmd(const struct iser_plan_in *in, const struct iser_plan_lim *lim,
		  struct iser_plan *p, const char **why);

/* Bytes to RDMA WRITE when the command produced `produced` bytes (the residual is reported in
 * the SCSI Response by the iSCSI layer). */
static inline uint32_t iser_plan_datain_len(const struct iser_plan *p, uint64_t produced)
{
	return produced < p->wr.len ? (uint32_t)produced : p->wr.len;
}

#endif
