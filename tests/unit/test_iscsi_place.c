/* Connection placement (iscsi_place.c): the choice of worker, and the hand-off after login
 * through the real transport: connections to one target gather on one worker (up to
 * ISCSIT_PLACE_GROUP_MAX), other targets' stay spread, conn_placement spread keeps accept's
 * choice, and a connection that moved serves commands, TMFs and its logout, or goes away
 * cleanly when the initiator drops it during the move. */
#include <time.h>

#include "iscsi_harness.h"

#define IH_TARGET2 "iqn.2026-12.org.utgt:unit-two"

static struct ih_target T;

static void teardown(void)
{
	ih_stop(&T);
}

/* ---------------------------------------------------------------- the choice */

Test(iscsi_place, pick_gathers_below_the_cap)
{
	unsigned none[3] = {0, 0, 0}, one_elsewhere[3] = {0, 1, 0}, here_and_there[3] = {1, 2, 0};
	unsigned full[3] = {0, 4, 1}, all_full[3] = {4, 4, 0}, tie[3] = {2, 2, 0};

	cr_assert_eq(iscsit_place_pick(none, 3, 2, 4), 2, "nobody of the group: stay");
	cr_assert_eq(iscsit_place_pick(one_elsewhere, 3, 0, 4), 1, "join the group");
	cr_assert_eq(iscsit_place_pick(here_and_there, 3, 0, 4), 1, "join the larger part");
	cr_assert_eq(iscsit_place_pick(full, 3, 0, 4), 2, "a full worker is skipped");
	cr_assert_eq(iscsit_place_pick(full, 3, 1, 4), 2, "from a full worker to the next part");
	cr_assert_eq(iscsit_place_pick(all_full, 3, 2, 4), 2, "every part full: stay");
	cr_assert_eq(iscsit_place_pick(tie, 3, 1, 4), 1, "a tie keeps the current worker");
	cr_assert_eq(iscsit_place_pick(tie, 3, 2, 4), 0, "a tie elsewhere: the first");
}

/* ---------------------------------------------------------------- through the transport */

static void start_two_targets(const char *driver_extra)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "HANDLER ramdisk {\n DEVICE rd0 {\n  size_mb 8\n }\n DEVICE rd1 {\n  size_mb 8\n "
		 "}\n}\n"
		 "TARGET_DRIVER iscsi {\n listen 127.0.0.1:0\n worker_threads 3\n %s\n"
		 " TARGET " IH_TARGET " {\n  enabled 1\n  LUN 0 rd0\n }\n"
		 " TARGET " IH_TARGET2 " {\n  enabled 1\n  LUN 0 rd1\n }\n}\n",
		 driver_extra ? driver_extra : "");
	ih_start_conf(&T, text);
	cr_assert_eq(iscsit_global->nworkers, 3);
}

static int login_to(struct ih_conn *c, const char *tname)
{
	struct ih_login_opts o = {.tname = tname};

	ih_init(c, T.port);
	return ih_login(c, &o);
}

/* The worker that serves (or is about to serve) the session with c's ISID: decided before
 * the login answer left, so the initiator holding the answer can ask. */
static unsigned worker_of(const struct ih_conn *c)
{
	struct iscsit_ctx *ctx = iscsit_global;
	int idx = -1;

	pthread_mutex_lock(&ctx->sess_lock);
	for (struct iscsit_session *s = ctx->sessions; s; s = s->next)
		if (!memcmp(s->isid, c->isid, 6) && s->conn)
			idx = (int)(s->conn->move_to ? s->conn->move_to : s->conn->w)->idx;
	pthread_mutex_unlock(&ctx->sess_lock);
	cr_assert_geq(idx, 0, "no session with that ISID");
	return (unsigned)idx;
}

static unsigned conns_on(unsigned w)
{
	return atomic_load(&iscsit_global->workers[w].nconns);
}

