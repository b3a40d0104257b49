/* Text key parsing and the negotiation rules of RFC 7143 sections 6 and 13. */
#include "transports/iscsi/iscsi_params.h"
#include "transports/iscsi/iscsi_pdu.h"

#include <ctype.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- text buffer */

static void text_reserve(struct iscsit_text *t, size_t more)
{
	size_t need = t->len + more;
	char *p;

	if (t->oom || need <= t->cap)
		return;
	size_t cap = t->cap ? t->cap : 512;
	while (cap < need)
		cap *= 2;
	p = realloc(t->p, cap);
	if (!p) {
		t->oom = true;
		return;
	}
	t->p = p;
	t->cap = cap;
}

void iscsit_text_add(struct iscsit_text *t, const char *key, const char *val)
{
	size_t kl = strlen(key), vl = strlen(val);

	text_reserve(t, kl + vl + 2);
	if (t->oom)
		return;
	memcpy(t->p + t->len, key, kl);
	t->p[t->len + kl] = '=';
	memcpy(t->p + t->len + kl + 1, val, vl);
	t->p[t->len + kl + 1 + vl] = '\0';
	t->len += kl + vl + 2;
}

void iscsit_text_addf(struct iscsit_text *t, const char *key, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	iscsit_text_add(t, key, buf);
}

void iscsit_text_free(struct iscsit_text *t)
{
	free(t->p);
	memset(t, 0, sizeof(*t));
}

/* ---------------------------------------------------------------- key=value parsing */

bool iscsit_key_name_valid(const char *s)
{
	size_t n = 0;

	for (; *s; s++, n++) {
		unsigned char c = (unsigned char)*s;

		if (!(isalnum(c) || c == '.' || c == '-' || c == '+' || c == '@' || c == '_' ||
		      c == '#'))
			return false;
	}
	return n >= 1 && n <= ISCSI_KEY_NAME_MAX;
}

enum iscsit_kv_err iscsit_kv_parse(char *buf, size_t len, struct iscsit_kv *kv, unsigned max,
				   unsigned *n)
{
	size_t i = 0;

	*n = 0;
	while (i < len) {
		size_t start = i, eq = (size_t)-1;

		/* Padding NULs between pairs are tolerated, as many initiators pad. */
		if (buf[i] == '\0') {
			i++;
			continue;
		}
		while (i < len && buf[i] != '\0') {
			if (buf[i] == '=' && eq == (size_t)-1)
				eq = i;
			i++;
		}
		if (i == len) {
			/* The last pair lacks its NUL: only valid if there is room to add it, which
			 * the caller guarantees by allocating len + 1. */
			buf[len] = '\0';
		}
		if (eq == (size_t)-1)
			return ISCSIT_KV_SYNTAX;
		buf[eq] = '\0';
		if (!iscsit_key_name_valid(buf + start))
			return ISCSIT_KV_SYNTAX;
		if (i - eq - 1 > ISCSI_VALUE_MAX)
			return ISCSIT_KV_TOO_LONG;
		if (*n >= max)
			return ISCSIT_KV_TOO_MANY;
		kv[*n].key = buf + start;
		kv[*n].val = buf + eq + 1;
		(*n)++;
		i++;
	}
	return ISCSIT_KV_OK;
}

