/* utgt-bench multipath over an in-memory fake engine: identity checks, round robin, failover
 * with retries, background reconnect, identity re-check, no-path waiting, SCSI retries, ALUA. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "initiator/mpath.h"

#define NP	  4
#define LU_BLOCKS 1024
#define BS	  512

static uint8_t lu[LU_BLOCKS * BS];

struct fake {
	int idx;
	enum ub_path_state st;
	int refuse_connects; /* <0: refuse forever */
	int ident;
	int alua;
	bool hold; /* keep submitted commands in flight */
	struct ub_io *q[1024];
	unsigned nq;
	int inject_ua, inject_standby, inject_busy, inject_medium;
	int inject_swap; /* ALUA states of paths 0 and 1 swap, then UA 2A/06 */
	unsigned connects, data_ios;
	char err[64];
};

static struct fake fk[NP];
static unsigned nfake;

static struct ub_epath *f_create(const char *target, const struct ub_eng_opts *o, char *err,
				 size_t errlen)
{
	int i;

	(void)o;
	if (sscanf(target, "fake:%d", &i) != 1 || i < 0 || i >= NP) {
		snprintf(err, errlen, "bad fake target");
		return NULL;
	}
	return (struct ub_epath *)&fk[i];
}

static void f_destroy(struct ub_epath *p)
{
	(void)p;
}

static int f_connect(struct ub_epath *ep)
{
	struct fake *f = (struct fake *)ep;

	f->connects++;
	f->st = UB_PS_CONNECTING;
	return 0;
}

static void finish(struct ub_io *io, enum ub_io_result r)
{
	io->result = r;
	io->done(io);
}

static void f_disconnect(struct ub_epath *ep, const char *why)
{
	struct fake *f = (struct fake *)ep;
	unsigned n = f->nq;

	snprintf(f->err, sizeof(f->err), "%s", why ? why : "dropped");
	f->st = UB_PS_DOWN;
	f->nq = 0;
	for (unsigned i = 0; i < n; i++)
		finish(f->q[i], UB_IO_PATH_ERROR);
}

static enum ub_path_state f_state(struct ub_epath *ep)
{
	return ((struct fake *)ep)->st;
}

static const char *f_last_error(struct ub_epath *ep)
{
	return ((struct fake *)ep)->err;
}

static int f_pollfd(struct ub_epath *ep, struct pollfd *pfd)
{
	(void)ep;
	(void)pfd;
	return 0;
}

static size_t vpd83(struct fake *f, uint8_t *b)
{
	memset(b, 0, 64);
	b[1] = 0x83;
	b[4] = 0x01, b[5] = 0x03, b[7] = 8; /* NAA, LU */
	b[8] = 0x50, b[15] = (uint8_t)f->ident;
	b[16] = 0x01, b[17] = 0x15, b[19] = 4; /* target port group */
	b[23] = (uint8_t)(f->idx + 1);
	b[3] = 20;
	return 24;
}

static size_t rtpg(uint8_t *b)
{
	size_t o = 4;

	memset(b, 0, 256);
	for (unsigned i = 0; i < nfake; i++, o += 8) {
		b[o] = (uint8_t)fk[i].alua;
		b[o + 3] = (uint8_t)(i + 1);
	}
	b[3] = (uint8_t)(o - 4);
	return o;
}

