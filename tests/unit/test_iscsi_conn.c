/* One connection's bad input never hurts more than that connection: unknown opcodes,
 * oversized segments, SNACK, a Login in full feature phase, a header digest error, a
 * truncated header — while another session keeps working. */
#include "iscsi_harness.h"

static struct ih_target T;

static void teardown(void)
{
	ih_stop(&T);
}

static uint8_t reject_of(struct ih_conn *c, uint8_t *h, const void *data, uint32_t dlen)
{
	uint8_t rh[48], *d;
	uint32_t dl;

	cr_assert_eq(ih_send(c, h, data, dlen), 0);
	cr_assert_eq(ih_recv(c, rh, &d, &dl), 0, "expected an answer");
	cr_assert_eq(bhs_opcode(rh), ISCSI_OP_REJECT, "got %s", iscsi_opcode_name(bhs_opcode(rh)));
	cr_assert_eq(dl, 48);
	cr_assert_eq(memcmp(d, h, 4), 0, "the rejected header comes back");
	free(d);
	return rh[2];
}

Test(iscsi_conn, bad_pdus_get_rejects_and_the_session_lives, .fini = teardown)
{
	struct ih_conn c, other;
	uint8_t h[48], *big = calloc(1, 2 << 20);
	uint8_t buf[4096];

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&other, T.port), 0);
	ih_clear_ua(&other, 0);
	cr_assert_eq(ih_login_normal(&c, T.port), 0);

	memset(h, 0, 48);
	h[0] = 0x1c; /* no such opcode */
	h[1] = 0x80;
	cr_assert_eq(reject_of(&c, h, "abc", 3), ISCSI_REJECT_CMD_UNSUPP);
	cr_assert(ih_ping(&c));

	memset(h, 0, 48);
	h[0] = ISCSI_OP_SNACK_REQ;
	h[1] = 0x80;
	cr_assert_eq(reject_of(&c, h, NULL, 0), ISCSI_REJECT_SNACK);

	memset(h, 0, 48);
	h[0] = 0x43; /* Login in full feature phase */
	h[1] = 0x87;
	cr_assert_eq(reject_of(&c, h, NULL, 0), ISCSI_REJECT_PROTOCOL);

	memset(h, 0, 48);
	h[0] = ISCSI_OP_NOP_OUT; /* data segment over our MaxRecvDataSegmentLength (1 MiB) */
	h[1] = 0x80;
	iscsi_put32(h + 16, 0x55);
	iscsi_put32(h + 20, ISCSI_RSVD_TAG);
	iscsi_put32(h + 24, c.cmd_sn);
	cr_assert_eq(reject_of(&c, h, big, (2 << 20) - 4), ISCSI_REJECT_PROTOCOL);
	cr_assert(ih_ping(&c), "resynchronised after the oversized segment");

	memset(h, 0, 48);
	h[0] = ISCSI_OP_DATA_OUT; /* for a task that never existed */
	h[1] = 0x80;
	iscsi_put32(h + 16, 0xabcdef);
	iscsi_put32(h + 20, 0x42);
	cr_assert_eq(reject_of(&c, h, buf, 512), ISCSI_REJECT_INVALID_FIELD);
	cr_assert(ih_ping(&c));

	/* the other session saw none of it */
	memset(buf, 0x5a, sizeof(buf));
	cr_assert_eq(ih_rw10(&other, true, 10, 8, buf, NULL).status, 0);
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(ih_rw10(&other, false, 10, 8, buf, NULL).status, 0);
	cr_assert_eq(buf[4095], 0x5a);
	ih_logout(&c);
	ih_logout(&other);
	free(big);
}

Test(iscsi_conn, fatal_errors_close_only_that_connection, .fini = teardown)
{
	struct ih_conn c, other;
	uint8_t h[48] = {0}, junk[4] = {1, 2, 3, 4};

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&other, T.port), 0);

	/* truncated header, then close */
	ih_init(&c, T.port);
	cr_assert_eq(ih_write_all(c.fd, h, 20), 0);
	ih_close(&c);

	/* header digest error */
	{
		struct ih_login_opts o = {.tname = IH_TARGET,
					  .op_keys = "HeaderDigest=CRC32C|DefaultTime2Retain=0"};

		ih_init(&c, T.port);
		cr_assert_eq(ih_login(&c, &o), 0);
		cr_assert(c.hd);
		h[0] = ISCSI_OP_NOP_OUT;
		h[1] = 0x80;
		cr_assert_eq(ih_write_all(c.fd, h, 48), 0);
		cr_assert_eq(ih_write_all(c.fd, junk, 4), 0);
		cr_assert(ih_closed(&c));
		ih_close(&c);
	}

	/* Data-Out larger than MaxRecvDataSegmentLength for a real task */
	{
		uint8_t *big = calloc(1, (1 << 20) + 512);
		uint8_t rh[48];

		cr_assert_eq(ih_login_normal(&c, T.port), 0);
		memset(h, 0, 48);
		h[0] = ISCSI_OP_SCSI_CMD;
		h[1] = 0x80 | 0x20 | 1;
		iscsi_put32(h + 16, 7);
		iscsi_put32(h + 20, 4 << 20);
		iscsi_put32(h + 24, c.cmd_sn++);
		h[32] = 0x2a;
		h[39] = 0x20; /* 8192 blocks */
		cr_assert_eq(ih_send(&c, h, NULL, 0), 0);
		cr_assert_eq(ih_recv(&c, rh, NULL, NULL), 0);
		cr_assert_eq(bhs_opcode(rh), ISCSI_OP_R2T);
		memset(h, 0, 48);
		h[0] = ISCSI_OP_DATA_OUT;
		h[1] = 0x80;
		iscsi_put32(h + 16, 7);
		iscsi_put32(h + 20, bhs_w20(rh));
		ih_send(&c, h, big, (1 << 20) + 512);
		cr_assert(ih_closed(&c));
		ih_close(&c);
		free(big);
	}
	cr_assert(ih_ping(&other), "the other session is untouched");
	ih_logout(&other);
}

