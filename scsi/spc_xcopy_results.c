/* RECEIVE COPY RESULTS (SPC-3 6.18, the LID1 form): COPY STATUS, RECEIVE DATA, OPERATING
 * PARAMETERS and FAILED SEGMENT DETAILS for the copies this LU's copy manager ran for the
 * requesting I_T nexus. */
#include <string.h>

#include "scsi/spc_xcopy.h"

enum {
	RCR_COPY_STATUS = 0x00,
	RCR_RECEIVE_DATA = 0x01,
	RCR_OPERATING_PARAMS = 0x03,
	RCR_FAILED_SEGMENTS = 0x04,
};

/* COPY STATUS: COPY MANAGER STATUS values. */
enum { CMS_IN_PROGRESS = 0x00, CMS_DONE_OK = 0x01, CMS_DONE_ERROR = 0x02 };

static uint32_t operating_params(const struct scsi_dev *dev, uint8_t *b)
{
	static const uint8_t codes[] = {XC_SEG_BLOCK_TO_BLOCK, XC_CSCD_ID};

	b[4] = 0x01; /* SNLID: LIST ID USAGE 11b (no list identifier) is supported */
	put_be16(b + 8, XC_MAX_TARGETS);
	put_be16(b + 10, XC_MAX_SEGMENTS);
	put_be32(b + 12, XC_MAX_DESC_LIST_LEN);
	put_be32(b + 16, XC_MAX_SEGMENT_LEN);
	put_be32(b + 20, 0); /* MAXIMUM INLINE DATA LENGTH */
	put_be32(b + 24, 0); /* HELD DATA LIMIT: no segment type we offer holds data */
	put_be32(b + 28, 0); /* MAXIMUM STREAM DEVICE TRANSFER SIZE: no stream devices */
	put_be16(b + 34, XC_MAX_CONCURRENT);
	b[36] = XC_MAX_CONCURRENT;
	b[37] = dev->block_shift; /* DATA SEGMENT GRANULARITY (log2 bytes) */
	b[38] = 0;		  /* INLINE DATA GRANULARITY */
	b[39] = 0;		  /* HELD DATA GRANULARITY */
	b[43] = sizeof(codes);
	memcpy(b + 44, codes, sizeof(codes));
	put_be32(b, 44 + sizeof(codes) - 4);
	return 44 + sizeof(codes);
}

/* TRANSFER COUNT with the smallest unit that fits 32 bits (bytes, KiB, MiB, ...). */
static void put_transfer_count(uint8_t *b, uint64_t bytes)
{
	uint8_t units = 0;

	while (bytes > 0xffffffffull) {
		bytes >>= 10;
		units++;
	}
	b[7] = units;
	put_be32(b + 8, (uint32_t)bytes);
}

static uint32_t copy_status(const struct xc_op *op, uint8_t *b)
{
	put_be32(b, 8);
	b[4] = op->state == XC_RUNNING	 ? CMS_IN_PROGRESS
	       : op->state == XC_DONE_OK ? CMS_DONE_OK
					 : CMS_DONE_ERROR; /* HDD = 0: no held data */
	put_be16(b + 5, op->segs_done);
	put_transfer_count(b, op->bytes_done);
	return 12;
}

/* Returns the length; *discard when the details were handed out and may be forgotten. */
static uint32_t failed_segments(const struct scsi_dev *dev, const struct xc_op *op, uint8_t *b,
				bool *discard)
{
	uint32_t slen;

	*discard = false;
	if (op->state != XC_DONE_ERROR) {
		put_be32(b, 0); /* running, or nothing failed: no details */
		return 4;
	}
	slen = (uint32_t)scsi_build_sense(b + 60, SCSI_SENSE_MAX, dev->mode.d_sense, op->sense_key,
					  op->asc, op->ascq, NULL);
	put_be32(b, 56 + slen);
	b[56] = SAM_STAT_CHECK_CONDITION; /* COPY COMMAND STATUS */
	put_be16(b + 58, (uint16_t)slen);
	*discard = true;
	return 60 + slen;
}

enum scsi_sr spc_receive_copy_results(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	struct scsi_xcopy *xc = dev ? dev->xc : NULL;
	uint8_t sa = t->cdb[1] & 0x1f, list_id = t->cdb[2];
	uint32_t alloc = get_be32(t->cdb + 10), len;
	uint8_t b[60 + SCSI_SENSE_MAX];
	struct xc_op *op;
	bool discard = false;

	if (!xc || !t->nexus)
		return SR_INTERNAL_ERROR;
	memset(b, 0, sizeof(b));
	if (sa == RCR_OPERATING_PARAMS) {
		len = operating_params(dev, b);
		scsi_data_in(t, b, len < alloc ? len : alloc);
		return SR_OK;
	}
	if (sa != RCR_COPY_STATUS && sa != RCR_RECEIVE_DATA && sa != RCR_FAILED_SEGMENTS)
		return scsi_invalid_cdb(t, 1, 4);
	pthread_mutex_lock(&xc->mu);
	op = xc_op_find(xc, t->nexus, list_id);
	if (!op) {
		pthread_mutex_unlock(&xc->mu);
		return scsi_invalid_cdb(t, 2, -1); /* no such LIST IDENTIFIER for this nexus */
	}
	switch (sa) {
	case RCR_COPY_STATUS:
		len = copy_status(op, b);
		break;
	case RCR_RECEIVE_DATA:
		put_be32(b, 0); /* we never hold data */
		len = 4;
		break;
	default:
		len = failed_segments(dev, op, b, &discard);
		/* forgotten only once the initiator got all of it (SPC-3 6.18.6) */
		if (discard && alloc >= len && t->exp_xfer_len >= len)
			op->state = XC_FREE;
		break;
	}
	pthread_mutex_unlock(&xc->mu);
	scsi_data_in(t, b, len < alloc ? len : alloc);
	return SR_OK;
}