bool iscsit_parse_num(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	int base = 10;

	if (!*s)
		return false;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!*s)
			return false;
	}
	for (; *s; s++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = tolower((unsigned char)*s) - 'a' + 10;
		else
			return false;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return false;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

/* ---------------------------------------------------------------- key table */

enum key_kind {
	KK_LIST,       /* comma-separated offer; answer is the first value we accept */
	KK_AND,	       /* boolean, result = ours AND theirs */
	KK_OR,	       /* boolean, result = ours OR theirs */
	KK_MIN,	       /* numeric, result = min */
	KK_MAX,	       /* numeric, result = max */
	KK_DECL_I,     /* declared by the initiator, no answer */
	KK_DECL_T,     /* declared only by the target; an initiator sending it gets Reject */
	KK_MRDSL,      /* MaxRecvDataSegmentLength: declarative both ways */
	KK_SECURITY,   /* CHAP_*: the CHAP code handles them */
	KK_IRRELEVANT, /* always Irrelevant here (markers' intervals, iSER keys on TCP) */
	KK_TEXT_ONLY,  /* SendTargets: only in Text requests */
};

enum key_flags {
	KF_LO = 1u << 0,       /* leading-only */
	KF_DISC_IRR = 1u << 1, /* Irrelevant in a discovery session */
};

struct keydef {
	const char *name;
	enum key_kind kind;
	uint32_t flags;
	uint64_t min, max;
	uint64_t rfc_default;
};

static const struct keydef keys[IK__COUNT] = {
    [IK_HeaderDigest] = {"HeaderDigest", KK_LIST, 0, 0, 0, 0},
    [IK_DataDigest] = {"DataDigest", KK_LIST, 0, 0, 0, 0},
    [IK_MaxConnections] = {"MaxConnections", KK_MIN, KF_LO | KF_DISC_IRR, 1, 65535, 1},
    [IK_SendTargets] = {"SendTargets", KK_TEXT_ONLY, 0, 0, 0, 0},
    [IK_TargetName] = {"TargetName", KK_DECL_I, 0, 0, 0, 0},
    [IK_InitiatorName] = {"InitiatorName", KK_DECL_I, 0, 0, 0, 0},
    [IK_TargetAlias] = {"TargetAlias", KK_DECL_T, 0, 0, 0, 0},
    [IK_InitiatorAlias] = {"InitiatorAlias", KK_DECL_I, 0, 0, 0, 0},
    [IK_TargetAddress] = {"TargetAddress", KK_DECL_T, 0, 0, 0, 0},
    [IK_TargetPortalGroupTag] = {"TargetPortalGroupTag", KK_DECL_T, 0, 0, 0, 0},
    [IK_InitialR2T] = {"InitialR2T", KK_OR, KF_LO | KF_DISC_IRR, 0, 1, 1},
    [IK_ImmediateData] = {"ImmediateData", KK_AND, KF_LO | KF_DISC_IRR, 0, 1, 1},
    [IK_MaxRecvDataSegmentLength] = {"MaxRecvDataSegmentLength", KK_MRDSL, 0, 512, 16777215, 8192},
    [IK_MaxBurstLength] = {"MaxBurstLength", KK_MIN, KF_LO | KF_DISC_IRR, 512, 16777215, 262144},
    [IK_FirstBurstLength] = {"FirstBurstLength", KK_MIN, KF_LO | KF_DISC_IRR, 512, 16777215, 65536},
    [IK_DefaultTime2Wait] = {"DefaultTime2Wait", KK_MAX, KF_LO, 0, 3600, 2},
    [IK_DefaultTime2Retain] = {"DefaultTime2Retain", KK_MIN, KF_LO, 0, 3600, 20},
    [IK_MaxOutstandingR2T] = {"MaxOutstandingR2T", KK_MIN, KF_LO | KF_DISC_IRR, 1, 65535, 1},
    [IK_DataPDUInOrder] = {"DataPDUInOrder", KK_OR, KF_LO | KF_DISC_IRR, 0, 1, 1},
    [IK_DataSequenceInOrder] = {"DataSequenceInOrder", KK_OR, KF_LO | KF_DISC_IRR, 0, 1, 1},
    [IK_ErrorRecoveryLevel] = {"ErrorRecoveryLevel", KK_MIN, KF_LO, 0, 2, 0},
    [IK_SessionType] = {"SessionType", KK_DECL_I, KF_LO, 0, 0, 0},
    [IK_AuthMethod] = {"AuthMethod", KK_LIST, 0, 0, 0, 0},
    [IK_OFMarker] = {"OFMarker", KK_AND, 0, 0, 1, 0},
    [IK_IFMarker] = {"IFMarker", KK_AND, 0, 0, 1, 0},
    [IK_OFMarkInt] = {"OFMarkInt", KK_IRRELEVANT, 0, 0, 0, 0},
    [IK_IFMarkInt] = {"IFMarkInt", KK_IRRELEVANT, 0, 0, 0, 0},
    [IK_TaskReporting] = {"TaskReporting", KK_LIST, KF_LO | KF_DISC_IRR, 0, 0, 0},
    [IK_iSCSIProtocolLevel] = {"iSCSIProtocolLevel", KK_MIN, KF_LO, 0, 31, 0},
    [IK_RDMAExtensions] = {"RDMAExtensions", KK_AND, KF_LO, 0, 1, 0},
    [IK_TargetRecvDataSegmentLength] = {"TargetRecvDataSegmentLength", KK_IRRELEVANT, 0, 0, 0, 0},
    [IK_InitiatorRecvDataSegmentLength] = {"InitiatorRecvDataSegmentLength", KK_IRRELEVANT, 0, 0, 0,
					   0},
    [IK_MaxOutstandingUnexpectedPDUs] = {"MaxOutstandingUnexpectedPDUs", KK_IRRELEVANT, 0, 0, 0, 0},
    [IK_CHAP_A] = {"CHAP_A", KK_SECURITY, 0, 0, 0, 0},
    [IK_CHAP_I] = {"CHAP_I", KK_SECURITY, 0, 0, 0, 0},
    [IK_CHAP_C] = {"CHAP_C", KK_SECURITY, 0, 0, 0, 0},
    [IK_CHAP_N] = {"CHAP_N", KK_SECURITY, 0, 0, 0, 0},
    [IK_CHAP_R] = {"CHAP_R", KK_SECURITY, 0, 0, 0, 0},
};

enum iscsit_key iscsit_key_lookup(const char *name)
{
	for (int i = 0; i < IK__COUNT; i++)
		if (!strcmp(keys[i].name, name))
			return (enum iscsit_key)i;
	return IK_UNKNOWN;
}

const char *iscsit_key_name(enum iscsit_key k)
{
	return (k >= 0 && k < IK__COUNT) ? keys[k].name : "?";
}

bool iscsit_key_is_security(enum iscsit_key k)
{
	return k == IK_AuthMethod || (k >= 0 && k < IK__COUNT && keys[k].kind == KK_SECURITY);
}

/* ---------------------------------------------------------------- defaults */

void iscsit_tgt_params_default(struct iscsit_tgt_params *p)
{
	memset(p, 0, sizeof(*p));
	/* SCST's iSCSI defaults. */
	p->initial_r2t = false;
	p->immediate_data = true;
	p->data_pdu_inorder = true;
	p->data_seq_inorder = true;
	p->hdigest_crc = p->hdigest_none = true;
	p->ddigest_crc = p->ddigest_none = true;
	p->max_recv_dsl = 1048576;
	p->max_xmit_dsl = 1048576;
	p->max_burst = 1048576;
	p->first_burst = 65536;
	p->max_outstanding_r2t = 32;
	p->max_connections = 1;
	p->time2wait = 2;
	p->time2retain = 0;
	p->erl = 0;
	p->queued_cmds = 32;
	p->nop_in_interval = 30;
	p->nop_in_timeout = 30;
	p->rsp_timeout = 90;
	p->rdma_extensions = true;
	p->iser_trdsl = 8192;
	p->iser_irdsl = 8192;
}

void iscsit_sess_params_rfc_default(struct iscsit_sess_params *r)
{
	memset(r, 0, sizeof(*r));
	r->initial_r2t = true;
	r->immediate_data = true;
	r->data_pdu_inorder = true;
	r->data_seq_inorder = true;
	r->max_recv_dsl = 8192;
	r->max_xmit_dsl = 8192;
	r->max_burst = 262144;
	r->first_burst = 65536;
	r->max_outstanding_r2t = 1;
	r->max_connections = 1;
	r->time2wait = 2;
	r->time2retain = 20;
	r->erl = 0;
}

/* ---------------------------------------------------------------- negotiation */

void iscsit_neg_init(struct iscsit_neg *n, const struct iscsit_tgt_params *tgt,
		     struct iscsit_sess_params *res, bool leading)
{
	memset(n, 0, sizeof(*n));
	n->tgt = tgt;
	n->res = res;
	n->leading = leading;
	n->auth_none_allowed = true;
}

#define BIT(k) (1ull << (k))

/* Our side of each boolean/numeric key. */
static uint64_t ours(const struct iscsit_neg *n, enum iscsit_key k)
{
	const struct iscsit_tgt_params *t = n->tgt;

	switch (k) {
	case IK_MaxConnections:
		return t->max_connections;
	case IK_InitialR2T:
		return t->initial_r2t;
	case IK_ImmediateData:
		return t->immediate_data;
	case IK_MaxBurstLength:
		return t->max_burst;
	case IK_FirstBurstLength:
		return t->first_burst;
	case IK_DefaultTime2Wait:
		return t->time2wait;
	case IK_DefaultTime2Retain:
		return t->time2retain;
	case IK_MaxOutstandingR2T:
		return t->max_outstanding_r2t;
	case IK_DataPDUInOrder:
		return t->data_pdu_inorder;
	case IK_DataSequenceInOrder:
		return t->data_seq_inorder;
	case IK_ErrorRecoveryLevel:
		return t->erl;
	case IK_iSCSIProtocolLevel:
		return 1;
	case IK_OFMarker:
	case IK_IFMarker:
	case IK_RDMAExtensions:
	default:
		return 0;
	}
}

static void set_result(struct iscsit_neg *n, enum iscsit_key k, uint64_t v)
{
	struct iscsit_sess_params *r = n->res;

	switch (k) {
	case IK_MaxConnections:
		r->max_connections = (uint32_t)v;
		break;
	case IK_InitialR2T:
		r->initial_r2t = v;
		break;
	case IK_ImmediateData:
		r->immediate_data = v;
		break;
	case IK_MaxBurstLength:
		r->max_burst = (uint32_t)v;
		break;
	case IK_FirstBurstLength:
		r->first_burst = (uint32_t)v;
		break;
	case IK_DefaultTime2Wait:
		r->time2wait = (uint32_t)v;
		break;
	case IK_DefaultTime2Retain:
		r->time2retain = (uint32_t)v;
		break;
	case IK_MaxOutstandingR2T:
		r->max_outstanding_r2t = (uint32_t)v;
		break;
	case IK_DataPDUInOrder:
		r->data_pdu_inorder = v;
		break;
	case IK_DataSequenceInOrder:
		r->data_seq_inorder = v;
		break;
	case IK_ErrorRecoveryLevel:
		r->erl = (uint32_t)v;
		break;
	case IK_iSCSIProtocolLevel:
		r->protocol_level = (uint32_t)v;
		break;
	default:
		break;
	}
}

static uint64_t combine(enum key_kind kind, uint64_t a, uint64_t b)
{
	switch (kind) {
	case KK_AND:
		return a && b;
	case KK_OR:
		return a || b;
	case KK_MIN:
		return a < b ? a : b;
	case KK_MAX:
		return a > b ? a : b;
	default:
		return b;
	}
}

static bool parse_bool_val(const char *s, uint64_t *v)
{
	if (!strcmp(s, "Yes"))
		*v = 1;
	else if (!strcmp(s, "No"))
		*v = 0;
	else
		return false;
	return true;
}

static bool is_answer_word(const char *v)
{
	return !strcmp(v, "Reject") || !strcmp(v, "Irrelevant") || !strcmp(v, "NotUnderstood");
}

/* Pick from a comma-separated offer the first value acceptable to us. */
static const char *choose_list(struct iscsit_neg *n, enum iscsit_key k, const char *offer,
			       char *tmp, size_t tmplen)
{
	const struct iscsit_tgt_params *t = n->tgt;
	const char *p = offer;

	while (*p) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l < tmplen) {
			memcpy(tmp, p, l);
			tmp[l] = '\0';
			switch (k) {
			case IK_HeaderDigest:
				if ((!strcmp(tmp, "CRC32C") && t->hdigest_crc) ||
				    (!strcmp(tmp, "None") && t->hdigest_none))
					return tmp;
				break;
			case IK_DataDigest:
				if ((!strcmp(tmp, "CRC32C") && t->ddigest_crc) ||
				    (!strcmp(tmp, "None") && t->ddigest_none))
					return tmp;
				break;
			case IK_AuthMethod:
				if ((!strcmp(tmp, "CHAP") && n->auth_chap_allowed) ||
				    (!strcmp(tmp, "None") && n->auth_none_allowed))
					return tmp;
				break;
			case IK_TaskReporting:
				if (!strcmp(tmp, "RFC3720"))
					return tmp;
				break;
			default:
				break;
			}
		}
		if (!e)
			break;
		p = e + 1;
	}
	return NULL;
}

