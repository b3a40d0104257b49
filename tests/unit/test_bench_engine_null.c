/* utgt-bench null engine (engine_null.c): completes later, never inside submit; refuses
 * pass-through; pretends to be as large as the job's size. */
#include <criterion/criterion.h>

#include "initiator/engine.h"

static int done;

static void cb(struct ub_io *io)
{
	(void)io;
	done++;
}

Test(bench_engine_null, completes_on_service_not_in_submit)
{
	struct ub_eng_opts o = {.null_size = 1 << 20};
	char err[128];
	struct ub_epath *p = ub_engine_null.create("", &o, err, sizeof(err));
	struct ub_io io[3] = {{.done = cb}, {.done = cb}, {.done = cb, .cdb_len = 6}};
	struct pollfd pfd;
	uint32_t bs;
	uint64_t nb;

	cr_assert_not_null(p);
	cr_assert_eq(ub_engine_null.connect(p), 0);
	cr_assert_eq(ub_engine_null.state(p), UB_PS_UP);
	ub_engine_null.geometry(p, &bs, &nb);
	cr_assert_eq(bs * nb, 1u << 20);
	done = 0;
	cr_assert_eq(ub_engine_null.submit(p, &io[0]), 0);
	cr_assert_eq(ub_engine_null.submit(p, &io[1]), 0);
	cr_assert_lt(ub_engine_null.submit(p, &io[2]), 0, "no pass-through");
	cr_assert_eq(done, 0);
	cr_assert_eq(ub_engine_null.inflight(p), 2);
	cr_assert_eq(ub_engine_null.pollfd(p, &pfd), 1);
	cr_assert_eq(poll(&pfd, 1, 1000), 1, "the fd says completions wait");
	ub_engine_null.service(p, pfd.revents);
	cr_assert_eq(done, 2);
	cr_assert_eq(io[0].result, UB_IO_OK);
	ub_engine_null.destroy(p);
}
