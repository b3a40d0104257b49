/* scsi/spc_alua.c: target port groups, the access-state admission rule, REPORT TARGET PORT
 * GROUPS in both formats, and the implicit group of LUs without a DEVICE_GROUP. */
#include "spc_fixture.h"

static uint16_t ports_a[] = {1}, ports_b[] = {2, 5};
static struct scsi_tpg tpgs[2];
static struct scsi_alua_group grp;

static void with_alua(void)
{
	memset(tpgs, 0, sizeof(tpgs));
	snprintf(tpgs[0].name, sizeof(tpgs[0].name), "local");
	tpgs[0].group_id = 10;
	tpgs[0].state = ALUA_ACTIVE_OPTIMIZED;
	tpgs[0].preferred = true;
	tpgs[0].nports = 1;
	tpgs[0].rel_tgt_ids = ports_a;
	snprintf(tpgs[1].name, sizeof(tpgs[1].name), "remote");
	tpgs[1].group_id = 20;
	tpgs[1].state = ALUA_STANDBY;
	tpgs[1].nports = 2;
	tpgs[1].rel_tgt_ids = ports_b;
	snprintf(grp.name, sizeof(grp.name), "dg");
	grp.ntpgs = 2;
	grp.tpgs = tpgs;
	fx_dev->alua = &grp;
	th_clear_ua(&fx_nx, 0);
	th_clear_ua(&fx_nx2, 0);
}

static struct th_result rtpg(struct th_nexus *n, uint8_t fmt, uint32_t alloc, uint8_t *b)
{
	uint8_t cdb[12] = {0xa3, (uint8_t)(fmt << 5 | 0x0a)};
	put_be32(cdb + 6, alloc);
	return th_exec(n, 0, cdb, 12, SCSI_DIR_READ, b, alloc);
}

static const uint8_t r10[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0};

BOTH_STORES(alua, tpg_lookup)
{
	with_alua();
	cr_assert_eq(scsi_dev_tpg(fx_dev, 1), &tpgs[0]);
	cr_assert_eq(scsi_dev_tpg(fx_dev, 5), &tpgs[1]);
	cr_assert_null(scsi_dev_tpg(fx_dev, 3));
	fx_dev->alua = NULL;
	cr_assert_null(scsi_dev_tpg(fx_dev, 1));
}

BOTH_STORES(alua, standby_blocks_media_commands)
{
	uint8_t data[512];
	struct th_result r;

	with_alua();
	r = th_exec(&fx_nx, 0, r10, 10, SCSI_DIR_READ, data, 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD, "active/optimized port");
	r = th_exec(&fx_nx2, 0, r10, 10, SCSI_DIR_READ, data, 512);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x0b);
	/* allowed in standby: TUR, INQUIRY, REPORT LUNS, RTPG, MODE SENSE, REQUEST SENSE */
	r = th_exec(&fx_nx2, 0, (uint8_t[6]){0}, 6, SCSI_DIR_NONE, NULL, 0);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = th_exec(&fx_nx2, 0, (uint8_t[6]){0x1a, 0x08, 0x3f, 0, 255, 0}, 6, SCSI_DIR_READ, data,
		    255);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = rtpg(&fx_nx2, 0, 255, data);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	tpgs[1].state = ALUA_UNAVAILABLE;
	r = th_exec(&fx_nx2, 0, r10, 10, SCSI_DIR_READ, data, 512);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x0c);
	tpgs[1].state = ALUA_TRANSITIONING;
	r = th_exec(&fx_nx2, 0, r10, 10, SCSI_DIR_READ, data, 512);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x0a);
	tpgs[1].state = ALUA_OFFLINE;
	r = th_exec(&fx_nx2, 0, r10, 10, SCSI_DIR_READ, data, 512);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x0c);
	tpgs[1].state = ALUA_ACTIVE_NONOPTIMIZED;
	r = th_exec(&fx_nx2, 0, r10, 10, SCSI_DIR_READ, data, 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
}

