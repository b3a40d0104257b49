/* SRP_CMD (srp_cmd.c) on the stand-in verbs layer with the real SCSI core and a ramdisk LU:
 * data-out by RDMA READ and as immediate data, data-in by RDMA WRITE, direct and indirect
 * descriptors, residuals, CHECK CONDITION with sense, transfers that wait for pool chunks,
 * and the malformed commands that get an SRP_RSP error or a target logout; on a fileio LU,
 * which transfers are read or written on the channel's thread. */
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "scsi/backstore/bs_aio.h"
#include "scsi/scsi_dev.h"
#include "tests/unit/srp_fake.h"

static void setup(void)
{
	fake_setup_conf("\tqueue_depth 8");
}

TestSuite(srp_cmd, .init = setup, .fini = fake_teardown);

static uint32_t next_tag = 1;

static void rw10(uint8_t *cdb, uint8_t op, uint32_t lba, uint16_t blocks)
{
	memset(cdb, 0, 16);
	cdb[0] = op;
	srp_put32(cdb + 2, lba);
	srp_put16(cdb + 7, blocks);
}

static struct srp_rsp_view do_io(uint8_t op, uint32_t lba, uint16_t blocks,
				 const struct srp_desc *d, unsigned nd, enum srp_dir dir)
{
	uint8_t cdb[16];
	struct srp_cmd_build b = {.tag = tagn(next_tag++),
				  .cdb = cdb,
				  .cdb_len = 10,
				  .dir = dir,
				  .descs = d,
				  .ndesc = nd,
				  .fmt = nd > 1 ? SRP_FMT_INDIRECT : SRP_FMT_DIRECT,
				  .table = {0x1000, FAKE_RKEY, 0}};

	rw10(cdb, op, lba, blocks);
	return fake_cmd(&b, NULL);
}

static struct srp_desc desc(void *p, uint32_t len)
{
	return (struct srp_desc){.va = (uintptr_t)p, .key = FAKE_RKEY, .len = len};
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed * 7 + (i >> 9));
}

static struct srp_rsp_view tur(void)
{
	uint8_t cdb[16] = {0x00};
	struct srp_cmd_build b = {.tag = tagn(next_tag++), .cdb = cdb, .cdb_len = 6};
	return fake_cmd(&b, NULL);
}

