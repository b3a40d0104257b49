/* scsi/spc_xcopy.c: EXTENDED COPY(LID1) moving data between LUs (ramdisk and fileio, several
 * chunks, different block sizes, several segments), refusing LUs outside the requesting nexus's
 * LUN table (CVE-2020-28374), honouring read-only LUNs, reservations and LBA ranges before any
 * byte moves, LIST ID in use, and aborting a running copy. */
#include "xcopy_harness.h"
#include "gate_store.h"

#include "scsi/scsi_core.h"

#define SZ (4u << 20)

static struct scsi_dev *src, *dst, *other;
static struct th_nexus na, nb;

static void up_on(const char *handler, uint32_t dst_bs)
{
	struct scsi_dev *devs_a[2], *devs_b[3];

	src = th_make_dev(handler, "xsrc", SZ, 512);
	dst = th_make_dev(handler, "xdst", SZ, dst_bs);
	other = th_make_dev(handler, "xother", SZ, 512);
	devs_a[0] = src;
	devs_a[1] = dst;
	devs_b[0] = src;
	devs_b[1] = dst;
	devs_b[2] = other;
	th_nexus_init(&na, "iqn.2026-01.org.example:a", 1, devs_a, 2);
	th_nexus_init(&nb, "iqn.2026-01.org.example:b", 1, devs_b, 3);
	for (uint64_t l = 0; l < 3; l++) {
		if (l < 2)
			th_clear_ua(&na, l);
		th_clear_ua(&nb, l);
	}
}

static void up_ram(void)
{
	up_on("ramdisk", 512);
}
static void up_file(void)
{
	up_on("vdisk_fileio", 512);
}
static void up_ram_4k(void)
{
	up_on("ramdisk", 4096);
}

static void drop(struct scsi_dev **d)
{
	if (*d && (*d)->bs && (*d)->bs->filename[0])
		unlink((*d)->bs->filename);
	scsi_dev_destroy(*d);
	*d = NULL;
}

static void down(void)
{
	scsi_nexus_unregister(&na.nx);
	scsi_nexus_unregister(&nb.nx);
	drop(&src);
	drop(&dst);
	drop(&other);
	scsi_core_shutdown();
}

/* Write a pattern to src[lba, +n) through nexus b (which sees every LU). */
static uint8_t *put_pattern(struct scsi_dev *d, uint64_t lun, uint64_t lba, uint32_t n,
			    uint8_t seed)
{
	uint8_t *buf = malloc((size_t)n * d->block_size);

	xc_fill(buf, (size_t)n * d->block_size, seed);
	xc_assert_good(xc_rw(&nb, lun, true, lba, n, buf, d->block_size));
	return buf;
}

static void assert_data(struct scsi_dev *d, uint64_t lun, uint64_t lba, uint32_t n,
			const uint8_t *want)
{
	uint8_t *buf = malloc((size_t)n * d->block_size);

	xc_assert_good(xc_rw(&nb, lun, false, lba, n, buf, d->block_size));
	cr_assert_eq(memcmp(buf, want, (size_t)n * d->block_size), 0, "data differs");
	free(buf);
}

static void assert_zero(struct scsi_dev *d, uint64_t lun, uint64_t lba, uint32_t n)
{
	uint8_t *zero = calloc(n, d->block_size);

	assert_data(d, lun, lba, n, zero);
	free(zero);
}

static void copies_data(void)
{
	uint8_t p[128];
	uint8_t *pat = put_pattern(src, 0, 100, 64, 3);

	xc_assert_good(xc_exec(&na, 0, p, xc_simple(p, 1, src, dst, 64, 100, 10)));
	assert_data(dst, 1, 10, 64, pat);
	assert_zero(dst, 1, 9, 1);
	assert_zero(dst, 1, 74, 1);
	free(pat);
}
Test(xcopy_ram, copies_data, .init = up_ram, .fini = down)
{
	copies_data();
}
Test(xcopy_file, copies_data, .init = up_file, .fini = down)
{
	copies_data();
}

