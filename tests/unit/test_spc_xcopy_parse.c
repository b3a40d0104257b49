/* scsi/spc_xcopy_parse.c: the EXTENDED COPY(LID1) parameter list -- limits (26/06, 26/08),
 * unsupported descriptor types (26/07, 26/09), malformed fields with their field pointers,
 * lengths (1A/00), LIST ID USAGE, and the CSCD lookup confined to the nexus's LUs. */
#include "xcopy_harness.h"

static struct scsi_dev *d0, *d1, *outside;
static struct th_nexus n;

static void up(void)
{
	struct scsi_dev *devs[2];

	d0 = th_make_dev("ramdisk", "xp0", 1 << 20, 512);
	d1 = th_make_dev("ramdisk", "xp1", 1 << 20, 4096);
	outside = th_make_dev("ramdisk", "xpout", 1 << 20, 512);
	devs[0] = d0;
	devs[1] = d1;
	th_nexus_init(&n, "iqn.2026-01.org.example:p", 1, devs, 2);
	th_clear_ua(&n, 0);
}

static void down(void)
{
	scsi_nexus_unregister(&n.nx);
	scsi_dev_destroy(d0);
	scsi_dev_destroy(d1);
	scsi_dev_destroy(outside);
	scsi_core_shutdown();
}

/* Parse directly, as the handler does, with a task that only carries the nexus and the LUN
 * table the core took from it on arrival. */
static enum scsi_sr parse(const uint8_t *p, uint32_t len, struct xc_list *l, struct scsi_task *t)
{
	memset(t, 0, sizeof(*t));
	t->nexus = &n.nx;
	t->core.luns = n.nx.luns;
	t->core.sks_bit = -1;
	return xc_parse(t, p, len, l);
}

/* Check the sense-key-specific field pointer the parse left on the task. */
#define assert_pointer(t, byte, bit)                                                               \
	do {                                                                                       \
		cr_assert_eq((t).core.sks_field, (byte), "field %u", (t).core.sks_field);          \
		cr_assert_eq((t).core.sks_bit, (bit), "bit %d", (t).core.sks_bit);                 \
		cr_assert_not((t).core.sks_cdb);                                                   \
	} while (0)

Test(xcopy_parse, good_list_resolves_targets, .init = up, .fini = down)
{
	uint8_t p[256];
	struct xc_list l;
	struct scsi_task t;

	xc_header(p, 0x42, XC_LID_HOLD, 64, 56);
	xc_cscd(p + 16, d1);
	xc_cscd(p + 48, d0);
	xc_seg(p + 80, 1, 0, 9, 100, 200, false);
	xc_seg(p + 108, 0, 1, 3, 5, 6, true);
	cr_assert_eq(parse(p, 136, &l, &t), SR_OK);
	cr_assert_eq(l.list_id, 0x42);
	cr_assert_eq(l.ntargets, 2);
	cr_assert_eq(l.tgt[0].dev, d1);
	cr_assert_eq(l.tgt[1].dev, d0);
	cr_assert_eq(l.tgt[1].ent, &n.ents[0]);
	cr_assert_eq(l.nsegs, 2);
	cr_assert_eq(l.seg[0].src, 1);
	cr_assert_eq(l.seg[0].nblocks, 9);
	cr_assert_eq(l.seg[0].src_lba, 100);
	cr_assert_eq(l.seg[0].dst_lba, 200);
	cr_assert_not(l.seg[0].dc);
	cr_assert(l.seg[1].dc);
	cr_assert_eq(l.seg[1].desc_off, 108);
}

Test(xcopy_parse, too_many_target_descriptors, .init = up, .fini = down)
{
	static uint8_t p[16 + 32 * (XC_MAX_TARGETS + 1)];
	struct th_result r;

	xc_header(p, 1, XC_LID_HOLD, 32 * (XC_MAX_TARGETS + 1), 0);
	for (int i = 0; i <= XC_MAX_TARGETS; i++)
		xc_cscd(p + 16 + 32 * i, d0);
	r = xc_exec(&n, 0, p, sizeof(p));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x06);
	/* exactly the maximum is fine */
	xc_header(p, 1, XC_LID_HOLD, 32 * XC_MAX_TARGETS, 0);
	xc_assert_good(xc_exec(&n, 0, p, 16 + 32 * XC_MAX_TARGETS));
}

Test(xcopy_parse, too_many_segment_descriptors, .init = up, .fini = down)
{
	static uint8_t p[16 + 32 + 28 * (XC_MAX_SEGMENTS + 1)];
	struct th_result r;

	xc_header(p, 1, XC_LID_HOLD, 32, 28 * (XC_MAX_SEGMENTS + 1));
	xc_cscd(p + 16, d0);
	for (int i = 0; i <= XC_MAX_SEGMENTS; i++)
		xc_seg(p + 48 + 28 * i, 0, 0, 1, (uint64_t)i, 1000 + (uint64_t)i, false);
	r = xc_exec(&n, 0, p, sizeof(p));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x08);
	xc_header(p, 1, XC_LID_HOLD, 32, 28 * XC_MAX_SEGMENTS);
	xc_assert_good(xc_exec(&n, 0, p, 16 + 32 + 28 * XC_MAX_SEGMENTS));
}

