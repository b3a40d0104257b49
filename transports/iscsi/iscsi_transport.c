/* The iSCSI front end as utgtd sees it (struct tgt_transport): the attributes it accepts in
 * `TARGET_DRIVER iscsi { ... TARGET iqn... { ... } }`, their validation, start (targets,
 * workers, portals) and stop (ask initiators to log out, drain in-flight I/O, close). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include "transports/iscsi/iscsi_int.h"

struct iscsit_ctx *iscsit_global;

/* A worker polls at most this long before it sleeps (poll_us): beyond a millisecond the
 * CPU it burns buys nothing a sleep would lose. */
#define POLL_US_MAX 1000

static const char *const driver_attrs[] = {
    "enabled", "listen", "listen_iser",	   "IncomingUser", "OutgoingUser", "nodelay",
    "sndbuf",  "rcvbuf", "worker_threads", "logout_wait",  "mem_limit", "session_mem_limit",
    "max_sessions", "max_connections", "poll_us", "conn_placement", "pin", NULL,
};

/* The bounds' defaults (docs/security.md): a 2-core box with 24 GiB stays safe whatever the
 * clients do.  0 in the configuration means unlimited. */
#define DEF_MEM_LIMIT	      (2ull << 30)   /* command buffers, every session together */
#define DEF_SESSION_MEM_LIMIT (256ull << 20) /* command buffers of one session */
#define DEF_MAX_SESSIONS      256
#define DEF_MAX_CONNECTIONS   1024 /* including logins in progress and discovery */
#define MEM_LIMIT_MAX	      (1ull << 40)

static const char *const target_attrs[] = {
    "enabled",
    "rel_tgt_id",
    "tpgt",
    "TargetAlias",
    "alias", /* SCST's name for TargetAlias */
    "per_portal_acl",
    "IncomingUser",
    "OutgoingUser",
    "allowed_portal",
    "HeaderDigest",
    "DataDigest",
    "InitialR2T",
    "ImmediateData",
    "MaxRecvDataSegmentLength",
    "MaxXmitDataSegmentLength",
    "MaxBurstLength",
    "FirstBurstLength",
    "MaxOutstandingR2T",
    "MaxConnections",
    "MaxSessions",
    "session_mem_limit",
    "QueuedCommands",
    "NopInInterval",
    "NopInTimeout",
    "RspTimeout",
    "DataPDUInOrder",
    "DataSequenceInOrder",
    "ErrorRecoveryLevel",
    "DefaultTime2Wait",
    "DefaultTime2Retain",
    "nodelay",
    "sndbuf",
    "rcvbuf",
    "RDMAExtensions",
    "TargetRecvDataSegmentLength",
    "InitiatorRecvDataSegmentLength",
    "iSERHelloRequired",
    NULL,
};

/* ---------------------------------------------------------------- attribute parsing */

/* "user secret" (SCST writes IncomingUser/OutgoingUser this way). */
static bool split_user(const char *v, struct iscsit_chap_user *u)
{
	const char *sp;
	size_t ul;

	while (*v == ' ' || *v == '\t')
		v++;
	sp = strpbrk(v, " \t");
	if (!sp)
		return false;
	ul = (size_t)(sp - v);
	if (!ul || ul >= sizeof(u->name))
		return false;
	memcpy(u->name, v, ul);
	u->name[ul] = '\0';
	while (*sp == ' ' || *sp == '\t')
		sp++;
	if (!*sp || strlen(sp) >= sizeof(u->secret))
		return false;
	snprintf(u->secret, sizeof(u->secret), "%s", sp);
	/* trailing blanks are not part of the secret */
	for (size_t l = strlen(u->secret);
	     l && (u->secret[l - 1] == ' ' || u->secret[l - 1] == '\t');)
		u->secret[--l] = '\0';
	return true;
}

