#include <criterion/criterion.h>

#include "base/duration.h"

static int64_t parse_ok(const char *s)
{
	char err[256];
	int64_t us = -1;

	cr_assert_eq(duration_parse(s, &us, err, sizeof(err)), 0, "'%s' rejected: %s", s, err);
	return us;
}

static void parse_bad(const char *s, const char *needle)
{
	char err[256] = "";
	int64_t us;

	cr_assert_eq(duration_parse(s, &us, err, sizeof(err)), -1, "'%s' accepted", s);
	cr_assert(strstr(err, needle), "error for '%s' lacks '%s': %s", s, needle, err);
}

Test(duration, units_scale_to_microseconds)
{
	cr_assert_eq(parse_ok("500ms"), 500000);
	cr_assert_eq(parse_ok("15s"), 15000000);
	cr_assert_eq(parse_ok("1.5m"), 90000000);
	cr_assert_eq(parse_ok("2h"), INT64_C(7200000000));
	cr_assert_eq(parse_ok("0.25s"), 250000);
	cr_assert_eq(parse_ok("0"), 0);
}

Test(duration, bare_number_means_seconds)
{
	cr_assert_eq(parse_ok("3"), 3000000);
	cr_assert_eq(parse_ok("0.5"), 500000);
}

Test(duration, fraction_finer_than_microsecond_rounds_down)
{
	cr_assert_eq(parse_ok("1.0000019s"), 1000001);
	cr_assert_eq(parse_ok(".5s"), 500000);
}

Test(duration, rejects_garbage_with_a_hint)
{
	parse_bad("", "empty");
	parse_bad("abc", "expected a number with unit");
	parse_bad("5x", "not a duration");
	parse_bad("5 s", "not a duration");
	parse_bad(" 5s", "not a duration");
	parse_bad("1e3", "not a duration");
	parse_bad("inf", "not a duration");
	parse_bad("0x10", "not a duration");
	parse_bad("s", "not a duration");
	parse_bad(".", "not a duration");
	parse_bad("5ss", "not a duration");
	parse_bad("1.2.3s", "not a duration");
}

Test(duration, rejects_negative)
{
	parse_bad("-1s", "negative");
}

Test(duration, rejects_overflow)
{
	parse_bad("99999999999999999999s", "too large");
	parse_bad("9223372036854h", "too large");
}

Test(duration, formats_compactly)
{
	char b[32];

	duration_format(1500000, b, sizeof(b));
	cr_assert_str_eq(b, "1.5s");
	duration_format(250000, b, sizeof(b));
	cr_assert_str_eq(b, "250ms");
	duration_format(INT64_C(7200000000), b, sizeof(b));
	cr_assert_str_eq(b, "2h");
	duration_format(15000000, b, sizeof(b));
	cr_assert_str_eq(b, "15s");
	duration_format(333333, b, sizeof(b));
	cr_assert_str_eq(b, "333.333ms");
	duration_format(10500000, b, sizeof(b));
	cr_assert_str_eq(b, "10.5s");
	duration_format(0, b, sizeof(b));
	cr_assert_str_eq(b, "0ms");
}

Test(duration, overflow_in_the_fraction_is_caught)
{
	/* Found by the fuzzer: the whole part fits, whole + fraction does not. */
	parse_bad("9223372036854.9s", "too large");
	parse_bad("2562047788015.99m", "too large");
}

Test(duration, every_fraction_digit_counts_to_the_microsecond)
{
	/* Found by the fuzzer: digits past the ninth were dropped, and an hour
	 * is 3.6e9 us. 0.000000000999999 h = 3.5999964 us. */
	cr_assert_eq(parse_ok("0.000000000999999h"), 3);
	cr_assert_eq(parse_ok("0.0000000002777777778h"), 1);
	cr_assert_eq(parse_ok("1.999999999999s"), 1999999);
}
