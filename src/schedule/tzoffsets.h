/* A time zone as the table of its UTC offsets over a span of time: what
 * the schedule needs of it, read once at start, then pure. */
#ifndef LEADERRUN_TZOFFSETS_H
#define LEADERRUN_TZOFFSETS_H

#include <stddef.h>
#include <stdint.h>

/* 50 years of two changes a year, and room for zones that change more. */
#define TZOFFSETS_MAX 256
/* The span read: from a year before the first time asked (the slots a
 * schedule missed while every instance was down are counted back that
 * far), to 50 years on. */
#define TZOFFSETS_BACK	(366 * INT64_C(86400))
#define TZOFFSETS_YEARS 50

struct tzoffsets {
	int64_t lo, hi; /* the span, seconds since the epoch: [lo, hi] */
	int n;		/* at least 1 */
	struct {
		int64_t at;  /* from this second (the first: lo) */
		int32_t off; /* local time minus UTC, in seconds */
	} change[TZOFFSETS_MAX];
};

/* ZONE's offsets from FROM minus TZOFFSETS_BACK to TZOFFSETS_YEARS on; NULL or
 * "UTC": offset 0 from 1970 to 9999. ZONE is an IANA name, read from the
 * system's zoneinfo. Sets TZ and calls tzset while it reads, then
 * restores TZ as it was: call it only before any thread starts. Returns
 * 0, or -1 with a one-line ERR. */
int tzoffsets_load(struct tzoffsets *z, const char *zone, int64_t from, char *err, size_t errlen);

/* The index of the change in force at T (lo <= T <= hi). */
int tzoffsets_find(const struct tzoffsets *z, int64_t t);

#endif
