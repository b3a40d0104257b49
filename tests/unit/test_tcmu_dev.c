/* A TCMU device end to end through the real SCSI core on a ramdisk (tcmu_dev.c): the fake
 * kernel of test_tcmu_fake.h queues CDBs whose iovecs point into its data area, the device
 * runs them, and the completions are read back the way the kernel reaps them. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/scsi_harness.h"
#include "tests/unit/test_tcmu_fake.h"
#include "transports/tcmu/tcmu_dev.h"

#define BLOCKS 2048 /* 1 MiB ramdisk, 512-byte blocks */

struct waiter {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned wakes, kicks;
};

static void w_wake(void *ctx)
{
	struct waiter *w = ctx;
	pthread_mutex_lock(&w->mu);
	w->wakes++;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

static void (*kick_also)(void); /* a test's own look inside the kick */

static void w_kick(void *ctx)
{
	((struct waiter *)ctx)->kicks++;
	if (kick_also)
		kick_also();
}

static struct waiter W = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
static struct fk K;
static struct tcmu_dev *D;
static struct scsi_dev *SD;

static void up_on(const char *handler, uint16_t flags, uint32_t max_xfer)
{
	char err[128] = "";
	cr_assert_eq(scsi_core_init(2), 0);
	SD = th_make_dev(handler, "r0", BLOCKS * 512, 512);
	fk_init(&K, 64 << 10, 1 << 20, flags);
	D = tcmu_dev_new("t0", K.mem, K.size, SD, max_xfer,
			 &(struct tcmu_dev_hooks){.kick = w_kick, .wake = w_wake, .ctx = &W}, err,
			 sizeof(err));
	cr_assert_not_null(D, "%s", err);
}

static void up_max(uint16_t flags, uint32_t max_xfer)
{
	up_on("ramdisk", flags, max_xfer);
}

static void up(uint16_t flags)
{
	up_max(flags, 0);
}

/* Reap until nothing is in flight (bounded: 10 s). */
static void settle(void)
{
	time_t end = time(NULL) + 10;
	for (;;) {
		struct timespec ts;
		tcmu_dev_reap(D);
		if (!tcmu_dev_inflight(D))
			return;
		cr_assert_lt(time(NULL), end, "%u command(s) never completed",
			     tcmu_dev_inflight(D));
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000)
			ts.tv_sec++, ts.tv_nsec -= 1000000000;
		pthread_mutex_lock(&W.mu);
		pthread_cond_timedwait(&W.cv, &W.mu, &ts);
		pthread_mutex_unlock(&W.mu);
	}
}

/* Queue one command, run it, return its completion. */
static struct fk_done run(const uint8_t *cdb, unsigned cdb_len, const uint64_t (*iov)[2],
			  unsigned niov)
{
	struct fk_done d[2];
	uint16_t id = fk_cmd(&K, cdb, cdb_len, iov, niov);
	cr_assert_eq(tcmu_dev_poll(D), 1);
	settle();
	cr_assert_eq(fk_reap(&K, d, 2), 1);
	cr_assert_eq(d[0].cmd_id, id);
	return d[0];
}

static void clear_ua(void)
{
	static const uint8_t tur[6] = {0};
	for (int i = 0; i < 4; i++)
		if (run(tur, 6, NULL, 0).status == 0)
			return;
	cr_assert_fail("TEST UNIT READY never GOOD");
}

static void rw10(uint8_t *cdb, bool write, uint32_t lba, uint16_t n)
{
	memset(cdb, 0, 10);
	cdb[0] = write ? 0x2a : 0x28;
	cdb[2] = lba >> 24, cdb[3] = lba >> 16, cdb[4] = lba >> 8, cdb[5] = lba;
	cdb[7] = n >> 8, cdb[8] = n;
}

static void down(void)
{
	tcmu_dev_free(D);
	fk_fini(&K);
}