static void copies_several_chunks(void)
{
	/* 5000 blocks of 512 = 2.4 MiB: three XC_CHUNK round trips */
	uint8_t p[128];
	uint8_t *pat = put_pattern(src, 0, 7, 5000, 9);

	xc_assert_good(xc_exec(&na, 1, p, xc_simple(p, 2, src, dst, 5000, 7, 2000)));
	assert_data(dst, 1, 2000, 5000, pat);
	free(pat);
}
Test(xcopy_ram, copies_several_chunks, .init = up_ram, .fini = down)
{
	copies_several_chunks();
}
Test(xcopy_file, copies_several_chunks, .init = up_file, .fini = down)
{
	copies_several_chunks();
}

Test(xcopy_ram, copy_within_one_lu, .init = up_ram, .fini = down)
{
	uint8_t p[128];
	uint8_t *pat = put_pattern(src, 0, 0, 16, 77);

	xc_header(p, 3, XC_LID_HOLD, 32, 28);
	xc_cscd(p + 16, src);
	xc_seg(p + 48, 0, 0, 16, 0, 1000, false);
	xc_assert_good(xc_exec(&na, 0, p, 76));
	assert_data(src, 0, 1000, 16, pat);
	free(pat);
}

Test(xcopy_ram, several_segments, .init = up_ram, .fini = down)
{
	uint8_t p[256];
	uint8_t *a = put_pattern(src, 0, 0, 8, 1), *b = put_pattern(src, 0, 50, 4, 2);

	xc_header(p, 4, XC_LID_HOLD, 64, 3 * 28);
	xc_cscd(p + 16, src);
	xc_cscd(p + 48, dst);
	xc_seg(p + 80, 0, 1, 8, 0, 100, false);
	xc_seg(p + 108, 0, 1, 4, 50, 200, false);
	xc_seg(p + 136, 1, 0, 8, 100, 300, false); /* back again, dst -> src */
	xc_assert_good(xc_exec(&na, 0, p, 164));
	assert_data(dst, 1, 100, 8, a);
	assert_data(dst, 1, 200, 4, b);
	assert_data(src, 0, 300, 8, a);
	free(a);
	free(b);
}

Test(xcopy_ram_4k, different_block_sizes, .init = up_ram_4k, .fini = down)
{
	uint8_t p[128];
	uint8_t *pat = put_pattern(src, 0, 16, 16, 5); /* 16 x 512 = 2 x 4096 */

	/* DC=0: the count is in source blocks */
	xc_assert_good(xc_exec(&na, 0, p, xc_simple(p, 5, src, dst, 16, 16, 3)));
	assert_data(dst, 1, 3, 2, pat);
	/* DC=1: the count is in destination blocks (here src's 512-byte ones: 16 = 2 x 4096) */
	xc_seg(p + 80, 1, 0, 16, 3, 400, true);
	xc_assert_good(xc_exec(&na, 0, p, 108));
	assert_data(src, 0, 400, 16, pat);
	free(pat);
}

Test(xcopy_ram_4k, partial_destination_block_refused, .init = up_ram_4k, .fini = down)
{
	uint8_t p[128];
	struct th_result r = xc_exec(&na, 0, p, xc_simple(p, 5, src, dst, 3, 0, 0));

	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	cr_assert_eq(get_be16(r.sense + 16), 80 + 10, "points at the NUMBER OF BLOCKS field");
}

/* ---- the copy may only touch LUs the initiator can reach ---- */

Test(xcopy_ram, lu_outside_the_nexus_is_unreachable, .init = up_ram, .fini = down)
{
	uint8_t p[128];
	uint8_t *pat = put_pattern(other, 2, 0, 8, 42);
	struct th_result r;

	/* a cannot see `other`: neither as source nor as destination */
	r = xc_exec(&na, 0, p, xc_simple(p, 6, other, dst, 8, 0, 0));
	th_assert_sense(r, SK_COPY_ABORTED, 0x0d, 0x02);
	assert_zero(dst, 1, 0, 8);
	r = xc_exec(&na, 0, p, xc_simple(p, 6, src, other, 8, 0, 0));
	th_assert_sense(r, SK_COPY_ABORTED, 0x0d, 0x02);
	assert_data(other, 2, 0, 8, pat);
	/* b can see it, so b may copy it */
	xc_assert_good(xc_exec(&nb, 0, p, xc_simple(p, 6, other, dst, 8, 0, 0)));
	assert_data(dst, 1, 0, 8, pat);
	free(pat);
}

