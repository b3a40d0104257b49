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

Test(bench_iscsi_url, iser_scheme)
{
	struct ub_iscsi_url u;
	char err[128];

	cr_assert(ub_iscsi_url_parse("iser://10.0.2.15/iqn.2026-12.org.utgt:iser/0", &u, err,
				     sizeof(err)),
		  "%s", err);
	cr_assert(u.iser);
	cr_assert_str_eq(u.host, "10.0.2.15");
	cr_assert_eq(u.port, 3260, "RDMA CM port 3260 by default, as over TCP");
	cr_assert_str_eq(u.portal, "10.0.2.15:3260");
	cr_assert_str_eq(u.target, "iqn.2026-12.org.utgt:iser");
	cr_assert_eq(u.lun, 0);
	cr_assert(ub_iscsi_url_parse("iscsi://10.0.2.15/iqn.a/0", &u, err, sizeof(err)), "%s", err);
	cr_assert_not(u.iser, "iscsi:// is TCP");
}

Test(bench_iscsi_url, iser_chap_port_ipv6_escapes)
{
	struct ub_iscsi_url u;
	char err[128];

	cr_assert(ub_iscsi_url_parse("iser://user1%secret123456@[fe80::1]:3262/iqn.x%3Ay/7", &u,
				     err, sizeof(err)),
		  "%s", err);
	cr_assert(u.iser);
	cr_assert_str_eq(u.user, "user1");
	cr_assert_str_eq(u.secret, "secret123456");
	cr_assert_str_eq(u.host, "fe80::1");
	cr_assert_eq(u.port, 3262);
	cr_assert_str_eq(u.portal, "[fe80::1]:3262");
	cr_assert_str_eq(u.target, "iqn.x:y");
	cr_assert_eq(u.lun, 7);
}

Test(bench_iscsi_url, iser_malformed)
{
	static const char *const bad[] = {
	    "iser:/h/iqn/0", "iser://h/iqn",	   "iser://h:0/iqn/0", "iser:///iqn/0",
	    "iser://h//0",   "iser://h/iqn/-1",	   "ISER://h/iqn/0",   "iserx://h/iqn/0",
	    "iser//h/iqn/0", "iser://%pw@h/iqn/0", "iser://",	       "iser://h:65536/iqn/0",
	};
	struct ub_iscsi_url u;
	char err[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_assert_not(ub_iscsi_url_parse(bad[i], &u, err, sizeof(err)), "%s accepted",
			      bad[i]);
		cr_assert_neq(strlen(err), 0, "%s: no reason given", bad[i]);
	}
	ub_iscsi_url_parse("http://h/iqn/0", &u, err, sizeof(err));
	cr_assert(strstr(err, "iser://"), "the error names both schemes: %s", err);
}

Test(bench_iscsi_url, iser_scheme_tests_and_redaction)
{
	char out[256];

	cr_assert(ub_is_iscsi_url("iser://h/iqn.a/0"), "iser:// goes to the iSCSI engine");
	cr_assert(ub_is_iser_url("iser://h/iqn.a/0"));
	cr_assert_not(ub_is_iser_url("iscsi://h/iqn.a/0"));
	cr_assert_not(ub_is_iser_url("/dev/sdb"));
	cr_assert_not(ub_is_iser_url(NULL));
	ub_iscsi_url_redact("iser://joe%secret@h:1/iqn.a/0", out, sizeof(out));
	cr_assert_str_eq(out, "iser://joe%***@h:1/iqn.a/0");
	ub_iscsi_url_redact("iser://h/iqn.a/0", out, sizeof(out));
	cr_assert_str_eq(out, "iser://h/iqn.a/0");
}