static void complete_one(struct fake *f, struct ub_io *io)
{
	uint8_t buf[256];
	size_t n;

	if (io->cdb_len) {
		if (io->cdb[0] == 0x12)
			n = vpd83(f, buf);
		else
			n = rtpg(buf);
		if (n > io->xfer_len)
			n = io->xfer_len;
		memcpy(io->iov[0].iov_base, buf, n);
		io->residual = (uint32_t)(io->xfer_len - n);
		finish(io, UB_IO_OK);
		return;
	}
	f->data_ios++;
	io->status = 2;
	if (f->inject_ua) {
		f->inject_ua--;
		io->sense_key = 6, io->asc = 0x29, io->ascq = 0;
		finish(io, UB_IO_SCSI_ERROR);
		return;
	}
	if (f->inject_swap) {
		int a = fk[0].alua;
		f->inject_swap--;
		fk[0].alua = fk[1].alua;
		fk[1].alua = a;
		io->sense_key = 6, io->asc = 0x2a, io->ascq = 0x06;
		finish(io, UB_IO_SCSI_ERROR);
		return;
	}
	if (f->inject_standby) {
		f->inject_standby--;
		f->alua = UB_ALUA_STANDBY;
		io->sense_key = 2, io->asc = 0x04, io->ascq = 0x0b;
		finish(io, UB_IO_SCSI_ERROR);
		return;
	}
	if (f->inject_busy) {
		f->inject_busy--;
		io->status = 0x08;
		finish(io, UB_IO_SCSI_ERROR);
		return;
	}
	if (f->inject_medium) {
		f->inject_medium--;
		io->sense_key = 3, io->asc = 0x11, io->ascq = 0;
		finish(io, UB_IO_SCSI_ERROR);
		return;
	}
	if (io->write)
		memcpy(lu + io->lba * BS, io->iov[0].iov_base, (size_t)io->nblocks * BS);
	else
		memcpy(io->iov[0].iov_base, lu + io->lba * BS, (size_t)io->nblocks * BS);
	io->status = 0;
	finish(io, UB_IO_OK);
}

static void f_service(struct ub_epath *ep, short revents)
{
	struct fake *f = (struct fake *)ep;
	unsigned n;
	struct ub_io *q[1024];

	(void)revents;
	if (f->st == UB_PS_CONNECTING) {
		if (f->refuse_connects) {
			if (f->refuse_connects > 0)
				f->refuse_connects--;
			snprintf(f->err, sizeof(f->err), "connection refused");
			f->st = UB_PS_DOWN;
		} else {
			f->st = UB_PS_UP;
		}
		return;
	}
	if (f->st != UB_PS_UP || f->hold)
		return;
	n = f->nq;
	memcpy(q, f->q, n * sizeof(q[0]));
	f->nq = 0;
	for (unsigned i = 0; i < n; i++)
		complete_one(f, q[i]);
}

static int f_submit(struct ub_epath *ep, struct ub_io *io)
{
	struct fake *f = (struct fake *)ep;

	if (f->st != UB_PS_UP)
		return -EAGAIN;
	if (f->nq == 1024)
		return -EBUSY;
	f->q[f->nq++] = io;
	return 0;
}

static void f_geometry(struct ub_epath *ep, uint32_t *bs, uint64_t *n)
{
	(void)ep;
	*bs = BS;
	*n = LU_BLOCKS;
}

static unsigned f_inflight(struct ub_epath *ep)
{
	return ((struct fake *)ep)->nq;
}

static const struct ub_engine fake_engine = {
    .name = "fake",
    .create = f_create,
    .destroy = f_destroy,
    .connect = f_connect,
    .disconnect = f_disconnect,
    .state = f_state,
    .last_error = f_last_error,
    .pollfd = f_pollfd,
    .service = f_service,
    .submit = f_submit,
    .geometry = f_geometry,
    .inflight = f_inflight,
};

static char *targets[NP] = {"fake:0", "fake:1", "fake:2", "fake:3"};

static struct ub_mpath_cfg cfg(enum ub_policy pol)
{
	return (struct ub_mpath_cfg){.policy = pol,
				     .rr_iops = 1,
				     .reconnect_delay_ms = 10,
				     .no_path_timeout_ms = 2000,
				     .max_retries = 8};
}

static void setup(unsigned n)
{
	memset(fk, 0, sizeof(fk));
	memset(lu, 0, sizeof(lu));
	nfake = n;
	for (unsigned i = 0; i < NP; i++) {
		fk[i].idx = (int)i;
		fk[i].ident = 0x42;
		fk[i].alua = UB_ALUA_AO;
	}
}

struct cmd {
	struct ub_mio mio;
	struct iovec iov;
	uint8_t buf[BS];
	bool done;
};

