/* The admin socket's request line (admin_req.c): the show commands, the verbs of live
 * administration with their KEY=VALUE words, quoting, and every refusal's message. */
#include <criterion/criterion.h>

#include "target/admin.h"

static struct admin_req req;

static int parse(const char *line, char *err)
{
	return admin_req_parse(line, &req, err, 256);
}

Test(admin_req, the_show_commands)
{
	static const struct {
		const char *line;
		enum admin_cmd cmd;
	} ok[] = {
	    {"show targets", ADMIN_SHOW_TARGETS},
	    {"show sessions", ADMIN_SHOW_SESSIONS},
	    {"show devices", ADMIN_SHOW_DEVICES},
	    {"version", ADMIN_VERSION},
	    {"help", ADMIN_HELP},
	    {"  show \t sessions \r", ADMIN_SHOW_SESSIONS},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char err[256] = "";
		cr_assert_eq(parse(ok[i].line, err), 0, "%s: %s", ok[i].line, err);
		cr_assert_eq(req.cmd, ok[i].cmd, "%s", ok[i].line);
	}
}

Test(admin_req, verbs_objects_names_and_options)
{
	char err[256] = "";

	cr_assert_eq(parse("add lun 3 driver=iscsi target=iqn.x:t device=d3 read_only=1", err), 0,
		     "%s", err);
	cr_assert_eq(req.cmd, ADMIN_EDIT);
	cr_assert_eq(req.edit.verb, EDIT_ADD);
	cr_assert_eq(req.edit.obj, OBJ_LUN);
	cr_assert_str_eq(req.edit.name, "3");
	cr_assert_eq(req.edit.nopts, 4);
	cr_assert_str_eq(req.edit.opts[1].key, "target");
	cr_assert_str_eq(req.edit.opts[1].value, "iqn.x:t");
	cr_assert_str_eq(req.edit.opts[3].key, "read_only");
	cr_assert_str_eq(req.edit.opts[3].value, "1");

	cr_assert_eq(parse("set target t driver=iscsi \"IncomingUser=joe 12 chars \\\"x\\\"\" "
			   "comment=",
			   err),
		     0, "%s", err);
	cr_assert_eq(req.edit.verb, EDIT_SET);
	cr_assert_eq(req.edit.obj, OBJ_TARGET);
	cr_assert_str_eq(req.edit.opts[1].key, "IncomingUser");
	cr_assert_str_eq(req.edit.opts[1].value, "joe 12 chars \"x\"");
	cr_assert_str_eq(req.edit.opts[2].value, "", "an empty value: back to the default");

	cr_assert_eq(parse("remove initiator \"iqn.1993-08.org.debian:*\" driver=iscsi target=t "
			   "group=g",
			   err),
		     0);
	cr_assert_eq(req.edit.obj, OBJ_INITIATOR);
	cr_assert_str_eq(req.edit.name, "iqn.1993-08.org.debian:*");
	cr_assert_eq(parse("enable target t driver=iscsi", err), 0);
	cr_assert_eq(req.edit.verb, EDIT_ENABLE);
	cr_assert_eq(parse("disable target t driver=iscsi", err), 0);
	cr_assert_eq(req.edit.verb, EDIT_DISABLE);
	cr_assert_eq(parse("set tgroup local dgroup=dg state=standby", err), 0);
	cr_assert_eq(req.edit.obj, OBJ_TGROUP);

	/* resize is `set device NAME size=` */
	cr_assert_eq(parse("resize device d0 size=2G", err), 0, "%s", err);
	cr_assert_eq(req.cmd, ADMIN_EDIT);
	cr_assert_eq(req.edit.verb, EDIT_SET);
	cr_assert_eq(req.edit.obj, OBJ_DEVICE);
	cr_assert_str_eq(req.edit.opts[0].key, "size");
	cr_assert_str_eq(req.edit.opts[0].value, "2G");
}

