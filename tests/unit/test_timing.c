#include <criterion/criterion.h>

#include "base/timing.h"

static struct timing resolved(int64_t ttl, int64_t renew, int64_t grace)
{
	struct timing t = {.ttl_us = ttl, .renew_us = renew, .grace_us = grace};
	char err[256];

	cr_assert_eq(timing_resolve(&t, err, sizeof(err)), 0, "rejected: %s", err);
	return t;
}

Test(timing, defaults_match_the_safety_notes)
{
	struct timing t = resolved(15000000, -1, -1);

	cr_assert_eq(t.renew_us, 5000000);
	cr_assert_eq(t.grace_us, 3000000);
	cr_assert_eq(t.margin_us, 1500000);
	/* SIGTERM 10.5 s and SIGKILL 13.5 s after the last successful send. */
	cr_assert_eq(timing_stop_at(&t, 0), 10500000);
	cr_assert_eq(timing_deadline(&t, 0), 13500000);
}

Test(timing, deadline_counts_from_the_send_time)
{
	struct timing t = resolved(3000000, -1, -1);

	cr_assert_eq(timing_deadline(&t, 1000000), 1000000 + 3000000 - 600000);
	cr_assert_eq(timing_stop_at(&t, 1000000), 1000000 + 3000000 - 600000 - 750000);
}

Test(timing, defaults_are_valid_for_every_ttl)
{
	/* 100 ms to 24 h: the defaults alone must always pass the check, and
	 * leave a whole renew interval before the stop signal. */
	for (int64_t ttl = 100000; ttl <= INT64_C(86400000000); ttl = ttl * 3 / 2 + 7) {
		struct timing t = resolved(ttl, -1, -1);
		cr_assert_geq(t.ttl_us - t.margin_us - t.grace_us, t.renew_us, "ttl %lld", (long long)ttl);
		cr_assert_gt(t.margin_us, 0);
		cr_assert_gt(timing_attempt_budget(&t), 0);
	}
}

Test(timing, margin_is_a_second_for_ordinary_ttls_and_a_tenth_for_long_ones)
{
	cr_assert_eq(resolved(10000000, -1, -1).margin_us, 1000000);
	cr_assert_eq(resolved(60000000, -1, -1).margin_us, 6000000);
	cr_assert_eq(resolved(1000000, -1, -1).margin_us, 200000);
}

Test(timing, explicit_unsafe_values_are_rejected)
{
	struct timing t = {.ttl_us = 3000000, .renew_us = -1, .grace_us = 3000000};
	char err[256];

	cr_assert_eq(timing_resolve(&t, err, sizeof(err)), -1);
	cr_assert(strstr(err, "--kill-grace"), "%s", err);

	t = (struct timing){.ttl_us = 15000000, .renew_us = 11000000, .grace_us = -1};
	cr_assert_eq(timing_resolve(&t, err, sizeof(err)), -1);
	cr_assert(strstr(err, "--renew-interval 11s must be at most"), "%s", err);

	t = (struct timing){.ttl_us = 15000000, .renew_us = 10500000, .grace_us = -1};
	cr_assert_eq(timing_resolve(&t, err, sizeof(err)), 0, "exactly at the limit is safe: %s", err);
}

Test(timing, boottime_clock_moves_forward)
{
	int64_t a = timing_now(), b = timing_now();
	cr_assert_geq(b, a);
	cr_assert_gt(a, 0);
}

Test(timing, retry_step_is_a_tenth_of_the_renew_interval_within_bounds)
{
	struct timing a = resolved(15000000, -1, -1), b = resolved(2000000, -1, -1), c = resolved(100000, -1, -1);

	cr_assert_eq(timing_retry_step(&a), 250000);
	cr_assert_eq(timing_retry_step(&b), 66666);
	cr_assert_eq(timing_retry_step(&c), 10000);
}

Test(timing, defaults_leave_room_for_a_default_galera_membership_change)
{
	/* evs.suspect_timeout is PT5S by default: a renew stalled that long
	 * must not stop the command under the default --ttl 15s. */
	struct timing t = resolved(15000000, -1, -1);
	int64_t have, need;

	cr_assert(timing_fits_galera(&t, 5000000, &have, &need));
	cr_assert_eq(have, 15000000 - t.margin_us - t.grace_us);
	cr_assert_eq(need, 5000000 + t.renew_us);
	t = resolved(6000000, -1, -1);
	cr_assert_not(timing_fits_galera(&t, 5000000, &have, &need), "ttl 6s: have %lld need %lld", (long long)have,
		      (long long)need);
}
