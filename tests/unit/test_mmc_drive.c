/* scsi/mmc_drive.c and the CD-ROM drive behaviour around it: GET CONFIGURATION (profile,
 * features, RT), GET EVENT STATUS NOTIFICATION (media events on eject, load and media change),
 * MODE SENSE page 2Ah, PREVENT ALLOW MEDIUM REMOVAL against eject and media change,
 * MECHANISM STATUS, SET CD SPEED, scsi_dev_change_medium (SCST's vcdrom `filename`). */
#include <criterion/criterion.h>

#include "mmc_fixture.h"

static const uint8_t *find_feature(const uint8_t *b, uint32_t len, uint16_t code)
{
	for (uint32_t off = 8; off + 4 <= len; off += 4 + b[off + 3])
		if (get_be16(b + off) == code)
			return b + off;
	return NULL;
}

Test(mmc_drive, get_configuration, .init = cd_init, .fini = cd_fini)
{
	uint8_t cdb[10] = {0x46, 0, 0, 0, 0, 0, 0, 0, 128, 0}, b[128];
	const uint8_t *f;
	struct th_result r = cd_in(cdb, 10, b, 128);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b) + 4, r.data_len, "data length covers the rest");
	cr_assert_eq(get_be16(b + 6), 0x0008, "current profile CD-ROM");
	f = find_feature(b, r.data_len, 0x0000);
	cr_assert_not_null(f);
	cr_assert_eq(get_be16(f + 4), 0x0008);
	cr_assert_eq(f[6] & 1, 1, "CurrentP");
	f = find_feature(b, r.data_len, 0x0010);
	cr_assert_not_null(f, "random readable");
	cr_assert_eq(get_be32(f + 4), 2048);
	cr_assert_eq(f[2] & 1, 1, "current with a medium");
	f = find_feature(b, r.data_len, 0x0003);
	cr_assert_eq(f[4] & 0x29, 0x29, "tray, eject, lock");
	/* RT 2: that one feature only */
	cdb[1] = 2;
	put_be16(cdb + 2, 0x001e);
	r = cd_in(cdb, 10, b, 128);
	cr_assert_eq(r.data_len, 8 + 8);
	cr_assert_eq(get_be16(b + 8), 0x001e);
	/* RT 3 is reserved */
	cdb[1] = 3;
	r = cd_in(cdb, 10, b, 128);
	cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION);
}

static uint8_t media_event(struct th_nexus *nx, uint8_t *status)
{
	uint8_t b[8];
	struct th_result r = th_exec(nx, 0, (uint8_t[10]){0x4a, 1, 0, 0, 0x10, 0, 0, 0, 8, 0}, 10,
				     SCSI_DIR_READ, b, 8);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be16(b), 6);
	cr_assert_eq(b[2], 0x04, "media class");
	cr_assert_eq(b[3], 0x10, "supports media events");
	*status = b[5];
	return b[4];
}