Test(xcopy_ram, unknown_designators_are_unreachable, .init = up_ram, .fini = down)
{
	uint8_t p[128];
	struct th_result r;

	xc_simple(p, 7, src, dst, 1, 0, 0);
	p[48 + 8] ^= 0x01; /* an NAA no LU has */
	r = xc_exec(&na, 0, p, 108);
	th_assert_sense(r, SK_COPY_ABORTED, 0x0d, 0x02);
	xc_simple(p, 7, src, dst, 1, 0, 0);
	p[48 + 5] = 0x02; /* EUI-64 designator type */
	r = xc_exec(&na, 0, p, 108);
	th_assert_sense(r, SK_COPY_ABORTED, 0x0d, 0x02);
	xc_simple(p, 7, src, dst, 1, 0, 0);
	p[48 + 5] = 0x13; /* association: target port */
	r = xc_exec(&na, 0, p, 108);
	th_assert_sense(r, SK_COPY_ABORTED, 0x0d, 0x02);
}

/* ---- the destination's protections ---- */

Test(xcopy_ram, read_only_lun_refused, .init = up_ram, .fini = down)
{
	uint8_t p[128];
	uint8_t *pat = put_pattern(src, 0, 0, 4, 8);
	struct th_result r;

	na.ents[1].read_only = true;
	r = xc_exec(&na, 0, p, xc_simple(p, 8, src, dst, 4, 0, 0));
	th_assert_sense(r, SK_DATA_PROTECT, 0x27, 0x00);
	assert_zero(dst, 1, 0, 4);
	/* reading from a read-only LUN is fine */
	xc_assert_good(xc_exec(&na, 0, p, xc_simple(p, 8, dst, src, 4, 100, 100)));
	free(pat);
}

Test(xcopy_ram, software_write_protect_refused, .init = up_ram, .fini = down)
{
	uint8_t p[128];
	struct th_result r;

	pthread_mutex_lock(&dst->lock);
	dst->mode.swp = true;
	pthread_mutex_unlock(&dst->lock);
	r = xc_exec(&na, 0, p, xc_simple(p, 8, src, dst, 4, 0, 0));
	th_assert_sense(r, SK_DATA_PROTECT, 0x27, 0x00);
}

static struct th_result prout(struct th_nexus *n, uint64_t lun, uint8_t sa, uint8_t type,
			      uint64_t rk, uint64_t sark)
{
	uint8_t cdb[10] = {0x5f, sa, type, 0, 0, 0, 0, 0, 24, 0};
	uint8_t pl[24] = {0};

	put_be64(pl, rk);
	put_be64(pl + 8, sark);
	return th_exec(n, lun, cdb, 10, SCSI_DIR_WRITE, pl, 24);
}

