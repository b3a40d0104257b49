/* The admin socket's request line (admin_req.c). */
#include <criterion/criterion.h>

#include "target/admin.h"

static int parse(const char *line, enum admin_cmd *cmd, char *err)
{
	return admin_req_parse(line, cmd, err, 256);
}

Test(admin_req, the_commands)
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
		enum admin_cmd c = (enum admin_cmd) - 1;
		char err[256] = "";
		cr_assert_eq(parse(ok[i].line, &c, err), 0, "%s: %s", ok[i].line, err);
		cr_assert_eq(c, ok[i].cmd, "%s", ok[i].line);
	}
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
	    {"a b c d e", "too many words"},
	    {"show\x01sessions", "control byte 0x01"},
	    {"show\x7f", "control byte 0x7f"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum admin_cmd c;
		char err[256] = "";
		cr_assert_eq(parse(bad[i].line, &c, err), -1, "accepted: %s", bad[i].line);
		cr_assert(strstr(err, bad[i].msg), "'%s': '%s'", bad[i].line, err);
	}
}

Test(admin_req, a_line_over_the_limit_is_refused)
{
	char line[ADMIN_LINE_MAX + 10], err[256] = "";
	enum admin_cmd c;

	memset(line, 'a', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	cr_assert_eq(parse(line, &c, err), -1);
	cr_assert(strstr(err, "longer than"), "%s", err);
}

Test(admin_req, a_long_word_is_cut_in_the_message)
{
	char line[600], err[256] = "";
	enum admin_cmd c;

	memset(line, 'w', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	cr_assert_eq(parse(line, &c, err), -1);
	cr_assert_lt(strlen(err), 120, "%s", err);
}
