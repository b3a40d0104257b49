/* iSER login keys; see iser_keys.h for how they split from the iSCSI engine's keys. */
#include "transports/iser/iser_keys.h"

#include <string.h>

#include "transports/iscsi/iscsi_pdu.h"

void iser_key_cfg_default(struct iser_key_cfg *c)
{
	c->trdsl = ISER_RDSL_DEFAULT;
	c->max_unexpected = 4; /* what isert keeps: 2 NOP-Out, 1 TMF, 1 Logout/Text at a time */
}

void iser_keys_init(struct iser_keys *k, const struct iser_key_cfg *cfg)
{
	memset(k, 0, sizeof(*k));
	k->cfg = cfg;
	k->ext = ISER_EXT_UNSEEN;
	k->irdsl = ISER_RDSL_DEFAULT;
}

static int fail(uint16_t *status, uint16_t s)
{
	*status = s;
	return ISER_KEY_FAIL;
}

/* A declarative length: 512..2^24-1 (RFC 7145 6.5/6.6). */
static bool rdsl_ok(const char *val, uint32_t *out)
{
	uint64_t v;

	if (!iscsit_parse_num(val, ISER_RDSL_MAX, &v) || v < ISER_RDSL_MIN)
		return false;
	*out = (uint32_t)v;
	return true;
}

int iser_keys_take(struct iser_keys *k, const char *key, const char *val, struct iscsit_text *out,
		   uint16_t *status)
{
	uint32_t n;
	uint64_t v;

	if (!strcmp(key, "RDMAExtensions")) {
		if (k->ext == ISER_EXT_YES || k->ext == ISER_EXT_NO)
			return fail(status, ISCSI_LOGIN_INITIATOR_ERROR); /* duplicate */
		if (!strcmp(val, "Yes")) {
			/* An answer to our offer carries no answer of its own. */
			if (k->ext != ISER_EXT_OFFERED)
				iscsit_text_add(out, key, "Yes");
			k->ext = ISER_EXT_YES;
		} else if (!strcmp(val, "No")) {
			if (k->ext != ISER_EXT_OFFERED)
				iscsit_text_add(out, key, "No");
			k->ext = ISER_EXT_NO;
		} else {
			if (k->ext == ISER_EXT_OFFERED)
				return fail(status, ISCSI_LOGIN_INITIATOR_ERROR);
			iscsit_text_add(out, key, "Reject");
		}
		return ISER_KEY_TAKEN;
	}
	if (!strcmp(key, "InitiatorRecvDataSegmentLength")) {
		if (k->seen_irdsl || !rdsl_ok(val, &n))
			return fail(status, ISCSI_LOGIN_INITIATOR_ERROR);
		k->seen_irdsl = true;
		k->irdsl = n;
		return ISER_KEY_TAKEN;
	}
	if (!strcmp(key, "TargetRecvDataSegmentLength")) {
		/* Declared by the target; an initiator sending it gets it checked and ignored (the
		 * value that counts is our declaration). */
		if (k->seen_trdsl || !rdsl_ok(val, &n))
			return fail(status, ISCSI_LOGIN_INITIATOR_ERROR);
		k->seen_trdsl = true;
		return ISER_KEY_TAKEN;
	}
	if (!strcmp(key, "MaxOutstandingUnexpectedPDUs")) {
		/* 0 (no limit) or 2..2^32-1 */
		if (k->seen_mou || !iscsit_parse_num(val, UINT32_MAX, &v) || v == 1)
			return fail(status, ISCSI_LOGIN_INITIATOR_ERROR);
		k->seen_mou = true;
		k->mou_init = (uint32_t)v;
		return ISER_KEY_TAKEN;
	}
	return ISER_KEY_NOT_MINE;
}

int iser_keys_finish(struct iser_keys *k, struct iscsit_text *out, uint16_t *status)
{
	if (!k->declared) {
		iscsit_text_addf(out, "TargetRecvDataSegmentLength", "%u", k->cfg->trdsl);
		iscsit_text_addf(out, "MaxOutstandingUnexpectedPDUs", "%u", k->cfg->max_unexpected);
		k->declared = true;
	}
	switch (k->ext) {
	case ISER_EXT_YES:
		return 0;
	case ISER_EXT_UNSEEN:
		iscsit_text_add(out, "RDMAExtensions", "Yes");
		k->ext = ISER_EXT_OFFERED;
		return 1;
	case ISER_EXT_OFFERED:
		return 1;
	case ISER_EXT_NO:
		break;
	}
	*status = ISCSI_LOGIN_INITIATOR_ERROR;
	return -1;
}
