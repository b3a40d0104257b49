/* The TCMU ring on memory (tcmu_ring.c), against the fake kernel of test_tcmu_fake.h: entry
 * parsing, PAD and wrap-around, in-order and out-of-order completion, READ_LEN, and every
 * kind of malformed entry (clean refusal, nothing read or written outside the mapping). */
#include <criterion/criterion.h>

#include "tests/unit/test_tcmu_fake.h"
#include "transports/tcmu/tcmu_ring.h"

static const uint8_t READ10[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 8, 0};
static const uint8_t TUR[6] = {0};

struct rq {
	struct tcmu_req req;
	struct iovec iov[8];
};

static void rq_init(struct rq *q)
{
	memset(q, 0, sizeof(*q));
	q->req.iov = q->iov;
	q->req.iov_cap = 8;
}

static void ring_up(struct fk *k, struct tcmu_ring *r)
{
	char err[128];
	cr_assert_eq(tcmu_ring_init(r, k->mem, k->size, "t", err, sizeof(err)), 0, "%s", err);
}

static const struct tcmu_rsp GOOD = {.status = 0};

Test(tcmu_ring, init_checks_the_mailbox)
{
	struct fk k;
	struct tcmu_ring r;
	char err[128];

	fk_init(&k, 4096, 4096, 0);
	fk_mb(&k)->version = 0;
	cr_assert_eq(tcmu_ring_init(&r, k.mem, k.size, "t", err, sizeof(err)), -1);
	cr_assert(strstr(err, "version"), "%s", err);
	fk_mb(&k)->version = 2;
	fk_mb(&k)->cmdr_size = (uint32_t)k.size; /* ring past the mapping */
	cr_assert_eq(tcmu_ring_init(&r, k.mem, k.size, "t", err, sizeof(err)), -1);
	cr_assert(strstr(err, "does not fit"), "%s", err);
	fk_mb(&k)->cmdr_size = 4096;
	fk_mb(&k)->cmdr_off = 8; /* inside the mailbox */
	cr_assert_eq(tcmu_ring_init(&r, k.mem, k.size, "t", err, sizeof(err)), -1);
	fk_mb(&k)->cmdr_off = FK_CMDR_OFF;
	cr_assert_eq(tcmu_ring_init(&r, k.mem, 64, "t", err, sizeof(err)), -1);
	cr_assert_eq(tcmu_ring_init(&r, k.mem, k.size, "t", err, sizeof(err)), 0);
	cr_assert_not(r.oooc);
	tcmu_ring_fini(&r);
	fk_fini(&k);
}

Test(tcmu_ring, parses_cdb_and_iovecs_into_the_mapping)
{
	struct fk k;
	struct tcmu_ring r;
	struct rq q;
	uint64_t iov[2][2];
	uint16_t id;

	fk_init(&k, 4096, 65536, TCMU_MAILBOX_FLAG_CAP_OOOC);
	ring_up(&k, &r);
	rq_init(&q);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_EMPTY);
	iov[0][0] = fk_data(&k, 1024), iov[0][1] = 1024;
	iov[1][0] = fk_data(&k, 3072), iov[1][1] = 3072;
	id = fk_cmd(&k, READ10, 10, iov, 2);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_CMD);
	cr_assert_eq(q.req.err, TCMU_REQ_OK);
	cr_assert_eq(q.req.cmd_id, id);
	cr_assert_eq(q.req.cdb_len, 10);
	cr_assert_arr_eq(q.req.cdb, READ10, 10);
	cr_assert_eq(q.req.iovcnt, 2);
	cr_assert_eq(q.req.len, 4096);
	cr_assert_eq((uint8_t *)q.iov[0].iov_base, k.mem + iov[0][0]);
	cr_assert_eq((uint8_t *)q.iov[1].iov_base, k.mem + iov[1][0]);
	cr_assert_eq(q.iov[1].iov_len, 3072);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_EMPTY);
	cr_assert_eq(r.outstanding, 1);
	tcmu_ring_fini(&r);
	fk_fini(&k);
}

