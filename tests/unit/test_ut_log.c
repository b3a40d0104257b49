/* The one log (common/ut_log.c): the stderr line format per priority, and the per-call-site
 * rate limit with its count of suppressed lines, at chosen times (no sleeping). */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "common/ut_log.h"

#define S 1000000000LL

/* Criterion's worker process is not named after the test binary: name the lines. */
static void setup(void)
{
	cr_redirect_stderr();
	ut_log_set_name("t");
}

static void rl_at(struct ut_log_rl *rl, int64_t now, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ut_log_rl_at(rl, now, LOG_ERR, fmt, ap);
	va_end(ap);
}

Test(ut_log, stderr_lines_by_priority, .init = setup)
{
	ut_log(LOG_ERR, "disk %d failed", 3);
	ut_log(LOG_WARNING, "slow");
	ut_log(LOG_INFO, "serving");
	fflush(stderr);
	cr_assert_stderr_eq_str("t: error: disk 3 failed\n"
				"t: warning: slow\n"
				"t: serving\n");
}

Test(ut_log, rate_limit_counts_suppressed_lines, .init = setup)
{
	struct ut_log_rl rl = {0};

	rl_at(&rl, 1 * S, "flush failed on %s", "d0"); /* printed */
	for (int i = 0; i < 41; i++)
		rl_at(&rl, 1 * S + i * (S / 10), "flush failed on %s", "d0"); /* within 5 s */
	rl_at(&rl, 1 * S + UT_LOG_RL_INTERVAL_S * S, "flush failed on %s", "d1"); /* next window */
	rl_at(&rl, 2 * S + UT_LOG_RL_INTERVAL_S * S, "x"); /* suppressed */
	rl_at(&rl, 1 * S + 3 * UT_LOG_RL_INTERVAL_S * S, "quiet again"); /* printed */
	fflush(stderr);
	cr_assert_stderr_eq_str("t: error: flush failed on d0\n"
				"t: error: flush failed on d1 (41 similar line(s) suppressed)\n"
				"t: error: quiet again (1 similar line(s) suppressed)\n");
}

Test(ut_log, rate_limit_macro_per_call_site, .init = setup)
{
	for (int i = 0; i < 3; i++) {
		UT_LOG_RL(LOG_WARNING, "site A %d", i);
		UT_LOG_RL(LOG_WARNING, "site B %d", i);
	}
	fflush(stderr);
	cr_assert_stderr_eq_str("t: warning: site A 0\n"
				"t: warning: site B 0\n");
}

Test(ut_log, journal_stream_gets_priority_prefixes, .init = setup)
{
	struct stat st;
	char js[64];

	cr_assert_eq(fstat(2, &st), 0);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	ut_log(LOG_ERR, "disk %d failed", 3);
	ut_log(LOG_INFO, "serving");
	setenv("JOURNAL_STREAM", "1:1", 1); /* another stream: stderr is not the journal */
	ut_log(LOG_INFO, "plain");
	unsetenv("JOURNAL_STREAM");
	fflush(stderr);
	cr_assert_stderr_eq_str("<3>error: disk 3 failed\n"
				"<6>serving\n"
				"t: plain\n");
}
