/* iSER as an iSCSI connection transport, over a fake verbs layer (iser_io replaced) and the real
 * iSCSI target and SCSI core (a ramdisk LU): login over SENDs with the iSER keys negotiated;
 * a READ's data RDMA-written in the same chain as its SCSI Response (no Data-In PDU, no phase
 * collapse); a WRITE with immediate data whose rest is RDMA-READ (no R2T), the data checked on
 * the LU; NOP; a SCSI command without the STag it needs drops the connection; PDUs arriving
 * while input is paused wait their turn; Logout closes only once its SEND completed; the
 * connection is released only after its in-flight RDMA work came back; RDMAExtensions No keeps
 * a target off iSER. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iscsi_harness.h"
#include "target/admin.h"
#include "target/tgt_jread.h"
#define ISER_FAKE_CHECK(c) cr_assert(c)
#include "iser_fake.h"

static struct ih_target T;
static void start(const char *target_extra)
{
	char extra[256];

	snprintf(extra, sizeof(extra), "%s", target_extra ? target_extra : "RDMAExtensions Yes");
	ih_start(&T, "worker_threads 1\n listen_iser 127.0.0.1:3260", extra);
	iser_fake_begin();
}

static void iser_connect(void)
{
	iser_fake_connect();
	cr_assert(f.accepted);
	cr_assert_not_null(f.priv);
	cr_assert_not_null(((struct iser_conn *)f.priv)->conn, "an iSCSI connection rides on it");
}

static void stop(void)
{
	/* what a test left posted (a refused login's response) is flushed by the disconnect, so
	 * the stop does not wait out its 60 s for the release */
	f.flush_on_disconnect = true;
	ih_stop(&T); /* closes what is left through the fake */
	iser_fake_end();
}

/* ---- the initiator side: SENDs in, SENDs out ---- */

/* Deliver one SEND: iSER header h, BHS, data. */
static void deliver(const struct iser_hdr *h, const uint8_t *bhs, const void *data, uint32_t dsl)
{
	static uint8_t send[ISER_HEADERS_LEN + 70000];
	struct iser_hdr def = {.opcode = ISER_OP_ISCSI_CTRL};

	iser_hdr_encode(send, h ? h : &def);
	memcpy(send + ISER_HDR_LEN, bhs, 48);
	if (dsl)
		memcpy(send + ISER_HEADERS_LEN, data, dsl);
	cr_assert(iser_fake_deliver_raw(send, ISER_HEADERS_LEN + dsl), "no free receive buffer");
}

static const uint8_t *sent_bhs(unsigned i)
{
	cr_assert_lt(i, f.nsent, "SEND %u was never posted (%u were)", i, f.nsent);
	cr_assert_eq(f.sent[i][0], 0x10, "target SENDs carry iSER header 0x10");
	return f.sent[i] + ISER_HDR_LEN;
}

static const char *sent_key(unsigned i, const char *key)
{
	return ih_key((const char *)f.sent[i] + ISER_HEADERS_LEN, f.sent_len[i] - ISER_HEADERS_LEN,
		      key);
}

static uint32_t cmd_sn = 1, itt = 0x100, exp_stat_sn;

static void login_pdu(uint8_t csg, uint8_t nsg, const char *spec)
{
	uint8_t h[48] = {0};
	char text[2048];
	size_t tl = ih_keys(text, spec);
	const uint8_t isid[6] = {0x80, 0, 0, 0x11, 0x22, 0x01};

	h[0] = 0x40 | ISCSI_OP_LOGIN_REQ;
	h[1] = (uint8_t)(0x80 | csg << 2 | nsg);
	iscsi_put24(h + 5, (uint32_t)tl);
	memcpy(h + 8, isid, 6);
	iscsi_put32(h + 16, itt);
	iscsi_put32(h + 24, cmd_sn);
	iscsi_put32(h + 28, exp_stat_sn);
	deliver(NULL, h, text, (uint32_t)tl);
}

/* The operational keys iscsid sends on an iser iface (with RDMAExtensions appended). */
#define OP_KEYS                                                                                    \
	"HeaderDigest=None|DataDigest=None|DefaultTime2Wait=0|DefaultTime2Retain=0|"               \
	"IFMarker=No|OFMarker=No|ErrorRecoveryLevel=0|InitialR2T=No|ImmediateData=Yes|"            \
	"MaxBurstLength=16776192|FirstBurstLength=262144|MaxOutstandingR2T=1|"                     \
	"MaxConnections=1|DataPDUInOrder=Yes|DataSequenceInOrder=Yes|"                             \
	"InitiatorRecvDataSegmentLength=262144|TargetRecvDataSegmentLength=262144|"