Test(xcopy_ram, reservations_on_the_lus_apply, .init = up_ram, .fini = down)
{
	uint8_t p[128];
	uint8_t *pat = put_pattern(src, 0, 0, 4, 8);
	struct th_result r;

	/* b holds Write Exclusive on dst: a may not write it through a copy */
	xc_assert_good(prout(&nb, 1, 0, 0, 0, 0xb));
	xc_assert_good(prout(&nb, 1, 1, 1, 0xb, 0));
	r = xc_exec(&na, 0, p, xc_simple(p, 9, src, dst, 4, 0, 0));
	cr_assert_eq(r.status, SAM_STAT_RESERVATION_CONFLICT);
	assert_zero(dst, 1, 0, 4);
	/* ... but may read it (Write Exclusive) */
	xc_assert_good(xc_exec(&na, 0, p, xc_simple(p, 9, dst, src, 4, 0, 500)));
	/* the holder may copy into it */
	xc_assert_good(xc_exec(&nb, 0, p, xc_simple(p, 9, src, dst, 4, 0, 0)));
	assert_data(dst, 1, 0, 4, pat);
	/* Exclusive Access on src: a may not read it either (dst released so the XCOPY itself,
	 * sent to dst, is admitted) */
	xc_assert_good(prout(&nb, 1, 2, 1, 0xb, 0));
	xc_assert_good(prout(&nb, 0, 0, 0, 0, 0xc));
	xc_assert_good(prout(&nb, 0, 1, 3, 0xc, 0));
	r = xc_exec(&na, 1, p, xc_simple(p, 9, src, dst, 4, 0, 8));
	cr_assert_eq(r.status, SAM_STAT_RESERVATION_CONFLICT);
	free(pat);
}

/* A segment the LUs cannot hold: COPY ABORTED (libiscsi's ExtendedCopy.ValidSegDescr), with a
 * segment pointer (SKSV, SD=0: relative to the parameter list) on the LBA that does not fit. */
static void assert_copy_aborted_at(struct th_result r, uint16_t field)
{
	th_assert_sense(r, SK_COPY_ABORTED, 0x00, 0x00);
	cr_assert_eq(r.sense[15], 0x80, "SKSV, SD=0, no bit pointer");
	cr_assert_eq(get_be16(r.sense + 16), field);
}

Test(xcopy_ram, lba_out_of_range_checked_before_copying, .init = up_ram, .fini = down)
{
	uint8_t p[256];
	uint8_t *pat = put_pattern(src, 0, 0, 4, 8);
	uint64_t last = SZ / 512;

	assert_copy_aborted_at(xc_exec(&na, 0, p, xc_simple(p, 10, src, dst, 4, last - 3, 0)),
			       80 + 12);
	assert_copy_aborted_at(xc_exec(&na, 0, p, xc_simple(p, 10, src, dst, 4, 0, last - 2)),
			       80 + 20);
	assert_copy_aborted_at(xc_exec(&na, 0, p, xc_simple(p, 10, src, dst, 1, UINT64_MAX, 0)),
			       80 + 12);
	/* a good first segment and a bad second one: nothing is copied */
	xc_header(p, 10, XC_LID_HOLD, 64, 56);
	xc_cscd(p + 16, src);
	xc_cscd(p + 48, dst);
	xc_seg(p + 80, 0, 1, 4, 0, 0, false);
	xc_seg(p + 108, 0, 1, 4, 0, last, false);
	assert_copy_aborted_at(xc_exec(&na, 0, p, 136), 108 + 20);
	assert_zero(dst, 1, 0, 4);
	/* the last block exactly is fine */
	xc_assert_good(xc_exec(&na, 0, p, xc_simple(p, 10, src, dst, 1, 0, last - 1)));
	free(pat);
}

Test(xcopy_ram, segment_naming_a_missing_cscd, .init = up_ram, .fini = down)
{
	uint8_t p[128];
	struct th_result r;

	/* one CSCD descriptor, the segment's destination index is 1 */
	xc_header(p, 12, XC_LID_HOLD, 32, 28);
	xc_cscd(p + 16, src);
	xc_seg(p + 48, 0, 1, 1, 0, 0, false);
	r = xc_exec(&na, 0, p, 76);
	th_assert_sense(r, SK_COPY_ABORTED, 0x0d, 0x02);
	cr_assert_eq(get_be16(r.sense + 16), 48 + 6);
}

Test(xcopy_ram, stopped_destination_not_ready, .init = up_ram, .fini = down)
{
	uint8_t p[128];
	struct th_result r;

	pthread_mutex_lock(&dst->lock);
	dst->stopped = true;
	pthread_mutex_unlock(&dst->lock);
	r = xc_exec(&na, 0, p, xc_simple(p, 11, src, dst, 1, 0, 0));
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x02);
	pthread_mutex_lock(&dst->lock);
	dst->stopped = false;
	pthread_mutex_unlock(&dst->lock);
}

