/* SRP request-limit credits of one channel, as the target counts them.
 *
 * The initiator may have at most REQUEST LIMIT requests outstanding.  It starts with the limit
 * granted in SRP_LOGIN_RSP, spends one per request IU (SRP_CMD, SRP_TSK_MGMT, SRP_I_LOGOUT) and
 * gets credits back in the REQUEST LIMIT DELTA of SRP_RSP and SRP_CRED_REQ.  The target earns
 * one credit back each time a request is finished (answered, or dropped because a task
 * management function aborted it) and its receive buffer is posted again; earned credits ride
 * on the next response.  When no response is coming (nothing in flight) or the initiator has
 * none left, they go out in an SRP_CRED_REQ; only one is outstanding at a time because the
 * initiator keeps a single receive buffer for target-initiated requests.
 *
 * Invariant: initiator + inflight + pending == limit. */
#ifndef UTGT_SRP_CREDIT_H
#define UTGT_SRP_CREDIT_H

#include <stdbool.h>
#include <stdint.h>

struct srp_credit {
	int32_t limit;	   /* granted at login */
	int32_t initiator; /* what the initiator holds, as far as the target can know */
	int32_t inflight;  /* requests received and not finished */
	int32_t pending;   /* earned, not yet sent */
	bool cred_req_out; /* an SRP_CRED_REQ waits for its SRP_CRED_RSP */
};

void srp_credit_init(struct srp_credit *c, int32_t limit);
/* A request IU arrived.  false: the initiator had no credit (protocol violation). */
bool srp_credit_take(struct srp_credit *c);
/* A request is finished and its receive buffer is posted again. */
void srp_credit_done(struct srp_credit *c);
/* The delta for a response being built now (moves pending to the initiator). */
uint32_t srp_credit_grant(struct srp_credit *c);
/* A response built with grant() could not be sent after all: the credits are earned again. */
void srp_credit_ungrant(struct srp_credit *c, uint32_t delta);
/* Whether earned credits need an SRP_CRED_REQ of their own. */
bool srp_credit_want_cred_req(const struct srp_credit *c);
void srp_credit_cred_req_sent(struct srp_credit *c);
/* An SRP_CRED_RSP arrived; false when no SRP_CRED_REQ was outstanding. */
bool srp_credit_cred_rsp(struct srp_credit *c);

#endif
