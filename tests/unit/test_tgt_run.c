/* The running state (tgt_run.c): starting and stopping drivers, reload from a file (a file
 * with errors changes nothing and names FILE:LINE of the first), write-config output that
 * loads back, and a reload of what was written changing nothing that runs. */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "target/tgt_run.h"
#include "tests/unit/conf_test_util.h"

static char path[64];
static struct tgt_run run;

static void put_file(const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static const char *CONF = "HANDLER ramdisk {\n DEVICE d0 {\n  size_mb 1\n }\n}\n"
			  "TARGET_DRIVER copy_manager {\n TARGET cm {\n  LUN 0 d0\n }\n}\n";

static void setup(void)
{
	struct diag d = {0};
	struct tgt_config *cfg;

	snprintf(path, sizeof(path), "/tmp/utgt-run-%d.conf", (int)getpid());
	put_file(CONF);
	cfg = tgt_config_load(path, &d);
	cr_assert_not_null(cfg);
	cr_assert_eq(tgt_config_open_devices(cfg, &d), 0);
	tgt_run_init(&run, cfg, path, "");
	cr_assert_eq(tgt_run_start(&run), 0);
	cr_assert_not_null(tgt_run_transport(&run, "copy_manager"));
}

static void teardown(void)
{
	tgt_run_stop(&run);
	cr_assert_eq(run.ndrivers, 0);
	tgt_config_free(run.cfg);
	unlink(path);
	scsi_core_shutdown();
}

TestSuite(tgt_run, .init = setup, .fini = teardown);

Test(tgt_run, reload_applies_the_difference)
{
	char msg[1024];

	cr_assert_eq(tgt_run_reload(&run, NULL, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_str_eq(msg, "no change");
	put_file("HANDLER ramdisk {\n DEVICE d0 {\n  size_mb 1\n  prod_id P2\n }\n"
		 " DEVICE d1 {\n  size_mb 1\n }\n}\n"
		 "TARGET_DRIVER copy_manager {\n TARGET cm {\n  LUN 0 d0\n  LUN 1 d1\n }\n}\n");
	cr_assert_eq(tgt_run_reload(&run, NULL, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_str_eq(msg, "DEVICE d0: identity; DEVICE d1 added; TARGET cm: LUNs");
	cr_assert_str_eq(tgt_config_device(run.cfg, "d0")->dev->p.product, "P2");
	cr_assert_eq(run.changes, 1);
	cr_assert_str_eq(run.cfg->path, path);
}

Test(tgt_run, a_file_with_errors_changes_nothing)
{
	struct tgt_config *before = run.cfg;
	char msg[1024], want[600];

	put_file("HANDLER ramdisk {\n DEVICE d0 {\n  size_mb 1\n }\n}\n"
		 "TARGET_DRIVER copy_manager {\n TARGET cm {\n  LUN 0 d0\n  LUN 1 nosuch\n }\n}\n");
	cr_assert_eq(tgt_run_reload(&run, NULL, msg, sizeof(msg)), -1);
	snprintf(want, sizeof(want),
		 "%s:9: LUN 1: device 'nosuch' is not defined (no DEVICE nosuch in any HANDLER) "
		 "(1 error(s); the running configuration is unchanged)",
		 path);
	cr_assert_str_eq(msg, want);
	cr_assert_eq(run.cfg, before);
	cr_assert_eq(run.changes, 0);
	cr_assert_eq(tgt_run_reload(&run, "/nonexistent.conf", msg, sizeof(msg)), -1);
	cr_assert_str_eq(msg, "/nonexistent.conf: cannot open: No such file or directory (1 "
			      "error(s); the running configuration is unchanged)");
}

Test(tgt_run, an_empty_file_does_not_empty_a_running_target)
{
	struct tgt_config *before = run.cfg;
	char msg[1024], want[600];

	put_file("");
	cr_assert_eq(tgt_run_reload(&run, NULL, msg, sizeof(msg)), -1);
	snprintf(want, sizeof(want),
		 "%s describes no device and no target; reloading it would stop serving 1 "
		 "device(s) and 1 target(s), so it is refused (the running configuration is "
		 "unchanged; remove what you mean to with utgtadm's del verbs)",
		 path);
	cr_assert_str_eq(msg, want);
	put_file("# only a comment, as a truncated file may be\nsetup_id 0x1\n");
	cr_assert_eq(tgt_run_reload(&run, NULL, msg, sizeof(msg)), -1);
	cr_assert(strstr(msg, "describes no device and no target"), "%s", msg);
	cr_assert_eq(run.cfg, before);
	cr_assert_eq(run.changes, 0);
	cr_assert_not_null(tgt_config_device(run.cfg, "d0"));
}

Test(tgt_run, write_config_loads_back_and_changes_nothing)
{
	char wpath[80], msg[1024];
	FILE *f;

	snprintf(wpath, sizeof(wpath), "%s.written", path);
	f = fopen(wpath, "w");
	tgt_run_write_config(&run, f);
	fclose(f);
	cr_assert_eq(tgt_run_reload(&run, wpath, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_str_eq(msg, "no change to devices, targets or drivers (attributes written out or "
			      "kept for SCST only)");
	unlink(wpath);
}
