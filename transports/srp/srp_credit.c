/* Request-limit credit accounting (see srp_credit.h). */
#include "transports/srp/srp_credit.h"

void srp_credit_init(struct srp_credit *c, int32_t limit)
{
	*c = (struct srp_credit){.limit = limit, .initiator = limit};
}

bool srp_credit_take(struct srp_credit *c)
{
	if (c->initiator <= 0)
		return false;
	c->initiator--;
	c->inflight++;
	return true;
}

void srp_credit_done(struct srp_credit *c)
{
	if (c->inflight <= 0)
		return;
	c->inflight--;
	c->pending++;
}

uint32_t srp_credit_grant(struct srp_credit *c)
{
	int32_t d = c->pending;

	c->pending = 0;
	c->initiator += d;
	return (uint32_t)d;
}

void srp_credit_ungrant(struct srp_credit *c, uint32_t delta)
{
	c->pending += (int32_t)delta;
	c->initiator -= (int32_t)delta;
}

bool srp_credit_want_cred_req(const struct srp_credit *c)
{
	return c->pending > 0 && !c->cred_req_out && (c->inflight == 0 || c->initiator == 0);
}

void srp_credit_cred_req_sent(struct srp_credit *c)
{
	c->cred_req_out = true;
}

bool srp_credit_cred_rsp(struct srp_credit *c)
{
	if (!c->cred_req_out)
		return false;
	c->cred_req_out = false;
	return true;
}
