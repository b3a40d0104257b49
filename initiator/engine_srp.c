/* SRP engine: a userspace SRP initiator over libibverbs/librdmacm, one RDMA channel per path,
 * so utgt-bench measures an SRP target without the kernel's ib_srp (and round-robins over
 * several channels through its multipath layer: several paths with multichannel=1 are one
 * I_T nexus with several channels).
 *
 * Connect chain: resolve address -> resolve route -> QP, buffers, receives posted ->
 * rdma_connect with SRP_LOGIN_REQ as private data -> SRP_LOGIN_RSP in the ESTABLISHED event ->
 * TEST UNIT READY until the unit attentions of a new nexus are consumed -> READ CAPACITY(16) ->
 * up.  One pollable fd (an epoll set over the RDMA/CM channel and the completion channel).
 *
 * Commands: READ(16)/WRITE(16) or a pass-through data-in CDB.  Data-in and data-out go by
 * the target's RDMA WRITE/READ into/from the tester's own buffers, registered once and cached;
 * one buffer is a direct descriptor, several an indirect table in the IU; writes that fit
 * travel as immediate data when the target supports it.  At most REQUEST LIMIT commands are
 * outstanding; more wait for credits. */
#include "initiator/engine.h"
#include "initiator/scsi_info.h"
#include "initiator/srp_url.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "initiator/srp_wire.h"

#define SRP_IMM_OFF   68 /* what Linux uses: header, 16 bytes of additional CDB, the length */
#define SRP_IT_IU_LEN (SRP_IMM_OFF + 8192)
#define SRP_RECV_LEN  4096

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}
#define MAX_DESC      64
#define MR_CACHE      128
#define WAITQ	      1024 /* commands beyond the request limit wait here */

enum phase { PH_IDLE, PH_ADDR, PH_ROUTE, PH_LOGIN, PH_TUR, PH_READCAP, PH_UP };

struct slot {
	struct ub_io *io;
	uint64_t t0;
	struct ibv_mr *mr[MAX_DESC];
	unsigned nmr;
};

struct mr_ent {
	char *addr;
	size_t len;
	struct ibv_mr *mr;
	unsigned users;
	uint64_t last;
};

struct srp_path {
	struct ub_srp_url url;
	char shown[600];
	struct ub_eng_opts o;
	enum phase phase;
	bool failed;
	char err[512];
	uint64_t deadline;
	/* RDMA */
	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
	int epfd;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	unsigned cq_unacked;
	uint8_t *iu_mem;
	size_t iu_len;
	struct ibv_mr *iu_mr;
	unsigned nsend, nrecv;
	int *send_free; /* stack of free send slot indexes */
	unsigned nsend_free;
	/* SRP */
	int32_t credits;
	uint32_t max_it_iu_len;
	bool imm;
	struct slot *slots;
	unsigned nslots;
	unsigned inflight;
	struct ub_io **waitq; /* waiting for a credit, FIFO */
	unsigned wq_head, wq_n;
	struct mr_ent mrc[MR_CACHE];
	/* geometry */
	uint32_t block_size;
	uint64_t nblocks;
	uint8_t readcap[32];
	struct ub_io setup_io;
	struct iovec setup_iov;
	unsigned tur_tries;
};

#define P(ep) ((struct srp_path *)(ep))

static void fail(struct srp_path *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct srp_path *p, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
}

static uint8_t *send_buf(struct srp_path *p, unsigned i)
{
	return p->iu_mem + (size_t)i * SRP_IT_IU_LEN;
}

static uint8_t *recv_buf(struct srp_path *p, unsigned i)
{
	return p->iu_mem + (size_t)p->nsend * SRP_IT_IU_LEN + (size_t)i * SRP_RECV_LEN;
}

/* ---- registration cache for the tester's buffers ---- */

static struct ibv_mr *mr_get(struct srp_path *p, void *addr, size_t len)
{
	struct mr_ent *victim = NULL;
	char *a = addr;

