/* The iSER login keys (RFC 7145 section 6): RDMAExtensions, InitiatorRecvDataSegmentLength,
 * TargetRecvDataSegmentLength and MaxOutstandingUnexpectedPDUs.  The iSCSI negotiation engine
 * (transports/iscsi/iscsi_params.c) treats them as a TCP target must (RDMAExtensions AND'ed to
 * No, the others Irrelevant); on an iSER connection the login glue hands these four keys to
 * this module instead and the rest to the engine.  Pure: no verbs, no sessions.
 *
 * What Linux's iscsid sends on an iSER iface, instead of MaxRecvDataSegmentLength:
 * InitiatorRecvDataSegmentLength=<its receive size>, TargetRecvDataSegmentLength=<the most it
 * wants to send>, RDMAExtensions=Yes.  Both lengths are negotiated with the Minimum function
 * (not declarations), so each gets an answer. */
#ifndef UTGT_ISER_KEYS_H
#define UTGT_ISER_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "transports/iscsi/iscsi_params.h"

#define ISER_RDSL_DEFAULT 8192 /* RFC 7145 default of both RecvDataSegmentLengths */
#define ISER_RDSL_MIN	  512
#define ISER_RDSL_MAX	  0xffffff /* 2^24 - 1 */

struct iser_key_cfg {
	/* Data bytes one of our receive buffers holds after the headers; at least the 8192
	 * default (the transport refuses less), so it never has to be offered. */
	uint32_t trdsl;
	uint32_t max_send_dsl;	 /* data bytes one of our send buffers holds after the headers */
	uint32_t max_unexpected; /* our MaxOutstandingUnexpectedPDUs value, 0 = no limit */
};
void iser_key_cfg_default(struct iser_key_cfg *c);

enum iser_rdma_ext { ISER_EXT_UNSEEN, ISER_EXT_YES, ISER_EXT_NO };

struct iser_keys {
	const struct iser_key_cfg *cfg;
	enum iser_rdma_ext ext;
	/* negotiated results (RFC defaults until then) */
	uint32_t irdsl; /* the most data we put in one SEND to the initiator */
	uint32_t trdsl; /* the most data the initiator puts in one SEND to us */
	uint32_t mou;	/* MaxOutstandingUnexpectedPDUs, 0 = no limit */
	bool seen_irdsl, seen_trdsl, seen_mou;
};
void iser_keys_init(struct iser_keys *k, const struct iser_key_cfg *cfg);

/* Results of iser_keys_take. */
#define ISER_KEY_NOT_MINE 0    /* not an iSER key: give it to the iSCSI engine */
#define ISER_KEY_TAKEN	  1    /* handled; any answer was appended to out */
#define ISER_KEY_FAIL	  (-1) /* the login fails with *status */

/* One key=value of a login request on an iSER connection. */
int iser_keys_take(struct iser_keys *k, const char *key, const char *val, struct iscsit_text *out,
		   uint16_t *status);

/* Before the login leaves the operational stage.  Returns 0, or -1 (with *status) when the
 * initiator said RDMAExtensions=No: iSER has no TCP fallback on an RDMA connection.  Never
 * mentioned is accepted without an offer: open-iscsi leaves the key out of discovery sessions
 * over iSER (and answers offers it does not expect by failing the login); the connection
 * speaks iSER framing either way. */
int iser_keys_finish(struct iser_keys *k, struct iscsit_text *out, uint16_t *status);

#endif
