/* utgtd's ib_srpt driver as the daemon sees it (struct tgt_transport):
 *
 *   TARGET_DRIVER ib_srpt {
 *           listen 0.0.0.0:5555        RDMA/CM address:port (repeatable; default 0.0.0.0:5555)
 *           threads N                  event threads (default: one per CPU, up to 4)
 *           pin auto                   1: event thread i on CPU i (modulo the CPUs); auto:
 *                                      on its channel's CPU while commands come one at a time
 *           poll_us 0                  spin on completion queues this long when idle
 *           handoff_kb 256             a round's data-in of this many KiB or more on a
 *                                      channel is posted by the channel's sender thread
 *                                      (one per CPU, channels spread over them; 0: never)
 *           srq 0                      shared receive queue per device
 *           srq_size 1024
 *           queue_depth 128            SRP request limit per channel
 *           max_req_size 65536         largest SRP_CMD IU accepted (immediate data included)
 *           max_rsp_size 288           largest SRP_RSP sent (header + sense)
 *           max_channels 16            channels per I_T nexus (multichannel)
 *           max_connections 64         channels logged in at once, all initiators (0: any)
 *           immediate_data 1
 *           pool_mb 128                registered data memory per device and thread
 *           max_inline 128             inline send size to ask the device for
 *           logout_wait 5              seconds a channel may take to log out at shutdown
 *           TARGET fe80:0000:0000:0000:0002:c903:000f:41a7 {
 *                   enabled 1
 *                   rel_tgt_id 1
 *                   LUN 0 dev-srp0
 *           }
 *   }
 *
 * With no RDMA device the driver starts anyway (logs "no RDMA device") and serves once one
 * appears; the other drivers are not affected. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/ut_log.h"
#include "transports/srp/srp_int.h"

struct srpt_ctx *srpt_global;

static const char *const driver_attrs[] = {
    "enabled",	      "listen",	     "threads",	     "poll_us",	     "srq",
    "srq_size",	      "queue_depth", "max_req_size", "max_rsp_size", "max_channels",
    "immediate_data", "pool_mb",     "max_inline",   "logout_wait",  "max_connections",
    "pin",	      "handoff_kb",  NULL,
};

static const char *const target_attrs[] = {"enabled", "rel_tgt_id", NULL};

struct num_attr {
	const char *key;
	uint64_t min, max;
	bool size; /* K/M/G suffixes */
};

static bool attr_num(const struct tgt_attrs *as, const struct num_attr *na, uint64_t *out,
		     struct diag *d)
{
	const struct utgt_attr *a = tgt_attr_find(as, na->key);
	uint64_t v;

	if (!a)
		return false;
	if (!(na->size ? parse_size(a->value, &v) : parse_u64(a->value, &v)) || v < na->min ||
	    v > na->max) {
		if (d)
			diag_error(d, a->line,
				   "ib_srpt: %s: '%s' is not a number from %llu to %llu", na->key,
				   a->value, (unsigned long long)na->min,
				   (unsigned long long)na->max);
		return false;
	}
	*out = v;
	return true;
}

static bool attr_flag(const struct tgt_attrs *as, const char *key, bool *out, struct diag *d)
{
	const struct utgt_attr *a = tgt_attr_find(as, key);

	if (!a)
		return false;
	if (!parse_bool(a->value, out)) {
		if (d)
			diag_error(d, a->line, "ib_srpt: %s: expected a boolean, got '%s'", key,
				   a->value);
		return false;
	}
	return true;
}

/* `pin 0|1|auto` (enum rdma_pin); 0 when absent.  0, or -1 after reporting a bad value. */
static int parse_pin(const struct utgt_attr *a, unsigned *out, struct diag *d)
{
	bool b;

	if (!a)
		return 0;
	if (!strcmp(a->value, "auto")) {
		*out = RDMA_PIN_AUTO;
		return 0;
	}
	if (parse_bool(a->value, &b)) {
		*out = b ? RDMA_PIN_ON : RDMA_PIN_OFF;
		return 0;
	}
	if (d)
		diag_error(d, a->line, "ib_srpt: pin: expected 0, 1 or auto, got '%s'", a->value);
	return -1;
}

/* One event thread per CPU, up to SRPT_MAX_DEFAULT_THREADS.  A channel's verbs calls run
 * on its thread, and with a software device (rxe) so does the protocol work of its sends
 * (the kernel runs it inside the doorbell system call): on a single thread every channel's
 * data-in was serialised on one CPU while LIO spreads the same work over all of them. */
