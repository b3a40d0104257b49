/* utgtadm's JSON reader (tgt_jread.c). */
#include <criterion/criterion.h>

#include "target/tgt_jread.h"

Test(tgt_jread, objects_arrays_and_scalars)
{
	struct tgt_jv *v = tgt_jread(" {\"ok\":true,\"n\":123,\"neg\":-1.5e3,\"s\":\"a\\u00e9\\/"
				     "\",\"z\":null,\"a\":[1,[],{}]} ",
				     NULL);

	cr_assert_not_null(v);
	cr_assert_eq(v->type, JV_OBJ);
	cr_assert(tgt_jv_bool(v, "ok", false));
	cr_assert_eq(tgt_jv_u64(v, "n", 0), 123);
	cr_assert_eq(tgt_jv_u64(v, "neg", 7), 7, "a negative number is no u64");
	cr_assert_str_eq(tgt_jv_str(v, "s", NULL), "a\xc3\xa9/");
	cr_assert_eq(tgt_jv_get(v, "z")->type, JV_NULL);
	cr_assert_eq(tgt_jv_get(v, "a")->n, 3);
	cr_assert_null(tgt_jv_get(v, "missing"));
	cr_assert_str_eq(tgt_jv_str(v, "n", "dflt"), "dflt", "a number is no string");
	tgt_jv_free(v);
}

Test(tgt_jread, malformed_input_is_refused_with_an_offset)
{
	static const char *bad[] = {
	    "",	  "{", "{\"a\"}", "{\"a\":1,}", "[1 2]",	 "tru",	  "\"\x01\"", "01",
	    "1.", "-", "\"\\x\"", "{} {}",	"[\"\\u12g4\"]", "{1:2}", "\"open",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t off = 99999;
		cr_assert_null(tgt_jread(bad[i], &off), "accepted: %s", bad[i]);
		cr_assert_leq(off, strlen(bad[i]), "%s: offset %zu", bad[i], off);
	}
}

Test(tgt_jread, depth_is_limited)
{
	char deep[200];

	memset(deep, '[', 100);
	memset(deep + 100, ']', 99);
	deep[199] = '\0';
	cr_assert_null(tgt_jread(deep, NULL));
}
