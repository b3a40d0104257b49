/* Login phase (RFC 7143 6.3, 11.12-11.13): stages and transitions (CSG/NSG/T/C), ISID/TSIH
 * rules and session reinstatement, discovery versus normal sessions, target lookup, ACL,
 * allowed_portal, CHAP, and operational key negotiation.  Runs on the connection's worker. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

#define MAX_KEYS 256

struct iscsit_login {
	bool started;
	uint8_t stage; /* current stage (CSG the next request must carry) */
	uint8_t isid[6];
	uint16_t tsih;
	uint16_t cid;
	uint32_t itt;
	struct iscsit_sess_params p;
	struct iscsit_tgt_params tp; /* the target's keys as this connection's transport allows */
	struct iscsit_neg neg;
	struct iscsit_chap *chap;
	const struct iscsit_auth *auth;
	bool auth_required;
	bool auth_done;
	bool target_sent_tpgt;
	/* text of a request split over several PDUs (C bit) */
	char *acc;
	size_t acc_len;
	/* final response held back while an old session is reinstated */
	uint8_t held_req[ISCSI_BHS_LEN];
	struct iscsit_text held;
	uint8_t held_flags;
	bool held_valid;
};

void iscsit_login_free(struct iscsit_conn *c)
{
	struct iscsit_login *l = c->login;

	if (!l)
		return;
	iscsit_chap_free(l->chap);
	free(l->acc);
	iscsit_text_free(&l->held);
	free(l);
	c->login = NULL;
}

static void send_rsp(struct iscsit_conn *c, const uint8_t *req, uint8_t flags, uint16_t tsih,
		     uint16_t status, const struct iscsit_text *text, bool close_after)
{
	uint8_t hdr[ISCSI_BHS_LEN];
	struct iscsi_sn sn;
	struct iscsit_txe *e;
	uint32_t len = text ? (uint32_t)text->len : 0;

	iscsit_conn_sn(c, &sn, true);
	iscsi_bhs_login_rsp(hdr, req, flags, tsih, status, &sn, len);
	e = iscsit_txe_new();
	if (!e) {
		iscsit_conn_close(c, "out of memory");
		return;
	}
	memcpy(e->hdr, hdr, ISCSI_BHS_LEN);
	e->kind = TXE_PDU;
	e->nodigest = true;
	e->close_after = close_after;
	if (len) {
		e->owned = malloc(len);
		if (!e->owned) {
			free(e);
			iscsit_conn_close(c, "out of memory");
			return;
		}
		memcpy(e->owned, text->p, len);
		e->data = e->owned;
		e->dlen = len;
	}
	iscsit_tx_queue(c, e);
}

/* Answer with a login failure and close once it is out. */
static int fail(struct iscsit_conn *c, const uint8_t *req, uint16_t status, const char *why)
{
	struct iscsit_login *l = c->login;

	iscsit_log("conn %llu: login from %s (%s) refused: %04x %s", (unsigned long long)c->id,
		   c->peer_str, l && l->p.initiator_name[0] ? l->p.initiator_name : "?", status,
		   why);
	send_rsp(c, req, 0, 0, status, NULL, true);
	c->close_why = "login failed";
	iscsit_conn_pause(c);
	return RX_CB_PAUSE;
}