/* Log in and take the POWER ON unit attention a new I_T nexus gets first. */
static void login(void)
{
	struct srp_login_rsp rsp;
	struct srp_rsp_view v;

	fake_login(&rsp);
	v = tur();
	cr_assert_eq(v.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(v.sense[2] & 0x0f, 0x6, "UNIT ATTENTION first");
	cr_assert_eq(v.sense[12], 0x29);
	cr_assert_eq(tur().status, SAM_STAT_GOOD);
	fc.bytes_read = fc.bytes_written = 0;
}

static void expect_good(struct srp_rsp_view v)
{
	cr_assert_eq(v.status, SAM_STAT_GOOD, "status 0x%02x, sense key %x asc %02x", v.status,
		     v.sense_len > 2 ? v.sense[2] & 0xf : 0, v.sense_len > 12 ? v.sense[12] : 0);
	cr_assert_eq(v.flags, 0, "flags 0x%02x", v.flags);
	cr_assert_eq(v.req_lim_delta, 1);
}

static void expect_sense(struct srp_rsp_view v, uint8_t key, uint8_t asc, uint8_t ascq)
{
	cr_assert_eq(v.status, SAM_STAT_CHECK_CONDITION);
	cr_assert(v.flags & SRP_RSP_F_SNSVALID);
	cr_assert_geq(v.sense_len, 14);
	cr_assert_eq(v.sense[2] & 0x0f, key);
	cr_assert_eq(v.sense[12], asc);
	cr_assert_eq(v.sense[13], ascq);
}

Test(srp_cmd, write_by_rdma_read_read_by_rdma_write)
{
	static uint8_t out[16384], in[16384];

	login();
	fill(out, sizeof(out), 1);
	struct srp_desc d = desc(out, sizeof(out));
	expect_good(do_io(0x2a, 8, 32, &d, 1, SRP_DIR_OUT));
	cr_assert_eq(fc.bytes_read, sizeof(out), "data-out fetched by RDMA READ");
	d = desc(in, sizeof(in));
	expect_good(do_io(0x28, 8, 32, &d, 1, SRP_DIR_IN));
	cr_assert_eq(fc.bytes_written, sizeof(in), "data-in sent by RDMA WRITE");
	cr_assert_arr_eq(in, out, sizeof(in));
}

Test(srp_cmd, indirect_descriptors_both_ways)
{
	static uint8_t a[4096], b[8192], c[4096], x[12288], y[4096];
	struct srp_desc w[3] = {desc(a, 4096), desc(b, 8192), desc(c, 4096)};
	struct srp_desc r[2] = {desc(x, 12288), desc(y, 4096)};

	login();
	fill(a, 4096, 2);
	fill(b, 8192, 3);
	fill(c, 4096, 4);
	expect_good(do_io(0x2a, 100, 32, w, 3, SRP_DIR_OUT));
	expect_good(do_io(0x28, 100, 32, r, 2, SRP_DIR_IN));
	cr_assert_arr_eq(x, a, 4096);
	cr_assert_arr_eq(x + 4096, b, 8192);
	cr_assert_arr_eq(y, c, 4096);
}

Test(srp_cmd, immediate_data)
{
	static uint8_t data[4096], back[4096];
	uint8_t cdb[16];
	struct srp_cmd_build b = {.tag = tagn(77),
				  .cdb = cdb,
				  .cdb_len = 10,
				  .dir = SRP_DIR_OUT,
				  .fmt = SRP_FMT_IMM,
				  .imm_len = 4096,
				  .imm_off = 68};

	login();
	fill(data, sizeof(data), 5);
	rw10(cdb, 0x2a, 40, 8);
	expect_good(fake_cmd(&b, data));
	cr_assert_eq(fc.bytes_read, 0, "no RDMA READ for immediate data");
	struct srp_desc d = desc(back, sizeof(back));
	expect_good(do_io(0x28, 40, 8, &d, 1, SRP_DIR_IN));
	cr_assert_arr_eq(back, data, sizeof(back));
}

Test(srp_cmd, one_mebibyte_in_pool_chunks)
{
	static uint8_t out[1 << 20], in[1 << 20];

	login();
	fill(out, sizeof(out), 6);
	struct srp_desc d = desc(out, sizeof(out));
	expect_good(do_io(0x2a, 0, 2048, &d, 1, SRP_DIR_OUT));
	d = desc(in, sizeof(in));
	expect_good(do_io(0x28, 0, 2048, &d, 1, SRP_DIR_IN));
	cr_assert_arr_eq(in, out, sizeof(in));
}

Test(srp_cmd, transfers_wait_for_pool_chunks)
{
	/* the pool holds 16 MiB: three 8 MiB writes at once, the third waits for chunks */
	const size_t n = 8u << 20;
	uint8_t *buf[3];
	uint8_t iu[3][128];
	uint8_t cdb[16];
	unsigned before;

	login();
	before = fc.nsent;
	for (int i = 0; i < 3; i++) {
		struct srp_desc d;
		struct srp_cmd_build b = {.tag = tagn(300 + (uint32_t)i),
					  .cdb = cdb,
					  .cdb_len = 10,
					  .dir = SRP_DIR_OUT,
					  .fmt = SRP_FMT_DIRECT,
					  .descs = &d,
					  .ndesc = 1};
		size_t len;

		buf[i] = malloc(n);
		fill(buf[i], n, 10 + (unsigned)i);
		d = desc(buf[i], (uint32_t)n);
		rw10(cdb, 0x2a, 0, (uint16_t)(n / 512));
		len = srp_build_cmd(iu[i], sizeof(iu[i]), &b);
		fake_recv(iu[i], (uint32_t)len);
	}
	fake_wait_sent(before + 3);
	fake_settle();
	for (unsigned i = before; i < fc.nsent; i++) {
		struct srp_rsp_view v;
		cr_assert_eq(srp_parse_rsp(fc.sent[i].b, fc.sent[i].len, &v), SRP_IU_OK);
		cr_assert_eq(v.status, SAM_STAT_GOOD);
	}
	cr_assert_eq(fc.bytes_read, 3 * n);
	/* the LU holds the last write whole */
	uint8_t *back = malloc(n);
	struct srp_desc d = desc(back, (uint32_t)n);
	(void)do_io(0x28, 0, (uint16_t)(n / 512), &d, 1, SRP_DIR_IN);
	bool one_of_them = false;
	for (int i = 0; i < 3; i++)
		one_of_them |= !memcmp(back, buf[i], n);
	cr_assert(one_of_them, "LU content is none of the writes");
	for (int i = 0; i < 3; i++)
		free(buf[i]);
	free(back);
	cr_assert_eq(rdma_pool_free_bytes(fc.pool), rdma_pool_capacity(fc.pool), "chunks leaked");
}

Test(srp_cmd, residual_under_and_over)
{
	static uint8_t big[8192], small[2048];
	struct srp_rsp_view v;

	login();
	memset(big, 0xee, sizeof(big));
	struct srp_desc d = desc(big, sizeof(big));
	v = do_io(0x28, 0, 8, &d, 1, SRP_DIR_IN); /* 4 KiB asked, 8 KiB described */
	cr_assert_eq(v.status, SAM_STAT_GOOD);
	cr_assert_eq(v.flags, SRP_RSP_F_DIUNDER);
	cr_assert_eq(v.data_in_resid, 4096);
	cr_assert_eq(fc.bytes_written, 4096, "only what the command moved");
	cr_assert_eq(big[4096], 0xee);
	d = desc(small, sizeof(small));
	v = do_io(0x28, 0, 8, &d, 1, SRP_DIR_IN); /* 4 KiB asked, 2 KiB described */
	cr_assert(v.flags & SRP_RSP_F_DIOVER, "flags 0x%02x", v.flags);
	cr_assert_eq(v.data_in_resid, 2048);
}

Test(srp_cmd, check_condition_carries_sense)
{
	static uint8_t buf[4096];
	struct srp_rsp_view v;

	login();
	struct srp_desc d = desc(buf, sizeof(buf));
	v = do_io(0x28, 8u << 11, 8, &d, 1, SRP_DIR_IN); /* past the 8 MiB LU */
	expect_sense(v, 0x5, 0x21, 0x00);
	cr_assert_eq(fc.bytes_written, 0);
}

Test(srp_cmd, unknown_lun)
{
	uint8_t cdb[16] = {0x00};
	struct srp_cmd_build b = {.tag = tagn(9), .cdb = cdb, .cdb_len = 6};

	login();
	b.lun[1] = 5;
	expect_sense(fake_cmd(&b, NULL), 0x5, 0x25, 0x00);
}

Test(srp_cmd, no_data_and_solicited_notification)
{
	uint8_t iu[64], cdb[16] = {0x00};
	struct srp_cmd_build b = {.tag = tagn(10), .cdb = cdb, .cdb_len = 6};
	size_t n;

	login();
	n = srp_build_cmd(iu, sizeof(iu), &b);
	iu[1] = 0x02; /* SCSOLNT */
	fake_recv(iu, (uint32_t)n);
	fake_wait_sent(3);
	fake_settle();
	expect_good(fake_last_rsp());
	cr_assert(fc.sent[fc.nsent - 1].solicited);
}

/* A hand-built SRP_CMD: READ(10) of 8 blocks with the given descriptor area. */
static void bad_cmd(uint8_t fmt, uint8_t out_cnt, uint8_t in_cnt, const uint8_t *area,
		    size_t area_len, uint8_t add_cdb)
{
	uint8_t iu[256] = {SRP_OP_CMD};

	iu[5] = fmt;
	iu[6] = out_cnt;
	iu[7] = in_cnt;
	srp_put64(iu + 8, next_tag++);
	iu[31] = add_cdb;
	iu[32] = 0x28;
	iu[40] = 8;
	memcpy(iu + 48 + add_cdb, area, area_len);
	fake_recv(iu, (uint32_t)(48 + add_cdb + area_len));
}

Test(srp_cmd, malformed_commands_answered_with_check_condition)
{
	static uint8_t buf[4096];
	uint8_t area[20 + 32];
	struct srpt_ch *ch;

	login();
	ch = fc.priv;
	/* indirect: total length is not the sum of the descriptors */
	srp_put64(area, 0);
	srp_put32(area + 8, FAKE_RKEY);
	srp_put32(area + 12, 32);
	srp_put32(area + 16, 9999);
	srp_put64(area + 20, (uintptr_t)buf);
	srp_put32(area + 28, FAKE_RKEY);
	srp_put32(area + 32, 2048);
	srp_put64(area + 36, (uintptr_t)buf + 2048);
	srp_put32(area + 44, FAKE_RKEY);
	srp_put32(area + 48, 2048);
	bad_cmd(SRP_FMT_INDIRECT, 0, 2, area, sizeof(area), 0);
	fake_wait_sent(3);
	fake_settle();
	expect_sense(fake_last_rsp(), 0x5, 0x0e, 0x03);
	/* external table (one descriptor in the IU, two in the table) */
	srp_put32(area + 16, 2048);
	bad_cmd(SRP_FMT_INDIRECT, 0, 1, area, 36, 0);
	fake_wait_sent(4);
	fake_settle();
	expect_sense(fake_last_rsp(), 0x5, 0x0e, 0x03);
	/* additional CDB longer than 16 bytes */
	bad_cmd(0, 0, 0, area, 0, 20);
	fake_wait_sent(5);
	fake_settle();
	expect_sense(fake_last_rsp(), 0x5, 0x0e, 0x03);
	/* both directions */
	bad_cmd(0x11, 0, 0, area, 32, 0);
	fake_wait_sent(6);
	fake_settle();
	expect_sense(fake_last_rsp(), 0x5, 0x0e, 0x03);
	cr_assert_eq(fc.bytes_written + fc.bytes_read, 0, "no data moved for any of them");
	cr_assert_eq(ch->state, SRPT_CH_LIVE, "the channel lives on");
	cr_assert_not(fc.disconnected);
}

Test(srp_cmd, transfer_larger_than_the_core_takes)
{
	uint8_t cdb[16];
	struct srp_desc d = desc((void *)0x1000, (16u << 20));
	struct srp_cmd_build b = {.tag = tagn(11),
				  .cdb = cdb,
				  .cdb_len = 10,
				  .dir = SRP_DIR_IN,
				  .fmt = SRP_FMT_DIRECT,
				  .descs = &d,
				  .ndesc = 1};

	login();
	rw10(cdb, 0x28, 0, 8);
	expect_sense(fake_cmd(&b, NULL), 0x5, 0x24, 0x00);
	cr_assert_eq(fc.bytes_written, 0);
}

static void expect_logout_reason(uint32_t reason)
{
	bool found = false;

	fake_settle();
	for (unsigned i = 0; i < fc.nsent; i++)
		if (fc.sent[i].b[0] == SRP_OP_T_LOGOUT) {
			cr_assert_eq(srp_get32(fc.sent[i].b + 4), reason);
			found = true;
		}
	cr_assert(found, "no SRP_T_LOGOUT");
	cr_assert(fc.disconnected);
	cr_assert(fc.released);
}

Test(srp_cmd, zero_descriptor_count_logs_out)
{
	uint8_t area[20] = {0};

	login();
	srp_put32(area + 12, 16);
	bad_cmd(SRP_FMT_INDIRECT << 4, 0, 0, area, sizeof(area), 0);
	expect_logout_reason(SRP_TLO_BAD_OUT_COUNT);
}

Test(srp_cmd, descriptor_past_the_iu_logs_out)
{
	uint8_t area[10] = {0};

	login();
	bad_cmd(SRP_FMT_DIRECT, 0, 0, area, sizeof(area), 0);
	expect_logout_reason(SRP_TLO_BAD_IN_COUNT);
}

Test(srp_cmd, reserved_format_logs_out)
{
	uint8_t area[16] = {0};

	login();
	bad_cmd(0x05, 0, 0, area, sizeof(area), 0);
	expect_logout_reason(SRP_TLO_BAD_IN_FMT);
}

/* ---- a vdisk_fileio LU: what runs on the channel's thread ---- */

static char file_path[64];

static void setup_file(void)
{
	static uint8_t buf[2 << 20];
	char block[256];
	int fd;

	snprintf(file_path, sizeof(file_path), "/tmp/utgt-srp-cmd-XXXXXX");
	fd = mkstemp(file_path);
	cr_assert_geq(fd, 0);
	fill(buf, sizeof(buf), 9);
	cr_assert_eq(pwrite(fd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	close(fd);
	snprintf(block, sizeof(block),
		 "HANDLER vdisk_fileio {\n\tDEVICE rd0 {\n\t\tfilename %s\n\t}\n}\n", file_path);
	fake_setup_conf_dev(block, "\tqueue_depth 8");
}

static void teardown_file(void)
{
	fake_teardown();
	unlink(file_path);
}

TestSuite(srp_cmd_fileio, .init = setup_file, .fini = teardown_file);

static uint64_t lu_inlined(void)
{
	struct bs_engine_stats st;

	bs_aio_get_stats(bs_aio_of(tgt_config_device(fake_cfg, "rd0")->dev->bs), &st);
	return st.inlined;
}

/* Whether this file system answers a cached read with RWF_NOWAIT (else nothing is read on the
 * submitting thread, and the READ goes the usual way). */
static bool nowait_reads(void)
{
	uint8_t b[512];
	struct iovec v = {b, sizeof(b)};
	int fd = open(file_path, O_RDONLY);
	bool ok;

	cr_assert_geq(fd, 0);
	ok = preadv2(fd, &v, 1, 0, RWF_NOWAIT) == (ssize_t)sizeof(b);
	close(fd);
	return ok;
}

/* A READ of 1 MiB the page cache holds is read in the round it arrived, so its data leaves
 * with that round's doorbell; a 1 MiB WRITE is not (a buffered write may wait in dirty
 * throttling, and the thread serves other channels). */
Test(srp_cmd_fileio, a_cached_large_read_runs_on_the_channel_thread_a_large_write_does_not)
{
	static uint8_t want[2 << 20], in[1 << 20], out[1 << 20];
	bool nowait = nowait_reads();
	struct srp_desc d;
	uint64_t before;

	login();
	fill(want, sizeof(want), 9);
	before = lu_inlined();
	d = desc(in, sizeof(in));
	expect_good(do_io(0x28, 2048, 2048, &d, 1, SRP_DIR_IN));
	cr_assert_arr_eq(in, want + (1 << 20), sizeof(in));
	cr_assert_eq(lu_inlined() - before, nowait ? 1u : 0u, "1 MiB READ: %s on the thread",
		     nowait ? "expected" : "not expected");

	fill(out, sizeof(out), 11);
	d = desc(out, sizeof(out));
	before = lu_inlined();
	expect_good(do_io(0x2a, 0, 2048, &d, 1, SRP_DIR_OUT));
	cr_assert_eq(lu_inlined(), before, "a 1 MiB WRITE goes to the ring or the pool");
	d = desc(in, sizeof(in));
	expect_good(do_io(0x28, 0, 2048, &d, 1, SRP_DIR_IN));
	cr_assert_arr_eq(in, out, sizeof(in));
}
