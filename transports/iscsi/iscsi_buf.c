/* Data buffers for commands, cached per worker thread.  A 1 MiB read into freshly mmapped
 * memory spends more time in page faults than in copying; reusing page-aligned buffers by
 * power-of-two size class keeps them faulted in.  Only the owning worker touches its cache,
 * so there is no lock.  The cache is bounded per class; larger buffers go straight to the
 * allocator. */
#include <stdlib.h>

#include "transports/iscsi/iscsi_int.h"

#define MIN_SHIFT 12 /* 4 KiB */

struct freebuf {
	struct freebuf *next;
};

static int size_class(size_t len, size_t *cap)
{
	int c = 0;
	size_t sz = (size_t)1 << MIN_SHIFT;

	while (sz < len) {
		sz <<= 1;
		c++;
	}
	*cap = sz;
	return c;
}

void *iscsit_buf_get(struct iscsit_worker *w, size_t len, size_t *cap)
{
	int c = size_class(len ? len : 1, cap);
	void *p;

	if (c < ISCSIT_BUF_CLASSES && w && w->bufs[c]) {
		struct freebuf *f = w->bufs[c];

		w->bufs[c] = f->next;
		w->nbufs[c]--;
		w->cached -= *cap;
		return f;
	}
	if (c >= ISCSIT_BUF_CLASSES)
		*cap = (len + 4095) & ~(size_t)4095;
	if (posix_memalign(&p, 4096, *cap))
		return NULL;
	return p;
}

void iscsit_buf_put(struct iscsit_worker *w, void *p, size_t cap)
{
	size_t c2;
	int c;

	if (!p)
		return;
	c = size_class(cap, &c2);
	/* keep up to 64 buffers per class, ISCSIT_BUF_CACHE_MAX bytes in all: freed memory
	 * held for reuse is outside the memory budget, so it is bounded on its own */
	if (w && c < ISCSIT_BUF_CLASSES && c2 == cap && w->nbufs[c] < 64 &&
	    w->cached + cap <= ISCSIT_BUF_CACHE_MAX) {
		struct freebuf *f = p;

		f->next = w->bufs[c];
		w->bufs[c] = f;
		w->nbufs[c]++;
		w->cached += cap;
		return;
	}
	free(p);
}

void iscsit_buf_drain(struct iscsit_worker *w)
{
	for (int c = 0; c < ISCSIT_BUF_CLASSES; c++) {
		while (w->bufs[c]) {
			struct freebuf *f = w->bufs[c];

			w->bufs[c] = f->next;
			free(f);
		}
		w->nbufs[c] = 0;
	}
	w->cached = 0;
}
