/* target/'s name for the one log, common/ut_log.h (kept so target/ and the transports that
 * still say tgt_log need no change). */
#ifndef UTGT_TGT_LOG_H
#define UTGT_TGT_LOG_H

#include "common/ut_log.h"

#define tgt_log		  ut_log
#define tgt_log_to_syslog ut_log_to_syslog

#endif
