/* --schedule SPEC in --schedule-tz ZONE: its slots, the instants it runs
 * at. A crontab(5) time or @every DURATION, read once at start (the zone
 * too: schedule_parse is the only call that reads anything); after it,
 * every call is pure arithmetic on the struct: no clock, no I/O.
 *
 * Times are microseconds since the epoch, UTC; slots fall on whole
 * seconds. Across a daylight saving change a slot follows cronie (see
 * schedule.c): a local time the spring change skips runs at the change,
 * a local time the autumn change repeats runs once. */
#ifndef LEADERRUN_SCHEDULE_H
#define LEADERRUN_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cronspec.h"
#include "tzoffsets.h"

/* @every DURATION: from 1 s to 366 days, whole seconds. */
#define SCHEDULE_EVERY_MAX (INT64_C(366) * 86400)

struct schedule {
	bool every;	 /* @every: slots are the multiples of every_s since the epoch */
	int64_t every_s; /* @every's period, seconds */
	struct cronspec cron;
	struct tzoffsets zone; /* the span it covers is the horizon of the slots */
};

enum schedule_fault {
	SCHEDULE_BAD_SPEC = -1, /* ERR names the field and what it allows */
	SCHEDULE_BAD_ZONE = -2, /* ERR names the zone */
};

/* Reads SPEC in zone TZ (NULL: UTC), for slots from about FROM_US on (a
 * zone's offsets are read from a year before it to 50 years after: the
 * horizon, outside which next, prev and count see no slot; in UTC, 1970
 * to 9999).
 * Returns 0, or a schedule_fault with a one-line ERR. Sets and restores
 * TZ when TZ names a zone: call it before any thread starts. */
int schedule_parse(struct schedule *s, const char *spec, const char *tz, int64_t from_us, char *err, size_t errlen);

/* The first slot strictly after AFTER_US; -1 if none within the horizon. */
int64_t schedule_next(const struct schedule *s, int64_t after_us);

/* The latest slot at or before AT_US; -1 if none within the horizon. */
int64_t schedule_prev(const struct schedule *s, int64_t at_us);

/* How many slots lie in (AFTER_US, UPTO_US], counting up to LIMIT. */
int64_t schedule_count(const struct schedule *s, int64_t after_us, int64_t upto_us, int64_t limit);

/* US as "YYYY-MM-DDTHH:MM:SSZ" (the second that holds it). */
void schedule_format(int64_t us, char out[21]);

/* TEXT as --from reads it: "YYYY-MM-DDTHH:MM:SS[.FRACTION][Z]", UTC.
 * Returns 0, or -1 with a one-line ERR. */
int schedule_parse_time(const char *text, int64_t *out_us, char *err, size_t errlen);

#endif