/* The login open-iscsi does on an iser iface.  Returns the index of the final response. */
static unsigned login(void)
{
	unsigned first = f.nsent;
	const uint8_t *r;

	login_pdu(0, 1,
		  "InitiatorName=" IH_INITIATOR "|TargetName=" IH_TARGET
		  "|SessionType=Normal|AuthMethod=None");
	r = sent_bhs(first);
	cr_assert_eq(bhs_opcode(r), ISCSI_OP_LOGIN_RSP);
	cr_assert_eq(iscsi_get16(r + 36), 0, "status %04x", iscsi_get16(r + 36));
	exp_stat_sn = iscsi_get32(r + 24) + 1;
	login_pdu(1, 3, OP_KEYS "RDMAExtensions=Yes");
	r = sent_bhs(first + 1);
	cr_assert_eq(bhs_opcode(r), ISCSI_OP_LOGIN_RSP);
	cr_assert_eq(iscsi_get16(r + 36), 0, "status %04x", iscsi_get16(r + 36));
	cr_assert(r[1] & 0x80, "transit to full feature phase");
	exp_stat_sn = iscsi_get32(r + 24) + 1;
	return first + 1;
}

static void scsi_cmd(const struct iser_hdr *h, bool read, bool write, uint32_t edtl,
		     const uint8_t *cdb, const void *imm, uint32_t imm_len, bool final)
{
	uint8_t b[48] = {0};

	b[0] = ISCSI_OP_SCSI_CMD;
	b[1] = (uint8_t)((final ? 0x80 : 0) | (read ? 0x40 : 0) | (write ? 0x20 : 0) | 1);
	iscsi_put24(b + 5, imm_len);
	iscsi_put32(b + 16, ++itt);
	iscsi_put32(b + 20, edtl);
	iscsi_put32(b + 24, cmd_sn++);
	iscsi_put32(b + 28, exp_stat_sn);
	memcpy(b + 32, cdb, 16);
	deliver(h, b, imm, imm_len);
}

static void rw10(uint8_t *cdb, bool write, uint32_t lba, uint16_t blocks)
{
	memset(cdb, 0, 16);
	cdb[0] = write ? 0x2a : 0x28;
	iscsi_put32(cdb + 2, lba);
	cdb[7] = (uint8_t)(blocks >> 8);
	cdb[8] = (uint8_t)blocks;
}

static void complete(struct rdma_op *op, bool ok)
{
	iser_fake_complete(op, ok);
}

/* Copy between the pieces the target posted and a flat buffer. */
static void from_loc(uint8_t *out)
{
	uint64_t off = 0;

	for (unsigned i = 0; i < f.nloc; i++) {
		memcpy(out + off, f.loc[i].addr, f.loc[i].len);
		off += f.loc[i].len;
	}
	cr_assert_eq(off, f.bytes, "the local pieces add up to the transfer");
}

static void to_loc(const uint8_t *in)
{
	uint64_t off = 0;

	for (unsigned i = 0; i < f.nloc; i++) {
		memcpy(f.loc[i].addr, in + off, f.loc[i].len);
		off += f.loc[i].len;
	}
}

/* ---------------------------------------------------------------- tests */

Test(iser_iscsi, login_negotiates_the_iser_keys, .fini = stop)
{
	unsigned fin;

	start(NULL);
	iser_connect();
	fin = login();
	cr_assert_str_eq(sent_key(fin, "RDMAExtensions"), "Yes");
	/* Minimum with what one of our buffers holds (8192 by default) */
	cr_assert_str_eq(sent_key(fin, "InitiatorRecvDataSegmentLength"), "8192");
	cr_assert_str_eq(sent_key(fin, "TargetRecvDataSegmentLength"), "8192");
	{
		const char *m = sent_key(fin, "MaxRecvDataSegmentLength");

		cr_assert(!m || atoi(m) <= 8192,
			  "our MaxRecvDataSegmentLength (%s) never exceeds a receive buffer", m);
	}
	cr_assert_str_eq(sent_key(fin, "HeaderDigest"), "None");
	{
		struct iser_conn *ic = f.priv;

		cr_assert_eq(ic->state, ISER_CONN_FFP);
		cr_assert_eq(ic->recv_dsl, 8192);
		cr_assert_eq(ic->conn->state, CONN_FFP);
		cr_assert_str_eq(ic->conn->xp->name, "iser");
	}
}

