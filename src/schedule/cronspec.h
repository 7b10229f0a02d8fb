/* A crontab(5) time, five fields, as bit sets; and the next local time
 * that matches it. Pure. */
#ifndef LEADERRUN_CRONSPEC_H
#define LEADERRUN_CRONSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cronspec {
	uint64_t minutes; /* bit 0-59 */
	uint32_t hours;	  /* bit 0-23 */
	uint32_t doms;	  /* bit 1-31 */
	uint16_t months;  /* bit 1-12 */
	uint8_t dows;	  /* bit 0-6, Sunday 0 (7 is folded into 0) */
	/* The field begins with '*' (Vixie cron's and cronie's DOM_STAR,
	 * DOW_STAR): a day then matches both day fields, else either. */
	bool dom_star, dow_star;
	/* cronie's wildcard job (MIN_STAR or HR_STAR): across a daylight
	 * saving change it runs by the clock; a fixed-time job runs the times
	 * the change skips just after it, and a repeated time once. */
	bool wild;
};

/* Parses the five fields of TEXT (blanks between them). Returns 0, or -1
 * with a one-line ERR that names the field and what it allows. */
int cronspec_parse(struct cronspec *c, const char *text, char *err, size_t errlen);

/* Whether some day of some year matches the month and day fields. */
bool cronspec_can_match(const struct cronspec *c);

/* Whether day number DAYS (since 1970-01-01) matches the day fields. */
bool cronspec_day_matches(const struct cronspec *c, int64_t days);

/* The first whole minute at or after FROM that matches, in seconds of a
 * clock with no zone (local time read as if it were UTC); -1 if none is
 * at or before UPTO. */
int64_t cronspec_next(const struct cronspec *c, int64_t from, int64_t upto);

#endif