int iscsit_auth_parse(struct iscsit_auth *a, const struct tgt_attrs *as, struct diag *d)
{
	int bad = 0;

	memset(a, 0, sizeof(*a));
	for (unsigned i = 0; as && i < as->n; i++) {
		const struct utgt_attr *at = &as->a[i];
		struct iscsit_chap_user u;

		if (strcasecmp(at->key, "IncomingUser") && strcasecmp(at->key, "OutgoingUser"))
			continue;
		if (!split_user(at->value, &u)) {
			if (d)
				diag_error(d, at->line, "%s: expected 'USER SECRET', got '%s'",
					   at->key, at->value);
			bad++;
			continue;
		}
		if (strlen(u.secret) < 12 && d)
			diag_warn(d, at->line,
				  "%s %s: CHAP secret shorter than 12 bytes (RFC 7143 12.1.3)",
				  at->key, u.name);
		if (!strcasecmp(at->key, "OutgoingUser")) {
			a->out = u;
			a->has_out = true;
		} else {
			struct iscsit_chap_user *n = realloc(a->in, (a->nin + 1) * sizeof(*n));

			if (!n)
				return -1;
			a->in = n;
			a->in[a->nin++] = u;
		}
	}
	return bad ? -1 : 0;
}

void iscsit_auth_free(struct iscsit_auth *a)
{
	if (a->in)
		memset(a->in, 0, a->nin * sizeof(*a->in));
	free(a->in);
	memset(a, 0, sizeof(*a));
}

static bool attr_u64(const struct tgt_attrs *as, const char *key, uint64_t max, uint64_t *out,
		     struct diag *d)
{
	for (unsigned i = as->n; i-- > 0;) {
		if (strcasecmp(as->a[i].key, key))
			continue;
		if (!parse_size(as->a[i].value, out) || *out > max) {
			if (d)
				diag_error(d, as->a[i].line, "%s: '%s' is not a number up to %llu",
					   key, as->a[i].value, (unsigned long long)max);
			return false;
		}
		return true;
	}
	return false;
}

/* conn_placement: "target" (the default) or "spread" (iscsi_place.c). */
static enum iscsit_placement placement_parse(const struct tgt_attrs *as, struct diag *d)
{
	for (unsigned i = as->n; i-- > 0;) {
		if (strcasecmp(as->a[i].key, "conn_placement"))
			continue;
		if (!strcasecmp(as->a[i].value, "spread"))
			return ISCSIT_PLACE_SPREAD;
		if (strcasecmp(as->a[i].value, "target") && d)
			diag_error(d, as->a[i].line,
				   "conn_placement: '%s' is neither target nor spread",
				   as->a[i].value);
		return ISCSIT_PLACE_TARGET;
	}
	return ISCSIT_PLACE_TARGET;
}

/* pin: 0 (the default) lets the scheduler place the workers; 1 binds worker i to CPU i.  A
 * bound worker cannot leave a CPU its neighbours crowd, so the connections it serves get
 * that CPU's leftover while another worker's run at full rate (docs/performance.md,
 * "two jobs at once"). */
static bool pin_parse(const struct tgt_attrs *as, struct diag *d)
{
	const struct utgt_attr *a = tgt_attr_find(as, "pin");
	bool on = false;

	if (a && !parse_bool(a->value, &on) && d)
		diag_error(d, a->line, "pin: expected 0 or 1, got '%s'", a->value);
	return on;
}

static void sockopts_parse(const struct tgt_attrs *as, struct iscsit_sockopts *o, bool *any,
			   struct diag *d)
{
	const char *v = tgt_attr_get(as, "nodelay");
	uint64_t n;

	if (v) {
		if (!parse_bool(v, &o->nodelay) && d)
			diag_error(d, 0, "nodelay: expected a boolean, got '%s'", v);
		if (any)
			*any = true;
	}
	if (attr_u64(as, "sndbuf", 1u << 30, &n, d)) {
		o->sndbuf = (int)n;
		if (any)
			*any = true;
	}
	if (attr_u64(as, "rcvbuf", 1u << 30, &n, d)) {
		o->rcvbuf = (int)n;
		if (any)
			*any = true;
	}
}

