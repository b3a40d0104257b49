/* Sessions: the table (TSIH, ISID lookups for reinstatement), the I_T nexus each normal
 * session registers with the SCSI core, and the CmdSN window (RFC 7143 4.2.2.1):
 * ExpCmdSN advances with each in-order non-immediate PDU; MaxCmdSN leaves room for
 * QueuedCommands commands that have not been answered yet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

struct iscsit_session *iscsit_session_by_tsih(struct iscsit_ctx *ctx, uint16_t tsih)
{
	for (struct iscsit_session *s = ctx->sessions; s; s = s->next)
		if (s->tsih == tsih)
			return s;
	return NULL;
}

/* Targets compare by name: a login after a configuration change holds a newer generation's
 * target than the session it reinstates. */
static bool same_target(const struct iscsit_tgt *a, const struct iscsit_tgt *b)
{
	return a == b || (a && b && !strcmp(a->name, b->name));
}

struct iscsit_session *iscsit_session_by_isid(struct iscsit_ctx *ctx, const uint8_t isid[6],
					      const char *iname, const struct iscsit_tgt *t,
					      bool discovery)
{
	for (struct iscsit_session *s = ctx->sessions; s; s = s->next)
		if (!memcmp(s->isid, isid, 6) && same_target(s->tgt, t) &&
		    s->p.discovery == discovery && !strcmp(s->p.initiator_name, iname))
			return s;
	return NULL;
}

unsigned iscsit_session_count(struct iscsit_ctx *ctx, const char *name)
{
	unsigned n = 0;

	pthread_mutex_lock(&ctx->sess_lock);
	for (struct iscsit_session *s = ctx->sessions; s; s = s->next)
		if (s->tgt && !strcmp(s->tgt->name, name))
			n++;
	pthread_mutex_unlock(&ctx->sess_lock);
	return n;
}

static uint16_t alloc_tsih(struct iscsit_ctx *ctx)
{
	for (unsigned i = 0; i < 65536; i++) {
		uint16_t t = ctx->next_tsih++;

		if (t == 0)
			continue;
		if (!iscsit_session_by_tsih(ctx, t))
			return t;
	}
	return 0;
}

static void isid_hex(const uint8_t isid[6], char *out)
{
	for (int i = 0; i < 6; i++)
		sprintf(out + 2 * i, "%02x", isid[i]);
}

