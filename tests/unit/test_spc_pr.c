/* scsi/spc_pr.c: which registration a nexus acts through (ports, ALL_TG_PT, iSCSI names),
 * holder bookkeeping when registrations go, and the LU's lifetime: APTPL state surviving a
 * destroy/recreate of the device, a corrupt state file reported and ignored, and a state file
 * that cannot be written failing the command without changing anything. */
#include <fcntl.h>

#include "pr_harness.h"

static struct pr_env e;

static void up_persist(void)
{
	pr_env_up(&e, "vdisk_fileio", true);
}
static void up_persist_ram(void)
{
	pr_env_up(&e, "ramdisk", true);
}
static void down(void)
{
	pr_env_down(&e);
}

#define KA 0xa0a0a0a0ull
#define KB 0xb0b0b0b0ull

static struct scsi_nexus mknx(const char *name, const char *port, uint16_t rtpi)
{
	struct scsi_nexus nx;

	memset(&nx, 0, sizeof(nx));
	nx.proto = SCSI_PROTO_ISCSI;
	snprintf(nx.initiator_name, sizeof(nx.initiator_name), "%s", name);
	snprintf(nx.initiator_port, sizeof(nx.initiator_port), "%s", port);
	nx.rel_tgt_id = rtpi;
	return nx;
}

Test(pr_identity, port_rtpi_and_wildcards)
{
	struct scsi_nexus n1 = mknx("iqn.x", "iqn.x,i,0x000000000001", 1);
	struct scsi_nexus n1b = mknx("iqn.x", "iqn.x,i,0x000000000002", 1);
	struct scsi_nexus n2 = mknx("iqn.x", "iqn.x,i,0x000000000001", 2);
	struct pr_reg r = {0};

	pr_port_of_nexus(&n1, &r.port);
	r.rtpi = 1;
	cr_assert(pr_reg_matches(&r, &n1));
	cr_assert_not(pr_reg_matches(&r, &n1b), "another ISID is another port");
	cr_assert_not(pr_reg_matches(&r, &n2), "another target port is another nexus");
	r.all_tg_pt = true;
	cr_assert(pr_reg_matches(&r, &n2));
	/* format 00: every port of the name */
	r.all_tg_pt = false;
	r.port.name_only = true;
	snprintf(r.port.id, sizeof(r.port.id), "IQN.X");
	cr_assert(pr_reg_matches(&r, &n1));
	cr_assert(pr_reg_matches(&r, &n1b));
	cr_assert_not(pr_reg_matches(&r, &n2));
	/* another protocol never matches */
	n1.proto = SCSI_PROTO_SRP;
	cr_assert_not(pr_reg_matches(&r, &n1));
}

Test(pr_identity, srp_ports_compare_digits)
{
	struct scsi_nexus nx =
	    mknx("0xFE800000000000000002C90300A1B2C3", "0xFE800000000000000002C90300A1B2C3", 1);
	struct pr_reg r = {0};

	nx.proto = SCSI_PROTO_SRP;
	r.port.proto = SCSI_PROTO_SRP;
	snprintf(r.port.id, sizeof(r.port.id), "fe800000000000000002c90300a1b2c3");
	r.rtpi = 1;
	cr_assert(pr_reg_matches(&r, &nx));
}

Test(pr_identity, overlaps)
{
	struct pr_reg a = {0}, b = {0};

	a.port.proto = b.port.proto = SCSI_PROTO_ISCSI;
	snprintf(a.port.id, sizeof(a.port.id), "iqn.x,i,0x000000000001");
	snprintf(b.port.id, sizeof(b.port.id), "iqn.x");
	b.port.name_only = true;
	a.rtpi = 1;
	b.rtpi = 1;
	cr_assert(pr_reg_overlaps(&a, &b));
	b.rtpi = 2;
	cr_assert_not(pr_reg_overlaps(&a, &b));
	b.all_tg_pt = true;
	cr_assert(pr_reg_overlaps(&a, &b));
	snprintf(b.port.id, sizeof(b.port.id), "iqn.xy");
	cr_assert_not(pr_reg_overlaps(&a, &b));
}