	for (unsigned i = 0; i < MR_CACHE; i++) {
		struct mr_ent *e = &p->mrc[i];
		if (e->mr && a >= e->addr && a + len <= e->addr + e->len) {
			e->users++;
			e->last = ub_now_ns();
			return e->mr;
		}
		if (!e->users && (!victim || !e->mr || (victim->mr && e->last < victim->last)))
			victim = e;
	}
	if (!victim)
		return NULL;
	if (victim->mr)
		ibv_dereg_mr(victim->mr);
	victim->mr =
	    ibv_reg_mr(p->pd, addr, len,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!victim->mr)
		return NULL;
	victim->addr = a;
	victim->len = len;
	victim->users = 1;
	victim->last = ub_now_ns();
	return victim->mr;
}

static void mr_put(struct srp_path *p, struct ibv_mr *mr)
{
	for (unsigned i = 0; i < MR_CACHE; i++)
		if (p->mrc[i].mr == mr && p->mrc[i].users) {
			p->mrc[i].users--;
			return;
		}
}

/* ---- teardown ---- */

static void complete(struct srp_path *p, unsigned s, enum ub_io_result r)
{
	struct slot *sl = &p->slots[s];
	struct ub_io *io = sl->io;

	for (unsigned i = 0; i < sl->nmr; i++)
		mr_put(p, sl->mr[i]);
	sl->nmr = 0;
	sl->io = NULL;
	p->inflight--;
	io->result = r;
	io->eng_task = NULL;
	io->done(io);
}

static void teardown(struct srp_path *p)
{
	/* everything outstanding goes back to the caller, which may retry on another path */
	for (unsigned i = 0; p->slots && i < p->nslots; i++)
		if (p->slots[i].io)
			complete(p, i, UB_IO_PATH_ERROR);
	while (p->wq_n) {
		struct ub_io *io = p->waitq[p->wq_head];
		p->wq_head = (p->wq_head + 1) % WAITQ;
		p->wq_n--;
		io->result = UB_IO_PATH_ERROR;
		io->done(io);
	}
	if (p->id && p->phase >= PH_LOGIN)
		rdma_disconnect(p->id);
	if (p->id && p->id->qp)
		rdma_destroy_qp(p->id);
	if (p->cq) {
		if (p->cq_unacked)
			ibv_ack_cq_events(p->cq, p->cq_unacked);
		ibv_destroy_cq(p->cq);
	}
	for (unsigned i = 0; i < MR_CACHE; i++)
		if (p->mrc[i].mr)
			ibv_dereg_mr(p->mrc[i].mr);
	memset(p->mrc, 0, sizeof(p->mrc));
	if (p->iu_mr)
		ibv_dereg_mr(p->iu_mr);
	free(p->iu_mem);
	if (p->cc)
		ibv_destroy_comp_channel(p->cc);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->ech)
		rdma_destroy_event_channel(p->ech);
	if (p->epfd >= 0)
		close(p->epfd);
	free(p->slots);
	free(p->waitq);
	free(p->send_free);
	p->cq = NULL;
	p->cq_unacked = 0;
	p->iu_mr = NULL;
	p->iu_mem = NULL;
	p->cc = NULL;
	p->pd = NULL;
	p->id = NULL;
	p->ech = NULL;
	p->epfd = -1;
	p->slots = NULL;
	p->waitq = NULL;
	p->send_free = NULL;
	p->inflight = 0;
	p->wq_n = p->wq_head = 0;
	p->phase = PH_IDLE;
}

/* ---- create / destroy ---- */

static struct ub_epath *srp_create(const char *target, const struct ub_eng_opts *o, char *err,
				   size_t errlen)
{
	struct srp_path *p = calloc(1, sizeof(*p));

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (!ub_srp_url_parse(target, &p->url, err, errlen)) {
		free(p);
		return NULL;
	}
	if (o->queue_depth && o->queue_depth < p->url.queue_size)
		p->url.queue_size = o->queue_depth;
	snprintf(p->shown, sizeof(p->shown), "%s", target);
	p->o = *o;
	p->epfd = -1;
	return (struct ub_epath *)p;
}

