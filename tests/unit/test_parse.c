/* Strict number and boolean parsing (common/parse.c). */
#include <criterion/criterion.h>

#include "common/parse.h"

#include <ctype.h>

Test(parse, numbers_and_booleans_strictly)
{
	uint64_t v;
	bool b;

	cr_assert(parse_u64("0x10", &v) && v == 16);
	cr_assert_not(parse_u64("-1", &v));
	cr_assert_not(parse_u64("18446744073709551616", &v), "overflow");
	cr_assert_not(parse_u64("12 ", &v));
	cr_assert(parse_size("4K", &v) && v == 4096);
	cr_assert_not(parse_size("17179869184T", &v), "overflow with the suffix");
	cr_assert(parse_bool("On", &b) && b);
	cr_assert(parse_bool("n", &b) && !b);
	cr_assert_not(parse_bool("maybe", &b));
}

Test(parse, hex_digits_of_either_case_and_nothing_else)
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < 16; i++) {
		cr_assert_eq(parse_hex_digit(digits[i]), i);
		cr_assert_eq(parse_hex_digit(toupper((unsigned char)digits[i])), i);
	}
	for (int c = -1; c < 256; c++)
		if (!isxdigit(c))
			cr_assert_eq(parse_hex_digit(c), -1, "%d", c);
}
