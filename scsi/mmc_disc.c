/* MMC commands that describe the disc of a CD-ROM LU (SCST's vcdrom): READ TOC/PMA/ATIP,
 * READ DISC INFORMATION, READ TRACK INFORMATION, READ SUB-CHANNEL.
 *
 * The medium is an ISO 9660 image: one closed session holding one data track (mode 1,
 * recorded uninterrupted) from LBA 0 to the end of the file, then the lead-out.  That is what
 * Linux's sr/cdrom and isofs (multisession offset from the session TOC) and Windows' cdrom.sys
 * (TOC in LBA and MSF form, the full TOC) ask for before mounting. */
#include <string.h>

#include "scsi/scsi_core.h"

#define CTRL_DATA_TRACK 0x14 /* ADR 1 (Q sub-channel position), CONTROL 4 (data, uninterrupted) */
#define LEAD_OUT	0xaa

/* A CD address in MSF form: 75 frames a second, LBA 0 at 00:02:00 (the 150-frame pregap). */
static void put_msf(uint8_t *p, uint64_t lba)
{
	uint64_t f = lba + 150;

	p[0] = (uint8_t)(f / (60 * 75));
	p[1] = (uint8_t)(f / 75 % 60);
	p[2] = (uint8_t)(f % 75);
}

static void put_addr(uint8_t *p, uint64_t lba, bool msf)
{
	if (msf) {
		p[0] = 0;
		put_msf(p + 1, lba);
	} else {
		put_be32(p, lba > 0xffffffffull ? 0xffffffffu : (uint32_t)lba);
	}
}

static uint64_t blocks(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint64_t n;

	pthread_mutex_lock(&dev->lock);
	n = dev->nr_blocks;
	pthread_mutex_unlock(&dev->lock);
	return n;
}

/* Format 0: the track descriptors from the one asked for on, then the lead-out. */
static enum scsi_sr toc_tracks(struct scsi_task *t, uint8_t *b, unsigned *len, bool msf)
{
	uint8_t track = t->cdb[6];
	unsigned off = 4;

	if (track > 1 && track != LEAD_OUT)
		return scsi_invalid_cdb(t, 6, -1);
	b[2] = 1; /* first track */
	b[3] = 1; /* last track */
	if (track <= 1) {
		b[off + 1] = CTRL_DATA_TRACK;
		b[off + 2] = 1;
		put_addr(b + off + 4, 0, msf);
		off += 8;
	}
	b[off + 1] = CTRL_DATA_TRACK;
	b[off + 2] = LEAD_OUT;
	put_addr(b + off + 4, blocks(t), msf);
	off += 8;
	*len = off;
	return SR_OK;
}

/* Format 1: the first track of the last (only) session, at LBA 0: isofs finds no multisession
 * offset. */
static unsigned toc_session(uint8_t *b, bool msf)
{
	b[2] = 1; /* first complete session */
	b[3] = 1; /* last complete session */
	b[5] = CTRL_DATA_TRACK;
	b[6] = 1;
	put_addr(b + 8, 0, msf);
	return 12;
}

/* Format 2: the raw Q sub-channel TOC of session 1: points A0 (first track, disc type CD-ROM),
 * A1 (last track), A2 (lead-out start) and track 1, addresses in MSF. */
static unsigned toc_full(struct scsi_task *t, uint8_t *b)
{
	static const uint8_t points[] = {0xa0, 0xa1, 0xa2, 0x01};
	unsigned off = 4;

	b[2] = 1;
	b[3] = 1;
	for (unsigned i = 0; i < sizeof(points); i++, off += 11) {
		uint8_t *d = b + off;

		d[0] = 1; /* session */
		d[1] = CTRL_DATA_TRACK;
		d[3] = points[i];
		if (points[i] == 0xa0 || points[i] == 0xa1)
			d[8] = 1; /* PMIN: track number; PSEC 0: CD-DA or CD-ROM disc */
		else if (points[i] == 0xa2)
			put_msf(d + 8, blocks(t));
		else
			put_msf(d + 8, 0);
	}
	return off;
}

enum scsi_sr mmc_read_toc(struct scsi_task *t)
{
	bool msf = t->cdb[1] & 0x02;
	uint8_t format = t->cdb[2] & 0x0f;
	uint16_t alloc = get_be16(t->cdb + 7);
	uint8_t b[64];
	unsigned len = 0;
	enum scsi_sr sr = SR_OK;

