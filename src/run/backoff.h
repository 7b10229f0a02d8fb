/* A --service instance whose promotes fail: how long it stands back before
 * it competes again, and how long it waits before it preempts. Pure:
 * tests/unit/test_backoff.c.
 *
 * The two grow apart on purpose. Competing for a lease that came free is
 * a failover: nobody leads until someone takes the lease, so that pause
 * stays under a ttl. A preemption takes the lease from a leader that
 * works: a favourite whose promote fails there only makes that leader
 * demote and promote again for nothing (issue 51: B demoted every 5 to 10
 * s for good), so its wait doubles with each failure, far past the ttl. */
#ifndef LEADERRUN_BACKOFF_H
#define LEADERRUN_BACKOFF_H

#include <stdint.h>

/* The longest wait before a preemption that back-off makes, unless
 * --preempt's DELAY is longer. */
#define BACKOFF_PREEMPT_MAX_US (INT64_C(3600) * 1000000)

/* After a term, before competing again: RETRY_US doubled for each of the
 * FAILED promotes in a row, up to the ttl (or RETRY_US, if longer). */
int64_t backoff_compete(int64_t retry_us, int64_t ttl_us, unsigned failed);

/* How long a candidate waits, healthy, before it preempts (--preempt's
 * DELAY_US): DELAY_US itself, and after FAILED promotes in a row
 * 2^FAILED x DELAY_US (or x RETRY_US, if longer: a DELAY of 0 backs off
 * too), up to BACKOFF_PREEMPT_MAX_US (or DELAY_US, if longer). */
int64_t backoff_preempt(int64_t delay_us, int64_t retry_us, unsigned failed);

#endif
