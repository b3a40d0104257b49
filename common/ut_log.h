/* One log for every layer (common/ ← scsi/ ← transports/ ← target/): a line goes to stderr as
 * "PROGRAM: [error: |warning: ]message" while the program runs in the foreground (and while a
 * daemon has not yet detached), and to syslog (facility daemon) once ut_log_to_syslog() was
 * called.  When stderr is systemd's journal ($JOURNAL_STREAM) a line is "<PRIO>message", so
 * the journal records its priority (journalctl -p warning) and adds the name itself.  Priorities are syslog's (LOG_ERR,
 * LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG).
 *
 * UT_LOG_RL(prio, fmt, ...) is for lines a command or an I/O can repeat: each call site prints
 * at most one line per UT_LOG_RL_INTERVAL_S seconds; the next line it prints after that says
 * how many were suppressed in between. */
#ifndef UTGT_COMMON_UT_LOG_H
#define UTGT_COMMON_UT_LOG_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <syslog.h>

#define UT_LOG_RL_INTERVAL_S 5

void ut_log_to_syslog(const char *ident);
/* The PROGRAM of stderr lines (default: program_invocation_short_name). */
void ut_log_set_name(const char *name);
void ut_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One call site's rate limit (zero-initialised static). */
struct ut_log_rl {
	_Atomic int64_t next_ns; /* CLOCK_MONOTONIC time before which lines are suppressed */
	atomic_uint suppressed;
};
void ut_log_rl(struct ut_log_rl *rl, int prio, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same at a given time (tests). */
void ut_log_rl_at(struct ut_log_rl *rl, int64_t now_ns, int prio, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

#define UT_LOG_RL(prio, ...)                                                                       \
	do {                                                                                       \
		static struct ut_log_rl ut_log_rl_site_;                                           \
		ut_log_rl(&ut_log_rl_site_, (prio), __VA_ARGS__);                                  \
	} while (0)

#endif
