/* utgtadm's command line (adm_cli.c): its own words quoted for the protocol (and read back
 * by the daemon's parser as they were typed), and each scstadmin command translated. */
#include <criterion/criterion.h>
#include <unistd.h>

#include "target/adm_cli.h"
#include "target/admin.h"

static struct adm_cmd cmd;

static const char *req(int argc, const char *const *argv)
{
	char err[256] = "";

	cr_assert_eq(adm_cli_request(argc, (char **)argv, &cmd, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(cmd.req[strlen(cmd.req) - 1], '\n');
	cmd.req[strlen(cmd.req) - 1] = '\0';
	return cmd.req;
}

#define REQ(...)                                                                                   \
	req(sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *), (const char *[]){__VA_ARGS__})

static void refused(int argc, const char *const *argv, const char *msg)
{
	char err[256] = "";

	cr_assert_eq(adm_cli_request(argc, (char **)argv, &cmd, err, sizeof(err)), -1);
	cr_assert_str_eq(err, msg);
}

#define REFUSED(msg, ...)                                                                          \
	refused(sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *),                            \
		(const char *[]){__VA_ARGS__}, msg)

Test(adm_cli, own_words_are_quoted_and_read_back_intact)
{
	static struct admin_req r;
	char err[256];

	cr_assert_str_eq(REQ("show", "sessions"), "show sessions");
	cr_assert_not(cmd.changes);
	cr_assert_str_eq(
	    REQ("set", "target", "t", "driver=iscsi", "IncomingUser=joe my \"secret\\"),
	    "set target t driver=iscsi \"IncomingUser=joe my \\\"secret\\\\\"");
	cr_assert(cmd.changes);
	cr_assert_eq(admin_req_parse(cmd.req, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(r.edit.opts[1].value, "joe my \"secret\\");
	cr_assert_str_eq(REQ("set", "device", "d", "comment="), "set device d comment=");
	cr_assert_str_eq(REQ("add", "initiator", ""), "add initiator \"\"");
}

Test(adm_cli, files_are_made_absolute)
{
	char cwd[4096], want[4200];

	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	snprintf(want, sizeof(want), "reload %s/x.conf", cwd);
	cr_assert_str_eq(REQ("reload", "x.conf"), want);
	cr_assert_str_eq(REQ("write-config", "/abs/y.conf"), "write-config /abs/y.conf");
	cr_assert_str_eq(REQ("reload"), "reload");
	snprintf(want, sizeof(want), "reload %s/rel/scst.conf", cwd);
	cr_assert_str_eq(REQ("-config", "rel/scst.conf"), want);
	cr_assert(cmd.changes);
	cr_assert_str_eq(REQ("-write_config", "/etc/scst.conf"), "write-config /etc/scst.conf");
}

Test(adm_cli, scstadmin_commands)
{
	cr_assert_str_eq(REQ("-noprompt", "-add_lun", "1", "-driver", "iscsi", "-target", "iqn.t",
			     "-device", "d1", "-attributes", "read_only=1"),
			 "add lun 1 driver=iscsi target=iqn.t device=d1 read_only=1");
	cr_assert_str_eq(REQ("-add_lun", "0", "-driver", "iscsi", "-target", "iqn.t", "-group", "g",
			     "-device", "d1"),
			 "add lun 0 driver=iscsi target=iqn.t group=g device=d1");
	cr_assert_str_eq(REQ("-rem_lun", "1", "-driver", "iscsi", "-target", "iqn.t", "-force"),
			 "remove lun 1 driver=iscsi target=iqn.t");
	cr_assert_str_eq(REQ("-set_dev_attr", "d0", "-attributes", "t10_vend_id=ACME,prod_id=P"),
			 "set device d0 t10_vend_id=ACME prod_id=P");
	cr_assert_str_eq(
	    REQ("-set_tgt_attr", "iqn.t", "-driver", "iscsi", "-attributes", "HeaderDigest=CRC32C"),
	    "set target iqn.t driver=iscsi HeaderDigest=CRC32C");
	cr_assert_str_eq(
	    REQ("-add_init", "iqn.i:*", "-driver", "iscsi", "-target", "iqn.t", "-group", "g"),
	    "add initiator iqn.i:* driver=iscsi target=iqn.t group=g");
	cr_assert_str_eq(
	    REQ("-rem_init", "iqn.i:*", "-driver", "iscsi", "-target", "iqn.t", "-group", "g"),
	    "remove initiator iqn.i:* driver=iscsi target=iqn.t group=g");
	cr_assert_str_eq(REQ("-enable_target", "iqn.t", "-driver", "iscsi"),
			 "enable target iqn.t driver=iscsi");
	cr_assert_str_eq(REQ("-disable_target", "iqn.t", "-driver", "iscsi"),
			 "disable target iqn.t driver=iscsi");
	cr_assert_str_eq(REQ("-resync_dev", "d0"), "resync device d0");
	cr_assert_str_eq(REQ("-open_dev", "n", "-handler", "vdisk_nullio", "-attributes",
			     "size_mb=8,read_only=1"),
			 "add device n handler=vdisk_nullio size_mb=8 read_only=1");
	cr_assert_str_eq(REQ("-close_dev", "n", "-handler", "vdisk_nullio"), "remove device n");
	cr_assert_str_eq(
	    REQ("-set_tgrp_attr", "tg", "-dev_group", "dg", "-attributes", "state=standby"),
	    "set tgroup tg dgroup=dg state=standby");
	cr_assert_str_eq(REQ("-add_group", "g", "-driver", "iscsi", "-target", "iqn.t"),
			 "add group g driver=iscsi target=iqn.t");
}

Test(adm_cli, scstadmin_listings)
{
	cr_assert_str_eq(REQ("-list_target"), "show targets");
	cr_assert_eq(cmd.render, ADM_RENDER_SCST_TARGETS);
	cr_assert_null(cmd.filter);
	cr_assert_not(cmd.changes);
	cr_assert_str_eq(REQ("-list_target", "iqn.t", "-driver", "iscsi"), "show targets");
	cr_assert_str_eq(cmd.filter, "iqn.t");
	cr_assert_str_eq(cmd.driver, "iscsi");
	cr_assert_str_eq(REQ("-list_device", "d0"), "show devices");
	cr_assert_eq(cmd.render, ADM_RENDER_SCST_DEVICES);
	cr_assert_str_eq(cmd.filter, "d0");
	cr_assert_str_eq(REQ("-list_group", "g", "-driver", "iscsi", "-target", "iqn.t"),
			 "show targets");
	cr_assert_eq(cmd.render, ADM_RENDER_SCST_GROUPS);
	cr_assert_str_eq(cmd.target, "iqn.t");
	cr_assert_str_eq(REQ("-list_sessions"), "show sessions");
	cr_assert_eq(cmd.render, ADM_RENDER_SCST_SESSIONS);
}

Test(adm_cli, scstadmin_mistakes)
{
	REFUSED("-add_lun needs -target", "-add_lun", "1", "-driver", "iscsi", "-device", "d");
	REFUSED("-add_init needs -group", "-add_init", "i", "-driver", "iscsi", "-target", "t");
	REFUSED("-driver needs a value", "-enable_target", "t", "-driver");
	REFUSED("-config needs a FILE", "-config");
	REFUSED("unexpected 'extra'", "-resync_dev", "d0", "extra");
	REFUSED("scstadmin command -clear_config is not offered by utgtadm (see utgtadm --help)",
		"-clear_config");
	REFUSED("no scstadmin command given", "-noprompt");
}

Test(adm_cli, a_request_too_long_is_refused)
{
	static char big[2000];

	memset(big, 'x', sizeof(big) - 1);
	REFUSED("request too long (at most 1022 bytes)", "set", "device", "d", big);
}
