/* scsi/scsi_exec.c: LUN resolution, opcode lookup, control byte, UNIT ATTENTION, write
 * protection, medium state, completion (sense format, residuals) -- on ramdisk and fileio. */
#include "gate_store.h"
#include "scsi_harness.h"

#include "scsi/scsi_core.h"

static struct scsi_dev *dev;
static struct th_nexus nx;

static void setup_on(const char *handler)
{
	dev = th_make_dev(handler, "exec0", 1 << 20, 512);
	th_nexus_init(&nx, "iqn.1994-05.com.example:init1", 1, &dev, 1);
}

static void teardown(void)
{
	scsi_nexus_unregister(&nx.nx);
	if (dev && dev->bs && dev->bs->filename[0])
		unlink(dev->bs->filename);
	scsi_dev_destroy(dev);
	dev = NULL;
	scsi_core_shutdown();
}

static void setup_ram(void)
{
	setup_on("ramdisk");
}
static void setup_file(void)
{
	setup_on("vdisk_fileio");
}

static const uint8_t tur[6] = {0x00};

static void power_on_ua_then_good(void)
{
	uint8_t inq[6] = {0x12, 0, 0, 0, 36, 0};
	uint8_t buf[36];
	struct th_result r;

	/* INQUIRY neither reports nor clears the UA */
	r = th_exec(&nx, 0, inq, 6, SCSI_DIR_READ, buf, sizeof(buf));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = th_exec(&nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x00);
	cr_assert_eq(r.sense[0], 0x70);
	cr_assert_eq(r.sense_len, 18);
	r = th_exec(&nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.sense_len, 0);
}
Test(exec_ram, power_on_ua_then_good, .init = setup_ram, .fini = teardown)
{
	power_on_ua_then_good();
}
Test(exec_file, power_on_ua_then_good, .init = setup_file, .fini = teardown)
{
	power_on_ua_then_good();
}

static void request_sense_returns_and_clears_ua(void)
{
	uint8_t rs[6] = {0x03, 0, 0, 0, 252, 0};
	uint8_t buf[252];
	struct th_result r;

	memset(buf, 0xaa, sizeof(buf));
	r = th_exec(&nx, 0, rs, 6, SCSI_DIR_READ, buf, sizeof(buf));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 18);
	cr_assert_eq(buf[0], 0x70);
	cr_assert_eq(buf[2] & 0xf, SK_UNIT_ATTENTION);
	cr_assert_eq(buf[12], 0x29);
	cr_assert_eq(buf[13], 0x00);
	cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(r.resid, 252 - 18);
	/* cleared: next one is NO SENSE, and TUR is GOOD */
	r = th_exec(&nx, 0, rs, 6, SCSI_DIR_READ, buf, sizeof(buf));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(buf[2] & 0xf, SK_NO_SENSE);
	cr_assert_eq(buf[12], 0);
	r = th_exec(&nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	/* descriptor format on request */
	rs[1] = 1;
	r = th_exec(&nx, 0, rs, 6, SCSI_DIR_READ, buf, sizeof(buf));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(r.data_len, 8);
	cr_assert_eq(buf[0], 0x72);
}
Test(exec_ram, request_sense_returns_and_clears_ua, .init = setup_ram, .fini = teardown)
{
	request_sense_returns_and_clears_ua();
}
Test(exec_file, request_sense_returns_and_clears_ua, .init = setup_file, .fini = teardown)
{
	request_sense_returns_and_clears_ua();
}

