/* Admin socket `show sessions` for iSCSI (struct tgt_transport's show_sessions).  Runs on the
 * admin thread under the session table lock, the one logins and logouts take: a session in
 * the table is alive, and its connection pointer is cleared under the same lock before the
 * connection is freed (iscsit_conn_maybe_free).  What is read here is either fixed at login
 * (negotiated keys, addresses, the serving worker) or a relaxed counter of the core. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "scsi/scsi_stats_json.h"
#include "transports/iscsi/iscsi_int.h"

static void params(struct ut_json *j, const struct iscsit_sess_params *p)
{
	ut_json_obj(j, "params");
	/* "ours": what we accept per PDU; "theirs": the initiator's, what we send per PDU */
	ut_json_u64(j, "MaxRecvDataSegmentLength_target", p->max_recv_dsl);
	ut_json_u64(j, "MaxRecvDataSegmentLength_initiator", p->max_xmit_dsl);
	ut_json_u64(j, "MaxBurstLength", p->max_burst);
	ut_json_u64(j, "FirstBurstLength", p->first_burst);
	ut_json_bool(j, "InitialR2T", p->initial_r2t);
	ut_json_bool(j, "ImmediateData", p->immediate_data);
	ut_json_str(j, "HeaderDigest", p->header_digest ? "CRC32C" : "None");
	ut_json_str(j, "DataDigest", p->data_digest ? "CRC32C" : "None");
	ut_json_u64(j, "MaxOutstandingR2T", p->max_outstanding_r2t);
	ut_json_u64(j, "MaxConnections", p->max_connections);
	ut_json_u64(j, "ErrorRecoveryLevel", p->erl);
	ut_json_end_obj(j);
}

static void conn(struct ut_json *j, const struct iscsit_conn *c)
{
	ut_json_obj(j, NULL);
	ut_json_u64(j, "id", c->id);
	ut_json_u64(j, "cid", c->cid);
	ut_json_str(j, "transport", c->xp->name);
	ut_json_str(j, "portal", c->portal ? c->portal->str : NULL);
	ut_json_str(j, "local", c->local_str);
	ut_json_str(j, "peer", c->peer_str);
	ut_json_u64(j, "worker", c->w->idx);
	/* backpressure: input stopped while the initiator does not read its answers */
	ut_json_bool(j, "tx_full", c->tx_full);
	ut_json_u64(j, "rx_throttled", c->rx_throttled);
	if (c->xp->show)
		c->xp->show(c, j);
	ut_json_end_obj(j);
}

void iscsit_show_sessions(const struct tgt_driver *drv, struct ut_json *j,
			  struct scsi_io_stats *total)
{
	struct iscsit_ctx *ctx = iscsit_global;
	char isid[13];
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &now); /* the clock s->created was taken from */

	if (!ctx || ctx->drv != drv)
		return;
	pthread_mutex_lock(&ctx->sess_lock);
	for (const struct iscsit_session *s = ctx->sessions; s; s = s->next) {
		if (!s->tgt)
			continue; /* discovery sessions address no LU */
		for (int i = 0; i < 6; i++)
			snprintf(isid + 2 * i, 3, "%02x", s->isid[i]);
		ut_json_obj(j, NULL);
		ut_json_str(j, "driver", drv->name);
		scsi_nexus_json(j, &s->nexus, total);
		ut_json_str(j, "isid", isid);
		ut_json_u64(j, "tsih", s->tsih);
		ut_json_str(j, "initiator_alias", s->p.initiator_alias);
		ut_json_u64(j, "age_s", (uint64_t)(now.tv_sec - s->created));
		params(j, &s->p);
		ut_json_obj(j, "limits");
		ut_json_u64(j, "mem_bytes", atomic_load(&s->mem_used));
		ut_json_u64(j, "mem_limit", s->mem_limit);
		ut_json_u64(j, "refused_mem", atomic_load(&s->refused_mem));
		ut_json_u64(j, "started", atomic_load(&s->started));
		ut_json_u64(j, "immediate_alive", atomic_load(&s->nimm));
		ut_json_u64(j, "rejected_immediate", atomic_load(&s->rejected_imm));
		ut_json_end_obj(j);
		ut_json_arr(j, "connections");
		if (s->conn)
			conn(j, s->conn);
		ut_json_end_arr(j);
		ut_json_end_obj(j);
	}
	pthread_mutex_unlock(&ctx->sess_lock);
}