Test(iser_iscsi, digests_are_never_negotiated_over_iser, .fini = stop)
{
	start("RDMAExtensions Yes\n  HeaderDigest CRC32C\n  DataDigest CRC32C");
	iser_connect();
	login_pdu(0, 1,
		  "InitiatorName=" IH_INITIATOR "|TargetName=" IH_TARGET
		  "|SessionType=Normal|AuthMethod=None");
	login_pdu(1, 3, "HeaderDigest=CRC32C,None|DataDigest=CRC32C,None|RDMAExtensions=Yes");
	cr_assert_str_eq(sent_key(1, "HeaderDigest"), "None");
	cr_assert_str_eq(sent_key(1, "DataDigest"), "None");
}

Test(iser_iscsi, read_data_is_rdma_written_in_the_response_chain, .fini = stop)
{
	struct iser_hdr h = {
	    .opcode = ISER_OP_ISCSI_CTRL, .rsv = true, .read_stag = 0x1234, .read_va = 0xabc0000};
	uint8_t cdb[16], data[65536];
	unsigned n0;
	const uint8_t *r;

	start(NULL);
	iser_connect();
	login();
	/* the first command after login gets the power-on UNIT ATTENTION: use TUR for it */
	{
		uint8_t tur[16] = {0};
		struct iser_hdr none = {.opcode = ISER_OP_ISCSI_CTRL};

		scsi_cmd(&none, false, false, 0, tur, NULL, 0, true);
		scsi_cmd(&none, false, false, 0, tur, NULL, 0, true);
	}
	n0 = f.nsent;
	rw10(cdb, false, 0, 128);
	scsi_cmd(&h, true, false, 65536, cdb, NULL, 0, true);
	cr_assert_eq(f.nwrite, 1, "one RDMA WRITE");
	cr_assert_eq(f.rem.rkey, 0x1234);
	cr_assert_eq(f.rem.addr, 0xabc0000);
	cr_assert_eq(f.bytes, 65536);
	cr_assert_eq(f.nsent, n0 + 1, "and only the SCSI Response as a SEND");
	r = sent_bhs(n0);
	cr_assert_eq(bhs_opcode(r), ISCSI_OP_SCSI_RSP, "no Data-In PDU over iSER");
	cr_assert_eq(r[3], 0, "status GOOD");
	cr_assert_eq(bhs_itt(r), itt);
	cr_assert_eq(iscsi_get32(r + 36), 0, "ExpDataSN: no Data-In PDUs were sent");
	from_loc(data); /* a fresh ramdisk reads zeros */
	for (int i = 0; i < 65536; i++)
		cr_assert_eq(data[i], 0);
	/* the task (and its buffer) lives until the chain completes */
	cr_assert_eq(((struct iser_conn *)f.priv)->conn->ntasks, 1);
	complete(f.op, true);
	cr_assert_eq(((struct iser_conn *)f.priv)->conn->ntasks, 0);
}

static uint8_t pattern(uint32_t i)
{
	return (uint8_t)(i * 7 + (i >> 9));
}

