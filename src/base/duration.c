#include "duration.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The microseconds in one SUFFIX (none: seconds); 0 for no unit known. */
static int64_t duration_unit(const char *suffix)
{
	if (strcmp(suffix, "ms") == 0)
		return USEC_PER_MSEC;
	if (strcmp(suffix, "s") == 0 || *suffix == '\0')
		return USEC_PER_SEC;
	if (strcmp(suffix, "m") == 0)
		return 60 * USEC_PER_SEC;
	if (strcmp(suffix, "h") == 0)
		return 3600 * USEC_PER_SEC;
	return 0;
}

/* Strict by design: no strtod (it takes "inf", hex, exponents and the
 * locale's decimal point), so every accepted string means one thing. */
int duration_parse(const char *text, int64_t *out_us, char *err, size_t errlen)
{
	const char *p = text, *frac = NULL, *frac_end = NULL;
	int64_t whole = 0, part = 0, unit;
	int digits = 0;

	if (!text || !*text) {
		snprintf(err, errlen, "empty duration; expected a number with unit ms, s, m or h, like 15s");
		return -1;
	}
	if (*p == '-') {
		snprintf(err, errlen, "'%s' is negative; durations must be zero or more", text);
		return -1;
	}
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (whole > (INT64_MAX - 9) / 10)
			goto too_big;
		whole = whole * 10 + (*p - '0');
	}
	if (*p == '.') {
		frac = ++p;
		for (; *p >= '0' && *p <= '9'; p++, digits++)
			;
		frac_end = p;
	}
	if (digits == 0)
		goto bad;

	unit = duration_unit(p);
	if (unit == 0)
		goto bad;

	if (whole > INT64_MAX / unit)
		goto too_big;
	/* floor(0.d1d2...dk * unit), exact for any number of digits: divide
	 * by ten from the last digit up; floor((d*unit + floor(x)) / 10) is
	 * floor((d*unit + x) / 10), and no term exceeds 10 * unit. */
	for (const char *q = frac_end; frac && q > frac; q--)
		part = ((q[-1] - '0') * unit + part) / 10;
	/* The sum may overflow where the whole part did not
	 * ("9223372036854.9s", found by the fuzzer). */
	if (part > INT64_MAX - whole * unit)
		goto too_big;
	*out_us = whole * unit + part;
	return 0;

bad:
	snprintf(err, errlen, "'%s' is not a duration; expected a number with unit ms, s, m or h, like 15s or 500ms",
		 text);
	return -1;
too_big:
	snprintf(err, errlen, "'%s' is too large a duration", text);
	return -1;
}

void duration_format(int64_t us, char *buf, size_t len)
{
	int64_t a = us < 0 ? -us : us;
	const char *sign = us < 0 ? "-" : "";

	if (a != 0 && a % (3600 * USEC_PER_SEC) == 0)
		snprintf(buf, len, "%s%" PRId64 "h", sign, a / (3600 * USEC_PER_SEC));
	else if (a >= USEC_PER_SEC) {
		/* Up to millisecond precision, trailing zeros trimmed. */
		int64_t ms = a / USEC_PER_MSEC;
		int64_t s = ms / 1000, rem = ms % 1000;
		if (rem == 0)
			snprintf(buf, len, "%s%" PRId64 "s", sign, s);
		else if (rem % 100 == 0)
			snprintf(buf, len, "%s%" PRId64 ".%01" PRId64 "s", sign, s, rem / 100);
		else if (rem % 10 == 0)
			snprintf(buf, len, "%s%" PRId64 ".%02" PRId64 "s", sign, s, rem / 10);
		else
			snprintf(buf, len, "%s%" PRId64 ".%03" PRId64 "s", sign, s, rem);
	} else if (a % USEC_PER_MSEC == 0)
		snprintf(buf, len, "%s%" PRId64 "ms", sign, a / USEC_PER_MSEC);
	else
		snprintf(buf, len, "%s%" PRId64 ".%03" PRId64 "ms", sign, a / USEC_PER_MSEC, a % USEC_PER_MSEC);
}
