/* A fake target_core_user kernel side for the TCMU unit tests: a mailbox, a command ring and
 * a data area in ordinary memory, filled the way drivers/target/target_core_user.c fills them
 * (entries never wrap: a PAD entry covers the end of the ring; the CDB sits after the
 * iovecs; iov_base is an offset into the mapping), and read back the way the kernel reaps
 * completions (from its last cleaned position up to cmd_tail, PAD/TMR skipped). */
#ifndef UTGT_TEST_TCMU_FAKE_H
#define UTGT_TEST_TCMU_FAKE_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transports/tcmu/tcmu_uapi.h"

#define FK_CMDR_OFF 128u /* sizeof(struct tcmu_mailbox) */

struct fk {
	uint8_t *mem;
	size_t size;
	uint32_t cmdr_size;
	uint32_t head, cleaned;
	uint64_t data_off, data_next;
	uint16_t next_id;
};

struct fk_done {
	uint16_t cmd_id;
	uint8_t status, uflags;
	uint32_t read_len;
	uint8_t sense[TCMU_SENSE_BUFFERSIZE];
};

static inline struct tcmu_mailbox *fk_mb(struct fk *k)
{
	return (struct tcmu_mailbox *)(void *)k->mem;
}

static inline void fk_init(struct fk *k, uint32_t cmdr_size, uint32_t data_size, uint16_t flags)
{
	memset(k, 0, sizeof(*k));
	k->cmdr_size = cmdr_size;
	k->data_off = FK_CMDR_OFF + cmdr_size;
	k->size = k->data_off + data_size;
	k->mem = calloc(1, k->size);
	cr_assert_not_null(k->mem);
	fk_mb(k)->version = TCMU_MAILBOX_VERSION;
	fk_mb(k)->flags = flags;
	fk_mb(k)->cmdr_off = FK_CMDR_OFF;
	fk_mb(k)->cmdr_size = cmdr_size;
	k->data_next = k->data_off;
	k->next_id = 1;
}

static inline void fk_fini(struct fk *k)
{
	free(k->mem);
}

static inline uint32_t fk_tail(struct fk *k)
{
	uint32_t t;
	memcpy(&t, k->mem + offsetof(struct tcmu_mailbox, cmd_tail), 4);
	return t;
}

static inline void fk_set_head(struct fk *k, uint32_t head)
{
	k->head = head;
	__atomic_store_n((uint32_t *)(void *)(k->mem + offsetof(struct tcmu_mailbox, cmd_head)),
			 head, __ATOMIC_RELEASE);
}

static inline uint8_t *fk_ent(struct fk *k, uint32_t off)
{
	return k->mem + FK_CMDR_OFF + off;
}

/* n bytes of data area; returns the offset (what goes into iov_base). */
static inline uint64_t fk_data(struct fk *k, uint32_t n)
{
	uint64_t off;
	if (k->data_next + n > k->size)
		k->data_next = k->data_off;
	off = k->data_next;
	k->data_next += (n + 7) & ~7u;
	return off;
}

static inline void fk_hdr(struct fk *k, uint32_t off, uint32_t len, enum tcmu_opcode op,
			  uint16_t id)
{
	struct tcmu_cmd_entry_hdr h = {.len_op = len | op, .cmd_id = id};
	memcpy(fk_ent(k, off), &h, sizeof(h));
}

/* Bytes a command entry with niov iovecs and a cdb_len CDB takes. */
static inline uint32_t fk_cmd_len(uint32_t niov, uint32_t cdb_len)
{
	uint32_t base =
	    (uint32_t)(offsetof(struct tcmu_cmd_entry, req.iov) + niov * sizeof(struct iovec));
	if (base < sizeof(struct tcmu_cmd_entry))
		base = sizeof(struct tcmu_cmd_entry);
	base = (base + 7) & ~7u;
	return base + ((cdb_len + 7) & ~7u);
}

