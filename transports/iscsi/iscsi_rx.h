/* The receive side of one iSCSI connection as a resumable state machine:
 *   BHS -> AHS -> header digest -> data segment -> pad -> data digest
 * It never blocks: it consumes whatever the byte source has and returns, keeping its place.
 * Between the header and the data it asks its owner where the data should go, so that SCSI
 * data lands straight in the command's buffer; everything else lands in a scratch buffer
 * bounded by the negotiated MaxRecvDataSegmentLength.
 *
 * Reads go through a small staging buffer: each recv asks for [rest of current field] +
 * [staging], so one system call brings in several small PDUs, while a large data segment is
 * read directly into its destination (only the part that was already staged is copied). */
#ifndef UTGT_ISCSI_RX_H
#define UTGT_ISCSI_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "transports/iscsi/iscsi_pdu.h"

#define ISCSIT_RX_STAGE	  16384
#define ISCSIT_RX_DST_MAX 4

enum iscsit_rx_state {
	RX_BHS,
	RX_AHS,
	RX_HDIGEST,
	RX_DATA,
	RX_PAD,
	RX_DDIGEST,
};

struct iscsit_rx;

/* Return values of the callbacks. */
enum {
	RX_CB_OK = 0,
	RX_CB_PAUSE = 1,  /* stop after this PDU; the owner calls iscsit_rx_run() again later */
	RX_CB_FATAL = -1, /* close the connection */
};

struct iscsit_rx_ops {
	/* The header (BHS, AHS, header digest) is in and verified.  Set the data destination
	 * with iscsit_rx_set_dst(), or leave it: the data then goes to the scratch buffer
	 * (when it fits max_dsl) or is discarded (rx->discard). */
	int (*on_header)(void *ctx, struct iscsit_rx *rx);
	/* The whole PDU is in.  rx->ddigest_bad tells whether the data digest failed. */
	int (*on_pdu)(void *ctx, struct iscsit_rx *rx);
};

/* Where the bytes come from: a socket (readv) in the daemon, a buffer in tests.  Returns the
 * number of bytes placed, 0 at end of stream, -1 with errno (EAGAIN: nothing now).  As with a
 * stream socket, fewer bytes than asked for mean the source had no more at that moment:
 * iscsit_rx_run then parses what it holds and returns RX_WOULD_BLOCK without asking again. */
typedef ssize_t (*iscsit_recv_fn)(void *src, const struct iovec *iov, int iovcnt);

struct iscsit_rx {
	enum iscsit_rx_state state;
	size_t got; /* bytes of the current field received so far */

	uint8_t bhs[ISCSI_BHS_LEN];
	uint8_t ahs[ISCSI_AHS_MAX];
	uint8_t hdigest[ISCSI_DIGEST_LEN];
	uint8_t ddigest[ISCSI_DIGEST_LEN];
	uint8_t pad[4];
	unsigned ahs_len;
	uint32_t dsl;
	unsigned pad_len;

	/* negotiated; the owner flips them when login completes */
	bool hdigest_on, ddigest_on;
	uint32_t max_dsl; /* limit for scratch-bound data; 0 = 8192 (login default) */

	/* data destination for the current PDU */
	struct iovec dst[ISCSIT_RX_DST_MAX];
	int dst_cnt;
	int dst_idx;
	size_t dst_off;
	bool discard;	 /* data read and digested but thrown away */
	bool to_scratch; /* data went to scratch (valid in on_pdu) */
	uint32_t crc;	 /* running data digest */
	bool ddigest_bad;

	uint8_t *scratch;
	size_t scratch_cap;

	/* read-ahead */
	uint8_t *stage;
	size_t stage_off, stage_len;

	/* counters */
	uint64_t bytes, pdus;
	int err;	 /* errno of the last failed recv */
	const char *why; /* what went wrong, for the log, when RX_ERROR/RX_EOF */
	uint8_t sink[1024];
};

enum iscsit_rx_result {
	RX_WOULD_BLOCK, /* source empty: wait for readability */
	RX_BUDGET,	/* processed the budget of PDUs: call again */
	RX_PAUSED,	/* a callback asked to pause */
	RX_EOF,		/* orderly end of stream (clean only at a PDU boundary) */
	RX_ERROR,	/* recv error, header digest mismatch, or a callback said fatal */
};

int iscsit_rx_init(struct iscsit_rx *rx);
void iscsit_rx_free(struct iscsit_rx *rx);
/* Run until the source would block, `budget` PDUs were handled, or a callback pauses. */
enum iscsit_rx_result iscsit_rx_run(struct iscsit_rx *rx, iscsit_recv_fn recv, void *src,
				    const struct iscsit_rx_ops *ops, void *ctx, unsigned budget);
/* Bytes already read ahead and not yet consumed (the owner must run again without waiting for
 * the socket when this is non-zero). */
static inline size_t iscsit_rx_staged(const struct iscsit_rx *rx)
{
	return rx->stage_len;
}
/* At a PDU boundary, with nothing partially received? */
static inline bool iscsit_rx_idle(const struct iscsit_rx *rx)
{
	return rx->state == RX_BHS && rx->got == 0;
}

/* One whole PDU from a message transport (iSER): BHS + AHS + data segment, no digests or
 * padding, len exactly that.  Runs on_header, places the data where it asked (or in scratch,
 * or discards it, as the socket path does), then on_pdu.  Returns the callbacks' verdict;
 * a PDU whose length disagrees with its header is RX_CB_FATAL with rx->why set. */
int iscsit_rx_feed(struct iscsit_rx *rx, const uint8_t *pdu, size_t len,
		   const struct iscsit_rx_ops *ops, void *ctx);

/* From on_header: the data segment goes to these buffers (total must equal rx->dsl). */
void iscsit_rx_set_dst(struct iscsit_rx *rx, const struct iovec *iov, int cnt);
/* The scratch data of the current PDU (valid in on_pdu when to_scratch). */
static inline uint8_t *iscsit_rx_data(struct iscsit_rx *rx)
{
	return rx->scratch;
}

#endif