Test(admin_req, other_commands_and_their_argument)
{
	char err[256] = "";

	cr_assert_eq(parse("resync device d0", err), 0);
	cr_assert_eq(req.cmd, ADMIN_RESYNC);
	cr_assert_str_eq(req.arg, "d0");
	cr_assert_eq(parse("close session 17", err), 0);
	cr_assert_eq(req.cmd, ADMIN_CLOSE_SESSION);
	cr_assert_str_eq(req.arg, "17");
	cr_assert_eq(parse("reload", err), 0);
	cr_assert_eq(req.cmd, ADMIN_RELOAD);
	cr_assert_null(req.arg);
	cr_assert_eq(parse("reload \"/etc/my scst.conf\"", err), 0);
	cr_assert_str_eq(req.arg, "/etc/my scst.conf");
	cr_assert_eq(parse("write-config", err), 0);
	cr_assert_eq(req.cmd, ADMIN_WRITE_CONFIG);
	cr_assert_null(req.arg);
	cr_assert_eq(parse("write-config /tmp/x.conf", err), 0);
	cr_assert_str_eq(req.arg, "/tmp/x.conf");
}

Test(admin_req, errors_say_what_is_wrong)
{
	static const struct {
		const char *line, *msg;
	} bad[] = {
	    {"", "empty request"},
	    {"  \r", "empty request"},
	    {"show", "show what?"},
	    {"show foo", "unknown object 'show foo'"},
	    {"frob", "unknown command 'frob'"},
	    {"SHOW sessions", "unknown command 'SHOW'"},
	    {"show sessions now", "unexpected 'now' after 'show sessions'"},
	    {"version 2", "unexpected '2' after 'version'"},
	    {"show\x01sessions", "control byte 0x01"},
	    {"show\x7f", "control byte 0x7f"},
	    {"add", "add what? device, target"},
	    {"add frob x", "unknown object 'add frob'"},
	    {"remove lun", "remove lun: which one?"},
	    {"add lun 1 driver", "expected KEY=VALUE, got 'driver'"},
	    {"add lun 1 =x", "expected KEY=VALUE, got '=x'"},
	    {"add lun 1 dri-ver=x", "'dri-ver' is not an attribute name"},
	    {"set device d \"size=1", "unterminated quote"},
	    {"set device d size=1\\", "backslash at the end"},
	    {"resize device d0", "usage: resize device NAME size="},
	    {"resize device d0 size=", "usage: resize device NAME size="},
	    {"resize target d0 size=1G", "usage: resize device NAME size="},
	    {"resync d0", "usage: resync device NAME"},
	    {"close session", "usage: close session NEXUS_ID"},
	    {"reload a b", "usage: reload [FILE]"},
	    {"write-config a b", "usage: write-config [FILE]"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";
		cr_assert_eq(parse(bad[i].line, err), -1, "accepted: %s", bad[i].line);
		cr_assert(strstr(err, bad[i].msg), "'%s': '%s'", bad[i].line, err);
	}
}

Test(admin_req, too_many_words)
{
	char line[ADMIN_LINE_MAX], err[256] = "";
	size_t off = snprintf(line, sizeof(line), "set device d");

	for (int i = 0; i < ADMIN_MAX_OPTS + 1; i++)
		off += snprintf(line + off, sizeof(line) - off, " a%d=1", i);
	cr_assert_eq(parse(line, err), -1);
	cr_assert(strstr(err, "too many words"), "%s", err);
}

Test(admin_req, a_line_over_the_limit_is_refused)
{
	char line[ADMIN_LINE_MAX + 10], err[256] = "";

	memset(line, 'a', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	cr_assert_eq(parse(line, err), -1);
	cr_assert(strstr(err, "longer than"), "%s", err);
}

Test(admin_req, a_long_word_is_cut_in_the_message)
{
	char line[600], err[256] = "";

	memset(line, 'w', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	cr_assert_eq(parse(line, err), -1);
	cr_assert_lt(strlen(err), 120, "%s", err);
	memcpy(line, "add lun 1 ", 10);
	cr_assert_eq(parse(line, err), -1);
	cr_assert_lt(strlen(err), 120, "%s", err);
}
