/* iSER as a connection transport of the iSCSI target (iser_iscsi.c) and its listener
 * (iser_listen.c).  Shared by transports/iser/ and its unit tests. */
#ifndef UTGT_ISER_ISCSI_H
#define UTGT_ISER_ISCSI_H

#include <sys/uio.h>

#include "transports/iser/iser_int.h"

/* The most one command moves over iSER, and the pool chunk its buffers are made of: a
 * buffer is at most ISER_MAX_SEGS pieces.  VPD B0 announces the limit (scsi_nexus). */
#define ISER_MAX_XFER	(1u << 20)
#define ISER_POOL_CHUNK (64u << 10)
#define ISER_MAX_SEGS	(ISER_MAX_XFER / ISER_POOL_CHUNK)

/* An iSCSI task's iSER state (iscsit_task_xp). */
struct iser_task {
	struct iser_plan plan;		     /* STags and what moves how, from the command PDU */
	struct rdma_seg segs[ISER_MAX_SEGS]; /* its buffer: registered pool chunks */
	struct iovec iov[ISER_MAX_SEGS];     /* the same, for the SCSI core */
	int nsegs;
	uint32_t din;	   /* Data-In bytes RDMA-written before the response */
	uint32_t read_len; /* bytes of the RDMA READ of write data */
	struct rdma_op read_op;
	struct rdma_op rsp_op;	/* RDMA WRITE + response SEND */
	struct iscsit_txe *rsp; /* the response that rsp_op completes */
};

/* The registered segments of [off, off + len) of t's buffer into out (ISER_MAX_SEGS room). */
int iser_task_segs(const struct iser_task *it, const struct iscsit_task *t, uint32_t off,
		   uint32_t len, struct rdma_seg *out);

/* iser_listen.c: what every iSER connection is sized for, from the targets that allow iSER
 * (the largest QueuedCommands, TargetRecvDataSegmentLength, InitiatorRecvDataSegmentLength). */
void iser_listen_conn_cfg(const struct iscsit_ctx *ctx, struct iser_conn_cfg *cfg);

extern const struct iscsit_xport iser_xport;
extern const struct iser_upper iser_iscsi_upper;

#endif