Test(tcmu_ring, asks_for_more_iovec_room_without_consuming)
{
	struct fk k;
	struct tcmu_ring r;
	struct rq q;
	uint64_t iov[12][2];
	struct iovec big[12];

	fk_init(&k, 4096, 65536, 0);
	ring_up(&k, &r);
	rq_init(&q);
	for (int i = 0; i < 12; i++)
		iov[i][0] = fk_data(&k, 512), iov[i][1] = 512;
	fk_cmd(&k, READ10, 10, iov, 12);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_IOV_ROOM);
	cr_assert_eq(q.req.iovcnt, 12);
	cr_assert_eq(r.fetch, 0);
	q.req.iov = big;
	q.req.iov_cap = 12;
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_CMD);
	cr_assert_eq(q.req.iovcnt, 12);
	cr_assert_eq(q.req.len, 12 * 512);
	tcmu_ring_fini(&r);
	fk_fini(&k);
}

/* Three commands complete 3, 1, 2: out of order when the kernel allows it. */
Test(tcmu_ring, out_of_order_completion_writes_at_the_tail)
{
	struct fk k;
	struct tcmu_ring r;
	struct rq q[3];
	struct fk_done d[4];
	uint16_t id[3];

	fk_init(&k, 4096, 4096, TCMU_MAILBOX_FLAG_CAP_OOOC);
	ring_up(&k, &r);
	for (int i = 0; i < 3; i++) {
		id[i] = fk_cmd(&k, TUR, 6, NULL, 0);
		rq_init(&q[i]);
		cr_assert_eq(tcmu_ring_next(&r, &q[i].req), TCMU_NEXT_CMD);
	}
	struct tcmu_rsp s3 = {
	    .status = 0x02, .sense = (const uint8_t *)"\x70\x00\x05", .sense_len = 3};
	struct tcmu_rsp s1 = {.status = 0x18};
	cr_assert_eq(tcmu_ring_complete(&r, &q[2].req, &s3), 1);
	cr_assert_eq(fk_reap(&k, d, 4), 1);
	cr_assert_eq(d[0].cmd_id, id[2]);
	cr_assert_eq(d[0].status, 0x02);
	cr_assert_eq(d[0].sense[2], 0x05);
	cr_assert_eq(tcmu_ring_complete(&r, &q[0].req, &s1), 1);
	cr_assert_eq(tcmu_ring_complete(&r, &q[1].req, &GOOD), 1);
	cr_assert_eq(fk_reap(&k, d, 4), 2);
	cr_assert_eq(d[0].cmd_id, id[0]);
	cr_assert_eq(d[0].status, 0x18);
	cr_assert_eq(d[1].cmd_id, id[1]);
	cr_assert_eq(d[1].status, 0);
	cr_assert_eq(fk_tail(&k), k.head);
	cr_assert_eq(tcmu_ring_complete(&r, &q[1].req, &GOOD), -1, "nothing outstanding");
	tcmu_ring_fini(&r);
	fk_fini(&k);
}

Test(tcmu_ring, in_order_completion_waits_for_the_oldest)
{
	struct fk k;
	struct tcmu_ring r;
	struct rq q[3];
	struct fk_done d[4];
	uint16_t id[3];

	fk_init(&k, 4096, 4096, 0); /* no CAP_OOOC */
	ring_up(&k, &r);
	for (int i = 0; i < 3; i++) {
		id[i] = fk_cmd(&k, TUR, 6, NULL, 0);
		rq_init(&q[i]);
		cr_assert_eq(tcmu_ring_next(&r, &q[i].req), TCMU_NEXT_CMD);
	}
	struct tcmu_rsp s3 = {
	    .status = 0x02, .sense = (const uint8_t *)"\x70\x00\x06", .sense_len = 3};
	cr_assert_eq(tcmu_ring_complete(&r, &q[2].req, &s3), 0, "tail must wait for cmd 1");
	cr_assert_eq(fk_tail(&k), 0);
	cr_assert_eq(tcmu_ring_complete(&r, &q[0].req, &GOOD), 1);
	cr_assert_eq(fk_reap(&k, d, 4), 1);
	cr_assert_eq(d[0].cmd_id, id[0]);
	cr_assert_eq(tcmu_ring_complete(&r, &q[1].req, &GOOD), 1);
	cr_assert_eq(fk_reap(&k, d, 4), 2);
	cr_assert_eq(d[0].cmd_id, id[1]);
	cr_assert_eq(d[1].cmd_id, id[2]);
	cr_assert_eq(d[1].status, 0x02);
	cr_assert_eq(d[1].sense[2], 0x06);
	cr_assert_eq(fk_tail(&k), k.head);
	tcmu_ring_fini(&r);
	fk_fini(&k);
}