/* Names and session type come first: they decide the target and what AuthMethod may be. */
static uint16_t first_pdu_checks(struct iscsit_conn *c, struct iscsit_kv *kv, unsigned n)
{
	struct iscsit_login *l = c->login;
	const char *iname = NULL, *tname = NULL, *stype = NULL;
	struct iscsit_tgt *t = NULL;

	for (unsigned i = 0; i < n; i++) {
		if (!strcmp(kv[i].key, "InitiatorName"))
			iname = kv[i].val;
		else if (!strcmp(kv[i].key, "TargetName"))
			tname = kv[i].val;
		else if (!strcmp(kv[i].key, "SessionType"))
			stype = kv[i].val;
	}
	if (!iname || !*iname)
		return ISCSI_LOGIN_MISSING_PARAM;
	if (stype && !strcmp(stype, "Discovery")) {
		l->auth = &c->ctx->disc_auth;
		l->tp = c->ctx->disc_params;
	} else {
		if (!tname || !*tname)
			return ISCSI_LOGIN_MISSING_PARAM;
		uint16_t st = 0;

		/* the targets as configured now: live administration may replace them */
		pthread_rwlock_rdlock(&c->ctx->tgt_lock);
		t = iscsit_tgt_find(c->ctx, tname);
		if (!t || !t->t->enabled || !iscsit_portal_allowed(t, c->portal, &c->local) ||
		    !c->xp->target_allowed(t))
			st = ISCSI_LOGIN_NOT_FOUND;
		else if (iscsit_acl_luns(t, iname, &c->local)->n == 0)
			st = ISCSI_LOGIN_AUTHZ_FAILED;
		else
			iscsit_tgt_get(t);
		pthread_rwlock_unlock(&c->ctx->tgt_lock);
		if (st)
			return st;
		c->tgt = t;
		l->auth = &t->auth;
		l->tp = t->params;
	}
	if (!(c->xp->caps & ISCSIT_XP_DIGESTS)) {
		/* no digests on this transport whatever the target says (iSER: RFC 7145 5.1) */
		l->tp.hdigest_crc = l->tp.ddigest_crc = false;
		l->tp.hdigest_none = l->tp.ddigest_none = true;
	}
	if (!(c->xp->caps & ISCSIT_XP_UNSOLICITED))
		l->tp.initial_r2t = true; /* OR-negotiated: Yes whatever the initiator says */
	l->neg.tgt = &l->tp;
	l->auth_required = l->auth->nin > 0;
	l->neg.auth_chap_allowed = l->auth->nin > 0;
	l->neg.auth_none_allowed = !l->auth_required;
	return 0;
}

/* The transport's last word on an answer the engine built. */
static int answer_fix(struct iscsit_conn *c, struct iscsit_text *out, bool final, uint16_t *st)
{
	return c->xp->login_answer ? c->xp->login_answer(c, out, final, st) : 0;
}

/* Leave the login phase: create the session and send the final response. */
static int finish(struct iscsit_conn *c, const uint8_t *req, uint8_t flags, struct iscsit_text *out)
{
	struct iscsit_login *l = c->login;
	struct iscsit_session *s;
	uint16_t status = ISCSI_LOGIN_OUT_OF_RESOURCES;
	char hex[13];

	if (c->tgt && c->tgt->max_sessions &&
	    iscsit_session_count(c->ctx, c->tgt->name) >= c->tgt->max_sessions)
		return fail(c, req, ISCSI_LOGIN_OUT_OF_RESOURCES, "MaxSessions reached");
	if (c->ctx->max_sessions && atomic_load(&c->ctx->nsessions) >= c->ctx->max_sessions)
		return fail(c, req, ISCSI_LOGIN_OUT_OF_RESOURCES, "max_sessions reached");
	s = iscsit_session_create(c, &l->p, l->isid, c->login_cmd_sn, &status);
	if (!s)
		return fail(c, req, status,
			    status == ISCSI_LOGIN_OUT_OF_RESOURCES
				? "cannot create session"
				: "the target's configuration changed during the login");
	c->sess = s;
	send_rsp(c, req, flags, s->tsih, 0, out, false);
	iscsit_conn_enter_ffp(c);
	for (int i = 0; i < 6; i++)
		sprintf(hex + 2 * i, "%02x", l->isid[i]);
	iscsit_log("conn %llu: %s %s session tsih %u isid 0x%s: %s -> %s on worker %u (cpu %d), "
		   "HeaderDigest %s DataDigest %s MRDSL %u/%u MaxBurst %u FirstBurst %u "
		   "InitialR2T %s ImmediateData %s",
		   (unsigned long long)c->id, c->xp->name, l->p.discovery ? "discovery" : "normal",
		   s->tsih, hex, l->p.initiator_name, c->tgt ? c->tgt->name : "(discovery)",
		   c->w->idx, c->w->ut.cpu, s->p.header_digest ? "CRC32C" : "None",
		   s->p.data_digest ? "CRC32C" : "None", s->p.max_recv_dsl, s->p.max_xmit_dsl,
		   s->p.max_burst, s->p.first_burst, s->p.initial_r2t ? "Yes" : "No",
		   s->p.immediate_data ? "Yes" : "No");
	iscsit_login_free(c);
	/* no command is read before c runs where it stays */
	return iscsit_place_decide(c) ? RX_CB_PAUSE : RX_CB_OK;
}

/* Leading login of an I_T nexus that already has a session: that session goes first
 * (RFC 7143 6.3.5 session reinstatement). */