static bool discovery_irrelevant(const struct iscsit_neg *n, enum iscsit_key k)
{
	return n->res->discovery && (keys[k].flags & KF_DISC_IRR);
}

/* Handle one non-security key.  Returns 0 or a login status. */
static uint16_t neg_one(struct iscsit_neg *n, enum iscsit_key k, const char *val,
			struct iscsit_text *out)
{
	const struct keydef *kd = &keys[k];
	struct iscsit_sess_params *r = n->res;
	uint64_t v;

	if ((kd->flags & KF_LO) && !n->leading) {
		iscsit_text_add(out, kd->name, "Irrelevant");
		return 0;
	}
	switch (kd->kind) {
	case KK_DECL_I:
		switch (k) {
		case IK_InitiatorName:
			if (!*val || strlen(val) >= sizeof(r->initiator_name))
				return ISCSI_LOGIN_MISSING_PARAM;
			snprintf(r->initiator_name, sizeof(r->initiator_name), "%s", val);
			break;
		case IK_TargetName:
			if (!*val || strlen(val) >= sizeof(r->target_name))
				return ISCSI_LOGIN_NOT_FOUND;
			snprintf(r->target_name, sizeof(r->target_name), "%s", val);
			break;
		case IK_InitiatorAlias:
			snprintf(r->initiator_alias, sizeof(r->initiator_alias), "%s", val);
			break;
		case IK_SessionType:
			/* already applied by the pre-pass */
			break;
		default:
			break;
		}
		return 0;
	case KK_DECL_T:
		iscsit_text_add(out, kd->name, "Reject");
		return 0;
	case KK_IRRELEVANT:
	case KK_TEXT_ONLY:
		iscsit_text_add(out, kd->name, "Irrelevant");
		return 0;
	case KK_SECURITY:
		return 0;
	case KK_MRDSL:
		/* Out of 512..2^24-1 (RFC 7143 13.12): the login fails with an initiator error,
		 * as LIO does.  "Reject" would be ambiguous here: our answer carries our own
		 * declaration of the same key, and initiators read the last one as ours. */
		if (!iscsit_parse_num(val, kd->max, &v) || v < kd->min)
			return ISCSI_LOGIN_INITIATOR_ERROR;
		r->max_xmit_dsl = (uint32_t)(v < n->tgt->max_xmit_dsl ? v : n->tgt->max_xmit_dsl);
		if (!n->declared_mrdsl) {
			iscsit_text_addf(out, kd->name, "%u", n->tgt->max_recv_dsl);
			n->declared_mrdsl = true;
		}
		return 0;
	case KK_LIST: {
		char tmp[64];
		const char *c;

		if (discovery_irrelevant(n, k)) {
			iscsit_text_add(out, kd->name, "Irrelevant");
			return 0;
		}
		c = choose_list(n, k, val, tmp, sizeof(tmp));
		if (!c) {
			iscsit_text_add(out, kd->name, "Reject");
			/* Nothing in common for AuthMethod means we cannot authenticate. */
			return k == IK_AuthMethod ? ISCSI_LOGIN_AUTH_FAILED : 0;
		}
		if (k == IK_HeaderDigest)
			r->header_digest = !strcmp(c, "CRC32C");
		else if (k == IK_DataDigest)
			r->data_digest = !strcmp(c, "CRC32C");
		else if (k == IK_AuthMethod)
			snprintf(n->auth_method, sizeof(n->auth_method), "%s",
				 !strcmp(c, "CHAP") ? "CHAP" : "None");
		iscsit_text_add(out, kd->name, c);
		n->answered |= BIT(k);
		return 0;
	}
	case KK_AND:
	case KK_OR:
	case KK_MIN:
	case KK_MAX:
		break;
	}

