/* Asymmetric logical unit access (SPC-4 5.15): target port groups, the access-state admission
 * rule, REPORT TARGET PORT GROUPS.
 *
 * Every LU reports TPGS=01b (implicit ALUA) in standard INQUIRY, so initiators always find a
 * consistent picture in INQUIRY, VPD 83 and REPORT TARGET PORT GROUPS:
 *   - an LU in a DEVICE_GROUP reports that group's target port groups and states;
 *   - any other LU is in one implicit group, id 0 (SCSI_DEFAULT_TPG_ID), active/optimized,
 *     holding the requesting port and every target port that has reached the LU. */
#include <string.h>

#include "scsi/scsi_core.h"

const struct scsi_tpg *scsi_dev_tpg(const struct scsi_dev *dev, uint16_t rel_tgt_id)
{
	/* published by scsi_dev_set_alua(); the caller's task keeps the group alive */
	const struct scsi_alua_group *g = __atomic_load_n(&dev->alua, __ATOMIC_ACQUIRE);

	if (!g)
		return NULL;
	for (unsigned i = 0; i < g->ntpgs; i++)
		for (unsigned j = 0; j < g->tpgs[i].nports; j++)
			if (g->tpgs[i].rel_tgt_ids[j] == rel_tgt_id)
				return &g->tpgs[i];
	return NULL;
}

enum scsi_sr scsi_alua_access(enum scsi_alua_state state)
{
	switch (state) {
	case ALUA_ACTIVE_OPTIMIZED:
	case ALUA_ACTIVE_NONOPTIMIZED:
		return SR_OK;
	case ALUA_STANDBY:
		return SR_ALUA_STANDBY;
	case ALUA_TRANSITIONING:
		return SR_ALUA_TRANSITION;
	case ALUA_UNAVAILABLE:
	case ALUA_OFFLINE:
	default:
		return SR_ALUA_UNAVAILABLE;
	}
}

const char *scsi_alua_state_name(enum scsi_alua_state s)
{
	switch (s) {
	case ALUA_ACTIVE_OPTIMIZED:
		return "active";
	case ALUA_ACTIVE_NONOPTIMIZED:
		return "nonoptimized";
	case ALUA_STANDBY:
		return "standby";
	case ALUA_UNAVAILABLE:
		return "unavailable";
	case ALUA_OFFLINE:
		return "offline";
	case ALUA_TRANSITIONING:
		return "transitioning";
	}
	return "active";
}

/* dev->alua_follow: on, the owner's group when known, the local and the non-owner states */
#define FOLLOW_ON	   (1u << 31)
#define FOLLOW_OWNER_KNOWN (1u << 16)
#define FOLLOW_LOCAL(w)	   ((enum scsi_alua_state)(((w) >> 20) & 0xf))
#define FOLLOW_NONOWNER(w) ((enum scsi_alua_state)(((w) >> 24) & 0xf))

static enum scsi_alua_state follow_state(uint32_t w, const struct scsi_tpg *tpg)
{
	if (!(w & FOLLOW_ON))
		return tpg->state;
	if (tpg->local)
		return FOLLOW_LOCAL(w);
	if ((w & FOLLOW_OWNER_KNOWN) && (w & 0xffff) == tpg->group_id &&
	    FOLLOW_LOCAL(w) != ALUA_ACTIVE_OPTIMIZED)
		return ALUA_ACTIVE_OPTIMIZED;
	return FOLLOW_NONOWNER(w);
}

enum scsi_alua_state scsi_tpg_state(const struct scsi_dev *dev, const struct scsi_tpg *tpg)
{
	return follow_state(__atomic_load_n(&dev->alua_follow, __ATOMIC_ACQUIRE), tpg);
}

bool scsi_dev_alua_follow(struct scsi_dev *dev, const struct bs_lock_view *v,
			  enum scsi_alua_state nonowner)
{
	const struct scsi_alua_group *g = __atomic_load_n(&dev->alua, __ATOMIC_ACQUIRE);
	enum scsi_alua_state local;
	uint32_t w, old;
	bool changed = false;

