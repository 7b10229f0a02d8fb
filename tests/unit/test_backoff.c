/* The pauses of an instance whose promotes fail (run/backoff.h). */
#include <criterion/criterion.h>

#include "run/backoff.h"

#define S 1000000 /* a second, in us */

Test(backoff, competing_again_doubles_the_retry_interval_up_to_the_ttl)
{
	cr_assert_eq(backoff_compete(1 * S, 15 * S, 0), 1 * S);
	cr_assert_eq(backoff_compete(1 * S, 15 * S, 1), 2 * S);
	cr_assert_eq(backoff_compete(1 * S, 15 * S, 3), 8 * S);
	cr_assert_eq(backoff_compete(1 * S, 15 * S, 4), 15 * S, "a failover never waits past a ttl");
	cr_assert_eq(backoff_compete(1 * S, 15 * S, 4000000000u), 15 * S);
	/* A retry interval longer than the ttl is kept as it is. */
	cr_assert_eq(backoff_compete(20 * S, 15 * S, 5), 20 * S);
}

Test(backoff, a_favourite_whose_promotes_fail_preempts_at_most_once_per_doubling_delay)
{
	cr_assert_eq(backoff_preempt(2 * S, 1 * S, 0), 2 * S, "no failure: --preempt's DELAY");
	cr_assert_eq(backoff_preempt(2 * S, 1 * S, 1), 4 * S);
	cr_assert_eq(backoff_preempt(2 * S, 1 * S, 4), 32 * S, "past the ttl: no failover waits on it");
	cr_assert_eq(backoff_preempt(30 * S, 1 * S, 7), BACKOFF_PREEMPT_MAX_US);
	cr_assert_eq(backoff_preempt(30 * S, 1 * S, 4000000000u), BACKOFF_PREEMPT_MAX_US);
	/* A DELAY of 0 backs off from the retry interval. */
	cr_assert_eq(backoff_preempt(0, 1 * S, 0), 0);
	cr_assert_eq(backoff_preempt(0, 1 * S, 3), 8 * S);
	/* A DELAY past the cap is kept as it is. */
	cr_assert_eq(backoff_preempt(2 * BACKOFF_PREEMPT_MAX_US, 1 * S, 3), 2 * BACKOFF_PREEMPT_MAX_US);
	cr_assert_eq(backoff_preempt(INT64_MAX, 1 * S, 3), INT64_MAX);
}

/* Issue 51's flap: --preempt=2s, every promote failing. After the first
 * preemption the waits before each next one are 4, 8, 16 and 32 s: the
 * fifth comes 60 s after the first, and later still by the pauses between
 * (the step back, the hand-over), so a minute holds at most 4 (as
 * leaderrun(1) says). */
Test(backoff, a_minute_holds_at_most_four_preemptions_of_a_failing_favourite)
{
	int64_t gaps = 0;

	for (unsigned failed = 1; failed <= 4; failed++)
		gaps += backoff_preempt(2 * S, 1 * S, failed);
	cr_assert_eq(gaps, 60 * S);
}