	if (discovery_irrelevant(n, k)) {
		iscsit_text_add(out, kd->name, "Irrelevant");
		return 0;
	}
	if (n->offered & BIT(k)) {
		/* The initiator answers our offer: accept it if the function allows it. */
		uint64_t mine = ours(n, k);

		n->offered &= ~BIT(k);
		n->answered |= BIT(k);
		if (is_answer_word(val))
			return 0; /* keeps the RFC default */
		bool ok = (kd->kind == KK_AND || kd->kind == KK_OR)
			      ? parse_bool_val(val, &v)
			      : iscsit_parse_num(val, kd->max, &v) && v >= kd->min;
		if (!ok || combine(kd->kind, mine, v) != v)
			return ISCSI_LOGIN_INITIATOR_ERROR;
		set_result(n, k, v);
		return 0;
	}
	if (kd->kind == KK_AND || kd->kind == KK_OR) {
		if (!parse_bool_val(val, &v)) {
			iscsit_text_add(out, kd->name, "Reject");
			return 0;
		}
	} else if (!iscsit_parse_num(val, kd->max, &v) || v < kd->min) {
		iscsit_text_add(out, kd->name, "Reject");
		return 0;
	}
	v = combine(kd->kind, ours(n, k), v);
	if (k == IK_FirstBurstLength) {
		/* FirstBurstLength MUST NOT exceed MaxBurstLength (RFC 7143 13.14): the answer
		 * says so, not only the session, or the initiator sends its own
		 * FirstBurstLength unsolicited.  MaxBurstLength is a
		 * minimum, so it ends at most at ours, or at what was already agreed. */
		uint64_t mbl = ours(n, IK_MaxBurstLength);

		if ((n->answered & BIT(IK_MaxBurstLength)) && r->max_burst < mbl)
			mbl = r->max_burst;
		if (v > mbl)
			v = mbl;
	}
	set_result(n, k, v);
	n->answered |= BIT(k);
	if (kd->kind == KK_AND || kd->kind == KK_OR)
		iscsit_text_add(out, kd->name, v ? "Yes" : "No");
	else
		iscsit_text_addf(out, kd->name, "%llu", (unsigned long long)v);
	return 0;
}