/* A byte limit: the attribute, else the default. */
static uint64_t attr_limit(const struct tgt_attrs *as, const char *key, uint64_t def,
			   struct diag *d)
{
	uint64_t n;

	return attr_u64(as, key, MEM_LIMIT_MAX, &n, d) ? n : def;
}

/* Fill the runtime view of one TARGET; its name is `name` (a copy that outlives the model). */
static int tgt_setup(struct iscsit_tgt *it, const struct tgt_target *t, const char *name,
		     const struct iscsit_sockopts *drv_opts, uint64_t sess_mem_limit, unsigned idx,
		     struct diag *d)
{
	const char *vals[64];
	uint64_t n;
	int rc = 0;

	memset(it, 0, sizeof(*it));
	it->t = t;
	it->name = name;
	iscsit_tgt_params_default(&it->params);
	iscsit_tgt_params_from_attrs(&it->params, t->attrs.a, t->attrs.n, d);
	if (iscsit_auth_parse(&it->auth, &t->attrs, d))
		rc = -1;
	it->nallowed = tgt_attr_get_all(&t->attrs, "allowed_portal", vals, 64);
	if (it->nallowed) {
		it->allowed_portals = calloc(it->nallowed, sizeof(char *));
		for (unsigned i = 0; it->allowed_portals && i < it->nallowed; i++)
			it->allowed_portals[i] = strdup(vals[i]);
	}
	it->tpgt = 1;
	if (attr_u64(&t->attrs, "tpgt", 65535, &n, d))
		it->tpgt = (uint16_t)n;
	it->rel_tgt_id = t->rel_tgt_id ? t->rel_tgt_id : (uint16_t)(idx + 1);
	if (attr_u64(&t->attrs, "MaxSessions", 65535, &n, d))
		it->max_sessions = (unsigned)n;
	it->sess_mem_limit = attr_limit(&t->attrs, "session_mem_limit", sess_mem_limit, d);
	{
		const char *alias = tgt_attr_get(&t->attrs, "TargetAlias");

		if (!alias)
			alias = tgt_attr_get(&t->attrs, "alias");

		if (alias)
			snprintf(it->alias, sizeof(it->alias), "%s", alias);
	}
	it->sockopts = *drv_opts;
	sockopts_parse(&t->attrs, &it->sockopts, &it->has_sockopts, d);
	return rc;
}

static void tgt_free(struct iscsit_tgt *it)
{
	iscsit_auth_free(&it->auth);
	for (unsigned i = 0; it->allowed_portals && i < it->nallowed; i++)
		free(it->allowed_portals[i]);
	free(it->allowed_portals);
}

/* ---------------------------------------------------------------- validate */

static void iscsit_validate(const struct tgt_driver *drv, struct diag *d)
{
	struct iscsit_sockopts o = {.nodelay = true};
	struct iscsit_auth a;
	uint64_t n, sml;

	for (unsigned i = 0; i < drv->attrs.n; i++) {
		const struct utgt_attr *at = &drv->attrs.a[i];
		struct sockaddr_storage ss;
		socklen_t len;

		if (!strcasecmp(at->key, "listen") && iscsit_parse_portal(at->value, &ss, &len))
			diag_error(d, at->line, "listen: '%s' is not ADDR:PORT", at->value);
	}
	iser_listen_validate(drv, d);
	sockopts_parse(&drv->attrs, &o, NULL, d);
	attr_u64(&drv->attrs, "worker_threads", 256, &n, d);
	attr_u64(&drv->attrs, "poll_us", POLL_US_MAX, &n, d);
	placement_parse(&drv->attrs, d);
	pin_parse(&drv->attrs, d);
	attr_u64(&drv->attrs, "logout_wait", 60, &n, d);
	attr_limit(&drv->attrs, "mem_limit", 0, d);
	sml = attr_limit(&drv->attrs, "session_mem_limit", DEF_SESSION_MEM_LIMIT, d);
	attr_u64(&drv->attrs, "max_sessions", 1u << 20, &n, d);
	attr_u64(&drv->attrs, "max_connections", 1u << 20, &n, d);
	iscsit_auth_parse(&a, &drv->attrs, d);
	iscsit_auth_free(&a);
	for (unsigned i = 0; i < drv->ntargets; i++) {
		struct iscsit_tgt it;

		tgt_setup(&it, &drv->targets[i], drv->targets[i].name, &o, sml, i, d);
		if (it.params.first_burst > it.params.max_burst)
			diag_warn(d, drv->targets[i].line,
				  "%s: FirstBurstLength above MaxBurstLength is lowered to it",
				  drv->targets[i].name);
		tgt_free(&it);
	}
}

