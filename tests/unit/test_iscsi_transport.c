/* The transport as utgtd drives it: attribute validation with FILE:LINE errors, start with
 * defaults and options, and a stop that asks logged-in initiators to log out (Async
 * Message) and drains before returning. */
#include "iscsi_harness.h"

#include <pthread.h>

static int nerr, nwarn;
static char last_msg[512];

static void count_emit(struct diag *d, bool error, int line, const char *msg)
{
	(void)d;
	(void)line;
	if (error)
		nerr++;
	else
		nwarn++;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

/* The loader runs the transport's validate() while it parses (errors make it return NULL). */
static void validate_text(const char *text)
{
	struct diag d = {.file = "v", .emit = count_emit};
	struct tgt_config *cfg;

	nerr = nwarn = 0;
	cfg = tgt_config_parse(text, strlen(text), "v.conf", &d);
	cr_assert_eq(cfg == NULL, nerr > 0);
	if (cfg)
		tgt_config_free(cfg);
}

Test(iscsi_transport, attribute_lists)
{
	bool listen = false, qc = false;

	cr_assert_str_eq(iscsi_transport.driver, "iscsi");
	for (const char *const *a = iscsi_transport.driver_attrs; *a; a++)
		listen |= !strcmp(*a, "listen");
	for (const char *const *a = iscsi_transport.target_attrs; *a; a++)
		qc |= !strcmp(*a, "QueuedCommands");
	cr_assert(listen && qc);
}

Test(iscsi_transport, validate_reports_bad_values)
{
	validate_text("TARGET_DRIVER iscsi {\n listen 127.0.0.1:3260\n"
		      " TARGET iqn.2026-12.org.utgt:v {\n  MaxBurstLength 65536\n }\n}\n");
	cr_assert_eq(nerr, 0, "%s", last_msg);

	validate_text("TARGET_DRIVER iscsi {\n listen nowhere:99999\n}\n");
	cr_assert_eq(nerr, 1);
	cr_assert(strstr(last_msg, "listen"));

	validate_text("TARGET_DRIVER iscsi {\n TARGET iqn.2026-12.org.utgt:v {\n"
		      "  InitialR2T perhaps\n  MaxBurstLength 12\n  IncomingUser lonely\n"
		      "  QueuedCommands 0\n  tpgt 70000\n }\n}\n");
	cr_assert_eq(nerr, 5, "%s", last_msg);

	validate_text("TARGET_DRIVER iscsi {\n IncomingUser joe short\n}\n");
	cr_assert_eq(nerr, 0);
	cr_assert_eq(nwarn, 1, "short CHAP secrets are warned about");

	validate_text("TARGET_DRIVER iscsi {\n nodelay maybe\n worker_threads 999\n}\n");
	cr_assert_eq(nerr, 2, "%s", last_msg);

	validate_text("TARGET_DRIVER iscsi {\n poll_us 1001\n}\n");
	cr_assert_eq(nerr, 1, "%s", last_msg);
	cr_assert(strstr(last_msg, "poll_us"), "%s", last_msg);
	validate_text("TARGET_DRIVER iscsi {\n poll_us 50\n}\n");
	cr_assert_eq(nerr, 0, "%s", last_msg);

	validate_text("TARGET_DRIVER iscsi {\n conn_placement lun\n}\n");
	cr_assert_eq(nerr, 1, "%s", last_msg);
	cr_assert(strstr(last_msg, "conn_placement"), "%s", last_msg);
	validate_text("TARGET_DRIVER iscsi {\n conn_placement spread\n}\n");
	cr_assert_eq(nerr, 0, "%s", last_msg);
	validate_text("TARGET_DRIVER iscsi {\n conn_placement Target\n}\n");
	cr_assert_eq(nerr, 0, "%s", last_msg);

	validate_text("TARGET_DRIVER iscsi {\n pin 2\n}\n");
	cr_assert_eq(nerr, 1, "%s", last_msg);
	cr_assert(strstr(last_msg, "pin"), "%s", last_msg);
	validate_text("TARGET_DRIVER iscsi {\n pin 1\n}\n");
	cr_assert_eq(nerr, 0, "%s", last_msg);
}

Test(iscsi_transport, poll_us_reaches_every_worker)
{
	struct ih_target t;

	ih_start(&t, "worker_threads 2\n poll_us 25", NULL);
	cr_assert_eq(iscsit_global->nworkers, 2);
	for (unsigned i = 0; i < iscsit_global->nworkers; i++)
		cr_assert_eq(iscsit_global->workers[i].ut.poll_us, 25, "worker %u", i);
	ih_stop(&t);
}

static void nothing(void *arg)
{
	(void)arg;
}

/* A worker binds itself when its thread starts: once it has run a call, that is done. */
static struct ut_thread *started_worker(unsigned i)
{
	struct ut_thread *ut = &iscsit_global->workers[i].ut;

	ut_thread_call_sync(ut, nothing, NULL);
	return ut;
}

/* By default the scheduler places the workers, so none is stuck on a CPU its neighbours
 * crowd (docs/performance.md, "two jobs at once"); `pin 1` binds worker i to CPU i. */
Test(iscsi_transport, workers_float_unless_pinned)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t mine, theirs;
	struct ih_target t;

	cr_assert_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
	ih_start(&t, "worker_threads 2", NULL);
	for (unsigned i = 0; i < iscsit_global->nworkers; i++) {
		struct ut_thread *ut = started_worker(i);

		cr_assert_eq(ut->cpu, -1, "worker %u is pinned by default", i);
		cr_assert_eq(pthread_getaffinity_np(ut->thr, sizeof(theirs), &theirs), 0);
		cr_assert(CPU_EQUAL(&mine, &theirs), "worker %u: %d CPUs allowed, the process %d", i,
			  CPU_COUNT(&theirs), CPU_COUNT(&mine));
	}
	ih_stop(&t);

	ih_start(&t, "worker_threads 2\n pin 1", NULL);
	for (unsigned i = 0; i < iscsit_global->nworkers; i++) {
		struct ut_thread *ut = started_worker(i);
		int cpu = (int)(i % (unsigned)ncpu);

		if (!CPU_ISSET(cpu, &mine))
			continue; /* run under a narrower mask: the bind failed and the worker floats */
		cr_assert_eq(ut->cpu, cpu, "worker %u", i);
		cr_assert_eq(pthread_getaffinity_np(ut->thr, sizeof(theirs), &theirs), 0);
		cr_assert(CPU_COUNT(&theirs) == 1 && CPU_ISSET(cpu, &theirs),
			  "worker %u: %d CPUs allowed", i, CPU_COUNT(&theirs));
	}
	ih_stop(&t);
}

