/* bs_submit_sync: run one backstore verb to completion on the calling thread.  For slow-path
 * commands (XCOPY, PR state, SANITIZE) that run on a core worker and may block. */
#include <pthread.h>
#include <stdbool.h>

#include "scsi/backstore/backstore.h"

struct bs_waiter {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	enum bs_status st;
};

static void bs_sync_done(struct bs_io *io, enum bs_status st)
{
	struct bs_waiter *w = io->priv;

	pthread_mutex_lock(&w->mu);
	w->st = st;
	w->done = true;
	pthread_cond_signal(&w->cv);
	/* The waiter may free w (its stack frame) as soon as we unlock: touch nothing after. */
	pthread_mutex_unlock(&w->mu);
}

enum bs_status bs_submit_sync(struct backstore *bs, struct bs_io *io)
{
	struct bs_waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, BS_OK};
	void (*cb)(struct bs_io *, enum bs_status) = io->cb;
	void *priv = io->priv;
	bool waited = io->waited;

	io->cb = bs_sync_done;
	io->priv = &w;
	io->waited = true;
	bs->ops->submit(bs, io);
	pthread_mutex_lock(&w.mu);
	while (!w.done)
		pthread_cond_wait(&w.cv, &w.mu);
	pthread_mutex_unlock(&w.mu);
	pthread_cond_destroy(&w.cv);
	pthread_mutex_destroy(&w.mu);
	/* The caller's callback is not run: the result is the return value. */
	io->cb = cb;
	io->priv = priv;
	io->waited = waited;
	return w.st;
}
