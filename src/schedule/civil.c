/* Day numbers and dates: the algorithm of Howard Hinnant's
 * "chrono-Compatible Low-Level Date Algorithms" (days_from_civil,
 * civil_from_days), exact over the whole range leaderrun accepts, with no
 * table and no libc call, so that a slot's date never depends on the
 * process's TZ. */
#include "civil.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int64_t civil_floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t civil_days(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = civil_floor_div(y, 400);
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

struct civil_date civil_date(int64_t days)
{
	int64_t z = days + 719468, era = civil_floor_div(z, 146097);
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	struct civil_date c;

	c.day = (int)(doy - (153 * mp + 2) / 5 + 1);
	c.month = (int)(mp < 10 ? mp + 3 : mp - 9);
	c.year = yoe + era * 400 + (c.month <= 2);
	return c;
}

int civil_weekday(int64_t days)
{
	/* 1970-01-01 was a Thursday. */
	int64_t w = (days + 4) % 7;

	return (int)(w < 0 ? w + 7 : w);
}

int civil_month_days(int64_t y, int m)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : days[m - 1];
}

/* N digits at *P into *OUT; false if any is not a digit. */
static bool take_digits(const char **p, int n, int *out)
{
	*out = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return false;
		*out = *out * 10 + (**p - '0');
	}
	return true;
}

/* The fraction after the '.', cut at the microsecond; false if empty or
 * not digits. */
static bool take_fraction(const char **p, int64_t *us)
{
	int64_t scale = 100000;
	const char *start = *p;

	*us = 0;
	for (; **p >= '0' && **p <= '9'; (*p)++, scale /= 10)
		*us += (**p - '0') * scale;
	return *p > start;
}

int civil_parse_iso(const char *text, int64_t *out_us, char *err, size_t errlen)
{
	const char *p = text;
	int y, mo, d, h, mi, s;
	int64_t frac = 0;

	if (!take_digits(&p, 4, &y) || *p++ != '-' || !take_digits(&p, 2, &mo) || *p++ != '-' ||
	    !take_digits(&p, 2, &d) || *p++ != 'T' || !take_digits(&p, 2, &h) || *p++ != ':' ||
	    !take_digits(&p, 2, &mi) || *p++ != ':' || !take_digits(&p, 2, &s))
		goto bad;
	if (*p == '.' && (++p, !take_fraction(&p, &frac)))
		goto bad;
	if (*p == 'Z')
		p++;
	if (*p != '\0')
		goto bad;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > civil_month_days(y, mo) || h > 23 || mi > 59 || s > 59)
		goto bad;
	*out_us = ((civil_days(y, mo, d) * 24 + h) * 60 + mi) * INT64_C(60000000) + s * INT64_C(1000000) + frac;
	return 0;
bad:
	snprintf(err, errlen,
		 "\"%.64s\" is not a time in UTC from 1970 on; write YYYY-MM-DDTHH:MM:SSZ, like 2027-03-28T00:30:00Z",
		 text);
	return -1;
}

void civil_format_iso(int64_t us, char out[21])
{
	int64_t s = civil_floor_div(us, 1000000), days = civil_floor_div(s, CIVIL_DAY), sod = s - days * CIVIL_DAY;
	struct civil_date c = civil_date(days);

	char buf[64];

	/* Years past 9999 do not fit; the callers' horizon ends before. */
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02dZ", (int)(c.year % 10000), c.month, c.day,
		 (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60));
	memcpy(out, buf, 20);
	out[20] = '\0';
}