Test(iscsi_transport, start_twice_fails)
{
	struct ih_target t;
	char err[256];

	ih_start(&t, NULL, NULL);
	cr_assert_neq(
	    iscsi_transport.start(t.cfg, tgt_config_driver(t.cfg, "iscsi"), err, sizeof(err)), 0);
	cr_assert(strstr(err, "already"));
	ih_stop(&t);
	cr_assert_null(iscsit_global);
}

Test(iscsi_transport, listen_failure_is_reported)
{
	struct diag d = {.file = "u", .emit = count_emit};
	const char *text = "TARGET_DRIVER iscsi {\n listen 192.0.2.1:3260\n}\n";
	struct tgt_config *cfg = tgt_config_parse(text, strlen(text), "u", &d);
	char err[256] = "";

	cr_assert_neq(iscsi_transport.start(cfg, tgt_config_driver(cfg, "iscsi"), err, sizeof(err)),
		      0);
	cr_assert(strstr(err, "192.0.2.1"), "%s", err);
	cr_assert_null(iscsit_global);
	tgt_config_free(cfg);
}

static void *stopper(void *arg)
{
	(void)arg;
	iscsi_transport.stop();
	return NULL;
}

Test(iscsi_transport, stop_asks_for_logout_and_drains, .timeout = 30)
{
	struct ih_target t;
	struct ih_conn c;
	uint8_t rh[48];
	pthread_t th;

	ih_start(&t, "logout_wait 5", NULL);
	cr_assert_eq(ih_login_normal(&c, t.port), 0);
	pthread_create(&th, NULL, stopper, NULL);
	cr_assert_eq(ih_recv(&c, rh, NULL, NULL), 0);
	cr_assert_eq(bhs_opcode(rh), ISCSI_OP_ASYNC);
	cr_assert_eq(rh[36], ISCSI_ASYNC_LOGOUT_REQ);
	cr_assert_eq(iscsi_get16(rh + 42), 5, "Parameter3: seconds to log out in");
	ih_logout(&c);
	pthread_join(th, NULL);
	cr_assert_null(iscsit_global);
	tgt_config_free(t.cfg);
}

Test(iscsi_transport, stop_closes_who_does_not_log_out, .timeout = 30)
{
	struct ih_target t;
	struct ih_conn c;

	ih_start(&t, "logout_wait 1", NULL);
	cr_assert_eq(ih_login_normal(&c, t.port), 0);
	iscsi_transport.stop();
	cr_assert(ih_closed(&c));
	ih_close(&c);
	tgt_config_free(t.cfg);
}
