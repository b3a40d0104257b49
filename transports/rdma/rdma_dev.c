/* One verbs device as one event thread uses it: protection domain, completion channel (watched
 * by the thread's epoll), data pool, and the shared receive queue when configured.  Made when
 * the first connection on the device is accepted; gone with its last connection (or at
 * shutdown), so an idle daemon holds nothing a device removal would wait for. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>

#include "common/ut_log.h"
#include "transports/rdma/rdma_int.h"

#define POOL_SLAB (8u << 20)

static void srq_destroy(struct rdma_srq *q)
{
	if (!q)
		return;
	if (q->srq)
		ibv_destroy_srq(q->srq);
	if (q->mr)
		ibv_dereg_mr(q->mr);
	if (q->mem)
		munmap(q->mem, (size_t)q->depth * q->size);
	free(q->bufs);
	free(q);
}

void rdma_srq_repost(struct rdma_srq *q, struct rdma_buf *b)
{
	struct ibv_sge sge = {.addr = (uintptr_t)b->data, .length = b->size, .lkey = b->lkey};
	struct ibv_recv_wr wr = {.wr_id = rdma_wrid_recv(b), .sg_list = &sge, .num_sge = 1}, *bad;

	if (q->dev->removing)
		return;
	if (ibv_post_srq_recv(q->srq, &wr, &bad))
		rdma_log(q->dev->t->srv, LOG_ERR, "%s: SRQ receive post failed", q->dev->name);
}

static struct rdma_srq *srq_create(struct rdma_dev *d, uint32_t depth, uint32_t size)
{
	struct ibv_srq_init_attr ia = {0};
	struct rdma_srq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->dev = d;
	if (d->attr.max_srq_wr > 0 && depth > (uint32_t)d->attr.max_srq_wr)
		depth = (uint32_t)d->attr.max_srq_wr;
	q->depth = depth;
	q->size = size;
	q->bufs = calloc(depth, sizeof(*q->bufs));
	q->mem = mmap(NULL, (size_t)depth * size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!q->bufs || q->mem == MAP_FAILED) {
		q->mem = NULL;
		goto fail;
	}
	q->mr = ibv_reg_mr(d->pd, q->mem, (size_t)depth * size, IBV_ACCESS_LOCAL_WRITE);
	if (!q->mr)
		goto fail;
	ia.attr.max_wr = depth;
	ia.attr.max_sge = 1;
	q->srq = ibv_create_srq(d->pd, &ia);
	if (!q->srq)
		goto fail;
	for (uint32_t i = 0; i < depth; i++) {
		struct rdma_buf *b = &q->bufs[i];

		b->data = q->mem + (size_t)i * size;
		b->size = size;
		b->lkey = q->mr->lkey;
		b->srq = q;
		b->recv = true;
		rdma_srq_repost(q, b);
	}
	return q;
fail:
	srq_destroy(q);
	return NULL;
}

void rdma_dev_destroy(struct rdma_dev *d)
{
	struct rdma_thread *t = d->t;

	for (struct rdma_dev **pp = &t->devs; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	}
	srq_destroy(d->srq);
	rdma_pool_destroy(d->pool);
	if (d->cc) {
		ut_thread_unwatch(t->ut, &d->watch);
		ibv_destroy_comp_channel(d->cc);
	}
	if (d->pd && ibv_dealloc_pd(d->pd))
		rdma_log(t->srv, LOG_WARNING, "%s: protection domain still in use at release",
			 d->name);
	rdma_log(t->srv, d->removing ? LOG_INFO : LOG_DEBUG, "thread %u: device %s released%s",
		 t->idx, d->name, d->removing ? " (removed)" : "");
	free(d);
}

static void comp_ready(struct ut_watch *w, uint32_t events)
{
	struct rdma_dev *d = (struct rdma_dev *)((char *)w - offsetof(struct rdma_dev, watch));

	(void)events;
	rdma_thread_comp_seen(d->t);
	rdma_dev_comp_event(d);
}

struct rdma_dev *rdma_dev_get(struct rdma_thread *t, struct ibv_context *verbs)
{
	const struct rdma_srv_cfg *cfg = &t->srv->cfg;
	struct rdma_dev *d;
	int fl;

	for (d = t->devs; d; d = d->next)
		if (d->verbs == verbs && !d->removing)
			return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->t = t;
	d->verbs = verbs;
	snprintf(d->name, sizeof(d->name), "%s", ibv_get_device_name(verbs->device));
	d->next = t->devs;
	t->devs = d;
	if (ibv_query_device(verbs, &d->attr))
		goto fail;
	d->pd = ibv_alloc_pd(verbs);
	if (!d->pd)
		goto fail;
	d->cc = ibv_create_comp_channel(verbs);
	if (!d->cc)
		goto fail;
	fl = fcntl(d->cc->fd, F_GETFL);
	if (fl < 0 || fcntl(d->cc->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		goto fail;
	d->watch.fn = comp_ready;
	d->watch.fd = d->cc->fd;
	if (ut_thread_watch(t->ut, &d->watch, EPOLLIN))
		goto fail;
	d->pool = rdma_pool_create(d->pd, cfg->pool_chunk, POOL_SLAB, cfg->pool_max);
	if (!d->pool)
		goto fail;
	if (cfg->srq) {
		d->srq = srq_create(d, cfg->srq_depth, cfg->srq_buf_size);
		if (!d->srq)
			goto fail;
	}
	rdma_log(t->srv, LOG_INFO,
		 "thread %u: device %s: max_qp_wr %d, max_sge %d, max_qp_init_rd_atom %d%s", t->idx,
		 d->name, d->attr.max_qp_wr, d->attr.max_sge, d->attr.max_qp_init_rd_atom,
		 d->srq ? ", shared receive queue" : "");
	return d;
fail:
	rdma_log(t->srv, LOG_ERR, "device %s: setup failed: %s", d->name,
		 strerror(errno ? errno : ENOMEM));
	rdma_dev_destroy(d);
	return NULL;
}

void rdma_dev_put(struct rdma_dev *d)
{
	if (d->nconns)
		d->nconns--;
	/* Nothing is kept on an idle device: a device being removed (rdma link delete; drivers
	 * without disassociation wait for every user to let go) is never held up by us. */
	if (!d->nconns && !d->busy)
		rdma_dev_destroy(d);
}

/* The completion channel is readable: one event is taken, its queue polled (the thread's
 * poller re-arms it at the end of the round, rdma_conn_settle).  One per readiness: the
 * channel stays readable while more are queued, and reading until EAGAIN would cost a
 * system call on every wake-up. */
void rdma_dev_comp_event(struct rdma_dev *d)
{
	struct ibv_cq *cq;
	void *ctx;

	d->busy++;
	if (!ibv_get_cq_event(d->cc, &cq, &ctx)) {
		struct rdma_conn *c = ctx;

		c->busy++;
		rdma_conn_cq_event(c, cq);
		c->busy--;
		rdma_conn_maybe_free(c);
	}
	d->busy--;
	if (!d->nconns)
		rdma_dev_destroy(d);
}