Test(iscsi_conn, many_sessions_spread_over_workers, .fini = teardown)
{
	struct ih_conn c[12];
	unsigned per_worker[64] = {0};

	ih_start(&T, "worker_threads 3", NULL);
	cr_assert_eq(iscsit_global->nworkers, 3);
	for (int i = 0; i < 12; i++)
		cr_assert_eq(ih_login_normal(&c[i], T.port), 0);
	for (unsigned w = 0; w < iscsit_global->nworkers; w++)
		per_worker[w] = atomic_load(&iscsit_global->workers[w].nconns);
	for (unsigned w = 0; w < iscsit_global->nworkers; w++)
		cr_assert_eq(per_worker[w], 4, "worker %u serves %u", w, per_worker[w]);
	for (int i = 0; i < 12; i++)
		cr_assert(ih_ping(&c[i]));
	for (int i = 0; i < 12; i++)
		ih_logout(&c[i]);
}

/* An initiator that sends and does not read: the target stops reading rather than queueing
 * answers without bound, and every answer arrives once the initiator reads again. */
struct flood {
	struct ih_conn *c;
	int n;
	int sent;
};

static void *flood_sender(void *arg)
{
	struct flood *f = arg;
	static uint8_t data[8192];

	for (int i = 0; i < f->n; i++) {
		uint8_t h[48] = {0};

		h[0] = ISCSI_OP_NOP_OUT;
		h[1] = 0x80;
		iscsi_put32(h + 16, 0x10000 + (uint32_t)i);
		iscsi_put32(h + 20, ISCSI_RSVD_TAG);
		iscsi_put32(h + 24, f->c->cmd_sn + (uint32_t)i);
		memset(data, i & 0xff, 16);
		if (ih_send(f->c, h, data, sizeof(data)))
			break;
		f->sent++;
	}
	return NULL;
}

Test(iscsi_conn, backpressure_when_the_initiator_does_not_read, .fini = teardown, .timeout = 60)
{
	struct ih_conn c;
	struct flood f = {.c = &c, .n = 4000};
	pthread_t th;
	int got = 0;

	ih_start(&T, NULL, NULL);
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	pthread_create(&th, NULL, flood_sender, &f);
	usleep(500 * 1000); /* let it fill every buffer on the way */
	cr_assert(f.sent < f.n, "the target stopped reading (sent %d of %d)", f.sent, f.n);
	while (got < f.n) {
		uint8_t rh[48], *d;
		uint32_t dl;

		cr_assert_eq(ih_recv(&c, rh, &d, &dl), 0, "after %d answers", got);
		cr_assert_eq(bhs_opcode(rh), ISCSI_OP_NOP_IN);
		cr_assert_eq(bhs_itt(rh), 0x10000 + (uint32_t)got, "in order");
		cr_assert_eq(dl, 8192);
		cr_assert_eq(d[0], got & 0xff);
		free(d);
		got++;
	}
	pthread_join(th, NULL);
	c.cmd_sn += (uint32_t)f.n;
	cr_assert(ih_ping(&c));
	ih_logout(&c);
}

/* RspTimeout: a command that stays in the core too long takes its connection down (the
 * target still waits for it before freeing the connection). */
