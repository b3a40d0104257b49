/* Decoding READ/WRITE-family CDBs (6/10/12/16-byte layouts and the odd ones: COMPARE AND WRITE,
 * WRITE ATOMIC) in one place, and the checks every block command shares: protection
 * information (we have none), Block Limits maximum transfer length, LBA range, and the
 * sanitize failure mode. */
#include "scsi/sbc.h"

void sbc_decode(const struct scsi_task *t, struct sbc_cdb *c)
{
	const uint8_t *cdb = t->cdb;
	bool flags = true; /* byte 1 carries *PROTECT / DPO / FUA */

	memset(c, 0, sizeof(*c));
	switch (cdb[0]) {
	case 0x08: /* READ(6) */
	case 0x0a: /* WRITE(6) */
		c->lba = get_be24(cdb + 1) & 0x1fffff;
		c->nblocks = cdb[4] ? cdb[4] : 256; /* SBC: a zero length means 256 blocks */
		c->len_byte = 4;
		return;
	case 0x34: /* PRE-FETCH(10) */
	case 0x35: /* SYNCHRONIZE CACHE(10) */
		flags = false;
		/* fall through */
	case 0x28: /* READ(10) */
	case 0x2a: /* WRITE(10) */
	case 0x2e: /* WRITE AND VERIFY(10) */
	case 0x2f: /* VERIFY(10) */
	case 0x41: /* WRITE SAME(10) */
		c->lba = get_be32(cdb + 2);
		c->nblocks = get_be16(cdb + 7);
		c->len_byte = 7;
		break;
	case 0xa8: /* READ(12) */
	case 0xaa: /* WRITE(12) */
	case 0xae: /* WRITE AND VERIFY(12) */
	case 0xaf: /* VERIFY(12) */
		c->lba = get_be32(cdb + 2);
		c->nblocks = get_be32(cdb + 6);
		c->len_byte = 6;
		break;
	case 0x90: /* PRE-FETCH(16) */
	case 0x91: /* SYNCHRONIZE CACHE(16) */
		flags = false;
		/* fall through */
	case 0x88: /* READ(16) */
	case 0x8a: /* WRITE(16) */
	case 0x8b: /* ORWRITE(16) */
	case 0x8e: /* WRITE AND VERIFY(16) */
	case 0x8f: /* VERIFY(16) */
	case 0x93: /* WRITE SAME(16) */
		c->lba = get_be64(cdb + 2);
		c->nblocks = get_be32(cdb + 10);
		c->len_byte = 10;
		break;
	case 0x89: /* COMPARE AND WRITE: one-byte NUMBER OF LOGICAL BLOCKS */
		c->lba = get_be64(cdb + 2);
		c->nblocks = cdb[13];
		c->len_byte = 13;
		break;
	case 0x9c: /* WRITE ATOMIC(16): two-byte TRANSFER LENGTH */
		c->lba = get_be64(cdb + 2);
		c->nblocks = get_be16(cdb + 12);
		c->len_byte = 12;
		break;
	default:
		return;
	}
	if (flags) {
		c->protect = cdb[1] >> 5;
		c->dpo = cdb[1] & 0x10;
		/* VERIFY and WRITE AND VERIFY have BYTCHK where the others have FUA */
		if (cdb[0] != 0x2e && cdb[0] != 0x2f && cdb[0] != 0xae && cdb[0] != 0xaf &&
		    cdb[0] != 0x8e && cdb[0] != 0x8f && cdb[0] != 0x41 && cdb[0] != 0x93)
			c->fua = cdb[1] & 0x08;
	}
}

enum scsi_sr sbc_check_protect(struct scsi_task *t, const struct sbc_cdb *c)
{
	if (c->protect)
		return scsi_invalid_cdb(t, 1, 7);
	return SR_OK;
}

enum scsi_sr sbc_check_range(struct scsi_task *t, uint64_t lba, uint64_t n)
{
	uint64_t nr = t->core.dev->nr_blocks;

	if (lba > nr || n > nr - lba)
		return SR_LBA_OUT_OF_RANGE;
	return SR_OK;
}

enum scsi_sr sbc_check_len(struct scsi_task *t, const struct sbc_cdb *c, uint64_t max)
{
	if (c->nblocks > max)
		return scsi_invalid_cdb(t, c->len_byte, -1);
	return SR_OK;
}

enum scsi_sr sbc_check_xfer(struct scsi_task *t, const struct sbc_cdb *c)
{
	/* every READ and WRITE comes here: the one limit, not the whole Block Limits page */
	return sbc_check_xfer_max(t, c, sbc_max_xfer_blocks(t->core.dev, t->nexus));
}

enum scsi_sr sbc_check_xfer_max(struct scsi_task *t, const struct sbc_cdb *c, uint64_t max)
{
	enum scsi_sr sr;

	sr = sbc_check_protect(t, c);
	if (sr != SR_OK)
		return sr;
	sr = sbc_check_len(t, c, max);
	if (sr != SR_OK)
		return sr;
	sr = sbc_check_range(t, c->lba, c->nblocks);
	if (sr != SR_OK)
		return sr;
	return sbc_check_medium(t);
}

enum scsi_sr sbc_check_medium(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	bool failed = __atomic_load_n(&dev->sanitize_failed, __ATOMIC_ACQUIRE);

	return failed ? SR_SANITIZE_FAILED : SR_OK;
}

bool sbc_write_durable(const struct scsi_dev *dev, bool fua)
{
	if (dev->bs->nv_cache)
		return false;
	/* mode.wce changes under dev->lock (MODE SELECT); a racing write may see either value,
	 * which is what a concurrent MODE SELECT allows. */
	return fua || dev->bs->write_through || !__atomic_load_n(&dev->mode.wce, __ATOMIC_RELAXED);
}