Test(pr_identity, remove_keeps_holder_index)
{
	struct pr_state *st = calloc(1, sizeof(*st));
	struct pr_reg r = {0};

	st->holder = -1;
	for (int i = 0; i < 4; i++) {
		snprintf(r.port.id, sizeof(r.port.id), "p%d", i);
		r.key = (uint64_t)i + 1;
		cr_assert_eq(pr_add(st, &r), i);
	}
	st->type = PR_TYPE_WE;
	st->holder = 2;
	pr_remove(st, 0);
	cr_assert_eq(st->holder, 1);
	cr_assert_eq(st->regs[st->holder].key, 3);
	cr_assert(pr_is_holder(st, 1));
	cr_assert_not(pr_is_holder(st, 0));
	pr_remove(st, 1); /* the holder goes: so does the reservation */
	cr_assert_eq(st->type, PR_TYPE_NONE);
	cr_assert_eq(st->holder, -1);
	/* all registrants: every registrant holds it until the last one leaves */
	st->type = PR_TYPE_EA_AR;
	cr_assert(pr_is_holder(st, 0) && pr_is_holder(st, 1));
	pr_remove(st, 0);
	cr_assert_eq(st->type, PR_TYPE_EA_AR);
	pr_remove(st, 0);
	cr_assert_eq(st->type, PR_TYPE_NONE);
	free(st);
}

Test(pr_identity, table_full)
{
	struct pr_state *st = calloc(1, sizeof(*st));
	struct pr_reg r = {0};

	for (int i = 0; i < PR_MAX_REGS; i++)
		cr_assert_geq(pr_add(st, &r), 0);
	cr_assert_eq(pr_add(st, &r), -1);
	free(st);
}

/* ---- APTPL across a restart ---- */

static void recreate(void)
{
	const char *handler = e.dev->bs->ops->name; /* static storage: outlives the device */

	pr_env_down_dev(&e);
	e.dev = pr_make_dev(handler, "prdev", e.dir);
	pr_env_nexuses(&e);
}

static void aptpl_survives_recreate(void)
{
	uint64_t k[4], key;
	uint8_t type, buf[512];
	unsigned n;
	uint32_t g;

	assert_good(prout_flags(&e.a, PRO_REGISTER, 0, 0, KA, 0x01));
	assert_good(prout_flags(&e.b, PRO_REGISTER, 0, 0, KB, 0x01));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	g = pr_read_keys(&e.a, k, 4, &n);

	recreate();

	cr_assert_eq(pr_read_keys(&e.a, k, 4, &n), g);
	cr_assert_eq(n, 2);
	cr_assert_eq(k[0], KA);
	cr_assert_eq(k[1], KB);
	cr_assert(pr_read_res(&e.a, &key, &type));
	cr_assert_eq(key, KA);
	cr_assert_eq(type, PR_TYPE_WE);
	/* the nexuses reconnected: a is still the holder, b still a registrant */
	memset(buf, 1, sizeof(buf));
	assert_good(write10(&e.a, 0, buf));
	assert_conflict(write10(&e.b, 0, buf));
	assert_good(prout(&e.b, PRO_REGISTER, 0, KB, KB + 1));

	/* a REGISTER with APTPL=0 stops persisting: the next restart starts empty */
	assert_good(prout_flags(&e.a, PRO_REGISTER, 0, KA, KA, 0x00));
	recreate();
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 0);
	cr_assert_not(pr_read_res(&e.a, &key, &type));
}
Test(pr_lifetime, aptpl_survives_recreate, .init = up_persist, .fini = down)
{
	aptpl_survives_recreate();
}

