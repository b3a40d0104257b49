/* scsi/mmc_disc.c: READ TOC/PMA/ATIP (formats 0, 1, 2; LBA and MSF; the SFF-8020 format bits),
 * READ DISC INFORMATION, READ TRACK INFORMATION on a vcdrom LU; and what a CD-ROM LU is as a
 * whole: type 05h, 2048-byte READ CAPACITY, READ(10/12) data, no writes, no medium. */
#include <criterion/criterion.h>

#include "mmc_fixture.h"

Test(mmc_disc, toc_format0_lba_and_msf, .init = cd_init, .fini = cd_fini)
{
	uint8_t cdb[10] = {0x43, 0, 0, 0, 0, 0, 0, 0, 64, 0}, b[64];
	struct th_result r = cd_in(cdb, 10, b, 64);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 20);
	cr_assert_eq(get_be16(b), 18, "TOC data length");
	cr_assert_eq(b[2], 1);
	cr_assert_eq(b[3], 1);
	cr_assert_eq(b[5], 0x14, "ADR 1, data track");
	cr_assert_eq(b[6], 1);
	cr_assert_eq(get_be32(b + 8), 0);
	cr_assert_eq(b[14], 0xaa, "lead-out");
	cr_assert_eq(get_be32(b + 16), MMC_BLOCKS);
	/* MSF: LBA 0 is 00:02:00; 512 blocks + 150 = 662 frames = 00:08:62 */
	cdb[1] = 0x02;
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(memcmp(b + 8, (uint8_t[]){0, 0, 2, 0}, 4), 0);
	cr_assert_eq(memcmp(b + 16, (uint8_t[]){0, 0, 8, 62}, 4), 0);
	/* only the lead-out */
	cdb[1] = 0;
	cdb[6] = 0xaa;
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(r.data_len, 12);
	cr_assert_eq(b[6], 0xaa);
	/* no track 2 */
	cdb[6] = 2;
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(th_asc(&r), 0x24);
}

Test(mmc_disc, toc_session_full_and_old_format_bits, .init = cd_init, .fini = cd_fini)
{
	uint8_t cdb[10] = {0x43, 0, 1, 0, 0, 0, 0, 0, 64, 0}, b[64];
	struct th_result r = cd_in(cdb, 10, b, 64);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 12);
	cr_assert_eq(get_be16(b), 10);
	cr_assert_eq(b[6], 1, "first track of the last session");
	cr_assert_eq(get_be32(b + 8), 0, "at LBA 0: no multisession offset");
	/* Linux's sr_vendor.c asks for the session TOC through the control byte (0x40) */
	memcpy(cdb, (uint8_t[10]){0x43, 0, 0, 0, 0, 0, 0, 0, 12, 0x40}, 10);
	r = cd_in(cdb, 10, b, 12);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be16(b), 10);
	/* full TOC: A0, A1, A2 (lead-out 00:08:62), track 1 */
	memcpy(cdb, (uint8_t[10]){0x43, 0x02, 2, 0, 0, 0, 0, 0, 64, 0}, 10);
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 4 + 4 * 11);
	cr_assert_eq(b[4 + 3], 0xa0);
	cr_assert_eq(b[4 + 8], 1);
	cr_assert_eq(b[4 + 22 + 3], 0xa2);
	cr_assert_eq(b[4 + 22 + 8], 0);
	cr_assert_eq(b[4 + 22 + 9], 8);
	cr_assert_eq(b[4 + 22 + 10], 62);
	/* PMA / ATIP: none */
	cdb[2] = 4;
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(th_asc(&r), 0x24);
}

Test(mmc_disc, disc_and_track_information, .init = cd_init, .fini = cd_fini)
{
	uint8_t cdb[10] = {0x51, 0, 0, 0, 0, 0, 0, 0, 64, 0}, b[64];
	struct th_result r = cd_in(cdb, 10, b, 64);

	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 34);
	cr_assert_eq(b[2], 0x0e, "complete session, complete disc");
	cr_assert_eq(b[4], 1, "one session");
	memcpy(cdb, (uint8_t[10]){0x52, 1, 0, 0, 0, 1, 0, 0, 64, 0}, 10);
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[2], 1);
	cr_assert_eq(get_be32(b + 24), MMC_BLOCKS, "track size");
	cdb[5] = 2;
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION);
}

Test(mmc_disc, a_cdrom_lu, .init = cd_init, .fini = cd_fini)
{
	uint8_t b[96], blk[2 * 2048];
	struct th_result r;

	r = cd_in((uint8_t[6]){0x12, 0, 0, 0, 96, 0}, 6, b, 96);
	cr_assert_eq(b[0], 0x05, "peripheral device type CD-ROM");
	cr_assert_eq(b[1], 0x80, "removable");
	cr_assert_eq(get_be16(b + 62), 0x0420, "MMC-5 version descriptor");
	r = cd_in((uint8_t[10]){0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 10, b, 8);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b), MMC_BLOCKS - 1);
	cr_assert_eq(get_be32(b + 4), 2048);
	r = cd_in((uint8_t[10]){0x28, 0, 0, 0, 0, 7, 0, 0, 2, 0}, 10, blk, sizeof(blk));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(blk[0], 7);
	cr_assert_eq(blk[2048 + 2047], 8);
	r = cd_in((uint8_t[12]){0xa8, 0, 0, 0, 1, 0xff, 0, 0, 0, 1, 0, 0}, 12, blk, 2048);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(blk[100], 0xff);
	/* a CD-ROM does not write, and has no block-device VPD pages */
	r = th_exec(&cd_nx, 0, (uint8_t[10]){0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0}, 10, SCSI_DIR_WRITE,
		    blk, 2048);
	cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(th_sense_key(&r), SK_ILLEGAL_REQUEST);
	cr_assert_eq(th_asc(&r), 0x20, "WRITE(10) is not a CD-ROM command");
	r = cd_in((uint8_t[6]){0x12, 1, 0xb0, 0, 64, 0}, 6, b, 64);
	cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION);
	r = cd_in((uint8_t[6]){0x12, 1, 0x00, 0, 64, 0}, 6, b, 64);
	cr_assert_eq(get_be16(b + 2), 4, "pages 00 80 83 86");
	/* and a disk does not answer MMC commands */
	cr_assert_not(
	    scsi_cmd_on_lu(scsi_cmd_lookup((uint8_t[10]){0x43}), &(struct scsi_dev){0}, NULL));
}