BOTH_STORES(alua, report_target_port_groups)
{
	uint8_t b[255];
	struct th_result r;

	with_alua();
	r = rtpg(&fx_nx, 0, sizeof(b), b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	/* two descriptors: 8 + 4, 8 + 8 */
	cr_assert_eq(get_be32(b), 12 + 16);
	cr_assert_eq(r.data_len, 4 + 28);
	cr_assert_eq(b[4], 0x80 | ALUA_ACTIVE_OPTIMIZED, "PREF + AO");
	cr_assert_eq(b[5], 0xcf, "T O U S AN AO supported");
	cr_assert_eq(get_be16(b + 6), 10);
	cr_assert_eq(b[11], 1);
	cr_assert_eq(get_be16(b + 14), 1);
	cr_assert_eq(b[16], ALUA_STANDBY);
	cr_assert_eq(get_be16(b + 18), 20);
	cr_assert_eq(b[23], 2);
	cr_assert_eq(get_be16(b + 26), 2);
	cr_assert_eq(get_be16(b + 30), 5);
	/* extended header */
	r = rtpg(&fx_nx, 1, sizeof(b), b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b), 4 + 28);
	cr_assert_eq(b[4], 0x10);
	cr_assert_eq(get_be16(b + 8 + 2), 10);
	/* allocation length */
	r = rtpg(&fx_nx, 0, 8, b);
	cr_assert_eq(r.data_len, 8);
	cr_assert_eq(get_be32(b), 28);
	/* reserved format */
	r = rtpg(&fx_nx, 2, sizeof(b), b);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	fx_assert_sks(r, 1, 7, 1);
	/* VPD 83 names the group of the asking port */
	r = th_exec(&fx_nx2, 0, (uint8_t[6]){0x12, 1, 0x83, 0, 255, 0}, 6, SCSI_DIR_READ, b, 255);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	unsigned off = 4;
	bool found = false;
	while (off < 4u + get_be16(b + 2)) {
		if ((b[off + 1] & 0x3f) == 0x15) { /* target port association, type 5 */
			cr_assert_eq(get_be16(b + off + 6), 20);
			found = true;
		}
		off += 4u + b[off + 3];
	}
	cr_assert(found);
}

BOTH_STORES(alua, implicit_group_without_device_group)
{
	uint8_t b[64];
	struct th_result r;

	th_clear_ua(&fx_nx, 0);
	th_clear_ua(&fx_nx2, 0);
	r = rtpg(&fx_nx2, 0, sizeof(b), b);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(get_be32(b), 8 + 8);
	cr_assert_eq(b[4], ALUA_ACTIVE_OPTIMIZED);
	cr_assert_eq(get_be16(b + 6), SCSI_DEFAULT_TPG_ID);
	cr_assert_eq(b[11], 2, "both target ports that reached the LU");
	cr_assert_eq(get_be16(b + 14), 1);
	cr_assert_eq(get_be16(b + 18), 2);
	/* INQUIRY says implicit ALUA in both cases */
	r = th_exec(&fx_nx, 0, (uint8_t[6]){0x12, 0, 0, 0, 36, 0}, 6, SCSI_DIR_READ, b, 36);
	cr_assert_eq(b[5] & 0x30, 0x10);
}

/* ---- states that follow a shared store's owner (vdisk_rbd alua_follow_lock) ---- */

static unsigned takeovers;
static struct backstore_ops follow_ops;

static int count_takeover(struct backstore *bs)
{
	(void)bs;
	takeovers++;
	return 0;
}

/* tpgs[0] (group 10, port 1) is this gateway's, tpgs[1] (group 20, ports 2 and 5) a peer's */
static void with_follow(void)
{
	with_alua();
	tpgs[0].local = true;
	follow_ops = *fx_dev->bs->ops;
	follow_ops.lock_takeover = count_takeover;
	fx_dev->bs->ops = &follow_ops;
	fx_dev->bs->ceph.alua_follow_lock = true;
	takeovers = 0;
}

