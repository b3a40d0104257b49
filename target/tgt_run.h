/* utgtd's running state: the configuration it serves, the transports it started, and the one
 * lock every change and every admin answer takes (never an I/O path).  Changes go through the
 * diff/apply engine (target/tgt_plan.c, target/tgt_apply.c), whether they come from a verb of
 * the admin socket, `utgtadm reload` or SIGHUP. */
#ifndef UTGT_TGT_RUN_H
#define UTGT_TGT_RUN_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "target/tgt_config.h"

#define TGT_RUN_MAX_DRIVERS 16

struct tgt_run_driver {
	char name[32];
	const struct tgt_transport *tp;
};

struct tgt_run {
	pthread_mutex_t mu; /* everything below; held by each change and admin answer */
	struct tgt_config *cfg;
	char config_path[PATH_MAX]; /* what reload and SIGHUP read */
	char pr_dir[256];	    /* APTPL state of devices added live ("" = none) */
	struct tgt_run_driver drivers[TGT_RUN_MAX_DRIVERS]; /* started transports */
	unsigned ndrivers;
	unsigned changes; /* configuration changes applied since start */
};

void tgt_run_init(struct tgt_run *run, struct tgt_config *cfg, const char *config_path,
		  const char *pr_dir);
/* Start the transport of every enabled driver of run->cfg that this build serves.  0, or -1
 * (logged) when one fails; the started ones stay recorded for tgt_run_stop. */
int tgt_run_start(struct tgt_run *run);
/* Stop every started transport, last started first (they drain their I/O). */
void tgt_run_stop(struct tgt_run *run);
/* The transport serving `driver`, NULL when it was not started. */
const struct tgt_transport *tgt_run_transport(const struct tgt_run *run, const char *driver);
/* Start one driver of cfg (run->cfg, or the one about to be) / stop one (live
 * administration).  0, or -1 with err. */
int tgt_run_start_driver(struct tgt_run *run, const struct tgt_config *cfg,
			 const struct tgt_driver *drv, char *err, size_t errlen);
void tgt_run_stop_driver(struct tgt_run *run, const char *driver);

/* Re-read a configuration file (path NULL: run->config_path) and apply the difference, with
 * run->mu held by the caller.  A file with errors changes nothing: the first error, as
 * FILE:LINE: message, is in err and logged.  0 (msg says what changed), -1. */
int tgt_run_reload(struct tgt_run *run, const char *path, char *msg, size_t msglen);
/* The running configuration in SCST's format (scstadmin -write_config -nonkey), to out. */
void tgt_run_write_config(const struct tgt_run *run, FILE *out);

#endif
