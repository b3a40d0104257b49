/* Diagnostics (common/diag.c): counts, the callback, and the stderr lines. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/diag.h"

static char last[256];
static int last_line;

static void grab(struct diag *d, bool error, int line, const char *msg)
{
	(void)d;
	(void)error;
	last_line = line;
	snprintf(last, sizeof(last), "%s", msg);
}

Test(diag, counts_and_formats)
{
	struct diag d = {.file = "f.fio", .emit = grab};

	diag_error(&d, 3, "bad %s", "thing");
	diag_warn(&d, 4, "meh %d", 1);
	cr_assert_eq(d.errors, 1);
	cr_assert_eq(d.warnings, 1);
	cr_assert_str_eq(last, "meh 1");
	cr_assert_eq(last_line, 4);
}

Test(diag, stderr_lines_name_the_file_and_line)
{
	struct diag d = {.file = "/etc/scst.conf"};
	char buf[512] = "";
	FILE *saved = stderr, *mem = fmemopen(buf, sizeof(buf), "w");

	cr_assert_not_null(mem);
	stderr = mem;
	diag_error(&d, 12, "unknown attribute '%s'", "frobnicate");
	diag_warn(&d, 0, "no LUN 0");
	d.file = NULL;
	diag_warn(&d, 3, "x");
	fflush(mem);
	stderr = saved;
	fclose(mem);
	cr_assert_str_eq(buf, "/etc/scst.conf:12: error: unknown attribute 'frobnicate'\n"
			      "/etc/scst.conf: warning: no LUN 0\n"
			      "<input>:3: warning: x\n");
	cr_assert_eq(d.errors, 1);
	cr_assert_eq(d.warnings, 2);
}
