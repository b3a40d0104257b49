/* Header-only stand-in for the verbs layer under the SRP target (struct rdma_io), so channels,
 * commands and task management run against the real SCSI core and a ramdisk LU without an RDMA
 * device.  One fake connection per test:
 *
 *   - the initiator's memory is the test's own: a descriptor's address is a pointer in this
 *     process and RDMA READ/WRITE are memcpy (the remote key must be FAKE_RKEY);
 *   - every IU the target sends is logged (fc.sent[]); the operations it posts complete when
 *     the test lets them (fake_settle), as send completions would;
 *   - rdma_conn_call()s from SCSI completion threads are queued and run on the test's thread;
 *   - disconnect behaves like the real layer: the channel is told it is down, then released.
 */
#ifndef UTGT_TEST_SRP_FAKE_H
#define UTGT_TEST_SRP_FAKE_H

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/unit/conf_test_util.h"
#include "transports/rdma/rdma_pool.h"
#include "transports/srp/srp_int.h"
#include "transports/srp/srp_iu.h"

#define FAKE_RKEY  0x5a5a
#define FAKE_NBUF  64
#define FAKE_NSENT 512

struct fake_sent {
	uint8_t b[512];
	uint32_t len;
	bool solicited;
};

struct fake_op {
	struct rdma_op *op;
	struct rdma_buf *buf;
};

struct fake_conn {
	void *priv;
	struct srpt_ctx *ctx;
	struct rdma_pool *pool;
	/* send buffers */
	struct rdma_buf sbuf[FAKE_NBUF];
	uint8_t sdata[FAKE_NBUF][512];
	struct rdma_buf *sfree;
	unsigned sfree_n;
	/* receive buffers, one per IU the test delivers */
	struct rdma_buf rbuf[FAKE_NBUF];
	uint8_t rdata[FAKE_NBUF][9000];
	unsigned next_r;
	unsigned reposted;
	/* what the target did */
	struct fake_sent sent[FAKE_NSENT];
	unsigned nsent;
	bool accepted, rejected, disconnected, released, down;
	struct rdma_conn_params params;
	uint8_t accept_priv[64], reject_priv[64];
	uint8_t reject_len;
	int accept_rc;
	int eagain; /* the next sends/posts answer -EAGAIN this many times */
	uint64_t bytes_read, bytes_written;
	/* posted operations, completed by fake_settle */
	struct fake_op ops[FAKE_NSENT];
	unsigned nops;
	bool hold_ops; /* leave posted operations uncompleted (a slow send completion) */
	/* cross-thread calls */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ut_msg *mh, *mt;
	int cpu; /* rdma_conn_set_cpu */
};

static struct fake_conn fc;

#define FC   ((struct rdma_conn *)&fc)
#define F(c) ((struct fake_conn *)(c))

static inline void *fk_priv(const struct rdma_conn *c)
{
	return F(c)->priv;
}
static inline void fk_set_priv(struct rdma_conn *c, void *p)
{
	F(c)->priv = p;
}
static const char *fk_name(const struct rdma_conn *c)
{
	(void)c;
	return "fake:1";
}
static inline void *fk_ctx(struct rdma_conn *c)
{
	return F(c)->ctx;
}
static inline int fk_accept(struct rdma_conn *c, const struct rdma_conn_params *p)
{
	F(c)->params = *p;
	memcpy(F(c)->accept_priv, p->priv, p->priv_len);
	if (F(c)->accept_rc)
		return F(c)->accept_rc;
	F(c)->accepted = true;
	return 0;
}
static inline void fk_reject(struct rdma_conn *c, const void *priv, uint8_t len)
{
	F(c)->rejected = true;
	F(c)->reject_len = len;
	memcpy(F(c)->reject_priv, priv, len);
}
static inline struct rdma_buf *fk_send_buf(struct rdma_conn *c)
{
	struct rdma_buf *b = F(c)->sfree;

	if (b) {
		F(c)->sfree = b->next;
		F(c)->sfree_n--;
	}
	return b;
}
static inline void fk_put_send_buf(struct rdma_conn *c, struct rdma_buf *b)
{
	b->next = F(c)->sfree;
	F(c)->sfree = b;
	F(c)->sfree_n++;
}

static inline int fk_post_send(struct rdma_conn *c, struct rdma_buf *b, uint32_t len, bool sol,
			       struct rdma_op *op)
{
	struct fake_conn *f = F(c);