/* ---------------------------------------------------------------- target generations */

static void tgen_free(struct iscsit_tgen *g)
{
	for (unsigned i = 0; i < g->n; i++)
		tgt_free(&g->tgts[i]);
	free(g->name_buf);
	free(g);
}

void iscsit_tgen_put(struct iscsit_tgen *g)
{
	if (g && atomic_fetch_sub(&g->refs, 1) == 1)
		tgen_free(g);
}

void iscsit_tgt_get(struct iscsit_tgt *t)
{
	atomic_fetch_add(&t->gen->refs, 1);
}

void iscsit_tgt_put(struct iscsit_tgt *t)
{
	if (t)
		iscsit_tgen_put(t->gen);
}

struct iscsit_tgt *iscsit_tgt_find(struct iscsit_ctx *ctx, const char *name)
{
	for (unsigned i = 0; i < ctx->ntgts; i++)
		if (!strcmp(ctx->tgts[i].name, name))
			return &ctx->tgts[i];
	return NULL;
}

struct iscsit_tgen *iscsit_tgen_build(struct iscsit_ctx *ctx, const struct tgt_driver *drv,
				      char *err, size_t errlen)
{
	struct iscsit_tgen *g = calloc(1, sizeof(*g) + drv->ntargets * sizeof(g->tgts[0]));
	size_t names = 0;
	char *p;

	for (unsigned i = 0; i < drv->ntargets; i++)
		names += strlen(drv->targets[i].name) + 1;
	if (!g || !(g->name_buf = p = malloc(names ? names : 1))) {
		free(g);
		snprintf(err, errlen, "iscsi: out of memory");
		return NULL;
	}
	atomic_init(&g->refs, 1);
	for (unsigned i = 0; i < drv->ntargets; i++) {
		size_t len = strlen(drv->targets[i].name) + 1;

		memcpy(p, drv->targets[i].name, len);
		if (tgt_setup(&g->tgts[i], &drv->targets[i], p, &ctx->sockopts,
			      attr_limit(&drv->attrs, "session_mem_limit", DEF_SESSION_MEM_LIMIT,
					 NULL),
			      i, NULL)) {
			snprintf(err, errlen, "iscsi: target %s: bad IncomingUser/OutgoingUser",
				 drv->targets[i].name);
			g->n = i + 1;
			tgen_free(g);
			return NULL;
		}
		g->tgts[i].gen = g;
		g->n = i + 1;
		p += len;
	}
	return g;
}

/* ---------------------------------------------------------------- start / stop */

static void ctx_free(struct iscsit_ctx *ctx)
{
	iscsit_tgen_put(ctx->gen);
	iscsit_auth_free(&ctx->disc_auth);
	free(ctx->portals);
	pthread_mutex_destroy(&ctx->sess_lock);
	pthread_rwlock_destroy(&ctx->tgt_lock);
	pthread_mutex_destroy(&ctx->drain_lock);
	pthread_cond_destroy(&ctx->drain_cv);
	free(ctx);
}

