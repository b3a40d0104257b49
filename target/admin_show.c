/* Answers of the admin socket.  Targets, devices and version come from the configuration the
 * daemon runs (changed only under run->mu, which every answer holds) and the core's relaxed
 * counters; sessions come from each started transport's show_sessions op, so this file never
 * includes a transport header. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "scsi/backstore/bs_rbd_lock.h"
#include "scsi/scsi_dev.h"
#include "target/admin.h"

void admin_error(struct ut_json *j, const char *msg)
{
	ut_json_obj(j, NULL);
	ut_json_bool(j, "ok", false);
	ut_json_str(j, "error", msg);
	ut_json_end_obj(j);
}

static void begin_ok(struct ut_json *j)
{
	ut_json_obj(j, NULL);
	ut_json_bool(j, "ok", true);
}

static void attr_list(struct ut_json *j, const char *key, const struct tgt_attrs *as,
		      const char *name)
{
	const char *v[64];
	unsigned n = tgt_attr_get_all(as, name, v, 64);

	ut_json_arr(j, key);
	for (unsigned i = 0; i < n && i < 64; i++)
		ut_json_str(j, NULL, v[i]);
	ut_json_end_arr(j);
}

static void luns(struct ut_json *j, const struct tgt_lun *l, unsigned n)
{
	ut_json_arr(j, "luns");
	for (unsigned i = 0; i < n; i++) {
		ut_json_obj(j, NULL);
		ut_json_u64(j, "lun", l[i].lun);
		ut_json_str(j, "device", l[i].device);
		ut_json_bool(j, "read_only", l[i].read_only);
		ut_json_end_obj(j);
	}
	ut_json_end_arr(j);
}

static bool started(const struct admin_info *ai, const struct tgt_driver *d)
{
	return tgt_run_transport(ai->run, d->name) != NULL;
}

static void show_targets(const struct admin_info *ai, struct ut_json *j)
{
	const struct tgt_config *cfg = ai->run->cfg;

	ut_json_arr(j, "drivers");
	for (unsigned i = 0; i < cfg->ndrivers; i++) {
		const struct tgt_driver *d = &cfg->drivers[i];
		ut_json_obj(j, NULL);
		ut_json_str(j, "name", d->name);
		ut_json_bool(j, "enabled", d->enabled);
		ut_json_bool(j, "running", started(ai, d));
		attr_list(j, "portals", &d->attrs, "listen");
		ut_json_arr(j, "targets");
		for (unsigned k = 0; k < d->ntargets; k++) {
			const struct tgt_target *t = &d->targets[k];
			ut_json_obj(j, NULL);
			ut_json_str(j, "name", t->name);
			ut_json_bool(j, "enabled", t->enabled);
			ut_json_u64(j, "rel_tgt_id", t->rel_tgt_id);
			attr_list(j, "allowed_portals", &t->attrs, "allowed_portal");
			luns(j, t->luns, t->nluns);
			ut_json_arr(j, "groups");
			for (unsigned g = 0; g < t->ngroups; g++) {
				const struct tgt_group *gr = &t->groups[g];
				ut_json_obj(j, NULL);
				ut_json_str(j, "name", gr->name);
				ut_json_arr(j, "initiators");
				for (unsigned x = 0; x < gr->ninitiators; x++)
					ut_json_str(j, NULL, gr->initiators[x]);
				ut_json_end_arr(j);
				luns(j, gr->luns, gr->nluns);
				ut_json_end_obj(j);
			}
			ut_json_end_arr(j);
			ut_json_end_obj(j);
		}
		ut_json_end_arr(j);
		ut_json_end_obj(j);
	}
	ut_json_end_arr(j);
}

/* vdisk_rbd: who holds the image's exclusive lock, what this gateway's port group reports
 * (null without ALUA), and the cluster's health as the monitors last said it.  The role,
 * the owner's group and the counts are alua_follow_lock's (null or 0 without it). */