Test(iser_iscsi, write_rest_is_rdma_read_and_lands_on_the_lu, .fini = stop)
{
	uint8_t cdb[16], buf[131072], back[131072];
	struct iser_hdr w = {.opcode = ISER_OP_ISCSI_CTRL,
			     .wsv = true,
			     .write_stag = 0x77,
			     .write_va = 0x100000 + 4096};
	struct iser_hdr r = {
	    .opcode = ISER_OP_ISCSI_CTRL, .rsv = true, .read_stag = 0x88, .read_va = 0x900000};
	struct iser_hdr none = {.opcode = ISER_OP_ISCSI_CTRL};
	uint8_t tur[16] = {0};
	unsigned n0;

	for (uint32_t i = 0; i < sizeof(buf); i++)
		buf[i] = pattern(i);
	start(NULL);
	iser_connect();
	login();
	scsi_cmd(&none, false, false, 0, tur, NULL, 0, true); /* the UNIT ATTENTION */
	n0 = f.nsent;
	/* 128 KiB: 4 KiB immediate, the rest by RDMA READ from Write STag/VA (already past the
	 * immediate part, as ib_iser advertises it) */
	rw10(cdb, true, 8, 256);
	scsi_cmd(&w, false, true, sizeof(buf), cdb, buf, 4096, true);
	cr_assert_eq(f.nread, 1, "the rest is one RDMA READ");
	cr_assert_eq(f.nsent, n0, "no R2T, no response yet");
	cr_assert_eq(f.rem.rkey, 0x77);
	cr_assert_eq(f.rem.addr, 0x100000 + 4096);
	cr_assert_eq(f.bytes, sizeof(buf) - 4096);
	to_loc(buf + 4096);
	complete(f.op, true);
	cr_assert_eq(f.nsent, n0 + 1);
	cr_assert_eq(bhs_opcode(sent_bhs(n0)), ISCSI_OP_SCSI_RSP);
	cr_assert_eq(sent_bhs(n0)[3], 0, "status GOOD");
	/* read it back through the same connection */
	rw10(cdb, false, 8, 256);
	scsi_cmd(&r, true, false, sizeof(back), cdb, NULL, 0, true);
	cr_assert_eq(f.nwrite, 1);
	from_loc(back);
	cr_assert_eq(memcmp(back, buf, sizeof(buf)), 0, "the LU holds what was written");
	complete(f.op, true);
}

Test(iser_iscsi, a_failed_rdma_read_fails_the_command_not_the_connection, .fini = stop)
{
	uint8_t cdb[16], buf[8192] = {0};
	struct iser_hdr w = {.opcode = ISER_OP_ISCSI_CTRL, .wsv = true, .write_stag = 5};
	struct iser_hdr none = {.opcode = ISER_OP_ISCSI_CTRL};
	uint8_t tur[16] = {0};
	unsigned n0;

	start(NULL);
	iser_connect();
	login();
	scsi_cmd(&none, false, false, 0, tur, NULL, 0, true);
	n0 = f.nsent;
	rw10(cdb, true, 0, 16);
	scsi_cmd(&w, false, true, sizeof(buf), cdb, NULL, 0, true);
	cr_assert_eq(f.nread, 1);
	complete(f.op, false);
	cr_assert_eq(f.nsent, n0 + 1);
	cr_assert_eq(sent_bhs(n0)[3], 2, "CHECK CONDITION");
	cr_assert_not(f.disconnected);
}

Test(iser_iscsi, nop_out_is_answered, .fini = stop)
{
	uint8_t b[48] = {0};
	unsigned n0;

	start(NULL);
	iser_connect();
	login();
	n0 = f.nsent;
	b[0] = 0x40 | ISCSI_OP_NOP_OUT;
	b[1] = 0x80;
	iscsi_put24(b + 5, 4);
	iscsi_put32(b + 16, 0x4242);
	iscsi_put32(b + 20, ISCSI_RSVD_TAG);
	iscsi_put32(b + 24, cmd_sn);
	deliver(NULL, b, "ping", 4);
	cr_assert_eq(bhs_opcode(sent_bhs(n0)), ISCSI_OP_NOP_IN);
	cr_assert_eq(bhs_itt(sent_bhs(n0)), 0x4242);
	cr_assert_eq(memcmp(f.sent[n0] + ISER_HEADERS_LEN, "ping", 4), 0);
}

Test(iser_iscsi, a_read_without_its_stag_drops_the_connection, .fini = stop)
{
	uint8_t cdb[16];
	struct iser_hdr none = {.opcode = ISER_OP_ISCSI_CTRL};

	start(NULL);
	iser_connect();
	login();
	rw10(cdb, false, 0, 8);
	scsi_cmd(&none, true, false, 4096, cdb, NULL, 0, true);
	cr_assert(f.disconnected, "no Read STag for a read: protocol error");
	cr_assert_eq(f.nwrite, 0);
	cr_assert(f.released, "nothing in flight: released at once");
}