static void unknown_lun(void)
{
	uint8_t inq[6] = {0x12, 0, 0, 0, 96, 0};
	uint8_t rl[12] = {0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0};
	uint8_t rs[6] = {0x03, 0, 0, 0, 18, 0};
	uint8_t buf[96];
	struct th_result r;

	r = th_exec(&nx, 5, inq, 6, SCSI_DIR_READ, buf, sizeof(buf));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(buf[0], 0x7f, "PQ 011b / type 1Fh, got %#x", buf[0]);
	r = th_exec(&nx, 5, rl, 12, SCSI_DIR_READ, buf, 64);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(buf), 8);
	cr_assert_eq(r.data_len, 16);
	r = th_exec(&nx, 5, rs, 6, SCSI_DIR_READ, buf, 18);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(buf[2] & 0xf, SK_ILLEGAL_REQUEST);
	cr_assert_eq(buf[12], 0x25);
	r = th_exec(&nx, 5, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x25, 0x00);
	/* an unsupported opcode on an unknown LUN is still a LUN problem */
	uint8_t bad[6] = {0x02};
	r = th_exec(&nx, 5, bad, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x25, 0x00);
}
Test(exec_ram, unknown_lun, .init = setup_ram, .fini = teardown)
{
	unknown_lun();
}
Test(exec_file, unknown_lun, .init = setup_file, .fini = teardown)
{
	unknown_lun();
}

static void invalid_opcode_and_sa(void)
{
	uint8_t bad[6] = {0x02};
	uint8_t badsa[16] = {0x9e, 0x1e};
	struct th_result r;

	/* a pending UA wins over an unknown opcode */
	r = th_exec(&nx, 0, bad, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x00);
	r = th_exec(&nx, 0, bad, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x20, 0x00);
	cr_assert_eq(r.sense[15], 0, "no field pointer for an invalid opcode");
	r = th_exec(&nx, 0, badsa, 16, SCSI_DIR_READ, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	cr_assert_eq(r.sense[15], 0x80 | 0x40 | 0x08 | 4, "SKSV C/D BPV bit 4: %#x", r.sense[15]);
	cr_assert_eq(get_be16(r.sense + 16), 1);
}
Test(exec_ram, invalid_opcode_and_sa, .init = setup_ram, .fini = teardown)
{
	invalid_opcode_and_sa();
}
Test(exec_file, invalid_opcode_and_sa, .init = setup_file, .fini = teardown)
{
	invalid_opcode_and_sa();
}

/* An entry the LU does not offer (UNMAP on a fully provisioned LU) is an invalid opcode at
 * dispatch, after a pending UNIT ATTENTION, and reaches no handler. */
static void command_not_offered_by_lu(void)
{
	uint8_t unmap[10] = {0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0};
	uint8_t plist[24] = {0, 22, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	struct th_result r;

	dev->bs->thin_provisioned = false;
	cr_assert(!scsi_cmd_on_lu(scsi_cmd_lookup(unmap), dev, NULL));
	r = th_exec(&nx, 0, unmap, 10, SCSI_DIR_WRITE, plist, sizeof(plist));
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x00);
	r = th_exec(&nx, 0, unmap, 10, SCSI_DIR_WRITE, plist, sizeof(plist));
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x20, 0x00);
	cr_assert_eq(r.sense[15], 0, "no field pointer for an invalid opcode");
	cr_assert_eq(r.data_len, 0);
	dev->bs->thin_provisioned = true;
	cr_assert(scsi_cmd_on_lu(scsi_cmd_lookup(unmap), dev, NULL));
	r = th_exec(&nx, 0, unmap, 10, SCSI_DIR_WRITE, plist, sizeof(plist));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
}
Test(exec_ram, command_not_offered_by_lu, .init = setup_ram, .fini = teardown)
{
	command_not_offered_by_lu();
}
Test(exec_file, command_not_offered_by_lu, .init = setup_file, .fini = teardown)
{
	command_not_offered_by_lu();
}