	cr_assert_lt(f->nsent, FAKE_NSENT);
	cr_assert_leq(len, sizeof(f->sent[0].b));
	memcpy(f->sent[f->nsent].b, b->data, len);
	f->sent[f->nsent].len = len;
	f->sent[f->nsent].solicited = sol;
	f->nsent++;
	f->ops[f->nops++] = (struct fake_op){op ? op : &b->op, b};
	return 0;
}

static inline int fk_send(struct rdma_conn *c, struct rdma_buf *b, uint32_t len, bool sol,
			  struct rdma_op *op)
{
	if (F(c)->down)
		return -ENOTCONN;
	if (F(c)->eagain > 0) {
		F(c)->eagain--;
		return -EAGAIN;
	}
	return fk_post_send(c, b, len, sol, op);
}

/* memcpy between the initiator's buffers (rem) and the target's chunks (loc) */
static inline int fk_copy(const struct rdma_rseg *rem, unsigned nrem, const struct rdma_seg *loc,
			  unsigned nloc, uint64_t bytes, bool to_remote)
{
	unsigned ri = 0, li = 0;
	uint64_t ro = 0, lo = 0;

	while (bytes) {
		uint64_t n;

		while (ri < nrem && ro == rem[ri].len)
			ri++, ro = 0;
		while (li < nloc && lo == loc[li].len)
			li++, lo = 0;
		if (ri == nrem || li == nloc)
			return -EINVAL;
		cr_assert_eq(rem[ri].rkey, FAKE_RKEY, "remote key");
		n = rem[ri].len - ro;
		if (n > loc[li].len - lo)
			n = loc[li].len - lo;
		if (n > bytes)
			n = bytes;
		if (to_remote)
			memcpy((char *)(uintptr_t)rem[ri].addr + ro, (char *)loc[li].addr + lo, n);
		else
			memcpy((char *)loc[li].addr + lo, (char *)(uintptr_t)rem[ri].addr + ro, n);
		ro += n;
		lo += n;
		bytes -= n;
	}
	return 0;
}

static inline int fk_write_send(struct rdma_conn *c, const struct rdma_rseg *rem, unsigned nrem,
				const struct rdma_seg *loc, unsigned nloc, uint64_t bytes,
				struct rdma_buf *b, uint32_t len, bool sol, struct rdma_op *op)
{
	int rc;

	if (F(c)->down)
		return -ENOTCONN;
	if (F(c)->eagain > 0) {
		F(c)->eagain--;
		return -EAGAIN;
	}
	rc = fk_copy(rem, nrem, loc, nloc, bytes, true);
	if (rc)
		return rc;
	F(c)->bytes_written += bytes;
	return fk_post_send(c, b, len, sol, op);
}

static inline int fk_read(struct rdma_conn *c, const struct rdma_rseg *rem, unsigned nrem,
			  const struct rdma_seg *loc, unsigned nloc, uint64_t bytes,
			  struct rdma_op *op)
{
	int rc;

	if (F(c)->down)
		return -ENOTCONN;
	if (F(c)->eagain > 0) {
		F(c)->eagain--;
		return -EAGAIN;
	}
	rc = fk_copy(rem, nrem, loc, nloc, bytes, false);
	if (rc)
		return rc;
	F(c)->bytes_read += bytes;
	F(c)->ops[F(c)->nops++] = (struct fake_op){op, NULL};
	return 0;
}

static inline void fk_repost(struct rdma_conn *c, struct rdma_buf *b)
{
	(void)b;
	F(c)->reposted++;
}

static inline void fk_disconnect(struct rdma_conn *c)
{
	struct fake_conn *f = F(c);

	if (f->disconnected)
		return;
	f->disconnected = true;
	f->down = true;
	srpt_conn_ops.down(c); /* what the real layer does when the connection goes down */
}

static inline void fk_release(struct rdma_conn *c)
{
	F(c)->released = true;
}

static inline struct rdma_pool *fk_pool(struct rdma_conn *c)
{
	return F(c)->pool;
}