static int reinstate_or_finish(struct iscsit_conn *c, const uint8_t *req, uint8_t flags,
			       struct iscsit_text *out)
{
	struct iscsit_ctx *ctx = c->ctx;
	struct iscsit_login *l = c->login;
	struct iscsit_session *old;
	unsigned old_tsih;

	pthread_mutex_lock(&ctx->sess_lock);
	old = iscsit_session_by_isid(ctx, l->isid, l->p.initiator_name, c->tgt, l->p.discovery);
	if (old) {
		if (old->waiter && old->waiter != c) {
			/* a second login racing for the same nexus: the newer one wins */
			struct iscsit_conn *prev = old->waiter;

			prev->wait_for = NULL;
			old->waiter = NULL;
			iscsit_conn_close_async(prev, "superseded by a newer login");
		}
		old->waiter = c;
		c->wait_for = old;
		if (old->conn && !old->closing)
			iscsit_conn_close_async(old->conn, "session reinstated by a new login");
		old->closing = true;
		/* once the lock is let go, old's last connection may close on its own worker and
		 * free it: nothing of old is read after this */
		old_tsih = old->tsih;
		pthread_mutex_unlock(&ctx->sess_lock);
		if (req != l->held_req)
			memcpy(l->held_req, req, ISCSI_BHS_LEN);
		iscsit_text_free(&l->held);
		l->held = *out;
		memset(out, 0, sizeof(*out));
		l->held_flags = flags;
		l->held_valid = true;
		c->state = CONN_LOGIN_WAIT;
		iscsit_conn_pause(c);
		iscsit_log("conn %llu: reinstating the session of %s (old tsih %u)",
			   (unsigned long long)c->id, l->p.initiator_name, old_tsih);
		return RX_CB_PAUSE;
	}
	pthread_mutex_unlock(&ctx->sess_lock);
	return finish(c, req, flags, out);
}

void iscsit_login_resume(struct iscsit_conn *c)
{
	struct iscsit_login *l = c->login;
	struct iscsit_text out;
	uint8_t req[ISCSI_BHS_LEN];
	int rc;

	if (c->state != CONN_LOGIN_WAIT || !l || !l->held_valid)
		return;
	c->state = CONN_LOGIN;
	/* finish() frees the login state: work on copies */
	out = l->held;
	memset(&l->held, 0, sizeof(l->held));
	l->held_valid = false;
	memcpy(req, l->held_req, sizeof(req));
	rc = reinstate_or_finish(c, req, l->held_flags, &out);
	iscsit_text_free(&out);
	if (rc == RX_CB_OK)
		iscsit_conn_resume(c);
	iscsit_conn_mark_dirty(c);
}

/* Non-leading login (TSIH set).  MC/S is not offered (MaxConnections 1): another CID is one
 * connection too many.  The same CID is connection reinstatement after a failure the target
 * may not have noticed yet; at ErrorRecoveryLevel 0 the session cannot outlive its only
 * connection, so the old one is closed and the initiator told to start a new session. */
static uint16_t non_leading(struct iscsit_conn *c)
{
	struct iscsit_login *l = c->login;
	struct iscsit_session *s;
	uint16_t st;

	pthread_mutex_lock(&c->ctx->sess_lock);
	s = iscsit_session_by_tsih(c->ctx, l->tsih);
	if (!s || memcmp(s->isid, l->isid, 6) || s->closing) {
		st = ISCSI_LOGIN_NO_SESSION;
	} else if (s->conn && s->conn->cid == l->cid) {
		iscsit_conn_close_async(s->conn, "connection reinstated by a new login");
		s->closing = true;
		st = ISCSI_LOGIN_NO_SESSION;
	} else {
		st = ISCSI_LOGIN_TOO_MANY_CONNS;
	}
	pthread_mutex_unlock(&c->ctx->sess_lock);
	return st;
}