static void control_byte(void)
{
	uint8_t t1[6] = {0x00, 0, 0, 0, 0, 0x04};
	uint8_t t2[10] = {0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};
	struct th_result r;

	th_clear_ua(&nx, 0);
	r = th_exec(&nx, 0, t1, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	cr_assert_eq(r.sense[15], 0x80 | 0x40 | 0x08 | 2);
	cr_assert_eq(get_be16(r.sense + 16), 5);
	r = th_exec(&nx, 0, t2, 10, SCSI_DIR_READ, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	cr_assert_eq(r.sense[15], 0x80 | 0x40 | 0x08 | 0);
	cr_assert_eq(get_be16(r.sense + 16), 9);
}
Test(exec_ram, control_byte, .init = setup_ram, .fini = teardown)
{
	control_byte();
}
Test(exec_file, control_byte, .init = setup_file, .fini = teardown)
{
	control_byte();
}

static void descriptor_sense_when_d_sense(void)
{
	uint8_t t1[6] = {0x00, 0, 0, 0, 0, 0x04};
	struct th_result r;

	th_clear_ua(&nx, 0);
	pthread_mutex_lock(&dev->lock);
	dev->mode.d_sense = true;
	pthread_mutex_unlock(&dev->lock);
	r = th_exec(&nx, 0, t1, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	cr_assert_eq(r.sense[0], 0x72);
	cr_assert_eq(r.sense[7], 8, "one sense-key-specific descriptor");
	cr_assert_eq(r.sense[8], 0x02);
	cr_assert_eq(r.sense[9], 0x06);
	cr_assert_eq(r.sense[12], 0x80 | 0x40 | 0x08 | 2);
	cr_assert_eq(get_be16(r.sense + 13), 5);
	cr_assert_eq(r.sense_len, 16);
}
Test(exec_ram, descriptor_sense_when_d_sense, .init = setup_ram, .fini = teardown)
{
	descriptor_sense_when_d_sense();
}
Test(exec_file, descriptor_sense_when_d_sense, .init = setup_file, .fini = teardown)
{
	descriptor_sense_when_d_sense();
}

static void write_protect(void)
{
	uint8_t w10[10] = {0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0};
	uint8_t data[512] = {0};
	struct th_result r;

	th_clear_ua(&nx, 0);
	nx.ents[0].read_only = true;
	r = th_exec(&nx, 0, w10, 10, SCSI_DIR_WRITE, data, sizeof(data));
	th_assert_sense(r, SK_DATA_PROTECT, 0x27, 0x00);
	cr_assert_eq(r.data_len, 0);
	cr_assert_eq(r.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(r.resid, 512);
	nx.ents[0].read_only = false;
	pthread_mutex_lock(&dev->lock);
	dev->mode.swp = true;
	scsi_dev_medium_changed(dev);
	pthread_mutex_unlock(&dev->lock);
	r = th_exec(&nx, 0, w10, 10, SCSI_DIR_WRITE, data, sizeof(data));
	th_assert_sense(r, SK_DATA_PROTECT, 0x27, 0x00);
	pthread_mutex_lock(&dev->lock);
	dev->mode.swp = false;
	scsi_dev_medium_changed(dev);
	pthread_mutex_unlock(&dev->lock);
	dev->bs->read_only = true;
	r = th_exec(&nx, 0, w10, 10, SCSI_DIR_WRITE, data, sizeof(data));
	th_assert_sense(r, SK_DATA_PROTECT, 0x27, 0x00);
	dev->bs->read_only = false;
}
Test(exec_ram, write_protect, .init = setup_ram, .fini = teardown)
{
	write_protect();
}
Test(exec_file, write_protect, .init = setup_file, .fini = teardown)
{
	write_protect();
}

/* While a sanitize operation runs, only INQUIRY, REPORT LUNS and REQUEST SENSE are served
 * (SBC-4 sanitize); everything else, medium access or not (START STOP UNIT, MODE SENSE, ...),
 * is NOT READY 04/1B (libiscsi Sanitize.Reset sends START STOP UNIT). */
static void sanitize_in_progress(void)
{
	static const uint8_t ssu[6] = {0x1b, 0, 0, 0, 1, 0}, ms[6] = {0x1a, 0x08, 0x3f, 0, 255, 0};
	static const uint8_t inq[6] = {0x12, 0, 0, 0, 96, 0}, rs[6] = {0x03, 0, 0, 0, 18, 0};
	static const uint8_t rl[12] = {0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
	uint8_t b[256];
	struct th_result r;

	th_clear_ua(&nx, 0);
	pthread_mutex_lock(&dev->lock);
	dev->sanitizing = true;
	scsi_dev_medium_changed(dev);
	pthread_mutex_unlock(&dev->lock);
	r = th_exec(&nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x1b);
	r = th_exec(&nx, 0, ssu, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x1b);
	r = th_exec(&nx, 0, ms, 6, SCSI_DIR_READ, b, 255);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x1b);
	cr_assert_eq(th_exec(&nx, 0, inq, 6, SCSI_DIR_READ, b, 96).status, SAM_STAT_GOOD);
	cr_assert_eq(th_exec(&nx, 0, rl, 12, SCSI_DIR_READ, b, 256).status, SAM_STAT_GOOD);
	cr_assert_eq(th_exec(&nx, 0, rs, 6, SCSI_DIR_READ, b, 18).status, SAM_STAT_GOOD);
	pthread_mutex_lock(&dev->lock);
	dev->sanitizing = false;
	scsi_dev_medium_changed(dev);
	pthread_mutex_unlock(&dev->lock);
	cr_assert_eq(th_exec(&nx, 0, ssu, 6, SCSI_DIR_NONE, NULL, 0).status, SAM_STAT_GOOD);
	cr_assert_eq(th_exec(&nx, 0, ms, 6, SCSI_DIR_READ, b, 255).status, SAM_STAT_GOOD);
}
Test(exec_ram, sanitize_in_progress, .init = setup_ram, .fini = teardown)
{
	sanitize_in_progress();
}
Test(exec_file, sanitize_in_progress, .init = setup_file, .fini = teardown)
{
	sanitize_in_progress();
}

static void medium_state(void)
{
	uint8_t r10[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0};
	uint8_t data[512];
	struct th_result r;

	th_clear_ua(&nx, 0);
	pthread_mutex_lock(&dev->lock);
	dev->stopped = true;
	scsi_dev_medium_changed(dev);
	pthread_mutex_unlock(&dev->lock);
	r = th_exec(&nx, 0, r10, 10, SCSI_DIR_READ, data, sizeof(data));
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x02);
	r = th_exec(&nx, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x02);
	pthread_mutex_lock(&dev->lock);
	dev->medium_removed = true;
	scsi_dev_medium_changed(dev);
	pthread_mutex_unlock(&dev->lock);
	r = th_exec(&nx, 0, r10, 10, SCSI_DIR_READ, data, sizeof(data));
	th_assert_sense(r, SK_NOT_READY, 0x3a, 0x00);
}
Test(exec_ram, medium_state, .init = setup_ram, .fini = teardown)
{
	medium_state();
}
Test(exec_file, medium_state, .init = setup_file, .fini = teardown)
{
	medium_state();
}

/* A handler that finishes later, from another thread, through scsi_run_blocking(). */
static enum scsi_sr blocking_fn(struct scsi_task *t)
{
	static const uint8_t pattern[4] = {1, 2, 3, 4};
	scsi_data_in(t, pattern, 4);
	return SR_OK;
}
static enum scsi_sr async_inquiry(struct scsi_task *t)
{
	return scsi_run_blocking(t, blocking_fn);
}

Test(exec_ram, run_blocking_completes_on_worker, .init = setup_ram, .fini = teardown)
{
	struct scsi_task t;
	struct th_wait w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	uint8_t buf[8] = {0};
	struct iovec iov = {buf, sizeof(buf)};

	/* drive the async path directly: the task is set up as the engine would */
	memset(&t, 0, sizeof(t));
	t.nexus = &nx.nx;
	t.dir = SCSI_DIR_READ;
	t.exp_xfer_len = sizeof(buf);
	t.iov = &iov;
	t.iovcnt = 1;
	t.done = th_done_cb;
	t.priv = &w;
	cr_assert_eq(async_inquiry(&t), SR_ASYNC);
	pthread_mutex_lock(&w.mu);
	while (!w.done)
		pthread_cond_wait(&w.cv, &w.mu);
	pthread_mutex_unlock(&w.mu);
	cr_assert_eq(t.status, SAM_STAT_GOOD);
	cr_assert_eq(t.data_len, 4);
	cr_assert_eq(t.resid_kind, SCSI_RESID_UNDER);
	cr_assert_eq(t.resid, 4);
	cr_assert_eq(buf[3], 4);
}

Test(exec_ram, lazy_core_after_shutdown, .init = setup_ram, .fini = teardown)
{
	/* the core restarts its workers on demand after a shutdown */
	scsi_core_shutdown();
	struct scsi_task t;
	struct th_wait w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	memset(&t, 0, sizeof(t));
	t.done = th_done_cb;
	t.priv = &w;
	cr_assert_eq(scsi_run_blocking(&t, blocking_fn), SR_ASYNC);
	pthread_mutex_lock(&w.mu);
	while (!w.done)
		pthread_cond_wait(&w.cv, &w.mu);
	pthread_mutex_unlock(&w.mu);
	cr_assert_eq(t.status, SAM_STAT_GOOD);
	cr_assert_eq(t.data_len, 0, "dir NONE moves no data");
	cr_assert_eq(t.resid_kind, SCSI_RESID_OVER);
	cr_assert_eq(t.resid, 4);
}

Test(exec, opcode_lookup)
{
	uint8_t c1[16] = {0x9e, 0x10};
	uint8_t c2[16] = {0x9e, 0x11};
	uint8_t c3[16] = {0x28};
	cr_assert_not_null(scsi_cmd_lookup(c1));
	cr_assert_str_eq(scsi_cmd_lookup(c1)->name, "READ CAPACITY(16)");
	cr_assert_null(scsi_cmd_lookup(c2));
	cr_assert(scsi_cmd_opcode_known(0x9e));
	cr_assert_not(scsi_cmd_opcode_known(0x02));
	cr_assert_str_eq(scsi_cmd_lookup(c3)->name, "READ(10)");
	/* every row is reachable through the lookup, for an LU of a type that offers it */
	for (unsigned i = 0; i < scsi_cmd_table_len; i++) {
		const struct scsi_dev disk = {0}, cd = {.p.type = SCSI_TYPE_CDROM};
		const struct scsi_cmd_desc *d = &scsi_cmd_table[i];
		uint8_t cdb[16] = {d->opcode};
		if (d->flags & SCSI_CF_SA)
			cdb[1] = d->sa;
		cr_assert_eq(scsi_cmd_lookup_dev(cdb, scsi_cmd_for_type(d, &disk) ? &disk : &cd),
			     d, "row %u %s", i, d->name);
	}
	/* 42h: UNMAP for a disk (and when no LU is known), READ SUB-CHANNEL for a CD-ROM */
	cr_assert_str_eq(scsi_cmd_lookup((uint8_t[16]){0x42})->name, "UNMAP");
	cr_assert_str_eq(scsi_cmd_lookup_dev((uint8_t[16]){0x42}, &(struct scsi_dev){0})->name,
			 "UNMAP");
	cr_assert_str_eq(
	    scsi_cmd_lookup_dev((uint8_t[16]){0x42}, &(struct scsi_dev){.p.type = SCSI_TYPE_CDROM})
		->name,
	    "READ SUB-CHANNEL");
}

/* ---- lock-free admission (dev->exc): taken when nothing is pending, bypassed otherwise ---- */

static struct th_nexus nx2;
static const uint8_t rd10[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0};
static const uint8_t wr10[10] = {0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0};

static uint64_t fast_admits(void)
{
	return __atomic_load_n(&dev->fast_admits, __ATOMIC_RELAXED);
}

/* Run a READ(10) from n; return whether it took the lock-free admission. */
static bool read_fast(struct th_nexus *n, struct th_result *r)
{
	uint8_t data[512];
	uint64_t before = fast_admits();

	*r = th_exec(n, 0, rd10, 10, SCSI_DIR_READ, data, sizeof(data));
	return fast_admits() != before;
}

static void setup_two(void)
{
	setup_on("ramdisk");
	th_nexus_init(&nx2, "iqn.1994-05.com.example:init2", 1, &dev, 1);
	th_clear_ua(&nx, 0);
	th_clear_ua(&nx2, 0);
}

static void teardown_two(void)
{
	scsi_nexus_unregister(&nx2.nx);
	teardown();
}

Test(exec_fast, taken_when_nothing_pending, .init = setup_two, .fini = teardown_two)
{
	uint8_t data[512] = {0x5a};
	struct th_result r;
	uint64_t before;

	cr_assert_eq(scsi_exc_get(dev), 0);
	cr_assert(read_fast(&nx, &r));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	before = fast_admits();
	r = th_exec(&nx2, 0, wr10, 10, SCSI_DIR_WRITE, data, sizeof(data));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(fast_admits(), before + 1);
	/* ORDERED and HEAD OF QUEUE never take it */
	before = fast_admits();
	r = th_exec_attr(&nx, 0, rd10, 10, SCSI_DIR_READ, data, sizeof(data), SCSI_ATTR_ORDERED, 7);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = th_exec_attr(&nx, 0, rd10, 10, SCSI_DIR_READ, data, sizeof(data),
			 SCSI_ATTR_HEAD_OF_QUEUE, 8);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(fast_admits(), before);
}

Test(exec_fast, first_contact_reports_power_on, .init = setup_two, .fini = teardown_two)
{
	struct th_nexus nx3;
	struct th_result r;

	th_nexus_init(&nx3, "iqn.1994-05.com.example:init3", 1, &dev, 1);
	cr_assert_eq(scsi_exc_get(dev), 0); /* nothing pending for the nexuses seen so far */
	cr_assert_not(read_fast(&nx3, &r));
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x00);
	cr_assert(read_fast(&nx3, &r));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	scsi_nexus_unregister(&nx3.nx);
}

Test(exec_fast, bypassed_while_a_ua_is_pending, .init = setup_two, .fini = teardown_two)
{
	struct th_result r;

	scsi_ua_raise(dev, nx2.nx.initiator_port, nx2.nx.rel_tgt_id, 0x2a, 0x09);
	cr_assert(scsi_exc_get(dev) & SCSI_EXC_UA);
	/* another nexus's UA: nx's READ is served, through the locked path */
	cr_assert_not(read_fast(&nx, &r));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	/* nx2's own: reported */
	cr_assert_not(read_fast(&nx2, &r));
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x09);
	cr_assert_eq(scsi_exc_get(dev), 0);
	cr_assert(read_fast(&nx2, &r));
}

Test(exec_fast, bypassed_while_reserved, .init = setup_two, .fini = teardown_two)
{
	static const uint8_t reserve6[6] = {0x16}, release6[6] = {0x17};
	uint8_t data[512] = {0};
	struct th_result r;
	uint64_t before;

	r = th_exec(&nx2, 0, reserve6, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert(scsi_exc_get(dev) & SCSI_EXC_RESERVED);
	cr_assert_not(read_fast(&nx, &r));
	cr_assert_eq(r.status, SAM_STAT_RESERVATION_CONFLICT);
	before = fast_admits();
	r = th_exec(&nx, 0, wr10, 10, SCSI_DIR_WRITE, data, sizeof(data));
	cr_assert_eq(r.status, SAM_STAT_RESERVATION_CONFLICT);
	cr_assert_not(read_fast(&nx2, &r)); /* the holder too goes the locked way */
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(fast_admits(), before);
	r = th_exec(&nx2, 0, release6, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(scsi_exc_get(dev), 0);
	cr_assert(read_fast(&nx, &r));
}

static void set_medium(bool sanitizing, bool stopped)
{
	pthread_mutex_lock(&dev->lock);
	dev->sanitizing = sanitizing;
	dev->stopped = stopped;
	scsi_dev_medium_changed(dev);
	pthread_mutex_unlock(&dev->lock);
}

Test(exec_fast, bypassed_while_sanitizing_or_stopped, .init = setup_two, .fini = teardown_two)
{
	struct th_result r;

	set_medium(true, false);
	cr_assert_not(read_fast(&nx, &r));
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x1b);
	set_medium(false, true);
	cr_assert_not(read_fast(&nx, &r));
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x02);
	set_medium(false, false);
	cr_assert(read_fast(&nx, &r));
	cr_assert_eq(r.status, SAM_STAT_GOOD);
}

/* On a gated LU: a READ held in the backstore keeps an ORDERED task, or a TMF, pending. */
static void setup_gate(void)
{
	dev = gate_make_dev("fastgate", 1 << 20);
	th_nexus_init(&nx, "iqn.1994-05.com.example:init1", 1, &dev, 1);
	th_nexus_init(&nx2, "iqn.1994-05.com.example:init2", 1, &dev, 1);
	th_clear_ua(&nx, 0);
	th_clear_ua(&nx2, 0);
}

/* A failed assertion leaves a READ at the gate: let it finish, or destroy would wait for it. */
static void teardown_gate(void)
{
	gate_set(true);
	teardown_two();
}

/* WRITEs pass the gate (it holds READs only). */
static bool write_fast(struct th_nexus *n, uint8_t *status)
{
	uint8_t data[512] = {0};
	uint64_t before = fast_admits();
	struct th_result r = th_exec(n, 0, wr10, 10, SCSI_DIR_WRITE, data, sizeof(data));

	*status = r.status;
	return fast_admits() != before;
}

Test(exec_fast, bypassed_while_an_ordered_task_is_in_the_set, .init = setup_gate,
     .fini = teardown_gate)
{
	struct async_task *ord = async_task_new(&nx2, 0, rd10, 10, SCSI_DIR_READ, NULL, 512, 1);
	uint8_t st;

	ord->t.attr = SCSI_ATTR_ORDERED;
	async_task_start(ord);
	gate_wait_reads(1); /* the ORDERED READ is in the backstore, still in the task set */
	cr_assert(scsi_exc_get(dev) & SCSI_EXC_TASKSET);
	/* the SIMPLE WRITE (submitted here: it queues, it does not block) waits behind it, then
	 * runs through the locked path */
	struct async_task *w = async_task_new(&nx, 0, wr10, 10, SCSI_DIR_WRITE, NULL, 512, 2);
	uint64_t before = fast_admits();
	scsi_task_execute(&w->t);
	cr_assert_not(w->w.done);
	gate_set(true);
	async_task_wait(ord);
	pthread_mutex_lock(&w->w.mu);
	while (!w->w.done)
		pthread_cond_wait(&w->w.cv, &w->w.mu);
	pthread_mutex_unlock(&w->w.mu);
	cr_assert_eq(ord->t.status, SAM_STAT_GOOD);
	cr_assert_eq(w->t.status, SAM_STAT_GOOD);
	cr_assert_eq(fast_admits(), before);
	cr_assert_eq(scsi_exc_get(dev), 0);
	cr_assert(write_fast(&nx, &st));
	free(ord);
	free(w);
}

struct tmf_wait {
	struct scsi_tmf tmf;
	struct th_wait w;
};

static void tmf_wait_done(struct scsi_tmf *tmf)
{
	struct tmf_wait *m = tmf->priv;

	pthread_mutex_lock(&m->w.mu);
	m->w.done = true;
	pthread_cond_signal(&m->w.cv);
	pthread_mutex_unlock(&m->w.mu);
}

Test(exec_fast, bypassed_while_a_tmf_runs, .init = setup_gate, .fini = teardown_gate)
{
	struct async_task *rd = async_task_new(&nx, 0, rd10, 10, SCSI_DIR_READ, NULL, 512, 0x11);
	/* static: its done() may still come after a failed assertion left this frame */
	static struct tmf_wait m = {.w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER}};
	uint8_t st;

	async_task_start(rd);
	gate_wait_reads(1);
	m.tmf.fn = SCSI_TMF_ABORT_TASK;
	m.tmf.ref_tag = 0x11;
	m.tmf.nexus = &nx.nx;
	m.tmf.done = tmf_wait_done;
	m.tmf.priv = &m;
	scsi_tmf_execute(&m.tmf); /* waits for the READ in the backstore */
	cr_assert_not(m.w.done);
	cr_assert_eq(scsi_exc_get(dev), SCSI_EXC_TMF_ONE);
	cr_assert_not(write_fast(&nx2, &st));
	cr_assert_eq(st, SAM_STAT_GOOD);
	gate_set(true);
	async_task_wait(rd);
	pthread_mutex_lock(&m.w.mu);
	while (!m.w.done)
		pthread_cond_wait(&m.w.cv, &m.w.mu);
	pthread_mutex_unlock(&m.w.mu);
	cr_assert(rd->t.aborted);
	cr_assert_eq(scsi_exc_get(dev), 0);
	cr_assert(write_fast(&nx2, &st));
	cr_assert_eq(st, SAM_STAT_GOOD);
	free(rd);
}
