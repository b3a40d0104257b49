/* Live administration of the iSCSI front end (struct tgt_transport's update and
 * close_session): a new configuration's targets replace the current generation, and every
 * session is given the LUN table its ACL now resolves to.
 *
 * Nothing here touches the I/O path: the generation is swapped under tgt_lock (which logins,
 * discovery and session creation take), sessions are walked under sess_lock (logins and
 * logouts), and a session's new LUN table is published by scsi_nexus_set_luns(), which the
 * core reads once per command without a lock.  Connections still logging in to a replaced
 * target keep their reference to it; their session takes its LUN table from the current
 * generation (iscsit_session_create).  A session whose access is gone gets the empty table at
 * once, so no command of it reaches an LU, then its connection is closed on its worker. */
#include <stdio.h>
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

extern struct iscsit_ctx *iscsit_global;

static const struct scsi_lun_table no_luns;

/* What the session may address under the current generation; &no_luns when nothing. */
static const struct scsi_lun_table *resolve(struct iscsit_ctx *ctx, struct iscsit_session *s)
{
	struct iscsit_tgt *t = iscsit_tgt_find(ctx, s->tgt->name);
	const struct scsi_lun_table *luns;

	if (!t || !t->t->enabled || (s->portal && !iscsit_portal_allowed(t, s->portal, &s->local)))
		return &no_luns;
	luns = iscsit_acl_luns(t, s->p.initiator_name, &s->local);
	return luns->n ? luns : &no_luns;
}

/* Caller holds tgt_lock (write) with the new generation current, and sess_lock. */
static void relink_sessions(struct iscsit_ctx *ctx)
{
	for (struct iscsit_session *s = ctx->sessions; s; s = s->next) {
		const struct scsi_lun_table *luns;

		if (!s->tgt || !s->nexus_registered)
			continue;
		luns = resolve(ctx, s);
		scsi_nexus_set_luns(&s->nexus, luns);
		if (luns != &no_luns || s->closing)
			continue;
		s->closing = true;
		if (s->conn) {
			iscsit_log("session tsih %u (%s -> %s): access removed by a configuration "
				   "change; closing",
				   s->tsih, s->p.initiator_name, s->tgt->name);
			iscsit_conn_close_async(s->conn,
						"access removed by a configuration change");
		}
	}
}

int iscsit_update(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
		  size_t errlen)
{
	struct iscsit_ctx *ctx = iscsit_global;
	struct iscsit_tgen *g, *old;

	if (!ctx) {
		snprintf(err, errlen, "iscsi: not running");
		return -1;
	}
	g = iscsit_tgen_build(ctx, drv, err, errlen);
	if (!g)
		return -1;
	pthread_rwlock_wrlock(&ctx->tgt_lock);
	old = ctx->gen;
	for (unsigned i = 0; i < old->n; i++)
		old->tgts[i].t = NULL; /* its configuration is about to go */
	ctx->gen = g;
	ctx->tgts = g->tgts;
	ctx->ntgts = g->n;
	ctx->cfg = cfg;
	ctx->drv = drv;
	pthread_mutex_lock(&ctx->sess_lock);
	relink_sessions(ctx);
	pthread_mutex_unlock(&ctx->sess_lock);
	pthread_rwlock_unlock(&ctx->tgt_lock);
	iscsit_tgen_put(old); /* freed once its logins and sessions are gone */
	return 0;
}

int iscsit_close_session(uint64_t nexus_id, char *err, size_t errlen)
{
	struct iscsit_ctx *ctx = iscsit_global;
	struct iscsit_session *s = NULL;

	if (!ctx) {
		snprintf(err, errlen, "iscsi: not running");
		return -1;
	}
	pthread_mutex_lock(&ctx->sess_lock);
	for (s = ctx->sessions; s; s = s->next)
		if (s->tgt && s->nexus_registered && s->nexus.id == nexus_id)
			break;
	if (s && s->conn && !s->closing) {
		s->closing = true;
		iscsit_log("session tsih %u (%s -> %s): closed by the administrator", s->tsih,
			   s->p.initiator_name, s->tgt->name);
		iscsit_conn_close_async(s->conn, "closed by the administrator");
	}
	pthread_mutex_unlock(&ctx->sess_lock);
	if (!s) {
		snprintf(err, errlen, "no iSCSI session with nexus id %llu",
			 (unsigned long long)nexus_id);
		return -1;
	}
	return 0;
}