static unsigned ndone;

static void cmd_done(struct ub_mio *m)
{
	((struct cmd *)m->owner)->done = true;
	ndone++;
}

static void submit(struct ub_mpath *m, struct cmd *c, bool write, uint64_t lba, uint8_t fill)
{
	memset(c, 0, sizeof(*c));
	memset(c->buf, fill, BS);
	c->iov = (struct iovec){c->buf, BS};
	c->mio.io.write = write;
	c->mio.io.lba = lba;
	c->mio.io.nblocks = 1;
	c->mio.io.iov = &c->iov;
	c->mio.io.iovcnt = 1;
	c->mio.done = cmd_done;
	c->mio.owner = c;
	ub_mpath_submit(m, &c->mio);
}

/* Poll until cond() or a deadline; the deadline only guards against a hang. */
static bool pump_until(struct ub_mpath *m, bool (*cond)(struct ub_mpath *), unsigned max_ms)
{
	uint64_t end = ub_now_ns() + (uint64_t)max_ms * 1000000ull;

	while (!cond(m)) {
		if (ub_now_ns() > end)
			return false;
		ub_mpath_poll(m, 5);
	}
	return true;
}

static unsigned want_done;
static bool all_done(struct ub_mpath *m)
{
	(void)m;
	return ndone >= want_done;
}

static bool has_event(struct ub_mpath *m, const char *needle)
{
	for (unsigned i = 0; i < m->nev; i++)
		if (strstr(m->ev[i].msg, needle))
			return true;
	return false;
}

static struct ub_mpath *open_paths(unsigned n, enum ub_policy pol)
{
	static struct ub_mpath m;
	struct ub_mpath_cfg c = cfg(pol);
	char err[512];

	setup(n);
	cr_assert(ub_mpath_open(&m, &fake_engine, &c, targets, n, err, sizeof(err)), "%s", err);
	return &m;
}

Test(bench_mpath, open_refuses_paths_to_different_lus)
{
	struct ub_mpath m;
	struct ub_mpath_cfg c = cfg(UB_POL_RR);
	char err[512];

	setup(2);
	fk[1].ident = 0x43;
	cr_assert_not(ub_mpath_open(&m, &fake_engine, &c, targets, 2, err, sizeof(err)));
	cr_assert(strstr(err, "path 1") && strstr(err, "different LUs"), "%s", err);
}

Test(bench_mpath, open_fails_with_the_path_error)
{
	struct ub_mpath m;
	struct ub_mpath_cfg c = cfg(UB_POL_RR);
	char err[512];

	setup(2);
	fk[1].refuse_connects = -1;
	cr_assert_not(ub_mpath_open(&m, &fake_engine, &c, targets, 2, err, sizeof(err)));
	cr_assert(strstr(err, "path 1") && strstr(err, "refused"), "%s", err);
}

Test(bench_mpath, open_reads_alua_states)
{
	struct ub_mpath *m;

	setup(2);
	m = open_paths(2, UB_POL_RR);
	cr_assert(m->alua);
	cr_assert_eq(m->path[0].alua, UB_ALUA_AO);
	ub_mpath_close(m);
}

Test(bench_mpath, rr_iops_1_splits_exactly_in_half)
{
	struct ub_mpath *m = open_paths(2, UB_POL_RR);
	static struct cmd c[100];

	ndone = 0;
	want_done = 100;
	for (int i = 0; i < 100; i++)
		submit(m, &c[i], true, (uint64_t)i, (uint8_t)i);
	cr_assert(pump_until(m, all_done, 2000));
	cr_assert_eq(m->path[0].st.ios[1], 50);
	cr_assert_eq(m->path[1].st.ios[1], 50);
	for (int i = 0; i < 100; i++) {
		cr_assert_eq(c[i].mio.io.result, UB_IO_OK);
		cr_assert_eq(c[i].mio.path, i % 2, "command %d went to path %d", i, c[i].mio.path);
		cr_assert_eq(lu[i * BS], (uint8_t)i);
	}
	ub_mpath_close(m);
}

