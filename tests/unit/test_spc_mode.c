/* scsi/spc_mode.c: MODE SENSE(6/10) and MODE SELECT(6/10). */
#include "spc_fixture.h"

static struct th_result sense6(struct th_nexus *n, uint8_t b1, uint8_t pcpage, uint8_t sub,
			       uint8_t alloc, uint8_t *buf, uint32_t exp)
{
	uint8_t cdb[6] = {0x1a, b1, pcpage, sub, alloc, 0};
	return th_exec(n, 0, cdb, 6, SCSI_DIR_READ, buf, exp);
}

static struct th_result sense10(uint8_t b1, uint8_t pcpage, uint16_t alloc, uint8_t *buf)
{
	uint8_t cdb[10] = {0x5a, b1, pcpage, 0, 0, 0, 0, (uint8_t)(alloc >> 8), (uint8_t)alloc, 0};
	return th_exec(&fx_nx, 0, cdb, 10, SCSI_DIR_READ, buf, alloc);
}

static struct th_result select6(struct th_nexus *n, uint8_t b1, const uint8_t *pl, uint8_t len)
{
	uint8_t cdb[6] = {0x15, b1, 0, 0, len, 0};
	return th_exec(n, 0, cdb, 6, SCSI_DIR_WRITE, (void *)pl, len);
}

static struct th_result select10(uint8_t b1, const uint8_t *pl, uint16_t len)
{
	uint8_t cdb[10] = {0x55, b1, 0, 0, 0, 0, 0, (uint8_t)(len >> 8), (uint8_t)len, 0};
	return th_exec(&fx_nx, 0, cdb, 10, SCSI_DIR_WRITE, (void *)pl, len);
}

/* Find page `code` in MODE SENSE(6) data. */
static const uint8_t *page6(const uint8_t *b, uint8_t code)
{
	unsigned len = b[0] + 1u, off = 4u + b[3];
	while (off + 2 <= len) {
		if ((b[off] & 0x3f) == code)
			return b + off;
		off += 2u + b[off + 1];
	}
	return NULL;
}

BOTH_STORES(mode, sense6_all_pages)
{
	uint8_t b[255];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	r = sense6(&fx_nx, 0, 0x3f, 0, 255, b, 255);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	/* header 4 + block descriptor 8 + pages 12 + 20 + 12 + 12 */
	cr_assert_eq(r.data_len, 68);
	cr_assert_eq(b[0], 67);
	cr_assert_eq(b[1], 0);
	cr_assert_eq(b[2], 0x10, "DPOFUA, not write protected");
	cr_assert_eq(b[3], 8);
	cr_assert_eq(get_be32(b + 4), fx_dev->nr_blocks);
	cr_assert_eq(get_be24(b + 9), 512);
	cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(r.resid, 255 - 68);
	const uint8_t *p = page6(b, 0x08);
	cr_assert_not_null(p);
	cr_assert_eq(p[1], 0x12);
	cr_assert_eq(p[2] & 0x04, 0x04, "WCE on by default (not write_through)");
	p = page6(b, 0x0a);
	cr_assert_not_null(p);
	cr_assert_eq(p[1], 0x0a);
	cr_assert_eq(p[2] & 0x04, 0, "D_SENSE off");
	cr_assert_eq(p[3] & 0xf0, 0x10, "QAM 1");
	cr_assert_not_null(page6(b, 0x01));
	cr_assert_not_null(page6(b, 0x1c));
	/* DBD */
	r = sense6(&fx_nx, 0x08, 0x3f, 0, 255, b, 255);
	cr_assert_eq(r.data_len, 60);
	cr_assert_eq(b[3], 0);
	/* subpage FFh with page 3Fh is allowed too */
	r = sense6(&fx_nx, 0x08, 0x3f, 0xff, 255, b, 255);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 60);
}

BOTH_STORES(mode, sense6_alloc_len_and_residuals)
{
	uint8_t b[8];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	/* allocation length 4: 4 bytes, no overflow (libiscsi ModeSense6.Residuals) */
	r = sense6(&fx_nx, 0, 0x3f, 0, 4, b, 4);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 4);
	cr_assert_eq(r.resid_kind, SCSI_RESID_NONE);
	cr_assert_eq(b[0], 67, "length of everything, not of what was sent");
}