/* Many laps of a small ring: PAD entries at the end, entries at offset 0 after them. */
Test(tcmu_ring, pad_and_wrap_around)
{
	struct fk k;
	struct tcmu_ring r;
	struct rq q;
	struct fk_done d[4];
	unsigned pads_seen = 0;

	fk_init(&k, 1000, 8192, TCMU_MAILBOX_FLAG_CAP_OOOC); /* 1000: not a multiple of an entry */
	ring_up(&k, &r);
	for (int i = 0; i < 200; i++) {
		uint64_t iov[1][2] = {{fk_data(&k, 512), 512}};
		uint32_t before = k.head;
		uint16_t id = fk_cmd(&k, READ10, 10, iov, 1);
		if (before + fk_cmd_len(1, 10) > k.cmdr_size)
			pads_seen++;
		rq_init(&q);
		cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_CMD, "lap %d", i);
		cr_assert_eq(q.req.cmd_id, id);
		cr_assert_eq(q.req.err, TCMU_REQ_OK, "lap %d", i);
		cr_assert_eq((uint8_t *)q.iov[0].iov_base, k.mem + iov[0][0]);
		cr_assert_eq(tcmu_ring_complete(&r, &q.req, &GOOD), 1);
		cr_assert_eq(fk_reap(&k, d, 4), 1);
		cr_assert_eq(d[0].cmd_id, id);
		cr_assert_eq(fk_tail(&k), k.head);
	}
	cr_assert_gt(pads_seen, 10);
	tcmu_ring_fini(&r);
	fk_fini(&k);
}

/* A PAD right before the last command: with nothing outstanding the tail still covers it. */
Test(tcmu_ring, skipped_entries_are_handed_back)
{
	struct fk k;
	struct tcmu_ring r;
	struct rq q;

	fk_init(&k, 1024, 4096, 0);
	ring_up(&k, &r);
	fk_hdr(&k, 0, 64, TCMU_OP_PAD, 0);
	fk_hdr(&k, 64, 64, TCMU_OP_TMR, 0);
	fk_set_head(&k, 128);
	rq_init(&q);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_TMR);
	cr_assert_eq(r.tmr.n, 0);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_EMPTY);
	cr_assert_eq(fk_tail(&k), 128);
	tcmu_ring_fini(&r);
	fk_fini(&k);
}

/* A TMR entry behind two commands: its list is copied out, it owes no completion, and the
 * tail moves over it once the commands before it are answered. */
Test(tcmu_ring, tmr_entry_lists_the_aborted_commands)
{
	struct fk k;
	struct tcmu_ring r;
	struct rq q1, q2, q3;
	struct fk_done d[4];
	uint16_t ids[2];

	fk_init(&k, 4096, 4096, TCMU_MAILBOX_FLAG_CAP_OOOC | TCMU_MAILBOX_FLAG_CAP_TMR);
	ring_up(&k, &r);
	rq_init(&q1), rq_init(&q2), rq_init(&q3);
	ids[0] = fk_cmd(&k, TUR, 6, NULL, 0);
	ids[1] = fk_cmd(&k, TUR, 6, NULL, 0);
	fk_tmr(&k, TCMU_TMR_LUN_RESET, ids, 2);
	cr_assert_eq(tcmu_ring_next(&r, &q1.req), TCMU_NEXT_CMD);
	cr_assert_eq(tcmu_ring_next(&r, &q2.req), TCMU_NEXT_CMD);
	cr_assert_eq(tcmu_ring_next(&r, &q3.req), TCMU_NEXT_TMR);
	cr_assert_eq(r.tmr.type, TCMU_TMR_LUN_RESET);
	cr_assert_eq(r.tmr.n, 2);
	cr_assert_eq(r.tmr.ids[0], ids[0]);
	cr_assert_eq(r.tmr.ids[1], ids[1]);
	cr_assert_str_eq(tcmu_tmr_name(r.tmr.type), "LOGICAL UNIT RESET");
	cr_assert_eq(tcmu_ring_next(&r, &q3.req), TCMU_NEXT_EMPTY);
	cr_assert_eq(tcmu_ring_complete(&r, &q2.req, &GOOD), 1);
	cr_assert_eq(tcmu_ring_complete(&r, &q1.req, &GOOD), 1);
	cr_assert_eq(tcmu_ring_next(&r, &q3.req), TCMU_NEXT_EMPTY);
	cr_assert_eq(fk_tail(&k), k.head, "the TMR entry is handed back with the commands");
	cr_assert_eq(fk_reap(&k, d, 4), 2);
	tcmu_ring_fini(&r);
	fk_fini(&k);
}