Test(bench_mpath, dropped_path_commands_complete_on_the_other)
{
	struct ub_mpath *m = open_paths(2, UB_POL_RR);
	static struct cmd c[64];

	ndone = 0;
	want_done = 64;
	fk[0].hold = fk[1].hold = true;
	for (int i = 0; i < 64; i++)
		submit(m, &c[i], true, (uint64_t)(100 + i), (uint8_t)(i + 1));
	ub_mpath_poll(m, 0);
	cr_assert_eq(fk[1].nq, 32, "half the commands are in flight on path 1");
	fk[1].st = UB_PS_DOWN; /* its connection dies */
	fk[1].refuse_connects = -1;
	fk[0].hold = false;
	cr_assert(pump_until(m, all_done, 2000), "only %u of 64 completed", ndone);
	for (int i = 0; i < 64; i++) {
		cr_assert_eq(c[i].mio.io.result, UB_IO_OK, "command %d: %s", i, c[i].mio.errmsg);
		cr_assert_eq(c[i].mio.path, 0);
		cr_assert_eq(lu[(100 + i) * BS], (uint8_t)(i + 1));
	}
	cr_assert_eq(m->path[1].st.failures, 1);
	cr_assert_eq(m->path[1].st.retried, 32);
	cr_assert(has_event(m, "path 1 failed"));
	cr_assert(has_event(m, "32 commands in flight"));
	ub_mpath_close(m);
}

static bool path1_up(struct ub_mpath *m)
{
	return m->path[1].state == UB_MP_UP;
}

static bool path1_dead(struct ub_mpath *m)
{
	return m->path[1].state == UB_MP_DEAD;
}

Test(bench_mpath, failed_path_reconnects_in_the_background)
{
	struct ub_mpath *m = open_paths(2, UB_POL_RR);
	static struct cmd c[10];

	fk[1].refuse_connects = 2;
	ub_mpath_fail_path(m, 1, "test drop");
	cr_assert_eq(m->path[1].state, UB_MP_DOWN);
	/* I/O keeps flowing on path 0 meanwhile */
	ndone = 0;
	want_done = 10;
	for (int i = 0; i < 10; i++)
		submit(m, &c[i], false, (uint64_t)i, 0);
	cr_assert(pump_until(m, all_done, 2000));
	cr_assert(pump_until(m, path1_up, 3000), "path 1 state %s",
		  ub_mp_state_str(m->path[1].state));
	cr_assert_eq(fk[1].connects, 4, "open + 2 refused + 1 good");
	/* every attempt and its result, with the backoff (reconnect_delay 10 ms, doubling) */
	cr_assert(has_event(m, "path 1 reconnect attempt 1 (after 10 ms backoff)"));
	cr_assert(has_event(m, "path 1 reconnect attempt 1 failed: connection refused (next in 20 ms)"));
	cr_assert(has_event(m, "path 1 reconnect attempt 2 (after 20 ms backoff)"));
	cr_assert(has_event(m, "path 1 reconnect attempt 2 failed: connection refused (next in 40 ms)"));
	cr_assert(has_event(m, "path 1 reconnect attempt 3 (after 40 ms backoff)"));
	cr_assert(has_event(m, "path 1 restored after"));
	cr_assert(has_event(m, "(3 attempts)"));
	cr_assert_eq(m->path[1].st.reconnects, 1);
	ub_mpath_close(m);
}

Test(bench_mpath, path_that_comes_back_to_another_lu_is_kept_out)
{
	struct ub_mpath *m = open_paths(2, UB_POL_RR);

	fk[1].ident = 0x99;
	ub_mpath_fail_path(m, 1, "test drop");
	cr_assert(pump_until(m, path1_dead, 3000));
	cr_assert(has_event(m, "different LU"));
	ub_mpath_close(m);
}

