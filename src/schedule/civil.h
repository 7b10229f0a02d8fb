/* The proleptic Gregorian calendar as arithmetic on day numbers (days
 * since 1970-01-01), and the ISO 8601 times --from reads and every slot
 * is printed as. Pure: no clock, no time zone, no libc time functions. */
#ifndef LEADERRUN_CIVIL_H
#define LEADERRUN_CIVIL_H

#include <stddef.h>
#include <stdint.h>

#define CIVIL_DAY INT64_C(86400)

struct civil_date {
	int64_t year;
	int month; /* 1-12 */
	int day;   /* 1-31 */
};

/* The day number of Y-M-D; M and D in range. */
int64_t civil_days(int64_t y, int m, int d);
/* The date of day number DAYS. */
struct civil_date civil_date(int64_t days);
/* 0 for Sunday to 6 for Saturday. */
int civil_weekday(int64_t days);
/* The days in month M of year Y. */
int civil_month_days(int64_t y, int m);

/* Floor division and its remainder's sign: day numbers before 1970 too. */
int64_t civil_floor_div(int64_t a, int64_t b);

/* "YYYY-MM-DDTHH:MM:SS", optionally ".FRACTION", optionally "Z", a time
 * in UTC from 1970 to 9999, into microseconds since the epoch (a
 * fraction past the microsecond is cut). Returns 0, or -1 with ERR. */
int civil_parse_iso(const char *text, int64_t *out_us, char *err, size_t errlen);

/* "YYYY-MM-DDTHH:MM:SSZ" of the second that holds US (20 characters and
 * the NUL). */
void civil_format_iso(int64_t us, char out[21]);

#endif