static void srp_destroy(struct ub_epath *ep)
{
	teardown(P(ep));
	free(ep);
}

/* ---- posting ---- */

static int post_recv(struct srp_path *p, unsigned i)
{
	struct ibv_sge sge = {(uintptr_t)recv_buf(p, i), SRP_RECV_LEN, p->iu_mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;

	return ibv_post_recv(p->id->qp, &wr, &bad);
}

/* SEND of send slot s, len bytes, plus immediate data (one extra SGE) when imm != NULL. */
static int post_send(struct srp_path *p, unsigned s, uint32_t len, const struct iovec *imm,
		     struct ibv_mr *imm_mr)
{
	struct ibv_sge sge[2] = {{(uintptr_t)send_buf(p, s), len, p->iu_mr->lkey}};
	struct ibv_send_wr wr = {.wr_id = s,
				 .sg_list = sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	if (imm) {
		sge[1] = (struct ibv_sge){(uintptr_t)imm->iov_base, (uint32_t)imm->iov_len,
					  imm_mr->lkey};
		wr.num_sge = 2;
	}
	return ibv_post_send(p->id->qp, &wr, &bad);
}

static int take_send(struct srp_path *p)
{
	return p->nsend_free ? p->send_free[--p->nsend_free] : -1;
}

/* Build and send the SRP_CMD of io in slot s (credit and send slot available). */
static int send_cmd(struct srp_path *p, unsigned s, struct ub_io *io)
{
	struct slot *sl = &p->slots[s];
	struct ub_srp_buf d[MAX_DESC];
	struct ub_srp_cmd b = {0};
	struct ibv_mr *imm_mr = NULL;
	uint8_t cdb[16];
	uint32_t bytes = 0;
	int ss = take_send(p);
	size_t len;
	int rc;

	if (ss < 0)
		return -EAGAIN;
	if (io->iovcnt > MAX_DESC)
		return -EINVAL;
	if (io->cdb_len) {
		memcpy(cdb, io->cdb, io->cdb_len);
		b.cdb_len = io->cdb_len;
		bytes = io->xfer_len;
	} else {
		ub_cdb_rw16(cdb, io->write, io->lba, io->nblocks);
		cdb[1] |= io->fua ? 0x08 : 0;
		b.cdb_len = 16;
		bytes = io->nblocks * p->block_size;
	}
	b.cdb = cdb;
	b.tag = s;
	b.lun = (uint16_t)p->url.lun;
	b.dir = !bytes ? UB_SRP_NONE : io->write ? UB_SRP_OUT : UB_SRP_IN;
	sl->nmr = 0;
	if (b.dir == UB_SRP_OUT && p->imm && io->iovcnt == 1 &&
	    SRP_IMM_OFF + bytes <= p->max_it_iu_len) {
		imm_mr = mr_get(p, io->iov[0].iov_base, io->iov[0].iov_len);
		if (!imm_mr)
			goto nomr;
		sl->mr[sl->nmr++] = imm_mr;
		b.imm_len = bytes;
		b.imm_off = SRP_IMM_OFF;
	} else if (b.dir != UB_SRP_NONE) {
		for (int i = 0; i < io->iovcnt; i++) {
			struct ibv_mr *mr = mr_get(p, io->iov[i].iov_base, io->iov[i].iov_len);
			if (!mr)
				goto nomr;
			sl->mr[sl->nmr++] = mr;
			d[i] = (struct ub_srp_buf){(uintptr_t)io->iov[i].iov_base, mr->rkey,
						   (uint32_t)io->iov[i].iov_len};
		}
		b.bufs = d;
		b.nbufs = (unsigned)io->iovcnt;
		/* the table is in the IU itself: where it would be fetched from */
		b.table_va = (uintptr_t)send_buf(p, (unsigned)ss) + UB_SRP_CMD_HDR_LEN + 20;
		b.table_key = p->iu_mr->rkey;
	}
	len = ub_srp_cmd(send_buf(p, (unsigned)ss), SRP_IT_IU_LEN, &b);
	if (!len || len > p->max_it_iu_len) {
		p->send_free[p->nsend_free++] = ss;
		for (unsigned i = 0; i < sl->nmr; i++)
			mr_put(p, sl->mr[i]);
		sl->nmr = 0;
		return -EINVAL;
	}
	sl->io = io;
	sl->t0 = ub_now_ns();
	io->eng_path = (struct ub_epath *)p;
	/* immediate data: the IU header from the send buffer, the data from the caller's */
	rc = post_send(p, (unsigned)ss, imm_mr ? SRP_IMM_OFF : (uint32_t)len,
		       imm_mr ? &io->iov[0] : NULL, imm_mr);
	if (rc) {
		fail(p, "%s: send failed: %s", p->url.dest_str, strerror(rc));
		return -EIO;
	}
	p->credits--;
	p->inflight++;
	return 0;
nomr:
	p->send_free[p->nsend_free++] = ss;
	for (unsigned i = 0; i < sl->nmr; i++)
		mr_put(p, sl->mr[i]);
	sl->nmr = 0;
	fail(p, "%s: cannot register the data buffer: %s", p->url.dest_str, strerror(errno));
	return -EIO;
}

static int free_slot(struct srp_path *p)
{
	for (unsigned i = 0; i < p->nslots; i++)
		if (!p->slots[i].io)
			return (int)i;
	return -1;
}

/* Send what waits while there are credits, slots and send buffers. */
static void drain_waitq(struct srp_path *p)
{
	while (p->wq_n && p->credits > 0 && p->nsend_free) {
		int s = free_slot(p);
		struct ub_io *io;

		if (s < 0)
			return;
		io = p->waitq[p->wq_head];
		p->wq_head = (p->wq_head + 1) % WAITQ;
		p->wq_n--;
		if (send_cmd(p, (unsigned)s, io) < 0) {
			io->result = UB_IO_PATH_ERROR;
			io->done(io);
		}
	}
}

static int queue_io(struct srp_path *p, struct ub_io *io)
{
	if (p->wq_n == WAITQ)
		return -EAGAIN;
	p->waitq[(p->wq_head + p->wq_n) % WAITQ] = io;
	p->wq_n++;
	drain_waitq(p);
	return 0;
}

/* ---- connecting ---- */

static void setup_done(struct ub_io *io);

static void setup_cmd(struct srp_path *p, enum phase ph)
{
	struct ub_io *io = &p->setup_io;

	memset(io, 0, sizeof(*io));
	p->phase = ph;
	if (ph == PH_TUR) {
		io->cdb_len = 6;
	} else {
		ub_cdb_readcap16(io->cdb, sizeof(p->readcap));
		io->cdb_len = 16;
		io->xfer_len = sizeof(p->readcap);
		p->setup_iov.iov_base = p->readcap;
		p->setup_iov.iov_len = sizeof(p->readcap);
		io->iov = &p->setup_iov;
		io->iovcnt = 1;
	}
	io->done = setup_done;
	io->owner = p;
	if (queue_io(p, io) < 0)
		fail(p, "%s: cannot send %s", p->url.dest_str,
		     ph == PH_TUR ? "TEST UNIT READY" : "READ CAPACITY");
}

static void setup_done(struct ub_io *io)
{
	struct srp_path *p = io->owner;
	const uint8_t *b = p->readcap;
	uint64_t last = 0;

	if (io->result == UB_IO_PATH_ERROR) {
		fail(p, "%s: connection lost while setting up", p->url.dest_str);
		return;
	}
	if (p->phase == PH_TUR) {
		if (io->result == UB_IO_SCSI_ERROR && io->sense_key == 6 && ++p->tur_tries < 16) {
			setup_cmd(p, PH_TUR);
			return;
		}
		if (io->result == UB_IO_SCSI_ERROR) {
			fail(p, "LUN %llu at %s refused TEST UNIT READY: %s, ASC/ASCQ %02x/%02x",
			     (unsigned long long)p->url.lun, p->url.dest_str,
			     ub_sense_key_str(io->sense_key), io->asc, io->ascq);
			return;
		}
		setup_cmd(p, PH_READCAP);
		return;
	}
	if (io->result != UB_IO_OK) {
		fail(p, "READ CAPACITY(16) at %s failed: %s, ASC/ASCQ %02x/%02x", p->url.dest_str,
		     ub_sense_key_str(io->sense_key), io->asc, io->ascq);
		return;
	}
	for (int i = 0; i < 8; i++)
		last = last << 8 | b[i];
	p->nblocks = last + 1;
	p->block_size = (uint32_t)b[8] << 24 | (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11];
	if (!p->block_size || p->block_size > (1u << 20)) {
		fail(p, "READ CAPACITY(16): implausible block size %u", p->block_size);
		return;
	}
	p->phase = PH_UP;
}

static int watch(struct srp_path *p, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -1;
	return epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void route_resolved(struct srp_path *p)
{
	struct ibv_qp_init_attr qa = {0};
	struct rdma_conn_param cp = {0};
	struct ub_srp_login lr = {0};
	uint8_t priv[UB_SRP_LOGIN_REQ_LEN];
	unsigned depth = p->url.queue_size;
	union ibv_gid gid;

	p->nslots = depth;
	p->nsend = depth + 4;
	p->nrecv = depth + 4;
	p->slots = calloc(p->nslots, sizeof(*p->slots));
	p->waitq = calloc(WAITQ, sizeof(*p->waitq));
	p->send_free = calloc(p->nsend, sizeof(*p->send_free));
	p->iu_len = (size_t)p->nsend * SRP_IT_IU_LEN + (size_t)p->nrecv * SRP_RECV_LEN;
	p->iu_mem = aligned_alloc(4096, (p->iu_len + 4095) & ~(size_t)4095);
	p->pd = ibv_alloc_pd(p->id->verbs);
	p->cc = ibv_create_comp_channel(p->id->verbs);
	if (!p->slots || !p->waitq || !p->send_free || !p->iu_mem || !p->pd || !p->cc) {
		fail(p, "%s: out of resources", p->url.dest_str);
		return;
	}
	if (watch(p, p->cc->fd)) {
		fail(p, "%s: epoll: %s", p->url.dest_str, strerror(errno));
		return;
	}
	p->cq = ibv_create_cq(p->id->verbs, (int)(p->nsend + p->nrecv), p, p->cc, 0);
	p->iu_mr = ibv_reg_mr(p->pd, p->iu_mem, p->iu_len,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!p->cq || !p->iu_mr || ibv_req_notify_cq(p->cq, 0)) {
		fail(p, "%s: completion queue / registration: %s", p->url.dest_str,
		     strerror(errno));
		return;
	}
	qa.send_cq = qa.recv_cq = p->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = p->nsend;
	qa.cap.max_recv_wr = p->nrecv;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(p->id, p->pd, &qa)) {
		fail(p, "%s: cannot create the queue pair: %s", p->url.dest_str, strerror(errno));
		return;
	}
	for (unsigned i = 0; i < p->nsend; i++)
		p->send_free[p->nsend_free++] = (int)i;
	for (unsigned i = 0; i < p->nrecv; i++)
		if (post_recv(p, i)) {
			fail(p, "%s: cannot post receives", p->url.dest_str);
			return;
		}
	/* SRP_LOGIN_REQ: initiator port id = initiator_ext || port GUID, as ib_srp builds it */
	memset(&gid, 0, sizeof(gid));
	ibv_query_gid(p->id->verbs, p->id->port_num, 0, &gid);
	put64(lr.initiator_port_id, p->url.initiator_ext);
	memcpy(lr.initiator_port_id + 8, gid.raw + 8, 8);
	put64(lr.target_port_id, p->url.id_ext);
	put64(lr.target_port_id + 8, p->url.ioc_guid);
	lr.it_iu_len = SRP_IT_IU_LEN;
	lr.multichannel = p->url.multichannel;
	lr.imm_off = p->url.imm ? SRP_IMM_OFF : 0;
	ub_srp_login_req(priv, &lr);
	cp.private_data = priv;
	cp.private_data_len = sizeof(priv);
	cp.responder_resources = 16; /* the target RDMA READs our data-out */
	cp.initiator_depth = 0;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_connect(p->id, &cp)) {
		fail(p, "%s: rdma_connect: %s", p->url.dest_str, strerror(errno));
		return;
	}
	p->phase = PH_LOGIN;
}

static void established(struct srp_path *p, const struct rdma_cm_event *ev)
{
	struct ub_srp_login_rsp rsp;

	if (!ub_srp_login_rsp(ev->param.conn.private_data, ev->param.conn.private_data_len,
			      &rsp)) {
		fail(p, "%s: connected without an SRP_LOGIN_RSP", p->url.dest_str);
		return;
	}
	if (rsp.max_ti_iu_len > SRP_RECV_LEN || rsp.max_it_iu_len < 64 || !rsp.req_lim) {
		fail(p, "%s: SRP_LOGIN_RSP with max_ti_iu_len %u, max_it_iu_len %u, req_lim %u",
		     p->url.dest_str, rsp.max_ti_iu_len, rsp.max_it_iu_len, rsp.req_lim);
		return;
	}
	p->credits = (int32_t)rsp.req_lim;
	p->max_it_iu_len = rsp.max_it_iu_len < SRP_IT_IU_LEN ? rsp.max_it_iu_len : SRP_IT_IU_LEN;
	p->imm = p->url.imm && rsp.imm;
	p->tur_tries = 0;
	setup_cmd(p, PH_TUR);
}

static void rejected(struct srp_path *p, const struct rdma_cm_event *ev)
{
	uint32_t reason;

	if (ub_srp_login_rej(ev->param.conn.private_data, ev->param.conn.private_data_len,
			     &reason))
		fail(p, "SRP login to %s rejected: reason 0x%08x", p->url.dest_str, reason);
	else
		fail(p, "connection to %s rejected (CM status %d)", p->url.dest_str, ev->status);
}

static void cm_events(struct srp_path *p)
{
	struct rdma_cm_event *ev;

	while (p->ech && !p->failed && !rdma_get_cm_event(p->ech, &ev)) {
		struct rdma_cm_event copy = *ev;
		uint8_t priv[256];

		if (copy.param.conn.private_data && copy.param.conn.private_data_len) {
			memcpy(priv, copy.param.conn.private_data,
			       copy.param.conn.private_data_len);
			copy.param.conn.private_data = priv;
		}
		rdma_ack_cm_event(ev);
		switch (copy.event) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			p->phase = PH_ROUTE;
			if (rdma_resolve_route(p->id, 2000))
				fail(p, "%s: rdma_resolve_route: %s", p->url.dest_str,
				     strerror(errno));
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			route_resolved(p);
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			established(p, &copy);
			break;
		case RDMA_CM_EVENT_REJECTED:
			rejected(p, &copy);
			break;
		case RDMA_CM_EVENT_ADDR_ERROR:
		case RDMA_CM_EVENT_ROUTE_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_CONNECT_ERROR:
			fail(p, "cannot connect to %s: %s", p->url.dest_str,
			     rdma_event_str(copy.event));
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			fail(p, "%s: %s", p->url.dest_str, rdma_event_str(copy.event));
			break;
		default:
			break;
		}
	}
}

