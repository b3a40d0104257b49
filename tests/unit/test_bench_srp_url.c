/* utgt-bench SRP target strings: the add_target line utgtd prints, plus the tester's keys. */
#include <criterion/criterion.h>

#include "initiator/srp_url.h"

Test(bench_srp_url, show_srp_login_line)
{
	struct ub_srp_url u;
	char err[256];

	cr_assert(ub_srp_url_parse(
		      "srp:id_ext=505400fffe123456,ioc_guid=0x505400fffe123457,dest=10.0.2.15:5555",
		      &u, err, sizeof(err)),
		  "%s", err);
	cr_assert_eq(u.id_ext, 0x505400fffe123456ull);
	cr_assert_eq(u.ioc_guid, 0x505400fffe123457ull);
	cr_assert_str_eq(u.dest_str, "10.0.2.15:5555");
	cr_assert_eq(u.initiator_ext, 0);
	cr_assert_eq(u.lun, 0);
	cr_assert_not(u.multichannel);
	cr_assert(u.imm);
	cr_assert_eq(u.queue_size, 64);
}

Test(bench_srp_url, tester_keys)
{
	struct ub_srp_url u;
	char err[256];

	cr_assert(ub_srp_url_parse("srp:id_ext=1,ioc_guid=2,dest=[::1]:7000,initiator_ext=a,"
				   "lun=3,multichannel=1,imm=0,queue_size=16",
				   &u, err, sizeof(err)),
		  "%s", err);
	cr_assert_eq(u.initiator_ext, 0xa);
	cr_assert_eq(u.lun, 3);
	cr_assert(u.multichannel);
	cr_assert_not(u.imm);
	cr_assert_eq(u.queue_size, 16);
}

Test(bench_srp_url, semicolons_for_path_lists)
{
	struct ub_srp_url u;
	char err[256];

	cr_assert(ub_srp_url_parse("srp:id_ext=1;ioc_guid=2;dest=10.0.2.15:5555;multichannel=1", &u,
				   err, sizeof(err)),
		  "%s", err);
	cr_assert(u.multichannel);
	cr_assert_str_eq(u.dest_str, "10.0.2.15:5555");
}

Test(bench_srp_url, errors)
{
	const char *bad[] = {
	    "iscsi://x/y/0",
	    "srp:id_ext=1,ioc_guid=2",
	    "srp:id_ext=1,dest=10.0.0.1:5",
	    "srp:id_ext=xyz,ioc_guid=2,dest=10.0.0.1:5",
	    "srp:id_ext=1,ioc_guid=2,dest=10.0.0.1",
	    "srp:id_ext=1,ioc_guid=2,dest=5555",
	    "srp:id_ext=1,ioc_guid=2,dest=10.0.0.1:5,lun=x",
	    "srp:id_ext=1,ioc_guid=2,dest=10.0.0.1:5,queue_size=0",
	    "srp:id_ext=1,ioc_guid=2,dest=10.0.0.1:5,imm=2",
	    "srp:id_ext=1,ioc_guid=2,dest=10.0.0.1:5,color=red",
	    "srp:id_ext=1,ioc_guid=2,dest=10.0.0.1:5,novalue",
	};
	struct ub_srp_url u;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_assert_not(ub_srp_url_parse(bad[i], &u, err, sizeof(err)), "'%s'", bad[i]);
		cr_assert_neq(err[0], '\0', "no reason for '%s'", bad[i]);
	}
	cr_assert(ub_is_srp_url("srp:x"));
	cr_assert_not(ub_is_srp_url("/dev/sda"));
}
