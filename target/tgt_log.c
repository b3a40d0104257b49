/* Log sink shared by the daemon and anything it starts. */
#include "target/tgt_log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_bool use_syslog;

void tgt_log_to_syslog(const char *ident)
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

void tgt_log(int prio, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (atomic_load(&use_syslog))
		syslog(prio, "%s", msg);
	else
		fprintf(stderr, "utgtd: %s%s\n", prio_name(prio), msg); /* one write per line */
}
