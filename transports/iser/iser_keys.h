/* The iSER login keys (RFC 7145 section 6): RDMAExtensions, InitiatorRecvDataSegmentLength,
 * TargetRecvDataSegmentLength and MaxOutstandingUnexpectedPDUs.  The iSCSI negotiation engine
 * (transports/iscsi/iscsi_params.c) treats them as a TCP target must (RDMAExtensions AND'ed to
 * No, the others Irrelevant); on an iSER connection the login glue hands these four keys to
 * this module instead and the rest to the engine.  Pure: no verbs, no sessions. */
#ifndef UTGT_ISER_KEYS_H
#define UTGT_ISER_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "transports/iscsi/iscsi_params.h"

#define ISER_RDSL_DEFAULT 8192 /* RFC 7145 default of both RecvDataSegmentLengths */
#define ISER_RDSL_MIN	  512
#define ISER_RDSL_MAX	  0xffffff /* 2^24 - 1 */

struct iser_key_cfg {
	uint32_t trdsl;		 /* data bytes one of our receive buffers holds after the headers */
	uint32_t max_unexpected; /* receive buffers kept for NOP-Out/TMF/Logout/Text, declared */
};
void iser_key_cfg_default(struct iser_key_cfg *c);

enum iser_rdma_ext { ISER_EXT_UNSEEN, ISER_EXT_OFFERED, ISER_EXT_YES, ISER_EXT_NO };

struct iser_keys {
	const struct iser_key_cfg *cfg;
	enum iser_rdma_ext ext;
	uint32_t irdsl;	   /* initiator's receive limit: the most data we put in one SEND */
	uint32_t mou_init; /* initiator's MaxOutstandingUnexpectedPDUs, 0 = no limit */
	bool seen_irdsl, seen_trdsl, seen_mou, declared;
};
void iser_keys_init(struct iser_keys *k, const struct iser_key_cfg *cfg);

/* Results of iser_keys_take. */
#define ISER_KEY_NOT_MINE 0    /* not an iSER key: give it to the iSCSI engine */
#define ISER_KEY_TAKEN	  1    /* handled; any answer was appended to out */
#define ISER_KEY_FAIL	  (-1) /* the login fails with *status */

/* One key=value of a login request on an iSER connection. */
int iser_keys_take(struct iser_keys *k, const char *key, const char *val, struct iscsit_text *out,
		   uint16_t *status);

/* Before the login leaves the operational stage: declare TargetRecvDataSegmentLength and
 * MaxOutstandingUnexpectedPDUs once, offer RDMAExtensions=Yes if the initiator never sent it.
 * Returns 1 when an offer is pending (do not transit yet), 0 when iSER is agreed, -1 (with
 * *status) when the initiator said No: iSER has no TCP fallback on an RDMA connection. */
int iser_keys_finish(struct iser_keys *k, struct iscsit_text *out, uint16_t *status);

#endif
