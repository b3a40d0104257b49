/* iSCSI text keys (RFC 7143 sections 6 and 13): parsing key=value data segments, and the
 * per-key negotiation rules (OR/AND booleans, min/max numbers, lists, declarations,
 * Irrelevant, NotUnderstood, Reject, duplicates).  Pure code: no sockets, no sessions. */
#ifndef UTGT_ISCSI_PARAMS_H
#define UTGT_ISCSI_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scsi/attr.h"

#define ISCSI_KEY_NAME_MAX 63
#define ISCSI_VALUE_MAX	   8192 /* longest value we accept (CHAP challenges are the big ones) */
#define ISCSI_NAME_LEN	   224

/* ---- growing text buffer for "key=value\0" responses ---- */
struct iscsit_text {
	char *p;
	size_t len, cap;
	bool oom;
};
void iscsit_text_add(struct iscsit_text *t, const char *key, const char *val);
void iscsit_text_addf(struct iscsit_text *t, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void iscsit_text_free(struct iscsit_text *t);

/* ---- key=value parsing ---- */
struct iscsit_kv {
	char *key;
	char *val;
};

enum iscsit_kv_err {
	ISCSIT_KV_OK = 0,
	ISCSIT_KV_SYNTAX,   /* no '=', empty or bad key name, key too long */
	ISCSIT_KV_TOO_LONG, /* value over ISCSI_VALUE_MAX */
	ISCSIT_KV_TOO_MANY, /* more pairs than the caller's array holds */
};

/* Split a text data segment in place (buf is modified: '=' becomes '\0').  A trailing pair
 * without its terminating NUL is accepted (RFC 7143 allows the last NUL to be omitted when a
 * PDU ends the text).  Returns the number of pairs in *n. */
enum iscsit_kv_err iscsit_kv_parse(char *buf, size_t len, struct iscsit_kv *kv, unsigned max,
				   unsigned *n);
/* Is s a valid iSCSI key name (letters, digits, '.', '-', '+', '@', '_'; 1..63 chars)? */
bool iscsit_key_name_valid(const char *s);
/* Numbers as iSCSI writes them: decimal, 0x hex.  False when malformed or > max. */
bool iscsit_parse_num(const char *s, uint64_t max, uint64_t *out);

/* ---- the negotiable operational parameters ---- */

/* What the target is configured to want (scst.conf target attributes, SCST defaults). */
struct iscsit_tgt_params {
	bool initial_r2t;		 /* InitialR2T, default No */
	bool immediate_data;		 /* ImmediateData, default Yes */
	bool data_pdu_inorder;		 /* DataPDUInOrder, default Yes */
	bool data_seq_inorder;		 /* DataSequenceInOrder, default Yes */
	bool hdigest_crc, hdigest_none;	 /* HeaderDigest values we accept */
	bool ddigest_crc, ddigest_none;	 /* DataDigest values we accept */
	uint32_t max_recv_dsl;		 /* MaxRecvDataSegmentLength we declare, default 1 MiB */
	uint32_t max_xmit_dsl;		 /* cap on what we send per PDU, default 1 MiB */
	uint32_t max_burst;		 /* MaxBurstLength, default 1 MiB */
	uint32_t first_burst;		 /* FirstBurstLength, default 64 KiB */
	uint32_t max_outstanding_r2t;	 /* default 32 */
	uint32_t max_connections;	 /* default 1 */
	uint32_t time2wait, time2retain; /* DefaultTime2Wait 2, DefaultTime2Retain 0 (ERL 0) */
	uint32_t erl;			 /* ErrorRecoveryLevel: only 0 */
	uint32_t queued_cmds;		 /* QueuedCommands: CmdSN window, default 32 */
	uint32_t nop_in_interval;	 /* seconds, 0 = never ping; default 30 */
	uint32_t nop_in_timeout;	 /* seconds to wait for the NOP-Out answer; default 30 */
	uint32_t rsp_timeout; /* seconds a command may take before we drop the connection */
	/* iSER (RFC 7145), for connections over RDMA */
	bool rdma_extensions; /* RDMAExtensions: iSER logins accepted, default Yes */
	bool iser_hello;      /* iSERHelloRequired (iWARP only: accepted, never used) */
	uint32_t iser_trdsl;  /* TargetRecvDataSegmentLength we accept, default 8192 */
	uint32_t iser_irdsl;  /* InitiatorRecvDataSegmentLength we send at most, default 8192 */
};
void iscsit_tgt_params_default(struct iscsit_tgt_params *p);

/* Negotiated result for one session (and its connection: digests, MRDSL). */
struct iscsit_sess_params {
	bool discovery;
	bool header_digest, data_digest;
	bool initial_r2t, immediate_data, data_pdu_inorder, data_seq_inorder;
	uint32_t max_recv_dsl; /* what we declared: the most we accept per PDU */
	uint32_t max_xmit_dsl; /* the initiator's MaxRecvDataSegmentLength (capped by ours) */
	uint32_t max_burst, first_burst, max_outstanding_r2t, max_connections;
	uint32_t time2wait, time2retain, erl;
	uint32_t protocol_level;
	char initiator_name[ISCSI_NAME_LEN];
	char initiator_alias[256];
	char target_name[ISCSI_NAME_LEN];
};

/* Keys the engine knows.  The CHAP_* keys are recognised here and handed to the CHAP code. */
enum iscsit_key {
	IK_HeaderDigest,
	IK_DataDigest,
	IK_MaxConnections,
	IK_SendTargets,
	IK_TargetName,
	IK_InitiatorName,
	IK_TargetAlias,
	IK_InitiatorAlias,
	IK_TargetAddress,
	IK_TargetPortalGroupTag,
	IK_InitialR2T,
	IK_ImmediateData,
	IK_MaxRecvDataSegmentLength,
	IK_MaxBurstLength,
	IK_FirstBurstLength,
	IK_DefaultTime2Wait,
	IK_DefaultTime2Retain,
	IK_MaxOutstandingR2T,
	IK_DataPDUInOrder,
	IK_DataSequenceInOrder,
	IK_ErrorRecoveryLevel,
	IK_SessionType,
	IK_AuthMethod,
	IK_OFMarker,
	IK_IFMarker,
	IK_OFMarkInt,
	IK_IFMarkInt,
	IK_TaskReporting,
	IK_iSCSIProtocolLevel,
	IK_RDMAExtensions,
	IK_TargetRecvDataSegmentLength,
	IK_InitiatorRecvDataSegmentLength,
	IK_MaxOutstandingUnexpectedPDUs,
	IK_CHAP_A,
	IK_CHAP_I,
	IK_CHAP_C,
	IK_CHAP_N,
	IK_CHAP_R,
	IK__COUNT,
	IK_UNKNOWN = -1,
};
enum iscsit_key iscsit_key_lookup(const char *name);
const char *iscsit_key_name(enum iscsit_key k);
bool iscsit_key_is_security(enum iscsit_key k);

/* Negotiation state across the PDUs of one login (or one Text exchange). */
struct iscsit_neg {
	const struct iscsit_tgt_params *tgt;
	struct iscsit_sess_params *res;
	bool leading; /* leading connection (TSIH 0): LO keys allowed */
	bool session_type_known;
	uint64_t seen;	     /* keys the initiator sent (duplicate detection) */
	uint64_t offered;    /* keys we sent first and await an answer for */
	uint64_t answered;   /* keys settled either way */
	bool declared_mrdsl; /* our MaxRecvDataSegmentLength declaration went out */
	bool auth_chap_allowed, auth_none_allowed; /* what AuthMethod may resolve to */
	char auth_method[16];			   /* "CHAP" / "None" once chosen, else "" */
};

void iscsit_neg_init(struct iscsit_neg *n, const struct iscsit_tgt_params *tgt,
		     struct iscsit_sess_params *res, bool leading);

/* Process the keys of one login request in the given stage.  Security keys other than
 * AuthMethod are left for the caller (their indexes are collected in sec_idx).  Appends the
 * answers to out.  Returns 0, or the login status to fail with (duplicate key, bad answer to
 * our offer, a missing or malformed declaration). */
uint16_t iscsit_neg_login(struct iscsit_neg *n, struct iscsit_kv *kv, unsigned nkv, unsigned stage,
			  struct iscsit_text *out, unsigned *sec_idx, unsigned *nsec);
/* Before answering a request that asks to leave the operational stage: add our own offers for
 * keys the initiator did not mention but whose default we cannot live with, and declare our
 * MaxRecvDataSegmentLength.  Returns true when an offer went out, i.e. we must not transit yet. */
bool iscsit_neg_offer(struct iscsit_neg *n, struct iscsit_text *out);
/* Anything still awaiting the initiator's answer? */
bool iscsit_neg_pending(const struct iscsit_neg *n);
/* The initiator ignored our offers: keep the RFC defaults for them and never offer again. */
void iscsit_neg_drop_offers(struct iscsit_neg *n);
/* Fix up derived values once the operational stage is over (FirstBurst <= MaxBurst, ...). */
void iscsit_neg_finish(struct iscsit_neg *n);

/* Defaults of RFC 7143 for keys nobody negotiated. */
void iscsit_sess_params_rfc_default(struct iscsit_sess_params *r);

/* Read scst.conf-style target attributes (InitialR2T Yes, MaxBurstLength 1048576, ...) into p.
 * Reports bad values on d (with their line).  Unknown keys are ignored here. */
void iscsit_tgt_params_from_attrs(struct iscsit_tgt_params *p, const struct utgt_attr *a,
				  unsigned n, struct diag *d);

#endif
