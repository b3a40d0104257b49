/* utgt-bench diagnostics (diag.c): counts and the callback. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "initiator/diag.h"

static char last[256];
static int last_line;

static void grab(struct ub_diag *d, bool error, int line, const char *msg)
{
	(void)d;
	(void)error;
	last_line = line;
	snprintf(last, sizeof(last), "%s", msg);
}

Test(bench_diag, counts_and_formats)
{
	struct ub_diag d = {.file = "f.fio", .emit = grab};

	ub_diag_error(&d, 3, "bad %s", "thing");
	ub_diag_warn(&d, 4, "meh %d", 1);
	cr_assert_eq(d.errors, 1);
	cr_assert_eq(d.warnings, 1);
	cr_assert_str_eq(last, "meh 1");
	cr_assert_eq(last_line, 4);
}
