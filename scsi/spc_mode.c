/* MODE SENSE(6/10) and MODE SELECT(6/10) (SPC-4 6.11-6.14, 7.5; SBC-3 6.4).
 *
 * Pages: 01h read-write error recovery, 08h caching, 0Ah control, 1Ch informational exceptions
 * control; 3Fh returns all of them.  A CD-ROM LU has 2Ah MM capabilities (mmc_drive.c) instead
 * of 08h, and no WP / DPOFUA bits.  No subpages (subpage 00h, or FFh with page 3Fh).
 * Changeable (the PC=01b mask): caching WCE; control D_SENSE, SWP, TAS; informational
 * exceptions DEXCPT and MRIE.  QErr is reported as configured but only 00b behaviour is
 * implemented, so it is not changeable.  Saved values are not supported: PC=11b and SP=1 are
 * refused (39/00 and 24/00 respectively, as SPC-4 says for a device without saved pages).
 *
 * MODE SELECT validates the whole parameter list before applying any of it; a byte that differs
 * from the current value outside the changeable mask is INVALID FIELD IN PARAMETER LIST with
 * the field pointer at that byte of the list; a change raises MODE PARAMETERS CHANGED (2A/01)
 * for every other I_T nexus. */
#include <string.h>

#include "scsi/scsi_core.h"

enum { PC_CURRENT = 0, PC_CHANGEABLE = 1, PC_DEFAULT = 2, PC_SAVED = 3 };

struct mode_vals {
	bool wce, rcd, d_sense, swp, tas, dexcpt, awre, arre;
	uint8_t qerr, mrie;
};

static void vals_current(const struct scsi_dev *dev, struct mode_vals *v)
{
	v->wce = dev->mode.wce;
	v->rcd = dev->mode.rcd;
	v->d_sense = dev->mode.d_sense;
	v->swp = dev->mode.swp;
	v->tas = dev->mode.tas;
	v->dexcpt = dev->mode.dexcpt;
	v->awre = dev->mode.awre;
	v->arre = dev->mode.arre;
	v->qerr = dev->mode.qerr;
	v->mrie = dev->mode.mrie;
}

/* What scsi_dev_open() sets from the configuration. */
static void vals_default(const struct scsi_dev *dev, struct mode_vals *v)
{
	memset(v, 0, sizeof(*v));
	v->wce = dev->bs ? !dev->bs->write_through : true;
	v->d_sense = dev->p.d_sense;
	v->swp = dev->p.swp;
	v->tas = dev->p.tas;
	v->qerr = dev->p.qerr;
}

static void vals_changeable(struct mode_vals *v)
{
	memset(v, 0, sizeof(*v));
	v->wce = v->d_sense = v->swp = v->tas = v->dexcpt = true;
	v->mrie = 0x0f;
}

/* Page builders: write the page (header included) and return its length. */
static unsigned page_err_recovery(uint8_t *p, const struct mode_vals *v)
{
	memset(p, 0, 12);
	p[0] = 0x01;
	p[1] = 0x0a;
	p[2] = (uint8_t)((v->awre ? 0x80 : 0) | (v->arre ? 0x40 : 0));
	return 12;
}

static unsigned page_caching(uint8_t *p, const struct mode_vals *v)
{
	memset(p, 0, 20);
	p[0] = 0x08;
	p[1] = 0x12;
	p[2] = (uint8_t)((v->wce ? 0x04 : 0) | (v->rcd ? 0x01 : 0));
	return 20;
}

static unsigned page_control(uint8_t *p, const struct mode_vals *v, int pc)
{
	memset(p, 0, 12);
	p[0] = 0x0a;
	p[1] = 0x0a;
	/* TST 000b (one task set for all nexuses); GLTSD: no log parameters are saved */
	p[2] = (uint8_t)((v->d_sense ? 0x04 : 0) | (pc == PC_CHANGEABLE ? 0 : 0x02));
	/* queue algorithm modifier 1: unrestricted reordering of SIMPLE tasks */
	p[3] = (uint8_t)((pc == PC_CHANGEABLE ? 0 : 0x10) | (v->qerr & 3) << 1);
	p[4] = v->swp ? 0x08 : 0;
	p[5] = v->tas ? 0x40 : 0;
	return 12;
}

static unsigned page_iec(uint8_t *p, const struct mode_vals *v)
{
	memset(p, 0, 12);
	p[0] = 0x1c;
	p[1] = 0x0a;
	p[2] = v->dexcpt ? 0x08 : 0;
	p[3] = v->mrie & 0x0f;
	return 12;
}

static const uint8_t disk_pages[] = {0x01, 0x08, 0x0a, 0x1c};
/* A CD-ROM has no caching page and adds MM capabilities (MMC-5 7.3) */
static const uint8_t cdrom_pages[] = {0x01, 0x0a, 0x1c, 0x2a};

static const uint8_t *page_codes(const struct scsi_dev *dev, unsigned *n)
{
	bool cd = dev->p.type == SCSI_TYPE_CDROM;

	*n = cd ? sizeof(cdrom_pages) : sizeof(disk_pages);
	return cd ? cdrom_pages : disk_pages;
}

