/* The admin socket's JSON writer (tgt_json.c); output checked by utgtadm's reader too. */
#include <criterion/criterion.h>

#include "target/tgt_jread.h"
#include "target/tgt_json.h"

Test(tgt_json, nested_objects_and_arrays_with_commas)
{
	struct tgt_json j;

	tgt_json_init(&j);
	tgt_json_obj(&j, NULL);
	tgt_json_bool(&j, "ok", true);
	tgt_json_arr(&j, "a");
	tgt_json_u64(&j, NULL, 1);
	tgt_json_u64(&j, NULL, 18446744073709551615ull);
	tgt_json_obj(&j, NULL);
	tgt_json_end_obj(&j);
	tgt_json_end_arr(&j);
	tgt_json_str(&j, "s", "x");
	tgt_json_str(&j, "n", NULL);
	tgt_json_arr(&j, "e");
	tgt_json_end_arr(&j);
	tgt_json_end_obj(&j);
	cr_assert_not(j.oom);
	cr_assert_str_eq(
	    j.buf,
	    "{\"ok\":true,\"a\":[1,18446744073709551615,{}],\"s\":\"x\",\"n\":null,\"e\":[]}");
	tgt_json_free(&j);
}

Test(tgt_json, strings_are_escaped)
{
	struct tgt_json j;

	tgt_json_init(&j);
	tgt_json_str(&j, NULL, "q\"b\\n\nc\x01\x7f\xc3\xa9");
	cr_assert_str_eq(j.buf, "\"q\\\"b\\\\n\\nc\\u0001\\u007f\xc3\xa9\"");
	struct tgt_jv *v = tgt_jread(j.buf, NULL);
	cr_assert_not_null(v);
	cr_assert_str_eq(v->s, "q\"b\\n\nc\x01\x7f\xc3\xa9", "round trip through the reader");
	tgt_jv_free(v);
	tgt_json_free(&j);
}

Test(tgt_json, grows_past_its_first_buffer)
{
	struct tgt_json j;
	char big[3000];

	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	tgt_json_init(&j);
	tgt_json_arr(&j, NULL);
	for (int i = 0; i < 100; i++)
		tgt_json_str(&j, NULL, big);
	tgt_json_end_arr(&j);
	cr_assert_not(j.oom);
	cr_assert_eq(j.len, 2 + 100 * 3001 + 99);
	struct tgt_jv *v = tgt_jread(j.buf, NULL);
	cr_assert_not_null(v);
	cr_assert_eq(v->n, 100);
	tgt_jv_free(v);
	tgt_json_free(&j);
}

Test(tgt_json, nesting_too_deep_fails_the_answer)
{
	struct tgt_json j;

	tgt_json_init(&j);
	for (int i = 0; i < TGT_JSON_MAXDEPTH + 2; i++)
		tgt_json_arr(&j, NULL);
	cr_assert(j.oom, "a writer bug is reported, not written past its state array");
	tgt_json_free(&j);
}