	switch (v->role) {
	case BS_LOCK_OWNER:
		local = ALUA_ACTIVE_OPTIMIZED;
		break;
	case BS_LOCK_PEER:
		local = nonowner;
		break;
	case BS_LOCK_FENCED:
		local = ALUA_UNAVAILABLE;
		break;
	case BS_LOCK_TAKEOVER:
	case BS_LOCK_UNKNOWN:
	default:
		local = ALUA_TRANSITIONING;
		break;
	}
	w = FOLLOW_ON | (uint32_t)local << 20 | (uint32_t)nonowner << 24;
	if (v->owner_group >= 0)
		w |= FOLLOW_OWNER_KNOWN | (uint32_t)(v->owner_group & 0xffff);
	old = __atomic_exchange_n(&dev->alua_follow, w, __ATOMIC_ACQ_REL);
	for (unsigned i = 0; g && i < g->ntpgs; i++)
		if (follow_state(old, &g->tpgs[i]) != follow_state(w, &g->tpgs[i]))
			changed = true;
	if (changed)
		scsi_ua_raise_all(dev, NULL, 0x2a, 0x06); /* ASYMMETRIC ACCESS STATE CHANGED */
	return changed;
}

enum scsi_sr scsi_alua_check(struct scsi_task *t)
{
	const struct scsi_tpg *tpg;

	if (!t->core.dev || !t->nexus)
		return SR_OK;
	tpg = scsi_dev_tpg(t->core.dev, t->nexus->rel_tgt_id);
	if (!tpg || (t->core.desc->flags & SCSI_CF_ALUA_SB_OK))
		return SR_OK;
	return scsi_alua_access(scsi_tpg_state(t->core.dev, tpg));
}

#define RTPG_MAX_PORTS 64

/* One target port group descriptor; returns its length. */
static unsigned put_tpg(uint8_t *p, bool pref, uint8_t state, uint16_t id, const uint16_t *ports,
			unsigned nports)
{
	if (nports > RTPG_MAX_PORTS)
		nports = RTPG_MAX_PORTS;
	p[0] = (uint8_t)((pref ? 0x80 : 0) | (state & 0x0f));
	/* supported states: T_SUP O_SUP U_SUP S_SUP AN_SUP AO_SUP */
	p[1] = 0x80 | 0x40 | 0x08 | 0x04 | 0x02 | 0x01;
	put_be16(p + 2, id);
	p[4] = 0;
	p[5] = 0; /* status code: no status available */
	p[6] = 0;
	p[7] = (uint8_t)nports;
	for (unsigned i = 0; i < nports; i++) {
		memset(p + 8 + 4 * i, 0, 2);
		put_be16(p + 8 + 4 * i + 2, ports[i]);
	}
	return 8 + 4 * nports;
}