Test(pr_lifetime, without_aptpl_nothing_survives, .init = up_persist, .fini = down)
{
	uint64_t k[4];
	unsigned n;
	char path[128];
	struct stat sb;

	assert_good(prout(&e.a, PRO_REGISTER, 0, 0, KA));
	snprintf(path, sizeof(path), "%s/prdev.pr", e.dir);
	cr_assert_neq(stat(path, &sb), 0, "no state file without APTPL");
	recreate();
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 0);
}

Test(pr_lifetime, clear_and_preempt_are_persisted, .init = up_persist, .fini = down)
{
	uint64_t k[4], key;
	uint8_t type;
	unsigned n;

	assert_good(prout_flags(&e.a, PRO_REGISTER, 0, 0, KA, 0x01));
	assert_good(prout_flags(&e.b, PRO_REGISTER, 0, 0, KB, 0x01));
	assert_good(prout(&e.a, PRO_RESERVE, PR_TYPE_EA, KA, 0));
	assert_good(prout(&e.b, PRO_PREEMPT, PR_TYPE_WE_RO, KB, KA));
	recreate();
	pr_read_keys(&e.b, k, 4, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(k[0], KB);
	cr_assert(pr_read_res(&e.b, &key, &type));
	cr_assert_eq(type, PR_TYPE_WE_RO);
	assert_good(prout(&e.b, PRO_CLEAR, 0, KB, 0));
	recreate();
	pr_read_keys(&e.b, k, 4, &n);
	cr_assert_eq(n, 0);
}

/* Run fn with stderr captured; returns what was written (static buffer). */
static const char *capture_stderr(void (*fn)(void))
{
	static char out[1024];
	char path[] = "/tmp/utgt-pr-stderr-XXXXXX";
	int fd = mkstemp(path), saved;
	ssize_t n;

	cr_assert_geq(fd, 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, out, sizeof(out) - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	return out;
}

static void recreate_quiet(void)
{
	recreate();
}

Test(pr_lifetime, corrupt_state_file_reported_and_ignored, .init = up_persist_ram, .fini = down)
{
	char path[128];
	const char *msg;
	uint64_t k[4];
	unsigned n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/prdev.pr", e.dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("utgt-pr-state 1\ndevice prdev\ngeneration 1\naptpl 1\nreg zz\nend\n", f);
	fclose(f);
	msg = capture_stderr(recreate_quiet);
	cr_assert(strstr(msg, path), "stderr: %s", msg);
	cr_assert(strstr(msg, "ignored"), "stderr: %s", msg);
	cr_assert(strstr(msg, "line 5"), "stderr: %s", msg);
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 0);
	/* the LU works and a new APTPL registration replaces the bad file */
	assert_good(prout_flags(&e.a, PRO_REGISTER, 0, 0, KA, 0x01));
	recreate();
	pr_read_keys(&e.a, k, 4, &n);
	cr_assert_eq(n, 1);
}

static void write_fails(void)
{
	uint64_t k[4];
	unsigned n;
	uint32_t g;
	struct th_result r;
	char path[128];

	assert_good(prout_flags(&e.a, PRO_REGISTER, 0, 0, KA, 0x01));
	g = pr_read_keys(&e.a, k, 4, &n);
	/* the directory goes away underneath: the next change cannot be made durable */
	snprintf(path, sizeof(path), "%s/prdev.pr", e.dir);
	unlink(path);
	rmdir(e.dir);
	r = prout_flags(&e.b, PRO_REGISTER, 0, 0, KB, 0x01);
	th_assert_sense(r, SK_HARDWARE_ERROR, 0x44, 0x00);
	cr_assert_eq(pr_read_keys(&e.a, k, 4, &n), g, "nothing changed");
	cr_assert_eq(n, 1);
	cr_assert_eq(mkdir(e.dir, 0700), 0);
}

Test(pr_lifetime, unwritable_state_fails_command_and_changes_nothing, .init = up_persist_ram,
     .fini = down)
{
	const char *msg;

	msg = capture_stderr(write_fails);
	cr_assert(strstr(msg, "cannot write persistent reservation state"), "stderr: %s", msg);
}