	/* SFF-8020 drives took the format from the top bits of the control byte */
	if (!format)
		format = t->cdb[9] >> 6;
	memset(b, 0, sizeof(b));
	switch (format) {
	case 0:
		sr = toc_tracks(t, b, &len, msf);
		break;
	case 1:
		len = toc_session(b, msf);
		break;
	case 2:
		len = toc_full(t, b);
		break;
	default: /* PMA, ATIP, CD-TEXT: a pressed CD-ROM has none */
		return scsi_invalid_cdb(t, 2, 3);
	}
	if (sr != SR_OK)
		return sr;
	put_be16(b, (uint16_t)(len - 2));
	scsi_data_in(t, b, len < alloc ? len : alloc);
	return SR_OK;
}

/* Standard disc information (data type 000b): a complete, finalized CD-ROM. */
enum scsi_sr mmc_read_disc_info(struct scsi_task *t)
{
	uint16_t alloc = get_be16(t->cdb + 7);
	uint8_t b[34];

	if (t->cdb[1] & 0x07)
		return scsi_invalid_cdb(t, 1, 2);
	memset(b, 0, sizeof(b));
	put_be16(b, sizeof(b) - 2);
	b[2] = 0x0e; /* last session complete (11b), disc complete (10b), not erasable */
	b[3] = 1;    /* first track on the disc */
	b[4] = 1;    /* number of sessions */
	b[5] = 1;    /* first track in the last session */
	b[6] = 1;    /* last track in the last session */
	b[7] = 0x20; /* URU: unrestricted use */
	b[8] = 0x00; /* disc type: CD-DA or CD-ROM */
	put_be32(b + 16, 0xffffffffu); /* last session lead-in: none (complete disc) */
	put_be32(b + 20, 0xffffffffu); /* last possible lead-out: none */
	scsi_data_in(t, b, sizeof(b) < alloc ? sizeof(b) : alloc);
	return SR_OK;
}

/* Track information of track 1, the only one: asked for by track number (address type 01b),
 * session number 1 (10b), or an LBA inside it (00b). */
enum scsi_sr mmc_read_track_info(struct scsi_task *t)
{
	uint8_t type = t->cdb[1] & 0x03;
	uint32_t num = get_be32(t->cdb + 2);
	uint16_t alloc = get_be16(t->cdb + 7);
	uint64_t n = blocks(t);
	uint8_t b[36];

	if ((type == 0 && num >= n) || (type == 1 && num != 1) || (type == 2 && num != 1) ||
	    type == 3)
		return scsi_invalid_cdb(t, type == 3 ? 1 : 2, -1);
	memset(b, 0, sizeof(b));
	put_be16(b, sizeof(b) - 2);
	b[2] = 1;	    /* track number */
	b[3] = 1;	    /* session number */
	b[5] = 0x04;	    /* track mode: data, recorded uninterrupted */
	b[6] = 0x01;	    /* data mode 1 */
	put_be32(b + 8, 0); /* start */
	put_be32(b + 24, n > 0xffffffffull ? 0xffffffffu : (uint32_t)n); /* size */
	scsi_data_in(t, b, sizeof(b) < alloc ? sizeof(b) : alloc);
	return SR_OK;
}

/* READ SUB-CHANNEL (42h, the opcode a disk LU uses for UNMAP): Windows' cdrom.sys asks for the
 * current position (format 01h) and the media catalog number (02h).  Nothing ever plays audio
 * here, so the position is the start of track 1 and the audio status "none to return"; a
 * pressed data disc has no catalog number and no ISRC (MCVAL / TCVAL 0). */
enum scsi_sr mmc_read_subchannel(struct scsi_task *t)
{
	bool msf = t->cdb[1] & 0x02, subq = t->cdb[2] & 0x40;
	uint8_t format = t->cdb[3], track = t->cdb[6];
	uint16_t alloc = get_be16(t->cdb + 7);
	uint8_t b[24];
	unsigned len = 4;

	if (subq && (format < 1 || format > 3))
		return scsi_invalid_cdb(t, 3, -1);
	if (subq && format == 3 && track != 1)
		return scsi_invalid_cdb(t, 6, -1);
	memset(b, 0, sizeof(b));
	b[1] = 0x15; /* audio status: no current audio status to return */
	if (subq) {
		b[4] = format;
		switch (format) {
		case 1: /* CD current position: track 1, index 1, at its start */
			b[5] = CTRL_DATA_TRACK;
			b[6] = 1;
			b[7] = 1;
			put_addr(b + 8, 0, msf);
			if (msf)
				memset(b + 12, 0, 4); /* track relative 00:00:00 */
			len = 16;
			break;
		case 2: /* media catalog number: none (MCVAL 0) */
			len = 24;
			break;
		case 3: /* ISRC of track 1: none (TCVAL 0) */
			b[5] = CTRL_DATA_TRACK;
			b[6] = 1;
			len = 24;
			break;
		}
	}
	put_be16(b + 2, (uint16_t)(len - 4));
	scsi_data_in(t, b, len < alloc ? len : alloc);
	return SR_OK;
}