static int srp_connect(struct ub_epath *ep)
{
	struct srp_path *p = P(ep);

	teardown(p);
	p->failed = false;
	p->err[0] = '\0';
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->ech = rdma_create_event_channel();
	if (p->epfd < 0 || !p->ech) {
		fail(p, "%s: no RDMA/CM: %s", p->url.dest_str, strerror(errno));
		teardown(p);
		return -1;
	}
	if (watch(p, p->ech->fd) || rdma_create_id(p->ech, &p->id, p, RDMA_PS_TCP) ||
	    rdma_resolve_addr(p->id, NULL, (struct sockaddr *)&p->url.dest, 2000)) {
		fail(p, "cannot connect to %s: %s", p->url.dest_str, strerror(errno));
		teardown(p);
		return -1;
	}
	p->phase = PH_ADDR;
	p->deadline =
	    ub_now_ns() +
	    (uint64_t)(p->o.connect_timeout_ms ? p->o.connect_timeout_ms : 5000) * 1000000;
	return 0;
}

/* ---- completions ---- */

static void on_rsp(struct srp_path *p, const uint8_t *b, uint32_t len)
{
	struct ub_srp_rsp v;
	uint64_t s;
	struct ub_io *io;

	if (!ub_srp_rsp(b, len, &v)) {
		fail(p, "%s: malformed SRP_RSP", p->url.dest_str);
		return;
	}
	p->credits += (int32_t)v.req_lim_delta;
	s = v.tag;
	if (s >= p->nslots || !p->slots[s].io) {
		fail(p, "%s: SRP_RSP for an unknown tag %llu", p->url.dest_str,
		     (unsigned long long)s);
		return;
	}
	io = p->slots[s].io;
	io->status = v.status;
	io->residual = 0;
	io->sense_key = io->asc = io->ascq = 0;
	if (v.di_under)
		io->residual = v.di_resid;
	else if (v.do_under)
		io->residual = v.do_resid;
	if (v.sense_len >= 14) {
		if ((v.sense[0] & 0x7f) >= 0x72) { /* descriptor format */
			io->sense_key = v.sense[1] & 0x0f;
			io->asc = v.sense[2];
			io->ascq = v.sense[3];
		} else {
			io->sense_key = v.sense[2] & 0x0f;
			io->asc = v.sense[12];
			io->ascq = v.sense[13];
		}
	}
	complete(p, (unsigned)s,
		 v.status ? UB_IO_SCSI_ERROR
			  : (!io->cdb_len && io->residual ? UB_IO_SCSI_ERROR : UB_IO_OK));
}