Test(xcopy_ram, empty_and_short_lists, .init = up_ram, .fini = down)
{
	uint8_t p[16] = {0};
	struct th_result r;

	xc_assert_good(xc_exec(&na, 0, p, 0));
	r = xc_exec(&na, 0, p, 15);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	/* a header announcing descriptors that are not there */
	xc_header(p, 1, XC_LID_HOLD, 32, 0);
	r = xc_exec(&na, 0, p, 16);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	/* a header alone: nothing to do */
	xc_header(p, 1, XC_LID_HOLD, 0, 0);
	xc_assert_good(xc_exec(&na, 0, p, 16));
}

Test(xcopy_ram, list_length_beyond_what_arrives, .init = up_ram, .fini = down)
{
	uint8_t p[128];
	uint8_t cdb[16] = {0x83, 0x00};
	struct th_result r;

	xc_simple(p, 1, src, dst, 1, 0, 0);
	put_be32(cdb + 10, 108);
	r = th_exec(&na, 0, cdb, 16, SCSI_DIR_WRITE, p, 60); /* only 60 bytes come */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
}

/* ---- a running copy: LIST ID in use, status while running, abort ---- */

static void up_gate(void)
{
	struct scsi_dev *devs[2];

	src = gate_make_dev("xgate", SZ);
	dst = th_make_dev("ramdisk", "xdst", SZ, 512);
	devs[0] = src;
	devs[1] = dst;
	th_nexus_init(&na, "iqn.2026-01.org.example:a", 1, devs, 2);
	th_nexus_init(&nb, "iqn.2026-01.org.example:b", 1, devs, 2);
	for (uint64_t l = 0; l < 2; l++) { /* TEST UNIT READY reads nothing: the gate stays shut */
		th_clear_ua(&na, l);
		th_clear_ua(&nb, l);
	}
}

static struct async_task *start_xcopy(struct th_nexus *n, uint8_t list_id, uint16_t nblocks,
				      uint64_t tag)
{
	uint8_t cdb[16] = {0x83}, p[128];
	uint32_t len = xc_simple(p, list_id, src, dst, nblocks, 0, 0);
	struct async_task *a;

	put_be32(cdb + 10, len);
	a = async_task_new(n, 1, cdb, 16, SCSI_DIR_WRITE, p, len, tag);
	async_task_start(a);
	return a;
}

Test(xcopy_gate, list_id_in_use_and_status_while_running, .init = up_gate, .fini = down)
{
	struct async_task *a;
	uint8_t p[128], st[12];
	struct th_result r;

	a = start_xcopy(&na, 7, 8, 1);
	gate_wait_reads(1);
	/* same nexus, same LIST ID: refused while the first one runs */
	r = xc_exec(&na, 1, p, xc_simple(p, 7, dst, dst, 1, 0, 1));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x00, 0x16);
	/* another LIST ID, or another nexus, is independent */
	xc_assert_good(xc_exec(&na, 1, p, xc_simple(p, 8, dst, dst, 1, 0, 1)));
	xc_assert_good(xc_exec(&nb, 1, p, xc_simple(p, 7, dst, dst, 1, 0, 1)));
	r = xc_results(&na, 1, 0x00, 7, st, sizeof(st));
	xc_assert_good(r);
	cr_assert_eq(st[4], 0x00, "in progress");
	cr_assert_eq(get_be16(st + 5), 0);
	gate_set(true);
	async_task_wait(a);
	cr_assert_eq(a->t.status, SAM_STAT_GOOD);
	r = xc_results(&na, 1, 0x00, 7, st, sizeof(st));
	xc_assert_good(r);
	cr_assert_eq(st[4], 0x01, "completed without error");
	cr_assert_eq(get_be16(st + 5), 1, "segments processed");
	cr_assert_eq(st[7], 0x00, "bytes");
	cr_assert_eq(get_be32(st + 8), 8 * 512);
	free(a);
}