/* A count larger than the entry holds is cut to what it holds: nothing past the entry is read
 * (ASan run). */
Test(tcmu_ring, tmr_count_past_its_entry_is_cut)
{
	struct fk k;
	struct tcmu_ring r;
	struct rq q;
	uint16_t ids[3] = {7, 8, 9};
	uint32_t cnt = 100000;

	fk_init(&k, 4096, 4096, TCMU_MAILBOX_FLAG_CAP_OOOC | TCMU_MAILBOX_FLAG_CAP_TMR);
	ring_up(&k, &r);
	rq_init(&q);
	fk_tmr(&k, TCMU_TMR_ABORT_TASK, ids, 3);
	memcpy(fk_ent(&k, 0) + offsetof(struct tcmu_tmr_entry, cmd_cnt), &cnt, sizeof(cnt));
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_TMR);
	/* the entry is 8-aligned: 3 ids leave room for a fourth (zero) */
	cr_assert_eq(r.tmr.n, 4);
	cr_assert_eq(r.tmr.ids[2], 9);
	tcmu_ring_fini(&r);
	fk_fini(&k);
}

/* A second completion of one command is refused, in both completion modes: the kernel would
 * take it for whatever command sits in that entry next. */
static void second_completion_refused(uint16_t flags)
{
	struct fk k;
	struct tcmu_ring r;
	struct rq q1, q2;

	fk_init(&k, 4096, 4096, flags);
	ring_up(&k, &r);
	rq_init(&q1), rq_init(&q2);
	fk_cmd(&k, TUR, 6, NULL, 0);
	fk_cmd(&k, TUR, 6, NULL, 0);
	cr_assert_eq(tcmu_ring_next(&r, &q1.req), TCMU_NEXT_CMD);
	cr_assert_eq(tcmu_ring_next(&r, &q2.req), TCMU_NEXT_CMD);
	cr_assert_eq(tcmu_ring_complete(&r, &q1.req, &GOOD), 1);
	cr_assert_eq(tcmu_ring_complete(&r, &q1.req, &GOOD), -1);
	cr_assert_eq(r.refused, 1);
	cr_assert_eq(r.outstanding, 1, "the refused completion took nothing");
	cr_assert_eq(tcmu_ring_complete(&r, &q2.req, &GOOD), 1);
	cr_assert_eq(fk_tail(&k), k.head);
	tcmu_ring_fini(&r);
	fk_fini(&k);
}

Test(tcmu_ring, second_completion_refused_out_of_order)
{
	second_completion_refused(TCMU_MAILBOX_FLAG_CAP_OOOC);
}

Test(tcmu_ring, second_completion_refused_in_order)
{
	second_completion_refused(0);
}

Test(tcmu_ring, read_len_only_when_the_kernel_announces_it)
{
	struct tcmu_rsp rl = {.status = 0, .read_len_valid = true, .read_len = 36};
	struct fk_done d[2];

	for (int cap = 0; cap < 2; cap++) {
		struct fk k;
		struct tcmu_ring r;
		struct rq q;
		uint64_t iov[1][2];

		fk_init(&k, 4096, 4096, cap ? TCMU_MAILBOX_FLAG_CAP_READ_LEN : 0);
		ring_up(&k, &r);
		iov[0][0] = fk_data(&k, 255), iov[0][1] = 255;
		fk_cmd(&k, (const uint8_t *)"\x12\x00\x00\x00\xff\x00", 6, iov, 1);
		rq_init(&q);
		cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_CMD);
		cr_assert_eq(tcmu_ring_complete(&r, &q.req, &rl), 1);
		cr_assert_eq(fk_reap(&k, d, 2), 1);
		cr_assert_eq(!!(d[0].uflags & TCMU_UFLAG_READ_LEN), cap);
		cr_assert_eq(d[0].read_len, cap ? 36u : 0u);
		tcmu_ring_fini(&r);
		fk_fini(&k);
	}
}