unsigned srpt_default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > SRPT_MAX_DEFAULT_THREADS ? SRPT_MAX_DEFAULT_THREADS : (unsigned)n;
}

/* Driver attributes into options; errors on d (validation) or silently (start, validated). */
int srpt_opts_parse(const struct tgt_driver *drv, struct srpt_opts *o, struct diag *d)
{
	static const struct num_attr threads = {"threads", 1, 64, false},
				     poll = {"poll_us", 0, 1000000, false},
				     srq_size = {"srq_size", 16, 65536, false},
				     depth = {"queue_depth", 2, 4096, false},
				     req = {"max_req_size", 64, 1u << 20, true},
				     rsp = {"max_rsp_size", 64, 4096, true},
				     chans = {"max_channels", 1, 256, false},
				     conns = {"max_connections", 0, 65536, false},
				     pool = {"pool_mb", 16, 65536, false},
				     inl = {"max_inline", 0, 1024, false},
				     wait = {"logout_wait", 0, 600, false},
				     handoff = {"handoff_kb", 0, 1u << 20, false};
	uint64_t v;
	bool b;
	int bad = 0;

	memset(o, 0, sizeof(*o));
	o->rdma.name = "ib_srpt";
	o->rdma.threads = srpt_default_threads();
	o->rdma.pin = RDMA_PIN_AUTO; /* docs/srp.md, "Figures" */
	o->rdma.srq_depth = 1024;
	o->rdma.pool_chunk = 64 << 10;
	o->rdma.pool_max = 128u << 20;
	o->rdma.max_inline = 128;
	o->rdma.handoff_bytes = 256u << 10; /* docs/srp.md, "Figures" */
	o->lim.max_it_iu_len = 65536;
	o->lim.max_ti_iu_len = 288;
	o->lim.req_lim = 128;
	o->lim.buf_fmt = SRP_BUF_FMT_DIRECT | SRP_BUF_FMT_INDIRECT;
	o->lim.imm = true;
	o->lim.max_channels = 16;
	o->max_connections = 64;
	o->logout_wait = 5;

	for (unsigned i = 0; i < drv->attrs.n; i++) {
		const struct utgt_attr *a = &drv->attrs.a[i];

		if (strcasecmp(a->key, "listen"))
			continue;
		if (o->rdma.nlisten == RDMA_MAX_LISTEN_CFG) {
			if (d)
				diag_error(d, a->line, "ib_srpt: more than %d listen addresses",
					   RDMA_MAX_LISTEN_CFG);
			bad++;
			break;
		}
		if (rdma_parse_addr(a->value, &o->rdma.listen[o->rdma.nlisten])) {
			if (d)
				diag_error(d, a->line, "ib_srpt: listen: '%s' is not ADDR:PORT",
					   a->value);
			bad++;
			continue;
		}
		o->rdma.nlisten++;
	}
	if (!o->rdma.nlisten) {
		char def[16];

		snprintf(def, sizeof(def), "%u", SRPT_DEFAULT_PORT);
		rdma_parse_addr(def, &o->rdma.listen[0]);
		o->rdma.nlisten = 1;
	}
#define NUM(na, dst)                                                                               \
	do {                                                                                       \
		if (attr_num(&drv->attrs, &na, &v, d))                                             \
			dst = v;                                                                   \
		else if (tgt_attr_find(&drv->attrs, na.key))                                       \
			bad++;                                                                     \
	} while (0)
	NUM(threads, o->rdma.threads);
	NUM(poll, o->rdma.poll_us);
	NUM(srq_size, o->rdma.srq_depth);
	NUM(depth, o->lim.req_lim);
	NUM(req, o->lim.max_it_iu_len);
	NUM(rsp, o->lim.max_ti_iu_len);
	NUM(chans, o->lim.max_channels);
	NUM(conns, o->max_connections);
	NUM(inl, o->rdma.max_inline);
	NUM(wait, o->logout_wait);
	if (attr_num(&drv->attrs, &handoff, &v, d))
		o->rdma.handoff_bytes = (uint32_t)(v << 10);
	else if (tgt_attr_find(&drv->attrs, handoff.key))
		bad++;
	if (attr_num(&drv->attrs, &pool, &v, d))
		o->rdma.pool_max = v << 20;
	else if (tgt_attr_find(&drv->attrs, pool.key))
		bad++;
#undef NUM
	if (attr_flag(&drv->attrs, "srq", &b, d))
		o->rdma.srq = b;
	else if (tgt_attr_find(&drv->attrs, "srq"))
		bad++;
	if (parse_pin(tgt_attr_find(&drv->attrs, "pin"), &o->rdma.pin, d))
		bad++;
	if (attr_flag(&drv->attrs, "immediate_data", &b, d))
		o->lim.imm = b;
	else if (tgt_attr_find(&drv->attrs, "immediate_data"))
		bad++;
	o->rdma.srq_buf_size = o->lim.max_it_iu_len;
	if (o->rdma.pool_max < SRPT_MAX_XFER && d)
		diag_warn(d, drv->line,
			  "ib_srpt: pool_mb below 8: transfers larger than the pool fail");
	return bad ? -1 : 0;
}

