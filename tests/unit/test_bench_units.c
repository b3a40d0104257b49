/* utgt-bench units: fio size/time parsing and fio 3's number printing. */
#include <criterion/criterion.h>
#include <string.h>

#include "initiator/units.h"

Test(bench_units, sizes_as_fio_reads_them)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {{"512", 512},	    {"4k", 4096},     {"4K", 4096},	  {"4KiB", 4096},
		  {"4kb", 4096},    {"4M", 4u << 20}, {"1g", 1ull << 30}, {"2t", 2ull << 40},
		  {"0x1000", 4096}, {"100b", 100},    {"1p", 1ull << 50}};
	uint64_t v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cr_assert(ub_parse_size(ok[i].s, &v), "%s", ok[i].s);
		cr_assert_eq(v, ok[i].v, "%s -> %llu", ok[i].s, (unsigned long long)v);
	}
}

Test(bench_units, bad_sizes_rejected)
{
	static const char *const bad[] = {"",
					  "k",
					  "4x",
					  "-4k",
					  "4kk",
					  " 4k",
					  "4 k",
					  "4kbx",
					  "99999999999999999999",
					  "20000000000000000000k"};
	uint64_t v;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_not(ub_parse_size(bad[i], &v), "'%s' accepted", bad[i]);
	cr_assert_not(ub_parse_size(NULL, &v));
}

/* Plain counts (iodepth, numjobs, ...) read as the target's configuration reads integers. */
Test(bench_units, plain_integers)
{
	static const char *const bad[] = {
	    "", "-1", "+1", " 1", "1 ", "1k", "x", "0x", "18446744073709551616"};
	uint64_t v;

	cr_assert(ub_parse_uint("32", &v));
	cr_assert_eq(v, 32);
	cr_assert(ub_parse_uint("0x20", &v));
	cr_assert_eq(v, 32);
	cr_assert(ub_parse_uint("18446744073709551615", &v));
	cr_assert_eq(v, UINT64_MAX);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_not(ub_parse_uint(bad[i], &v), "'%s' accepted", bad[i]);
	cr_assert_not(ub_parse_uint(NULL, &v));
}

Test(bench_units, times)
{
	uint64_t ns;

	cr_assert(ub_parse_time("60", UB_NSEC_PER_SEC, &ns));
	cr_assert_eq(ns, 60 * UB_NSEC_PER_SEC);
	cr_assert(ub_parse_time("500ms", UB_NSEC_PER_SEC, &ns));
	cr_assert_eq(ns, 500 * UB_NSEC_PER_MSEC);
	cr_assert(ub_parse_time("2m", UB_NSEC_PER_SEC, &ns));
	cr_assert_eq(ns, 120 * UB_NSEC_PER_SEC);
	cr_assert(ub_parse_time("1h", UB_NSEC_PER_SEC, &ns));
	cr_assert_eq(ns, 3600 * UB_NSEC_PER_SEC);
	cr_assert(ub_parse_time("250us", UB_NSEC_PER_SEC, &ns));
	cr_assert_eq(ns, 250 * UB_NSEC_PER_USEC);
	cr_assert(ub_parse_time("7", UB_NSEC_PER_MSEC, &ns));
	cr_assert_eq(ns, 7 * UB_NSEC_PER_MSEC);
	cr_assert_not(ub_parse_time("5x", UB_NSEC_PER_SEC, &ns));
	cr_assert_not(ub_parse_time("s", UB_NSEC_PER_SEC, &ns));
	cr_assert_not(ub_parse_time("99999999999999h", UB_NSEC_PER_SEC, &ns));
}

Test(bench_units, bools)
{
	bool b;

	cr_assert(ub_parse_bool("yes", &b) && b);
	cr_assert(ub_parse_bool("0", &b) && !b);
	cr_assert(ub_parse_bool("Off", &b) && !b);
	cr_assert_not(ub_parse_bool("2", &b));
}

static void n2s(uint64_t v, int maxlen, bool iec, enum ub_unit u, const char *want)
{
	char buf[64];

	ub_num2str(buf, sizeof(buf), v, maxlen, iec, u);
	cr_assert_str_eq(buf, want, "%llu -> '%s', want '%s'", (unsigned long long)v, buf, want);
}

Test(bench_units, num2str_like_fio)
{
	/* the seed's rand-read: 65263 KiB/s, 16315 IOPS, 1 GiB */
	n2s(66829312, 4, true, UB_U_BYTEPERSEC, "63.7MiB/s");
	n2s(66829312, 4, false, UB_U_BYTEPERSEC, "66.8MB/s");
	n2s(16315, 4, false, UB_U_NONE, "16.3k");
	n2s(25, 4, false, UB_U_NONE, "25");
	n2s(1ull << 30, 4, true, UB_U_BYTE, "1024MiB");
	n2s(1073741824, 4, false, UB_U_BYTE, "1074MB");
	n2s(4096, 4, true, UB_U_BYTE, "4096B");
	n2s(0, 4, true, UB_U_BYTEPERSEC, "0B/s");
	n2s(9999, 4, false, UB_U_NONE, "9999");
	n2s(10000, 4, false, UB_U_NONE, "10.0k");
	n2s(999999, 4, false, UB_U_NONE, "1000k"); /* no room for decimals: rounds */
}

Test(bench_units, bw_and_eta)
{
	char buf[64];

	ub_bw2str(buf, sizeof(buf), 66829312);
	cr_assert_str_eq(buf, "63.7MiB/s (66.8MB/s)");
	ub_eta2str(buf, sizeof(buf), 6);
	cr_assert_str_eq(buf, "00m:06s");
	ub_eta2str(buf, sizeof(buf), 3723);
	cr_assert_str_eq(buf, "1h:02m:03s");
}
