/* SCSI commands over the wire: immediate data, unsolicited Data-Out, R2T bursts, Data-In
 * split by the initiator's MaxRecvDataSegmentLength and MaxBurstLength, status in the last
 * Data-In, SCSI Response with sense and residuals, digests, and the malformed cases. */
#include "iscsi_harness.h"

static struct ih_target T;

static void teardown(void)
{
	ih_stop(&T);
}

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)((i >> 9) * 7 + i * 13 + seed);
}

/* write then read back `blocks` at lba and compare */
static void roundtrip(struct ih_conn *c, uint32_t lba, uint16_t blocks, uint32_t seed,
		      const struct ih_cmd_opts *o)
{
	size_t n = (size_t)blocks * 512;
	uint8_t *w = malloc(n), *r = calloc(1, n);
	struct ih_result res;

	fill(w, n, seed);
	res = ih_rw10(c, true, lba, blocks, w, o);
	cr_assert_eq(res.status, 0, "write status %d reject %d", res.status, res.reject);
	cr_assert_eq(res.resid, 0);
	res = ih_rw10(c, false, lba, blocks, r, NULL);
	cr_assert_eq(res.status, 0);
	cr_assert_eq(res.datain, n);
	cr_assert_eq(memcmp(w, r, n), 0, "data read back differs");
	free(w);
	free(r);
}

static void login_with(struct ih_conn *c, const char *op_keys)
{
	struct ih_login_opts o = {.tname = IH_TARGET, .op_keys = op_keys};

	ih_init(c, T.port);
	cr_assert_eq(ih_login(c, &o), 0);
	ih_clear_ua(c, 0);
}

Test(iscsi_cmd, immediate_unsolicited_and_r2t, .fini = teardown)
{
	struct ih_conn c;

	ih_start(&T, NULL, NULL);
	login_with(&c, NULL);
	roundtrip(&c, 0, 1, 1, NULL);	   /* immediate data only */
	roundtrip(&c, 100, 128, 2, NULL);  /* 64 KiB: immediate + unsolicited = FirstBurstLength */
	roundtrip(&c, 300, 2048, 3, NULL); /* 1 MiB: first burst then R2Ts of MaxBurstLength */
	ih_logout(&c);
}

/* A READ longer than the 2 MiB ring goes in pieces: the same data, DataSN running on across
 * pieces, the status in the last PDU; the session holds the ring, not the READ's length. */
Test(iscsi_cmd, long_read_in_pieces, .fini = teardown)
{
	struct ih_conn c;
	const uint16_t blocks = 20000; /* 10,240,000 bytes: four pieces of 1 MiB and more */
	size_t n = (size_t)blocks * 512;
	uint8_t *w = malloc(n), *r = calloc(1, n);
	struct ih_result res;

	ih_start(&T, NULL, NULL);
	login_with(&c, NULL);
	fill(w, n, 7);
	res = ih_rw10(&c, true, 10, blocks, w, NULL);
	cr_assert_eq(res.status, 0);
	res = ih_rw10(&c, false, 10, blocks, r, NULL);
	cr_assert_eq(res.status, 0, "GOOD in the last Data-In");
	cr_assert_eq(res.datain, n);
	cr_assert_eq(res.flags, 0, "no residual");
	cr_assert_eq(memcmp(w, r, n), 0, "data read back differs");
	cr_assert_eq(res.last_datasn, res.n_datain - 1, "DataSN from 0 without a gap");
	/* the worker frees the ring right after the last PDU left: wait for it, bounded */
	for (int i = 0; i < 2000 && atomic_load(&iscsit_global->mem_used); i++)
		usleep(1000);
	cr_assert_eq(atomic_load(&iscsit_global->mem_used), 0, "the ring went back");
	ih_logout(&c);
	free(w);
	free(r);
}

Test(iscsi_cmd, r2t_only_and_outstanding_r2ts, .fini = teardown)
{
	struct ih_conn c;
	struct ih_cmd_opts o = {.no_immediate = true, .no_unsolicited = true, .corrupt_datasn = -1};
	uint8_t *w = malloc(1 << 20);
	struct ih_result r;

	ih_start(&T, NULL, NULL);
	login_with(&c, "InitialR2T=Yes|ImmediateData=No|MaxBurstLength=65536|"
		       "MaxRecvDataSegmentLength=16384|MaxOutstandingR2T=8");
	cr_assert(c.initial_r2t);
	cr_assert(!c.immediate_data);
	fill(w, 1 << 20, 4);
	r = ih_rw10(&c, true, 0, 2048, w, &o);
	cr_assert_eq(r.status, 0);
	cr_assert_eq(r.n_r2t, 16, "1 MiB in 64 KiB bursts");
	roundtrip(&c, 5000, 300, 5, &o);
	free(w);
	ih_logout(&c);
}