uint16_t iscsit_neg_login(struct iscsit_neg *n, struct iscsit_kv *kv, unsigned nkv, unsigned stage,
			  struct iscsit_text *out, unsigned *sec_idx, unsigned *nsec)
{
	(void)stage;
	*nsec = 0;
	/* SessionType changes what is relevant, and may come after keys it affects. */
	for (unsigned i = 0; i < nkv; i++) {
		if (strcmp(kv[i].key, "SessionType"))
			continue;
		if (n->session_type_known || !n->leading)
			return ISCSI_LOGIN_INITIATOR_ERROR;
		if (!strcmp(kv[i].val, "Discovery"))
			n->res->discovery = true;
		else if (!strcmp(kv[i].val, "Normal"))
			n->res->discovery = false;
		else
			return ISCSI_LOGIN_SESSION_TYPE_UNSUP;
		n->session_type_known = true;
	}
	if (!n->session_type_known)
		n->session_type_known = true; /* absent in the first PDU: Normal (RFC default) */

	/* MaxBurstLength before FirstBurstLength, whatever their order in the request: the
	 * answer for FirstBurstLength is bounded by the one for MaxBurstLength. */
	unsigned fbl_at = nkv, mbl_at = nkv;

	for (unsigned i = 0; i < nkv; i++) {
		if (!strcmp(kv[i].key, "FirstBurstLength") && fbl_at == nkv)
			fbl_at = i;
		else if (!strcmp(kv[i].key, "MaxBurstLength") && mbl_at == nkv)
			mbl_at = i;
	}
	for (unsigned j = 0; j < nkv; j++) {
		unsigned i = j;
		enum iscsit_key k;
		uint16_t st;

		if (fbl_at < mbl_at && mbl_at < nkv) {
			/* visit MaxBurstLength at FirstBurstLength's turn and the other way round */
			if (j == fbl_at)
				i = mbl_at;
			else if (j == mbl_at)
				i = fbl_at;
		}
		k = iscsit_key_lookup(kv[i].key);

		if (k == IK_UNKNOWN) {
			iscsit_text_add(out, kv[i].key, "NotUnderstood");
			continue;
		}
		/* A key may be negotiated once per login (RFC 7143 6.2). */
		if (n->seen & BIT(k))
			return ISCSI_LOGIN_INITIATOR_ERROR;
		n->seen |= BIT(k);
		if (keys[k].kind == KK_SECURITY) {
			sec_idx[(*nsec)++] = i;
			continue;
		}
		if (k == IK_AuthMethod && stage != 0) {
			/* Security keys outside the security stage are a protocol error. */
			return ISCSI_LOGIN_INITIATOR_ERROR;
		}
		st = neg_one(n, k, kv[i].val, out);
		if (st)
			return st;
	}
	return out->oom ? ISCSI_LOGIN_OUT_OF_RESOURCES : 0;
}

