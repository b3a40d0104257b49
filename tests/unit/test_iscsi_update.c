/* iSCSI live administration (iscsi_update.c), the real transport on loopback with the
 * harness's initiator: a LUN added or removed reaches a logged-in session (REPORTED LUNS
 * DATA HAS CHANGED, then the new map) with nothing else about it disturbed; a target added
 * takes logins, a removed or disabled one closes its sessions and refuses new ones; an ACL
 * that leaves an initiator no LUN closes its session; a login over a change and a
 * reinstatement after one; close_session by nexus id. */
#include "tests/unit/iscsi_harness.h"

#include "scsi/scsi_srcu.h"

#define T2 "iqn.2026-12.org.utgt:unit-two"

static const char *const BASE =
    "HANDLER ramdisk {\n DEVICE rd0 {\n  size_mb 8\n }\n DEVICE rd1 {\n  size_mb 4\n }\n}\n"
    "TARGET_DRIVER iscsi {\n listen 127.0.0.1:0\n"
    " TARGET " IH_TARGET " {\n  enabled 1\n  LUN 0 rd0\n%s }\n%s}\n";

static struct ih_target t;
static struct tgt_config *old_cfgs[8];
static unsigned nold;

/* The configuration BASE makes of `luns` (more of IH_TARGET) and `more` (more targets), its
 * devices the running ones (as tgt_apply would make them), applied through the op. */
static void apply(const char *luns, const char *more)
{
	struct diag d = {.file = "unit", .emit = ih_diag_emit};
	char text[4096], err[256] = "";
	struct tgt_config *next;

	snprintf(text, sizeof(text), BASE, luns, more);
	next = tgt_config_parse(text, strlen(text), "unit.conf", &d);
	cr_assert_not_null(next);
	/* keep the running LUs: the next tables point at them */
	for (unsigned i = 0; i < next->ndevices; i++) {
		const struct tgt_device *live = tgt_config_device(t.cfg, next->devices[i].name);
		struct scsi_dev *fresh = next->devices[i].dev;
		cr_assert_not_null(live);
		for (unsigned dv = 0; dv < next->ndrivers; dv++)
			for (unsigned k = 0; k < next->drivers[dv].ntargets; k++) {
				struct tgt_target *x = &next->drivers[dv].targets[k];
				for (unsigned e = 0; e < x->table.n; e++)
					if (x->table.e[e].dev == fresh)
						x->table.e[e].dev = live->dev;
				for (unsigned g = 0; g < x->ngroups; g++)
					for (unsigned e = 0; e < x->groups[g].table.n; e++)
						if (x->groups[g].table.e[e].dev == fresh)
							x->groups[g].table.e[e].dev = live->dev;
			}
		scsi_dev_destroy(fresh);
		next->devices[i].dev = live->dev;
	}
	for (unsigned i = 0; i < t.cfg->ndevices; i++)
		t.cfg->devices[i].dev = NULL; /* moved */
	cr_assert_eq(
	    iscsi_transport.update(next, tgt_config_driver(next, "iscsi"), err, sizeof(err)), 0,
	    "%s", err);
	scsi_srcu_synchronize();
	old_cfgs[nold++] = t.cfg; /* freed at the end: the harness's stop frees t.cfg */
	t.cfg = next;
}

static void setup(void)
{
	char text[4096];

	snprintf(text, sizeof(text), BASE, "", "");
	ih_start_conf(&t, text);
	nold = 0;
}

static void teardown(void)
{
	ih_stop(&t);
	for (unsigned i = 0; i < nold; i++)
		tgt_config_free(old_cfgs[i]);
}

TestSuite(iscsi_update, .init = setup, .fini = teardown);

static unsigned report_luns(struct ih_conn *c, uint64_t *out)
{
	uint8_t cdb[12] = {0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0}, b[64] = {0};
	struct ih_result r = ih_cmd(c, 0, cdb, 12, false, true, b, 64, NULL);
	unsigned n;

	cr_assert_eq(r.status, 0);
	n = iscsi_get32(b) / 8;
	for (unsigned i = 0; i < n && i < 8; i++)
		out[i] = scsi_lun_decode(b + 8 + 8 * i);
	return n;
}

static struct ih_result tur(struct ih_conn *c, uint64_t lun)
{
	uint8_t cdb[6] = {0};
	return ih_cmd(c, lun, cdb, 6, false, false, NULL, 0, NULL);
}

