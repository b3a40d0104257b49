/* The CmdSN window of a session: in-order acceptance, out-of-window drops, queueing behind
 * gaps, MaxCmdSN following QueuedCommands and answered commands, serial-number wrap. */
#include <criterion/criterion.h>
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

static void sess_init(struct iscsit_session *s, uint32_t exp, uint32_t queued)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->exp_cmd_sn = exp;
	s->queued_cmds = queued;
}

Test(iscsi_session, window_accept_drop)
{
	struct iscsit_session s;

	sess_init(&s, 10, 4);
	cr_assert_eq(iscsit_session_max_cmd_sn(&s), 13);
	cr_assert_eq(iscsit_cmdsn_check(&s, 9, false, true), CMDSN_DROP, "too low");
	cr_assert_eq(iscsit_cmdsn_check(&s, 14, false, true), CMDSN_DROP, "too high");
	cr_assert_eq(iscsit_cmdsn_check(&s, 10, false, true), CMDSN_ACCEPT);
	cr_assert_eq(iscsit_session_exp_cmd_sn(&s), 11);
	cr_assert_eq(iscsit_session_max_cmd_sn(&s), 13, "one slot taken until answered");
	iscsit_cmdsn_release(&s);
	cr_assert_eq(iscsit_session_max_cmd_sn(&s), 14);
	/* a duplicate of an accepted CmdSN is ignored */
	cr_assert_eq(iscsit_cmdsn_check(&s, 10, false, true), CMDSN_DROP);
}

Test(iscsi_session, immediate_does_not_advance)
{
	struct iscsit_session s;

	sess_init(&s, 10, 4);
	cr_assert_eq(iscsit_cmdsn_check(&s, 10, true, true), CMDSN_ACCEPT);
	cr_assert_eq(iscsit_session_exp_cmd_sn(&s), 10);
	cr_assert_eq(iscsit_session_max_cmd_sn(&s), 13);
	/* non-counting PDUs (NOP-Out, Text, ...) advance ExpCmdSN but take no slot */
	cr_assert_eq(iscsit_cmdsn_check(&s, 10, false, false), CMDSN_ACCEPT);
	cr_assert_eq(iscsit_session_exp_cmd_sn(&s), 11);
	cr_assert_eq(iscsit_session_max_cmd_sn(&s), 14);
}

Test(iscsi_session, full_window_closes)
{
	struct iscsit_session s;

	sess_init(&s, 1, 2);
	cr_assert_eq(iscsit_cmdsn_check(&s, 1, false, true), CMDSN_ACCEPT);
	cr_assert_eq(iscsit_cmdsn_check(&s, 2, false, true), CMDSN_ACCEPT);
	cr_assert_eq(iscsit_session_max_cmd_sn(&s), 2, "MaxCmdSN = ExpCmdSN - 1: closed");
	cr_assert_eq(iscsit_cmdsn_check(&s, 3, false, true), CMDSN_DROP);
	iscsit_cmdsn_release(&s);
	cr_assert_eq(iscsit_cmdsn_check(&s, 3, false, true), CMDSN_ACCEPT);
}

Test(iscsi_session, gap_queue)
{
	struct iscsit_session s;
	struct iscsit_task t12 = {.cmd_sn = 12}, t13 = {.cmd_sn = 13};

	sess_init(&s, 10, 8);
	cr_assert_eq(iscsit_cmdsn_check(&s, 13, false, true), CMDSN_QUEUE);
	iscsit_cmdsn_enqueue(&s, &t13);
	cr_assert_eq(iscsit_cmdsn_check(&s, 12, false, true), CMDSN_QUEUE);
	iscsit_cmdsn_enqueue(&s, &t12);
	cr_assert(t12.in_waitq && t13.in_waitq);
	cr_assert_null(iscsit_cmdsn_ready(&s), "10 and 11 still missing");
	cr_assert_eq(iscsit_cmdsn_check(&s, 10, false, true), CMDSN_ACCEPT);
	cr_assert_null(iscsit_cmdsn_ready(&s));
	cr_assert_eq(iscsit_cmdsn_check(&s, 11, false, true), CMDSN_ACCEPT);
	cr_assert_eq(iscsit_cmdsn_ready(&s), &t12, "in CmdSN order");
	cr_assert_eq(iscsit_cmdsn_ready(&s), &t13);
	cr_assert_null(iscsit_cmdsn_ready(&s));
	cr_assert(!t12.in_waitq && !t13.in_waitq);
	cr_assert_eq(iscsit_session_exp_cmd_sn(&s), 14);
}

