/* MMC commands that describe the drive of a CD-ROM LU (SCST's vcdrom): GET CONFIGURATION, GET
 * EVENT STATUS NOTIFICATION (polled media events), MECHANISM STATUS, SET CD SPEED, GET
 * PERFORMANCE, and mode page 2Ah (MM capabilities).
 *
 * The drive is a tray-loading CD-ROM reader: profile CD-ROM (0008h), current when a medium is
 * loaded; it ejects (START STOP UNIT LOEJ), locks (PREVENT ALLOW MEDIUM REMOVAL), and reports
 * NEW MEDIA / MEDIA REMOVAL through GET EVENT STATUS NOTIFICATION, which Linux's sr polls to
 * notice a media change and Windows uses for autoplay. */
#include <string.h>

#include "scsi/scsi_core.h"

#define PROFILE_CDROM 0x0008
#define TRAY_LOADING  0x20 /* loading mechanism type 001b in bits 7-5 */
#define CD_SPEED_40X  7040 /* kB/s: Linux divides by 176 for its "NNx" */

static bool medium_present(struct scsi_dev *dev, uint8_t *event, bool consume)
{
	bool present;

	pthread_mutex_lock(&dev->lock);
	present = !dev->medium_removed;
	if (event)
		*event = dev->media_event;
	if (consume)
		dev->media_event = MEDIA_EV_NONE;
	pthread_mutex_unlock(&dev->lock);
	return present;
}

/* Feature descriptor header: code, version, persistent, current, additional length. */
static uint8_t *feature(uint8_t *p, uint16_t code, uint8_t version, bool persistent, bool current,
			uint8_t add_len)
{
	put_be16(p, code);
	p[2] = (uint8_t)(version << 2 | (persistent ? 0x02 : 0) | (current ? 0x01 : 0));
	p[3] = add_len;
	return p + 4;
}

/* Every feature of the drive, in feature-number order; returns the bytes written. */
static unsigned features(uint8_t *b, bool medium, bool locked, uint16_t from, uint8_t rt)
{
	uint8_t *p = b;
	struct {
		uint16_t code;
		bool current;
	} list[] = {{0x0000, true},   {0x0001, true},	{0x0002, true}, {0x0003, true},
		    {0x0010, medium}, {0x001e, medium}, {0x0100, true}};

	for (unsigned i = 0; i < sizeof(list) / sizeof(list[0]); i++) {
		uint16_t c = list[i].code;
		uint8_t *d;

		if (c < from || (rt == 1 && !list[i].current) || (rt == 2 && c != from))
			continue;
		switch (c) {
		case 0x0000: /* profile list: CD-ROM */
			d = feature(p, c, 0, true, true, 4);
			put_be16(d, PROFILE_CDROM);
			d[2] = medium ? 0x01 : 0; /* CurrentP */
			p = d + 4;
			break;
		case 0x0001: /* core: SCSI physical interface, device busy events */
			d = feature(p, c, 2, true, true, 8);
			put_be32(d, 0x00000001);
			d[4] = 0x01; /* DBE */
			p = d + 8;
			break;
		case 0x0002: /* morphing: operational change events, synchronous GESN */
			d = feature(p, c, 1, true, true, 4);
			d[0] = 0x02; /* OCEvent */
			p = d + 4;
			break;
		case 0x0003: /* removable medium: tray, eject, lock */
			d = feature(p, c, 0, true, true, 4);
			d[0] = (uint8_t)(TRAY_LOADING | 0x08 | 0x01 | (locked ? 0x04 : 0));
			p = d + 4;
			break;
		case 0x0010: /* random readable: 2048-byte blocks, blocking 1 */
			d = feature(p, c, 0, false, list[i].current, 8);
			put_be32(d, 2048);
			put_be16(d + 4, 1);
			p = d + 8;
			break;
		case 0x001e: /* CD read */
			d = feature(p, c, 2, false, list[i].current, 4);
			p = d + 4;
			break;
		case 0x0100: /* power management */
			p = feature(p, c, 0, true, true, 0);
			break;
		}
	}
	return (unsigned)(p - b);
}

enum scsi_sr mmc_get_configuration(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint8_t rt = t->cdb[1] & 0x03;
	uint16_t from = get_be16(t->cdb + 2), alloc = get_be16(t->cdb + 7);
	uint8_t b[128];
	bool medium, locked;
	unsigned len;

	if (rt == 3)
		return scsi_invalid_cdb(t, 1, 1);
	medium = medium_present(dev, NULL, false);
	pthread_mutex_lock(&dev->lock);
	locked = dev->prevent > 0;
	pthread_mutex_unlock(&dev->lock);
	memset(b, 0, sizeof(b));
	len = 8 + features(b + 8, medium, locked, from, rt);
	put_be32(b, len - 4);
	put_be16(b + 6, medium ? PROFILE_CDROM : 0);
	scsi_data_in(t, b, len < alloc ? len : alloc);
	return SR_OK;
}