Test(iscsi_conn, rsp_timeout_drops_the_connection, .fini = teardown, .timeout = 60)
{
	struct ih_conn c, other;
	uint8_t cdb[10] = {0x48, 0x01, 0, 0, 0, 0, 0, 0x02, 0x04, 0}; /* SANITIZE OVERWRITE */
	uint8_t param[516] = {0x01, 0x00, 0x02, 0x00};
	uint8_t h[48] = {0};
	const char *conf =
	    "HANDLER ramdisk {\n DEVICE slow {\n  size_mb 8\n  sanitize_rate_mb 1\n }\n"
	    " DEVICE rd0 {\n  size_mb 4\n }\n}\n"
	    "TARGET_DRIVER iscsi {\n listen 127.0.0.1:0\n"
	    " TARGET " IH_TARGET " {\n  enabled 1\n  RspTimeout 1\n  LUN 0 slow\n }\n"
	    " TARGET " IH_TARGET "-2 {\n  enabled 1\n  LUN 0 rd0\n }\n}\n";

	ih_start_conf(&T, conf);
	cr_assert_eq(ih_login_normal(&c, T.port), 0);
	ih_clear_ua(&c, 0);
	h[0] = ISCSI_OP_SCSI_CMD;
	h[1] = 0x80 | 0x20 | 1;
	iscsi_put32(h + 16, 0x66);
	iscsi_put32(h + 20, sizeof(param));
	iscsi_put32(h + 24, c.cmd_sn++);
	memcpy(h + 32, cdb, 10);
	cr_assert_eq(ih_send(&c, h, param, sizeof(param)), 0);
	/* 8 MiB at 1 MiB/s: about 8 s in the core, RspTimeout is 1 s; the drop must come while
	 * the command still runs (with 4 s a loaded machine's late timer check could miss it) */
	cr_assert(ih_closed(&c), "the connection was dropped");
	ih_close(&c);
	{
		struct ih_login_opts o = {.tname = IH_TARGET "-2"};

		ih_init(&other, T.port);
		cr_assert_eq(ih_login(&other, &o), 0, "the target itself is fine");
		cr_assert(ih_ping(&other));
		ih_logout(&other);
	}
}

/* ---------------------------------------------------------------- message transports (iSER) */

/* A connection on a transport of the test's own (as iSER is one) on a bare fixture: whole
 * PDUs fed with iscsit_conn_feed() reach the same handlers as socket input, their answers go
 * to xp->queue, and iscsit_conn_input() asks xp->input. */
static struct iscsit_txe *fed_out[8];
static int nfed_out, ninput;
static void fed_take(struct iscsit_conn *c, struct iscsit_txe *e)
{
	(void)c;
	cr_assert_lt(nfed_out, 8);
	fed_out[nfed_out++] = e;
}
static void fed_input(struct iscsit_conn *c)
{
	(void)c;
	ninput++;
}

Test(iscsi_conn, fed_pdus_reach_the_handlers_and_answers_go_to_the_transport)
{
	static const struct iscsit_xport xp = {
	    .name = "test", .queue = fed_take, .input = fed_input};
	struct iscsit_worker w = {0};
	struct iscsit_session s = {0};
	struct iscsit_conn c = {0};
	uint8_t pdu[48 + 4] = {0};

	pthread_mutex_init(&s.lock, NULL);
	s.exp_cmd_sn = 100;
	s.queued_cmds = 32;
	c.w = &w;
	c.sess = &s;
	c.state = CONN_FFP;
	c.stat_sn = 50;
	c.xp = &xp;
	cr_assert_eq(iscsit_rx_init(&c.rx), 0);
	c.rx.max_dsl = 8192;

	/* NOP-Out ping with data: a NOP-In echoing it, StatSN 50 */
	pdu[0] = ISCSI_OP_NOP_OUT | 0x40;
	pdu[1] = 0x80;
	iscsi_put24(pdu + 5, 4);
	iscsi_put32(pdu + 16, 0x1234);
	iscsi_put32(pdu + 20, ISCSI_RSVD_TAG);
	iscsi_put32(pdu + 24, 100);
	memcpy(pdu + 48, "ping", 4);
	cr_assert_eq(iscsit_conn_feed(&c, pdu, sizeof(pdu)), RX_CB_OK);
	cr_assert_eq(nfed_out, 1);
	cr_assert_eq(bhs_opcode(fed_out[0]->hdr), ISCSI_OP_NOP_IN);
	cr_assert_eq(bhs_itt(fed_out[0]->hdr), 0x1234);
	cr_assert_eq(iscsi_get32(fed_out[0]->hdr + 24), 50);
	cr_assert_eq(fed_out[0]->dlen, 4);
	cr_assert_eq(memcmp(fed_out[0]->data, "ping", 4), 0);
	cr_assert_eq(c.rx.pdus, 1);

	/* SNACK: rejected as over TCP, the header coming back in the Reject */
	memset(pdu, 0, sizeof(pdu));
	pdu[0] = ISCSI_OP_SNACK_REQ;
	pdu[1] = 0x80;
	iscsi_put32(pdu + 16, 0x77);
	cr_assert_eq(iscsit_conn_feed(&c, pdu, 48), RX_CB_OK);
	cr_assert_eq(nfed_out, 2);
	cr_assert_eq(bhs_opcode(fed_out[1]->hdr), ISCSI_OP_REJECT);
	cr_assert_eq(fed_out[1]->hdr[2], ISCSI_REJECT_SNACK);
	cr_assert_eq(fed_out[1]->dlen, 48);
	cr_assert_eq(memcmp(fed_out[1]->data, pdu, 4), 0);

	/* input is the transport's */
	iscsit_conn_input(&c);
	cr_assert_eq(ninput, 1);
	c.rx_paused = true;
	iscsit_conn_input(&c);
	cr_assert_eq(ninput, 1, "not while paused");

	for (int i = 0; i < nfed_out; i++) {
		free(fed_out[i]->owned);
		free(fed_out[i]);
	}
	iscsit_rx_free(&c.rx);
	pthread_mutex_destroy(&s.lock);
}