static void show_lock(const struct scsi_dev *dev, struct ut_json *j)
{
	const struct backstore *bs = dev->bs;
	const struct scsi_alua_group *g = dev->alua;
	struct bs_lock_status ls;
	unsigned i;

	memset(&ls, 0, sizeof(ls));
	ls.owner_group = -1;
	bs->ops->lock_status((struct backstore *)bs, &ls);
	ut_json_obj(j, "rbd_lock");
	ut_json_str(j, "role", bs->ceph.alua_follow_lock ? bs_lock_role_name(ls.role) : NULL);
	ut_json_str(j, "owner", ls.owner[0] ? ls.owner : NULL);
	if (ls.owner_group >= 0)
		ut_json_u64(j, "owner_group", (uint64_t)ls.owner_group);
	else
		ut_json_str(j, "owner_group", NULL);
	ut_json_str(j, "client", ls.self);
	ut_json_u64(j, "takeovers", ls.takeovers);
	ut_json_u64(j, "fenced", ls.fenced);
	ut_json_end_obj(j);
	for (i = 0; g && i < g->ntpgs; i++)
		if (g->tpgs[i].local) {
			ut_json_str(j, "alua_state",
				    scsi_alua_state_name(scsi_tpg_state(dev, &g->tpgs[i])));
			break;
		}
	if (!g || i == g->ntpgs)
		ut_json_str(j, "alua_state", NULL);
	ut_json_str(j, "cluster_health", ls.health[0] ? ls.health : NULL);
}

/* A file or block device store's I/O engine: where its reads and writes ran. */
static void show_engine(struct backstore *bs, struct ut_json *j)
{
	struct bs_engine_stats e = {0};

	bs->ops->engine_stats(bs, &e);
	ut_json_obj(j, "io_engine");
	ut_json_str(j, "mode", e.mode);
	ut_json_u64(j, "in_flight", e.in_flight);
	ut_json_u64(j, "submitted", e.submitted);
	ut_json_u64(j, "completed", e.completed);
	ut_json_u64(j, "waited_for_slot", e.queued);
	ut_json_u64(j, "inline", e.inlined);
	ut_json_u64(j, "on_own_ring", e.own_ring);
	ut_json_u64(j, "cold_reads", e.cold);
	ut_json_u64(j, "short_resumed", e.resumed);
	ut_json_u64(j, "retried", e.retried);
	ut_json_u64(j, "bounced", e.bounced);
	ut_json_u64(j, "unaligned", e.unaligned);
	ut_json_u64(j, "fua_writes", e.fua_writes);
	ut_json_u64(j, "flushes", e.flushes);
	ut_json_u64(j, "discards", e.discards);
	ut_json_end_obj(j);
}

static void show_devices(const struct admin_info *ai, struct ut_json *j)
{
	const struct tgt_config *cfg = ai->run->cfg;
	struct scsi_io_stats total = {0};

	ut_json_arr(j, "devices");
	for (unsigned i = 0; i < cfg->ndevices; i++) {
		const struct tgt_device *d = &cfg->devices[i];
		const struct scsi_dev *dev = d->dev;
		struct scsi_io_stats s = {0};

		ut_json_obj(j, NULL);
		ut_json_str(j, "name", d->name);
		ut_json_str(j, "handler", d->handler);
		ut_json_str(j, "filename", tgt_attr_get(&d->attrs, "filename"));
		if (dev && dev->bs && dev->bs->ceph.pool[0]) {
			char spec[sizeof(dev->bs->ceph.pool) + sizeof(dev->bs->ceph.image)];

			snprintf(spec, sizeof(spec), "%s/%s", dev->bs->ceph.pool, dev->bs->ceph.image);
			ut_json_str(j, "rbd_image", spec);
			if (dev->open && dev->bs->ops->lock_status)
				show_lock(dev, j);
		}
		ut_json_bool(j, "open", dev && dev->open);
		if (dev && dev->open) {
			/* nr_blocks changes live under run->mu, which this answer holds, and for
			 * vdisk_rbd when the image is resized in the cluster (an aligned word: a
			 * size from just before or just after) */
			ut_json_u64(j, "size", dev->nr_blocks * dev->block_size);
			ut_json_u64(j, "block_size", dev->block_size);
			scsi_io_stats_read(&dev->stats, &s);
		}
		ut_json_u64(j, "sessions", s.nexuses);
		scsi_stats_json(j, "counters", &s, true);
		if (dev && dev->open && dev->bs && dev->bs->ops->engine_stats)
			show_engine(dev->bs, j);
		for (unsigned k = 0; k < ai->run->ndrivers; k++)
			if (ai->run->drivers[k].tp->show_device)
				ai->run->drivers[k].tp->show_device(d->name, j);
		scsi_io_stats_sum(&total, &s);
		ut_json_end_obj(j);
	}
	ut_json_end_arr(j);
	scsi_stats_json(j, "totals", &total, true);
}