/* Polled only; the one event class reported is media (class 4).  An event is reported once. */
enum scsi_sr mmc_get_event_status(struct scsi_task *t)
{
	uint8_t classes = t->cdb[4];
	uint16_t alloc = get_be16(t->cdb + 7);
	uint8_t b[8], event;
	unsigned len = 4;
	bool present;

	if (!(t->cdb[1] & 0x01)) /* asynchronous notification is not supported */
		return scsi_invalid_cdb(t, 1, 0);
	memset(b, 0, sizeof(b));
	b[3] = 0x10; /* supported event classes: media */
	if (classes & 0x10) {
		present = medium_present(t->core.dev, &event, true);
		b[2] = 0x04; /* media class */
		b[4] = event;
		b[5] = present ? 0x02 : 0x01; /* media present, else tray open */
		len = 8;
	} else {
		b[2] = 0x80; /* NEA: none of the requested classes is supported */
	}
	put_be16(b, (uint16_t)(len - 2));
	scsi_data_in(t, b, len < alloc ? len : alloc);
	return SR_OK;
}

enum scsi_sr mmc_mechanism_status(struct scsi_task *t)
{
	uint16_t alloc = get_be16(t->cdb + 8);
	uint8_t b[8];

	memset(b, 0, sizeof(b));
	if (!medium_present(t->core.dev, NULL, false))
		b[1] = 0x10; /* door open */
	scsi_data_in(t, b, sizeof(b) < alloc ? sizeof(b) : alloc);
	return SR_OK;
}

/* An image has no spindle: any speed is accepted and changes nothing. */
enum scsi_sr mmc_set_cd_speed(struct scsi_task *t)
{
	(void)t;
	return SR_OK;
}

unsigned mmc_caps_page(const struct scsi_dev *dev, uint8_t *p, bool changeable)
{
	memset(p, 0, 22);
	p[0] = 0x2a;
	p[1] = 0x14;
	if (changeable)
		return 22;
	p[2] = 0x00; /* reads CD-ROM only: no CD-R/RW, no DVD */
	p[3] = 0x00; /* writes nothing */
	p[6] = (uint8_t)(TRAY_LOADING | 0x08 | 0x01 | (dev->prevent ? 0x02 : 0)); /* eject, lock */
	put_be16(p + 8, CD_SPEED_40X);	/* maximum read speed (obsolete field, still read) */
	put_be16(p + 14, CD_SPEED_40X); /* current read speed */
	return 22;
}

/* GET PERFORMANCE (ACh), which Windows sends before it reads: type 00h (performance) is one
 * nominal descriptor over the whole disc at the drive's one speed, read only (a write
 * performance question, or no medium, gets the header alone); type 03h (write speed) has no
 * descriptor on a drive that cannot write.  Other types are for recorders. */
enum scsi_sr mmc_get_performance(struct scsi_task *t)
{
	uint8_t data_type = t->cdb[1] & 0x1f, type = t->cdb[10];
	uint16_t max_desc = get_be16(t->cdb + 8);
	struct scsi_dev *dev = t->core.dev;
	uint32_t alloc, len = 8;
	uint64_t n = 0;
	uint8_t b[8 + 16];

	if (type != 0x00 && type != 0x03)
		return scsi_invalid_cdb(t, 10, -1);
	memset(b, 0, sizeof(b));
	if (type == 0x00) {
		if ((data_type & 0x03) != 0) /* Except: only the nominal performance here */
			return scsi_invalid_cdb(t, 1, 1);
		b[4] = data_type & 0x04 ? 0x02 : 0; /* Write */
		if (medium_present(dev, NULL, false)) {
			pthread_mutex_lock(&dev->lock);
			n = dev->nr_blocks;
			pthread_mutex_unlock(&dev->lock);
		}
		if (!(data_type & 0x04) && n && max_desc) {
			uint32_t last = n - 1 > 0xffffffffull ? 0xffffffffu : (uint32_t)(n - 1);

			put_be32(b + 8, 0);		/* start LBA */
			put_be32(b + 12, CD_SPEED_40X); /* start performance, kB/s */
			put_be32(b + 16, last);		/* end LBA */
			put_be32(b + 20, CD_SPEED_40X);
			len += 16;
		}
	}
	put_be32(b, len - 4);
	/* the allocation length is the descriptor count: header plus that many descriptors */
	alloc = 8 + (uint32_t)max_desc * 16;
	scsi_data_in(t, b, len < alloc ? len : alloc);
	return SR_OK;
}