/* Wait (bounded) until the target holds no connection at all. */
static void wait_no_conns(void)
{
	for (int i = 0; i < 3000 && atomic_load(&iscsit_global->nconns); i++)
		usleep(10000);
	cr_assert_eq(atomic_load(&iscsit_global->nconns), 0, "connections left after 30 s");
	for (unsigned w = 0; w < iscsit_global->nworkers; w++)
		cr_assert_eq(conns_on(w), 0, "worker %u still counts %u", w, conns_on(w));
}

static void read_back(struct ih_conn *c, uint32_t lba, uint8_t seed)
{
	uint8_t out[4096], in[4096];
	struct ih_result r;

	memset(out, seed, sizeof(out));
	r = ih_rw10(c, true, lba, 8, out, NULL);
	cr_assert_eq(r.status, 0, "WRITE status %d", r.status);
	memset(in, 0, sizeof(in));
	r = ih_rw10(c, false, lba, 8, in, NULL);
	cr_assert_eq(r.status, 0, "READ status %d", r.status);
	cr_assert_eq(memcmp(in, out, sizeof(in)), 0, "data read back differs");
}

Test(iscsi_place, paths_of_one_target_share_a_worker_other_targets_spread, .fini = teardown)
{
	struct ih_conn a1, a2, b1;

	start_two_targets(NULL);
	cr_assert_eq(login_to(&a1, IH_TARGET), 0);
	cr_assert_eq(login_to(&b1, IH_TARGET2), 0);
	cr_assert_eq(login_to(&a2, IH_TARGET), 0);
	cr_assert_eq(worker_of(&a1), worker_of(&a2), "two paths to one target: one worker");
	cr_assert_neq(worker_of(&a1), worker_of(&b1), "another target: its own worker");
	cr_assert_eq(conns_on(worker_of(&a1)), 2);
	cr_assert_eq(conns_on(worker_of(&b1)), 1);
	/* both paths work, from either side of the hand-off, on one LU */
	ih_clear_ua(&a1, 0);
	ih_clear_ua(&a2, 0);
	ih_clear_ua(&b1, 0);
	read_back(&a2, 16, 0xa2);
	read_back(&a1, 32, 0xa1);
	read_back(&b1, 16, 0xb1);
	cr_assert(ih_ping(&a2));
	ih_logout(&a2);
	ih_logout(&a1);
	ih_logout(&b1);
	wait_no_conns();
}

Test(iscsi_place, a_group_fills_one_worker_then_spreads, .fini = teardown)
{
	struct ih_conn c[ISCSIT_PLACE_GROUP_MAX + 1];
	unsigned home;

	start_two_targets(NULL);
	for (int i = 0; i <= ISCSIT_PLACE_GROUP_MAX; i++)
		cr_assert_eq(login_to(&c[i], IH_TARGET), 0);
	home = worker_of(&c[0]);
	for (int i = 1; i < ISCSIT_PLACE_GROUP_MAX; i++)
		cr_assert_eq(worker_of(&c[i]), home, "path %d elsewhere", i);
	cr_assert_neq(worker_of(&c[ISCSIT_PLACE_GROUP_MAX]), home, "past the cap: spread");
	cr_assert_eq(conns_on(home), ISCSIT_PLACE_GROUP_MAX);
	for (int i = 0; i <= ISCSIT_PLACE_GROUP_MAX; i++) {
		ih_clear_ua(&c[i], 0);
		read_back(&c[i], (uint32_t)i * 8, (uint8_t)i);
		ih_logout(&c[i]);
	}
	wait_no_conns();
}

Test(iscsi_place, spread_keeps_what_accept_chose, .fini = teardown)
{
	struct ih_conn a1, a2;

	start_two_targets("conn_placement spread");
	cr_assert_eq(iscsit_global->placement, ISCSIT_PLACE_SPREAD);
	cr_assert_eq(login_to(&a1, IH_TARGET), 0);
	cr_assert_eq(login_to(&a2, IH_TARGET), 0);
	cr_assert_neq(worker_of(&a1), worker_of(&a2), "spread: the least loaded worker each");
	ih_logout(&a1);
	ih_logout(&a2);
	wait_no_conns();
}

