/* utgt-bench engine selection and the synchronous setup helpers. */
#include <criterion/criterion.h>
#include <string.h>

#include "initiator/engine.h"

Test(bench_engine, iscsi_urls_always_use_the_iscsi_engine)
{
	char note[256], err[256];

	cr_assert_eq(
	    ub_engine_resolve("", "iscsi://h/iqn.a/0", note, sizeof(note), err, sizeof(err)),
	    &ub_engine_iscsi);
	cr_assert_str_eq(note, "");
	cr_assert_eq(
	    ub_engine_resolve("libaio", "iscsi://h/iqn.a/0", note, sizeof(note), err, sizeof(err)),
	    &ub_engine_iscsi, "the seed template's libaio on an iSCSI target");
	cr_assert(strstr(note, "libaio"), "%s", note);
}

Test(bench_engine, kernel_engines_map_to_block)
{
	char note[256], err[256];

	cr_assert_eq(ub_engine_resolve("libaio", "/dev/sdb", note, sizeof(note), err, sizeof(err)),
		     &ub_engine_block);
	cr_assert(strstr(note, "io_uring"), "%s", note);
	cr_assert_eq(
	    ub_engine_resolve("io_uring", "/dev/sdb", note, sizeof(note), err, sizeof(err)),
	    &ub_engine_block);
	cr_assert_str_eq(note, "");
	cr_assert_eq(ub_engine_resolve("", "/tmp/x", note, sizeof(note), err, sizeof(err)),
		     &ub_engine_block);
}

Test(bench_engine, unknown_engines_are_refused_with_a_hint)
{
	char note[256], err[256];

	cr_assert_null(ub_engine_resolve("rbd", "/dev/rbd2", note, sizeof(note), err, sizeof(err)));
	cr_assert(strstr(err, "rbd") && strstr(err, "--ioengine"), "%s", err);
	cr_assert_null(
	    ub_engine_resolve("iscsi", "/dev/sdb", note, sizeof(note), err, sizeof(err)));
	cr_assert(strstr(err, "iscsi://"), "%s", err);
}

Test(bench_engine, clock_is_monotonic)
{
	uint64_t a = ub_now_ns(), b = ub_now_ns();

	cr_assert_geq(b, a);
}