static void follow(enum bs_lock_role role, int owner_group, enum scsi_alua_state nonowner)
{
	struct bs_lock_view v = {.role = role, .owner_group = owner_group};

	scsi_dev_alua_follow(fx_dev, &v, nonowner);
}

/* The states RTPG reports for groups 10 and 20 (after the UNIT ATTENTIONs pending). */
static void assert_rtpg(struct th_nexus *n, uint8_t s10, uint8_t s20)
{
	uint8_t b[64];
	struct th_result r;

	th_clear_ua(n, 0);
	r = rtpg(n, 0, sizeof(b), b);

	cr_assert_eq(r.status, SAM_STAT_GOOD, "RTPG: %x/%02x/%02x", r.sense[2] & 0xf, r.sense[12],
		     r.sense[13]);
	cr_assert_eq(get_be16(b + 6), 10);
	cr_assert_eq(b[4] & 0x0f, s10, "group 10: %#x, expected %#x", b[4] & 0x0f, s10);
	cr_assert_eq(get_be16(b + 18), 20);
	cr_assert_eq(b[16] & 0x0f, s20, "group 20: %#x, expected %#x", b[16] & 0x0f, s20);
}

static void assert_ua_2a06(struct th_nexus *n, bool expected)
{
	struct th_result r = th_exec(n, 0, (uint8_t[6]){0}, 6, SCSI_DIR_NONE, NULL, 0);

	if (expected)
		th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x06);
	else
		cr_assert_eq(r.status, SAM_STAT_GOOD, "no UNIT ATTENTION expected: %x/%02x/%02x",
			     r.sense_len > 13 ? r.sense[2] & 0xf : 0, r.sense_len > 13 ? r.sense[12] : 0,
			     r.sense_len > 13 ? r.sense[13] : 0);
}

BOTH_STORES(alua, states_follow_the_lock_owner)
{
	uint8_t data[512];
	struct th_result r;

	with_follow();
	follow(BS_LOCK_OWNER, 10, ALUA_ACTIVE_NONOPTIMIZED);
	assert_ua_2a06(&fx_nx, true);
	assert_rtpg(&fx_nx, ALUA_ACTIVE_OPTIMIZED, ALUA_ACTIVE_NONOPTIMIZED);
	follow(BS_LOCK_OWNER, 10, ALUA_ACTIVE_NONOPTIMIZED);
	assert_ua_2a06(&fx_nx, false); /* nothing changed: no UA */
	/* the peer took the lock: it is active/optimized, this gateway non-optimized */
	follow(BS_LOCK_PEER, 20, ALUA_ACTIVE_NONOPTIMIZED);
	assert_ua_2a06(&fx_nx, true);
	assert_ua_2a06(&fx_nx2, true);
	assert_rtpg(&fx_nx, ALUA_ACTIVE_NONOPTIMIZED, ALUA_ACTIVE_OPTIMIZED);
	r = th_exec(&fx_nx, 0, r10, 10, SCSI_DIR_READ, data, 512);
	cr_assert_eq(r.status, SAM_STAT_GOOD, "a non-owner serves reads");
	/* the owner's group not known yet (it never announced): nobody optimized */
	follow(BS_LOCK_PEER, -1, ALUA_ACTIVE_NONOPTIMIZED);
	assert_rtpg(&fx_nx, ALUA_ACTIVE_NONOPTIMIZED, ALUA_ACTIVE_NONOPTIMIZED);
	/* taking over: transitioning here */
	follow(BS_LOCK_TAKEOVER, -1, ALUA_ACTIVE_NONOPTIMIZED);
	assert_ua_2a06(&fx_nx, true);
	r = th_exec(&fx_nx, 0, r10, 10, SCSI_DIR_READ, data, 512);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x0a);
	/* fenced: unavailable, so multipath leaves this gateway at once */
	follow(BS_LOCK_FENCED, -1, ALUA_ACTIVE_NONOPTIMIZED);
	th_clear_ua(&fx_nx, 0);
	r = th_exec(&fx_nx, 0, r10, 10, SCSI_DIR_READ, data, 512);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x0c);
	/* alua_nonowner_state standby: a non-owner serves nothing */
	follow(BS_LOCK_PEER, 20, ALUA_STANDBY);
	th_clear_ua(&fx_nx, 0);
	assert_rtpg(&fx_nx, ALUA_STANDBY, ALUA_ACTIVE_OPTIMIZED);
	r = th_exec(&fx_nx, 0, r10, 10, SCSI_DIR_READ, data, 512);
	th_assert_sense(r, SK_NOT_READY, 0x04, 0x0b);
	cr_assert_str_eq(scsi_alua_state_name(scsi_tpg_state(fx_dev, &tpgs[0])), "standby");
}