/* A PAD up to the end of the ring when len does not fit before it. */
static inline void fk_make_room(struct fk *k, uint32_t len)
{
	if (k->head + len > k->cmdr_size) {
		fk_hdr(k, k->head, k->cmdr_size - k->head, TCMU_OP_PAD, 0);
		fk_set_head(k, 0);
	}
}

/* Queue a command whose iovecs are (offset, length) pairs; returns its cmd_id. */
static inline uint16_t fk_cmd(struct fk *k, const uint8_t *cdb, uint32_t cdb_len,
			      const uint64_t (*iov)[2], uint32_t niov)
{
	uint32_t len = fk_cmd_len(niov, cdb_len), off;
	uint32_t base = len - ((cdb_len + 7) & ~7u);
	struct tcmu_cmd_entry e;
	uint16_t id = k->next_id++;

	fk_make_room(k, len);
	off = k->head;
	memset(fk_ent(k, off), 0, len);
	memset(&e, 0, sizeof(e));
	e.hdr.len_op = len | TCMU_OP_CMD;
	e.hdr.cmd_id = id;
	e.req.iov_cnt = niov;
	e.req.cdb_off = FK_CMDR_OFF + off + base;
	memcpy(fk_ent(k, off), &e, sizeof(e));
	for (uint32_t i = 0; i < niov; i++) {
		struct iovec v = {.iov_base = (void *)(uintptr_t)iov[i][0], .iov_len = iov[i][1]};
		memcpy(fk_ent(k, off) + offsetof(struct tcmu_cmd_entry, req.iov) + i * sizeof(v),
		       &v, sizeof(v));
	}
	memcpy(fk_ent(k, off) + base, cdb, cdb_len);
	fk_set_head(k, (off + len) % k->cmdr_size);
	return id;
}

/* Queue a TMR entry naming n cmd_ids, sized as queue_tmr_ring() sizes it. */
static inline void fk_tmr(struct fk *k, uint8_t type, const uint16_t *ids, uint32_t n)
{
	uint32_t len = (uint32_t)(sizeof(struct tcmu_tmr_entry) + n * sizeof(uint16_t) + 7) & ~7u;
	struct tcmu_tmr_entry t;

	fk_make_room(k, len);
	memset(fk_ent(k, k->head), 0, len);
	memset(&t, 0, sizeof(t));
	t.hdr.len_op = len | TCMU_OP_TMR;
	t.tmr_type = type;
	t.cmd_cnt = n;
	memcpy(fk_ent(k, k->head), &t, sizeof(t));
	memcpy(fk_ent(k, k->head) + sizeof(t), ids, n * sizeof(uint16_t));
	fk_set_head(k, (k->head + len) % k->cmdr_size);
}

/* The kernel's reap: completions between its last cleaned position and cmd_tail. */
static inline unsigned fk_reap(struct fk *k, struct fk_done *out, unsigned max)
{
	unsigned n = 0;
	uint32_t tail = fk_tail(k);

	while (k->cleaned != tail) {
		struct tcmu_cmd_entry e;
		uint32_t len;
		memcpy(&e, fk_ent(k, k->cleaned), sizeof(e.hdr));
		len = tcmu_hdr_get_len(e.hdr.len_op);
		cr_assert_gt(len, 0, "zero-length entry at %u while reaping", k->cleaned);
		if (tcmu_hdr_get_op(e.hdr.len_op) == TCMU_OP_CMD) {
			memcpy(&e, fk_ent(k, k->cleaned), sizeof(e));
			cr_assert_lt(n, max);
			out[n].cmd_id = e.hdr.cmd_id;
			out[n].status = e.rsp.scsi_status;
			out[n].uflags = e.hdr.uflags;
			out[n].read_len = e.rsp.read_len;
			memcpy(out[n].sense, e.rsp.sense_buffer, sizeof(out[n].sense));
			n++;
		}
		k->cleaned = (k->cleaned + len) % k->cmdr_size;
	}
	return n;
}

#endif