Test(iser_iscsi, logout_closes_after_its_send_completed, .fini = stop)
{
	uint8_t b[48] = {0};
	unsigned n0;

	start(NULL);
	iser_connect();
	login();
	n0 = f.nsent;
	b[0] = 0x40 | ISCSI_OP_LOGOUT_REQ;
	b[1] = 0x80;
	iscsi_put32(b + 16, 0x99);
	iscsi_put32(b + 24, cmd_sn);
	deliver(NULL, b, NULL, 0);
	cr_assert_eq(bhs_opcode(sent_bhs(n0)), ISCSI_OP_LOGOUT_RSP);
	cr_assert_not_null(f.sent_op[n0], "the Logout Response is tracked to completion");
	cr_assert_not(f.disconnected, "not before the response left");
	complete(f.sent_op[n0], true);
	cr_assert(f.disconnected);
	cr_assert(f.released);
	cr_assert_eq(atomic_load(&iscsit_global->nconns), 0);
}

Test(iser_iscsi, release_waits_for_rdma_work_in_flight, .fini = stop)
{
	uint8_t cdb[16];
	struct iser_hdr r = {.opcode = ISER_OP_ISCSI_CTRL, .rsv = true, .read_stag = 9};
	struct iser_hdr none = {.opcode = ISER_OP_ISCSI_CTRL};
	uint8_t tur[16] = {0};
	struct rdma_op *op;

	start(NULL);
	iser_connect();
	login();
	scsi_cmd(&none, false, false, 0, tur, NULL, 0, true);
	rw10(cdb, false, 0, 8);
	scsi_cmd(&r, true, false, 4096, cdb, NULL, 0, true);
	cr_assert_eq(f.nwrite, 1);
	op = f.op;
	/* the peer goes away with the RDMA WRITE in flight */
	iser_fake_down();
	cr_assert_not(f.released, "the WRITE still writes from the task's buffer");
	cr_assert_eq(atomic_load(&iscsit_global->nconns), 1);
	complete(op, false); /* flushed */
	cr_assert(f.released);
	cr_assert_eq(atomic_load(&iscsit_global->nconns), 0);
}

Test(iser_iscsi, rdma_extensions_no_keeps_the_target_off_iser, .fini = stop)
{
	const uint8_t *r;

	/* another target keeps the iSER portal open; this one says No */
	start("RDMAExtensions No\n }\n TARGET " IH_TARGET "-2 {\n  enabled 1\n  LUN 0 rd1");
	iser_connect();
	login_pdu(0, 1,
		  "InitiatorName=" IH_INITIATOR "|TargetName=" IH_TARGET
		  "|SessionType=Normal|AuthMethod=None");
	r = sent_bhs(0);
	cr_assert_eq(bhs_opcode(r), ISCSI_OP_LOGIN_RSP);
	cr_assert_eq(iscsi_get16(r + 36), ISCSI_LOGIN_NOT_FOUND, "status %04x",
		     iscsi_get16(r + 36));
}

Test(iser_iscsi, rdma_extensions_refused_by_the_initiator_fails_the_login, .fini = stop)
{
	start(NULL);
	iser_connect();
	login_pdu(0, 1,
		  "InitiatorName=" IH_INITIATOR "|TargetName=" IH_TARGET
		  "|SessionType=Normal|AuthMethod=None");
	login_pdu(1, 3, OP_KEYS "RDMAExtensions=No");
	cr_assert_eq(bhs_opcode(sent_bhs(1)), ISCSI_OP_LOGIN_RSP);
	cr_assert_neq(iscsi_get16(sent_bhs(1) + 36), 0, "no TCP mode on an RDMA connection");
}

Test(iser_iscsi, discovery_over_iser_lists_the_iser_portals, .fini = stop)
{
	uint8_t b[48] = {0};
	char text[64];
	size_t tl = ih_keys(text, "SendTargets=All");
	const char *addr;
	char tcp[32];

	start(NULL);
	iser_connect();
	login_pdu(0, 1, "InitiatorName=" IH_INITIATOR "|SessionType=Discovery|AuthMethod=None");
	login_pdu(1, 3, "HeaderDigest=None|DataDigest=None|MaxRecvDataSegmentLength=8192");
	cr_assert_eq(iscsi_get16(sent_bhs(1) + 36), 0);
	b[0] = 0x40 | ISCSI_OP_TEXT_REQ;
	b[1] = 0x80;
	iscsi_put24(b + 5, (uint32_t)tl);
	iscsi_put32(b + 16, 0x55);
	iscsi_put32(b + 20, ISCSI_RSVD_TAG);
	iscsi_put32(b + 24, cmd_sn);
	deliver(NULL, b, text, (uint32_t)tl);
	cr_assert_eq(bhs_opcode(sent_bhs(2)), ISCSI_OP_TEXT_RSP);
	cr_assert_str_eq(sent_key(2, "TargetName"), IH_TARGET);
	addr = sent_key(2, "TargetAddress");
	cr_assert_str_eq(addr, "127.0.0.1:3260,1", "the iSER portal, got %s", addr);
	snprintf(tcp, sizeof(tcp), "127.0.0.1:%u", T.port);
	cr_assert_null(strstr((const char *)f.sent[2] + ISER_HEADERS_LEN, tcp),
		       "not the TCP portal");
}