/* A request of the target's (credits, asynchronous event): answer it from a spare buffer. */
static void on_target_req(struct srp_path *p, const uint8_t *b, uint32_t len)
{
	uint64_t tag;
	uint32_t delta;
	uint8_t op;
	int ss;

	if (!ub_srp_target_req(b, len, &op, &tag, &delta))
		return;
	p->credits += (int32_t)delta;
	ss = take_send(p);
	if (ss < 0) {
		fail(p, "%s: no buffer to answer a target request", p->url.dest_str);
		return;
	}
	ub_srp_target_rsp(send_buf(p, (unsigned)ss), op, tag);
	if (post_send(p, (unsigned)ss, UB_SRP_TARGET_RSP_LEN, NULL, NULL))
		fail(p, "%s: send failed", p->url.dest_str);
}

static void cq_poll(struct srp_path *p)
{
	struct ibv_wc wc[16];
	int n;

	while (p->cq && !p->failed && (n = ibv_poll_cq(p->cq, 16, wc)) > 0) {
		for (int i = 0; i < n && !p->failed; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fail(p, "%s: completion error: %s", p->url.dest_str,
				     ibv_wc_status_str(wc[i].status));
				break;
			}
			if (wc[i].opcode == IBV_WC_SEND) {
				p->send_free[p->nsend_free++] = (int)wc[i].wr_id;
				continue;
			}
			/* a receive */
			const uint8_t *b = recv_buf(p, (unsigned)wc[i].wr_id);
			uint8_t op = wc[i].byte_len ? b[0] : 0xff;

			uint32_t reason = 0;

			if (op == UB_SRP_RSP)
				on_rsp(p, b, wc[i].byte_len);
			else if (op == UB_SRP_CRED_REQ || op == UB_SRP_AER_REQ)
				on_target_req(p, b, wc[i].byte_len);
			else if (op == UB_SRP_T_LOGOUT)
				fail(p, "%s: target logout (reason 0x%08x)", p->url.dest_str,
				     ub_srp_t_logout(b, wc[i].byte_len, &reason) ? reason : 0);
			else
				fail(p, "%s: unexpected IU type 0x%02x", p->url.dest_str, op);
			if (!p->failed && post_recv(p, (unsigned)wc[i].wr_id))
				fail(p, "%s: cannot post a receive", p->url.dest_str);
		}
	}
	if (!p->failed)
		drain_waitq(p);
}

