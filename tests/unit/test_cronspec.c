/* A crontab(5) time's five fields (src/schedule/cronspec.c): every kind
 * of item, names, steps, cron's day rule both ways, and the one-line
 * errors that name the field. */
#include <criterion/criterion.h>
#include <string.h>

#include "schedule/civil.h"
#include "schedule/cronspec.h"

static struct cronspec parsed(const char *text)
{
	struct cronspec c;
	char err[300] = "";

	cr_assert_eq(cronspec_parse(&c, text, err, sizeof(err)), 0, "\"%s\" refused: %s", text, err);
	return c;
}

static void refused(const char *text, const char *want)
{
	struct cronspec c;
	char err[300] = "";

	cr_assert_eq(cronspec_parse(&c, text, err, sizeof(err)), -1, "\"%s\" accepted", text);
	cr_expect(strstr(err, want), "\"%s\": \"%s\" does not say \"%s\"", text, err, want);
	cr_expect(!strchr(err, '\n'), "\"%s\": the error is not one line", text);
}

/* The bits v for v in VALUES (ending with -1). */
static uint64_t bits_of(const int *values)
{
	uint64_t b = 0;

	for (; *values >= 0; values++)
		b |= UINT64_C(1) << *values;
	return b;
}
#define BITS(...) bits_of((const int[]){__VA_ARGS__, -1})

Test(cronspec, stars_are_every_value_and_mark_the_fields_unrestricted)
{
	struct cronspec c = parsed("* * * * *");

	cr_assert_eq(c.minutes, (UINT64_C(1) << 60) - 1);
	cr_assert_eq(c.hours, (UINT32_C(1) << 24) - 1);
	cr_assert_eq(c.doms, ((UINT32_C(1) << 31) - 1) << 1);
	cr_assert_eq(c.months, ((1u << 12) - 1) << 1);
	cr_assert_eq(c.dows, 0x7f);
	cr_assert(c.dom_star && c.dow_star && c.wild);
}

Test(cronspec, values_lists_ranges_and_steps)
{
	struct cronspec c = parsed("5,10-12,40-59/7 1-23/11 1/10 */5 1-5");

	cr_assert_eq(c.minutes, BITS(5, 10, 11, 12, 40, 47, 54));
	cr_assert_eq(c.hours, BITS(1, 12, 23));
	cr_assert_eq(c.doms, BITS(1, 11, 21, 31), "N/S is N to the end by S");
	cr_assert_eq(c.months, BITS(1, 6, 11));
	cr_assert_eq(c.dows, BITS(1, 2, 3, 4, 5));
	cr_assert(!c.wild && !c.dom_star && !c.dow_star);
}

Test(cronspec, a_step_past_the_range_is_its_first_value)
{
	cr_assert_eq(parsed("*/90 * * * *").minutes, 1);
	cr_assert_eq(parsed("10-20/30 * * * *").minutes, BITS(10));
}

Test(cronspec, names_in_any_case_and_sunday_as_0_or_7)
{
	struct cronspec c = parsed("0 0 * JAN,mar-May,dEc Mon-fri");

	cr_assert_eq(c.months, BITS(1, 3, 4, 5, 12));
	cr_assert_eq(c.dows, BITS(1, 2, 3, 4, 5));
	cr_assert_eq(parsed("0 0 * * 7").dows, BITS(0));
	cr_assert_eq(parsed("0 0 * * 0").dows, BITS(0));
	cr_assert_eq(parsed("0 0 * * SUN").dows, BITS(0));
	cr_assert_eq(parsed("0 0 * * 5-7").dows, BITS(0, 5, 6));
	cr_assert_eq(parsed("0 0 * * sat-sun").dows, BITS(0, 6), "cronie's 6-0 is 6-7");
	cr_assert_eq(parsed("0 0 * * 1/2").dows, BITS(0, 1, 3, 5), "1/2 runs up to 7, Sunday");
	cr_assert_eq(parsed("0 0 * jan-dec/3 *").months, BITS(1, 4, 7, 10));
}

Test(cronspec, a_field_is_restricted_unless_it_begins_with_a_star)
{
	struct cronspec c = parsed("*/5 3 */2 * 1");

	cr_assert(c.wild, "a minute field led by '*' is cronie's wildcard job");
	cr_assert(c.dom_star, "*/2 leaves the day of the month unrestricted");
	cr_assert(!c.dow_star);
	cr_assert(!parsed("0 0 1-31 * 1").dom_star, "1-31 is restricted: it does not begin with '*'");
	cr_assert(parsed("0 */2 * * *").wild, "an hour field led by '*' too");
	cr_assert(!parsed("0,30 2 * * *").wild);
}

Test(cronspec, both_day_fields_restricted_match_either)
{
	/* 2027-01-01 is a Friday. */
	struct cronspec c = parsed("0 0 13 * 5");
	int64_t fri1 = civil_days(2027, 1, 1), wed13 = civil_days(2027, 1, 13), thu14 = civil_days(2027, 1, 14);

	cr_assert(cronspec_day_matches(&c, fri1), "a Friday");
	cr_assert(cronspec_day_matches(&c, wed13), "the 13th");
	cr_assert(!cronspec_day_matches(&c, thu14));
}