Test(tcmu_ring, sense_is_cut_to_the_ring_buffer)
{
	struct fk k;
	struct tcmu_ring r;
	struct rq q;
	uint8_t sense[252];
	struct fk_done d[2];
	struct tcmu_rsp s = {.status = 2, .sense = sense, .sense_len = sizeof(sense)};

	memset(sense, 0xab, sizeof(sense));
	fk_init(&k, 4096, 4096, TCMU_MAILBOX_FLAG_CAP_OOOC);
	ring_up(&k, &r);
	fk_cmd(&k, TUR, 6, NULL, 0);
	/* a canary right after the entry's response area */
	uint32_t len = fk_cmd_len(0, 6);
	memset(fk_ent(&k, len), 0x5a, 64);
	rq_init(&q);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_CMD);
	cr_assert_eq(tcmu_ring_complete(&r, &q.req, &s), 1);
	cr_assert_eq(fk_reap(&k, d, 2), 1);
	cr_assert_eq(d[0].sense[TCMU_SENSE_BUFFERSIZE - 1], 0xab);
	for (int i = 0; i < 64; i++)
		cr_assert_eq(fk_ent(&k, len)[i], 0x5a, "byte %d after the entry was written", i);
	tcmu_ring_fini(&r);
	fk_fini(&k);
}

/* ---- malformed rings ---- */

Test(tcmu_ring, entry_length_past_the_ring_stops_the_device)
{
	struct fk k;
	struct tcmu_ring r;
	struct rq q;

	fk_init(&k, 1024, 4096, 0);
	ring_up(&k, &r);
	fk_hdr(&k, 0, 2048, TCMU_OP_CMD, 1); /* longer than the ring */
	fk_set_head(&k, 512);
	rq_init(&q);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_BROKEN);
	cr_assert(r.broken);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_BROKEN, "stays stopped");
	tcmu_ring_fini(&r);

	/* zero length: would loop forever */
	fk_hdr(&k, 0, 0, TCMU_OP_PAD, 0);
	ring_up(&k, &r);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_BROKEN);
	tcmu_ring_fini(&r);

	/* longer than what is queued */
	fk_hdr(&k, 0, 640, TCMU_OP_CMD, 1);
	ring_up(&k, &r);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_BROKEN);
	tcmu_ring_fini(&r);

	/* cmd_head outside the ring / misaligned */
	ring_up(&k, &r);
	fk_set_head(&k, 4000);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_BROKEN);
	tcmu_ring_fini(&r);
	ring_up(&k, &r);
	fk_set_head(&k, 13);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_BROKEN);
	tcmu_ring_fini(&r);
	fk_fini(&k);
}

Test(tcmu_ring, unknown_opcode_is_flagged_and_skipped)
{
	struct fk k;
	struct tcmu_ring r;
	struct rq q;
	struct tcmu_cmd_entry_hdr h;
	uint16_t id;

	fk_init(&k, 4096, 4096, TCMU_MAILBOX_FLAG_CAP_OOOC);
	ring_up(&k, &r);
	fk_hdr(&k, 0, 64, 5, 0); /* opcode 5: unknown */
	fk_set_head(&k, 64);
	fk_hdr(&k, 64, 32, TCMU_OP_CMD, 0); /* a command entry too short for a response */
	fk_set_head(&k, 96);
	id = fk_cmd(&k, TUR, 6, NULL, 0);
	rq_init(&q);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_CMD);
	cr_assert_eq(q.req.cmd_id, id, "the valid command after the bad entries is served");
	memcpy(&h, fk_ent(&k, 0), sizeof(h));
	cr_assert_eq(h.uflags, TCMU_UFLAG_UNKNOWN_OP);
	memcpy(&h, fk_ent(&k, 64), sizeof(h));
	cr_assert_eq(h.uflags, TCMU_UFLAG_UNKNOWN_OP);
	cr_assert_eq(tcmu_ring_complete(&r, &q.req, &GOOD), 1);
	cr_assert_eq(fk_tail(&k), k.head);
	/* the completion went into the command's entry, not into a skipped one */
	memcpy(&h, fk_ent(&k, 96), sizeof(h));
	cr_assert_eq(h.cmd_id, id);
	tcmu_ring_fini(&r);
	fk_fini(&k);
}

static enum tcmu_req_err one_bad(uint16_t flags, void (*spoil)(struct fk *k, uint32_t off))
{
	struct fk k;
	struct tcmu_ring r;
	struct rq q;
	struct fk_done d[2];
	uint64_t iov[1][2];
	enum tcmu_req_err e;

