/* Which RDMA READ/WRITE a command needs; see iser_plan.h. */
#include "transports/iser/iser_plan.h"

#include <errno.h>
#include <string.h>

static int bad(const char **why, const char *msg, int err)
{
	*why = msg;
	return err;
}

int iser_plan_cmd(const struct iser_plan_in *in, const struct iser_plan_lim *lim,
		  struct iser_plan *p, const char **why)
{
	const struct iser_hdr *h = in->h;

	memset(p, 0, sizeof(*p));
	*why = "";
	p->edtl = in->edtl;
	if (in->read && in->write)
		return bad(why, "bidirectional commands are not supported over iSER", -EOPNOTSUPP);
	if (in->edtl > lim->max_xfer)
		return bad(why, "transfer length beyond the negotiated maximum", -EMSGSIZE);
	if (!in->write && in->imm)
		return bad(why, "immediate data on a command that writes nothing", -EPROTO);
	if (in->imm > in->edtl)
		return bad(why, "more immediate data than the transfer length", -EPROTO);
	if (in->imm && !lim->immediate_data)
		return bad(why, "immediate data but ImmediateData=No", -EPROTO);
	if (in->imm > lim->first_burst)
		return bad(why, "immediate data beyond FirstBurstLength", -EPROTO);

	if (in->write && in->edtl) {
		/* RFC 7143 unsolicited data: everything up to FirstBurstLength when InitialR2T=No
		 * and the F bit announces Data-Out, else only the immediate part.  The
		 * initiator's Write STag covers the rest. */
		uint32_t total = in->imm;

		if (!lim->initial_r2t && !in->final)
			total = in->edtl < lim->first_burst ? in->edtl : lim->first_burst;
		if (total < in->imm)
			total = in->imm;
		p->imm = in->imm;
		p->unsol = total - in->imm;
		if (total < in->edtl) {
			if (!h->wsv)
				return bad(why,
					   "write needs an RDMA READ but no Write STag is valid",
					   -EPROTO);
			p->rd.rkey = h->write_stag;
			p->rd.addr = h->write_va;
			p->rd.len = in->edtl - total;
			p->rd_local_off = total;
		}
	}
	if (in->read && in->edtl) {
		if (!h->rsv)
			return bad(why, "read without a valid Read STag", -EPROTO);
		p->wr.rkey = h->read_stag;
		p->wr.addr = h->read_va;
		p->wr.len = in->edtl;
	}
	return 0;
}