Test(tcmu_dev, write_then_read_byte_for_byte)
{
	uint8_t cdb[10], pat[8192];
	uint64_t wiov[3][2], riov[2][2];
	struct fk_done d;
	unsigned kicks;

	up(TCMU_MAILBOX_FLAG_CAP_OOOC | TCMU_MAILBOX_FLAG_CAP_READ_LEN);
	clear_ua();
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 7 + (i >> 9));
	/* the data-out in three uneven pieces */
	wiov[0][0] = fk_data(&K, 1000), wiov[0][1] = 1000;
	wiov[1][0] = fk_data(&K, 3096), wiov[1][1] = 3096;
	wiov[2][0] = fk_data(&K, 4096), wiov[2][1] = 4096;
	memcpy(K.mem + wiov[0][0], pat, 1000);
	memcpy(K.mem + wiov[1][0], pat + 1000, 3096);
	memcpy(K.mem + wiov[2][0], pat + 4096, 4096);
	rw10(cdb, true, 100, 16);
	kicks = W.kicks;
	d = run(cdb, 10, wiov, 3);
	cr_assert_eq(d.status, 0, "WRITE status 0x%02x sense key 0x%x", d.status, d.sense[2]);
	cr_assert_gt(W.kicks, kicks, "the kernel is kicked when cmd_tail moves");

	riov[0][0] = fk_data(&K, 4096), riov[0][1] = 4096;
	riov[1][0] = fk_data(&K, 4096), riov[1][1] = 4096;
	memset(K.mem + riov[0][0], 0xee, 4096);
	memset(K.mem + riov[1][0], 0xee, 4096);
	rw10(cdb, false, 100, 16);
	d = run(cdb, 10, riov, 2);
	cr_assert_eq(d.status, 0);
	cr_assert_eq(d.uflags & TCMU_UFLAG_READ_LEN, 0, "no underflow: no read_len");
	cr_assert_arr_eq(K.mem + riov[0][0], pat, 4096);
	cr_assert_arr_eq(K.mem + riov[1][0], pat + 4096, 4096);

	/* neighbours untouched: LBA 99 and 116 still read as zeroes */
	rw10(cdb, false, 99, 1);
	riov[0][1] = 512;
	memset(K.mem + riov[0][0], 0xee, 512);
	cr_assert_eq(run(cdb, 10, riov, 1).status, 0);
	for (int i = 0; i < 512; i++)
		cr_assert_eq(K.mem[riov[0][0] + i], 0);
	down();
}