/* The global bounds; connections also fit the descriptors the process may open. */
static void limits_setup(struct iscsit_ctx *ctx)
{
	const struct tgt_attrs *as = &ctx->drv->attrs;
	struct rlimit rl;
	uint64_t n;

	ctx->mem_limit = attr_limit(as, "mem_limit", DEF_MEM_LIMIT, NULL);
	ctx->max_sessions = attr_u64(as, "max_sessions", 1u << 20, &n, NULL) ? (unsigned)n
									     : DEF_MAX_SESSIONS;
	ctx->max_conns = attr_u64(as, "max_connections", 1u << 20, &n, NULL) ? (unsigned)n
									       : DEF_MAX_CONNECTIONS;
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		/* room for the connections plus backing files, sockets and pipes of our own */
		rlim_t want = (rlim_t)(ctx->max_conns ? ctx->max_conns : 65536) + 256;

		if (rl.rlim_cur < want && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want && rl.rlim_cur > 512) {
			unsigned fit = (unsigned)(rl.rlim_cur - 256);

			iscsit_log("max_connections %u lowered to %u: RLIMIT_NOFILE is %llu",
				   ctx->max_conns, fit, (unsigned long long)rl.rlim_cur);
			ctx->max_conns = fit;
		}
	}
	iscsit_log("limits: mem_limit %llu MiB, max_sessions %u, max_connections %u (0: none)",
		   (unsigned long long)(ctx->mem_limit >> 20), ctx->max_sessions, ctx->max_conns);
}

static int iscsit_start(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
			size_t errlen)
{
	struct iscsit_ctx *ctx;
	uint64_t nworkers = 0, poll_us = 0;
	const char *dbg = getenv("UTGT_ISCSI_DEBUG");
	const char *iser[ISCSIT_ISER_PORTALS_MAX];

	if (iscsit_global) {
		snprintf(err, errlen, "iscsi: already started");
		return -1;
	}
	iscsit_debug = dbg && *dbg && strcmp(dbg, "0");
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		snprintf(err, errlen, "iscsi: out of memory");
		return -1;
	}
	pthread_mutex_init(&ctx->sess_lock, NULL);
	pthread_rwlock_init(&ctx->tgt_lock, NULL);
	pthread_mutex_init(&ctx->drain_lock, NULL);
	pthread_cond_init(&ctx->drain_cv, NULL);
	ctx->next_tsih = 1;
	ctx->cfg = cfg;
	ctx->drv = drv;
	ctx->sockopts.nodelay = true;
	sockopts_parse(&drv->attrs, &ctx->sockopts, NULL, NULL);
	iscsit_tgt_params_default(&ctx->disc_params);
	if (iscsit_auth_parse(&ctx->disc_auth, &drv->attrs, NULL)) {
		snprintf(err, errlen, "iscsi: bad IncomingUser/OutgoingUser at driver level");
		ctx_free(ctx);
		return -1;
	}
	limits_setup(ctx);
	ctx->gen = iscsit_tgen_build(ctx, drv, err, errlen);
	if (!ctx->gen) {
		ctx_free(ctx);
		return -1;
	}
	ctx->tgts = ctx->gen->tgts;
	ctx->ntgts = ctx->gen->n;
	attr_u64(&drv->attrs, "worker_threads", 256, &nworkers, NULL);
	attr_u64(&drv->attrs, "poll_us", POLL_US_MAX, &poll_us, NULL);
	ctx->poll_us = (unsigned)poll_us;
	ctx->placement = placement_parse(&drv->attrs, NULL);
	ctx->pin = pin_parse(&drv->attrs, NULL);
	if (iscsit_workers_start(ctx, (unsigned)nworkers, err, errlen) ||
	    iscsit_portals_open(ctx, iser_listen_portals(drv, iser, ISCSIT_ISER_PORTALS_MAX), err,
				errlen) ||
	    iser_listen_start(ctx, err, errlen)) {
		iscsit_portals_close(ctx);
		iscsit_workers_stop(ctx);
		ctx_free(ctx);
		return -1;
	}
	iscsit_global = ctx;
	iscsit_log("started: %u target(s), %u portal(s), %u worker(s)", ctx->ntgts, ctx->nportals,
		   ctx->nworkers);
	return 0;
}

