/* Portal addresses: parsing `listen` values and formatting socket addresses. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

static void parse_ok(const char *s, int fam, const char *want)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char buf[80];

	cr_assert_eq(iscsit_parse_portal(s, &ss, &len), 0, "%s", s);
	cr_assert_eq(ss.ss_family, fam, "%s", s);
	iscsit_sockaddr_str(&ss, buf, sizeof(buf), true);
	cr_assert_str_eq(buf, want);
}

Test(iscsi_portal, parse)
{
	struct sockaddr_storage ss;
	socklen_t len;

	parse_ok("127.0.0.1:3260", AF_INET, "127.0.0.1:3260");
	parse_ok("10.1.2.3", AF_INET, "10.1.2.3:3260");
	parse_ok("0.0.0.0:13260", AF_INET, "0.0.0.0:13260");
	parse_ok("*:3261", AF_INET, "0.0.0.0:3261");
	parse_ok("[::]:3260", AF_INET6, "[::]:3260");
	parse_ok("[fe80::1]:860", AF_INET6, "[fe80::1]:860");
	parse_ok("::1", AF_INET6, "[::1]:3260");
	parse_ok("[::1]", AF_INET6, "[::1]:3260");
	parse_ok("127.0.0.1:0", AF_INET, "127.0.0.1:0");
	cr_assert_neq(iscsit_parse_portal("", &ss, &len), 0);
	cr_assert_neq(iscsit_parse_portal("host.example:3260", &ss, &len), 0, "no names");
	cr_assert_neq(iscsit_parse_portal("1.2.3.4:", &ss, &len), 0);
}

Test(iscsi_portal, parse_rejects)
{
	struct sockaddr_storage ss;
	socklen_t len;

	cr_assert_neq(iscsit_parse_portal("1.2.3.4:65536", &ss, &len), 0);
	cr_assert_neq(iscsit_parse_portal("1.2.3.4:12x", &ss, &len), 0);
	cr_assert_neq(iscsit_parse_portal("[::1", &ss, &len), 0);
	cr_assert_neq(iscsit_parse_portal("[::1]x", &ss, &len), 0);
	cr_assert_neq(iscsit_parse_portal("[]:3260", &ss, &len), 0);
	cr_assert_neq(iscsit_parse_portal("300.1.1.1", &ss, &len), 0);
}

Test(iscsi_portal, v4_mapped_prints_as_v4)
{
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(3260)};
	char buf[80];

	inet_pton(AF_INET6, "::ffff:192.168.1.9", &a.sin6_addr);
	iscsit_sockaddr_str((struct sockaddr_storage *)&a, buf, sizeof(buf), true);
	cr_assert_str_eq(buf, "192.168.1.9:3260");
	iscsit_sockaddr_str((struct sockaddr_storage *)&a, buf, sizeof(buf), false);
	cr_assert_str_eq(buf, "192.168.1.9");
}