Test(iscsi_session, serial_number_wrap)
{
	struct iscsit_session s;

	sess_init(&s, 0xfffffffe, 4);
	cr_assert_eq(iscsit_session_max_cmd_sn(&s), 1);
	cr_assert_eq(iscsit_cmdsn_check(&s, 1, false, true), CMDSN_QUEUE,
		     "beyond the wrap, inside");
	cr_assert_eq(iscsit_cmdsn_check(&s, 2, false, true), CMDSN_DROP);
	cr_assert_eq(iscsit_cmdsn_check(&s, 0xfffffffe, false, true), CMDSN_ACCEPT);
	cr_assert_eq(iscsit_cmdsn_check(&s, 0xffffffff, false, true), CMDSN_ACCEPT);
	cr_assert_eq(iscsit_session_exp_cmd_sn(&s), 0);
	cr_assert_eq(iscsit_cmdsn_check(&s, 0xfffffffd, false, true), CMDSN_DROP, "old");
}

/* The memory budget: a session's share, the global one, and the one-command allowance of an
 * empty session: without them one client that never reads holds gigabytes. */
Test(iscsi_session, memory_budget)
{
	struct iscsit_ctx ctx;
	struct iscsit_session a, b;
	bool global;

	memset(&ctx, 0, sizeof(ctx));
	sess_init(&a, 1, 32);
	sess_init(&b, 1, 32);
	a.ctx = b.ctx = &ctx;
	ctx.mem_limit = 100;
	a.mem_limit = b.mem_limit = 60;

	cr_assert(iscsit_mem_charge(&a, 40, &global));
	cr_assert(iscsit_mem_charge(&a, 20, &global), "exactly at the session's limit");
	cr_assert_not(iscsit_mem_charge(&a, 1, &global), "over the session's limit");
	cr_assert_not(global, "refused by the session's share, not the global budget");
	cr_assert_eq(atomic_load(&a.mem_used), 60);
	cr_assert_eq(atomic_load(&ctx.mem_used), 60);
	/* b has room of its own but the global budget has only 40 left */
	cr_assert_not(iscsit_mem_charge(&b, 50, &global));
	cr_assert(global, "refused by the global budget");
	cr_assert_eq(atomic_load(&b.mem_used), 0, "nothing stays charged after a refusal");
	cr_assert(iscsit_mem_charge(&b, 40, &global));
	iscsit_mem_uncharge(&ctx, &a, 60);
	cr_assert_eq(atomic_load(&a.mem_used), 0);
	cr_assert_eq(atomic_load(&ctx.mem_used), 40);
	/* an empty session may take one command above its share, within the global budget */
	a.mem_limit = 30;
	cr_assert(iscsit_mem_charge(&a, 55, &global));
	cr_assert_not(iscsit_mem_charge(&a, 1, &global));
	cr_assert_not(global);
	a.mem_limit = 60;
	iscsit_mem_uncharge(&ctx, &a, 55);
	cr_assert_not(iscsit_mem_charge(&a, 61, &global), "61 + 40 is over the global 100");
	cr_assert(global);
	/* 0 means unlimited */
	ctx.mem_limit = 0;
	a.mem_limit = 0;
	cr_assert(iscsit_mem_charge(&a, 1ull << 40, &global));
}