/* ---------------------------------------------------------------- validate */

static void srpt_validate(const struct tgt_driver *drv, struct diag *d)
{
	struct srpt_ctx ctx = {.drv = drv};
	struct srpt_opts o;

	srpt_opts_parse(drv, &o, d);
	srpt_targets_setup(&ctx, d);
	free(ctx.tgts);
}

/* ---------------------------------------------------------------- start / stop */

static void ctx_free(struct srpt_ctx *ctx)
{
	free(ctx->tgts);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

static int srpt_start(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
		      size_t errlen)
{
	struct srpt_ctx *ctx;

	if (srpt_global) {
		snprintf(err, errlen, "ib_srpt: already started");
		return -1;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		snprintf(err, errlen, "ib_srpt: out of memory");
		return -1;
	}
	pthread_mutex_init(&ctx->lock, NULL);
	atomic_init(&ctx->stopping, false);
	ctx->cfg = cfg;
	ctx->drv = drv;
	if (srpt_opts_parse(drv, &ctx->o, NULL) || srpt_targets_setup(ctx, NULL)) {
		snprintf(err, errlen, "ib_srpt: invalid configuration (run utgtd --check)");
		ctx_free(ctx);
		return -1;
	}
	ctx->srv = rdma_srv_start(&ctx->o.rdma, &srpt_conn_ops, ctx, err, errlen);
	if (!ctx->srv) {
		ctx_free(ctx);
		return -1;
	}
	srpt_global = ctx;
	for (unsigned i = 0; i < ctx->ntgts; i++) {
		const struct srpt_tgt *t = &ctx->tgts[i];
		ut_log(LOG_INFO,
			"ib_srpt: target %s (rel_tgt_id %u): id_ext %016llx ioc_guid %016llx",
			t->t->name, t->rel_tgt_id, (unsigned long long)t->id.id_ext,
			(unsigned long long)t->id.ioc_guid);
	}
	return 0;
}

static void logout_each(struct rdma_conn *c, void *arg)
{
	struct srpt_ch *ch = rdma_conn_priv(c);

	(void)arg;
	if (ch)
		srpt_ch_logout(ch, SRP_TLO_INACTIVE);
}

static void srpt_stop(void)
{
	struct srpt_ctx *ctx = srpt_global;

	if (!ctx)
		return;
	atomic_store(&ctx->stopping, true);
	rdma_srv_close_listeners(ctx->srv);
	/* Target logout on every channel; each disconnects once its commands are answered (or
	 * after logout_wait), then waits for the core before it is released. */
	rdma_srv_each_conn(ctx->srv, logout_each, NULL);
	if (!rdma_srv_wait_idle(ctx->srv, (ctx->o.logout_wait + 60) * 1000)) {
		/* A command the core never finished: its completion would find freed memory, so
		 * the channels (and the service threads) are left as they are. */
		ut_log(LOG_ERR, "ib_srpt: stop: %u channel(s) still waiting for I/O; left running",
			rdma_srv_nconns(ctx->srv));
		srpt_global = NULL;
		return;
	}
	rdma_srv_stop(ctx->srv);
	srpt_global = NULL;
	ctx_free(ctx);
	ut_log(LOG_INFO, "ib_srpt: stopped");
}

const struct tgt_transport srpt_transport = {
    .driver = "ib_srpt",
    .driver_attrs = driver_attrs,
    .target_attrs = target_attrs,
    .validate = srpt_validate,
    .start = srpt_start,
    .stop = srpt_stop,
    .show_sessions = srpt_show_sessions,
    .update = srpt_update,
    .close_session = srpt_close_session,
};
