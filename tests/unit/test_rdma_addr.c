/* Listen address parsing and formatting. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>

#include "transports/rdma/rdma.h"

Test(rdma_addr, forms)
{
	struct sockaddr_storage ss;
	char s[64];

	cr_assert_eq(rdma_parse_addr("10.0.2.15:5555", &ss), 0);
	rdma_format_addr(&ss, s, sizeof(s));
	cr_assert_str_eq(s, "10.0.2.15:5555");
	cr_assert_eq(rdma_parse_addr("[fe80::1]:4420", &ss), 0);
	cr_assert_eq(ss.ss_family, AF_INET6);
	rdma_format_addr(&ss, s, sizeof(s));
	cr_assert_str_eq(s, "[fe80::1]:4420");
	cr_assert_eq(rdma_parse_addr("5555", &ss), 0);
	rdma_format_addr(&ss, s, sizeof(s));
	cr_assert_str_eq(s, "0.0.0.0:5555");
	cr_assert_eq(rdma_parse_addr(":6000", &ss), 0);
	rdma_format_addr(&ss, s, sizeof(s));
	cr_assert_str_eq(s, "0.0.0.0:6000");
	cr_assert_eq(rdma_parse_addr("[::]:7000", &ss), 0);
}

Test(rdma_addr, rejects)
{
	struct sockaddr_storage ss;
	const char *bad[] = {"",
			     "10.0.2.15",
			     "10.0.2.15:",
			     "10.0.2.15:0",
			     "10.0.2.15:65536",
			     "10.0.2.15:-1",
			     "10.0.2:5555",
			     "fe80::1:5555",
			     "[fe80::1]5555",
			     "[fe80::1]:",
			     "[zz::1]:5",
			     "host:5555",
			     "10.0.2.15:55x"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(rdma_parse_addr(bad[i], &ss), -1, "'%s'", bad[i]);
	cr_assert_eq(rdma_parse_addr(NULL, &ss), -1);
}