static void cq_events(struct srp_path *p)
{
	struct ibv_cq *cq;
	void *ctx;

	while (p->cc && !ibv_get_cq_event(p->cc, &cq, &ctx)) {
		if (++p->cq_unacked >= 64) {
			ibv_ack_cq_events(cq, p->cq_unacked);
			p->cq_unacked = 0;
		}
		ibv_req_notify_cq(cq, 0);
	}
	cq_poll(p);
}

static void srp_service(struct ub_epath *ep, short revents)
{
	struct srp_path *p = P(ep);
	uint64_t now = ub_now_ns();

	(void)revents;
	if (!p->id)
		return;
	cm_events(p);
	if (!p->failed)
		cq_events(p);
	if (!p->failed && p->phase != PH_UP && now > p->deadline)
		fail(p, "cannot connect to %s: timed out", p->url.dest_str);
	now = ub_now_ns(); /* commands sent just now must not look older than they are */
	if (!p->failed && p->o.io_timeout_s)
		for (unsigned i = 0; i < p->nslots; i++)
			if (p->slots[i].io && now > p->slots[i].t0 &&
			    now - p->slots[i].t0 > (uint64_t)p->o.io_timeout_s * 1000000000ull) {
				fail(p, "%s: command timed out", p->url.dest_str);
				break;
			}
	if (p->failed)
		teardown(p);
}

