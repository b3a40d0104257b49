/* Null engine (fio's ioengine=null): every command completes at once without moving data.
 * It measures utgt-bench's own cost per I/O, and runs fio's null-engine job files as they
 * are.  The LU it pretends to be has 4 KiB blocks and the job's size (1 GiB when none). */
#include "initiator/engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define NULL_BS 4096u

struct null_path {
	struct ub_eng_opts o;
	int efd;
	struct ub_io **q; /* submitted, completed on the next service() */
	unsigned n, cap;
	unsigned inflight;
	char err[128];
};

#define N(ep) ((struct null_path *)(ep))

static struct ub_epath *null_create(const char *target, const struct ub_eng_opts *o, char *err,
				    size_t errlen)
{
	struct null_path *p = calloc(1, sizeof(*p));

	(void)target;
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->o = *o;
	p->efd = -1;
	return (struct ub_epath *)p;
}

static void null_disconnect(struct ub_epath *ep, const char *why)
{
	struct null_path *p = N(ep);

	if (why)
		snprintf(p->err, sizeof(p->err), "%s", why);
	while (p->n) {
		struct ub_io *io = p->q[--p->n];
		p->inflight--;
		io->result = UB_IO_PATH_ERROR;
		io->done(io);
	}
	if (p->efd >= 0)
		close(p->efd);
	p->efd = -1;
}

static void null_destroy(struct ub_epath *ep)
{
	null_disconnect(ep, NULL);
	free(N(ep)->q);
	free(ep);
}

static int null_connect(struct ub_epath *ep)
{
	struct null_path *p = N(ep);

	p->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->efd < 0) {
		snprintf(p->err, sizeof(p->err), "eventfd: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static enum ub_path_state null_state(struct ub_epath *ep)
{
	return N(ep)->efd >= 0 ? UB_PS_UP : UB_PS_DOWN;
}

static const char *null_last_error(struct ub_epath *ep)
{
	return N(ep)->err;
}

static int null_pollfd(struct ub_epath *ep, struct pollfd *pfd)
{
	if (N(ep)->efd < 0)
		return 0;
	pfd->fd = N(ep)->efd;
	pfd->events = POLLIN;
	pfd->revents = 0;
	return 1;
}

static void null_service(struct ub_epath *ep, short revents)
{
	struct null_path *p = N(ep);
	uint64_t v;
	unsigned n = p->n;

	(void)revents;
	if (p->efd < 0 || !n)
		return;
	if (read(p->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	/* done() may submit again: complete only what was queued before */
	struct ub_io **batch = malloc(n * sizeof(*batch));
	if (!batch)
		return;
	memcpy(batch, p->q, n * sizeof(*batch));
	memmove(p->q, p->q + n, (p->n - n) * sizeof(*batch));
	p->n -= n;
	for (unsigned i = 0; i < n; i++) {
		p->inflight--;
		batch[i]->result = UB_IO_OK;
		batch[i]->residual = 0;
		batch[i]->done(batch[i]);
	}
	free(batch);
}

static int null_submit(struct ub_epath *ep, struct ub_io *io)
{
	struct null_path *p = N(ep);
	uint64_t one = 1;

	if (io->cdb_len)
		return -ENOTSUP;
	if (p->efd < 0)
		return -EAGAIN;
	if (p->n == p->cap) {
		unsigned cap = p->cap ? p->cap * 2 : 64;
		struct ub_io **q = realloc(p->q, cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		p->q = q;
		p->cap = cap;
	}
	p->q[p->n++] = io;
	p->inflight++;
	io->eng_path = ep;
	if (write(p->efd, &one, sizeof(one)) < 0)
		return -errno;
	return 0;
}

static void null_geometry(struct ub_epath *ep, uint32_t *bs, uint64_t *nblocks)
{
	uint64_t size = N(ep)->o.null_size ? N(ep)->o.null_size : 1ull << 30;

	*bs = NULL_BS;
	*nblocks = size / NULL_BS ? size / NULL_BS : 1;
}

static unsigned null_inflight(struct ub_epath *ep)
{
	return N(ep)->inflight;
}

const struct ub_engine ub_engine_null = {
    .name = "null",
    .native_ops = true,
    .create = null_create,
    .destroy = null_destroy,
    .connect = null_connect,
    .disconnect = null_disconnect,
    .state = null_state,
    .last_error = null_last_error,
    .pollfd = null_pollfd,
    .service = null_service,
    .submit = null_submit,
    .geometry = null_geometry,
    .inflight = null_inflight,
};