static struct th_result stpg(struct th_nexus *n, uint16_t group, uint8_t state)
{
	uint8_t cdb[12] = {0xa4, 0x0a};
	uint8_t p[8] = {0, 0, 0, 0, state, 0, (uint8_t)(group >> 8), (uint8_t)group};

	put_be32(cdb + 6, sizeof(p));
	return th_exec(n, 0, cdb, 12, SCSI_DIR_WRITE, p, sizeof(p));
}

BOTH_STORES(alua, set_target_port_groups_asks_the_store_to_take_over)
{
	uint8_t b[36];
	struct th_result r;

	with_alua();
	/* a configured (not lock-following) group: implicit only, no STPG */
	r = th_exec(&fx_nx, 0, (uint8_t[6]){0x12, 0, 0, 0, 36, 0}, 6, SCSI_DIR_READ, b, 36);
	cr_assert_eq((b[5] >> 4) & 3, 1, "TPGS 01b");
	r = stpg(&fx_nx, 10, ALUA_ACTIVE_OPTIMIZED);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);

	/* following the lock without alua_explicit: implicit only, so Linux's alua handler, which
	 * sends STPG whenever dm-multipath activates a non-optimized path (a restarted gateway's
	 * path reinstated), never takes the lock from a healthy owner */
	with_follow();
	follow(BS_LOCK_PEER, 20, ALUA_ACTIVE_NONOPTIMIZED);
	th_clear_ua(&fx_nx, 0);
	r = th_exec(&fx_nx, 0, (uint8_t[6]){0x12, 0, 0, 0, 36, 0}, 6, SCSI_DIR_READ, b, 36);
	cr_assert_eq((b[5] >> 4) & 3, 1, "TPGS 01b without alua_explicit");
	r = stpg(&fx_nx, 10, ALUA_ACTIVE_OPTIMIZED);
	cr_assert_neq(r.status, SAM_STAT_GOOD, "STPG refused without alua_explicit");
	cr_assert_eq(r.sense[2] & 0xf, SK_ILLEGAL_REQUEST);
	cr_assert_eq(takeovers, 0);

	fx_dev->bs->ceph.alua_explicit = true;
	r = th_exec(&fx_nx, 0, (uint8_t[6]){0x12, 0, 0, 0, 36, 0}, 6, SCSI_DIR_READ, b, 36);
	cr_assert_eq((b[5] >> 4) & 3, 3, "TPGS 11b: implicit and explicit");
	/* this gateway's group active/optimized: a takeover */
	r = stpg(&fx_nx, 10, ALUA_ACTIVE_OPTIMIZED);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(takeovers, 1);
	/* the state a group already has: nothing to do */
	r = stpg(&fx_nx, 20, ALUA_ACTIVE_OPTIMIZED);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(takeovers, 1);
	/* a peer cannot be made the owner from here, nor this gateway a non-owner */
	follow(BS_LOCK_OWNER, 10, ALUA_ACTIVE_NONOPTIMIZED);
	th_clear_ua(&fx_nx, 0);
	r = stpg(&fx_nx, 20, ALUA_ACTIVE_OPTIMIZED);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	r = stpg(&fx_nx, 10, ALUA_STANDBY);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	/* an unknown group */
	r = stpg(&fx_nx, 99, ALUA_ACTIVE_OPTIMIZED);
	th_assert_sense(r, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	cr_assert_eq(takeovers, 1);
}
