/* Live administration of the SRP target (struct tgt_transport's update and close_session).
 *
 * Logins look targets up and create nexuses under ctx->lock, so a new configuration's targets
 * replace the array under that lock, every nexus is re-pointed (by port identity) and given
 * the LUN table its initiator now resolves to; a nexus whose target is gone or disabled, or
 * whose initiator sees no LUN any more, gets an empty table (no command of it reaches an LU
 * from then on), is retired so no login joins it, and its channels are logged out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ut_log.h"
#include "transports/srp/srp_int.h"

static const struct scsi_lun_table no_luns;

static void retire(struct srpt_nexus *n, const char *why)
{
	scsi_nexus_set_luns(&n->nx, &no_luns);
	n->tgt = NULL;
	if (n->retired)
		return;
	n->retired = true;
	ut_log(LOG_NOTICE, "ib_srpt: nexus %s -> %s: %s; logging its channels out",
		n->nx.initiator_name, n->nx.target_name, why);
	for (struct srpt_ch *ch = n->chans; ch; ch = ch->nx_next)
		srpt_ch_kill(ch, SRP_TLO_NO_REASON);
}

int srpt_ctx_update(struct srpt_ctx *ctx, const struct tgt_config *cfg,
		    const struct tgt_driver *drv, char *err, size_t errlen)
{
	struct srpt_ctx fresh = {.drv = drv};
	struct srpt_tgt *old;

	if (srpt_targets_setup(&fresh, NULL) != 0) {
		free(fresh.tgts);
		snprintf(err, errlen, "ib_srpt: invalid targets (run utgtd --check)");
		return -1;
	}
	pthread_mutex_lock(&ctx->lock);
	old = ctx->tgts;
	ctx->tgts = fresh.tgts;
	ctx->ntgts = fresh.ntgts;
	ctx->cfg = cfg;
	ctx->drv = drv;
	for (struct srpt_nexus *n = ctx->nexuses; n; n = n->next) {
		struct srpt_tgt *t;
		const struct scsi_lun_table *luns;

		if (!n->tgt) /* retired by an earlier change */
			continue;
		t = srpt_find_target(ctx, n->tgt->id.port_id);
		if (!t) {
			retire(n, "target removed or disabled");
			continue;
		}
		n->tgt = t;
		luns = tgt_acl_resolve(t->t, n->nx.initiator_name);
		if (!luns->n)
			retire(n, "no LUN for this initiator any more");
		else
			scsi_nexus_set_luns(&n->nx, luns);
	}
	pthread_mutex_unlock(&ctx->lock);
	free(old);
	return 0;
}

int srpt_update(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
		size_t errlen)
{
	if (!srpt_global) {
		snprintf(err, errlen, "ib_srpt: not running");
		return -1;
	}
	return srpt_ctx_update(srpt_global, cfg, drv, err, errlen);
}

int srpt_ctx_close_session(struct srpt_ctx *ctx, uint64_t nexus_id, char *err, size_t errlen)
{
	struct srpt_nexus *n;

	pthread_mutex_lock(&ctx->lock);
	for (n = ctx->nexuses; n; n = n->next)
		if (n->nx.id == nexus_id)
			break;
	if (n) {
		ut_log(LOG_NOTICE, "ib_srpt: nexus %s -> %s: closed by the administrator",
			n->nx.initiator_name, n->nx.target_name);
		for (struct srpt_ch *ch = n->chans; ch; ch = ch->nx_next)
			srpt_ch_kill(ch, SRP_TLO_NO_REASON);
	}
	pthread_mutex_unlock(&ctx->lock);
	if (!n) {
		snprintf(err, errlen, "no SRP nexus with id %llu", (unsigned long long)nexus_id);
		return -1;
	}
	return 0;
}

int srpt_close_session(uint64_t nexus_id, char *err, size_t errlen)
{
	if (!srpt_global) {
		snprintf(err, errlen, "ib_srpt: not running");
		return -1;
	}
	return srpt_ctx_close_session(srpt_global, nexus_id, err, errlen);
}
