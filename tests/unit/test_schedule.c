/* A schedule's slots (src/schedule/schedule.c): the @ forms, @every from
 * the epoch, next, prev and count, the zone's daylight saving changes by
 * cronie's rule, --from's times and the slots' format. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "schedule/schedule.h"

#define S INT64_C(1000000)

static int64_t at(const char *iso)
{
	int64_t us;
	char err[200];

	cr_assert_eq(schedule_parse_time(iso, &us, err, sizeof(err)), 0, "%s: %s", iso, err);
	return us;
}

static struct schedule *sched(const char *spec, const char *tz, const char *from)
{
	static struct schedule s;
	char err[400] = "";

	cr_assert_eq(schedule_parse(&s, spec, tz, at(from), err, sizeof(err)), 0, "\"%s\" refused: %s", spec, err);
	return &s;
}

/* The next N slots after FROM, space-separated, into OUT. */
static const char *slots(const struct schedule *s, const char *from, int n)
{
	static char out[2048];
	int64_t t = at(from);

	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		char one[21];
		t = schedule_next(s, t);
		if (t < 0) {
			strcat(out, "none ");
			break;
		}
		schedule_format(t, one);
		strcat(out, one);
		strcat(out, " ");
	}
	out[strlen(out) - 1] = '\0';
	return out;
}

static void refused(const char *spec, const char *tz, int fault, const char *want)
{
	struct schedule s;
	char err[400] = "";

	cr_assert_eq(schedule_parse(&s, spec, tz, at("2027-01-01T00:00:00Z"), err, sizeof(err)), fault,
		     "\"%s\" in %s: %s", spec, tz ? tz : "UTC", err);
	cr_expect(strstr(err, want), "\"%s\": \"%s\" does not say \"%s\"", spec, err, want);
	cr_expect(!strchr(err, '\n'), "not one line: %s", err);
}

Test(schedule, the_at_names_are_cronies)
{
	const char *from = "2027-01-01T00:30:00Z";

	cr_assert_str_eq(slots(sched("@hourly", NULL, from), from, 2), "2027-01-01T01:00:00Z 2027-01-01T02:00:00Z");
	cr_assert_str_eq(slots(sched("@daily", NULL, from), from, 1), "2027-01-02T00:00:00Z");
	cr_assert_str_eq(slots(sched("@midnight", NULL, from), from, 1), "2027-01-02T00:00:00Z");
	cr_assert_str_eq(slots(sched("@weekly", NULL, from), from, 1), "2027-01-03T00:00:00Z", "a Sunday");
	cr_assert_str_eq(slots(sched("@monthly", NULL, from), from, 1), "2027-02-01T00:00:00Z");
	cr_assert_str_eq(slots(sched("@yearly", NULL, from), from, 1), "2028-01-01T00:00:00Z");
	cr_assert_str_eq(slots(sched("  @annually ", NULL, from), from, 1), "2028-01-01T00:00:00Z");
	cr_assert(sched("@hourly", NULL, from)->cron.wild, "@hourly's hour is '*': a wildcard job");
}

Test(schedule, every_counts_from_the_epoch_in_utc_whatever_the_zone)
{
	const char *from = "2027-01-01T00:00:00Z";

	cr_assert_str_eq(slots(sched("@every 7m", NULL, from), from, 2), "2027-01-01T00:02:00Z 2027-01-01T00:09:00Z",
			 "multiples of 420 s since 1970");
	cr_assert_str_eq(slots(sched("@every 7m", "America/New_York", from), from, 1), "2027-01-01T00:02:00Z");
	cr_assert_str_eq(slots(sched("@every 1d", "Europe/Berlin", from), from, 1), "2027-01-02T00:00:00Z");
	cr_assert_str_eq(slots(sched("@every 1.5d", NULL, from), from, 1), "2027-01-02T00:00:00Z");
	cr_assert_str_eq(slots(sched("@every 1s", NULL, "2027-01-01T00:00:00.5Z"), "2027-01-01T00:00:00.5Z", 2),
			 "2027-01-01T00:00:01Z 2027-01-01T00:00:02Z");
	cr_assert_str_eq(slots(sched("@every 366d", NULL, from), from, 1), "2027-02-13T00:00:00Z");
}

