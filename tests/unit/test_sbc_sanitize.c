/* SANITIZE on ramdisk and fileio: OVERWRITE (pattern, INVERT, passes), BLOCK ERASE and
 * CRYPTOGRAPHIC ERASE (data gone: zeros, holes in the thin fileio file, GET LBA STATUS all
 * deallocated), parameter checks as libiscsi expects, IMMED with NOT READY 04/1B meanwhile,
 * draining the commands in flight, failure mode with AUSE and EXIT FAILURE MODE, read-only. */
#include <errno.h>

#include "tests/unit/sbc_test.h"

static struct th_result sanitize(struct sbc_fx *fx, uint8_t b1, const uint8_t *plist, uint16_t plen)
{
	uint8_t c[16] = {0x48, b1};

	put_be16(c + 7, plen);
	return fx_exec(fx, c, plen ? SCSI_DIR_WRITE : SCSI_DIR_NONE, (void *)plist, plen);
}

static uint16_t ow_list(uint8_t *p, uint8_t b0, const uint8_t *pat, uint16_t plen)
{
	p[0] = b0;
	p[1] = 0;
	put_be16(p + 2, plen);
	memcpy(p + 4, pat, plen);
	return (uint16_t)(plen + 4);
}

static bool not_sanitizing(void *arg)
{
	struct scsi_dev *dev = arg;
	bool s;

	pthread_mutex_lock(&dev->lock);
	s = dev->sanitizing;
	pthread_mutex_unlock(&dev->lock);
	return !s;
}

SBC_TEST(sanitize, overwrite_with_a_full_block_pattern)
{
	uint8_t p[4 + 512], pat[512];
	struct th_result r;

	fx_fill(fx, 0, 256, 'a');
	fx_fill(fx, FX_BLOCKS - 256, 256, 'a');
	memset(pat, 0xaa, sizeof(pat));
	r = sanitize(fx, 0x01, p, ow_list(p, 0x01, pat, 512));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	fx_expect(fx, 0, FX_BLOCKS, 0xaa);
}

SBC_TEST(sanitize, overwrite_repeats_a_short_pattern)
{
	uint8_t p[8], pat[4] = {1, 2, 3, 4}, rd[1024];
	struct th_result r;

	r = sanitize(fx, 0x01, p, ow_list(p, 0x02, pat, 4)); /* two passes */
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(fx_read(fx, FX_BLOCKS - 2, 2, rd).status, SAM_STAT_GOOD);
	for (int i = 0; i < 1024; i++)
		cr_assert_eq(rd[i], pat[i % 4]);
}

Test(sanitize, overwrite_passes_and_invert)
{
	struct sbc_fx fx;
	uint8_t p[8], pat[4] = {0x0f, 0xf0, 0x5a, 0xa5}, rd[512];

	fx_init_ops(&fx, &spy_ops);
	cr_assert_eq(sanitize(&fx, 0x01, p, ow_list(p, 0x80 | 3, pat, 4)).status, SAM_STAT_GOOD);
	cr_assert_eq(atomic_load(&spy.write_sames), 3, "three passes over the 4 MiB LU");
	cr_assert_eq(atomic_load(&spy.flushes), 1, "made durable at the end");
	cr_assert_eq(fx_read(&fx, 77, 1, rd).status, SAM_STAT_GOOD);
	for (int i = 0; i < 512; i++)
		cr_assert_eq(rd[i], pat[i % 4], "the last pass writes the pattern itself");
	fx_fini(&fx);
}

SBC_TEST(sanitize, overwrite_parameter_checks)
{
	uint8_t p[4 + 520], pat[520];
	struct th_result r;

	memset(pat, 0x11, sizeof(pat));
	ow_list(p, 0x01, pat, 512);
	for (uint16_t len = 0; len < 5; len++) { /* 0..4: too short for a pattern */
		r = sanitize(fx, 0x01, p, len);
		th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
		th_assert_field(r, true, 7, -1);
	}
	r = sanitize(fx, 0x01, p, 512 + 5); /* longer than a block + header */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 7, -1);
	r = sanitize(fx, 0x01, p, ow_list(p, 0x00, pat, 512)); /* OVERWRITE COUNT 0 */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	ow_list(p, 0x01, pat, 512);
	put_be16(p + 2, 0); /* INITIALIZATION PATTERN LENGTH 0 */
	r = sanitize(fx, 0x01, p, 4 + 512);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	put_be16(p + 2, 516); /* longer than a block */
	r = sanitize(fx, 0x01, p, 4 + 512);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	put_be16(p + 2, 300); /* longer than the list that carries it */
	r = sanitize(fx, 0x01, p, 4 + 200);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	th_assert_field(r, false, 2, -1);
	r = sanitize(fx, 0x01, p, ow_list(p, 0x21, pat, 16)); /* TEST field */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	th_assert_field(r, false, 0, 6);
	{
		uint8_t c[16] = {0x48, 0x01};

		put_be16(c + 7, 4 + 16); /* the initiator sent less than announced */
		r = fx_exec(fx, c, SCSI_DIR_WRITE, p, 8);
		th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	}
	fx_expect(fx, 0, 16, 0);
}