Test(iser_iscsi, initial_r2t_is_yes_so_no_unsolicited_data_out, .fini = stop)
{
	uint8_t cdb[16], buf[65536];
	struct iser_hdr w = {.opcode = ISER_OP_ISCSI_CTRL, .wsv = true, .write_stag = 0x31};
	struct iser_hdr none = {.opcode = ISER_OP_ISCSI_CTRL};
	uint8_t tur[16] = {0};
	unsigned fin, n0;

	memset(buf, 0x5a, sizeof(buf));
	start(NULL); /* the target allows InitialR2T=No (SCST's default), the initiator asks No */
	iser_connect();
	fin = login();
	cr_assert_str_eq(sent_key(fin, "InitialR2T"), "Yes",
			 "over iSER the rest of a write is always RDMA-read");
	scsi_cmd(&none, false, false, 0, tur, NULL, 0, true);
	n0 = f.nsent;
	/* a write announcing unsolicited Data-Out (F clear) is a protocol error: Rejected */
	rw10(cdb, true, 64, 128);
	scsi_cmd(&w, false, true, sizeof(buf), cdb, buf, 8192, false);
	cr_assert_eq(f.nread, 0);
	cr_assert_eq(bhs_opcode(sent_bhs(n0)), ISCSI_OP_REJECT);
}

Test(iser_iscsi, pdus_wait_while_input_is_paused, .fini = stop)
{
	uint8_t b[48] = {0};
	unsigned n0;

	start(NULL);
	iser_connect();
	login();
	n0 = f.nsent;
	b[0] = 0x40 | ISCSI_OP_LOGOUT_REQ;
	b[1] = 0x80;
	iscsi_put32(b + 16, 0x99);
	iscsi_put32(b + 24, cmd_sn);
	deliver(NULL, b, NULL, 0);
	/* the logout paused input: a NOP-Out after it is held, not answered */
	memset(b, 0, sizeof(b));
	b[0] = 0x40 | ISCSI_OP_NOP_OUT;
	b[1] = 0x80;
	iscsi_put32(b + 16, 0x4343);
	iscsi_put32(b + 20, ISCSI_RSVD_TAG);
	deliver(NULL, b, NULL, 0);
	cr_assert_eq(f.nsent, n0 + 1, "only the Logout Response");
	cr_assert_neq(f.rbusy, 0, "its receive buffer is held");
	complete(f.sent_op[n0], true);
	cr_assert(f.released);
	cr_assert_eq(f.rbusy, 0, "given back when the connection went");
}

Test(iser_iscsi, the_admin_listing_shows_the_iser_session, .fini = stop)
{
	const struct tgt_driver *drv;
	const struct tgt_jv *conn, *x;
	struct tgt_jv *v;
	struct ut_json j;

	start(NULL);
	iser_connect();
	login();
	drv = tgt_config_driver(T.cfg, "iscsi");
	ut_json_init(&j);
	ut_json_arr(&j, NULL);
	iscsi_transport.show_sessions(drv, &j, NULL);
	ut_json_end_arr(&j);
	v = tgt_jread(j.buf, NULL);
	cr_assert_not_null(v, "not JSON: %s", j.buf);
	cr_assert_eq(v->n, 1, "%s", j.buf);
	conn = &tgt_jv_get(&v->kids[0], "connections")->kids[0];
	cr_assert_str_eq(tgt_jv_str(conn, "transport", ""), "iser");
	x = tgt_jv_get(conn, "iser");
	cr_assert_not_null(x, "%s", j.buf);
	cr_assert_eq(tgt_jv_u64(x, "TargetRecvDataSegmentLength", 0), 8192);
	cr_assert_eq(tgt_jv_u64(x, "InitiatorRecvDataSegmentLength", 0), 8192);
	cr_assert(tgt_jv_bool(x, "RDMAExtensions", false));
	tgt_jv_free(v);
	ut_json_free(&j);
}
