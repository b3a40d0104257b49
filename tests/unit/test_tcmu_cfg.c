/* dev_config's cfgstring for utgt user backstores (tcmu_cfg.c): DEVICE name and options. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "transports/tcmu/tcmu_cfg.h"

static int parse(const char *s, struct tcmu_cfg *c, char *err)
{
	return tcmu_cfg_parse(s, c, err, 128);
}

Test(tcmu_cfg, device_alone)
{
	struct tcmu_cfg c;
	char err[128];

	cr_assert_eq(parse("ram0", &c, err), 0);
	cr_assert_str_eq(c.device, "ram0");
	cr_assert_eq(c.hang_lba, UINT64_MAX);
}

Test(tcmu_cfg, hang_lba)
{
	struct tcmu_cfg c;
	char err[128];

	cr_assert_eq(parse("ram0;hang_lba=100000", &c, err), 0, "%s", err);
	cr_assert_str_eq(c.device, "ram0");
	cr_assert_eq(c.hang_lba, 100000);
	cr_assert_eq(parse("ram0;;hang_lba=0;", &c, err), 0, "%s", err);
	cr_assert_eq(c.hang_lba, 0);
}

Test(tcmu_cfg, bad_input_is_refused_with_a_reason)
{
	struct tcmu_cfg c;
	char err[128];
	char longname[100];

	cr_assert_eq(parse("ram0;speed=9", &c, err), -1);
	cr_assert(strstr(err, "unknown option 'speed=9'"), "%s", err);
	cr_assert_eq(parse("ram0;hang_lba=", &c, err), -1);
	cr_assert_eq(parse("ram0;hang_lba=-1", &c, err), -1);
	cr_assert_eq(parse("ram0;hang_lba=12x", &c, err), -1);
	cr_assert(strstr(err, "block number"), "%s", err);
	cr_assert_eq(parse("ram0;hang_lba=99999999999999999999999", &c, err), -1);
	cr_assert_eq(parse(";hang_lba=1", &c, err), -1);
	cr_assert(strstr(err, "missing"), "%s", err);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	cr_assert_eq(parse(longname, &c, err), -1);
	cr_assert(strstr(err, "too long"), "%s", err);
}
