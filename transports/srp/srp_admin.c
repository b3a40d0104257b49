/* Admin socket `show sessions` for ib_srpt (struct tgt_transport's show_sessions).  Runs on
 * the admin thread under ctx->lock, the lock logins and channel departures take: a nexus in
 * ctx->nexuses and the channels on its list are alive (srpt_nexus_leave unlinks a channel
 * under the lock before it is released).  What is read is fixed at login (port ids, IU
 * lengths, the connection's name) or a relaxed counter of the core. */
#include <pthread.h>
#include <stdio.h>

#include "scsi/scsi_stats_json.h"
#include "transports/srp/srp_int.h"

void srpt_show_sessions(const struct tgt_driver *drv, struct ut_json *j,
			struct scsi_io_stats *total)
{
	struct srpt_ctx *ctx = srpt_global;

	if (!ctx || ctx->drv != drv)
		return;
	pthread_mutex_lock(&ctx->lock);
	for (const struct srpt_nexus *n = ctx->nexuses; n; n = n->next) {
		ut_json_obj(j, NULL);
		ut_json_str(j, "driver", drv->name);
		scsi_nexus_json(j, &n->nx, total);
		ut_json_bool(j, "retired", n->retired);
		ut_json_arr(j, "connections");
		for (const struct srpt_ch *ch = n->chans; ch; ch = ch->nx_next) {
			ut_json_obj(j, NULL);
			ut_json_str(j, "peer", srpt_io->name(ch->conn));
			ut_json_u64(j, "it_iu_len", ch->it_iu_len);
			ut_json_u64(j, "ti_iu_len", ch->ti_iu_len);
			ut_json_end_obj(j);
		}
		ut_json_end_arr(j);
		ut_json_end_obj(j);
	}
	pthread_mutex_unlock(&ctx->lock);
}
