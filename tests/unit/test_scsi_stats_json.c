/* The core's counters and a nexus's identity as JSON (scsi_stats_json.c): the field names the
 * admin socket's answers carry, the LU and nexus forms, and the totals. */
#include <criterion/criterion.h>
#include <string.h>

#include "scsi/scsi_lun.h"
#include "scsi/scsi_stats_json.h"

static const struct scsi_io_stats s = {.cmds = 7,
				       .read_cmds = 3,
				       .write_cmds = 2,
				       .read_bytes = 4096,
				       .write_bytes = 1024,
				       .errors = 1,
				       .tmfs = 2};

Test(scsi_stats_json, lu_and_nexus_forms)
{
	struct ut_json j;

	ut_json_init(&j);
	ut_json_obj(&j, NULL);
	scsi_stats_json(&j, "lu", &s, true);
	scsi_stats_json(&j, "nexus", &s, false);
	ut_json_end_obj(&j);
	cr_assert_not(j.oom);
	cr_assert_str_eq(j.buf, "{\"lu\":{\"commands\":7,\"read_commands\":3,\"write_commands\":2,"
				"\"bytes_read\":4096,\"bytes_written\":1024,\"errors\":1},"
				"\"nexus\":{\"commands\":7,\"read_commands\":3,\"write_commands\":2,"
				"\"bytes_read\":4096,\"bytes_written\":1024,\"errors\":1,"
				"\"task_mgmt\":2}}");
	ut_json_free(&j);
}

Test(scsi_stats_json, nexus_identity_and_totals)
{
	struct scsi_lun_table luns = {.n = 2};
	struct scsi_nexus nx = {.id = 42, .rel_tgt_id = 3, .luns = &luns, .stats = s};
	struct scsi_io_stats total = {.cmds = 1};
	struct ut_json j;

	strcpy(nx.initiator_name, "iqn.2026-01.x:i");
	strcpy(nx.initiator_port, "iqn.2026-01.x:i,i,0x1");
	strcpy(nx.target_name, "iqn.2026-01.x:t");
	strcpy(nx.target_port, "iqn.2026-01.x:t,t,0x1");
	ut_json_init(&j);
	ut_json_obj(&j, NULL);
	scsi_nexus_json(&j, &nx, &total);
	ut_json_end_obj(&j);
	cr_assert_not(j.oom);
	cr_assert_str_eq(j.buf, "{\"initiator\":\"iqn.2026-01.x:i\","
				"\"initiator_port\":\"iqn.2026-01.x:i,i,0x1\","
				"\"target\":\"iqn.2026-01.x:t\",\"target_port\":\"iqn.2026-01.x:t,t,0x1\","
				"\"rel_tgt_id\":3,\"nexus_id\":42,\"luns\":2,"
				"\"counters\":{\"commands\":7,\"read_commands\":3,\"write_commands\":2,"
				"\"bytes_read\":4096,\"bytes_written\":1024,\"errors\":1,"
				"\"task_mgmt\":2}}");
	cr_assert_eq(total.cmds, 8, "the nexus's commands are added to the total");
	cr_assert_eq(total.tmfs, 2);
	ut_json_free(&j);

	nx.luns = NULL;
	ut_json_init(&j);
	ut_json_obj(&j, NULL);
	scsi_nexus_json(&j, &nx, NULL);
	ut_json_end_obj(&j);
	cr_assert(strstr(j.buf, "\"luns\":0,"), "no table: 0 LUNs: %s", j.buf);
	ut_json_free(&j);
}
