/* utgt-bench JSON writer. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_json_check.h"
#include "initiator/json.h"

Test(bench_json, nested_structures_are_valid_json)
{
	char *out = NULL;
	size_t len;
	FILE *f = open_memstream(&out, &len);
	struct ub_json j;

	ub_json_init(&j, f);
	ub_json_obj(&j, NULL);
	ub_json_str(&j, "name", "a \"quoted\"\\ name\n\twith\x01 control");
	ub_json_u64(&j, "big", UINT64_MAX);
	ub_json_i64(&j, "neg", -5);
	ub_json_dbl(&j, "pi", 3.25);
	ub_json_dbl(&j, "nan", 0.0 / 0.0);
	ub_json_bool(&j, "yes", true);
	ub_json_arr(&j, "empty");
	ub_json_end_arr(&j);
	ub_json_obj(&j, "emptyobj");
	ub_json_end_obj(&j);
	ub_json_arr(&j, "list");
	for (int i = 0; i < 3; i++) {
		ub_json_obj(&j, NULL);
		ub_json_u64(&j, "i", (uint64_t)i);
		ub_json_end_obj(&j);
	}
	ub_json_end_arr(&j);
	ub_json_end_obj(&j);
	fclose(f);
	cr_assert(json_valid(out), "invalid JSON:\n%s", out);
	cr_assert(strstr(out, "\"name\" : \"a \\\"quoted\\\"\\\\ name\\n\\twith\\u0001 control\""),
		  "%s", out);
	cr_assert(strstr(out, "\"big\" : 18446744073709551615"), "%s", out);
	cr_assert(strstr(out, "\"pi\" : 3.250000"), "%s", out);
	cr_assert(strstr(out, "\"nan\" : 0"), "non-finite numbers stay valid JSON");
	free(out);
}

Test(bench_json, checker_rejects_garbage)
{
	cr_assert_not(json_valid("{\"a\" : 1,}"));
	cr_assert_not(json_valid("{\"a\" 1}"));
	cr_assert_not(json_valid("[1 2]"));
	cr_assert_not(json_valid("{} x"));
	cr_assert(json_valid("{\"a\" : [1, -2.5e3, true, null, \"x\"]}"));
}