Test(schedule, next_is_strictly_after_and_prev_at_or_before)
{
	struct schedule *s = sched("0 * * * *", NULL, "2027-01-01T00:00:00Z");

	cr_assert_eq(schedule_next(s, at("2027-01-01T01:00:00Z")), at("2027-01-01T02:00:00Z"));
	cr_assert_eq(schedule_next(s, at("2027-01-01T00:59:59.999999Z")), at("2027-01-01T01:00:00Z"));
	cr_assert_eq(schedule_prev(s, at("2027-01-01T01:00:00Z")), at("2027-01-01T01:00:00Z"));
	cr_assert_eq(schedule_prev(s, at("2027-01-01T00:59:59.9Z")), at("2027-01-01T00:00:00Z"));
	s = sched("@every 10s", NULL, "2027-01-01T00:00:00Z");
	cr_assert_eq(schedule_next(s, at("2027-01-01T00:00:10Z")), at("2027-01-01T00:00:20Z"));
	cr_assert_eq(schedule_prev(s, at("2027-01-01T00:00:19.9Z")), at("2027-01-01T00:00:10Z"));
}

Test(schedule, prev_finds_a_slot_years_back)
{
	struct schedule *s = sched("0 0 29 2 *", NULL, "2027-01-01T00:00:00Z");

	cr_assert_eq(schedule_prev(s, at("2027-06-01T00:00:00Z")), at("2024-02-29T00:00:00Z"));
	cr_assert_eq(schedule_prev(s, at("1970-01-02T00:00:00Z")), -1, "none since 1970");
	s = sched("30 2 * * *", "Europe/Berlin", "2027-03-28T12:00:00Z");
	cr_assert_eq(schedule_prev(s, at("2027-03-28T12:00:00Z")), at("2027-03-28T01:00:00Z"),
		     "the skipped 02:30, run at the change");
}

Test(schedule, count_is_the_slots_in_the_half_open_span_up_to_a_limit)
{
	struct schedule *s = sched("*/15 * * * *", NULL, "2027-01-01T00:00:00Z");

	cr_assert_eq(schedule_count(s, at("2027-01-01T00:00:00Z"), at("2027-01-01T01:00:00Z"), 100), 4);
	cr_assert_eq(schedule_count(s, at("2027-01-01T00:00:00Z"), at("2027-01-02T00:00:00Z"), 10), 10);
	cr_assert_eq(schedule_count(s, at("2027-01-01T01:00:00Z"), at("2027-01-01T00:00:00Z"), 10), 0);
	s = sched("@every 10s", NULL, "2027-01-01T00:00:00Z");
	cr_assert_eq(schedule_count(s, at("2027-01-01T00:00:00Z"), at("2027-01-01T00:01:00Z"), 100), 6);
	cr_assert_eq(schedule_count(s, at("2027-01-01T00:00:00.1Z"), at("2027-01-01T00:00:59.9Z"), 100), 5);
	cr_assert_eq(schedule_count(s, at("2027-01-01T00:00:00Z"), at("2027-01-02T00:00:00Z"), 7), 7);
}

Test(schedule, a_zones_slots_are_seen_a_year_back_for_the_missed_ones)
{
	struct schedule *s = sched("0 3 * * *", "Europe/Berlin", "2027-12-01T12:00:00Z");

	cr_assert_eq(schedule_count(s, at("2027-01-01T12:00:00Z"), at("2027-12-01T12:00:00Z"), 1000), 334,
		     "every day from 2 January to 1 December");
	cr_assert_eq(schedule_prev(s, at("2027-06-01T00:00:00Z")), at("2027-05-31T01:00:00Z"), "03:00 CEST");
	cr_assert_eq(schedule_prev(s, at("2026-06-01T00:00:00Z")), -1, "before the horizon");
}

Test(schedule, berlin_spring_runs_a_skipped_fixed_time_at_the_change)
{
	const char *from = "2027-03-27T00:00:00Z";

	/* 28 March 2027, 01:00 UTC: 02:00 CET becomes 03:00 CEST. */
	cr_assert_str_eq(slots(sched("30 2 * * *", "Europe/Berlin", from), from, 3),
			 "2027-03-27T01:30:00Z 2027-03-28T01:00:00Z 2027-03-29T00:30:00Z");
	cr_assert_str_eq(slots(sched("0,15,30 2 * * *", "Europe/Berlin", from), "2027-03-28T00:50:00Z", 2),
			 "2027-03-28T01:00:00Z 2027-03-29T00:00:00Z", "three skipped times make one run");
	cr_assert_str_eq(slots(sched("0 * * * *", "Europe/Berlin", from), "2027-03-28T00:30:00Z", 2),
			 "2027-03-28T01:00:00Z 2027-03-28T02:00:00Z", "a wildcard job skips 02:00");
}