Test(mmc_disc, empty_drive_has_no_medium, .init = cd_init_empty, .fini = cd_fini)
{
	uint8_t b[64];
	struct th_result r = cd_in((uint8_t[6]){0}, 6, NULL, 0);

	cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(th_sense_key(&r), SK_NOT_READY);
	cr_assert_eq(th_asc(&r), 0x3a, "MEDIUM NOT PRESENT");
	r = cd_in((uint8_t[10]){0x43, 0, 0, 0, 0, 0, 0, 0, 64, 0}, 10, b, 64);
	cr_assert_eq(th_asc(&r), 0x3a);
	/* loading the tray does not make a medium appear */
	r = cd_in((uint8_t[6]){0x1b, 0, 0, 0, 0x03, 0}, 6, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = cd_in((uint8_t[6]){0}, 6, NULL, 0);
	cr_assert_eq(th_asc(&r), 0x3a);
}

/* READ SUB-CHANNEL shares opcode 42h with UNMAP: on a CD-ROM LU it is READ SUB-CHANNEL, with
 * its own CDB usage in REPORT SUPPORTED OPERATION CODES, and UNMAP is nowhere. */
Test(mmc_disc, read_subchannel_position_mcn_isrc, .init = cd_init, .fini = cd_fini)
{
	uint8_t cdb[10] = {0x42, 0, 0x40, 0x01, 0, 0, 0, 0, 64, 0}, b[64];
	struct th_result r = cd_in(cdb, 10, b, 64);

	cr_assert_eq(r.status, SAM_STAT_GOOD, "key %#x asc %#x", th_sense_key(&r), th_asc(&r));
	cr_assert_eq(r.data_len, 16);
	cr_assert_eq(b[1], 0x15, "no current audio status to return");
	cr_assert_eq(get_be16(b + 2), 12);
	cr_assert_eq(b[4], 0x01);
	cr_assert_eq(b[5], 0x14, "ADR 1, data track");
	cr_assert_eq(b[6], 1, "track 1");
	cr_assert_eq(b[7], 1, "index 1");
	cr_assert_eq(get_be32(b + 8), 0);
	cr_assert_eq(get_be32(b + 12), 0);
	/* MSF: absolute 00:02:00, relative 00:00:00 */
	cdb[1] = 0x02;
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(memcmp(b + 8, (uint8_t[]){0, 0, 2, 0, 0, 0, 0, 0}, 8), 0);
	/* media catalog number: none */
	cdb[1] = 0;
	cdb[3] = 0x02;
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(r.data_len, 24);
	cr_assert_eq(get_be16(b + 2), 20);
	cr_assert_eq(b[4], 0x02);
	cr_assert_eq(b[8] & 0x80, 0, "MCVAL 0");
	/* ISRC of track 1: none; of track 2: there is no track 2 */
	cdb[3] = 0x03;
	cdb[6] = 1;
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[8] & 0x80, 0, "TCVAL 0");
	cdb[6] = 2;
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(th_asc(&r), 0x24);
	cr_assert_eq(r.sense[15], 0xc0 | 0, "field pointer byte 6");
	cr_assert_eq(get_be16(r.sense + 16), 6);
	/* SUBQ 0: the header alone; an unknown format: byte 3 */
	cdb[2] = 0;
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(r.data_len, 4);
	cr_assert_eq(get_be16(b + 2), 0);
	cdb[2] = 0x40;
	cdb[3] = 0x04;
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(th_asc(&r), 0x24);
	cr_assert_eq(get_be16(r.sense + 16), 3);
	/* the allocation length cuts the answer */
	cdb[3] = 0x01;
	cdb[8] = 6;
	r = cd_in(cdb, 10, b, 64);
	cr_assert_eq(r.data_len, 6);
	/* RSOC on this LU names READ SUB-CHANNEL's CDB usage for 42h, not UNMAP's */
	r = cd_in((uint8_t[12]){0xa3, 0x0c, 0x01, 0x42, 0, 0, 0, 0, 0, 64, 0, 0}, 12, b, 64);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[1] & 7, 3, "supported");
	cr_assert_eq(get_be16(b + 2), 10);
	cr_assert_eq(memcmp(b + 4, (uint8_t[]){0x42, 0x02, 0x40, 0xff}, 4), 0);
	cr_assert_str_eq(scsi_cmd_lookup_dev((uint8_t[10]){0x42}, cd_dev)->name,
			 "READ SUB-CHANNEL");
	cr_assert_str_eq(scsi_cmd_lookup_dev((uint8_t[10]){0x42}, NULL)->name, "UNMAP");
}

Test(mmc_disc, read_subchannel_needs_a_medium, .init = cd_init_empty, .fini = cd_fini)
{
	uint8_t b[16];
	struct th_result r = cd_in((uint8_t[10]){0x42, 0, 0x40, 0x01, 0, 0, 0, 0, 16, 0}, 10, b, 16);

	cr_assert_eq(th_sense_key(&r), SK_NOT_READY);
	cr_assert_eq(th_asc(&r), 0x3a);
}