BOTH_STORES(mode, sense_pc_values)
{
	uint8_t b[255];
	struct th_result r;
	const uint8_t *p;

	th_clear_ua(&fx_nx, 0);
	r = sense6(&fx_nx, 0x08, 0x40 | 0x0a, 0, 255, b, 255); /* changeable */
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	p = page6(b, 0x0a);
	cr_assert_eq(p[2], 0x04, "D_SENSE changeable");
	cr_assert_eq(p[3], 0x00, "QErr not changeable");
	cr_assert_eq(p[4], 0x08, "SWP changeable");
	cr_assert_eq(p[5], 0x40, "TAS changeable");
	r = sense6(&fx_nx, 0x08, 0x40 | 0x08, 0, 255, b, 255);
	p = page6(b, 0x08);
	cr_assert_eq(p[2], 0x04, "only WCE");
	r = sense6(&fx_nx, 0x08, 0x40 | 0x01, 0, 255, b, 255);
	p = page6(b, 0x01);
	for (int i = 2; i < 12; i++)
		cr_assert_eq(p[i], 0);
	/* default */
	pthread_mutex_lock(&fx_dev->lock);
	fx_dev->mode.d_sense = true;
	pthread_mutex_unlock(&fx_dev->lock);
	r = sense6(&fx_nx, 0x08, 0x80 | 0x0a, 0, 255, b, 255);
	cr_assert_eq(page6(b, 0x0a)[2] & 0x04, 0, "default D_SENSE is the configured one");
	r = sense6(&fx_nx, 0x08, 0x0a, 0, 255, b, 255);
	cr_assert_eq(page6(b, 0x0a)[2] & 0x04, 0x04, "current");
	/* saved */
	r = sense6(&fx_nx, 0x08, 0xc0 | 0x0a, 0, 255, b, 255);
	/* (the CHECK CONDITION above is in descriptor format now: D_SENSE is on) */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x39, 0x00);
	cr_assert_eq(r.sense[0], 0x72);
}

BOTH_STORES(mode, sense_cdb_errors)
{
	uint8_t b[255];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	r = sense6(&fx_nx, 0, 0x05, 0, 255, b, 255);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, 5, 2);
	r = sense6(&fx_nx, 0, 0x0a, 0x01, 255, b, 255);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, -1, 3);
	r = sense6(&fx_nx, 0x10, 0x0a, 0, 255, b, 255); /* LLBAA is not in MODE SENSE(6) */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, 4, 1);
}

BOTH_STORES(mode, sense10_long_lba)
{
	uint8_t b[255];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	r = sense10(0x10, 0x08, 255, b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 8 + 16 + 20);
	cr_assert_eq(get_be16(b), 8 + 16 + 20 - 2);
	cr_assert_eq(b[4] & 1, 1, "LONGLBA");
	cr_assert_eq(get_be16(b + 6), 16);
	cr_assert_eq(get_be64(b + 8), fx_dev->nr_blocks);
	cr_assert_eq(get_be32(b + 8 + 12), 512);
	cr_assert_eq(b[24], 0x08);
	r = sense10(0, 0x08, 255, b);
	cr_assert_eq(get_be16(b + 6), 8);
	cr_assert_eq(b[4], 0);
	cr_assert_eq(r.data_len, 8 + 8 + 20);
}

BOTH_STORES(mode, write_protect_bit)
{
	uint8_t b[255];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	th_clear_ua(&fx_nx2, 0);
	fx_nx.ents[0].read_only = true;
	r = sense6(&fx_nx, 0x08, 0x0a, 0, 255, b, 255);
	cr_assert_eq(b[2] & 0x80, 0x80, "WP for a read-only LUN");
	r = sense6(&fx_nx2, 0x08, 0x0a, 0, 255, b, 255);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[2] & 0x80, 0, "the other nexus maps it read-write");
}

/* Take the current control page via MODE SENSE(6), DBD=0, return its parameter list length. */
static uint8_t control_params(struct th_nexus *n, uint8_t *pl)
{
	uint8_t b[255];
	struct th_result r = sense6(n, 0, 0x0a, 0, 255, b, 255);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	memcpy(pl, b, r.data_len);
	pl[0] = 0; /* mode data length is reserved in MODE SELECT */
	return (uint8_t)r.data_len;
}

BOTH_STORES(mode, select_swp_then_write_protected)
{
	uint8_t pl[64], b[255];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	th_clear_ua(&fx_nx2, 0);
	uint8_t len = control_params(&fx_nx, pl);
	cr_assert_eq(len, 4 + 8 + 12);
	pl[12 + 4] |= 0x08; /* SWP */
	r = select6(&fx_nx, 0x10, pl, len);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.resid_kind, SCSI_RESID_NONE);
	r = sense6(&fx_nx, 0x08, 0x0a, 0, 255, b, 255);
	cr_assert_eq(b[4 + 4] & 0x08, 0x08, "SWP set");
	cr_assert_eq(b[2] & 0x80, 0x80, "WP");
	uint8_t w10[10] = {0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0};
	uint8_t data[512] = {0};
	r = th_exec(&fx_nx, 0, w10, 10, SCSI_DIR_WRITE, data, 512);
	th_assert_sense(r, SK_DATA_PROTECT, 0x27, 0x00);
	/* the other nexus is told the mode parameters changed; the selecting one is not */
	r = th_exec(&fx_nx2, 0, (uint8_t[6]){0}, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x01);
	r = th_exec(&fx_nx, 0, (uint8_t[6]){0}, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	/* clear it again, through MODE SELECT(10) without block descriptor */
	uint8_t pl10[8 + 12] = {0};
	memcpy(pl10 + 8, pl + 12, 12);
	pl10[8 + 4] &= (uint8_t)~0x08;
	r = select10(0x10, pl10, sizeof(pl10));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_not(fx_dev->mode.swp);
}

