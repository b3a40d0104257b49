/* utgtd's running state (tgt_run.h): the transports it started and the configuration they
 * serve; reload and write-config. */
#include <stdio.h>
#include <string.h>

#include "target/tgt_apply.h"
#include "common/ut_log.h"
#include "target/tgt_run.h"

void tgt_run_init(struct tgt_run *run, struct tgt_config *cfg, const char *config_path,
		  const char *pr_dir)
{
	memset(run, 0, sizeof(*run));
	pthread_mutex_init(&run->mu, NULL);
	run->cfg = cfg;
	snprintf(run->config_path, sizeof(run->config_path), "%s", config_path ? config_path : "");
	snprintf(run->pr_dir, sizeof(run->pr_dir), "%s", pr_dir ? pr_dir : "");
}

const struct tgt_transport *tgt_run_transport(const struct tgt_run *run, const char *driver)
{
	for (unsigned i = 0; i < run->ndrivers; i++)
		if (!strcmp(run->drivers[i].name, driver))
			return run->drivers[i].tp;
	return NULL;
}

int tgt_run_start_driver(struct tgt_run *run, const struct tgt_config *cfg,
			 const struct tgt_driver *drv, char *err, size_t errlen)
{
	if (run->ndrivers == TGT_RUN_MAX_DRIVERS) {
		snprintf(err, errlen, "too many transports");
		return -1;
	}
	if (drv->transport->start(cfg, drv, err, errlen) != 0) {
		ut_log(LOG_ERR, "driver %s: %s", drv->name, err[0] ? err : "start failed");
		return -1;
	}
	snprintf(run->drivers[run->ndrivers].name, sizeof(run->drivers[0].name), "%s", drv->name);
	run->drivers[run->ndrivers++].tp = drv->transport;
	ut_log(LOG_INFO, "driver %s: started (%u target(s))", drv->name, drv->ntargets);
	return 0;
}

void tgt_run_stop_driver(struct tgt_run *run, const char *driver)
{
	for (unsigned i = 0; i < run->ndrivers; i++) {
		if (strcmp(run->drivers[i].name, driver))
			continue;
		ut_log(LOG_INFO, "driver %s: stopping", driver);
		run->drivers[i].tp->stop();
		memmove(&run->drivers[i], &run->drivers[i + 1],
			(run->ndrivers - i - 1) * sizeof(run->drivers[0]));
		run->ndrivers--;
		return;
	}
}

int tgt_run_start(struct tgt_run *run)
{
	const struct tgt_config *cfg = run->cfg;

	for (unsigned i = 0; i < cfg->ndrivers; i++) {
		const struct tgt_driver *drv = &cfg->drivers[i];
		char err[256] = "";

		if (!drv->known) {
			ut_log(LOG_NOTICE, "driver %s: unknown to utgt; skipped", drv->name);
			continue;
		}
		if (!drv->enabled) {
			ut_log(LOG_NOTICE, "driver %s: disabled (enabled 0); skipped", drv->name);
			continue;
		}
		if (!drv->transport) {
			ut_log(LOG_NOTICE, "driver %s: not served by this build; skipped",
				drv->name);
			continue;
		}
		if (tgt_run_start_driver(run, cfg, drv, err, sizeof(err)) != 0)
			return -1;
	}
	return 0;
}

void tgt_run_stop(struct tgt_run *run)
{
	while (run->ndrivers > 0)
		tgt_run_stop_driver(run, run->drivers[run->ndrivers - 1].name);
}

/* The first error of a file, as FILE:LINE: message, for the answer and the log. */
struct first_error {
	char msg[600];
	bool have;
};

static void keep_first(struct diag *d, bool error, int line, const char *msg)
{
	struct first_error *f = d->priv;

	if (!error || f->have)
		return;
	if (line > 0)
		snprintf(f->msg, sizeof(f->msg), "%s:%d: %s", d->file, line, msg);
	else
		snprintf(f->msg, sizeof(f->msg), "%s: %s", d->file, msg);
	f->have = true;
}

static unsigned count_targets(const struct tgt_config *c)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->ndrivers; i++)
		n += c->drivers[i].ntargets;
	return n;
}

int tgt_run_reload(struct tgt_run *run, const char *path, char *msg, size_t msglen)
{
	struct first_error fe = {.have = false};
	struct diag d = {.emit = keep_first, .priv = &fe};
	struct tgt_config *next;

	if (!path)
		path = run->config_path;
	d.file = path;
	next = tgt_config_load(path, &d);
	/* An empty or truncated file (an editor's crash, a full disk, the wrong path) loads
	 * without error as "serve nothing"; applied, it would drop every initiator at once.
	 * Emptying a running target is done on purpose, one del verb at a time. */
	if (next && !next->ndevices && !count_targets(next) &&
	    (run->cfg->ndevices || count_targets(run->cfg))) {
		snprintf(msg, msglen,
			 "%s describes no device and no target; reloading it would stop serving "
			 "%u device(s) and %u target(s), so it is refused (the running "
			 "configuration is unchanged; remove what you mean to with utgtadm's "
			 "del verbs)",
			 path, run->cfg->ndevices, count_targets(run->cfg));
		ut_log(LOG_ERR, "reload of %s refused: %s", path, msg);
		tgt_config_free(next);
		return -1;
	}
	if (!next || tgt_apply(run, next, &d, msg, msglen) != 0) {
		snprintf(msg, msglen, "%s (%d error(s); the running configuration is unchanged)",
			 fe.have ? fe.msg : "refused", d.errors ? d.errors : 1);
		ut_log(LOG_ERR, "reload of %s refused: %s", path, msg);
		return -1;
	}
	return 0;
}

void tgt_run_write_config(const struct tgt_run *run, FILE *out)
{
	tgt_config_print_opts(run->cfg, out, TGT_PRINT_SCST);
}