int iscsit_login_pdu(struct iscsit_conn *c, struct iscsit_rx *rx)
{
	const uint8_t *req = rx->bhs;
	struct iscsi_login_req lr;
	struct iscsit_login *l;
	struct iscsit_kv kv[MAX_KEYS];
	unsigned nkv = 0, sec[MAX_KEYS], nsec = 0;
	struct iscsit_text out = {0};
	uint16_t st;
	char *text;
	size_t tlen;
	uint8_t flags;
	int rc;

	st = iscsi_parse_login_req(req, &lr);
	if (!c->login) {
		c->login = calloc(1, sizeof(*c->login));
		if (!c->login)
			return fail(c, req, ISCSI_LOGIN_OUT_OF_RESOURCES, "out of memory");
	}
	l = c->login;
	if (!l->started) {
		l->started = true;
		memcpy(l->isid, lr.isid, 6);
		l->tsih = lr.tsih;
		l->cid = lr.cid;
		l->itt = lr.itt;
		l->stage = lr.csg;
		c->cid = lr.cid;
		c->stat_sn = lr.exp_stat_sn;
		c->login_cmd_sn = lr.cmd_sn;
		iscsit_sess_params_rfc_default(&l->p);
		iscsit_neg_init(&l->neg, &c->ctx->disc_params, &l->p, lr.tsih == 0);
	}
	if (st)
		return fail(c, req, st, "malformed login header");
	if (memcmp(lr.isid, l->isid, 6) || lr.tsih != l->tsih || lr.cid != l->cid)
		return fail(c, req, ISCSI_LOGIN_INITIATOR_ERROR, "ISID/TSIH/CID changed mid-login");
	if (lr.csg != l->stage)
		return fail(c, req, ISCSI_LOGIN_INITIATOR_ERROR, "unexpected CSG");
	c->exp_stat_sn = lr.exp_stat_sn;
	if (rx->ddigest_bad)
		return fail(c, req, ISCSI_LOGIN_INITIATOR_ERROR, "data digest during login");

	/* Gather text split across PDUs (C bit): answer each partial with an empty response. */
	if (rx->dsl) {
		char *p;

		if (l->acc_len + rx->dsl > 65536)
			return fail(c, req, ISCSI_LOGIN_INITIATOR_ERROR, "login text too long");
		p = realloc(l->acc, l->acc_len + rx->dsl + 1);
		if (!p)
			return fail(c, req, ISCSI_LOGIN_OUT_OF_RESOURCES, "out of memory");
		l->acc = p;
		memcpy(l->acc + l->acc_len, iscsit_rx_data(rx), rx->dsl);
		l->acc_len += rx->dsl;
	}
	if (lr.cont) {
		send_rsp(c, req, (uint8_t)(l->stage << 2), 0, 0, NULL, false);
		return RX_CB_OK;
	}
	text = l->acc;
	tlen = l->acc_len;
	l->acc = NULL;
	l->acc_len = 0;
	if (text) {
		enum iscsit_kv_err ke = iscsit_kv_parse(text, tlen, kv, MAX_KEYS, &nkv);

		if (ke != ISCSIT_KV_OK) {
			free(text);
			return fail(c, req, ISCSI_LOGIN_INITIATOR_ERROR, "malformed login text");
		}
	}

	if (!l->auth) {
		/* first complete request: who is this and what does it want? */
		st = first_pdu_checks(c, kv, nkv);
		if (st) {
			free(text);
			return fail(c, req, st,
				    st == ISCSI_LOGIN_NOT_FOUND ? "no such target here"
				    : st == ISCSI_LOGIN_AUTHZ_FAILED
					? "initiator sees no LUN of this target"
					: "missing InitiatorName/TargetName");
		}
		if (l->tsih) {
			st = non_leading(c);
			free(text);
			return fail(c, req, st, "no such session / MC/S not supported");
		}
	}
	if (c->xp->login_keys) {
		int left = c->xp->login_keys(c, kv, nkv, &out, &st);

		if (left < 0) {
			free(text);
			iscsit_text_free(&out);
			return fail(c, req, st, "transport login key refused");
		}
		nkv = (unsigned)left;
	}
	st = iscsit_neg_login(&l->neg, kv, nkv, l->stage, &out, sec, &nsec);
	if (st) {
		free(text);
		iscsit_text_free(&out);
		return fail(c, req, st,
			    st == ISCSI_LOGIN_AUTH_FAILED ? "no acceptable AuthMethod"
							  : "bad or duplicated login key");
	}
	if (!l->target_sent_tpgt && !l->p.discovery && c->tgt) {
		iscsit_text_addf(&out, "TargetPortalGroupTag", "%u", c->tgt->tpgt);
		if (c->tgt->alias[0])
			iscsit_text_add(&out, "TargetAlias", c->tgt->alias);
		l->target_sent_tpgt = true;
	}

	if (l->stage == ISCSI_STAGE_SECURITY) {
		if (nsec) {
			enum iscsit_chap_result cr;

			if (strcmp(l->neg.auth_method, "CHAP")) {
				free(text);
				iscsit_text_free(&out);
				return fail(c, req, ISCSI_LOGIN_INITIATOR_ERROR,
					    "CHAP keys without AuthMethod=CHAP");
			}
			if (!l->chap)
				l->chap = iscsit_chap_new(l->auth);
			cr = l->chap ? iscsit_chap_step(l->chap, kv, sec, nsec, &out) : CHAP_FAIL;
			if (cr == CHAP_FAIL || cr == CHAP_PROTO) {
				free(text);
				iscsit_text_free(&out);
				return fail(c, req,
					    cr == CHAP_FAIL ? ISCSI_LOGIN_AUTH_FAILED
							    : ISCSI_LOGIN_INITIATOR_ERROR,
					    cr == CHAP_FAIL ? "CHAP authentication failed"
							    : "malformed CHAP exchange");
			}
			if (cr == CHAP_DONE)
				l->auth_done = true;
		} else if (!strcmp(l->neg.auth_method, "None")) {
			l->auth_done = true;
		}
	} else if (nsec) {
		free(text);
		iscsit_text_free(&out);
		return fail(c, req, ISCSI_LOGIN_INITIATOR_ERROR,
			    "security keys in operational stage");
	} else if (l->auth_required && !l->auth_done) {
		free(text);
		iscsit_text_free(&out);
		return fail(c, req, ISCSI_LOGIN_AUTH_FAILED, "authentication required");
	}
	free(text);

	/* Transition decision. */
	flags = (uint8_t)(l->stage << 2);
	if (lr.transit) {
		uint8_t nsg = lr.nsg;
		bool can = true;

		if (l->stage == ISCSI_STAGE_SECURITY && !l->auth_done) {
			if (l->auth_required && !l->neg.auth_method[0]) {
				iscsit_text_free(&out);
				return fail(c, req, ISCSI_LOGIN_AUTH_FAILED,
					    "authentication required, AuthMethod not offered");
			}
			if (!l->auth_required && !l->neg.auth_method[0])
				l->auth_done = true; /* no AuthMethod at all: None */
			else
				can = false; /* CHAP still going */
		}
		if (can && nsg == ISCSI_STAGE_FULL) {
			/* Declarations ride along; an offer needs an answer in the operational
			 * stage first. */
			if (iscsit_neg_pending(&l->neg)) {
				/* asked to move on without answering our offers: some initiators
				 * never answer target offers; the RFC defaults stand */
				iscsit_dbg("conn %llu: offers unanswered, keeping defaults",
					   (unsigned long long)c->id);
				iscsit_neg_drop_offers(&l->neg);
			}
			if (iscsit_neg_offer(&l->neg, &out)) {
				if (l->stage == ISCSI_STAGE_SECURITY)
					nsg = ISCSI_STAGE_OPERATIONAL;
				else
					can = false;
			}
		}
		if (can) {
			flags |= ISCSI_LOGIN_TRANSIT | nsg;
			if (nsg == ISCSI_STAGE_FULL) {
				iscsit_neg_finish(&l->neg);
				if (!l->p.initiator_name[0]) {
					iscsit_text_free(&out);
					return fail(c, req, ISCSI_LOGIN_MISSING_PARAM,
						    "no InitiatorName");
				}
				if (answer_fix(c, &out, true, &st)) {
					iscsit_text_free(&out);
					return fail(c, req, st,
						    "transport refused the login's end");
				}
				rc = reinstate_or_finish(c, req, flags, &out);
				iscsit_text_free(&out);
				return rc;
			}
			l->stage = nsg;
		}
	}
	if (answer_fix(c, &out, false, &st)) {
		iscsit_text_free(&out);
		return fail(c, req, st, "transport refused the login answer");
	}
	if (out.oom) {
		iscsit_text_free(&out);
		return fail(c, req, ISCSI_LOGIN_OUT_OF_RESOURCES, "out of memory");
	}
	if (out.len > 8192) {
		iscsit_text_free(&out);
		return fail(c, req, ISCSI_LOGIN_TARGET_ERROR, "login response too long");
	}
	send_rsp(c, req, flags, 0, 0, &out, false);
	iscsit_text_free(&out);
	return RX_CB_OK;
}