Test(cronspec, one_day_field_led_by_a_star_makes_both_needed)
{
	struct cronspec c = parsed("0 0 */2 * 5");

	cr_assert(!cronspec_day_matches(&c, civil_days(2027, 1, 8)), "Friday the 8th is even");
	cr_assert(cronspec_day_matches(&c, civil_days(2027, 1, 15)), "Friday the 15th");
	cr_assert(!cronspec_day_matches(&c, civil_days(2027, 1, 13)), "Wednesday the 13th");
	c = parsed("0 0 13 * *");
	cr_assert(!cronspec_day_matches(&c, civil_days(2027, 1, 1)));
	cr_assert(cronspec_day_matches(&c, civil_days(2027, 1, 13)));
}

Test(cronspec, blanks_around_and_between_fields_are_one_separator)
{
	cr_assert_eq(parsed("  0\t\t12  *  * *  ").hours, BITS(12));
}

Test(cronspec, errors_name_the_field_and_what_it_allows)
{
	refused("0 25 * * *", "the hour field \"25\" is out of range 0-23");
	refused("60 * * * *", "the minute field \"60\" is out of range 0-59");
	refused("* * 0 * *", "the day-of-month field \"0\" is out of range 1-31");
	refused("* * 32 * *", "out of range 1-31");
	refused("* * * 13 *", "the month field \"13\" is out of range 1-12 or jan-dec");
	refused("* * * * 8", "the day-of-week field \"8\" is out of range 0-7 or sun-sat");
	refused("* * * foo *", "the month field \"foo\" is not cron's");
	refused("* * * * mon-fry", "the day-of-week field \"mon-fry\" is not cron's");
	refused("* * * * monday", "is not cron's");
	refused("* * * jan-feb/x *", "is not cron's");
	refused("* 20-5 * * *", "the hour field \"20-5\" has a range that goes backwards");
	refused("*/0 * * * *", "a step is 1 to 1000");
	refused("1,,2 * * * *", "the minute field \"1,,2\" is not cron's");
	refused("1, * * * *", "is not cron's");
	refused("*5 * * * *", "is not cron's");
	refused("L * * * *", "is not cron's");
	refused("0 0 ? * *", "is not cron's");
	refused("0 0 * * 5#2", "is not cron's");
	refused("-1 * * * *", "is not cron's");
	refused("* * jan * *", "the day-of-month field \"jan\" is not cron's");
	refused("0 0 * * *\x01", "\"*?\"");
	refused("* * * *", "too few fields; cron's has five");
	refused("* * * * * *", "too many fields");
	refused("", "too few fields");
	refused("99999999999 * * * *", "out of range 0-59");
}

Test(cronspec, never_matching_day_fields_are_told_apart)
{
	struct cronspec c = parsed("0 0 30 2 *");

	cr_assert(!cronspec_can_match(&c), "30 February");
	c = parsed("0 0 31 4,6,9,11 *");
	cr_assert(!cronspec_can_match(&c), "31 in months of 30 days");
	c = parsed("0 0 29 2 *");
	cr_assert(cronspec_can_match(&c), "29 February, in leap years");
	c = parsed("0 0 30 2 1");
	cr_assert(cronspec_can_match(&c), "30 February or any Monday of February");
	c = parsed("0 0 31 2 */2");
	cr_assert(!cronspec_can_match(&c), "*/2 leaves it unrestricted: both needed");
}

Test(cronspec, next_finds_the_first_matching_minute_at_or_after)
{
	struct cronspec c = parsed("30 2 * * *");
	int64_t day = civil_days(2027, 3, 28) * CIVIL_DAY;

	cr_assert_eq(cronspec_next(&c, day, day + CIVIL_DAY), day + 2 * 3600 + 1800);
	cr_assert_eq(cronspec_next(&c, day + 2 * 3600 + 1800, INT64_MAX / 2), day + 2 * 3600 + 1800, "at: included");
	cr_assert_eq(cronspec_next(&c, day + 2 * 3600 + 1801, INT64_MAX / 2), day + CIVIL_DAY + 2 * 3600 + 1800);
	cr_assert_eq(cronspec_next(&c, day, day + 3600), -1, "none up to UPTO");
}

Test(cronspec, next_walks_month_ends_and_leap_days)
{
	struct cronspec c = parsed("59 23 31 * *");
	int64_t t = cronspec_next(&c, civil_days(2027, 4, 1) * CIVIL_DAY, INT64_MAX / 2);

	cr_assert_eq(t, civil_days(2027, 5, 31) * CIVIL_DAY + 23 * 3600 + 59 * 60, "April has no 31st");
	c = parsed("0 0 29 feb *");
	t = cronspec_next(&c, civil_days(2097, 3, 1) * CIVIL_DAY, INT64_MAX / 2);
	cr_assert_eq(t, civil_days(2104, 2, 29) * CIVIL_DAY, "2100 is no leap year");
	c = parsed("0 12 * dec sat");
	t = cronspec_next(&c, civil_days(2027, 12, 31) * CIVIL_DAY + 13 * 3600, INT64_MAX / 2);
	cr_assert_eq(t, civil_days(2028, 12, 2) * CIVIL_DAY + 12 * 3600, "across the year's end");
}