Test(tcmu_dev, bad_lba_gives_check_condition_with_sense)
{
	uint8_t cdb[10];
	uint64_t iov[1][2];
	struct fk_done d;

	up(TCMU_MAILBOX_FLAG_CAP_OOOC);
	clear_ua();
	iov[0][0] = fk_data(&K, 512), iov[0][1] = 512;
	rw10(cdb, false, BLOCKS, 1);
	d = run(cdb, 10, iov, 1);
	cr_assert_eq(d.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(d.sense[2] & 0x0f, 0x05, "ILLEGAL REQUEST");
	cr_assert_eq(d.sense[12], 0x21, "LOGICAL BLOCK ADDRESS OUT OF RANGE");
	down();
}

Test(tcmu_dev, inquiry_underflow_reports_read_len)
{
	static const uint8_t inq[6] = {0x12, 0, 0, 0, 0xff, 0};
	uint64_t iov[1][2];
	struct fk_done d;

	up(TCMU_MAILBOX_FLAG_CAP_OOOC | TCMU_MAILBOX_FLAG_CAP_READ_LEN);
	iov[0][0] = fk_data(&K, 255), iov[0][1] = 255;
	d = run(inq, 6, iov, 1); /* INQUIRY answers even with a UNIT ATTENTION pending */
	cr_assert_eq(d.status, 0);
	cr_assert(d.uflags & TCMU_UFLAG_READ_LEN);
	cr_assert_geq(d.read_len, 36);
	cr_assert_lt(d.read_len, 255);
	cr_assert_eq(K.mem[iov[0][0]] & 0x1f, 0, "direct-access block device");
	down();
}

Test(tcmu_dev, unsupported_opcode_is_invalid_command)
{
	static const uint8_t vendor[10] = {0xd9};
	struct fk_done d;

	up(TCMU_MAILBOX_FLAG_CAP_OOOC);
	clear_ua();
	d = run(vendor, 10, NULL, 0);
	cr_assert_eq(d.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(d.sense[2] & 0x0f, 0x05);
	cr_assert_eq(d.sense[12], 0x20, "INVALID COMMAND OPERATION CODE");
	down();
}

Test(tcmu_dev, malformed_entry_is_answered_and_the_next_served)
{
	uint8_t cdb[10];
	uint64_t iov[1][2] = {{FK_CMDR_OFF + 64, 512}}; /* points into the command ring */
	struct fk_done d;

	up(TCMU_MAILBOX_FLAG_CAP_OOOC);
	clear_ua();
	rw10(cdb, true, 0, 1);
	d = run(cdb, 10, iov, 1);
	cr_assert_eq(d.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(d.sense[2] & 0x0f, 0x04, "HARDWARE ERROR");
	cr_assert_eq(d.sense[12], 0x44, "INTERNAL TARGET FAILURE");
	iov[0][0] = fk_data(&K, 512);
	rw10(cdb, false, 0, 1);
	cr_assert_eq(run(cdb, 10, iov, 1).status, 0);
	cr_assert_not(tcmu_dev_broken(D));
	down();
}

Test(tcmu_dev, broken_ring_stops_the_device)
{
	up(TCMU_MAILBOX_FLAG_CAP_OOOC);
	fk_hdr(&K, 0, 0, TCMU_OP_CMD, 1);
	fk_set_head(&K, 64);
	cr_assert_eq(tcmu_dev_poll(D), 0);
	cr_assert(tcmu_dev_broken(D));
	cr_assert_eq(tcmu_dev_poll(D), 0);
	down();
}

Test(tcmu_dev, many_iovecs)
{
	uint8_t cdb[10];
	uint64_t iov[40][2];

	up(TCMU_MAILBOX_FLAG_CAP_OOOC);
	clear_ua();
	for (int i = 0; i < 40; i++) {
		iov[i][0] = fk_data(&K, 512), iov[i][1] = 512;
		memset(K.mem + iov[i][0], i + 1, 512);
	}
	rw10(cdb, true, 200, 40);
	cr_assert_eq(run(cdb, 10, iov, 40).status, 0);
	for (int i = 0; i < 40; i++)
		memset(K.mem + iov[i][0], 0, 512);
	rw10(cdb, false, 200, 40);
	cr_assert_eq(run(cdb, 10, iov, 40).status, 0);
	for (int i = 0; i < 40; i++)
		cr_assert_eq(K.mem[iov[i][0] + 511], i + 1, "block %d", i);
	down();
}

/* 64 commands in flight at once; every one answered exactly once, the ring drained. */
static void many_in_flight(uint16_t flags)
{
	uint8_t cdb[10];
	uint16_t ids[64];
	struct fk_done d[64];
	bool seen[64] = {false};
	unsigned n;

	up(flags);
	clear_ua();
	for (int i = 0; i < 64; i++) {
		uint64_t iov[1][2] = {{fk_data(&K, 4096), 4096}};
		memset(K.mem + iov[0][0], i, 4096);
		rw10(cdb, i % 2 == 0, (uint32_t)(i / 2) * 8, 8);
		ids[i] = fk_cmd(&K, cdb, 10, iov, 1);
	}
	cr_assert_eq(tcmu_dev_poll(D), 64);
	settle();
	n = fk_reap(&K, d, 64);
	cr_assert_eq(n, 64);
	for (unsigned i = 0; i < n; i++) {
		int j = 0;
		while (j < 64 && ids[j] != d[i].cmd_id)
			j++;
		cr_assert_lt(j, 64, "unknown cmd_id %u", d[i].cmd_id);
		cr_assert_not(seen[j], "cmd_id %u answered twice", d[i].cmd_id);
		seen[j] = true;
		cr_assert_eq(d[i].status, 0);
		if (!(flags & TCMU_MAILBOX_FLAG_CAP_OOOC))
			cr_assert_eq(d[i].cmd_id, ids[i], "in ring order without CAP_OOOC");
	}
	cr_assert_eq(fk_tail(&K), K.head);
	/* what the 32 concurrent writes stored (write i used the pattern byte i) */
	for (int i = 0; i < 64; i += 2) {
		uint64_t iov[1][2] = {{fk_data(&K, 4096), 4096}};
		memset(K.mem + iov[0][0], 0xee, 4096);
		rw10(cdb, false, (uint32_t)(i / 2) * 8, 8);
		cr_assert_eq(run(cdb, 10, iov, 1).status, 0);
		for (int b = 0; b < 4096; b++)
			cr_assert_eq(K.mem[iov[0][0] + b], i, "write %d, byte %d", i, b);
	}
	down();
}

Test(tcmu_dev, many_in_flight_out_of_order)
{
	many_in_flight(TCMU_MAILBOX_FLAG_CAP_OOOC);
}

Test(tcmu_dev, many_in_flight_in_order)
{
	many_in_flight(0);
}

Test(tcmu_dev, closed_device_takes_no_more)
{
	static const uint8_t tur[6] = {0};

	up(TCMU_MAILBOX_FLAG_CAP_OOOC);
	tcmu_dev_close(D);
	fk_cmd(&K, tur, 6, NULL, 0);
	cr_assert_eq(tcmu_dev_poll(D), 0);
	cr_assert_eq(tcmu_dev_inflight(D), 0);
	down();
}

/* What a polling ring thread looks at: an entry queued and not yet taken, and nothing once
 * it is taken or the device closes. */
Test(tcmu_dev, pending_sees_queued_entries_until_taken)
{
	static const uint8_t tur[6] = {0};

	up(TCMU_MAILBOX_FLAG_CAP_OOOC);
	cr_assert_not(tcmu_dev_pending(D), "an empty ring has nothing pending");
	fk_cmd(&K, tur, 6, NULL, 0);
	cr_assert(tcmu_dev_pending(D), "a queued TEST UNIT READY is pending");
	cr_assert_eq(tcmu_dev_poll(D), 1);
	cr_assert_not(tcmu_dev_pending(D), "taken: nothing pending");
	fk_cmd(&K, tur, 6, NULL, 0);
	tcmu_dev_close(D);
	cr_assert_not(tcmu_dev_pending(D), "a closing device takes nothing more");
	down();
}

/* LIO's hw_max_sectors reaches the initiator as MAXIMUM TRANSFER LENGTH (VPD B0). */
Test(tcmu_dev, block_limits_announce_what_lio_takes)
{
	static const uint8_t vpd_b0[6] = {0x12, 0x01, 0xb0, 0, 64, 0};
	uint64_t iov[1][2];
	const uint8_t *p;

	up_max(TCMU_MAILBOX_FLAG_CAP_OOOC, 64 << 10);
	iov[0][0] = fk_data(&K, 64), iov[0][1] = 64;
	cr_assert_eq(run(vpd_b0, 6, iov, 1).status, 0);
	p = K.mem + iov[0][0];
	cr_assert_eq(p[1], 0xb0);
	cr_assert_eq((uint32_t)p[8] << 24 | p[9] << 16 | p[10] << 8 | p[11], 128,
		     "64 KiB = 128 blocks of 512");
	down();
}

/* Wait until the device holds exactly n commands (the hang_lba ones stay). */
static void settle_to(unsigned n)
{
	for (int i = 0; i < 500 && tcmu_dev_inflight(D) != n; i++) {
		tcmu_dev_reap(D);
		usleep(2000);
	}
	tcmu_dev_reap(D);
	cr_assert_eq(tcmu_dev_inflight(D), n);
}

#define TMR_CAPS (TCMU_MAILBOX_FLAG_CAP_OOOC | TCMU_MAILBOX_FLAG_CAP_TMR)

/* hang_lba holds a READ; LIO's ABORT TASK names it: it completes once, as TASK ABORTED, and
 * the initiator's retry of the same READ runs. */
Test(tcmu_dev, tmr_aborts_a_held_command_once_and_the_retry_runs)
{
	uint8_t cdb[10];
	uint64_t iov[1][2];
	struct fk_done d[4];
	struct tcmu_dev_stats s;
	uint16_t id;

	up(TMR_CAPS);
	clear_ua();
	tcmu_dev_set_hang_lba(D, 100);
	iov[0][0] = fk_data(&K, 4096), iov[0][1] = 4096;
	rw10(cdb, false, 100, 8);
	id = fk_cmd(&K, cdb, 10, iov, 1);
	cr_assert_eq(tcmu_dev_poll(D), 1);
	settle_to(1);
	cr_assert_eq(fk_reap(&K, d, 4), 0, "a held command is not answered");
	fk_tmr(&K, TCMU_TMR_ABORT_TASK, &id, 1);
	cr_assert_eq(tcmu_dev_poll(D), 0, "a TMR entry is no command");
	settle_to(0);
	cr_assert_eq(fk_reap(&K, d, 4), 1);
	cr_assert_eq(d[0].cmd_id, id);
	cr_assert_eq(d[0].status, SAM_STAT_TASK_ABORTED);
	/* the retry passes the gate */
	cr_assert_eq(run(cdb, 10, iov, 1).status, 0);
	tcmu_dev_get_stats(D, &s);
	cr_assert_eq(s.held, 1);
	cr_assert_eq(s.tmrs, 1);
	cr_assert_eq(s.tmr_cmds, 1);
	cr_assert_eq(s.aborted, 1);
	cr_assert_eq(s.refused, 0);
	cr_assert_eq(s.completions, s.cmds, "%llu commands, %llu completions",
		     (unsigned long long)s.cmds, (unsigned long long)s.completions);
	down();
}

/* A LUN reset naming a held command twice, one LIO still had but we answered already (the
 * kernel has not reaped it yet), and one unknown: each command completes exactly once. */
Test(tcmu_dev, tmr_lun_reset_completes_each_command_once)
{
	static const uint8_t tur[6] = {0};
	uint8_t cdb[10];
	uint64_t iov[1][2];
	struct fk_done d[8];
	struct tcmu_dev_stats s;
	uint16_t ids[4];
	unsigned n;
	bool held_seen = false, tur_seen = false;

	up(TMR_CAPS);
	clear_ua();
	tcmu_dev_set_hang_lba(D, 8);
	iov[0][0] = fk_data(&K, 512), iov[0][1] = 512;
	rw10(cdb, true, 8, 1);
	ids[0] = fk_cmd(&K, cdb, 10, iov, 1);
	ids[1] = fk_cmd(&K, tur, 6, NULL, 0);
	ids[2] = ids[0];
	ids[3] = 4000;
	cr_assert_eq(tcmu_dev_poll(D), 2);
	/* the TUR is answered in the ring but not reaped by the kernel when the TMR arrives */
	fk_tmr(&K, TCMU_TMR_LUN_RESET, ids, 4);
	cr_assert_eq(tcmu_dev_poll(D), 0);
	settle_to(0);
	n = fk_reap(&K, d, 8);
	cr_assert_eq(n, 2);
	for (unsigned i = 0; i < n; i++) {
		if (d[i].cmd_id == ids[0]) {
			cr_assert_not(held_seen);
			held_seen = true;
			cr_assert_eq(d[i].status, SAM_STAT_TASK_ABORTED);
		} else {
			cr_assert_eq(d[i].cmd_id, ids[1]);
			cr_assert_not(tur_seen);
			tur_seen = true;
		}
	}
	cr_assert(held_seen && tur_seen);
	tcmu_dev_get_stats(D, &s);
	cr_assert_eq(s.refused, 0);
	cr_assert_eq(s.tmr_cmds, 1, "only the held WRITE was still ours");
	cr_assert_eq(s.completions, s.cmds);
	down();
}

/* Closing (removal, shutdown) runs what hang_lba holds, so the drain ends. */
Test(tcmu_dev, close_runs_held_commands)
{
	uint8_t cdb[10];
	uint64_t iov[1][2];
	struct fk_done d[2];

	up(TMR_CAPS);
	clear_ua();
	tcmu_dev_set_hang_lba(D, 16);
	iov[0][0] = fk_data(&K, 512), iov[0][1] = 512;
	rw10(cdb, false, 16, 1);
	fk_cmd(&K, cdb, 10, iov, 1);
	cr_assert_eq(tcmu_dev_poll(D), 1);
	settle_to(1);
	tcmu_dev_close(D);
	settle_to(0);
	cr_assert_eq(fk_reap(&K, d, 2), 1);
	cr_assert_eq(d[0].status, 0);
	down();
}

/* A command the core answers inline (ramdisk) costs no wakeup: the poller's caller reaps. */
Test(tcmu_dev, inline_completion_needs_no_wakeup)
{
	uint8_t cdb[10];
	uint64_t iov[1][2];
	unsigned wakes;

	up(TCMU_MAILBOX_FLAG_CAP_OOOC);
	clear_ua();
	iov[0][0] = fk_data(&K, 4096), iov[0][1] = 4096;
	rw10(cdb, false, 0, 8);
	wakes = W.wakes;
	cr_assert_eq(run(cdb, 10, iov, 1).status, 0);
	cr_assert_eq(W.wakes, wakes, "%u wakeup(s) for an inline completion", W.wakes - wakes);
	down();
}

/* On a file (vdisk_fileio) a 4 KiB WRITE and READ the page cache answers run on the polling
 * thread (bs_io.inline_ok): each is in the ring when tcmu_dev_poll() returns, with the one
 * kick left to tcmu_dev_reap(), and no I/O thread was involved. */
Test(tcmu_dev, page_cache_io_completes_on_the_ring_thread)
{
	uint8_t cdb[10], pat[4096];
	uint64_t iov[1][2];
	struct fk_done d[2];
	struct tcmu_dev_stats st0, st1;
	unsigned kicks;
	char path[64];

	up_on("vdisk_fileio", TCMU_MAILBOX_FLAG_CAP_OOOC, 0);
	clear_ua();
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 13 + 1);
	iov[0][0] = fk_data(&K, 4096), iov[0][1] = 4096;
	memcpy(K.mem + iov[0][0], pat, sizeof(pat));
	tcmu_dev_get_stats(D, &st0);
	for (int i = 0; i < 2; i++) {
		bool write = i == 0;

		if (!write)
			memset(K.mem + iov[0][0], 0xee, 4096);
		rw10(cdb, write, 40, 8);
		kicks = W.kicks;
		fk_cmd(&K, cdb, 10, iov, 1);
		cr_assert_eq(tcmu_dev_poll(D), 1);
		cr_assert_eq(tcmu_dev_inflight(D), 0, "%s still in flight after the poll",
			     write ? "WRITE" : "READ");
		cr_assert_eq(W.kicks, kicks, "completions inside the poll leave the kick to reap");
		cr_assert_eq(tcmu_dev_reap(D), 1);
		cr_assert_eq(W.kicks, kicks + 1);
		cr_assert_eq(fk_reap(&K, d, 2), 1);
		cr_assert_eq(d[0].status, 0);
	}
	cr_assert_arr_eq(K.mem + iov[0][0], pat, sizeof(pat));
	tcmu_dev_get_stats(D, &st1);
	cr_assert_eq(st1.polled - st0.polled, 2);
	cr_assert_eq(st1.completions - st0.completions, 2);
	down();
	snprintf(path, sizeof(path), "/tmp/utgt-test-%d-r0.img", (int)getpid());
	unlink(path);
}

/* Finished commands are reused, not freed and allocated again: 200 commands one after the
 * other cost two allocations (the one being parsed and the one being reused), and a reused
 * command carries nothing over from its last use (a refused entry, then good I/O). */
Test(tcmu_dev, finished_commands_are_reused)
{
	uint8_t cdb[10];
	uint64_t iov[1][2], bad[1][2] = {{FK_CMDR_OFF + 64, 512}}; /* into the command ring */
	struct tcmu_dev_stats s0, s1;
	struct fk_done d;

	up(TCMU_MAILBOX_FLAG_CAP_OOOC);
	clear_ua();
	iov[0][0] = fk_data(&K, 512), iov[0][1] = 512;
	tcmu_dev_get_stats(D, &s0);
	for (int i = 0; i < 200; i++) {
		bool write = i % 2 == 0;

		if (i % 50 == 25) { /* refused: CHECK CONDITION without the core */
			rw10(cdb, true, 0, 1);
			d = run(cdb, 10, bad, 1);
			cr_assert_eq(d.status, SAM_STAT_CHECK_CONDITION, "command %d", i);
			continue;
		}
		if (write)
			memset(K.mem + iov[0][0], i, 512);
		else
			memset(K.mem + iov[0][0], 0xee, 512);
		rw10(cdb, write, (uint32_t)(i / 2), 1);
		d = run(cdb, 10, iov, 1);
		cr_assert_eq(d.status, 0, "command %d", i);
		cr_assert_eq(d.sense[2], 0, "no sense left from a refused command");
		if (!write)
			cr_assert_eq(K.mem[iov[0][0] + 511], (uint8_t)(i - 1), "command %d", i);
	}
	tcmu_dev_get_stats(D, &s1);
	cr_assert_eq(s1.completions - s0.completions, 200);
	cr_assert_leq(s1.allocs - s0.allocs, 2, "%llu allocations for 200 commands",
		      (unsigned long long)(s1.allocs - s0.allocs));
	down();
}

/* The second ring thread (tcmu_dev_set_second_thread): the tests below play it with
 * tcmu_dev_poll_second() on a thread of their own, or start the real one. */

/* A batch of 64 small commands the core answers inline, on the ring thread alone: every one
 * in the ring when the poll returns, and one kick for all of them. */
Test(tcmu_dev, inline_batch_costs_one_kick)
{
	uint8_t cdb[10];
	struct fk_done d[64];
	unsigned kicks;

	up(TCMU_MAILBOX_FLAG_CAP_OOOC);
	clear_ua();
	for (int i = 0; i < 64; i++) {
		uint64_t iov[1][2] = {{fk_data(&K, 2048), 2048}};
		rw10(cdb, i % 2 == 0, (uint32_t)i * 4, 4);
		fk_cmd(&K, cdb, 10, iov, 1);
	}
	kicks = W.kicks;
	cr_assert_eq(tcmu_dev_poll(D), 64);
	cr_assert_eq(tcmu_dev_inflight(D), 0);
	cr_assert_eq(W.kicks, kicks, "no kick inside the poll");
	cr_assert_eq(tcmu_dev_reap(D), 1);
	cr_assert_eq(W.kicks, kicks + 1, "one kick for the batch");
	cr_assert_eq(fk_reap(&K, d, 64), 64);
	down();
}

/* Large commands do not wait for the end of the run: once a run's commands moved 256 KiB the
 * kick is made, so LIO copies a finished READ out while the next one runs. */
Test(tcmu_dev, large_commands_are_kicked_as_they_complete)
{
	uint8_t cdb[10];
	struct fk_done d[4];
	unsigned kicks;

	up(TCMU_MAILBOX_FLAG_CAP_OOOC);
	clear_ua();
	for (int i = 0; i < 3; i++) {
		uint64_t iov[1][2] = {{fk_data(&K, 256 << 10), 256 << 10}};
		rw10(cdb, false, (uint32_t)i * 512, 512);
		fk_cmd(&K, cdb, 10, iov, 1);
	}
	kicks = W.kicks;
	cr_assert_eq(tcmu_dev_poll(D), 3);
	cr_assert_eq(W.kicks, kicks + 3, "%u kicks for three 256 KiB READs", W.kicks - kicks);
	cr_assert_eq(tcmu_dev_reap(D), 0, "nothing left to kick");
	cr_assert_eq(fk_reap(&K, d, 4), 3);
	down();
}

/* One kick at a time: a thread that wants a kick while another's runs does not wait for it; the
 * running one kicks once more when it is done, for the completion made meanwhile. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned calls, inside, most_inside;
	bool go_on;
} KS = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, false};

static void slow_kick(void)
{
	pthread_mutex_lock(&KS.mu);
	KS.calls++;
	if (++KS.inside > KS.most_inside)
		KS.most_inside = KS.inside;
	pthread_cond_broadcast(&KS.cv);
	while (KS.calls == 1 && !KS.go_on) /* the first kick lasts until the test says */
		pthread_cond_wait(&KS.cv, &KS.mu);
	KS.inside--;
	pthread_mutex_unlock(&KS.mu);
}

static void *poll_on_a_thread(void *arg)
{
	(void)arg;
	tcmu_dev_poll(D);
	return NULL;
}

Test(tcmu_dev, a_kick_asked_for_during_another_is_made_by_it)
{
	uint8_t cdb[10];
	uint64_t iov[1][2];
	struct fk_done d[4];
	pthread_t th;

	up(TCMU_MAILBOX_FLAG_CAP_OOOC);
	clear_ua();
	kick_also = slow_kick;
	iov[0][0] = fk_data(&K, 256 << 10), iov[0][1] = 256 << 10;
	rw10(cdb, false, 0, 512);
	fk_cmd(&K, cdb, 10, iov, 1);
	/* the ring thread's poll kicks after its 256 KiB READ, and that kick lasts */
	cr_assert_eq(pthread_create(&th, NULL, poll_on_a_thread, NULL), 0);
	pthread_mutex_lock(&KS.mu);
	while (KS.calls < 1)
		pthread_cond_wait(&KS.cv, &KS.mu);
	pthread_mutex_unlock(&KS.mu);
	/* meanwhile the second ring thread runs one too and returns without waiting for it */
	iov[0][0] = fk_data(&K, 256 << 10);
	rw10(cdb, false, 512, 512);
	fk_cmd(&K, cdb, 10, iov, 1);
	cr_assert_eq(tcmu_dev_poll_second(D), 1);
	pthread_mutex_lock(&KS.mu);
	cr_assert_eq(KS.calls, 1, "the second kick did not wait, it was left to the first");
	KS.go_on = true;
	pthread_cond_broadcast(&KS.cv);
	pthread_mutex_unlock(&KS.mu);
	pthread_join(th, NULL);
	kick_also = NULL;
	cr_assert_eq(KS.calls, 2, "the running kick kicks once more");
	cr_assert_eq(KS.most_inside, 1, "two kicks at once");
	cr_assert_eq(tcmu_dev_reap(D), 0, "nothing left to kick");
	cr_assert_eq(fk_reap(&K, d, 4), 2);
	down();
}

static void *second_once(void *arg)
{
	(void)arg;
	return (void *)(uintptr_t)tcmu_dev_poll_second(D);
}

static unsigned poll_second_on_a_thread(void)
{
	pthread_t th;
	void *n;

	cr_assert_eq(pthread_create(&th, NULL, second_once, NULL), 0);
	pthread_join(th, &n);
	return (unsigned)(uintptr_t)n;
}

/* A command the second thread took is held (hang_lba) when LIO's ABORT TASK arrives, parsed
 * by the ring thread: it completes once, as TASK ABORTED; the second thread's command before
 * it was answered GOOD; nothing is completed twice. */
Test(tcmu_dev, tmr_aborts_a_command_of_the_second_thread_once)
{
	uint8_t cdb[10];
	uint64_t iov[2][2];
	struct fk_done d[4];
	struct tcmu_dev_stats s;
	uint16_t first, held;
	unsigned n;

	up(TMR_CAPS);
	clear_ua();
	tcmu_dev_set_hang_lba(D, 200);
	iov[0][0] = fk_data(&K, 4096), iov[0][1] = 4096;
	iov[1][0] = fk_data(&K, 4096), iov[1][1] = 4096;
	rw10(cdb, true, 8, 8);
	first = fk_cmd(&K, cdb, 10, &iov[0], 1);
	rw10(cdb, false, 200, 8);
	held = fk_cmd(&K, cdb, 10, &iov[1], 1);
	cr_assert_eq(poll_second_on_a_thread(), 2);
	settle_to(1);
	fk_tmr(&K, TCMU_TMR_ABORT_TASK, &held, 1);
	cr_assert_eq(tcmu_dev_poll(D), 0);
	settle_to(0);
	n = fk_reap(&K, d, 4);
	cr_assert_eq(n, 2);
	cr_assert_eq(d[0].cmd_id, first);
	cr_assert_eq(d[0].status, 0);
	cr_assert_eq(d[1].cmd_id, held);
	cr_assert_eq(d[1].status, SAM_STAT_TASK_ABORTED);
	tcmu_dev_get_stats(D, &s);
	cr_assert_eq(s.second, 2, "both taken by the second thread");
	cr_assert_eq(s.aborted, 1);
	cr_assert_eq(s.refused, 0);
	cr_assert_eq(s.completions, s.cmds);
	down();
}

struct race {
	volatile bool stop;
	unsigned taken;
};

static void *second_loop(void *arg)
{
	struct race *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		r->taken += tcmu_dev_poll_second(D);
		tcmu_dev_reap(D);
	}
	return NULL;
}

