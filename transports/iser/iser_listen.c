/* Where iSER is served: the iSCSI driver's RDMA/CM portals and the verbs service on its
 * workers.  scst.conf, as SCST writes it, enables iSER per target with `RDMAExtensions Yes`
 * (the default) inside TARGET_DRIVER iscsi; SCST's isert module then listens on every RDMA
 * port at 3260.  utgt does the same by default and adds one attribute of its own to choose:
 *
 *   TARGET_DRIVER iscsi {
 *           listen_iser 192.168.1.10:3260   # RDMA/CM portal (repeatable; default 0.0.0.0:3260;
 *                                           # `none`: no iSER at all)
 *   }
 *
 * The buffers of a connection are sized before its target is known (the login comes later),
 * so the largest QueuedCommands, TargetRecvDataSegmentLength and InitiatorRecvDataSegmentLength
 * among the targets that allow iSER size every connection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/ut_log.h"
#include "transports/iser/iser_iscsi.h"

#define DEFAULT_PORTAL "0.0.0.0:3260"

_Static_assert(ISCSIT_ISER_PORTALS_MAX == RDMA_MAX_LISTEN_CFG, "one RDMA listen address a portal");

struct iser_listener {
	struct iser_srv_ctx sctx;
	struct rdma_srv *srv;
	struct ut_thread **run_on;
};

static struct iser_listener *L;

static bool wants_iser(const struct iscsit_ctx *ctx)
{
	for (unsigned i = 0; i < ctx->ntgts; i++)
		if (ctx->tgts[i].t->enabled && ctx->tgts[i].params.rdma_extensions)
			return true;
	return false;
}

/* The driver's listen_iser values (default when absent); 0 when `none`. */
unsigned iser_listen_portals(const struct tgt_driver *drv, const char **vals, unsigned max)
{
	unsigned n = tgt_attr_get_all(&drv->attrs, "listen_iser", vals, max);

	if (!n) {
		vals[0] = DEFAULT_PORTAL;
		return 1;
	}
	for (unsigned i = 0; i < n; i++)
		if (!strcasecmp(vals[i], "none"))
			return 0;
	return n;
}

void iser_listen_validate(const struct tgt_driver *drv, struct diag *d)
{
	const char *vals[RDMA_MAX_LISTEN_CFG + 1];
	unsigned n = tgt_attr_get_all(&drv->attrs, "listen_iser", vals, RDMA_MAX_LISTEN_CFG + 1);

	if (n > RDMA_MAX_LISTEN_CFG)
		diag_error(d, 0, "listen_iser: at most %d portals", RDMA_MAX_LISTEN_CFG);
	for (unsigned i = 0; i < drv->attrs.n; i++) {
		const struct utgt_attr *a = &drv->attrs.a[i];
		struct sockaddr_storage ss;
		socklen_t len;

		if (strcasecmp(a->key, "listen_iser"))
			continue;
		if (!strcasecmp(a->value, "none")) {
			if (n > 1)
				diag_error(d, a->line,
					   "listen_iser none: no other listen_iser then");
			continue;
		}
		if (iscsit_parse_portal(a->value, &ss, &len))
			diag_error(d, a->line, "listen_iser: '%s' is not ADDR[:PORT]", a->value);
	}
}

void iser_listen_conn_cfg(const struct iscsit_ctx *ctx, struct iser_conn_cfg *cfg)
{
	iser_conn_cfg_default(cfg);
	for (unsigned i = 0; i < ctx->ntgts; i++) {
		const struct iscsit_tgt_params *p = &ctx->tgts[i].params;

		if (!p->rdma_extensions)
			continue;
		if (p->queued_cmds > cfg->queue_depth)
			cfg->queue_depth = p->queued_cmds;
		if (p->iser_trdsl > cfg->keys.trdsl)
			cfg->keys.trdsl = p->iser_trdsl;
		if (p->iser_irdsl > cfg->keys.max_send_dsl)
			cfg->keys.max_send_dsl = p->iser_irdsl;
	}
}

int iser_listen_start(struct iscsit_ctx *ctx, char *err, size_t errlen)
{
	const char *vals[RDMA_MAX_LISTEN_CFG];
	unsigned n = iser_listen_portals(ctx->drv, vals, RDMA_MAX_LISTEN_CFG);
	struct rdma_srv_cfg rc = {.name = "iser",
				  .threads = ctx->nworkers,
				  .pool_chunk = ISER_POOL_CHUNK,
				  .pool_max = 256u << 20};
	struct iser_listener *l;

	if (!n || !wants_iser(ctx))
		return 0;
	l = calloc(1, sizeof(*l));
	if (l)
		l->run_on = calloc(ctx->nworkers, sizeof(*l->run_on));
	if (!l || !l->run_on) {
		free(l);
		snprintf(err, errlen, "iser: out of memory");
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		struct iscsit_portal *p = iscsit_portal_add(ctx, vals[i], &iser_xport, err, errlen);

		if (!p) {
			free(l->run_on);
			free(l);
			return -1;
		}
		rc.listen[rc.nlisten++] = p->addr;
	}
	for (unsigned i = 0; i < ctx->nworkers; i++)
		l->run_on[i] = &ctx->workers[i].ut;
	rc.run_on = l->run_on;
	iser_listen_conn_cfg(ctx, &l->sctx.cfg);
	l->sctx.up = &iser_iscsi_upper;
	l->sctx.up_ctx = ctx;
	l->srv = rdma_srv_start(&rc, &iser_conn_ops, &l->sctx, err, errlen);
	if (!l->srv) {
		free(l->run_on);
		free(l);
		return -1;
	}
	L = l;
	ut_log(LOG_INFO,
		"iser: %u portal(s) on RDMA/CM, %u worker(s); per connection: %u commands, "
		"TargetRecvDataSegmentLength %u, InitiatorRecvDataSegmentLength %u",
		n, ctx->nworkers, l->sctx.cfg.queue_depth, l->sctx.cfg.keys.trdsl,
		l->sctx.cfg.keys.max_send_dsl);
	return 0;
}

void iser_listen_close(struct iscsit_ctx *ctx)
{
	(void)ctx;
	if (L)
		rdma_srv_close_listeners(L->srv);
}

void iser_listen_stop(struct iscsit_ctx *ctx)
{
	(void)ctx;
	if (!L)
		return;
	/* every iSCSI connection is gone: what is left are RDMA connections still flushing */
	rdma_srv_wait_idle(L->srv, 5000);
	rdma_srv_stop(L->srv);
	free(L->run_on);
	free(L);
	L = NULL;
}