bool iscsit_neg_offer(struct iscsit_neg *n, struct iscsit_text *out)
{
	struct iscsit_sess_params def;
	bool any = false;

	iscsit_sess_params_rfc_default(&def);
	if (!n->declared_mrdsl) {
		iscsit_text_addf(out, "MaxRecvDataSegmentLength", "%u", n->tgt->max_recv_dsl);
		n->declared_mrdsl = true;
	}
	if (n->res->discovery || !n->leading)
		return false;
	for (int k = 0; k < IK__COUNT; k++) {
		const struct keydef *kd = &keys[k];
		uint64_t want;

		if (kd->kind != KK_AND && kd->kind != KK_OR && kd->kind != KK_MIN &&
		    kd->kind != KK_MAX)
			continue;
		if ((n->seen | n->offered | n->answered) & BIT(k))
			continue;
		want = combine(kd->kind, ours(n, (enum iscsit_key)k), kd->rfc_default);
		if (want == kd->rfc_default)
			continue;
		if (kd->kind == KK_AND || kd->kind == KK_OR)
			iscsit_text_add(out, kd->name, want ? "Yes" : "No");
		else
			iscsit_text_addf(out, kd->name, "%llu", (unsigned long long)want);
		n->offered |= BIT(k);
		any = true;
	}
	return any;
}