Test(xcopy_parse, descriptor_lists_longer_than_announced, .init = up, .fini = down)
{
	/* both counts over their limits, and together over MAXIMUM DESCRIPTOR LIST LENGTH: the
	 * length is reported (1A/00), as libiscsi's ExtendedCopy.DescrLimits expects */
	static uint8_t p[16 + 32 * (XC_MAX_TARGETS + 1) + 28 * (XC_MAX_SEGMENTS + 1)];
	uint32_t tdl = 32 * (XC_MAX_TARGETS + 1), sdl = 28 * (XC_MAX_SEGMENTS + 1);
	struct th_result r;

	xc_header(p, 3, XC_LID_HOLD, (uint16_t)tdl, sdl);
	for (int i = 0; i <= XC_MAX_TARGETS; i++)
		xc_cscd(p + 16 + 32 * i, d0);
	for (int i = 0; i <= XC_MAX_SEGMENTS; i++)
		xc_seg(p + 16 + tdl + 28 * i, 0, 0, 1, 0, 1, false);
	r = xc_exec(&n, 0, p, sizeof(p));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
}

Test(xcopy_parse, unsupported_target_descriptor_type, .init = up, .fini = down)
{
	uint8_t p[128];
	struct xc_list l;
	struct scsi_task t;
	struct th_result r;

	xc_simple(p, 1, d0, d0, 1, 0, 1);
	p[48] = 0xe0; /* Fibre Channel N_Port_Name */
	cr_assert_eq(parse(p, 108, &l, &t), SR_UNSUPPORTED_TARGET_DESCRIPTOR);
	assert_pointer(t, 48, -1);
	r = xc_exec(&n, 0, p, 108);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x07);
	/* reported even when an earlier descriptor names an unknown LU */
	xc_simple(p, 1, outside, d0, 1, 0, 1);
	p[48] = 0xe5;
	cr_assert_eq(parse(p, 108, &l, &t), SR_UNSUPPORTED_TARGET_DESCRIPTOR);
}

Test(xcopy_parse, unsupported_segment_descriptor_type, .init = up, .fini = down)
{
	static const uint8_t types[] = {0x00, 0x01, 0x03, 0x0a, 0x10, 0xbe, 0xff};
	uint8_t p[128];
	struct xc_list l;
	struct scsi_task t;

	for (unsigned i = 0; i < sizeof(types); i++) {
		struct th_result r;
		xc_simple(p, 1, d0, d0, 1, 0, 1);
		p[80] = types[i];
		cr_assert_eq(parse(p, 108, &l, &t), SR_UNSUPPORTED_SEGMENT_DESCRIPTOR);
		assert_pointer(t, 80, -1);
		r = xc_exec(&n, 0, p, 108);
		th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x09);
	}
}

Test(xcopy_parse, target_list_length_not_multiple_of_32, .init = up, .fini = down)
{
	uint8_t p[128];
	struct xc_list l;
	struct scsi_task t;

	xc_simple(p, 1, d0, d0, 1, 0, 1);
	put_be16(p + 2, 60);
	cr_assert_eq(parse(p, 108, &l, &t), SR_INVALID_FIELD_IN_PARAM);
	assert_pointer(t, 2, -1);
}

Test(xcopy_parse, bad_cscd_fields, .init = up, .fini = down)
{
	uint8_t p[128];
	struct xc_list l;
	struct scsi_task t;

	xc_simple(p, 1, d0, d1, 1, 0, 1);
	p[48 + 1] = 0x20; /* NUL */
	cr_assert_eq(parse(p, 108, &l, &t), SR_INVALID_FIELD_IN_PARAM);
	assert_pointer(t, 49, 5);
	xc_simple(p, 1, d0, d1, 1, 0, 1);
	p[48 + 1] = 0x05; /* CD-ROM peripheral device type */
	cr_assert_eq(parse(p, 108, &l, &t), SR_INVALID_FIELD_IN_PARAM);
	assert_pointer(t, 49, 4);
	xc_simple(p, 1, d0, d1, 1, 0, 1);
	p[48 + 7] = 21; /* designator longer than the descriptor has room for */
	cr_assert_eq(parse(p, 108, &l, &t), SR_INVALID_FIELD_IN_PARAM);
	assert_pointer(t, 55, -1);
	xc_simple(p, 1, d0, d1, 1, 0, 1);
	put_be24(p + 48 + 29, 512); /* d1 has 4096-byte blocks */
	cr_assert_eq(parse(p, 108, &l, &t), SR_INVALID_FIELD_IN_PARAM);
	assert_pointer(t, 48 + 29, -1);
}

