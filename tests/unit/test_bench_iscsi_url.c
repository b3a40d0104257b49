/* utgt-bench iSCSI URL parsing. */
#include <criterion/criterion.h>
#include <string.h>

#include "initiator/iscsi_url.h"

Test(bench_iscsi_url, plain)
{
	struct ub_iscsi_url u;
	char err[128];

	cr_assert(ub_iscsi_url_parse("iscsi://127.0.0.1:3261/iqn.2026-12.org.utgt:demo/0", &u, err,
				     sizeof(err)),
		  "%s", err);
	cr_assert_str_eq(u.host, "127.0.0.1");
	cr_assert_eq(u.port, 3261);
	cr_assert_str_eq(u.portal, "127.0.0.1:3261");
	cr_assert_str_eq(u.target, "iqn.2026-12.org.utgt:demo");
	cr_assert_eq(u.lun, 0);
	cr_assert_str_eq(u.user, "");
}

Test(bench_iscsi_url, default_port_chap_and_escapes)
{
	struct ub_iscsi_url u;
	char err[128];

	cr_assert(ub_iscsi_url_parse("iscsi://joe%s3cr%2Ft@host.example/iqn.x%3Ay/17", &u, err,
				     sizeof(err)),
		  "%s", err);
	cr_assert_str_eq(u.user, "joe");
	cr_assert_str_eq(u.secret, "s3cr%2Ft", "the secret is taken literally");
	cr_assert_eq(u.port, 3260);
	cr_assert_str_eq(u.target, "iqn.x:y");
	cr_assert_eq(u.lun, 17);
}

Test(bench_iscsi_url, ipv6)
{
	struct ub_iscsi_url u;
	char err[128];

	cr_assert(ub_iscsi_url_parse("iscsi://[::1]:3262/iqn.a/3", &u, err, sizeof(err)), "%s",
		  err);
	cr_assert_str_eq(u.host, "::1");
	cr_assert_eq(u.port, 3262);
	cr_assert_str_eq(u.portal, "[::1]:3262");
}

Test(bench_iscsi_url, malformed)
{
	static const char *const bad[] = {
	    "http://h/iqn/0",	     "iscsi://h/iqn",	    "iscsi://h/iqn/",
	    "iscsi://h/iqn/x",	     "iscsi://h/iqn/16384", "iscsi://h:0/iqn/0",
	    "iscsi://h:99999/iqn/0", "iscsi://h:/iqn/0",    "iscsi://h:12a/iqn/0",
	    "iscsi:///iqn/0",	     "iscsi://h//0",	    "iscsi://%pw@h/iqn/0",
	    "iscsi://[::1/iqn/0",    "iscsi://h/iqn%zz/0",  "iscsi://h/iqn/0x",
	    "iscsi://h/a/b/0",
	};
	struct ub_iscsi_url u;
	char err[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_assert_not(ub_iscsi_url_parse(bad[i], &u, err, sizeof(err)), "%s accepted",
			      bad[i]);
		cr_assert_neq(strlen(err), 0, "%s: no reason given", bad[i]);
	}
}

Test(bench_iscsi_url, redact_hides_only_the_secret)
{
	char out[256];

	ub_iscsi_url_redact("iscsi://joe%secret@h:1/iqn.a/0", out, sizeof(out));
	cr_assert_str_eq(out, "iscsi://joe%***@h:1/iqn.a/0");
	ub_iscsi_url_redact("iscsi://h:1/iqn.a/0", out, sizeof(out));
	cr_assert_str_eq(out, "iscsi://h:1/iqn.a/0");
	ub_iscsi_url_redact("/dev/sdb", out, sizeof(out));
	cr_assert_str_eq(out, "/dev/sdb");
	cr_assert(ub_is_iscsi_url("iscsi://x"));
	cr_assert_not(ub_is_iscsi_url("/dev/sdb"));
}
