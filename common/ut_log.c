/* The log sink shared by every layer (see ut_log.h). */
#include "common/ut_log.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

static atomic_bool use_syslog;
static const char *log_name;

void ut_log_set_name(const char *name)
{
	log_name = name;
}

void ut_log_to_syslog(const char *ident)
{
	openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	atomic_store(&use_syslog, true);
}

static const char *prio_name(int prio)
{
	switch (prio) {
	case LOG_EMERG:
	case LOG_ALERT:
	case LOG_CRIT:
	case LOG_ERR:
		return "error: ";
	case LOG_WARNING:
		return "warning: ";
	default:
		return "";
	}
}

/* Is stderr systemd's journal stream ($JOURNAL_STREAM names its device:inode)?  Then a "<N>"
 * prefix gives the line its priority (journalctl -p err) and the journal adds the name. */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static void emit(int prio, const char *msg)
{
	if (atomic_load(&use_syslog))
		syslog(prio, "%s", msg);
	else if (stderr_is_journal())
		fprintf(stderr, "<%d>%s%s\n", LOG_PRI(prio), prio_name(prio), msg);
	else /* one write per line, so lines from several threads do not interleave */
		fprintf(stderr, "%s: %s%s\n", log_name ? log_name : program_invocation_short_name,
			prio_name(prio), msg);
}

void ut_log(int prio, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit(prio, msg);
}

void ut_log_rl_at(struct ut_log_rl *rl, int64_t now_ns, int prio, const char *fmt, va_list ap)
{
	int64_t next = atomic_load_explicit(&rl->next_ns, memory_order_relaxed);
	unsigned n;
	char msg[1024];
	int len;

	/* one winner per interval: the thread that moves next_ns prints */
	if (now_ns < next || !atomic_compare_exchange_strong(&rl->next_ns, &next,
							     now_ns + UT_LOG_RL_INTERVAL_S * 1000000000LL)) {
		atomic_fetch_add_explicit(&rl->suppressed, 1, memory_order_relaxed);
		return;
	}
	n = atomic_exchange(&rl->suppressed, 0);
	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n && len >= 0 && (size_t)len < sizeof(msg))
		snprintf(msg + len, sizeof(msg) - (size_t)len, " (%u similar line(s) suppressed)", n);
	emit(prio, msg);
}

void ut_log_rl(struct ut_log_rl *rl, int prio, const char *fmt, ...)
{
	struct timespec ts;
	va_list ap;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	va_start(ap, fmt);
	ut_log_rl_at(rl, (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec, prio, fmt, ap);
	va_end(ap);
}