static unsigned build_page(const struct scsi_dev *dev, uint8_t code, uint8_t *p,
			   const struct mode_vals *v, int pc)
{
	switch (code) {
	case 0x2a:
		return mmc_caps_page(dev, p, pc == PC_CHANGEABLE);
	case 0x01:
		return page_err_recovery(p, v);
	case 0x08:
		return page_caching(p, v);
	case 0x0a:
		return page_control(p, v, pc);
	case 0x1c:
		return page_iec(p, v);
	}
	return 0;
}

static bool page_known(const struct scsi_dev *dev, uint8_t code)
{
	unsigned n;
	const uint8_t *codes = page_codes(dev, &n);

	return memchr(codes, code, n) != NULL;
}

enum scsi_sr spc_mode_sense(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	bool ten = t->cdb[0] == 0x5a;
	bool dbd = t->cdb[1] & 0x08, llbaa = ten && (t->cdb[1] & 0x10);
	int pc = t->cdb[2] >> 6;
	uint8_t page = t->cdb[2] & 0x3f, sub = t->cdb[3];
	uint32_t alloc = ten ? get_be16(t->cdb + 7) : t->cdb[4];
	unsigned hdr = ten ? 8 : 4, bdlen = dbd ? 0 : (llbaa ? 16 : 8), len;
	uint8_t buf[512];
	struct mode_vals v;
	uint8_t dpofua = 0x10;
	bool wp;

	if (t->cdb[1] & (ten ? 0xe7 : 0xf7))
		return scsi_invalid_cdb(t, 1, scsi_msb(t->cdb[1] & (ten ? 0xe7 : 0xf7)));
	if (pc == PC_SAVED)
		return SR_SAVING_PARAMS_UNSUP;
	if (page != 0x3f && !page_known(dev, page))
		return scsi_invalid_cdb(t, 2, 5);
	if (sub != 0 && !(page == 0x3f && sub == 0xff))
		return scsi_invalid_cdb(t, 3, -1);

	pthread_mutex_lock(&dev->lock);
	if (pc == PC_CURRENT)
		vals_current(dev, &v);
	else if (pc == PC_DEFAULT)
		vals_default(dev, &v);
	else
		vals_changeable(&v);
	pthread_mutex_unlock(&dev->lock);
	wp = scsi_dev_write_protected(dev, t->core.lun_ent);

	memset(buf, 0, sizeof(buf));
	len = hdr;
	if (bdlen) {
		uint8_t *bd = buf + hdr;
		/* nothing in the block descriptor is changeable */
		if (pc != PC_CHANGEABLE) {
			if (bdlen == 16) {
				put_be64(bd, dev->nr_blocks);
				put_be32(bd + 12, dev->block_size);
			} else {
				put_be32(bd, dev->nr_blocks > 0xffffffffull ? 0xffffffffu
									: (uint32_t)dev->nr_blocks);
				put_be24(bd + 5, dev->block_size);
			}
		}
		len += bdlen;
	}
	if (page == 0x3f) {
		unsigned n;
		const uint8_t *codes = page_codes(dev, &n);

		for (unsigned i = 0; i < n; i++)
			len += build_page(dev, codes[i], buf + len, &v, pc);
	} else {
		len += build_page(dev, page, buf + len, &v, pc);
	}
	/* device-specific parameter: WP, DPOFUA (a CD-ROM has neither field: 0) */
	if (dev->p.type == SCSI_TYPE_CDROM)
		wp = false, dpofua = 0;
	if (ten) {
		put_be16(buf, (uint16_t)(len - 2));
		buf[3] = (uint8_t)((wp ? 0x80 : 0) | dpofua);
		buf[4] = llbaa && bdlen ? 0x01 : 0; /* LONGLBA */
		put_be16(buf + 6, (uint16_t)bdlen);
	} else {
		buf[0] = (uint8_t)(len - 1);
		buf[2] = (uint8_t)((wp ? 0x80 : 0) | dpofua);
		buf[3] = (uint8_t)bdlen;
	}
	scsi_data_in(t, buf, len < alloc ? len : alloc);
	return SR_OK;
}

/* Pull the changeable fields of one page out of its parameter bytes. */
static void take_page(uint8_t code, const uint8_t *p, struct mode_vals *v)
{
	switch (code) {
	case 0x08:
		v->wce = p[2] & 0x04;
		break;
	case 0x0a:
		v->d_sense = p[2] & 0x04;
		v->swp = p[4] & 0x08;
		v->tas = p[5] & 0x40;
		break;
	case 0x1c:
		v->dexcpt = p[2] & 0x08;
		v->mrie = p[3] & 0x0f;
		break;
	}
}

static bool vals_differ(const struct mode_vals *a, const struct mode_vals *b)
{
	return a->wce != b->wce || a->d_sense != b->d_sense || a->swp != b->swp ||
	       a->tas != b->tas || a->dexcpt != b->dexcpt || a->mrie != b->mrie;
}

