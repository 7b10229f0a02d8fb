/* --health-cmd: whether this instance may compete for the lease, and keep
 * leading. Pure: times are passed in (CLOCK_BOOTTIME us), the supervisor
 * starts the check (sup_health.c) and reports how it ended; the unit tests
 * drive it with made-up times (tests/unit/test_health.c).
 *
 * The rules, keepalived's track_script with hysteresis both ways:
 *   - a check runs every interval; one still running after the interval is
 *     killed and counts as failed;
 *   - at the start the instance is unhealthy until a check passes: a standby
 *     does not compete before its first check passed;
 *   - healthy, it turns unhealthy after RETRIES failures in a row: a leader
 *     steps down, a standby stops competing;
 *   - unhealthy after that, it turns healthy again after RETRIES passes in a
 *     row.
 * So a check that flaps (pass, fail, pass, ...) with RETRIES >= 2 never
 * makes it step down, and whatever the check does, it steps down at most
 * once per 2 x RETRIES x interval: RETRIES failed checks to step down,
 * RETRIES passed ones before it competes again. */
#ifndef LEADERRUN_HEALTH_H
#define LEADERRUN_HEALTH_H

#include <stdbool.h>
#include <stdint.h>

struct health {
	int64_t interval;
	unsigned retries;
	bool ok;	  /* may compete, and keep leading */
	bool failed_once; /* it was healthy once and failed since: RETRIES passes to come back */
	unsigned fails;	  /* in a row */
	unsigned passes;  /* in a row */
	bool running;	  /* a check runs, since started_at */
	int64_t started_at;
	int64_t next_at; /* the next check starts */
};

/* What a result changed. */
enum health_change { HEALTH_SAME, HEALTH_BECAME_OK, HEALTH_BECAME_FAILING };

/* The first check is due at NOW. */
void health_init(struct health *h, int64_t interval, unsigned retries, int64_t now);

/* When something is due: the next check's start, or the running one's
 * timeout. */
int64_t health_next(const struct health *h);

/* Whether a check is to start now. */
bool health_due(const struct health *h, int64_t now);

/* A check started at NOW. */
void health_started(struct health *h, int64_t now);

/* Whether the running check ran out of time at NOW (the caller kills it
 * and reports it failed). */
bool health_overdue(const struct health *h, int64_t now);

/* The running check ended: PASSED (exit 0) or not, at NOW. */
enum health_change health_result(struct health *h, bool passed, int64_t now);

#endif