static void erased(struct sbc_fx *fx, uint8_t sa)
{
	uint8_t c[16] = {0x9e, 0x12}, b[64];
	struct stat st;
	struct th_result r;

	fx_fill(fx, 0, 256, 'a');
	fx_fill(fx, FX_BLOCKS - 256, 256, 'a');
	r = sanitize(fx, sa, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	fx_expect(fx, 0, FX_BLOCKS, 0);
	if (sbc_thin(fx->dev)) {
		put_be32(c + 10, sizeof(b));
		r = fx_exec(fx, c, SCSI_DIR_READ, b, sizeof(b));
		cr_assert_eq(r.status, SAM_STAT_GOOD);
		cr_assert_eq(get_be32(b), 20, "one descriptor for the whole LU");
		cr_assert_eq(get_be32(b + 16), FX_BLOCKS);
		cr_assert_eq(b[20], 1, "deallocated");
	}
	if (fx_fileio(fx)) {
		cr_assert_eq(stat(fx->file, &st), 0);
		cr_assert_lt(st.st_blocks, 16, "the file still holds %lld sectors",
			     (long long)st.st_blocks);
	}
}

SBC_TEST(sanitize, block_erase_leaves_zeros)
{
	fx_thin(fx);
	erased(fx, 0x02);
}

/* BLOCK ERASE leaves every LBA deallocated, which only a thin LU can do (libiscsi's
 * Sanitize.BlockErase requires LBPME and then checks GET LBA STATUS): a fully provisioned LU
 * does not offer it (an unsupported service action, 24/00 on the field), and CRYPTOGRAPHIC
 * ERASE and OVERWRITE remain. */
SBC_TEST(sanitize, block_erase_needs_provisioning)
{
	struct th_result r;

	fx->dev->bs->thin_provisioned = false;
	fx_fill(fx, 0, 8, 'a');
	r = sanitize(fx, 0x02, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 1, 4);
	fx_expect(fx, 0, 8, 'a');
	cr_assert_eq(sanitize(fx, 0x03, NULL, 0).status, SAM_STAT_GOOD);
	fx_expect(fx, 0, 8, 0);
}

SBC_TEST(sanitize, crypto_erase_leaves_zeros)
{
	erased(fx, 0x03);
}

SBC_TEST(sanitize, erase_on_a_thin_ramdisk_drops_everything)
{
	if (fx_fileio(fx))
		return; /* the fileio fixture is thin already */
	fx_thin(fx);
	erased(fx, 0x02);
}

SBC_TEST(sanitize, cdb_checks)
{
	uint8_t p[8] = {0};
	struct th_result r;

	fx_thin(fx); /* BLOCK ERASE is offered */
	r = sanitize(fx, 0x02, p, 8); /* BLOCK ERASE takes no list */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 7, -1);
	r = sanitize(fx, 0x03, p, 8);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	r = sanitize(fx, 0x1f, p, 8);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	r = sanitize(fx, 0x42, NULL, 0); /* reserved bit 6 of byte 1 */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	th_assert_field(r, true, 1, 6);
	for (int i = 2; i <= 6; i++) {
		uint8_t c[16] = {0x48, 0x02};

		c[i] = (uint8_t)i;
		r = fx_exec(fx, c, SCSI_DIR_NONE, NULL, 0);
		th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
		th_assert_field(r, true, i, -1);
	}
	cr_assert_eq(sanitize(fx, 0x1f, NULL, 0).status, SAM_STAT_GOOD, "not in failure mode: no-op");
}

SBC_TEST(sanitize, read_only_lu_is_write_protected)
{
	struct th_result r;

	fx_thin(fx);
	fx->n.ents[0].read_only = true;
	r = sanitize(fx, 0x02, NULL, 0);
	th_assert_sense(r, SK_DATA_PROTECT, 0x27, 0x00);
	fx->n.ents[0].read_only = false;
}