Test(bench_mpath, commands_wait_for_a_path_and_then_run)
{
	struct ub_mpath *m = open_paths(1, UB_POL_RR);
	static struct cmd c[4];

	fk[0].refuse_connects = 3;
	ub_mpath_fail_path(m, 0, "test drop");
	ndone = 0;
	want_done = 4;
	for (int i = 0; i < 4; i++)
		submit(m, &c[i], true, (uint64_t)i, 7);
	cr_assert(pump_until(m, all_done, 3000));
	for (int i = 0; i < 4; i++)
		cr_assert_eq(c[i].mio.io.result, UB_IO_OK, "%s", c[i].mio.errmsg);
	ub_mpath_close(m);
}

Test(bench_mpath, commands_fail_when_no_path_returns_in_time)
{
	static struct ub_mpath m;
	struct ub_mpath_cfg c = cfg(UB_POL_RR);
	static struct cmd cmd;
	char err[256];

	setup(1);
	c.no_path_timeout_ms = 100;
	cr_assert(ub_mpath_open(&m, &fake_engine, &c, targets, 1, err, sizeof(err)), "%s", err);
	fk[0].refuse_connects = -1;
	ub_mpath_fail_path(&m, 0, "test drop");
	ndone = 0;
	want_done = 1;
	submit(&m, &cmd, true, 0, 1);
	cr_assert(pump_until(&m, all_done, 3000));
	cr_assert_neq(cmd.mio.io.result, UB_IO_OK);
	cr_assert(strstr(cmd.mio.errmsg, "no path available"), "%s", cmd.mio.errmsg);
	ub_mpath_close(&m);
}

Test(bench_mpath, unit_attention_and_busy_are_retried)
{
	struct ub_mpath *m = open_paths(1, UB_POL_RR);
	static struct cmd c[2];

	fk[0].inject_ua = 1;
	fk[0].inject_busy = 1;
	ndone = 0;
	want_done = 2;
	submit(m, &c[0], true, 1, 1);
	submit(m, &c[1], true, 2, 2);
	cr_assert(pump_until(m, all_done, 2000));
	cr_assert_eq(c[0].mio.io.result, UB_IO_OK);
	cr_assert_eq(c[1].mio.io.result, UB_IO_OK);
	cr_assert_eq(m->retries, 2);
	cr_assert_eq(lu[BS], 1);
	cr_assert_eq(lu[2 * BS], 2);
	ub_mpath_close(m);
}

Test(bench_mpath, medium_error_reaches_the_application)
{
	struct ub_mpath *m = open_paths(1, UB_POL_RR);
	static struct cmd c;

	fk[0].inject_medium = 1;
	ndone = 0;
	want_done = 1;
	submit(m, &c, false, 3, 0);
	cr_assert(pump_until(m, all_done, 2000));
	cr_assert_eq(c.mio.io.result, UB_IO_SCSI_ERROR);
	cr_assert(strstr(c.mio.errmsg, "MEDIUM ERROR") && strstr(c.mio.errmsg, "11/00"), "%s",
		  c.mio.errmsg);
	ub_mpath_close(m);
}

Test(bench_mpath, standby_port_is_left_for_the_optimized_one)
{
	struct ub_mpath *m = open_paths(2, UB_POL_RR);
	static struct cmd c[20];

	fk[0].inject_standby = 1;
	ndone = 0;
	want_done = 1;
	submit(m, &c[0], true, 0, 9); /* meets the standby state on path 0, retried on 1 */
	cr_assert(pump_until(m, all_done, 2000));
	cr_assert_eq(c[0].mio.path, 1);
	want_done = 20;
	for (int i = 1; i < 20; i++)
		submit(m, &c[i], true, (uint64_t)i, 9);
	cr_assert(pump_until(m, all_done, 2000));
	for (int i = 0; i < 20; i++)
		cr_assert_eq(c[i].mio.io.result, UB_IO_OK);
	cr_assert_eq(m->path[0].alua, UB_ALUA_STANDBY);
	cr_assert(has_event(m, "path 0 ALUA active/optimized -> standby"));
	cr_assert_eq(fk[0].data_ios, 1, "only the command that met the standby state");
	ub_mpath_close(m);
}