bool iscsit_neg_pending(const struct iscsit_neg *n)
{
	return n->offered != 0;
}

void iscsit_neg_drop_offers(struct iscsit_neg *n)
{
	n->answered |= n->offered;
	n->offered = 0;
}

void iscsit_neg_finish(struct iscsit_neg *n)
{
	struct iscsit_sess_params *r = n->res;

	if (r->first_burst > r->max_burst)
		r->first_burst = r->max_burst;
	r->max_recv_dsl = n->tgt->max_recv_dsl;
	if (r->max_xmit_dsl > n->tgt->max_xmit_dsl)
		r->max_xmit_dsl = n->tgt->max_xmit_dsl;
	if (r->max_xmit_dsl < 512)
		r->max_xmit_dsl = 512;
}

/* ---------------------------------------------------------------- scst.conf attributes */

static bool attr_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "Yes")) {
		*out = true;
		return true;
	}
	if (!strcasecmp(v, "No")) {
		*out = false;
		return true;
	}
	return parse_bool(v, out);
}

static bool attr_digest(const char *v, bool *crc, bool *none)
{
	char buf[64];
	char *save = NULL, *tok;

	if (strlen(v) >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%s", v);
	*crc = *none = false;
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (!strcasecmp(tok, "CRC32C"))
			*crc = true;
		else if (!strcasecmp(tok, "None"))
			*none = true;
		else
			return false;
	}
	return *crc || *none;
}

struct num_attr {
	const char *name;
	size_t off;
	uint64_t min, max;
};

#define NA(n, f, lo, hi)                                                                           \
	{                                                                                          \
		n, offsetof(struct iscsit_tgt_params, f), lo, hi                                   \
	}