Test(xcopy_parse, lu_outside_nexus_is_unreachable, .init = up, .fini = down)
{
	uint8_t p[128];
	struct xc_list l;
	struct scsi_task t;

	xc_simple(p, 1, d0, outside, 1, 0, 1);
	cr_assert_eq(parse(p, 108, &l, &t), SR_COPY_TARGET_UNREACHABLE);
	/* a nexus without a LUN table reaches nothing */
	xc_simple(p, 1, d0, d0, 1, 0, 1);
	memset(&t, 0, sizeof(t));
	cr_assert_eq(xc_parse(&t, p, 108, &l), SR_COPY_TARGET_UNREACHABLE);
}

Test(xcopy_parse, bad_segment_fields, .init = up, .fini = down)
{
	uint8_t p[160];
	struct xc_list l;
	struct scsi_task t;

	xc_simple(p, 1, d0, d0, 1, 0, 1);
	put_be16(p + 80 + 2, 0x14); /* descriptor length must be 18h */
	cr_assert_eq(parse(p, 108, &l, &t), SR_INVALID_FIELD_IN_PARAM);
	assert_pointer(t, 82, -1);
	xc_simple(p, 1, d0, d0, 1, 0, 1);
	put_be16(p + 80 + 4, 2); /* source CSCD index past the list: names no copy target */
	cr_assert_eq(parse(p, 108, &l, &t), SR_COPY_TARGET_UNREACHABLE);
	assert_pointer(t, 84, -1);
	xc_simple(p, 1, d0, d0, 1, 0, 1);
	put_be16(p + 80 + 6, 0xffff);
	cr_assert_eq(parse(p, 108, &l, &t), SR_COPY_TARGET_UNREACHABLE);
	assert_pointer(t, 86, -1);
	/* a segment list length that cuts a descriptor short */
	xc_simple(p, 1, d0, d0, 1, 0, 1);
	put_be32(p + 8, 20);
	cr_assert_eq(parse(p, 108, &l, &t), SR_PARAM_LIST_LENGTH_ERROR);
	put_be32(p + 8, 2);
	cr_assert_eq(parse(p, 108, &l, &t), SR_PARAM_LIST_LENGTH_ERROR);
}

Test(xcopy_parse, lengths, .init = up, .fini = down)
{
	uint8_t p[160];
	struct xc_list l;
	struct scsi_task t;

	xc_simple(p, 1, d0, d0, 1, 0, 1);
	cr_assert_eq(parse(p, 107, &l, &t), SR_PARAM_LIST_LENGTH_ERROR);
	cr_assert_eq(parse(p, 15, &l, &t), SR_PARAM_LIST_LENGTH_ERROR);
	put_be32(p + 8, 0xffffffffu); /* no overflow in the sum */
	cr_assert_eq(parse(p, 108, &l, &t), SR_PARAM_LIST_LENGTH_ERROR);
	/* inline data: none of our segment types takes any */
	xc_simple(p, 1, d0, d0, 1, 0, 1);
	put_be32(p + 12, 4);
	cr_assert_eq(parse(p, 112, &l, &t), SR_INVALID_FIELD_IN_PARAM);
	assert_pointer(t, 12, -1);
}

Test(xcopy_parse, list_id_usage, .init = up, .fini = down)
{
	uint8_t p[128];
	struct xc_list l;
	struct scsi_task t;

	xc_simple(p, 1, d0, d0, 1, 0, 1);
	p[1] = 1 << 3; /* reserved value */
	cr_assert_eq(parse(p, 108, &l, &t), SR_INVALID_FIELD_IN_PARAM);
	assert_pointer(t, 1, 4);
	p[1] = XC_LID_NONE << 3; /* "no list identifier" needs LIST ID 0 */
	cr_assert_eq(parse(p, 108, &l, &t), SR_INVALID_FIELD_IN_PARAM);
	assert_pointer(t, 0, -1);
	p[0] = 0;
	cr_assert_eq(parse(p, 108, &l, &t), SR_OK);
	p[1] = XC_LID_NO_HOLD << 3 | 0x20 | 0x07; /* STR and PRIORITY are accepted */
	p[0] = 5;
	cr_assert_eq(parse(p, 108, &l, &t), SR_OK);
	cr_assert_eq(l.list_id_usage, XC_LID_NO_HOLD);
}

Test(xcopy_parse, sense_carries_field_pointer, .init = up, .fini = down)
{
	uint8_t p[128];
	struct th_result r;

	xc_simple(p, 1, d0, d0, 1, 0, 1);
	put_be16(p + 80 + 2, 0x20);
	r = xc_exec(&n, 0, p, 108);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	cr_assert_eq(r.sense[15], 0x80, "SKSV, C/D=0 (parameter list), no bit pointer");
	cr_assert_eq(get_be16(r.sense + 16), 82);
}
