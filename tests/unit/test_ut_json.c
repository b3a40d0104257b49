/* The admin socket's JSON writer (ut_json.c); output checked by utgtadm's reader too. */
#include <criterion/criterion.h>

#include "target/tgt_jread.h"
#include "common/ut_json.h"

Test(ut_json, nested_objects_and_arrays_with_commas)
{
	struct ut_json j;

	ut_json_init(&j);
	ut_json_obj(&j, NULL);
	ut_json_bool(&j, "ok", true);
	ut_json_arr(&j, "a");
	ut_json_u64(&j, NULL, 1);
	ut_json_u64(&j, NULL, 18446744073709551615ull);
	ut_json_obj(&j, NULL);
	ut_json_end_obj(&j);
	ut_json_end_arr(&j);
	ut_json_str(&j, "s", "x");
	ut_json_str(&j, "n", NULL);
	ut_json_arr(&j, "e");
	ut_json_end_arr(&j);
	ut_json_end_obj(&j);
	cr_assert_not(j.oom);
	cr_assert_str_eq(
	    j.buf,
	    "{\"ok\":true,\"a\":[1,18446744073709551615,{}],\"s\":\"x\",\"n\":null,\"e\":[]}");
	ut_json_free(&j);
}

Test(ut_json, strings_are_escaped)
{
	struct ut_json j;

	ut_json_init(&j);
	ut_json_str(&j, NULL, "q\"b\\n\nc\x01\x7f\xc3\xa9");
	cr_assert_str_eq(j.buf, "\"q\\\"b\\\\n\\nc\\u0001\\u007f\xc3\xa9\"");
	struct tgt_jv *v = tgt_jread(j.buf, NULL);
	cr_assert_not_null(v);
	cr_assert_str_eq(v->s, "q\"b\\n\nc\x01\x7f\xc3\xa9", "round trip through the reader");
	tgt_jv_free(v);
	ut_json_free(&j);
}

Test(ut_json, grows_past_its_first_buffer)
{
	struct ut_json j;
	char big[3000];

	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ut_json_init(&j);
	ut_json_arr(&j, NULL);
	for (int i = 0; i < 100; i++)
		ut_json_str(&j, NULL, big);
	ut_json_end_arr(&j);
	cr_assert_not(j.oom);
	cr_assert_eq(j.len, 2 + 100 * 3001 + 99);
	struct tgt_jv *v = tgt_jread(j.buf, NULL);
	cr_assert_not_null(v);
	cr_assert_eq(v->n, 100);
	tgt_jv_free(v);
	ut_json_free(&j);
}

Test(ut_json, nesting_too_deep_fails_the_answer)
{
	struct ut_json j;

	ut_json_init(&j);
	for (int i = 0; i < UT_JSON_MAXDEPTH + 2; i++)
		ut_json_arr(&j, NULL);
	cr_assert(j.oom, "a writer bug is reported, not written past its state array");
	ut_json_free(&j);
}
