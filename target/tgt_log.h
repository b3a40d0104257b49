/* utgtd's log: stderr in the foreground (and until a daemon is ready), syslog afterwards.
 * Priorities are syslog's (LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG). */
#ifndef UTGT_TGT_LOG_H
#define UTGT_TGT_LOG_H

#include <stdbool.h>
#include <syslog.h>

void tgt_log_to_syslog(const char *ident);
void tgt_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