static inline void fk_call(struct rdma_conn *c, struct ut_msg *m)
{
	struct fake_conn *f = F(c);

	pthread_mutex_lock(&f->mu);
	m->next = NULL;
	if (f->mt)
		f->mt->next = m;
	else
		f->mh = m;
	f->mt = m;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

static inline void fk_set_cpu(struct rdma_conn *c, int cpu)
{
	F(c)->cpu = cpu;
}

static const struct rdma_io fake_io = {
    .priv = fk_priv,
    .set_priv = fk_set_priv,
    .name = fk_name,
    .ctx = fk_ctx,
    .accept = fk_accept,
    .reject = fk_reject,
    .send_buf = fk_send_buf,
    .put_send_buf = fk_put_send_buf,
    .send = fk_send,
    .write_send = fk_write_send,
    .read = fk_read,
    .repost = fk_repost,
    .disconnect = fk_disconnect,
    .release = fk_release,
    .pool = fk_pool,
    .call = fk_call,
    .set_cpu = fk_set_cpu,
};

/* Run queued calls and complete posted operations once; true if anything happened. */
static inline bool fake_step(void)
{
	bool any = false;

	for (;;) {
		struct ut_msg *m;

		pthread_mutex_lock(&fc.mu);
		m = fc.mh;
		if (m) {
			fc.mh = m->next;
			if (!fc.mh)
				fc.mt = NULL;
		}
		pthread_mutex_unlock(&fc.mu);
		if (!m)
			break;
		m->fn(m);
		any = true;
	}
	while (fc.nops && !fc.hold_ops) {
		struct fake_op o = fc.ops[0];

		memmove(fc.ops, fc.ops + 1, --fc.nops * sizeof(fc.ops[0]));
		if (o.buf)
			fk_put_send_buf(FC, o.buf);
		if (o.op && o.op->done)
			o.op->done(FC, o.op, !fc.down);
		any = true;
	}
	return any;
}

/* Drive until cond() holds; fail after 5 s (the core completes on its own threads). */
static inline void fake_until(bool (*cond)(void), const char *what)
{
	struct timespec dl;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 5;
	while (!cond()) {
		if (fake_step())
			continue;
		pthread_mutex_lock(&fc.mu);
		if (!fc.mh && pthread_cond_timedwait(&fc.cv, &fc.mu, &dl) == ETIMEDOUT) {
			pthread_mutex_unlock(&fc.mu);
			cr_assert_fail("timed out waiting for: %s", what);
		}
		pthread_mutex_unlock(&fc.mu);
	}
}

static unsigned want_sent;
static inline bool enough_sent(void)
{
	return fc.nsent >= want_sent;
}

/* Wait for the target to have sent n IUs in all. */
static inline void fake_wait_sent(unsigned n)
{
	want_sent = n;
	fake_until(enough_sent, "IUs sent by the target");
}

static inline bool all_quiet(void)
{
	struct srpt_ch *ch = fc.priv;
	return !fc.nops && !fc.mh && (!ch || !ch->active);
}

/* Everything the target had to do for what it received is done. */
static inline void fake_settle(void)
{
	fake_until(all_quiet, "the channel to go idle");
}

/* Deliver one IU as a receive completion. */
static inline void fake_recv(const void *iu, uint32_t len)
{
	struct rdma_buf *b = &fc.rbuf[fc.next_r++ % FAKE_NBUF];

	cr_assert_leq(len, sizeof(fc.rdata[0]));
	memcpy(b->data, iu, len);
	srpt_conn_ops.recv(FC, b, len);
}

/* ---- a target to log in to ---- */

static struct tgt_config *fake_cfg;
static struct srpt_ctx fake_ctx;

#define FAKE_GID "fe80:0000:0000:0000:0002:c903:000f:41a7"

/* handler: the HANDLER block that defines DEVICE rd0, the LU behind LUN 0. */
static inline void fake_setup_conf_dev(const char *handler, const char *driver_attrs)
{
	char conf[2048];
	struct captured c;
	struct diag d;

	snprintf(conf, sizeof(conf),
		 "%s"
		 "TARGET_DRIVER ib_srpt {\n%s\n\tTARGET " FAKE_GID " {\n"
		 "\t\tenabled 1\n\t\trel_tgt_id 3\n\t\tLUN 0 rd0\n\t}\n}\n",
		 handler, driver_attrs);
	fake_cfg = load_str(conf, &c, &d);
	cr_assert_not_null(fake_cfg, "%s", cap_dump(&c));
	cr_assert_eq(tgt_config_open_devices(fake_cfg, &d), 0);
	cr_assert_eq(scsi_core_init(2), 0);
	memset(&fake_ctx, 0, sizeof(fake_ctx));
	pthread_mutex_init(&fake_ctx.lock, NULL);
	fake_ctx.cfg = fake_cfg;
	fake_ctx.drv = tgt_config_driver(fake_cfg, "ib_srpt");
	cr_assert_eq(srpt_opts_parse(fake_ctx.drv, &fake_ctx.o, NULL), 0);
	cr_assert_eq(srpt_targets_setup(&fake_ctx, NULL), 0);

	memset(&fc, 0, sizeof(fc));
	pthread_mutex_init(&fc.mu, NULL);
	pthread_cond_init(&fc.cv, NULL);
	fc.ctx = &fake_ctx;
	fc.pool = rdma_pool_create(NULL, 64 << 10, 8u << 20, 16u << 20);
	for (int i = 0; i < FAKE_NBUF; i++) {
		fc.sbuf[i].data = fc.sdata[i];
		fc.sbuf[i].size = sizeof(fc.sdata[i]);
		fk_put_send_buf(FC, &fc.sbuf[i]);
		fc.rbuf[i].data = fc.rdata[i];
		fc.rbuf[i].size = sizeof(fc.rdata[i]);
		fc.rbuf[i].recv = true;
	}
	srpt_io = &fake_io;
}

static inline void fake_setup_conf(const char *driver_attrs)
{
	fake_setup_conf_dev("HANDLER ramdisk {\n\tDEVICE rd0 {\n\t\tsize_mb 8\n\t}\n}\n",
			    driver_attrs);
}

static inline void fake_teardown(void)
{
	struct srpt_ch *ch = fc.priv;

	fc.hold_ops = false;
	if (ch && !fc.released) {
		fk_disconnect(FC);
		fake_until(all_quiet, "the channel to drain");
	}
	fake_step();
	cr_assert(fc.released || !fc.accepted, "channel never released");
	cr_assert_null(fake_ctx.nexuses, "nexus left behind");
	scsi_core_shutdown();
	rdma_pool_destroy(fc.pool);
	free(fake_ctx.tgts);
	pthread_mutex_destroy(&fake_ctx.lock);
	tgt_config_free(fake_cfg);
}

/* The login Linux's ib_srp sends over RDMA/CM (initiator_ext 1, immediate data at 68). */
static inline struct srp_login_req fake_login_req(uint8_t mca)
{
	struct srp_login_req r = {.req_it_iu_len = 8260,
				  .req_buf_fmt = 6,
				  .req_flags = (uint8_t)(SRP_REQ_IMMED | mca),
				  .imm_data_offset = 68};

	r.initiator_port_id[7] = 1;
	r.initiator_port_id[15] = 0x42;
	memcpy(r.tag.b, "LOGINTAG", 8);
	srp_put64(r.target_port_id, 0x0002c903000f41a7ull);
	srp_put64(r.target_port_id + 8, 0x0002c903000f41a7ull);
	return r;
}

/* Log in; the LOGIN_RSP the target accepted with goes to *rsp. */
static inline void fake_login(struct srp_login_rsp *rsp)
{
	struct srp_login_req r = fake_login_req(SRP_MCA_SINGLE);
	uint8_t priv[SRP_LOGIN_REQ_RDMA_LEN];
	struct rdma_conn_req req = {.priv = priv, .priv_len = sizeof(priv)};

	srp_build_login_rdma(priv, &r);
	srpt_conn_ops.request(FC, &req);
	cr_assert(fc.accepted, "login not accepted");
	cr_assert_eq(srp_parse_login_rsp(fc.accept_priv, fc.params.priv_len, rsp), SRP_IU_OK);
	srpt_conn_ops.established(FC);
}

/* The last IU the target sent, as an SRP_RSP. */
static inline struct srp_rsp_view fake_last_rsp(void)
{
	struct srp_rsp_view v;

	cr_assert_gt(fc.nsent, 0);
	cr_assert_eq(srp_parse_rsp(fc.sent[fc.nsent - 1].b, fc.sent[fc.nsent - 1].len, &v),
		     SRP_IU_OK, "last IU sent is not an SRP_RSP (type 0x%02x)",
		     fc.sent[fc.nsent - 1].b[0]);
	return v;
}

static inline struct srp_tag tagn(uint32_t n)
{
	return srp_tag_of(n);
}

/* Send an SRP_CMD built from b; wait for its answer; return it. */
static inline struct srp_rsp_view fake_cmd(const struct srp_cmd_build *b, const void *imm)
{
	uint8_t iu[9000];
	size_t n = srp_build_cmd(iu, sizeof(iu), b);
	unsigned before = fc.nsent;

	cr_assert_gt(n, 0);
	if (b->fmt == SRP_FMT_IMM && imm) {
		memcpy(iu + b->imm_off, imm, b->imm_len);
		n = b->imm_off + b->imm_len;
	}
	fake_recv(iu, (uint32_t)n);
	fake_wait_sent(before + 1);
	fake_settle();
	return fake_last_rsp();
}

#endif
