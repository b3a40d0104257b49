/* scsi/spc_pr_file.c: the APTPL state file -- format/parse round trip, atomic save and removal,
 * and one corrupt file per rule, each refused with a message naming what is wrong. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scsi/spc_pr.h"

static struct pr_state *sample(void)
{
	struct pr_state *st = calloc(1, sizeof(*st));
	struct pr_reg r = {0};

	st->generation = 41;
	st->aptpl = true;
	st->holder = -1;
	r.port.proto = SCSI_PROTO_ISCSI;
	snprintf(r.port.id, sizeof(r.port.id), "iqn.2026-01.org.example:a,i,0x230000000001");
	r.rtpi = 1;
	r.key = 0x1122334455667788ull;
	pr_add(st, &r);
	r.port.name_only = true;
	snprintf(r.port.id, sizeof(r.port.id), "iqn.2026-01.org.example:b");
	r.all_tg_pt = true;
	r.key = 2;
	pr_add(st, &r);
	memset(&r, 0, sizeof(r));
	r.port.proto = SCSI_PROTO_SRP;
	snprintf(r.port.id, sizeof(r.port.id), "0123456789abcdef0123456789abcdef");
	r.rtpi = 3;
	r.key = 3;
	pr_add(st, &r);
	st->type = PR_TYPE_EA_RO;
	st->holder = 1;
	return st;
}

static void assert_same(const struct pr_state *a, const struct pr_state *b)
{
	cr_assert_eq(a->generation, b->generation);
	cr_assert_eq(a->aptpl, b->aptpl);
	cr_assert_eq(a->type, b->type);
	cr_assert_eq(a->holder, b->holder);
	cr_assert_eq(a->nregs, b->nregs);
	for (unsigned i = 0; i < a->nregs; i++) {
		cr_assert_eq(a->regs[i].key, b->regs[i].key);
		cr_assert_eq(a->regs[i].rtpi, b->regs[i].rtpi);
		cr_assert_eq(a->regs[i].all_tg_pt, b->regs[i].all_tg_pt);
		cr_assert_eq(a->regs[i].port.proto, b->regs[i].port.proto);
		cr_assert_eq(a->regs[i].port.name_only, b->regs[i].port.name_only);
		cr_assert_str_eq(a->regs[i].port.id, b->regs[i].port.id);
	}
}

Test(pr_file, format_parse_roundtrip)
{
	struct pr_state *st = sample(), *back = calloc(1, sizeof(*back));
	char buf[4096], err[256];

	cr_assert_gt(pr_state_format(st, "disk1", buf, sizeof(buf)), 0);
	cr_assert(pr_state_parse(buf, "disk1", back, err, sizeof(err)), "%s", err);
	assert_same(st, back);
	free(st);
	free(back);
}

Test(pr_file, spc2_holder_roundtrip)
{
	struct pr_state *st = calloc(1, sizeof(*st)), *back = calloc(1, sizeof(*back));
	char buf[4096], err[256];

	st->holder = -1;
	st->spc2 = true;
	st->spc2_rtpi = 2;
	st->spc2_port.proto = SCSI_PROTO_ISCSI;
	snprintf(st->spc2_port.id, sizeof(st->spc2_port.id), "iqn.2026-01.org.example:a,i,0x1");
	cr_assert_gt(pr_state_format(st, "disk1", buf, sizeof(buf)), 0);
	cr_assert(strstr(buf, "spc2 5 2 iqn.2026-01.org.example:a,i,0x1\n"), "%s", buf);
	cr_assert(pr_state_parse(buf, "disk1", back, err, sizeof(err)), "%s", err);
	cr_assert(back->spc2);
	cr_assert_eq(back->spc2_rtpi, 2);
	cr_assert_eq(back->spc2_port.proto, SCSI_PROTO_ISCSI);
	cr_assert_str_eq(back->spc2_port.id, "iqn.2026-01.org.example:a,i,0x1");
	cr_assert_not(pr_state_parse("utgt-pr-state 1\ndevice disk1\ngeneration 0\naptpl 0\n"
				     "spc2 9 2 x\nend\n",
				     "disk1", back, err, sizeof(err)),
		      "unknown protocol");
	free(st);
	free(back);
}

Test(pr_file, odd_characters_escaped)
{
	struct pr_state *st = calloc(1, sizeof(*st)), *back = calloc(1, sizeof(*back));
	struct pr_reg r = {0};
	char buf[4096], err[256];

	st->holder = -1;
	r.port.proto = SCSI_PROTO_ISCSI;
	snprintf(r.port.id, sizeof(r.port.id), "odd name%%with\ttab");
	r.key = 9;
	pr_add(st, &r);
	cr_assert_gt(pr_state_format(st, "dev with space", buf, sizeof(buf)), 0);
	cr_assert(strstr(buf, "odd%20name%25with%09tab"), "%s", buf);
	cr_assert(pr_state_parse(buf, "dev with space", back, err, sizeof(err)), "%s", err);
	assert_same(st, back);
	free(st);
	free(back);
}

Test(pr_file, format_too_small_buffer)
{
	struct pr_state *st = sample();
	char buf[64];

	cr_assert_eq(pr_state_format(st, "disk1", buf, sizeof(buf)), -1);
	free(st);
}

static void expect_bad(const char *text, const char *why)
{
	struct pr_state *st = calloc(1, sizeof(*st));
	char err[256] = "";

	st->generation = 1234;
	cr_assert_not(pr_state_parse(text, "disk1", st, err, sizeof(err)), "accepted: %s", text);
	cr_assert(strstr(err, why), "message \"%s\" lacks \"%s\"", err, why);
	cr_assert_eq(st->generation, 1234, "state touched on error");
	free(st);
}

#define HEAD "utgt-pr-state 1\ndevice disk1\ngeneration 5\naptpl 1\n"
#define REG1 "reg 00000000000000aa 5 1 0 0 iqn.a,i,0x230000000001\n"
#define REG2 "reg 00000000000000bb 5 1 0 0 iqn.b,i,0x230000000001\n"

Test(pr_file, corrupt_files)
{
	expect_bad("", "empty");
	expect_bad("hello\n", "not a utgt persistent reservation file");
	expect_bad(HEAD REG1, "truncated");
	expect_bad(HEAD "end\nreg 1\n", "line 6: data after");
	expect_bad("utgt-pr-state 1\ndevice disk2\ngeneration 5\naptpl 1\nend\n",
		   "belongs to device");
	expect_bad("utgt-pr-state 1\ndevice disk1\naptpl 1\nend\n", "missing");
	expect_bad("utgt-pr-state 1\ndevice disk1\ngeneration -1\naptpl 1\nend\n",
		   "line 3: bad generation");
	expect_bad("utgt-pr-state 1\ndevice disk1\ngeneration 4294967296\naptpl 1\nend\n",
		   "bad generation");
	expect_bad("utgt-pr-state 1\ndevice disk1\ngeneration 5\naptpl 2\nend\n", "bad aptpl");
	expect_bad(HEAD "reg 00000000000000aa 5 1 0 0\nend\n", "line 5: bad reg line");
	expect_bad(HEAD "reg 0000000000000000 5 1 0 0 iqn.a\nend\n", "bad reservation key");
	expect_bad(HEAD "reg aa 5 1 0 0 iqn.a\nend\n", "bad reservation key");
	expect_bad(HEAD "reg 00000000000000zz 5 1 0 0 iqn.a\nend\n", "bad reservation key");
	expect_bad(HEAD "reg 00000000000000aa 6 1 0 0 iqn.a\nend\n", "bad protocol identifier");
	expect_bad(HEAD "reg 00000000000000aa 5 70000 0 0 iqn.a\nend\n", "bad port fields");
	expect_bad(HEAD "reg 00000000000000aa 5 1 2 0 iqn.a\nend\n", "bad port fields");
	expect_bad(HEAD "reg 00000000000000aa 4 1 0 1 00ff\nend\n", "name-only registration");
	expect_bad(HEAD "reg 00000000000000aa 5 1 0 0 bad%zzname\nend\n",
		   "bad initiator port name");
	expect_bad(HEAD "reg 00000000000000aa 5 1 0 0 bad%00name\nend\n",
		   "bad initiator port name");
	expect_bad(HEAD REG1 REG1 "end\n", "overlaps");
	expect_bad(HEAD REG1 "reservation 2 0\nend\n", "bad reservation line");
	expect_bad(HEAD REG1 "reservation 1 1\nend\n", "does not fit");
	expect_bad(HEAD REG1 "reservation 7 0\nend\n", "does not fit");
	expect_bad(HEAD REG1 "reservation 1 x\nend\n", "bad reservation holder");
	expect_bad(HEAD "reservation 1 0\nend\n", "without registrations");
	expect_bad(HEAD REG1 "reservation 1 0\n" REG2 "end\n", "bad reg line");
	expect_bad(HEAD REG1 "reservation 1 0\nreservation 1 0\nend\n", "bad reservation line");
	expect_bad(HEAD "frobnicate 1\nend\n", "unknown keyword \"frobnicate\"");
	expect_bad(HEAD "\nend\n", "line 5: empty line");
	expect_bad(HEAD "device disk1\nend\n", "bad device line");
}

Test(pr_file, accepts_a_good_file)
{
	struct pr_state *st = calloc(1, sizeof(*st));
	char err[256] = "";

	cr_assert(
	    pr_state_parse(HEAD REG1 REG2 "reservation 3 1\nend\n", "disk1", st, err, sizeof(err)),
	    "%s", err);
	cr_assert_eq(st->nregs, 2);
	cr_assert_eq(st->type, PR_TYPE_EA);
	cr_assert_eq(st->holder, 1);
	cr_assert_eq(st->generation, 5);
	cr_assert_eq(st->regs[1].key, 0xbb);
	free(st);
}

static char dir[64];

static void mkdir_tmp(void)
{
	snprintf(dir, sizeof(dir), "/tmp/utgt-prfile-%d-XXXXXX", (int)getpid());
	cr_assert_not_null(mkdtemp(dir));
}

static void rm_tmp(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/d.pr", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/d.pr.tmp", dir);
	unlink(p);
	rmdir(dir);
}

Test(pr_file, save_load_and_remove, .init = mkdir_tmp, .fini = rm_tmp)
{
	struct pr_state *st = sample(), *back = calloc(1, sizeof(*back));
	char path[128], tmp[140], err[256];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/d.pr", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	cr_assert_eq(pr_state_load(path, "d", back, err, sizeof(err)), -ENOENT);
	cr_assert_eq(pr_state_save(path, "d", st), 0);
	cr_assert_neq(stat(tmp, &sb), 0, "temp file left behind");
	cr_assert_eq(pr_state_load(path, "d", back, err, sizeof(err)), 0, "%s", err);
	assert_same(st, back);
	/* APTPL off: the file goes */
	st->aptpl = false;
	cr_assert_eq(pr_state_save(path, "d", st), 0);
	cr_assert_neq(stat(path, &sb), 0);
	cr_assert_eq(pr_state_save(path, "d", st), 0, "removing twice is fine");
	free(st);
	free(back);
}

Test(pr_file, load_rejects_binary_and_non_regular, .init = mkdir_tmp, .fini = rm_tmp)
{
	struct pr_state *st = calloc(1, sizeof(*st));
	char path[128], err[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/d.pr", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fwrite("utgt-pr-state 1\n\0\0garbage", 1, 26, f);
	fclose(f);
	cr_assert_eq(pr_state_load(path, "d", st, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "NUL"), "%s", err);
	unlink(path);
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_assert_eq(pr_state_load(path, "d", st, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "regular file"), "%s", err);
	rmdir(path);
	free(st);
}

Test(pr_file, save_fails_cleanly_without_directory)
{
	struct pr_state *st = sample();

	cr_assert_lt(pr_state_save("/nonexistent-utgt-dir/d.pr", "d", st), 0);
	free(st);
}
