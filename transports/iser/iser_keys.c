/* iSER login keys; see iser_keys.h for how they split from the iSCSI engine's keys. */
#include "transports/iser/iser_keys.h"

#include <string.h>

#include "transports/iscsi/iscsi_pdu.h"

void iser_key_cfg_default(struct iser_key_cfg *c)
{
	c->trdsl = ISER_RDSL_DEFAULT;
	c->max_send_dsl = ISER_RDSL_DEFAULT;
	c->max_unexpected = 0; /* unexpected PDUs are bounded by the receive buffers anyway */
}

void iser_keys_init(struct iser_keys *k, const struct iser_key_cfg *cfg)
{
	memset(k, 0, sizeof(*k));
	k->cfg = cfg;
	k->ext = ISER_EXT_UNSEEN;
	k->irdsl = ISER_RDSL_DEFAULT;
	k->trdsl = ISER_RDSL_DEFAULT;
}

static int fail(uint16_t *status, uint16_t s)
{
	*status = s;
	return ISER_KEY_FAIL;
}

/* A length value: 512..2^24-1 (RFC 7145 6.5/6.6). */
static bool rdsl_ok(const char *val, uint32_t *out)
{
	uint64_t v;

	if (!iscsit_parse_num(val, ISER_RDSL_MAX, &v) || v < ISER_RDSL_MIN)
		return false;
	*out = (uint32_t)v;
	return true;
}

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Minimum where 0 means "no limit" (MaxOutstandingUnexpectedPDUs). */
static uint32_t min_or_zero(uint32_t a, uint32_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return min32(a, b);
}

static int take_rdma_ext(struct iser_keys *k, const char *val, struct iscsit_text *out,
			 uint16_t *status)
{
	if (k->ext != ISER_EXT_UNSEEN)
		return fail(status, ISCSI_LOGIN_INITIATOR_ERROR); /* duplicate */
	if (!strcmp(val, "Yes")) {
		k->ext = ISER_EXT_YES;
	} else if (!strcmp(val, "No")) {
		k->ext = ISER_EXT_NO;
	} else {
		iscsit_text_add(out, "RDMAExtensions", "Reject");
		return ISER_KEY_TAKEN;
	}
	iscsit_text_add(out, "RDMAExtensions", val);
	return ISER_KEY_TAKEN;
}

int iser_keys_take(struct iser_keys *k, const char *key, const char *val, struct iscsit_text *out,
		   uint16_t *status)
{
	uint32_t n;
	uint64_t v;

	if (!strcmp(key, "RDMAExtensions"))
		return take_rdma_ext(k, val, out, status);
	if (!strcmp(key, "InitiatorRecvDataSegmentLength")) {
		if (k->seen_irdsl || !rdsl_ok(val, &n))
			return fail(status, ISCSI_LOGIN_INITIATOR_ERROR);
		k->seen_irdsl = true;
		k->irdsl = min32(n, k->cfg->max_send_dsl);
		iscsit_text_addf(out, key, "%u", k->irdsl);
		return ISER_KEY_TAKEN;
	}
	if (!strcmp(key, "TargetRecvDataSegmentLength")) {
		if (k->seen_trdsl || !rdsl_ok(val, &n))
			return fail(status, ISCSI_LOGIN_INITIATOR_ERROR);
		k->seen_trdsl = true;
		k->trdsl = min32(n, k->cfg->trdsl);
		iscsit_text_addf(out, key, "%u", k->trdsl);
		return ISER_KEY_TAKEN;
	}
	if (!strcmp(key, "MaxOutstandingUnexpectedPDUs")) {
		/* 0 (no limit) or 2..2^32-1 */
		if (k->seen_mou || !iscsit_parse_num(val, UINT32_MAX, &v) || v == 1)
			return fail(status, ISCSI_LOGIN_INITIATOR_ERROR);
		k->seen_mou = true;
		k->mou = min_or_zero((uint32_t)v, k->cfg->max_unexpected);
		iscsit_text_addf(out, key, "%u", k->mou);
		return ISER_KEY_TAKEN;
	}
	return ISER_KEY_NOT_MINE;
}

int iser_keys_finish(struct iser_keys *k, struct iscsit_text *out, uint16_t *status)
{
	(void)out;
	if (k->ext != ISER_EXT_NO)
		return 0;
	*status = ISCSI_LOGIN_INITIATOR_ERROR;
	return -1;
}