Test(sanitize, immed_returns_at_once_and_other_commands_wait_not_ready)
{
	struct sbc_fx fx;
	uint8_t tur[16] = {0}, b[512];
	struct th_result r;

	fx_init_ops(&fx, &gate_ops); /* thin, deallocates: the erase is one UNMAP */
	fx_fill(&fx, 0, 8, 'a');
	gate_arm(BS_UNMAP);
	r = sanitize(&fx, 0x82, NULL, 0); /* IMMED BLOCK ERASE */
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert(gate_wait_parked(5), "the erase never reached the store");
	r = fx_read(&fx, 0, 1, b);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x1b);
	r = fx_exec(&fx, tur, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x1b);
	r = sanitize(&fx, 0x02, NULL, 0);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x1b);
	gate_release();
	cr_assert(fx_poll(not_sanitizing, fx.dev, 5));
	fx_expect(&fx, 0, 8, 0);
	fx_fini(&fx);
}

Test(sanitize, waits_for_commands_in_flight)
{
	struct sbc_fx fx;
	struct fx_job wr, san;
	uint8_t wc[16], sc[16] = {0x48, 0x02}, wb[512], b[512];
	struct th_result r;

	fx_init_ops(&fx, &gate_ops);
	memset(wb, 'w', sizeof(wb));
	cdb10(wc, 0x2a, 0, 3, 1);
	gate_arm(BS_WRITE);
	fx_job_start(&wr, &fx, wc, SCSI_DIR_WRITE, wb, 512);
	cr_assert(gate_wait_parked(5));
	fx_job_start(&san, &fx, sc, SCSI_DIR_NONE, NULL, 0);
	for (double end = fx_now() + 5; sbc_rangelock_waiters(fx.dev) == 0 && fx_now() < end;)
		usleep(1000);
	cr_assert_eq(sbc_rangelock_waiters(fx.dev), 1, "SANITIZE did not wait for the WRITE");
	r = fx_read(&fx, 100, 1, b); /* new commands are refused meanwhile */
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x1b);
	gate_release();
	cr_assert_eq(fx_job_join(&wr).status, SAM_STAT_GOOD);
	cr_assert_eq(fx_job_join(&san).status, SAM_STAT_GOOD);
	fx_expect(&fx, 3, 1, 0); /* erased after the WRITE */
	fx_fini(&fx);
}

Test(sanitize, failure_mode_and_exit)
{
	struct sbc_fx fx;
	uint8_t b[512];
	struct th_result r;

	fx_init_ops(&fx, &failing_ops);
	r = sanitize(&fx, 0x02, NULL, 0); /* AUSE=0 */
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x31, 0x03);
	r = fx_read(&fx, 0, 1, b);
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x31, 0x03);
	r = sanitize(&fx, 0x1f, NULL, 0); /* EXIT FAILURE MODE refused after AUSE=0 */
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	r = sanitize(&fx, 0x22, NULL, 0); /* again, AUSE=1: fails again */
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x31, 0x03);
	cr_assert_eq(sanitize(&fx, 0x1f, NULL, 0).status, SAM_STAT_GOOD);
	r = fx_read(&fx, 0, 1, b); /* out of failure mode: the store's own error now */
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x11, 0x00);
	fx_fini(&fx);
}

Test(sanitize, success_clears_failure_mode)
{
	struct sbc_fx fx;
	uint8_t b[512];
	struct th_result r;

	fx_init(&fx, "ramdisk");
	fx.dev->sanitize_failed = true;
	fx.dev->sanitize_ause = false;
	r = fx_read(&fx, 0, 1, b);
	th_assert_sense(r, SK_MEDIUM_ERROR, 0x31, 0x03);
	cr_assert_eq(sanitize(&fx, 0x03, NULL, 0).status, SAM_STAT_GOOD);
	cr_assert_eq(fx_read(&fx, 0, 1, b).status, SAM_STAT_GOOD);
	fx_fini(&fx);
}

