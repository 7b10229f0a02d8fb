/* --health-cmd's rules (health.h), with made-up times. */
#include <criterion/criterion.h>

#include "run/health.h"

#define S 1000000 /* a second, in us */

/* Runs one check at NOW that PASSED or not; returns what changed. */
static enum health_change check(struct health *h, int64_t now, bool passed)
{
	cr_assert(health_due(h, now), "no check due at %lld", (long long)now);
	health_started(h, now);
	return health_result(h, passed, now + 1000);
}

Test(health, a_standby_does_not_compete_before_its_first_check_passes)
{
	struct health h;

	health_init(&h, 5 * S, 3, 0);
	cr_assert_not(h.ok);
	cr_assert(health_due(&h, 0), "the first check is due at once");
	cr_assert_eq(check(&h, 0, false), HEALTH_SAME);
	cr_assert_not(h.ok);
	cr_assert_eq(check(&h, 5 * S, true), HEALTH_BECAME_OK, "one pass is enough at the start");
	cr_assert(h.ok);
}

Test(health, a_leader_steps_down_after_retries_failures_in_a_row)
{
	struct health h;

	health_init(&h, 1 * S, 3, 0);
	check(&h, 0, true);
	cr_assert_eq(check(&h, 1 * S, false), HEALTH_SAME);
	cr_assert_eq(check(&h, 2 * S, false), HEALTH_SAME);
	cr_assert_eq(check(&h, 3 * S, false), HEALTH_BECAME_FAILING);
	cr_assert_not(h.ok);
}

Test(health, alternating_pass_and_fail_never_steps_down)
{
	struct health h;

	health_init(&h, 1 * S, 2, 0);
	check(&h, 0, true);
	for (int i = 1; i < 200; i++)
		cr_assert_eq(check(&h, i * S, i % 2 == 0), HEALTH_SAME, "changed at check %d", i);
	cr_assert(h.ok);
}

Test(health, after_a_step_down_it_competes_again_only_after_retries_passes)
{
	struct health h;

	health_init(&h, 1 * S, 3, 0);
	check(&h, 0, true);
	for (int i = 1; i <= 3; i++)
		check(&h, i * S, false);
	cr_assert_not(h.ok);
	cr_assert_eq(check(&h, 4 * S, true), HEALTH_SAME);
	cr_assert_eq(check(&h, 5 * S, true), HEALTH_SAME);
	cr_assert_eq(check(&h, 6 * S, false), HEALTH_SAME, "a failure restarts the count");
	cr_assert_eq(check(&h, 7 * S, true), HEALTH_SAME);
	cr_assert_eq(check(&h, 8 * S, true), HEALTH_SAME);
	cr_assert_eq(check(&h, 9 * S, true), HEALTH_BECAME_OK);
}

/* Whatever the check does, at most one step-down per 2 x retries x
 * interval: a pseudo-random sequence over 10,000 checks. */
Test(health, a_flapping_check_steps_down_at_most_once_per_twice_retries_intervals)
{
	struct health h;
	uint64_t x = 88172645463325252u;
	int64_t last_down = -1000 * S;
	int downs = 0;

	health_init(&h, 1 * S, 2, 0);
	for (int i = 0; i < 10000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (check(&h, (int64_t)i * S, x % 3 != 0) == HEALTH_BECAME_FAILING) {
			cr_assert_geq((int64_t)i * S - last_down, 2 * 2 * S, "stepped down twice within %lld s",
				      (long long)(((int64_t)i * S - last_down) / S));
			last_down = (int64_t)i * S;
			downs++;
		}
	}
	cr_assert_gt(downs, 0, "the sequence never failed twice in a row: the test proves nothing");
}

Test(health, a_check_past_its_interval_is_overdue_and_counts_as_failed)
{
	struct health h;

	health_init(&h, 2 * S, 1, 0);
	check(&h, 0, true);
	health_started(&h, 2 * S);
	cr_assert_not(health_overdue(&h, 3 * S));
	cr_assert_eq(health_next(&h), 4 * S);
	cr_assert(health_overdue(&h, 4 * S));
	cr_assert_eq(health_result(&h, false, 4 * S), HEALTH_BECAME_FAILING);
	cr_assert(health_due(&h, 4 * S), "the next check starts at once");
}