static const struct num_attr num_attrs[] = {
    NA("MaxRecvDataSegmentLength", max_recv_dsl, 512, 16777215),
    NA("MaxXmitDataSegmentLength", max_xmit_dsl, 512, 16777215),
    NA("MaxBurstLength", max_burst, 512, 16777215),
    NA("FirstBurstLength", first_burst, 512, 16777215),
    NA("MaxOutstandingR2T", max_outstanding_r2t, 1, 65535),
    NA("MaxConnections", max_connections, 1, 65535),
    NA("DefaultTime2Wait", time2wait, 0, 3600),
    NA("DefaultTime2Retain", time2retain, 0, 3600),
    NA("ErrorRecoveryLevel", erl, 0, 0),
    NA("QueuedCommands", queued_cmds, 1, 2048),
    NA("NopInInterval", nop_in_interval, 0, 3600),
    NA("NopInTimeout", nop_in_timeout, 1, 3600),
    NA("RspTimeout", rsp_timeout, 1, 65535),
    NA("TargetRecvDataSegmentLength", iser_trdsl, 8192, 16777215),
    NA("InitiatorRecvDataSegmentLength", iser_irdsl, 512, 16777215),
};

void iscsit_tgt_params_from_attrs(struct iscsit_tgt_params *p, const struct utgt_attr *a,
				  unsigned n, struct diag *d)
{
	for (unsigned i = 0; i < n; i++) {
		const char *k = a[i].key, *v = a[i].value;
		bool b;

		if (!strcasecmp(k, "InitialR2T") || !strcasecmp(k, "ImmediateData") ||
		    !strcasecmp(k, "DataPDUInOrder") || !strcasecmp(k, "DataSequenceInOrder") ||
		    !strcasecmp(k, "RDMAExtensions") || !strcasecmp(k, "iSERHelloRequired")) {
			if (!attr_bool(v, &b)) {
				if (d)
					diag_error(d, a[i].line, "%s: expected Yes or No, got '%s'",
						   k, v);
				continue;
			}
			if (!strcasecmp(k, "InitialR2T"))
				p->initial_r2t = b;
			else if (!strcasecmp(k, "ImmediateData"))
				p->immediate_data = b;
			else if (!strcasecmp(k, "DataPDUInOrder"))
				p->data_pdu_inorder = b;
			else if (!strcasecmp(k, "DataSequenceInOrder"))
				p->data_seq_inorder = b;
			else if (!strcasecmp(k, "RDMAExtensions"))
				p->rdma_extensions = b;
			else
				p->iser_hello = b;
			if (!strcasecmp(k, "iSERHelloRequired") && b && d)
				diag_warn(
				    d, a[i].line,
				    "iSERHelloRequired Yes: the iSER Hello exchange exists on "
				    "iWARP only; InfiniBand and RoCE initiators never send it, and "
				    "none is required");
			continue;
		}
		if (!strcasecmp(k, "HeaderDigest") || !strcasecmp(k, "DataDigest")) {
			bool crc, none;

			if (!attr_digest(v, &crc, &none)) {
				if (d)
					diag_error(d, a[i].line,
						   "%s: expected CRC32C, None or both, got '%s'", k,
						   v);
				continue;
			}
			if (!strcasecmp(k, "HeaderDigest")) {
				p->hdigest_crc = crc;
				p->hdigest_none = none;
			} else {
				p->ddigest_crc = crc;
				p->ddigest_none = none;
			}
			continue;
		}
		for (size_t j = 0; j < sizeof(num_attrs) / sizeof(num_attrs[0]); j++) {
			uint64_t x;

			if (strcasecmp(k, num_attrs[j].name))
				continue;
			if (!parse_u64(v, &x) || x < num_attrs[j].min || x > num_attrs[j].max) {
				if (d)
					diag_error(d, a[i].line,
						   "%s: '%s' is not a number in %llu..%llu", k, v,
						   (unsigned long long)num_attrs[j].min,
						   (unsigned long long)num_attrs[j].max);
				break;
			}
			*(uint32_t *)((char *)p + num_attrs[j].off) = (uint32_t)x;
			break;
		}
	}
	if (p->first_burst > p->max_burst && d)
		diag_warn(d, 0, "FirstBurstLength %u exceeds MaxBurstLength %u: sessions use %u",
			  p->first_burst, p->max_burst, p->max_burst);
}