static void show_sessions(const struct admin_info *ai, struct ut_json *j)
{
	struct scsi_io_stats total = {0};

	ut_json_arr(j, "sessions");
	for (unsigned i = 0; i < ai->run->ndrivers; i++) {
		const struct tgt_transport *tp = ai->run->drivers[i].tp;
		const struct tgt_driver *d = tgt_config_driver(ai->run->cfg, ai->run->drivers[i].name);
		if (d && tp->show_sessions)
			tp->show_sessions(d, j, &total);
	}
	ut_json_end_arr(j);
	scsi_stats_json(j, "totals", &total, false);
}

static const char *const help[] = {
    "show targets|sessions|devices",
    "version",
    "add device NAME handler=H [ATTR=VALUE]...",
    "remove device NAME",
    "set device NAME ATTR=VALUE...",
    "resize device NAME size=BYTES",
    "resync device NAME",
    "add target NAME driver=D [ATTR=VALUE]...",
    "remove target NAME driver=D",
    "enable|disable target NAME driver=D",
    "set target NAME driver=D ATTR=VALUE...",
    "set driver NAME ATTR=VALUE...",
    "add|remove group NAME driver=D target=T",
    "set group NAME driver=D target=T ATTR=VALUE...",
    "add lun N driver=D target=T [group=G] device=DEV [read_only=1]",
    "remove lun N driver=D target=T [group=G]",
    "add|remove initiator PATTERN driver=D target=T group=G",
    "set tgroup NAME dgroup=DG state=S [preferred=0|1]",
    "close session NEXUS_ID",
    "reload [FILE]",
    "write-config [FILE]",
    "help",
};

void admin_answer(const struct admin_info *ai, const struct admin_req *req, struct ut_json *j)
{
	pthread_mutex_lock(&ai->run->mu);
	if (req->cmd >= ADMIN_EDIT) {
		admin_verb(ai, req, j);
		pthread_mutex_unlock(&ai->run->mu);
		return;
	}
	begin_ok(j);
	switch (req->cmd) {
	case ADMIN_SHOW_TARGETS:
		show_targets(ai, j);
		break;
	case ADMIN_SHOW_SESSIONS:
		show_sessions(ai, j);
		break;
	case ADMIN_SHOW_DEVICES:
		show_devices(ai, j);
		break;
	case ADMIN_VERSION:
		ut_json_str(j, "version", ai->version);
		ut_json_u64(j, "pid", (uint64_t)getpid());
		ut_json_u64(j, "uptime_s", (uint64_t)(time(NULL) - ai->started));
		ut_json_str(j, "config", ai->run->config_path);
		ut_json_u64(j, "changes", ai->run->changes);
		break;
	case ADMIN_HELP:
		ut_json_arr(j, "commands");
		for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++)
			ut_json_str(j, NULL, help[i]);
		ut_json_end_arr(j);
		break;
	default:
		break;
	}
	ut_json_end_obj(j);
	pthread_mutex_unlock(&ai->run->mu);
}