/* Commands the initiator sends the moment it holds the login answer arrive while the
 * connection is between workers: each is answered once, with the right data. */
Test(iscsi_place, commands_sent_during_the_move_are_served, .fini = teardown)
{
	struct ih_conn home, c;

	start_two_targets(NULL);
	cr_assert_eq(login_to(&home, IH_TARGET), 0);
	ih_clear_ua(&home, 0);
	read_back(&home, 0, 0x5a);
	for (int i = 0; i < 20; i++) {
		uint8_t in[4096];
		struct ih_result r;

		cr_assert_eq(login_to(&c, IH_TARGET), 0);
		r = ih_rw10(&c, false, 0, 8, in, NULL); /* the nexus' first: a UNIT ATTENTION */
		cr_assert(r.status == 0 || r.status == 2, "round %d: status %d", i, r.status);
		ih_clear_ua(&c, 0);
		r = ih_rw10(&c, false, 0, 8, in, NULL);
		cr_assert_eq(r.status, 0, "round %d", i);
		cr_assert_eq(in[0], 0x5a);
		cr_assert_eq(in[4095], 0x5a);
		cr_assert_eq(worker_of(&c), worker_of(&home));
		ih_logout(&c);
	}
	ih_logout(&home);
	wait_no_conns();
}

/* TMFs on a connection that moved reach the core and come back to its new worker. */
Test(iscsi_place, tmf_on_a_moved_connection, .fini = teardown)
{
	struct ih_conn a1, a2;

	start_two_targets(NULL);
	cr_assert_eq(login_to(&a1, IH_TARGET), 0);
	cr_assert_eq(login_to(&a2, IH_TARGET), 0);
	cr_assert_eq(worker_of(&a1), worker_of(&a2));
	ih_clear_ua(&a2, 0);
	cr_assert_eq(ih_tmf(&a2, ISCSI_TMF_ABORT_TASK, 0, 0x7777, a2.cmd_sn),
		     ISCSI_TMF_RSP_COMPLETE);
	cr_assert_eq(ih_tmf(&a2, ISCSI_TMF_LUN_RESET, 0, ISCSI_RSVD_TAG, 0),
		     ISCSI_TMF_RSP_COMPLETE);
	/* the reset's UNIT ATTENTION, then I/O again on both paths */
	ih_clear_ua(&a2, 0);
	ih_clear_ua(&a1, 0);
	read_back(&a2, 64, 0x33);
	read_back(&a1, 72, 0x44);
	ih_logout(&a2);
	ih_logout(&a1);
	wait_no_conns();
}

/* An initiator that drops the connection the moment it has the login answer (the move is
 * under way or done): nothing is left behind on either worker, and the home path lives. */
Test(iscsi_place, close_during_the_move_leaves_nothing, .fini = teardown)
{
	struct ih_conn home, c;

	start_two_targets(NULL);
	cr_assert_eq(login_to(&home, IH_TARGET), 0);
	for (int i = 0; i < 30; i++) {
		cr_assert_eq(login_to(&c, IH_TARGET), 0);
		ih_close(&c);
	}
	for (int i = 0; i < 3000 && atomic_load(&iscsit_global->nconns) > 1; i++)
		usleep(10000);
	cr_assert_eq(atomic_load(&iscsit_global->nconns), 1, "dropped connections left");
	cr_assert_eq(conns_on(worker_of(&home)), 1);
	cr_assert(ih_ping(&home));
	ih_logout(&home);
	wait_no_conns();
}

/* The target stops with moved connections still logged in: they are closed, not leaked. */
Test(iscsi_place, stop_with_moved_connections)
{
	struct ih_conn c[3];

	start_two_targets("logout_wait 0");
	for (int i = 0; i < 3; i++)
		cr_assert_eq(login_to(&c[i], IH_TARGET), 0);
	ih_stop(&T);
	for (int i = 0; i < 3; i++) {
		cr_assert(ih_closed(&c[i]));
		ih_close(&c[i]);
	}
}