/* A TMF aborts the SANITIZE command, not the sanitize operation (SBC-4: it goes on through
 * aborts, resets and I_T nexus loss; libiscsi's Sanitize.Reset): ABORT TASK and LOGICAL UNIT
 * RESET complete at once while the erase is still at the store, the LU stays NOT READY 04/1B
 * until the erase is done, and the data is erased. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
} sw = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static void san_tmf_done(struct scsi_tmf *tmf)
{
	(void)tmf;
	pthread_mutex_lock(&sw.mu);
	sw.done++;
	pthread_cond_broadcast(&sw.cv);
	pthread_mutex_unlock(&sw.mu);
}

/* Run a TMF; true when it completed within 5 s. */
static bool tmf_within(struct scsi_tmf *tmf)
{
	struct timespec dl;
	int rc = 0, want;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 5;
	pthread_mutex_lock(&sw.mu);
	want = sw.done + 1;
	pthread_mutex_unlock(&sw.mu);
	scsi_tmf_execute(tmf);
	pthread_mutex_lock(&sw.mu);
	while (sw.done < want && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&sw.cv, &sw.mu, &dl);
	pthread_mutex_unlock(&sw.mu);
	return rc != ETIMEDOUT;
}

Test(sanitize, abort_ends_the_command_not_the_operation, .timeout = 60)
{
	struct sbc_fx fx;
	struct fx_job san;
	struct scsi_tmf tmf;
	uint8_t sc[16] = {0x48, 0x02}, tur[16] = {0};
	struct th_result r;

	fx_init_ops(&fx, &gate_ops); /* thin, deallocates: the erase is one UNMAP */
	fx_fill(&fx, 0, 8, 'a');
	gate_arm(BS_UNMAP);
	fx_job_start(&san, &fx, sc, SCSI_DIR_NONE, NULL, 0); /* BLOCK ERASE, IMMED=0 */
	cr_assert(gate_wait_parked(5), "the erase never reached the store");

	memset(&tmf, 0, sizeof(tmf));
	tmf.fn = SCSI_TMF_ABORT_TASK;
	tmf.ref_tag = san.tag;
	tmf.nexus = &fx.n.nx;
	tmf.done = san_tmf_done;
	cr_assert(tmf_within(&tmf), "ABORT TASK waited for the sanitize operation");
	cr_assert_eq(tmf.resp, SCSI_TMF_COMPLETE);
	r = fx_job_join(&san);
	cr_assert(r.aborted, "the SANITIZE command ends aborted");
	r = fx_exec(&fx, tur, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x1b);

	tmf.fn = SCSI_TMF_LOGICAL_UNIT_RESET;
	cr_assert(tmf_within(&tmf), "LOGICAL UNIT RESET waited for the sanitize operation");
	r = fx_exec(&fx, tur, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x03);
	r = fx_exec(&fx, tur, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x1b);

	gate_release();
	cr_assert(fx_poll(not_sanitizing, fx.dev, 5));
	cr_assert_eq(fx_exec(&fx, tur, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
	fx_expect(&fx, 0, 8, 0);
	fx_fini(&fx);
}

/* sanitize_rate_mb: OVERWRITE writes no faster than that (a real medium takes its time; an
 * operator keeps a sanitize from starving the other LUs of the backing store).  2 MiB at
 * 1 MiB/s cannot finish in under two seconds; meanwhile the LU is NOT READY 04/1B (the TEST
 * UNIT READY right after the IMMED return must come before the end: 2 s, not the 0.5 s this
 * had at 4 MiB/s, leaves a loaded machine room). */
Test(sanitize, paced_overwrite)
{
	struct sbc_fx fx;
	uint8_t p[8], pat[4] = {9, 8, 7, 6}, tur[16] = {0};
	double t0, took;
	struct th_result r;

	fx_init_bs(&fx, "ramdisk", 512, (2u << 20) / 512);
	fx.dev->p.sanitize_rate_mb = 1;
	t0 = fx_now();
	r = sanitize(&fx, 0x81, p, ow_list(p, 0x01, pat, 4)); /* IMMED: returns at once */
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = fx_exec(&fx, tur, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x1b);
	cr_assert(fx_poll(not_sanitizing, fx.dev, 20));
	took = fx_now() - t0;
	cr_assert_geq(took, 2.0 - 0.01, "2 MiB at 1 MiB/s took %.3f s", took);
	for (uint64_t lba = 0; lba < fx.dev->nr_blocks; lba += fx.dev->nr_blocks - 1) {
		uint8_t b[512];

		cr_assert_eq(fx_read(&fx, lba, 1, b).status, SAM_STAT_GOOD);
		for (int i = 0; i < 512; i++)
			cr_assert_eq(b[i], pat[i % 4], "LBA %llu byte %d", (unsigned long long)lba,
				     i);
	}
	cr_assert_eq(fx_exec(&fx, tur, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
	fx_fini(&fx);
}