Test(iscsi_update, lun_added_and_removed_under_a_session)
{
	struct ih_conn a;
	uint64_t luns[8];
	uint8_t buf[4096];
	struct ih_result r;

	cr_assert_eq(ih_login_normal(&a, t.port), 0);
	ih_clear_ua(&a, 0);
	cr_assert_eq(report_luns(&a, luns), 1);

	apply("  LUN 1 rd1\n", "");
	r = tur(&a, 0);
	cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(ih_asc(&r), 0x3f);
	cr_assert_eq(ih_ascq(&r), 0x0e, "REPORTED LUNS DATA HAS CHANGED");
	cr_assert_eq(report_luns(&a, luns), 2);
	cr_assert_eq(luns[1], 1);
	ih_clear_ua(&a, 1);
	cr_assert_eq(ih_rw10(&a, false, 0, 8, buf, NULL).status, 0, "LUN 0 still reads");

	apply("", "");
	r = tur(&a, 0);
	cr_assert_eq(ih_ascq(&r), 0x0e);
	r = tur(&a, 1);
	cr_assert_eq(r.status, SAM_STAT_CHECK_CONDITION);
	cr_assert_eq(ih_asc(&r), 0x25, "LOGICAL UNIT NOT SUPPORTED");
	cr_assert_eq(report_luns(&a, luns), 1);
	/* the same map in a new configuration: nothing to report */
	apply("", "");
	cr_assert_eq(tur(&a, 0).status, 0);
	ih_logout(&a);
}

Test(iscsi_update, targets_added_removed_disabled)
{
	struct ih_conn a, b;
	struct ih_login_opts o2 = {.tname = T2};

	apply("", " TARGET " T2 " {\n  enabled 1\n  LUN 0 rd1\n }\n");
	ih_init(&b, t.port);
	cr_assert_eq(ih_login(&b, &o2), 0, "the new target takes logins");
	cr_assert_eq(ih_login_normal(&a, t.port), 0);
	ih_clear_ua(&a, 0);

	/* T2 disabled: its session is closed, new logins are refused; a is untouched */
	apply("", " TARGET " T2 " {\n  enabled 0\n  LUN 0 rd1\n }\n");
	cr_assert(ih_closed(&b), "the disabled target's session is closed");
	ih_close(&b);
	ih_init(&b, t.port);
	cr_assert_eq(ih_login(&b, &o2), ISCSI_LOGIN_NOT_FOUND);
	ih_close(&b);
	cr_assert_eq(tur(&a, 0).status, 0, "the other target's session saw nothing");

	/* T2 back, a session on it, then T2 removed: that session goes, a's stays */
	apply("", " TARGET " T2 " {\n  enabled 1\n  LUN 0 rd1\n }\n");
	ih_init(&b, t.port);
	cr_assert_eq(ih_login(&b, &o2), 0);
	apply("", "");
	cr_assert(ih_closed(&b), "the removed target's session is closed");
	ih_close(&b);
	ih_init(&b, t.port);
	cr_assert_eq(ih_login(&b, &o2), ISCSI_LOGIN_NOT_FOUND);
	ih_close(&b);
	cr_assert_eq(tur(&a, 0).status, 0, "the other target's session saw nothing");
	ih_logout(&a);
}

Test(iscsi_update, acl_without_luns_closes_and_reinstatement_after_a_change)
{
	struct ih_conn a, b;
	struct ih_login_opts o = {.tname = IH_TARGET};

	cr_assert_eq(ih_login_normal(&a, t.port), 0);
	ih_clear_ua(&a, 0);
	/* the initiator lands in a group without LUNs: access gone, session closed */
	apply("  GROUP none {\n   INITIATOR " IH_INITIATOR "\n  }\n", "");
	cr_assert(ih_closed(&a));
	ih_close(&a);
	ih_init(&a, t.port);
	cr_assert_eq(ih_login(&a, &o), ISCSI_LOGIN_AUTHZ_FAILED);
	ih_close(&a);

	/* access back; a session, then a change, then a login with the same ISID reinstates it
	 * (targets compare by name across configurations) */
	apply("", "");
	cr_assert_eq(ih_login_normal(&a, t.port), 0);
	apply("  LUN 1 rd1\n", "");
	ih_init(&b, t.port);
	memcpy(b.isid, a.isid, 6);
	cr_assert_eq(ih_login(&b, &o), 0, "reinstatement across a configuration change");
	cr_assert(ih_closed(&a), "the old session went");
	ih_close(&a);
	ih_clear_ua(&b, 0);
	cr_assert_eq(tur(&b, 1).status, SAM_STAT_CHECK_CONDITION, "power-on UA of LUN 1");
	ih_logout(&b);
}

Test(iscsi_update, close_session_by_nexus_id)
{
	struct ih_conn a;
	char err[128] = "";
	uint64_t id = 0;

	cr_assert_eq(ih_login_normal(&a, t.port), 0);
	pthread_mutex_lock(&iscsit_global->sess_lock);
	for (struct iscsit_session *s = iscsit_global->sessions; s; s = s->next)
		if (s->tgt)
			id = s->nexus.id;
	pthread_mutex_unlock(&iscsit_global->sess_lock);
	cr_assert_neq(id, 0);
	cr_assert_eq(iscsi_transport.close_session(id + 100, err, sizeof(err)), -1);
	cr_assert(strstr(err, "no iSCSI session with nexus id"), "%s", err);
	cr_assert_eq(iscsi_transport.close_session(id, err, sizeof(err)), 0, "%s", err);
	cr_assert(ih_closed(&a));
	ih_close(&a);
}
