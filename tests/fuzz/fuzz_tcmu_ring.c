/* libFuzzer: the TCMU command ring parser (transports/tcmu/tcmu_ring.c) on a ring whose
 * entries are arbitrary bytes.  The kernel is the only writer of that ring, but a kernel bug
 * or a stray writer of /dev/uioN must cost a refused command or a stopped device, never a
 * read or write outside the mapping.
 *
 * Input: byte 0 = mailbox flags (bit 0 CAP_OOOC, bit 1 CAP_READ_LEN) and the completion order
 * (bit 2: newest first); bytes 1-2 = cmd_head, 3-4 = cmd_tail (where a restarted daemon
 * starts); the rest fills the command ring.  Every command
 * the parser hands out must have its CDB and iovecs inside the mapping's data area, and can be
 * completed exactly once (unless the ring queued its cmd_id twice); cmd_tail never leaves the
 * ring. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transports/tcmu/tcmu_ring.h"
#include "transports/tcmu/tcmu_uapi.h"

#define CMDR_OFF  128u /* sizeof(struct tcmu_mailbox) */
#define CMDR_SIZE 2048u
#define DATA_SIZE 8192u
#define MAX_CMDS  64u
#define MAX_IOV	  4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct taken {
	struct tcmu_req req;
	struct iovec *iov;
};

static void check_req(const struct tcmu_req *q, const uint8_t *mem)
{
	const uint8_t *lo = mem + CMDR_OFF + CMDR_SIZE,
		      *hi = mem + CMDR_OFF + CMDR_SIZE + DATA_SIZE;
	uint64_t sum = 0;

	if (q->err != TCMU_REQ_OK)
		return;
	if (q->cdb_len > sizeof(q->cdb) || q->iovcnt > q->iov_cap)
		abort();
	for (uint32_t i = 0; i < q->iovcnt; i++) {
		const uint8_t *b = q->iov[i].iov_base;

		if (q->iov[i].iov_len && (b < lo || b > hi || q->iov[i].iov_len > (size_t)(hi - b)))
			abort();
		sum += q->iov[i].iov_len;
	}
	if (sum != q->len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct tcmu_rsp good = {.status = 0, .read_len_valid = true, .read_len = 0};
	struct taken t[MAX_CMDS];
	struct tcmu_mailbox *mb;
	struct tcmu_ring r;
	uint8_t *mem;
	uint32_t n = 0, head;
	char err[128];
	bool newest_first;

	if (size < 5)
		return 0;
	mem = calloc(1, CMDR_OFF + CMDR_SIZE + DATA_SIZE); /* exact: ASan sees any stray access */
	mb = (struct tcmu_mailbox *)(void *)mem;
	mb->version = TCMU_MAILBOX_VERSION;
	mb->flags = (uint16_t)((data[0] & 1 ? TCMU_MAILBOX_FLAG_CAP_OOOC : 0) |
			       (data[0] & 2 ? TCMU_MAILBOX_FLAG_CAP_READ_LEN : 0));
	newest_first = data[0] & 4;
	mb->cmdr_off = CMDR_OFF;
	mb->cmdr_size = CMDR_SIZE;
	head = (uint32_t)(data[1] | data[2] << 8);
	mb->cmd_head = head % CMDR_SIZE & ~7u; /* the kernel's entries are 8-byte aligned */
	mb->cmd_tail = (uint32_t)(data[3] | data[4] << 8) % CMDR_SIZE & ~7u;
	memcpy(mem + CMDR_OFF, data + 5, size - 5 < CMDR_SIZE ? size - 5 : CMDR_SIZE);
	if (tcmu_ring_init(&r, mem, CMDR_OFF + CMDR_SIZE + DATA_SIZE, "fuzz", err, sizeof(err))) {
		free(mem);
		return 0;
	}
	for (unsigned steps = 0; steps < 4 * MAX_CMDS && n < MAX_CMDS; steps++) {
		struct taken *k = &t[n];
		enum tcmu_next rc;

		memset(&k->req, 0, sizeof(k->req));
		k->req.iov_cap = 2;
		k->iov = calloc(k->req.iov_cap, sizeof(*k->iov));
		k->req.iov = k->iov;
		rc = tcmu_ring_next(&r, &k->req);
		if (rc == TCMU_NEXT_IOV_ROOM) {
			if (k->req.iovcnt <= k->req.iov_cap || k->req.iovcnt > MAX_IOV) {
				free(k->iov);
				break; /* an entry holds at most CMDR_SIZE / 16 iovecs */
			}
			free(k->iov);
			k->req.iov_cap = k->req.iovcnt;
			k->iov = calloc(k->req.iov_cap, sizeof(*k->iov));
			k->req.iov = k->iov;
			rc = tcmu_ring_next(&r, &k->req);
		}
		if (rc != TCMU_NEXT_CMD) {
			free(k->iov);
			if (rc == TCMU_NEXT_TMR)
				continue;
			break; /* EMPTY, BROKEN, or room asked twice */
		}
		check_req(&k->req, mem);
		n++;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct taken *k = &t[newest_first ? n - 1 - i : i];
		bool dup = false;
		int first;

		for (uint32_t j = 0; j < n; j++) /* a cmd_id queued twice is logged, not refused */
			dup |= j != (uint32_t)(k - t) && t[j].req.cmd_id == k->req.cmd_id;
		first = tcmu_ring_complete(&r, &k->req, &good);
		if (first < 0 && !dup)
			abort(); /* taken once, so its first completion must be accepted */
		if (first >= 0 && tcmu_ring_complete(&r, &k->req, &good) >= 0)
			abort(); /* and a second one refused */
		if (mb->cmd_tail >= CMDR_SIZE)
			abort();
	}
	for (uint32_t i = 0; i < n; i++)
		free(t[i].iov);
	tcmu_ring_fini(&r);
	free(mem);
	return 0;
}
