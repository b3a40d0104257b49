/* The SRP target's targets (one per TARGET block, identified by its port GID) and its I_T
 * nexuses (one per initiator port id and target, shared by that initiator's channels). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ut_log.h"
#include "transports/srp/srp_int.h"

int srpt_targets_setup(struct srpt_ctx *ctx, struct diag *d)
{
	const struct tgt_driver *drv = ctx->drv;
	int bad = 0;

	ctx->tgts = calloc(drv->ntargets ? drv->ntargets : 1, sizeof(*ctx->tgts));
	if (!ctx->tgts)
		return -1;
	for (unsigned i = 0; i < drv->ntargets; i++) {
		const struct tgt_target *t = &drv->targets[i];
		struct srpt_tgt *st;
		uint8_t gid[16];

		if (srp_gid_parse(t->name, gid)) {
			if (d)
				diag_error(d, t->line,
					   "ib_srpt: TARGET '%s' is not a port GID "
					   "(fe80:0000:0000:0000:XXXX:XXXX:XXXX:XXXX)",
					   t->name);
			bad++;
			continue;
		}
		if (!t->enabled)
			continue;
		st = &ctx->tgts[ctx->ntgts];
		st->t = t;
		srp_ident_from_gid(gid, &st->id);
		st->rel_tgt_id = t->rel_tgt_id ? t->rel_tgt_id : (uint16_t)(i + 1);
		for (unsigned j = 0; j < ctx->ntgts; j++)
			if (!memcmp(ctx->tgts[j].id.port_id, st->id.port_id, 16)) {
				if (d)
					diag_error(d, t->line,
						   "ib_srpt: TARGET '%s' has the same identity as "
						   "'%s'",
						   t->name, ctx->tgts[j].t->name);
				bad++;
			}
		ctx->ntgts++;
	}
	return bad ? -1 : 0;
}

struct srpt_tgt *srpt_find_target(struct srpt_ctx *ctx, const uint8_t port_id[16])
{
	for (unsigned i = 0; i < ctx->ntgts; i++)
		if (!memcmp(ctx->tgts[i].id.port_id, port_id, 16))
			return &ctx->tgts[i];
	return NULL;
}

static struct srpt_nexus *nexus_new(struct srpt_tgt *tgt, const uint8_t i_port_id[16])
{
	struct srpt_nexus *n = calloc(1, sizeof(*n));
	char iname[35], tport[35];

	if (!n)
		return NULL;
	n->tgt = tgt;
	memcpy(n->i_port_id, i_port_id, 16);
	srp_port_id_hex(i_port_id, iname);
	srp_port_id_hex(tgt->id.port_id, tport);
	n->nx.proto = SCSI_PROTO_SRP;
	snprintf(n->nx.initiator_name, sizeof(n->nx.initiator_name), "%s", iname);
	snprintf(n->nx.initiator_port, sizeof(n->nx.initiator_port), "%s", iname);
	snprintf(n->nx.target_name, sizeof(n->nx.target_name), "%s", tgt->t->name);
	snprintf(n->nx.target_port, sizeof(n->nx.target_port), "%s", tport);
	n->nx.rel_tgt_id = tgt->rel_tgt_id;
	n->nx.luns = tgt_acl_resolve(tgt->t, iname);
	n->nx.max_xfer_bytes = SRPT_MAX_XFER; /* VPD B0 then announces what SRP_CMD accepts */
	n->nx.transport_priv = n;
	scsi_nexus_register(&n->nx);
	return n;
}

void srpt_nexus_login(struct srpt_ctx *ctx, struct srpt_ch *ch, const struct srp_login_req *req,
		      struct srp_login_decision *dec)
{
	struct srpt_nexus *n = NULL;
	struct srpt_tgt *tgt;

	pthread_mutex_lock(&ctx->lock);
	tgt = atomic_load(&ctx->stopping) ? NULL : srpt_find_target(ctx, req->target_port_id);
	for (struct srpt_nexus *x = ctx->nexuses; tgt && x; x = x->next)
		if (!x->retired && x->tgt == tgt &&
		    !memcmp(x->i_port_id, req->initiator_port_id, 16))
			n = x;
	srp_login_decide(req, &ctx->o.lim, tgt != NULL, n ? n->nch : 0, dec);
	if (!dec->accept)
		goto out;
	if (ctx->o.max_connections && ctx->nchans >= ctx->o.max_connections) {
		/* channels a single-channel login would end still hold their buffers */
		dec->accept = false;
		dec->rej_reason = SRP_REJ_INSUFFICIENT_RESOURCES;
		goto out;
	}
	if (dec->terminate_others && n) {
		/* SRP single-channel login: the initiator's earlier channels end, and so does
		 * their I_T nexus once their commands are done. */
		n->retired = true;
		for (struct srpt_ch *o = n->chans; o; o = o->nx_next)
			srpt_ch_kill(o, SRP_TLO_MULTICHANNEL);
		n = NULL;
	}
	if (!n) {
		n = nexus_new(tgt, req->initiator_port_id);
		if (!n) {
			dec->accept = false;
			dec->rej_reason = SRP_REJ_INSUFFICIENT_RESOURCES;
			goto out;
		}
		n->next = ctx->nexuses;
		ctx->nexuses = n;
	}
	ch->nexus = n;
	ch->nx_next = n->chans;
	n->chans = ch;
	n->nch++;
	ctx->nchans++;
out:
	pthread_mutex_unlock(&ctx->lock);
}

void srpt_nexus_leave(struct srpt_ctx *ctx, struct srpt_ch *ch)
{
	struct srpt_nexus *n = ch->nexus;
	bool last = false;

	if (!n)
		return;
	pthread_mutex_lock(&ctx->lock);
	for (struct srpt_ch **pp = &n->chans; *pp; pp = &(*pp)->nx_next)
		if (*pp == ch) {
			*pp = ch->nx_next;
			break;
		}
	ctx->nchans--;
	if (--n->nch == 0) {
		for (struct srpt_nexus **pp = &ctx->nexuses; *pp; pp = &(*pp)->next)
			if (*pp == n) {
				*pp = n->next;
				break;
			}
		last = true;
	}
	pthread_mutex_unlock(&ctx->lock);
	ch->nexus = NULL;
	if (last) {
		/* every command of every channel of it has completed: I_T nexus loss */
		scsi_nexus_unregister(&n->nx);
		free(n);
	}
}