Test(schedule, berlin_autumn_runs_a_repeated_fixed_time_once_and_a_wildcard_twice)
{
	const char *from = "2027-10-30T12:00:00Z";

	/* 31 October 2027, 01:00 UTC: 03:00 CEST becomes 02:00 CET. */
	cr_assert_str_eq(slots(sched("30 2 * * *", "Europe/Berlin", from), from, 2),
			 "2027-10-31T00:30:00Z 2027-11-01T01:30:00Z");
	cr_assert_str_eq(slots(sched("30 * * * *", "Europe/Berlin", from), "2027-10-31T00:00:00Z", 3),
			 "2027-10-31T00:30:00Z 2027-10-31T01:30:00Z 2027-10-31T02:30:00Z");
}

Test(schedule, errors_are_one_line_and_tell_spec_from_zone)
{
	refused("0 25 * * *", NULL, SCHEDULE_BAD_SPEC, "the hour field \"25\" is out of range 0-23");
	refused("0 0 30 2 *", NULL, SCHEDULE_BAD_SPEC, "\"0 0 30 2 *\" never matches");
	refused("@fortnightly", NULL, SCHEDULE_BAD_SPEC, "\"@fortnightly\" is no schedule; use @hourly");
	refused("@daily 5", NULL, SCHEDULE_BAD_SPEC, "is no schedule");
	refused("@every", NULL, SCHEDULE_BAD_SPEC, "@every: empty duration");
	refused("@every 0s", NULL, SCHEDULE_BAD_SPEC, "@every 0s is out of range; use whole seconds from 1s to 366d");
	refused("@every 367d", NULL, SCHEDULE_BAD_SPEC, "out of range");
	refused("@every 1500ms", NULL, SCHEDULE_BAD_SPEC, "whole seconds");
	refused("@every 10 m", NULL, SCHEDULE_BAD_SPEC, "@every takes one DURATION");
	refused("@every xd", NULL, SCHEDULE_BAD_SPEC, "a number of days");
	refused("@every 1.5\x91", NULL, SCHEDULE_BAD_SPEC, "@every takes one DURATION");
	refused("@every 10m\n", NULL, SCHEDULE_BAD_SPEC, "@every takes one DURATION");
	refused("@daily", "Mars/Olympus", SCHEDULE_BAD_ZONE, "unknown time zone \"Mars/Olympus\"");
	refused("@daily", "../../etc/passwd", SCHEDULE_BAD_ZONE, "unknown time zone");
	refused("@daily", "", SCHEDULE_BAD_ZONE, "unknown time zone");
	refused("@every 1m", "Nowhere", SCHEDULE_BAD_ZONE, "unknown time zone");
}

Test(schedule, a_zone_leaves_tz_as_it_was)
{
	setenv("TZ", "Asia/Tokyo", 1);
	sched("0 0 * * *", "Europe/Berlin", "2027-01-01T00:00:00Z");
	cr_assert_str_eq(getenv("TZ"), "Asia/Tokyo");
	unsetenv("TZ");
	sched("0 0 * * *", "America/New_York", "2027-01-01T00:00:00Z");
	cr_assert_null(getenv("TZ"), "unset again");
}

Test(schedule, from_takes_utc_with_or_without_z_and_a_fraction)
{
	static const char *const bad[] = {"2027",
					  "2027-02-29T00:00:00Z",
					  "1969-12-31T23:59:59Z",
					  "2027-01-01 00:00:00",
					  "2027-01-01T24:00:00Z",
					  "2027-01-01T00:00:00.Z",
					  "2027-01-01T00:00:00+01:00",
					  "2027-01-01T00:00:00ZZ",
					  ""};
	int64_t us;
	char err[200], out[21];

	cr_assert_eq(at("1970-01-01T00:00:00Z"), 0);
	cr_assert_eq(at("2027-03-28T01:00:00"), at("2027-03-28T01:00:00Z"));
	cr_assert_eq(at("2027-03-28T01:00:00.25Z") - at("2027-03-28T01:00:00Z"), S / 4);
	cr_assert_eq(at("2024-02-29T23:59:59.1234567Z") % S, 123456, "cut at the microsecond");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(schedule_parse_time(bad[i], &us, err, sizeof(err)), -1, "\"%s\" accepted", bad[i]);
		cr_expect(strstr(err, "write YYYY-MM-DDTHH:MM:SSZ"), "%s", err);
	}
	schedule_format(at("2099-12-31T23:59:59.999Z"), out);
	cr_assert_str_eq(out, "2099-12-31T23:59:59Z");
	schedule_format(at("2028-02-29T12:34:56Z"), out);
	cr_assert_str_eq(out, "2028-02-29T12:34:56Z");
}
