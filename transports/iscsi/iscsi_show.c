/* Admin socket `show sessions` for iSCSI (struct tgt_transport's show_sessions).  Runs on the
 * admin thread under the session table lock, the one logins and logouts take: a session in
 * the table is alive, and its connection pointer is cleared under the same lock before the
 * connection is freed (iscsit_conn_maybe_free).  What is read here is either fixed at login
 * (negotiated keys, addresses, the serving worker) or a relaxed counter of the core. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "target/admin.h"
#include "transports/iscsi/iscsi_int.h"

static void params(struct tgt_json *j, const struct iscsit_sess_params *p)
{
	tgt_json_obj(j, "params");
	/* "ours": what we accept per PDU; "theirs": the initiator's, what we send per PDU */
	tgt_json_u64(j, "MaxRecvDataSegmentLength_target", p->max_recv_dsl);
	tgt_json_u64(j, "MaxRecvDataSegmentLength_initiator", p->max_xmit_dsl);
	tgt_json_u64(j, "MaxBurstLength", p->max_burst);
	tgt_json_u64(j, "FirstBurstLength", p->first_burst);
	tgt_json_bool(j, "InitialR2T", p->initial_r2t);
	tgt_json_bool(j, "ImmediateData", p->immediate_data);
	tgt_json_str(j, "HeaderDigest", p->header_digest ? "CRC32C" : "None");
	tgt_json_str(j, "DataDigest", p->data_digest ? "CRC32C" : "None");
	tgt_json_u64(j, "MaxOutstandingR2T", p->max_outstanding_r2t);
	tgt_json_u64(j, "MaxConnections", p->max_connections);
	tgt_json_u64(j, "ErrorRecoveryLevel", p->erl);
	tgt_json_end_obj(j);
}

static void conn(struct tgt_json *j, const struct iscsit_conn *c)
{
	tgt_json_obj(j, NULL);
	tgt_json_u64(j, "id", c->id);
	tgt_json_u64(j, "cid", c->cid);
	tgt_json_str(j, "transport", c->xp->name);
	tgt_json_str(j, "portal", c->portal ? c->portal->str : NULL);
	tgt_json_str(j, "local", c->local_str);
	tgt_json_str(j, "peer", c->peer_str);
	tgt_json_u64(j, "worker", c->w->idx);
	/* backpressure: input stopped while the initiator does not read its answers */
	tgt_json_bool(j, "tx_full", c->tx_full);
	tgt_json_u64(j, "rx_throttled", c->rx_throttled);
	if (c->xp->show)
		c->xp->show(c, j);
	tgt_json_end_obj(j);
}

void iscsit_show_sessions(const struct tgt_driver *drv, struct tgt_json *j,
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
		tgt_json_obj(j, NULL);
		tgt_json_str(j, "driver", drv->name);
		admin_json_nexus(j, &s->nexus, total);
		tgt_json_str(j, "isid", isid);
		tgt_json_u64(j, "tsih", s->tsih);
		tgt_json_str(j, "initiator_alias", s->p.initiator_alias);
		tgt_json_u64(j, "age_s", (uint64_t)(now.tv_sec - s->created));
		params(j, &s->p);
		tgt_json_obj(j, "limits");
		tgt_json_u64(j, "mem_bytes", atomic_load(&s->mem_used));
		tgt_json_u64(j, "mem_limit", s->mem_limit);
		tgt_json_u64(j, "refused_mem", atomic_load(&s->refused_mem));
		tgt_json_u64(j, "immediate_alive", atomic_load(&s->nimm));
		tgt_json_u64(j, "rejected_immediate", atomic_load(&s->rejected_imm));
		tgt_json_end_obj(j);
		tgt_json_arr(j, "connections");
		if (s->conn)
			conn(j, s->conn);
		tgt_json_end_arr(j);
		tgt_json_end_obj(j);
	}
	pthread_mutex_unlock(&ctx->sess_lock);
}