enum scsi_sr spc_report_target_port_groups(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint8_t fmt = t->cdb[1] >> 5;
	uint32_t alloc = get_be32(t->cdb + 6);
	uint8_t buf[8 + 16 * (8 + 4 * RTPG_MAX_PORTS)];
	unsigned hdr = fmt == 1 ? 8 : 4, len = hdr;

	if (fmt > 1)
		return scsi_invalid_cdb(t, 1, 7);
	memset(buf, 0, sizeof(buf));
	const struct scsi_alua_group *g = __atomic_load_n(&dev->alua, __ATOMIC_ACQUIRE);

	if (g) {
		for (unsigned i = 0; i < g->ntpgs && i < 16; i++) {
			const struct scsi_tpg *tpg = &g->tpgs[i];
			len += put_tpg(buf + len, tpg->preferred, scsi_tpg_state(dev, tpg),
				       tpg->group_id,
				       tpg->rel_tgt_ids, tpg->nports);
		}
	} else {
		uint16_t ports[RTPG_MAX_PORTS];
		unsigned n = 0;
		if (t->nexus)
			ports[n++] = t->nexus->rel_tgt_id;
		uint16_t seen[RTPG_MAX_PORTS];
		unsigned ns = scsi_ua_known_ports(dev, seen, RTPG_MAX_PORTS);
		for (unsigned i = 0; i < ns && n < RTPG_MAX_PORTS; i++)
			if (!t->nexus || seen[i] != t->nexus->rel_tgt_id)
				ports[n++] = seen[i];
		/* sorted, so the answer does not depend on who asked first */
		for (unsigned i = 1; i < n; i++)
			for (unsigned j = i; j > 0 && ports[j - 1] > ports[j]; j--) {
				uint16_t x = ports[j];
				ports[j] = ports[j - 1];
				ports[j - 1] = x;
			}
		len += put_tpg(buf + len, false, ALUA_ACTIVE_OPTIMIZED, SCSI_DEFAULT_TPG_ID, ports, n);
	}
	if (fmt == 1) {
		put_be32(buf, len - 4);
		buf[4] = 0x10; /* format type 001b */
		buf[5] = 0;    /* implicit transition time: immediate */
	} else {
		put_be32(buf, len - 4);
	}
	scsi_data_in(t, buf, len < alloc ? len : alloc);
	return SR_OK;
}

bool scsi_dev_explicit_alua(const struct scsi_dev *dev)
{
	return dev && dev->bs && dev->bs->ceph.alua_follow_lock && dev->bs->ceph.alua_explicit &&
	       dev->bs->ops && dev->bs->ops->lock_takeover && dev->alua;
}

#define STPG_MAX_LEN 1024

/* SET TARGET PORT GROUPS (SPC-4 6.39) on an LU that follows a shared store's owner: asking
 * for this gateway's own group active/optimized takes the store over (the owner is fenced
 * first: bs_rbd_lock.h); asking for the state a group is already in changes nothing.  Any
 * other transition cannot be made from here (a gateway cannot make a peer take the lock)
 * and is refused.  The takeover itself happens on the store's thread: GOOD means it was
 * asked for, and ASYMMETRIC ACCESS STATE CHANGED reports it done. */
enum scsi_sr spc_set_target_port_groups(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	const struct scsi_alua_group *g = __atomic_load_n(&dev->alua, __ATOMIC_ACQUIRE);
	uint32_t len = get_be32(t->cdb + 6);
	uint8_t buf[STPG_MAX_LEN];
	bool takeover = false;

	if (!scsi_dev_explicit_alua(dev) || !g)
		return scsi_invalid_cdb(t, 1, 4);
	if (len > sizeof(buf) || (len > 4 && (len - 4) % 4))
		return SR_PARAM_LIST_LENGTH_ERROR;
	if (len < 4)
		return SR_OK;
	if (scsi_data_out(t, buf, len) < len)
		return SR_PARAM_LIST_LENGTH_ERROR;
	for (uint32_t off = 4; off + 4 <= len; off += 4) {
		enum scsi_alua_state want = (enum scsi_alua_state)(buf[off] & 0x0f);
		uint16_t id = get_be16(buf + off + 2);
		const struct scsi_tpg *tpg = NULL;

		for (unsigned i = 0; i < g->ntpgs && !tpg; i++)
			if (g->tpgs[i].group_id == id)
				tpg = &g->tpgs[i];
		if (!tpg)
			return scsi_invalid_param(t, (uint16_t)(off + 2), 7);
		if (want == scsi_tpg_state(dev, tpg))
			continue;
		if (!tpg->local || want != ALUA_ACTIVE_OPTIMIZED)
			return scsi_invalid_param(t, (uint16_t)off, 3);
		takeover = true;
	}
	if (takeover && dev->bs->ops->lock_takeover(dev->bs) != 0)
		return SR_ALUA_TRANSITION;
	return SR_OK;
}