static bool path0_optimized(struct ub_mpath *m)
{
	return m->path[0].alua == UB_ALUA_AO && !m->rtpg_busy;
}

/* rr honours ALUA: the non-optimized path gets nothing while the optimized one works; when
 * the target swaps the states (UNIT ATTENTION 2A/06, then a fresh REPORT TARGET PORT GROUPS)
 * the I/O moves to the newly optimized path.  rr-all shares both. */
Test(bench_mpath, rr_follows_the_optimized_path_across_a_state_change)
{
	struct ub_mpath m;
	struct ub_mpath_cfg c = cfg(UB_POL_RR);
	static struct cmd cmds[60];
	char err[512];

	setup(2);
	fk[0].alua = UB_ALUA_ANO;
	cr_assert(ub_mpath_open(&m, &fake_engine, &c, targets, 2, err, sizeof(err)), "%s", err);
	ndone = 0;
	want_done = 20;
	for (int i = 0; i < 20; i++)
		submit(&m, &cmds[i], true, (uint64_t)i, 1);
	cr_assert(pump_until(&m, all_done, 2000));
	cr_assert_eq(fk[0].data_ios, 0, "no I/O on the non-optimized path");
	cr_assert_eq(fk[1].data_ios, 20);
	fk[1].inject_swap = 1;
	want_done = 21;
	submit(&m, &cmds[20], true, 20, 1);
	cr_assert(pump_until(&m, all_done, 2000));
	cr_assert(pump_until(&m, path0_optimized, 2000), "RTPG read again after 2A/06");
	cr_assert_eq(m.path[1].alua, UB_ALUA_ANO);
	cr_assert(has_event(&m, "path 1 ALUA active/optimized -> active/non-optimized"));
	unsigned before = fk[1].data_ios;
	want_done = 40;
	for (int i = 21; i < 40; i++)
		submit(&m, &cmds[i], true, (uint64_t)i, 1);
	cr_assert(pump_until(&m, all_done, 2000));
	cr_assert_eq(fk[1].data_ios, before, "nothing more on the path that became non-optimized");
	for (int i = 0; i < 40; i++)
		cr_assert_eq(cmds[i].mio.io.result, UB_IO_OK);
	ub_mpath_close(&m);

	c = cfg(UB_POL_RR_ALL);
	setup(2);
	fk[0].alua = UB_ALUA_ANO;
	cr_assert(ub_mpath_open(&m, &fake_engine, &c, targets, 2, err, sizeof(err)), "%s", err);
	ndone = 0;
	want_done = 20;
	for (int i = 0; i < 20; i++)
		submit(&m, &cmds[40 + i % 20], true, (uint64_t)i, 1);
	cr_assert(pump_until(&m, all_done, 2000));
	cr_assert(fk[0].data_ios == 10 && fk[1].data_ios == 10, "rr-all: %u %u", fk[0].data_ios,
		  fk[1].data_ios);
	ub_mpath_close(&m);
}

/* fio takes one time per batch of reaped completions: commands completed together carry the
 * same done_ns, taken before any of them is handed on. */
Test(bench_mpath, completions_reaped_together_share_their_time)
{
	struct ub_mpath *m = open_paths(1, UB_POL_RR);
	static struct cmd c[8];
	uint64_t t0;

	ndone = 0;
	want_done = 8;
	fk[0].hold = true;
	for (int i = 0; i < 8; i++)
		submit(m, &c[i], false, (uint64_t)i, 0);
	ub_mpath_poll(m, 0);
	cr_assert_eq(ndone, 0);
	t0 = ub_now_ns();
	fk[0].hold = false;
	cr_assert(pump_until(m, all_done, 2000));
	for (int i = 0; i < 8; i++) {
		cr_assert_eq(c[i].mio.io.result, UB_IO_OK);
		cr_assert_geq(c[i].mio.done_ns, t0);
		cr_assert_eq(c[i].mio.done_ns, c[0].mio.done_ns, "command %d reaped at another time", i);
	}
	ub_mpath_close(m);
}