Test(mmc_drive, eject_load_and_events, .init = cd_init, .fini = cd_fini)
{
	uint8_t st;
	struct th_result r;

	cr_assert_eq(media_event(&cd_nx, &st), 0);
	cr_assert_eq(st, 0x02, "media present");
	/* PREVENT: no eject */
	r = cd_in((uint8_t[6]){0x1e, 0, 0, 0, 1, 0}, 6, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = cd_in((uint8_t[6]){0x1b, 0, 0, 0, 0x02, 0}, 6, NULL, 0);
	cr_assert_eq(th_asc(&r), 0x53);
	cr_assert_eq(th_ascq(&r), 0x02, "MEDIUM REMOVAL PREVENTED");
	cr_assert_neq(scsi_dev_change_medium(cd_dev, cd_iso2, (char[64]){0}, 64), 0,
		      "no media change while prevented");
	r = cd_in((uint8_t[6]){0x1e, 0, 0, 0, 0, 0}, 6, NULL, 0);
	/* eject: MEDIA REMOVAL once, then no medium */
	r = cd_in((uint8_t[6]){0x1b, 0, 0, 0, 0x02, 0}, 6, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(media_event(&cd_nx, &st), 3);
	cr_assert_eq(st, 0x01, "tray open");
	cr_assert_eq(media_event(&cd_nx, &st), 0, "reported once");
	r = cd_in((uint8_t[6]){0}, 6, NULL, 0);
	cr_assert_eq(th_asc(&r), 0x3a);
	/* load: NEW MEDIA, readable again */
	r = cd_in((uint8_t[6]){0x1b, 0, 0, 0, 0x03, 0}, 6, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(media_event(&cd_nx, &st), 2);
	r = cd_in((uint8_t[6]){0}, 6, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
}

Test(mmc_drive, media_change_by_filename, .init = cd_init, .fini = cd_fini)
{
	char err[256] = "";
	uint8_t b[2048], st;
	struct th_result r;

	cr_assert_eq(scsi_dev_change_medium(cd_dev, cd_iso2, err, sizeof(err)), 0, "%s", err);
	/* every nexus: 28/00, then the new capacity */
	r = th_exec(&cd_nx2, 0, (uint8_t[6]){0}, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(th_sense_key(&r), SK_UNIT_ATTENTION);
	cr_assert_eq(th_asc(&r), 0x28);
	r = cd_in((uint8_t[6]){0}, 6, NULL, 0);
	cr_assert_eq(th_asc(&r), 0x28);
	cr_assert_eq(media_event(&cd_nx, &st), 2, "NEW MEDIA");
	r = cd_in((uint8_t[10]){0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 10, b, 8);
	cr_assert_eq(get_be32(b), 2 * MMC_BLOCKS - 1);
	r = cd_in((uint8_t[10]){0x28, 0, 0, 0, 0x02, 0x05, 0, 0, 1, 0}, 10, b, 2048);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[0], 0x05, "block 517 of the second image");
	/* "" ejects; a relative path is refused */
	cr_assert_neq(scsi_dev_change_medium(cd_dev, "rel/x.iso", err, sizeof(err)), 0);
	cr_assert_eq(scsi_dev_change_medium(cd_dev, "", err, sizeof(err)), 0);
	r = cd_in((uint8_t[6]){0}, 6, NULL, 0);
	cr_assert_eq(th_asc(&r), 0x28);
	r = cd_in((uint8_t[6]){0}, 6, NULL, 0);
	cr_assert_eq(th_asc(&r), 0x3a);
	/* a missing file leaves the drive empty, with the reason */
	cr_assert_neq(scsi_dev_change_medium(cd_dev, "/nonexistent/x.iso", err, sizeof(err)), 0);
	cr_assert_not_null(strstr(err, "/nonexistent/x.iso"), "%s", err);
}

Test(mmc_drive, mode_page_2a_and_others, .init = cd_init, .fini = cd_fini)
{
	uint8_t b[255];
	struct th_result r =
	    cd_in((uint8_t[10]){0x5a, 0x08, 0x2a, 0, 0, 0, 0, 0, 255, 0}, 10, b, 255);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[3], 0, "no WP, no DPOFUA on a CD-ROM");
	cr_assert_eq(b[8], 0x2a);
	cr_assert_eq(b[9], 0x14);
	cr_assert_eq(b[8 + 6] & 0x29, 0x29, "tray, eject, lock");
	cr_assert_eq(get_be16(b + 8 + 8) / 176, 40, "Linux prints 40x");
	/* 6-byte form with the 2048-byte block descriptor */
	r = cd_in((uint8_t[6]){0x1a, 0, 0x2a, 0, 255, 0}, 6, b, 255);
	cr_assert_eq(b[3], 8);
	cr_assert_eq(get_be24(b + 4 + 5), 2048);
	/* no caching page on a CD-ROM */
	r = cd_in((uint8_t[6]){0x1a, 0x08, 0x08, 0, 255, 0}, 6, b, 255);
	cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION);
	/* the disk's MODE SENSE has no page 2A */
	cr_assert_not_null(scsi_cmd_lookup((uint8_t[10]){0x5a}));
}

Test(mmc_drive, mechanism_status_and_speed, .init = cd_init, .fini = cd_fini)
{
	uint8_t b[8];
	struct th_result r = cd_in((uint8_t[12]){0xbd, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0}, 12, b, 8);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 8);
	cr_assert_eq(b[1] & 0x10, 0, "door closed");
	r = cd_in((uint8_t[12]){0xbb, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0}, 12, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	/* GESN asynchronous mode is refused */
	r = cd_in((uint8_t[10]){0x4a, 0, 0, 0, 0x10, 0, 0, 0, 8, 0}, 10, b, 8);
	cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION);
}

/* GET PERFORMANCE as Windows asks: nominal read performance over the disc, nothing to write
 * with, no write speeds, and the other types refused. */
Test(mmc_drive, get_performance, .init = cd_init, .fini = cd_fini)
{
	uint8_t cdb[12] = {0xac, 0x10, 0, 0, 0, 0, 0, 0, 0, 1, 0x00, 0}, b[64];
	struct th_result r = cd_in(cdb, 12, b, 64);

	cr_assert_eq(r.status, SAM_STAT_GOOD, "key %#x asc %#x", th_sense_key(&r), th_asc(&r));
	cr_assert_eq(r.data_len, 24);
	cr_assert_eq(get_be32(b), 20, "performance data length");
	cr_assert_eq(b[4], 0, "read, nominal");
	cr_assert_eq(get_be32(b + 8), 0, "start LBA");
	cr_assert_eq(get_be32(b + 12), 7040, "40x in kB/s");
	cr_assert_eq(get_be32(b + 16), MMC_BLOCKS - 1, "end LBA");
	cr_assert_eq(get_be32(b + 20), 7040);
	/* no descriptor asked for: the header */
	cdb[9] = 0;
	r = cd_in(cdb, 12, b, 64);
	cr_assert_eq(r.data_len, 8);
	/* write performance: the header, Write set, nothing else */
	cdb[1] = 0x14;
	cdb[9] = 4;
	r = cd_in(cdb, 12, b, 64);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 8);
	cr_assert_eq(get_be32(b), 4);
	cr_assert_eq(b[4], 0x02);
	/* write speed descriptors: none on a reader */
	cdb[1] = 0;
	cdb[10] = 0x03;
	r = cd_in(cdb, 12, b, 64);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 8);
	cr_assert_eq(get_be32(b), 4);
	/* defect status and the others: byte 10 */
	cdb[10] = 0x02;
	r = cd_in(cdb, 12, b, 64);
	cr_assert_eq(th_asc(&r), 0x24);
	cr_assert_eq(get_be16(r.sense + 16), 10);
	/* exception reporting of performance is not offered: byte 1 */
	cdb[10] = 0;
	cdb[1] = 0x11;
	r = cd_in(cdb, 12, b, 64);
	cr_assert_eq(th_asc(&r), 0x24);
	cr_assert_eq(get_be16(r.sense + 16), 1);
}

Test(mmc_drive, get_performance_without_medium, .init = cd_init_empty, .fini = cd_fini)
{
	uint8_t b[32];
	struct th_result r =
	    cd_in((uint8_t[12]){0xac, 0x10, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0}, 12, b, sizeof(b));

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 8, "no medium: no descriptor");
}