Test(iscsi_cmd, datain_split_and_status_in_last_pdu, .fini = teardown)
{
	struct ih_conn c;
	uint8_t *b = malloc(1 << 20);
	struct ih_result r;

	ih_start(&T, NULL, NULL);
	login_with(&c, "MaxRecvDataSegmentLength=8192|MaxBurstLength=65536");
	r = ih_rw10(&c, false, 0, 2048, b, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert_eq(r.datain, 1 << 20);
	cr_assert_eq(r.n_datain, 128, "8 KiB Data-In PDUs");
	cr_assert_eq(r.last_datasn, 127);
	cr_assert_eq(r.flags, 0);
	free(b);
	ih_logout(&c);
}

Test(iscsi_cmd, residuals, .fini = teardown)
{
	struct ih_conn c;
	uint8_t cdb[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 2, 0}, buf[4096];
	struct ih_result r;

	ih_start(&T, NULL, NULL);
	login_with(&c, NULL);
	/* READ(10) of 2 blocks with EDTL 4096: underflow of 3072 */
	r = ih_cmd(&c, 0, cdb, 10, false, true, buf, 4096, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert_eq(r.flags, ISCSI_RSP_UNDER);
	cr_assert_eq(r.resid, 3072);
	cr_assert_eq(r.datain, 1024);
	/* EDTL 512 for 2 blocks: overflow of 512 */
	r = ih_cmd(&c, 0, cdb, 10, false, true, buf, 512, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert_eq(r.flags, ISCSI_RSP_OVER);
	cr_assert_eq(r.resid, 512);
	cr_assert_eq(r.datain, 512);
	ih_logout(&c);
}

Test(iscsi_cmd, check_condition_carries_sense, .fini = teardown)
{
	struct ih_conn c;
	uint8_t buf[512];
	struct ih_result r;

	ih_start(&T, NULL, NULL);
	login_with(&c, NULL);
	r = ih_rw10(&c, false, 64 << 11, 1, buf, NULL); /* just past the end of 64 MiB */
	cr_assert_eq(r.status, 2);
	cr_assert_eq(ih_sense_key(&r), 5);
	cr_assert_eq(ih_asc(&r), 0x21);
	cr_assert_eq(r.datain, 0);
	cr_assert_eq(r.flags, ISCSI_RSP_UNDER);
	cr_assert_eq(r.resid, 512);
	/* unknown LUN */
	{
		uint8_t tur[6] = {0};

		r = ih_cmd(&c, 5, tur, 6, false, false, NULL, 0, NULL);
		cr_assert_eq(r.status, 2);
		cr_assert_eq(ih_sense_key(&r), 5);
		cr_assert_eq(ih_asc(&r), 0x25);
	}
	ih_logout(&c);
}

Test(iscsi_cmd, digests, .fini = teardown)
{
	struct ih_conn c;

	ih_start(&T, NULL, NULL);
	login_with(&c, "HeaderDigest=CRC32C|DataDigest=CRC32C|MaxRecvDataSegmentLength=4096");
	cr_assert(c.hd && c.dd);
	roundtrip(&c, 7, 3, 6, NULL); /* not a multiple of 4 KiB: several PDUs */
	roundtrip(&c, 77, 1000, 7, NULL);
	ih_logout(&c);
}

Test(iscsi_cmd, bad_data_digest_on_data_out, .fini = teardown)
{
	struct ih_conn c;
	struct ih_cmd_opts o = {.no_immediate = true, .bad_ddigest = true, .corrupt_datasn = -1};
	uint8_t buf[8192];
	struct ih_result r;
	uint8_t h[48];

	ih_start(&T, NULL, NULL);
	login_with(&c, "HeaderDigest=CRC32C|DataDigest=CRC32C|MaxRecvDataSegmentLength=4096");
	fill(buf, sizeof(buf), 8);
	r = ih_rw10(&c, true, 0, 16, buf, &o);
	/* a Reject (data digest error) for the PDU first ... */
	cr_assert(r.reject);
	cr_assert_eq(r.reject_reason, ISCSI_REJECT_DATA_DIGEST);
	/* ... then the command ends with PROTOCOL SERVICE CRC ERROR */
	cr_assert_eq(ih_recv(&c, h, NULL, NULL), 0);
	cr_assert_eq(bhs_opcode(h), ISCSI_OP_SCSI_RSP);
	cr_assert_eq(h[3], 2);
	cr_assert(ih_ping(&c), "the session survives");
	roundtrip(&c, 0, 16, 9, NULL);
	ih_logout(&c);
}

Test(iscsi_cmd, datasn_error_fails_only_the_command, .fini = teardown)
{
	struct ih_conn c;
	struct ih_cmd_opts o = {.no_immediate = true, .corrupt_datasn = 27};
	uint8_t buf[4096];
	struct ih_result r;

	ih_start(&T, NULL, NULL);
	login_with(&c, "MaxRecvDataSegmentLength=512");
	fill(buf, sizeof(buf), 10);
	r = ih_rw10(&c, true, 0, 8, buf, &o);
	cr_assert_eq(r.status, 2);
	cr_assert_eq(ih_sense_key(&r), 0x0b);
	cr_assert_eq(ih_asc(&r), 0x4b);
	cr_assert_eq(ih_ascq(&r), 0x00);
	roundtrip(&c, 0, 8, 11, NULL);
	ih_logout(&c);
}

Test(iscsi_cmd, duplicate_itt_and_bad_immediate_data, .fini = teardown)
{
	struct ih_conn c;
	uint8_t h[48] = {0}, rh[48], data[1024] = {0};

	ih_start(&T, NULL, NULL);
	login_with(&c, NULL);
	/* a write waiting for its R2T data, then a second command with the same ITT */
	h[0] = ISCSI_OP_SCSI_CMD;
	h[1] = 0x80 | 0x20 | 1;
	iscsi_put32(h + 16, 0x777);
	iscsi_put32(h + 20, 1 << 20);
	iscsi_put32(h + 24, c.cmd_sn++);
	h[32] = 0x2a;
	h[39] = 0x08; /* 2048 blocks: CDB bytes 7-8 */
	cr_assert_eq(ih_send(&c, h, NULL, 0), 0);
	cr_assert_eq(ih_recv(&c, rh, NULL, NULL), 0);
	cr_assert_eq(bhs_opcode(rh), ISCSI_OP_R2T);
	iscsi_put32(h + 24, c.cmd_sn++);
	cr_assert_eq(ih_send(&c, h, NULL, 0), 0);
	do /* the other outstanding R2Ts of the first command come first */
		cr_assert_eq(ih_recv(&c, rh, NULL, NULL), 0);
	while (bhs_opcode(rh) == ISCSI_OP_R2T);
	cr_assert_eq(bhs_opcode(rh), ISCSI_OP_REJECT);
	cr_assert_eq(rh[2], ISCSI_REJECT_TASK_IN_PROG);

	/* immediate data on a READ */
	memset(h, 0, 48);
	h[0] = ISCSI_OP_SCSI_CMD;
	h[1] = 0x80 | 0x40 | 1;
	iscsi_put32(h + 16, 0x778);
	iscsi_put32(h + 20, 512);
	iscsi_put32(h + 24, c.cmd_sn++);
	h[32] = 0x28;
	h[40] = 1;
	cr_assert_eq(ih_send(&c, h, data, sizeof(data)), 0);
	cr_assert_eq(ih_recv(&c, rh, NULL, NULL), 0);
	cr_assert_eq(bhs_opcode(rh), ISCSI_OP_REJECT);
	cr_assert_eq(rh[2], ISCSI_REJECT_PROTOCOL);
	cr_assert(ih_ping(&c));
	ih_close(&c);
}

Test(iscsi_cmd, cmdsn_outside_window_is_ignored, .fini = teardown)
{
	struct ih_conn c;
	uint8_t tur[6] = {0};
	struct ih_result r;
	uint32_t good;

	ih_start(&T, NULL, NULL);
	login_with(&c, NULL);
	good = c.cmd_sn;
	c.cmd_sn = c.max_cmd_sn + 1; /* too high */
	{
		uint8_t h[48] = {0};

		h[0] = ISCSI_OP_SCSI_CMD;
		h[1] = 0x80;
		iscsi_put32(h + 16, 0x999);
		iscsi_put32(h + 24, c.cmd_sn);
		cr_assert_eq(ih_send(&c, h, NULL, 0), 0);
		iscsi_put32(h + 16, 0x99a);
		iscsi_put32(h + 24, good - 1); /* too low */
		cr_assert_eq(ih_send(&c, h, NULL, 0), 0);
	}
	c.cmd_sn = good;
	/* the next in-window command is answered, and nothing came for the ignored ones */
	r = ih_cmd(&c, 0, tur, 6, false, false, NULL, 0, NULL);
	cr_assert_eq(r.status, 0);
	ih_logout(&c);
}

Test(iscsi_cmd, window_follows_queued_commands, .fini = teardown)
{
	struct ih_conn c;

	ih_start(&T, NULL, "QueuedCommands 4");
	login_with(&c, NULL);
	/* MaxCmdSN - ExpCmdSN + 1 == 4 when nothing is outstanding */
	cr_assert(ih_ping(&c));
	cr_assert_eq(c.max_cmd_sn - c.cmd_sn + 1, 4);
	ih_logout(&c);
}

Test(iscsi_cmd, refuses_transfers_over_the_limit, .fini = teardown)
{
	struct ih_conn c;
	uint8_t cdb[16] = {0x88}, dummy[16];
	struct ih_result r;

	ih_start(&T, NULL, NULL);
	login_with(&c, NULL);
	/* READ(16) asking for 1 GiB: we do not buffer that much for one command */
	cdb[10] = 0x00;
	cdb[11] = 0x20; /* 2M blocks */
	r = ih_cmd(&c, 0, cdb, 16, false, true, dummy, 1u << 30, NULL);
	cr_assert_eq(r.status, 2);
	cr_assert_eq(ih_sense_key(&r), 5);
	cr_assert(ih_ping(&c));
	ih_logout(&c);
}

Test(iscsi_cmd, many_outstanding_commands, .fini = teardown)
{
	struct ih_conn c;
	uint8_t *bufs[16];
	uint32_t itts[16];
	int got = 0;

	ih_start(&T, NULL, NULL);
	login_with(&c, NULL);
	roundtrip(&c, 0, 128, 12, NULL);
	/* 16 reads in flight at once; answers may come in any order */
	for (int i = 0; i < 16; i++) {
		uint8_t h[48] = {0};

		bufs[i] = calloc(1, 4096);
		h[0] = ISCSI_OP_SCSI_CMD;
		h[1] = 0x80 | 0x40 | 1;
		itts[i] = c.itt++;
		iscsi_put32(h + 16, itts[i]);
		iscsi_put32(h + 20, 4096);
		iscsi_put32(h + 24, c.cmd_sn++);
		h[32] = 0x28;
		h[37] = (uint8_t)(i * 8);
		h[40] = 8; /* transfer length, CDB byte 8 */
		cr_assert_eq(ih_send(&c, h, NULL, 0), 0);
	}
	while (got < 16) {
		uint8_t rh[48], *d;
		uint32_t dl;
		int k;

		cr_assert_eq(ih_recv(&c, rh, &d, &dl), 0);
		for (k = 0; k < 16 && itts[k] != bhs_itt(rh); k++)
			;
		cr_assert(k < 16);
		if (bhs_opcode(rh) == ISCSI_OP_DATA_IN)
			memcpy(bufs[k] + bhs_w40(rh), d, dl);
		if (bhs_opcode(rh) == ISCSI_OP_SCSI_RSP ||
		    (bhs_opcode(rh) == ISCSI_OP_DATA_IN && (rh[1] & 1))) {
			cr_assert_eq(rh[3], 0);
			got++;
		}
		free(d);
	}
	{
		uint8_t *want = malloc(64 * 1024);

		fill(want, 64 * 1024, 12); /* what roundtrip() wrote at LBA 0 */
		for (int i = 0; i < 16; i++) {
			cr_assert_eq(memcmp(bufs[i], want + i * 4096, 4096), 0, "read %d", i);
			free(bufs[i]);
		}
		free(want);
	}
	ih_logout(&c);
}

/* A WRITE whose immediate-data segment stops half way, then silence (a path cut by a
 * firewall): a login with the same ISID and TSIH 0 must close that connection, drop the
 * half-received command and be answered (it used to wait for the old session forever). */
Test(iscsi_cmd, command_cut_inside_its_data_does_not_block_reinstatement, .fini = teardown)
{
	struct ih_conn a, b;
	struct ih_login_opts o = {.tname = IH_TARGET};
	uint8_t h[48] = {0}, half[16384] = {0};
	const uint8_t cdb[10] = {0x2a, 0, 0, 0, 0, 0, 0, 0, 64, 0}; /* WRITE(10) 64 blocks */

	ih_start(&T, NULL, NULL);
	login_with(&a, NULL);
	h[0] = ISCSI_OP_SCSI_CMD;
	h[1] = 0x80 | 0x20 | 1; /* final, write, simple */
	h[5] = 0x00;
	h[6] = 0x80; /* DataSegmentLength 32768 */
	iscsi_put32(h + 16, a.itt++);
	iscsi_put32(h + 20, 32768);
	iscsi_put32(h + 24, a.cmd_sn++);
	iscsi_put32(h + 28, a.exp_stat_sn);
	memcpy(h + 32, cdb, sizeof(cdb));
	cr_assert_eq(ih_write_all(a.fd, h, sizeof(h)), 0);
	cr_assert_eq(ih_write_all(a.fd, half, sizeof(half)), 0);

	ih_init(&b, T.port);
	memcpy(b.isid, a.isid, 6);
	cr_assert_eq(ih_login(&b, &o), 0, "the reinstating login is answered");
	cr_assert_neq(b.tsih, a.tsih);
	cr_assert(ih_closed(&a), "the old connection was closed");
	ih_close(&a);
	ih_clear_ua(&b, 0);
	roundtrip(&b, 0, 64, 9, NULL);
	ih_logout(&b);
}
