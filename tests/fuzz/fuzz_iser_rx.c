/* libFuzzer: the iSER receive path, from a received SEND to the SCSI core and back, over the
 * real iSCSI target (ramdisk LU) and a fake verbs layer (tests/unit/iser_fake.h).  Each input is
 * one connection: a sequence of records, each
 *   u16 length (big-endian), u8 action, then `length` bytes of SEND (iSER header, BHS, ...)
 * where action bit 0 = complete the oldest RDMA operation the target posted after this SEND,
 * bit 1 = complete it as failed.  Malformed iSER headers, SENDs before login, PDUs over the
 * negotiated length, bad STags, Data-Out for nothing: each must end in a refusal or a dropped
 * connection, never a crash, a leak or a connection left behind.  At the end the peer goes
 * away and everything still posted completes flushed; the connection must then be released. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/tgt_config.h"
#include "tests/unit/iser_fake.h"

extern const struct tgt_transport iscsi_transport;

static const char CONF[] = "HANDLER ramdisk {\n DEVICE rd0 {\n  size_mb 8\n }\n}\n"
			   "TARGET_DRIVER iscsi {\n listen 127.0.0.1:0\n worker_threads 1\n"
			   " listen_iser 127.0.0.1:3260\n"
			   " TARGET iqn.2026-12.org.utgt:fuzz {\n  enabled 1\n  LUN 0 rd0\n }\n}\n";

static void quiet(struct diag *d, bool error, int line, const char *msg)
{
	(void)d, (void)error, (void)line, (void)msg;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct diag d = {.file = "fuzz", .emit = quiet};
	struct tgt_config *cfg;
	char err[256];

	(void)argc, (void)argv;
	cfg = tgt_config_parse(CONF, sizeof(CONF) - 1, "fuzz.conf", &d);
	if (!cfg || tgt_config_open_devices(cfg, &d) ||
	    iscsi_transport.start(cfg, tgt_config_driver(cfg, "iscsi"), err, sizeof(err))) {
		fprintf(stderr, "fuzz_iser_rx: cannot start the target: %s\n", err);
		abort();
	}
	iser_fake_begin();
	return 0;
}

static void complete_oldest(bool ok)
{
	if (f.npending)
		iser_fake_complete(f.pending[0], ok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdma_pool *pool = f.pool;
	size_t pos = 0;

	iser_fake_reset(&iser_iscsi_upper, iscsit_global, pool); /* a fresh connection */
	iser_fake_connect();
	if (!f.accepted)
		abort();
	while (pos + 3 <= size && !f.disconnected && f.nsent < NSEND - 8) {
		uint32_t len = (uint32_t)data[pos] << 8 | data[pos + 1];
		uint8_t action = data[pos + 2];

		pos += 3;
		if (len > size - pos)
			len = (uint32_t)(size - pos);
		if (len > sizeof(f.rdata[0]))
			len = sizeof(f.rdata[0]);
		if (!iser_fake_deliver_raw(data + pos, len))
			break; /* every receive buffer held: the peer would have to wait */
		pos += len;
		if (action & 1)
			complete_oldest(!(action & 2));
	}
	/* the peer goes away; what was posted completes flushed, as the verbs layer does */
	if (!f.disconnected)
		iser_fake_down();
	while (f.npending)
		complete_oldest(false);
	if (!f.released || atomic_load(&iscsit_global->nconns) != 0) {
		fprintf(stderr, "fuzz_iser_rx: connection left behind (released %d, conns %u)\n",
			f.released, atomic_load(&iscsit_global->nconns));
		abort();
	}
	if (rdma_pool_free_bytes(f.pool) != rdma_pool_capacity(f.pool)) {
		fprintf(stderr, "fuzz_iser_rx: task buffers not returned to the pool\n");
		abort();
	}
	return 0;
}