/* Both ring threads take from one ring at once for 100 batches of 48 commands (reads and
 * writes out of order, CAP_OOOC), with a LUN reset naming the first 25 commands of the batch
 * queued behind them (one of which hang_lba holds every other batch): each command completes
 * exactly once, GOOD or (one the reset named) TASK ABORTED, and the ring drains. */
Test(tcmu_dev, two_threads_complete_each_command_once_under_resets)
{
	struct race r = {false, 0};
	struct tcmu_dev_stats s;
	pthread_t th;
	uint8_t cdb[10];
	uint16_t ids[48];
	struct fk_done d[64];
	unsigned taken = 0, aborted = 0;

	up(TMR_CAPS);
	clear_ua();
	tcmu_dev_set_hang_lba(D, 40); /* command 5 of every other batch is held until the reset */
	cr_assert_eq(pthread_create(&th, NULL, second_loop, &r), 0);
	for (int b = 0; b < 100; b++) {
		bool seen[48] = {false};
		unsigned n;

		for (int i = 0; i < 48; i++) {
			uint64_t iov[1][2] = {{fk_data(&K, 4096), 4096}};
			memset(K.mem + iov[0][0], b + i, 4096);
			rw10(cdb, i % 3 != 0, (uint32_t)i * 8, 8);
			ids[i] = fk_cmd(&K, cdb, 10, iov, 1);
			if (i == 24)
				fk_tmr(&K, TCMU_TMR_LUN_RESET, ids, 25);
			if (i % 8 == 7)
				taken += tcmu_dev_poll(D);
		}
		taken += tcmu_dev_poll(D);
		settle_to(0);
		n = fk_reap(&K, d, 64);
		cr_assert_eq(n, 48, "batch %d: %u completions for 48 commands", b, n);
		for (unsigned i = 0; i < n; i++) {
			int j = 0;
			while (j < 48 && ids[j] != d[i].cmd_id)
				j++;
			cr_assert_lt(j, 48, "unknown cmd_id %u", d[i].cmd_id);
			cr_assert_not(seen[j], "batch %d: cmd_id %u answered twice", b,
				      d[i].cmd_id);
			seen[j] = true;
			cr_assert(d[i].status == 0 ||
				      (j <= 24 && d[i].status == SAM_STAT_TASK_ABORTED),
				  "batch %d, command %d: status 0x%x", b, j, d[i].status);
			aborted += d[i].status == SAM_STAT_TASK_ABORTED;
		}
		cr_assert_eq(fk_tail(&K), K.head);
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	tcmu_dev_get_stats(D, &s);
	cr_assert_eq(s.refused, 0);
	cr_assert_eq(s.completions, s.cmds);
	cr_assert_eq(taken + r.taken, 4800);
	cr_assert_eq(s.second, r.taken);
	cr_assert_eq(s.aborted, aborted);
	cr_assert_geq(aborted, 50, "the 50 held commands are aborted by the resets");
	cr_assert_eq(s.held, 50);
	cr_assert_eq(s.tmrs, 100);
	down();
}

/* The real second thread: a lone command never wakes it (QD1 stays on the ring thread); a
 * batch wakes it once, every command completes once with the right data, and the batch
 * costs at most one kick per thread run. */
Test(tcmu_dev, second_thread_is_woken_by_a_backlog_only)
{
	uint8_t cdb[10];
	uint16_t ids[64];
	struct fk_done d[64];
	struct tcmu_dev_stats s0, s1;
	unsigned kicks;
	bool seen[64] = {false};

	up(TCMU_MAILBOX_FLAG_CAP_OOOC);
	cr_assert_eq(tcmu_dev_set_second_thread(D), 0);
	clear_ua();
	tcmu_dev_get_stats(D, &s0);
	cr_assert_eq(s0.second_wakes, 0, "lone commands never wake it");
	for (int i = 0; i < 64; i++) {
		uint64_t iov[1][2] = {{fk_data(&K, 4096), 4096}};
		memset(K.mem + iov[0][0], i, 4096);
		rw10(cdb, true, (uint32_t)i * 8, 8);
		ids[i] = fk_cmd(&K, cdb, 10, iov, 1);
	}
	kicks = W.kicks;
	tcmu_dev_poll(D);
	settle();
	tcmu_dev_get_stats(D, &s1);
	cr_assert_geq(s1.second_wakes - s0.second_wakes, 1);
	cr_assert_eq(s1.cmds - s0.cmds, 64);
	cr_assert_leq(W.kicks - kicks, 1 + (s1.second_wakes - s0.second_wakes),
		      "%u kicks for %llu runs of the second thread", W.kicks - kicks,
		      (unsigned long long)(s1.second_wakes - s0.second_wakes));
	cr_assert_eq(fk_reap(&K, d, 64), 64);
	for (int i = 0; i < 64; i++) {
		int j = 0;
		while (j < 64 && ids[j] != d[i].cmd_id)
			j++;
		cr_assert_lt(j, 64);
		cr_assert_not(seen[j], "cmd_id %u answered twice", d[i].cmd_id);
		seen[j] = true;
		cr_assert_eq(d[i].status, 0);
	}
	for (int i = 0; i < 64; i++) {
		uint64_t iov[1][2] = {{fk_data(&K, 4096), 4096}};
		rw10(cdb, false, (uint32_t)i * 8, 8);
		cr_assert_eq(run(cdb, 10, iov, 1).status, 0);
		cr_assert_eq(K.mem[iov[0][0]], i);
		cr_assert_eq(K.mem[iov[0][0] + 4095], i);
	}
	tcmu_dev_get_stats(D, &s1);
	cr_assert_eq(s1.refused, 0);
	cr_assert_eq(s1.completions, s1.cmds);
	down();
}
