/* Login glue between an iSER connection and the shared iSCSI negotiation engine: which keys
 * of a login request iSER answers itself (iser_keys.c) and which go to iscsit_neg_login(), and
 * which of the engine's answers must not reach an iSER initiator. */
#ifndef UTGT_ISER_LOGIN_H
#define UTGT_ISER_LOGIN_H

#include "transports/iscsi/iscsi_params.h"
#include "transports/iser/iser_keys.h"

/* Take iSER's keys out of kv[0..n) (answers appended to out) and compact the others, in
 * their order, to the front of kv for the engine.  Returns how many are left for the engine,
 * or -1 when the login fails with *status. */
int iser_login_split_keys(struct iser_keys *k, struct iscsit_kv *kv, unsigned n,
			  struct iscsit_text *out, uint16_t *status);

/* Over iSER our MaxRecvDataSegmentLength declaration must not exceed what one receive buffer
 * holds: open-iscsi ignores the key on normal iSER sessions (it uses the RecvDataSegmentLength
 * keys) but applies it as its send limit on discovery sessions, which run over iSER without
 * RDMAExtensions.  The engine declares the TCP value (1 MiB by default); this rewrites every
 * MaxRecvDataSegmentLength in a response to min(its value, limit).  Returns how many were
 * rewritten; on allocation failure t->oom is set. */
unsigned iser_login_fix_answer(struct iscsit_text *t, uint32_t limit);

#endif