static void tmf_done(struct scsi_tmf *tmf)
{
	struct th_wait *w = tmf->priv;

	pthread_mutex_lock(&w->mu);
	w->done = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

Test(xcopy_gate, abort_task_stops_a_running_copy, .init = up_gate, .fini = down)
{
	struct th_wait w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	struct scsi_tmf tmf = {.fn = SCSI_TMF_ABORT_TASK,
			       .lun = 1,
			       .ref_tag = 55,
			       .nexus = &na.nx,
			       .done = tmf_done,
			       .priv = &w};
	struct async_task *a;
	uint8_t *zero = calloc(1, 2048 * 512), *buf = malloc(2048 * 512);

	memset(g.mem, 0x6b, SZ);
	/* 4096 blocks = 2 MiB: two chunks; the abort lands while the first read waits */
	a = start_xcopy(&na, 9, 4096, 55);
	gate_wait_reads(1);
	scsi_tmf_execute(&tmf);
	gate_set(true);
	async_task_wait(a);
	pthread_mutex_lock(&w.mu);
	while (!w.done)
		pthread_cond_wait(&w.cv, &w.mu);
	pthread_mutex_unlock(&w.mu);
	cr_assert(a->t.aborted);
	cr_assert_eq(tmf.resp, SCSI_TMF_COMPLETE);
	/* the second chunk was never written */
	xc_assert_good(xc_rw(&na, 1, false, 2048, 2048, buf, 512));
	cr_assert_eq(memcmp(buf, zero, 2048 * 512), 0);
	free(zero);
	free(buf);
	free(a);
}

/* EXTENDED COPY writes take the destination's LBA range lock like a WRITE, so COMPARE AND
 * WRITE stays atomic against a copy into the same blocks.  One worker: the copy occupies it
 * (reading its source at the gate) while a COMPARE AND WRITE locks destination block 0 and
 * queues for a worker; the copy then waits for that lock on the only worker, and the pool
 * must let the COMPARE AND WRITE run.  It compares against what block 0 held before the copy
 * (zeros) and succeeds; the copy lands after it. */
Test(xcopy_gate, compare_and_write_is_atomic_against_a_copy, .init = up_gate, .fini = down,
     .timeout = 60)
{
	uint8_t cdb[16] = {0x89}, buf[1024], *want = malloc(8 * 512), *got = malloc(8 * 512);
	struct async_task *a, *c;

	scsi_core_shutdown();
	cr_assert_eq(scsi_core_init(1), 0);
	memset(g.mem, 0x6b, SZ);
	a = start_xcopy(&na, 11, 8, 1); /* source blocks 0-7 -> destination blocks 0-7 */
	gate_wait_reads(1);
	memset(buf, 0, 512);	     /* verify: block 0 as it is before the copy */
	memset(buf + 512, 'C', 512); /* write */
	put_be64(cdb + 2, 0);
	cdb[13] = 1;
	c = async_task_new(&nb, 1, cdb, 16, SCSI_DIR_WRITE, buf, 1024, 2);
	async_task_start(c);
	pthread_join(c->thr, NULL); /* submitted: it holds block 0 and waits for a worker */
	cr_assert_not(c->w.done);
	gate_set(true);
	pthread_mutex_lock(&c->w.mu);
	while (!c->w.done)
		pthread_cond_wait(&c->w.cv, &c->w.mu);
	pthread_mutex_unlock(&c->w.mu);
	async_task_wait(a);
	cr_assert_eq(c->t.status, SAM_STAT_GOOD, "COMPARE AND WRITE saw the copy's data: key %#x",
		     c->t.sense[2] & 0xf);
	cr_assert_eq(a->t.status, SAM_STAT_GOOD);
	memset(want, 0x6b, 8 * 512);
	xc_assert_good(xc_rw(&na, 1, false, 0, 8, got, 512));
	cr_assert_eq(memcmp(got, want, 8 * 512), 0, "the copy landed after the COMPARE AND WRITE");
	free(want);
	free(got);
	free(a);
	free(c);
}
