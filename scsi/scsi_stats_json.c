/* Core counters and nexus identity as JSON (see scsi_stats_json.h). */
#include "scsi/scsi_lun.h"
#include "scsi/scsi_stats_json.h"

void scsi_stats_json(struct ut_json *j, const char *key, const struct scsi_io_stats *s,
			 bool lu)
{
	ut_json_obj(j, key);
	ut_json_u64(j, "commands", s->cmds);
	ut_json_u64(j, "read_commands", s->read_cmds);
	ut_json_u64(j, "write_commands", s->write_cmds);
	ut_json_u64(j, "bytes_read", s->read_bytes);
	ut_json_u64(j, "bytes_written", s->write_bytes);
	ut_json_u64(j, "errors", s->errors);
	if (!lu)
		ut_json_u64(j, "task_mgmt", s->tmfs);
	ut_json_end_obj(j);
}

void scsi_nexus_json(struct ut_json *j, const struct scsi_nexus *nx, struct scsi_io_stats *total)
{
	struct scsi_io_stats s;

	scsi_io_stats_read(&nx->stats, &s);
	ut_json_str(j, "initiator", nx->initiator_name);
	ut_json_str(j, "initiator_port", nx->initiator_port);
	ut_json_str(j, "target", nx->target_name);
	ut_json_str(j, "target_port", nx->target_port);
	ut_json_u64(j, "rel_tgt_id", nx->rel_tgt_id);
	ut_json_u64(j, "nexus_id", nx->id);
	ut_json_u64(j, "luns", nx->luns ? nx->luns->n : 0);
	scsi_stats_json(j, "counters", &s, false);
	if (total)
		scsi_io_stats_sum(total, &s);
}