BOTH_STORES(mode, select_d_sense_switches_sense_format)
{
	uint8_t pl[64];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	uint8_t len = control_params(&fx_nx, pl);
	pl[12 + 2] |= 0x04; /* D_SENSE */
	r = select6(&fx_nx, 0x10, pl, len);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = th_exec(&fx_nx, 0, (uint8_t[6]){0x02}, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x20, 0x00);
	cr_assert_eq(r.sense[0], 0x72);
}

BOTH_STORES(mode, select_caching_wce)
{
	uint8_t pl[4 + 20] = {0};
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	pl[4] = 0x08;
	pl[5] = 0x12;
	/* WCE 0 (currently 1) */
	r = select6(&fx_nx, 0x10, pl, sizeof(pl));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_not(fx_dev->mode.wce);
	/* RCD is not changeable */
	pl[6] = 0x01;
	r = select6(&fx_nx, 0x10, pl, sizeof(pl));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	fx_assert_sks(r, 0, 0, 6);
}

BOTH_STORES(mode, select_errors)
{
	uint8_t pl[64];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	uint8_t len = control_params(&fx_nx, pl);
	/* SP: no saved pages */
	r = select6(&fx_nx, 0x11, pl, len);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, 0, 1);
	/* PF=0 with parameters */
	r = select6(&fx_nx, 0x00, pl, len);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, 4, 1);
	/* a non-changeable field: QErr */
	pl[12 + 3] ^= 0x02;
	r = select6(&fx_nx, 0x10, pl, len);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	fx_assert_sks(r, 0, 1, 15);
	pl[12 + 3] ^= 0x02;
	/* wrong page length */
	pl[13] = 0x0b;
	r = select6(&fx_nx, 0x10, pl, len);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	fx_assert_sks(r, 0, -1, 13);
	pl[13] = 0x0a;
	/* an unknown page */
	pl[12] = 0x19;
	r = select6(&fx_nx, 0x10, pl, len);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	fx_assert_sks(r, 0, 5, 12);
	pl[12] = 0x0a;
	/* block length cannot change */
	put_be24(pl + 4 + 5, 4096);
	r = select6(&fx_nx, 0x10, pl, len);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	fx_assert_sks(r, 0, -1, 9);
	put_be24(pl + 4 + 5, 512);
	/* the page is cut short by the parameter list length */
	r = select6(&fx_nx, 0x10, pl, len - 3);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	/* shorter than the header */
	r = select6(&fx_nx, 0x10, pl, 3);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	/* parameter list length 0 is no change at all */
	r = select6(&fx_nx, 0x10, pl, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	/* nothing was applied by any failed command */
	cr_assert_eq(fx_dev->mode.qerr, 0);
	/* MRIE out of range */
	uint8_t iec[4 + 12] = {0, 0, 0, 0, 0x1c, 0x0a, 0, 7};
	r = select6(&fx_nx, 0x10, iec, sizeof(iec));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	fx_assert_sks(r, 0, 3, 7);
	iec[7] = 4;
	r = select6(&fx_nx, 0x10, iec, sizeof(iec));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(fx_dev->mode.mrie, 4);
}

BOTH_STORES(mode, select_is_all_or_nothing)
{
	uint8_t pl[4 + 12 + 20] = {0};
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	th_clear_ua(&fx_nx2, 0);
	/* control page with D_SENSE (fine), then caching with RCD (not changeable) */
	pl[4] = 0x0a;
	pl[5] = 0x0a;
	pl[6] = 0x04 | 0x02;
	pl[7] = 0x10;
	pl[16] = 0x08;
	pl[17] = 0x12;
	pl[18] = 0x04 | 0x01;
	r = select6(&fx_nx, 0x10, pl, sizeof(pl));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	fx_assert_sks(r, 0, 0, 18);
	cr_assert_not(fx_dev->mode.d_sense, "the valid first page was not applied");
	r = th_exec(&fx_nx2, 0, (uint8_t[6]){0}, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD, "no UA for a change that did not happen");
}
