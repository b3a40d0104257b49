/* The per-command context: attached to the task, freed with its range lock released (so the
 * next waiter runs), and the range-locked worker path of a real command. */
#include "tests/unit/sbc_test.h"

static int resumed;

static void on_resume(struct sbc_cmd *c)
{
	(void)c;
	resumed++;
}

Test(cmd, free_releases_the_lock_and_detaches)
{
	struct sbc_fx fx;
	struct scsi_task *t = calloc(1, sizeof(*t)), *u = calloc(1, sizeof(*u));
	struct sbc_cmd *a, *b;

	fx_init(&fx, "ramdisk");
	t->core.dev = u->core.dev = fx.dev;
	a = sbc_cmd_new(t);
	b = sbc_cmd_new(u);
	cr_assert(t->core.ctx == a && a->t == t && a->dev == fx.dev && a->io.priv == a);
	cr_assert(sbc_range_lock(a, 0, 4, true, on_resume));
	resumed = 0;
	cr_assert_not(sbc_range_lock(b, 3, 1, false, on_resume));
	cr_assert_not_null(u->core.cancel, "a parked task can be cancelled by the core");
	sbc_cmd_free(a);
	cr_assert_null(t->core.ctx);
	cr_assert_eq(resumed, 1);
	sbc_cmd_free(b);
	cr_assert_null(u->core.ctx);
	free(t);
	free(u);
	fx_fini(&fx);
}

Test(cmd, cancel_takes_a_parked_task_off_the_queue)
{
	struct sbc_fx fx;
	struct scsi_task *t = calloc(1, sizeof(*t)), *u = calloc(1, sizeof(*u));
	struct sbc_cmd *a, *b;

	fx_init(&fx, "ramdisk");
	t->core.dev = u->core.dev = fx.dev;
	a = sbc_cmd_new(t);
	b = sbc_cmd_new(u);
	cr_assert(sbc_range_lock(a, 0, 4, false, on_resume));
	cr_assert_not(sbc_range_lock(b, 0, 1, true, on_resume));
	cr_assert(u->core.cancel(u), "was parked");
	cr_assert_null(u->core.ctx, "the context went with it");
	cr_assert_eq(sbc_rangelock_waiters(fx.dev), 0);
	cr_assert_not(u->core.cancel(u), "no longer parked");
	resumed = 0;
	sbc_cmd_free(a);
	cr_assert_eq(resumed, 0, "a cancelled task is never resumed");
	free(t);
	free(u);
	fx_fini(&fx);
}