struct iscsit_session *iscsit_session_create(struct iscsit_conn *c,
					     const struct iscsit_sess_params *p,
					     const uint8_t isid[6], uint32_t cmd_sn,
					     uint16_t *status)
{
	struct iscsit_ctx *ctx = c->ctx;
	struct iscsit_session *s = calloc(1, sizeof(*s));
	struct iscsit_tgt *cur = NULL;
	char hex[13];

	*status = ISCSI_LOGIN_OUT_OF_RESOURCES;
	if (!s)
		return NULL;
	s->ctx = ctx;
	s->tgt = p->discovery ? NULL : c->tgt;
	memcpy(s->isid, isid, 6);
	s->p = *p;
	s->exp_cmd_sn = cmd_sn;
	s->queued_cmds = s->tgt ? s->tgt->params.queued_cmds : 8;
	s->conn = c;
	s->created = iscsit_now(c->w);
	s->local = c->local;
	s->portal = c->portal;
	s->mem_limit = s->tgt ? s->tgt->sess_mem_limit : 0;
	pthread_mutex_init(&s->lock, NULL);

	isid_hex(isid, hex);
	s->nexus.proto = SCSI_PROTO_ISCSI;
	snprintf(s->nexus.initiator_name, sizeof(s->nexus.initiator_name), "%s", p->initiator_name);
	snprintf(s->nexus.initiator_port, sizeof(s->nexus.initiator_port), "%s,i,0x%s",
		 p->initiator_name, hex);
	s->nexus.transport_priv = s;
	if (s->tgt) {
		snprintf(s->nexus.target_name, sizeof(s->nexus.target_name), "%s", s->tgt->name);
		snprintf(s->nexus.target_port, sizeof(s->nexus.target_port), "%s,t,0x%04x",
			 s->tgt->name, s->tgt->tpgt);
		s->nexus.rel_tgt_id = s->tgt->rel_tgt_id;
	}

	/* The LUN table comes from the target as configured now, and the session enters the
	 * table before a change can walk it: tgt_lock is held from one to the other, so a live
	 * change (iscsi_update.c) either precedes the resolution or finds the session. */
	pthread_rwlock_rdlock(&ctx->tgt_lock);
	if (s->tgt) {
		cur = iscsit_tgt_find(ctx, s->tgt->name);
		if (!cur || !cur->t->enabled || !iscsit_portal_allowed(cur, c->portal, &c->local) ||
		    (s->nexus.luns = iscsit_acl_luns(cur, p->initiator_name, &c->local))->n == 0) {
			pthread_rwlock_unlock(&ctx->tgt_lock);
			*status = cur ? ISCSI_LOGIN_AUTHZ_FAILED : ISCSI_LOGIN_NOT_FOUND;
			pthread_mutex_destroy(&s->lock);
			free(s);
			return NULL;
		}
		/* registered before it can be found: a change only meets registered nexuses */
		scsi_nexus_register(&s->nexus);
		s->nexus_registered = true;
	}
	pthread_mutex_lock(&ctx->sess_lock);
	s->tsih = alloc_tsih(ctx);
	if (!s->tsih) {
		pthread_mutex_unlock(&ctx->sess_lock);
		pthread_rwlock_unlock(&ctx->tgt_lock);
		if (s->nexus_registered)
			scsi_nexus_unregister(&s->nexus);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	s->next = ctx->sessions;
	ctx->sessions = s;
	s->in_table = true;
	atomic_fetch_add(&ctx->nsessions, 1);
	pthread_mutex_unlock(&ctx->sess_lock);
	pthread_rwlock_unlock(&ctx->tgt_lock);
	if (s->tgt)
		iscsit_tgt_get(s->tgt);
	return s;
}

struct resume_msg {
	struct ut_msg m;
	struct iscsit_conn *c;
};

static void resume_fn(struct ut_msg *m)
{
	struct resume_msg *rm = (struct resume_msg *)m;
	struct iscsit_conn *c = rm->c;

	free(rm);
	iscsit_login_resume(c);
	iscsit_conn_put(c);
}

void iscsit_session_release(struct iscsit_session *s)
{
	struct iscsit_ctx *ctx = s->ctx;
	struct iscsit_conn *waiter;

	/* out of the table first: a live change sets LUN tables only on nexuses it finds there,
	 * under sess_lock, so none is set on a nexus being unregistered */
	pthread_mutex_lock(&ctx->sess_lock);
	if (s->in_table) {
		for (struct iscsit_session **pp = &ctx->sessions; *pp; pp = &(*pp)->next) {
			if (*pp == s) {
				*pp = s->next;
				break;
			}
		}
		s->in_table = false;
		atomic_fetch_sub(&ctx->nsessions, 1);
	}
	pthread_mutex_unlock(&ctx->sess_lock);
	if (s->nexus_registered) {
		scsi_nexus_unregister(&s->nexus);
		s->nexus_registered = false;
	}
	pthread_mutex_lock(&ctx->sess_lock);
	waiter = s->waiter;
	if (waiter) {
		/* A login is waiting for this session to go: wake it on its own worker. */
		struct resume_msg *rm = malloc(sizeof(*rm));

		waiter->wait_for = NULL;
		if (rm) {
			atomic_fetch_add(&waiter->refs, 1);
			rm->m.fn = resume_fn;
			rm->c = waiter;
			ut_thread_post(&waiter->w->ut, &rm->m);
		}
	}
	pthread_mutex_unlock(&ctx->sess_lock);
	iscsit_tgt_put(s->tgt);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static uint32_t max_cmd_sn_locked(const struct iscsit_session *s)
{
	uint32_t room = s->inflight < s->queued_cmds ? s->queued_cmds - s->inflight : 0;

	/* room 0 gives ExpCmdSN - 1: the window is closed until an answer goes out. */
	return s->exp_cmd_sn + room - 1;
}

uint32_t iscsit_session_max_cmd_sn(struct iscsit_session *s)
{
	uint32_t v;

	pthread_mutex_lock(&s->lock);
	v = max_cmd_sn_locked(s);
	pthread_mutex_unlock(&s->lock);
	return v;
}

uint32_t iscsit_session_exp_cmd_sn(struct iscsit_session *s)
{
	uint32_t v;

	pthread_mutex_lock(&s->lock);
	v = s->exp_cmd_sn;
	pthread_mutex_unlock(&s->lock);
	return v;
}

enum iscsit_cmdsn_verdict iscsit_cmdsn_check(struct iscsit_session *s, uint32_t cmd_sn,
					     bool immediate, bool counts)
{
	enum iscsit_cmdsn_verdict v;

	pthread_mutex_lock(&s->lock);
	if (immediate) {
		/* Immediate PDUs carry the current CmdSN, do not advance it, and are delivered
		 * at once (RFC 7143 3.2.2.1). */
		v = CMDSN_ACCEPT;
	} else if (cmd_sn == s->exp_cmd_sn) {
		if (counts && s->inflight >= s->queued_cmds) {
			v = CMDSN_DROP; /* window closed: MaxCmdSN < CmdSN */
		} else {
			s->exp_cmd_sn++;
			if (counts)
				s->inflight++;
			v = CMDSN_ACCEPT;
		}
	} else if (sn_lt(s->exp_cmd_sn, cmd_sn) && sn_le(cmd_sn, max_cmd_sn_locked(s))) {
		v = CMDSN_QUEUE;
	} else {
		v = CMDSN_DROP;
	}
	pthread_mutex_unlock(&s->lock);
	return v;
}

bool iscsit_mem_charge(struct iscsit_session *s, uint64_t n, bool *global)
{
	struct iscsit_ctx *ctx = s->ctx;
	uint64_t sess_before = atomic_fetch_add(&s->mem_used, n);
	uint64_t glob_before;

	*global = false;
	if (s->mem_limit && sess_before && sess_before + n > s->mem_limit) {
		atomic_fetch_sub(&s->mem_used, n);
		return false;
	}
	glob_before = atomic_fetch_add(&ctx->mem_used, n);
	if (ctx->mem_limit && glob_before + n > ctx->mem_limit) {
		atomic_fetch_sub(&ctx->mem_used, n);
		atomic_fetch_sub(&s->mem_used, n);
		*global = true;
		return false;
	}
	return true;
}

void iscsit_mem_uncharge(struct iscsit_ctx *ctx, struct iscsit_session *s, uint64_t n)
{
	atomic_fetch_sub(&ctx->mem_used, n);
	if (s)
		atomic_fetch_sub(&s->mem_used, n);
}

void iscsit_cmdsn_release(struct iscsit_session *s)
{
	pthread_mutex_lock(&s->lock);
	if (s->inflight)
		s->inflight--;
	pthread_mutex_unlock(&s->lock);
}

void iscsit_cmdsn_enqueue(struct iscsit_session *s, struct iscsit_task *t)
{
	struct iscsit_task **pp;

	pthread_mutex_lock(&s->lock);
	for (pp = &s->waitq; *pp && sn_lt((*pp)->cmd_sn, t->cmd_sn); pp = &(*pp)->qnext)
		;
	t->qnext = *pp;
	*pp = t;
	t->in_waitq = true;
	pthread_mutex_unlock(&s->lock);
}

struct iscsit_task *iscsit_cmdsn_ready(struct iscsit_session *s)
{
	struct iscsit_task *t = NULL;

	pthread_mutex_lock(&s->lock);
	/* Drop stale entries (a duplicate CmdSN the gap fill overtook). */
	while (s->waitq && sn_lt(s->waitq->cmd_sn, s->exp_cmd_sn)) {
		struct iscsit_task *stale = s->waitq;

		s->waitq = stale->qnext;
		stale->qnext = NULL;
		stale->in_waitq = false;
		stale->local_abort = true;
		if (!t)
			t = stale; /* returned so the caller frees it */
		else
			break;
	}
	if (!t && s->waitq && s->waitq->cmd_sn == s->exp_cmd_sn) {
		t = s->waitq;
		s->waitq = t->qnext;
		t->qnext = NULL;
		t->in_waitq = false;
		s->exp_cmd_sn++;
		s->inflight++;
	}
	pthread_mutex_unlock(&s->lock);
	return t;
}
