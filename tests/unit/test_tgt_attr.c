/* Attribute lookups on the model (tgt_attr.c). */
#include <criterion/criterion.h>

#include "target/tgt_model.h"

static struct utgt_attr a[] = {
    {"listen", "127.0.0.1:3260", 3},	      {"IncomingUser", "joe 12charsecret", 4},
    {"listen", "127.0.0.2:3260", 5},	      {"enabled", "1", 6},
    {"incominguser", "fred 12charsecret", 7},
};
static const struct tgt_attrs as = {a, 5};

Test(tgt_attr, get_returns_the_last_value)
{
	cr_assert_str_eq(tgt_attr_get(&as, "listen"), "127.0.0.2:3260");
	cr_assert_str_eq(tgt_attr_get(&as, "enabled"), "1");
	cr_assert_null(tgt_attr_get(&as, "missing"));
}

Test(tgt_attr, keys_compare_case_insensitively)
{
	cr_assert_str_eq(tgt_attr_get(&as, "LISTEN"), "127.0.0.2:3260");
	cr_assert_str_eq(tgt_attr_get(&as, "IncomingUser"), "fred 12charsecret");
}

Test(tgt_attr, get_all_in_file_order)
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

Test(tgt_attr, find_gives_the_line)
{
	const struct utgt_attr *f = tgt_attr_find(&as, "listen");
	cr_assert_not_null(f);
	cr_assert_eq(f->line, 5);
}

Test(tgt_attr, null_and_empty_sets)
{
	struct tgt_attrs empty = {0};
	cr_assert_null(tgt_attr_get(&empty, "x"));
	cr_assert_null(tgt_attr_get(NULL, "x"));
	cr_assert_null(tgt_attr_find(&as, NULL));
	cr_assert_eq(tgt_attr_get_all(NULL, "x", NULL, 0), 0);
}
