/* SRP request-limit credits: the initiator never holds more than the limit, every finished
 * request gives one back exactly once, and SRP_CRED_REQ goes out only when nothing else will
 * carry the credits and none is outstanding. */
#include <criterion/criterion.h>

#include "transports/srp/srp_credit.h"

static void invariant(const struct srp_credit *c)
{
	cr_assert_eq(c->initiator + c->inflight + c->pending, c->limit,
		     "initiator %d + inflight %d + pending %d != limit %d", c->initiator,
		     c->inflight, c->pending, c->limit);
	cr_assert_geq(c->initiator, 0);
	cr_assert_geq(c->inflight, 0);
	cr_assert_geq(c->pending, 0);
}

Test(srp_credit, request_response_cycle)
{
	struct srp_credit c;

	srp_credit_init(&c, 4);
	invariant(&c);
	cr_assert(srp_credit_take(&c));
	cr_assert(srp_credit_take(&c));
	cr_assert_eq(c.initiator, 2);
	invariant(&c);
	srp_credit_done(&c);
	cr_assert_eq(srp_credit_grant(&c), 1, "each response returns its own credit");
	invariant(&c);
	cr_assert_eq(srp_credit_grant(&c), 0, "granted once");
	srp_credit_done(&c);
	cr_assert_eq(srp_credit_grant(&c), 1);
	cr_assert_eq(c.initiator, 4);
	invariant(&c);
}

Test(srp_credit, exceeding_the_limit_is_refused)
{
	struct srp_credit c;

	srp_credit_init(&c, 2);
	cr_assert(srp_credit_take(&c));
	cr_assert(srp_credit_take(&c));
	cr_assert_not(srp_credit_take(&c), "third request with a limit of 2");
	invariant(&c);
}

Test(srp_credit, aborted_tasks_ride_on_the_next_response)
{
	struct srp_credit c;

	srp_credit_init(&c, 8);
	for (int i = 0; i < 4; i++)
		cr_assert(srp_credit_take(&c));
	/* two aborted (no response), one more finishes normally */
	srp_credit_done(&c);
	srp_credit_done(&c);
	cr_assert_not(srp_credit_want_cred_req(&c), "responses are still coming");
	srp_credit_done(&c);
	cr_assert_eq(srp_credit_grant(&c), 3);
	invariant(&c);
}

Test(srp_credit, cred_req_when_nothing_else_carries_them)
{
	struct srp_credit c;

	srp_credit_init(&c, 4);
	cr_assert(srp_credit_take(&c));
	srp_credit_done(&c); /* aborted: no response */
	cr_assert(srp_credit_want_cred_req(&c), "nothing in flight");
	cr_assert_eq(srp_credit_grant(&c), 1);
	srp_credit_cred_req_sent(&c);
	cr_assert(srp_credit_take(&c));
	srp_credit_done(&c);
	cr_assert_not(srp_credit_want_cred_req(&c), "one outstanding at a time");
	cr_assert(srp_credit_cred_rsp(&c));
	cr_assert(srp_credit_want_cred_req(&c));
	cr_assert_not(srp_credit_cred_rsp(&c) && false);
	invariant(&c);
}

Test(srp_credit, cred_req_when_the_initiator_is_starved)
{
	struct srp_credit c;

	srp_credit_init(&c, 3);
	for (int i = 0; i < 3; i++)
		cr_assert(srp_credit_take(&c));
	srp_credit_done(&c); /* one aborted; two still executing, initiator has none */
	cr_assert(srp_credit_want_cred_req(&c));
	invariant(&c);
}

Test(srp_credit, unexpected_cred_rsp)
{
	struct srp_credit c;

	srp_credit_init(&c, 3);
	cr_assert_not(srp_credit_cred_rsp(&c));
}

Test(srp_credit, done_without_request_is_ignored)
{
	struct srp_credit c;

	srp_credit_init(&c, 3);
	srp_credit_done(&c);
	invariant(&c);
	cr_assert_eq(srp_credit_grant(&c), 0);
}

/* A long random run of arrivals, completions, aborts and grants keeps the invariant. */
Test(srp_credit, random_walk)
{
	struct srp_credit c;
	unsigned seed = 7;
	int cred_out = 0;

	srp_credit_init(&c, 16);
	for (int i = 0; i < 100000; i++) {
		switch (rand_r(&seed) % 4) {
		case 0:
			if (c.initiator > 0)
				cr_assert(srp_credit_take(&c));
			else
				cr_assert_not(srp_credit_take(&c));
			break;
		case 1: /* answered */
			if (c.inflight) {
				srp_credit_done(&c);
				srp_credit_grant(&c);
			}
			break;
		case 2: /* aborted */
			srp_credit_done(&c);
			break;
		case 3:
			if (srp_credit_want_cred_req(&c)) {
				srp_credit_grant(&c);
				srp_credit_cred_req_sent(&c);
				cred_out++;
			} else if (cred_out && srp_credit_cred_rsp(&c)) {
				cred_out--;
			}
			break;
		}
		invariant(&c);
		cr_assert_leq(cred_out, 1);
	}
}
