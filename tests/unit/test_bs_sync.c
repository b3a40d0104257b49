/* bs_submit_sync: waits for a completion that arrives inline or from another thread, returns
 * its status, and leaves the caller's cb/priv as they were. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <time.h>

#include "scsi/backstore/backstore.h"

/* A store that completes from a thread of its own, after a delay. */
struct late {
	pthread_t th;
	struct bs_io *io;
	pthread_t completer;
	int calls;
};

static void *late_main(void *arg)
{
	struct late *l = arg;

	nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	l->completer = pthread_self();
	l->io->cb(l->io, BS_ENOSPC);
	return NULL;
}

static void late_submit(struct backstore *bs, struct bs_io *io)
{
	struct late *l = bs->priv;

	l->calls++;
	l->io = io;
	pthread_create(&l->th, NULL, late_main, l);
}

static void inline_submit(struct backstore *bs, struct bs_io *io)
{
	(void)bs;
	io->cb(io, io->op == BS_READ ? BS_OK : BS_EIO);
}

static void never_cb(struct bs_io *io, enum bs_status st)
{
	(void)io;
	(void)st;
	cr_assert_fail("the caller's callback must not run");
}

Test(bs_sync, waits_for_a_completion_from_another_thread)
{
	static const struct backstore_ops ops = {.name = "late", .submit = late_submit};
	struct late l = {0};
	struct backstore bs = {.ops = &ops, .priv = &l};
	int mine;
	struct bs_io io = {.op = BS_WRITE, .cb = never_cb, .priv = &mine};

	cr_assert_eq(bs_submit_sync(&bs, &io), BS_ENOSPC);
	cr_assert_eq(l.calls, 1);
	cr_assert_not(pthread_equal(l.completer, pthread_self()));
	cr_assert_eq(io.cb, never_cb, "callback restored");
	cr_assert_eq(io.priv, &mine, "priv restored");
	pthread_join(l.th, NULL);
}

Test(bs_sync, inline_completion)
{
	static const struct backstore_ops ops = {.name = "inline", .submit = inline_submit};
	struct backstore bs = {.ops = &ops};
	struct bs_io io = {.op = BS_READ};

	cr_assert_eq(bs_submit_sync(&bs, &io), BS_OK);
	io.op = BS_WRITE;
	cr_assert_eq(bs_submit_sync(&bs, &io), BS_EIO);
	cr_assert_null(io.cb);
}
