/* Lookups on the model (tgt_lookup.c): attributes by key, objects by name. */
#include <criterion/criterion.h>

#include "transports/model/tgt_model.h"

static struct utgt_attr a[] = {
    {"listen", "127.0.0.1:3260", 3},	      {"IncomingUser", "joe 12charsecret", 4},
    {"listen", "127.0.0.2:3260", 5},	      {"enabled", "1", 6},
    {"incominguser", "fred 12charsecret", 7},
};
static const struct tgt_attrs as = {a, 5};

Test(tgt_lookup, get_returns_the_last_value)
{
	cr_assert_str_eq(tgt_attr_get(&as, "listen"), "127.0.0.2:3260");
	cr_assert_str_eq(tgt_attr_get(&as, "enabled"), "1");
	cr_assert_null(tgt_attr_get(&as, "missing"));
}

Test(tgt_lookup, keys_compare_case_insensitively)
{
	cr_assert_str_eq(tgt_attr_get(&as, "LISTEN"), "127.0.0.2:3260");
	cr_assert_str_eq(tgt_attr_get(&as, "IncomingUser"), "fred 12charsecret");
}

Test(tgt_lookup, get_all_in_file_order)
{
	const char *v[4];
	cr_assert_eq(tgt_attr_get_all(&as, "incomingUSER", v, 4), 2);
	cr_assert_str_eq(v[0], "joe 12charsecret");
	cr_assert_str_eq(v[1], "fred 12charsecret");
	cr_assert_eq(tgt_attr_get_all(&as, "listen", v, 1), 2, "the count is the total");
	cr_assert_str_eq(v[0], "127.0.0.1:3260");
	cr_assert_eq(tgt_attr_get_all(&as, "listen", NULL, 0), 2);
	cr_assert_eq(tgt_attr_get_all(&as, "none", v, 4), 0);
}

Test(tgt_lookup, find_gives_the_line)
{
	const struct utgt_attr *f = tgt_attr_find(&as, "listen");
	cr_assert_not_null(f);
	cr_assert_eq(f->line, 5);
}

Test(tgt_lookup, null_and_empty_sets)
{
	struct tgt_attrs empty = {0};
	cr_assert_null(tgt_attr_get(&empty, "x"));
	cr_assert_null(tgt_attr_get(NULL, "x"));
	cr_assert_null(tgt_attr_find(&as, NULL));
	cr_assert_eq(tgt_attr_get_all(NULL, "x", NULL, 0), 0);
}

Test(tgt_lookup, objects_by_exact_name)
{
	struct tgt_device devs[2] = {{.name = "disk0"}, {.name = "disk1"}};
	struct tgt_target tgts[1] = {{.name = "iqn.2026-01.x:t"}};
	struct tgt_driver drvs[2] = {{.name = "iscsi", .targets = tgts, .ntargets = 1},
				     {.name = "ib_srpt"}};
	struct tgt_config cfg = {.devices = devs, .ndevices = 2, .drivers = drvs, .ndrivers = 2};

	cr_assert_eq(tgt_config_device(&cfg, "disk1"), &devs[1]);
	cr_assert_null(tgt_config_device(&cfg, "DISK1"), "device names are exact");
	cr_assert_eq(tgt_config_driver(&cfg, "ib_srpt"), &drvs[1]);
	cr_assert_null(tgt_config_driver(&cfg, "iser"));
	cr_assert_eq(tgt_driver_target(&drvs[0], "iqn.2026-01.x:t"), &tgts[0]);
	cr_assert_null(tgt_driver_target(&drvs[1], "iqn.2026-01.x:t"));
	cr_assert_null(tgt_config_driver(NULL, "iscsi"));
	cr_assert_null(tgt_driver_target(&drvs[0], NULL));
}
