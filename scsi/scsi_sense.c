/* The one place a command outcome (enum scsi_sr) becomes SAM status and sense bytes. */
#include "scsi/scsi_sense.h"

#include <string.h>

#include "scsi/scsi_core.h"

static const struct scsi_sr_info sr_table[SR__COUNT] = {
#define SCSI_SR_ROW(nm, st, k, a, q) [nm] = {.name = #nm, .status = st, .key = k, .asc = a, .ascq = q},
	SCSI_SR_LIST(SCSI_SR_ROW)
#undef SCSI_SR_ROW
};

const struct scsi_sr_info *scsi_sr_info(enum scsi_sr sr)
{
	if ((unsigned)sr >= SR__COUNT)
		sr = SR_INTERNAL_ERROR;
	return &sr_table[sr];
}

static enum scsi_sr set_sks(struct scsi_task *t, enum scsi_sr sr, uint16_t byte, int8_t bit,
			    bool cdb)
{
	t->core.sks_field = byte;
	t->core.sks_bit = bit;
	t->core.sks_cdb = cdb;
	t->core.flags |= TF_SKS_VALID;
	return sr;
}

enum scsi_sr scsi_invalid_cdb(struct scsi_task *t, uint16_t byte, int8_t bit)
{
	return set_sks(t, SR_INVALID_FIELD_IN_CDB, byte, bit, true);
}

enum scsi_sr scsi_invalid_param(struct scsi_task *t, uint16_t byte, int8_t bit)
{
	return set_sks(t, SR_INVALID_FIELD_IN_PARAM, byte, bit, false);
}

enum scsi_sr scsi_set_info(struct scsi_task *t, enum scsi_sr sr, uint64_t info)
{
	t->core.info_valid = true;
	t->core.info = info;
	return sr;
}

enum scsi_sr scsi_unit_attention(struct scsi_task *t, uint8_t asc, uint8_t ascq)
{
	t->core.ua_asc = asc;
	t->core.ua_ascq = ascq;
	return SR_UNIT_ATTENTION;
}

/* Sense-key-specific bytes for a field pointer (SPC-4 4.5.2.4.2): SKSV, C/D, BPV + bit. */
static void put_sks(uint8_t *p, const struct scsi_task *d)
{
	p[0] = 0x80 | (d->core.sks_cdb ? 0x40 : 0);
	if (d->core.sks_bit >= 0 && d->core.sks_bit <= 7)
		p[0] |= 0x08 | (uint8_t)d->core.sks_bit;
	p[1] = (uint8_t)(d->core.sks_field >> 8);
	p[2] = (uint8_t)d->core.sks_field;
}

size_t scsi_build_sense(uint8_t *buf, size_t buflen, bool desc, uint8_t key, uint8_t asc,
			uint8_t ascq, const struct scsi_task *d)
{
	uint8_t s[SCSI_SENSE_MAX];
	bool info = d && d->core.info_valid;
	bool sks = d && (d->core.flags & TF_SKS_VALID);
	size_t len;

	memset(s, 0, sizeof(s));
	if (desc) {
		/* 72h: current error, descriptor format */
		size_t off = 8;
		s[0] = 0x72;
		s[1] = key & 0x0f;
		s[2] = asc;
		s[3] = ascq;
		if (info) {
			s[off] = 0x00;     /* information descriptor */
			s[off + 1] = 0x0a;
			s[off + 2] = 0x80; /* VALID */
			for (int i = 0; i < 8; i++)
				s[off + 4 + i] = (uint8_t)(d->core.info >> (56 - 8 * i));
			off += 12;
		}
		if (sks) {
			s[off] = 0x02;     /* sense key specific descriptor */
			s[off + 1] = 0x06;
			put_sks(&s[off + 4], d);
			off += 8;
		}
		s[7] = (uint8_t)(off - 8);
		len = off;
	} else {
		/* 70h: current error, fixed format, 18 bytes */
		s[0] = 0x70;
		s[2] = key & 0x0f;
		if (info) {
			/* the fixed format INFORMATION field is 4 bytes; VALID only when it fits */
			if (d->core.info <= 0xffffffffull) {
				s[0] |= 0x80;
				for (int i = 0; i < 4; i++)
					s[3 + i] = (uint8_t)(d->core.info >> (24 - 8 * i));
			}
		}
		s[7] = 10;
		s[12] = asc;
		s[13] = ascq;
		if (sks)
			put_sks(&s[15], d);
		len = 18;
	}
	if (len > buflen)
		len = buflen;
	memcpy(buf, s, len);
	return len;
}

void scsi_task_set_result(struct scsi_task *t, enum scsi_sr sr, bool desc_sense)
{
	const struct scsi_sr_info *i = scsi_sr_info(sr);
	uint8_t asc = i->asc, ascq = i->ascq;

	t->core.sr = (int)sr;
	t->status = i->status;
	t->sense_len = 0;
	if (i->status != SAM_STAT_CHECK_CONDITION)
		return;
	if (sr == SR_UNIT_ATTENTION) {
		asc = t->core.ua_asc;
		ascq = t->core.ua_ascq;
	}
	t->sense_len = (uint8_t)scsi_build_sense(t->sense, sizeof(t->sense), desc_sense, i->key,
						 asc, ascq, t);
}

enum scsi_sr scsi_sr_from_bs(enum bs_status st, bool write)
{
	switch (st) {
	case BS_OK:
		return SR_OK;
	case BS_EIO:
		return write ? SR_MEDIUM_ERROR_WRITE : SR_MEDIUM_ERROR_READ;
	case BS_ENOSPC:
		return SR_SPACE_ALLOC_FAILED;
	case BS_EROFS:
		return SR_WRITE_PROTECTED;
	case BS_ENOTSUP:
		return SR_INVALID_OPCODE;
	case BS_ENOMEM:
		return SR_NO_MEMORY;
	case BS_ETIMEDOUT:
		/* ABORTED COMMAND: the initiator retries, on this path or (multipath) another */
		return SR_LU_TIMEOUT;
	case BS_EFENCED:
		/* NOT READY, target port in unavailable state: ALUA-aware multipath fails this
		 * path over at once instead of retrying a gateway that can never write again */
		return SR_ALUA_UNAVAILABLE;
	case BS_ETRANSITION:
		/* NOT READY, ASYMMETRIC ACCESS STATE TRANSITION: retried; the initiator re-reads
		 * REPORT TARGET PORT GROUPS and moves to the gateway that owns the LU */
		return SR_ALUA_TRANSITION;
	case BS_MISCOMPARE:
		return SR_MISCOMPARE;
	case BS_ERANGE:
		break;
	}
	return SR_INTERNAL_ERROR;
}