/* ---- the rest of the interface ---- */

static void srp_disconnect(struct ub_epath *ep, const char *why)
{
	struct srp_path *p = P(ep);

	if (why && p->id)
		snprintf(p->err, sizeof(p->err), "%s", why);
	teardown(p);
}

static enum ub_path_state srp_state(struct ub_epath *ep)
{
	struct srp_path *p = P(ep);

	if (!p->id)
		return UB_PS_DOWN;
	return p->phase == PH_UP ? UB_PS_UP : UB_PS_CONNECTING;
}

static const char *srp_last_error(struct ub_epath *ep)
{
	return P(ep)->err;
}

static int srp_pollfd(struct ub_epath *ep, struct pollfd *pfd)
{
	struct srp_path *p = P(ep);

	if (p->epfd < 0)
		return 0;
	pfd->fd = p->epfd;
	pfd->events = POLLIN;
	pfd->revents = 0;
	return 1;
}

static int srp_submit(struct ub_epath *ep, struct ub_io *io)
{
	struct srp_path *p = P(ep);

	if (!p->id || p->phase != PH_UP || p->failed)
		return -EAGAIN;
	if (io->iovcnt > MAX_DESC)
		return -EINVAL;
	return queue_io(p, io);
}

static void srp_geometry(struct ub_epath *ep, uint32_t *bs, uint64_t *nblocks)
{
	*bs = P(ep)->block_size;
	*nblocks = P(ep)->nblocks;
}

static unsigned srp_inflight(struct ub_epath *ep)
{
	return P(ep)->inflight + P(ep)->wq_n;
}

const struct ub_engine ub_engine_srp = {
    .name = "srp",
    .create = srp_create,
    .destroy = srp_destroy,
    .connect = srp_connect,
    .disconnect = srp_disconnect,
    .state = srp_state,
    .last_error = srp_last_error,
    .pollfd = srp_pollfd,
    .service = srp_service,
    .submit = srp_submit,
    .geometry = srp_geometry,
    .inflight = srp_inflight,
};
