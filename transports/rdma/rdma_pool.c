/* Registered data pool (see rdma_pool.h). */
#include "transports/rdma/rdma_pool.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct slab {
	uint8_t *mem;
	uint64_t len;
	struct ibv_mr *mr;
	uint32_t first; /* pool-wide index of its first chunk */
	uint32_t nchunks;
};

struct rdma_pool {
	struct ibv_pd *pd;
	uint32_t chunk;
	uint64_t slab_bytes;
	uint64_t cap;
	struct slab *slabs;
	unsigned nslabs;
	uint32_t *free; /* stack of free chunk indexes */
	uint32_t nfree;
	uint32_t nchunks;
	struct rdma_pool_waiter *wq_head, *wq_tail;
};

struct rdma_pool *rdma_pool_create(struct ibv_pd *pd, uint32_t chunk, uint64_t slab, uint64_t cap)
{
	struct rdma_pool *p;

	if (!chunk || slab < chunk || cap < chunk)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pd = pd;
	p->chunk = chunk;
	p->slab_bytes = slab - slab % chunk;
	p->cap = cap;
	return p;
}

void rdma_pool_destroy(struct rdma_pool *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->nslabs; i++) {
		if (p->slabs[i].mr)
			ibv_dereg_mr(p->slabs[i].mr);
		munmap(p->slabs[i].mem, p->slabs[i].len);
	}
	free(p->slabs);
	free(p->free);
	free(p);
}

static int add_slab(struct rdma_pool *p)
{
	uint64_t len = p->slab_bytes;
	uint64_t have = (uint64_t)p->nchunks * p->chunk;
	struct slab *ns, *s;
	uint32_t *nf, n;

	if (have + p->chunk > p->cap)
		return -ENOSPC;
	if (have + len > p->cap)
		len = (p->cap - have) / p->chunk * p->chunk;
	n = (uint32_t)(len / p->chunk);
	ns = realloc(p->slabs, (p->nslabs + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	p->slabs = ns;
	nf = realloc(p->free, (p->nchunks + n) * sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	p->free = nf;
	s = &p->slabs[p->nslabs];
	memset(s, 0, sizeof(*s));
	s->mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->mem == MAP_FAILED)
		return -ENOMEM;
	s->len = len;
	if (p->pd) {
		s->mr = ibv_reg_mr(p->pd, s->mem, len, IBV_ACCESS_LOCAL_WRITE);
		if (!s->mr) {
			int e = errno ? errno : ENOMEM;
			munmap(s->mem, len);
			return -e;
		}
	}
	s->first = p->nchunks;
	s->nchunks = n;
	/* pushed high to low, so allocation walks the slab upwards and chunks merge */
	for (uint32_t i = n; i-- > 0;)
		p->free[p->nfree++] = s->first + i;
	p->nchunks += n;
	p->nslabs++;
	return 0;
}

int rdma_pool_grow(struct rdma_pool *p, uint64_t bytes)
{
	uint64_t target = (uint64_t)p->nchunks * p->chunk + bytes;

	if (target > p->cap)
		target = p->cap;
	while ((uint64_t)p->nchunks * p->chunk + p->chunk <= target) {
		int rc = add_slab(p);
		if (rc)
			return rc == -ENOSPC ? 0 : rc;
	}
	return 0;
}

static const struct slab *slab_of(const struct rdma_pool *p, uint32_t idx)
{
	for (unsigned i = 0; i < p->nslabs; i++)
		if (idx >= p->slabs[i].first && idx < p->slabs[i].first + p->slabs[i].nchunks)
			return &p->slabs[i];
	return NULL;
}

static uint32_t chunks_for(const struct rdma_pool *p, uint64_t len)
{
	return (uint32_t)((len + p->chunk - 1) / p->chunk);
}

/* Take need chunks off the free stack into segs (room for need), merging neighbours. */
static int take(struct rdma_pool *p, uint64_t len, uint32_t need, struct rdma_seg *segs)
{
	int n = 0;
	uint32_t prev = 0;
	const struct slab *ps = NULL;

	for (uint32_t i = 0; i < need; i++) {
		uint32_t idx = p->free[--p->nfree];
		const struct slab *s = slab_of(p, idx);
		uint32_t clen = i + 1 == need ? (uint32_t)(len - (uint64_t)i * p->chunk) : p->chunk;

		if (n && s == ps && idx == prev + 1) {
			segs[n - 1].len += clen;
		} else {
			segs[n].addr = s->mem + (uint64_t)(idx - s->first) * p->chunk;
			segs[n].len = clen;
			segs[n].lkey = s->mr ? s->mr->lkey : 0;
			n++;
		}
		prev = idx;
		ps = s;
	}
	return n;
}

int rdma_pool_get(struct rdma_pool *p, uint64_t len, struct rdma_seg *segs, unsigned max,
		  struct rdma_pool_waiter *w)
{
	uint32_t need;

	if (!len)
		return 0;
	need = chunks_for(p, len);
	if (len > p->cap - p->cap % p->chunk || need > max)
		return -E2BIG;
	if (!p->wq_head && need > p->nfree && (uint64_t)p->nchunks * p->chunk < p->cap) {
		/* short of free chunks and below the cap: grow rather than wait */
		int rc = rdma_pool_grow(p, (uint64_t)(need - p->nfree) * p->chunk);
		if (rc)
			return rc;
	}
	if (p->wq_head || need > p->nfree) {
		if (w) {
			w->len = len;
			w->segs = segs;
			w->max = max;
			w->next = NULL;
			if (p->wq_tail)
				p->wq_tail->next = w;
			else
				p->wq_head = w;
			p->wq_tail = w;
		}
		return -EAGAIN;
	}
	return take(p, len, need, segs);
}

void rdma_pool_cancel(struct rdma_pool *p, struct rdma_pool_waiter *w)
{
	struct rdma_pool_waiter **pp, *prev = NULL;

	for (pp = &p->wq_head; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			if (p->wq_tail == w)
				p->wq_tail = prev;
			w->next = NULL;
			return;
		}
	}
}

void rdma_pool_put(struct rdma_pool *p, const struct rdma_seg *segs, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *a = segs[i].addr;
		uint32_t k = chunks_for(p, segs[i].len);

		for (unsigned j = 0; j < p->nslabs; j++) {
			const struct slab *s = &p->slabs[j];
			if (a >= s->mem && a < s->mem + s->len) {
				uint32_t idx =
				    s->first + (uint32_t)((uint64_t)(a - s->mem) / p->chunk);
				for (uint32_t c = k; c-- > 0;)
					p->free[p->nfree++] = idx + c;
				break;
			}
		}
	}
	while (p->wq_head && chunks_for(p, p->wq_head->len) <= p->nfree) {
		struct rdma_pool_waiter *w = p->wq_head;
		int got;

		p->wq_head = w->next;
		if (!p->wq_head)
			p->wq_tail = NULL;
		w->next = NULL;
		got = take(p, w->len, chunks_for(p, w->len), w->segs);
		w->ready(w, got);
	}
}

uint64_t rdma_pool_capacity(const struct rdma_pool *p)
{
	return (uint64_t)p->nchunks * p->chunk;
}

uint64_t rdma_pool_free_bytes(const struct rdma_pool *p)
{
	return (uint64_t)p->nfree * p->chunk;
}

uint32_t rdma_pool_chunk(const struct rdma_pool *p)
{
	return p->chunk;
}
