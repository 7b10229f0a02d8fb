/* libFuzzer target: duration_parse and duration_format.
 *
 * Checks, besides memory safety and signed overflow (UBSan):
 *  - the accepted language is exactly DIGITS[.DIGITS][ms|s|m|h] with at
 *    least one digit, and a value is accepted iff it fits in int64 µs;
 *  - an accepted value is >= 0 and equals an exact reference computed in
 *    128-bit arithmetic from all the digits, rounded towards zero at the
 *    microsecond as duration.h says, however many fraction digits;
 *  - duration_format of any accepted value fits the 32-byte buffers its
 *    callers use, survives any smaller buffer, and parses back: exactly
 *    below 1 s and for whole hours, else truncated to the millisecond (its
 *    documented precision). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/duration.h"
#include "fuzz_common.h"

#define ERRLEN		  160 /* what options.c passes */
#define FORMAT_CALLER_BUF 32  /* timing.c's buffers */

typedef __int128 i128;

/* Exact value of TEXT per the grammar, or -1 when it is not in the grammar,
 * or -2 when it does not fit in int64. */
static i128 reference(const char *text)
{
	const char *p = text, *int_start, *frac_start;
	size_t int_len, frac_len;
	i128 whole = 0, unit, v;
	int big = 0;

	int_start = p;
	while (*p >= '0' && *p <= '9')
		p++;
	int_len = (size_t)(p - int_start);
	frac_start = p;
	frac_len = 0;
	if (*p == '.') {
		frac_start = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		frac_len = (size_t)(p - frac_start);
	}
	if (int_len + frac_len == 0)
		return -1;
	if (strcmp(p, "ms") == 0)
		unit = 1000;
	else if (strcmp(p, "s") == 0 || *p == '\0')
		unit = 1000000;
	else if (strcmp(p, "m") == 0)
		unit = (i128)60 * 1000000;
	else if (strcmp(p, "h") == 0)
		unit = (i128)3600 * 1000000;
	else
		return -1;

	for (size_t i = 0; i < int_len; i++) {
		whole = whole * 10 + (int_start[i] - '0');
		if (whole > INT64_MAX) {
			big = 1;
			break;
		}
	}
	if (big || whole * unit > INT64_MAX)
		return -2;

	/* floor(0.DIGITS * unit): multiply the decimal digit string by unit
	 * (a few digits longer), then drop frac_len digits. */
	v = whole * unit;
	if (frac_len > 0) {
		size_t len = frac_len + 12;
		unsigned char *dig = calloc(len, 1);
		uint64_t carry = 0;
		i128 f = 0;
		if (!dig)
			abort();
		/* dig holds the digits right-aligned, most significant first. */
		memcpy(dig + 12, frac_start, frac_len);
		for (size_t i = 12; i < len; i++)
			dig[i] = (unsigned char)(dig[i] - '0');
		for (size_t i = len; i-- > 0;) {
			uint64_t x = (uint64_t)dig[i] * (uint64_t)unit + carry;
			dig[i] = (unsigned char)(x % 10);
			carry = x / 10;
		}
		FUZZ_CHECK(carry == 0, "reference: carry left over");
		for (size_t i = 0; i < 12; i++)
			f = f * 10 + dig[i];
		free(dig);
		FUZZ_CHECK(f < unit, "reference: fraction not below one unit");
		v += f;
	}
	return v > INT64_MAX ? -2 : v;
}

static void check_format(int64_t us)
{
	char *buf = fuzz_buffer(FORMAT_CALLER_BUF);
	char err[ERRLEN];
	int64_t back = -1, expect;
	size_t len;

	duration_format(us, buf, FORMAT_CALLER_BUF);
	len = strlen(buf);
	FUZZ_CHECK(len < FORMAT_CALLER_BUF - 1, "duration_format(%lld) = '%s' fills a %d-byte buffer", (long long)us,
		   buf, FORMAT_CALLER_BUF);
	FUZZ_CHECK(duration_parse(buf, &back, err, sizeof(err)) == 0, "duration_format(%lld) = '%s' does not parse: %s",
		   (long long)us, buf, err);
	if (us < USEC_PER_SEC || us % (3600 * USEC_PER_SEC) == 0)
		expect = us;
	else
		expect = us - us % USEC_PER_MSEC;
	FUZZ_CHECK(back == expect, "duration_format(%lld) = '%s' parses back as %lld, not %lld", (long long)us, buf,
		   (long long)back, (long long)expect);

	/* Every shorter buffer: truncated, terminated, never overrun. */
	for (size_t cap = 1; cap <= len; cap++) {
		char *small = fuzz_buffer(cap);
		duration_format(us, small, cap);
		FUZZ_CHECK(strlen(small) == cap - 1 && strncmp(small, buf, cap - 1) == 0,
			   "duration_format(%lld) into %zu bytes = '%s'", (long long)us, cap, small);
		free(small);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstring(data, size);
	char *err = fuzz_buffer(ERRLEN);
	int64_t us = INT64_MIN;
	i128 ref = reference(text);
	int rc;

	rc = duration_parse(text, &us, err, ERRLEN);

	if (rc < 0) {
		FUZZ_CHECK(rc == -1, "duration_parse returned %d", rc);
		FUZZ_CHECK(fuzz_terminated(err, ERRLEN) && err[0], "'%s' rejected without a message", text);
		FUZZ_CHECK(ref < 0, "'%s' (%lld us) rejected: %s", text, (long long)ref, err);
	} else {
		FUZZ_CHECK(rc == 0, "duration_parse returned %d", rc);
		FUZZ_CHECK(us >= 0, "'%s' parsed to negative %lld", text, (long long)us);
		FUZZ_CHECK(ref != -1, "'%s' accepted as %lld but is not in the grammar", text, (long long)us);
		FUZZ_CHECK(ref != -2, "'%s' accepted as %lld but does not fit in int64 microseconds", text,
			   (long long)us);
		FUZZ_CHECK(us == ref, "'%s' parsed to %lld, exact value %lld", text, (long long)us, (long long)ref);
		check_format(us);
	}
	free(err);
	free(text);
	return 0;
}