	fk_init(&k, 4096, 8192, flags);
	ring_up(&k, &r);
	iov[0][0] = fk_data(&k, 4096), iov[0][1] = 4096;
	fk_cmd(&k, READ10, 10, iov, 1);
	spoil(&k, 0);
	rq_init(&q);
	cr_assert_eq(tcmu_ring_next(&r, &q.req), TCMU_NEXT_CMD);
	e = q.req.err;
	cr_assert_eq(q.req.iovcnt, 0, "no iovec handed out for a bad entry");
	/* still owed, and answerable, a completion */
	cr_assert_eq(tcmu_ring_complete(&r, &q.req, &GOOD), 1);
	cr_assert_eq(fk_reap(&k, d, 2), 1);
	tcmu_ring_fini(&r);
	fk_fini(&k);
	return e;
}

static void set_iov(struct fk *k, uint32_t off, uint64_t base, uint64_t len)
{
	struct iovec v = {.iov_base = (void *)(uintptr_t)base, .iov_len = len};
	memcpy(fk_ent(k, off) + offsetof(struct tcmu_cmd_entry, req.iov), &v, sizeof(v));
}

static void iov_in_ring(struct fk *k, uint32_t off)
{
	set_iov(k, off, FK_CMDR_OFF, 64);
}
static void iov_past_end(struct fk *k, uint32_t off)
{
	set_iov(k, off, k->size - 100, 4096);
}
static void iov_wraps(struct fk *k, uint32_t off)
{
	set_iov(k, off, k->data_off, UINT64_MAX - 10);
}
static void iov_beyond(struct fk *k, uint32_t off)
{
	set_iov(k, off, k->size + 4096, 1);
}

static void set_u32(struct fk *k, uint32_t off, size_t field, uint32_t v)
{
	memcpy(fk_ent(k, off) + field, &v, 4);
}

static void cdb_outside(struct fk *k, uint32_t off)
{
	uint64_t v = 3; /* in the mailbox */
	memcpy(fk_ent(k, off) + offsetof(struct tcmu_cmd_entry, req.cdb_off), &v, 8);
}

static void cdb_far(struct fk *k, uint32_t off)
{
	uint64_t v = UINT64_MAX - 2;
	memcpy(fk_ent(k, off) + offsetof(struct tcmu_cmd_entry, req.cdb_off), &v, 8);
}

static void many_iovs(struct fk *k, uint32_t off)
{
	set_u32(k, off, offsetof(struct tcmu_cmd_entry, req.iov_cnt), 1000000);
}

static void bidi(struct fk *k, uint32_t off)
{
	set_u32(k, off, offsetof(struct tcmu_cmd_entry, req.iov_bidi_cnt), 1);
}

static void var_cdb_too_long(struct fk *k, uint32_t off)
{
	uint64_t cdb_off;
	memcpy(&cdb_off, fk_ent(k, off) + offsetof(struct tcmu_cmd_entry, req.cdb_off), 8);
	k->mem[cdb_off] = 0x7f;
	k->mem[cdb_off + 7] = 200; /* 208-byte CDB */
}

Test(tcmu_ring, bad_iovecs_are_refused)
{
	cr_assert_eq(one_bad(0, iov_in_ring), TCMU_REQ_BAD_IOV);
	cr_assert_eq(one_bad(0, iov_past_end), TCMU_REQ_BAD_IOV);
	cr_assert_eq(one_bad(TCMU_MAILBOX_FLAG_CAP_OOOC, iov_wraps), TCMU_REQ_BAD_IOV);
	cr_assert_eq(one_bad(0, iov_beyond), TCMU_REQ_BAD_IOV);
	cr_assert_eq(one_bad(0, many_iovs), TCMU_REQ_BAD_IOV);
	cr_assert_eq(one_bad(0, bidi), TCMU_REQ_BIDI);
}

Test(tcmu_ring, bad_cdbs_are_refused)
{
	cr_assert_eq(one_bad(0, cdb_outside), TCMU_REQ_BAD_CDB);
	cr_assert_eq(one_bad(TCMU_MAILBOX_FLAG_CAP_OOOC, cdb_far), TCMU_REQ_BAD_CDB);
	cr_assert_eq(one_bad(0, var_cdb_too_long), TCMU_REQ_BAD_CDB);
}

Test(tcmu_ring, sense_fixed_format)
{
	uint8_t s[18];
	tcmu_sense_fixed(s, 0x05, 0x24, 0x01);
	cr_assert_eq(s[0], 0x70);
	cr_assert_eq(s[2], 0x05);
	cr_assert_eq(s[7], 10);
	cr_assert_eq(s[12], 0x24);
	cr_assert_eq(s[13], 0x01);
}