struct shutdown_msg {
	struct ut_msg m;
	struct iscsit_worker *w;
	bool close_all;
	unsigned secs;
};

static void shutdown_fn(struct ut_msg *m)
{
	struct shutdown_msg *sm = (struct shutdown_msg *)m;
	struct iscsit_worker *w = sm->w;

	for (struct iscsit_conn *c = w->conns, *nx; c; c = nx) {
		nx = c->wnext;
		if (sm->close_all)
			iscsit_conn_close(c, "target shutting down");
		else if (c->state == CONN_FFP)
			iscsit_conn_request_logout(c, sm->secs);
		else if (c->state == CONN_LOGIN)
			iscsit_conn_close(c, "target shutting down");
	}
	free(sm);
}

static void broadcast(struct iscsit_ctx *ctx, bool close_all, unsigned secs)
{
	for (unsigned i = 0; i < ctx->nworkers; i++) {
		struct shutdown_msg *sm = calloc(1, sizeof(*sm));

		if (!sm)
			continue;
		sm->m.fn = shutdown_fn;
		sm->w = &ctx->workers[i];
		sm->close_all = close_all;
		sm->secs = secs;
		ut_thread_post(&sm->w->ut, &sm->m);
	}
}

/* Wait until every connection is gone or the deadline passes. */
static bool wait_conns(struct iscsit_ctx *ctx, unsigned secs)
{
	struct timespec dl;
	bool empty;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += secs;
	pthread_mutex_lock(&ctx->drain_lock);
	while (atomic_load(&ctx->nconns) &&
	       pthread_cond_timedwait(&ctx->drain_cv, &ctx->drain_lock, &dl) == 0)
		;
	empty = atomic_load(&ctx->nconns) == 0;
	pthread_mutex_unlock(&ctx->drain_lock);
	return empty;
}

static void iscsit_stop(void)
{
	struct iscsit_ctx *ctx = iscsit_global;
	uint64_t logout_wait = 2;

	if (!ctx)
		return;
	atomic_store(&ctx->stopping, true);
	attr_u64(&ctx->drv->attrs, "logout_wait", 60, &logout_wait, NULL);
	iscsit_portals_close(ctx);
	iser_listen_close(ctx);
	if (atomic_load(&ctx->nconns) && logout_wait) {
		/* Ask nicely first (Async Message, event 1), then close what is left; closing a
		 * connection waits for the commands it has in the core, so no I/O is cut short. */
		broadcast(ctx, false, (unsigned)logout_wait);
		wait_conns(ctx, (unsigned)logout_wait);
	}
	if (atomic_load(&ctx->nconns)) {
		broadcast(ctx, true, 0);
		if (!wait_conns(ctx, 60))
			iscsit_log("stop: %u connection(s) still waiting for I/O after 60 s",
				   atomic_load(&ctx->nconns));
	}
	iser_listen_stop(ctx);
	iscsit_workers_stop(ctx);
	iscsit_global = NULL;
	ctx_free(ctx);
	iscsit_log("stopped");
}

const struct tgt_transport iscsi_transport = {
    .driver = "iscsi",
    .driver_attrs = driver_attrs,
    .target_attrs = target_attrs,
    .validate = iscsit_validate,
    .start = iscsit_start,
    .stop = iscsit_stop,
    .show_sessions = iscsit_show_sessions,
    .update = iscsit_update,
    .close_session = iscsit_close_session,
};