/* Check the block descriptor: the LU's geometry cannot be changed through it. */
static enum scsi_sr check_block_desc(struct scsi_task *t, const uint8_t *bd, unsigned off,
				     unsigned bdlen)
{
	struct scsi_dev *dev = t->core.dev;
	uint64_t nblocks;
	uint32_t blen;

	if (bdlen == 16) {
		nblocks = get_be64(bd);
		blen = get_be32(bd + 12);
		if (nblocks && nblocks != dev->nr_blocks)
			return scsi_invalid_param(t, (uint16_t)off, -1);
		if (blen != dev->block_size)
			return scsi_invalid_param(t, (uint16_t)(off + 12), -1);
	} else {
		nblocks = get_be32(bd);
		blen = get_be24(bd + 5);
		if (nblocks && nblocks != (dev->nr_blocks > 0xffffffffull ? 0xffffffffull
									   : dev->nr_blocks))
			return scsi_invalid_param(t, (uint16_t)off, -1);
		if (blen != dev->block_size)
			return scsi_invalid_param(t, (uint16_t)(off + 5), -1);
	}
	return SR_OK;
}

enum scsi_sr spc_mode_select(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	bool ten = t->cdb[0] == 0x55;
	bool pf = t->cdb[1] & 0x10, sp = t->cdb[1] & 0x01;
	uint32_t plen = ten ? get_be16(t->cdb + 7) : t->cdb[4];
	unsigned hdr = ten ? 8 : 4, bdlen, off;
	uint8_t buf[512], cur[32], mask[32];
	struct mode_vals cv, nv, chg;
	enum scsi_sr sr = SR_OK;
	bool changed;

	if (t->cdb[1] & 0xee)
		return scsi_invalid_cdb(t, 1, scsi_msb(t->cdb[1] & 0xee));
	if (sp)
		return scsi_invalid_cdb(t, 1, 0);
	if (plen == 0)
		return SR_OK;
	if (!pf)
		return scsi_invalid_cdb(t, 1, 4);
	if (plen < hdr)
		return SR_PARAM_LIST_LENGTH_ERROR;
	if (plen > sizeof(buf))
		return scsi_invalid_cdb(t, ten ? 7 : 4, -1);
	if (scsi_data_out(t, buf, plen) < plen)
		return SR_PARAM_LIST_LENGTH_ERROR;

	bdlen = ten ? get_be16(buf + 6) : buf[3];
	if (bdlen != 0 && bdlen != 8 && !(ten && (buf[4] & 0x01) && bdlen == 16))
		return scsi_invalid_param(t, ten ? 6 : 3, -1);
	if (hdr + bdlen > plen)
		return SR_PARAM_LIST_LENGTH_ERROR;
	if (bdlen) {
		sr = check_block_desc(t, buf + hdr, hdr, bdlen);
		if (sr != SR_OK)
			return sr;
	}

	vals_changeable(&chg);
	pthread_mutex_lock(&dev->lock);
	vals_current(dev, &cv);
	nv = cv;
	for (off = hdr + bdlen; off < plen;) {
		uint8_t code = buf[off] & 0x3f;
		unsigned want, have;

		if (plen - off < 2) {
			sr = SR_PARAM_LIST_LENGTH_ERROR;
			break;
		}
		if (buf[off] & 0x40) { /* SPF: no subpages here */
			sr = scsi_invalid_param(t, (uint16_t)off, 6);
			break;
		}
		if (!page_known(dev, code) || code == 0x2a) {
			sr = scsi_invalid_param(t, (uint16_t)off, 5);
			break;
		}
		want = build_page(dev, code, cur, &cv, PC_CURRENT);
		build_page(dev, code, mask, &chg, PC_CHANGEABLE);
		have = (unsigned)buf[off + 1] + 2;
		if (have != want) {
			sr = scsi_invalid_param(t, (uint16_t)(off + 1), -1);
			break;
		}
		if (off + have > plen) {
			sr = SR_PARAM_LIST_LENGTH_ERROR;
			break;
		}
		for (unsigned i = 2; i < have; i++) {
			uint8_t bad = (uint8_t)((buf[off + i] ^ cur[i]) & ~mask[i]);
			if (bad) {
				sr = scsi_invalid_param(t, (uint16_t)(off + i), scsi_msb(bad));
				break;
			}
		}
		if (sr != SR_OK)
			break;
		take_page(code, buf + off, &nv);
		if (code == 0x1c && nv.mrie > 6) {
			sr = scsi_invalid_param(t, (uint16_t)(off + 3), 3);
			break;
		}
		off += have;
	}
	changed = sr == SR_OK && vals_differ(&cv, &nv);
	if (changed) {
		dev->mode.wce = nv.wce;
		dev->mode.d_sense = nv.d_sense;
		dev->mode.swp = nv.swp;
		dev->mode.tas = nv.tas;
		dev->mode.dexcpt = nv.dexcpt;
		dev->mode.mrie = nv.mrie;
		scsi_dev_medium_changed(dev);
	}
	pthread_mutex_unlock(&dev->lock);
	if (changed)
		scsi_ua_raise_all(dev, t->nexus, 0x2a, 0x01); /* MODE PARAMETERS CHANGED */
	return sr;
}
