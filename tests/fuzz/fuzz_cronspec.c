/* libFuzzer target: schedule_parse (src/schedule/cronspec.c and the @
 * forms of schedule.c) on SPECs in UTC, and the slots it then gives.
 *
 * Checks, besides memory safety and signed overflow (UBSan):
 *  - five fields are accepted exactly when a reference reading written
 *    apart (below, straight from crontab(5) and leaderrun(1)'s SCHEDULES)
 *    accepts them and some day can match, with the same bit sets and the
 *    same '*'-led flags; a refusal is one printable line;
 *  - on any accepted SPEC: the next slot after a time is after it and
 *    matches the fields by cron's day rule, the one after that is later,
 *    prev of a slot is the slot, prev just before it is a slot whose next
 *    is it, and count sees the two. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz_common.h"
#include "schedule/civil.h"
#include "schedule/schedule.h"

#define ERRLEN 400
#define FROM   (INT64_C(1806111000) * 1000000) /* 2027-03-27T01:30:00Z */

static const char *const months[] = {"jan", "feb", "mar", "apr", "may", "jun",
				     "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const days[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

/* A value of field F: digits, or a name; -1 if neither or out of range. */
static long ref_value(const char *s, size_t len, int f, int low, int high)
{
	long v = 0;

	if (len == 3 && (f == 3 || f == 4))
		for (int i = 0; i < (f == 3 ? 12 : 7); i++)
			if (strncasecmp(s, f == 3 ? months[i] : days[i], 3) == 0)
				return (f == 3 ? 1 : 0) + i;
	if (len == 0)
		return -1;
	/* Any number of digits (leading zeros too), as cronie's atoi. */
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v > 100000 ? v : v * 10 + (s[i] - '0');
	}
	return v < low || v > high ? -1 : v;
}

/* One item from S to E into *BITS; false if refused. */
static bool ref_item(const char *s, const char *e, int f, int low, int high, uint64_t *bits)
{
	const char *slash = memchr(s, '/', (size_t)(e - s)), *be = slash ? slash : e, *dash;
	long a, b, step = 1;

	if (slash) {
		if (slash + 1 == e)
			return false;
		step = 0;
		for (const char *q = slash + 1; q < e; q++) {
			if (*q < '0' || *q > '9')
				return false;
			step = step > 100000 ? step : step * 10 + (*q - '0');
		}
		if (step < 1 || step > 1000)
			return false;
	}
	if (be - s == 1 && *s == '*') {
		a = low;
		b = high;
	} else if ((dash = memchr(s, '-', (size_t)(be - s))) != NULL) {
		a = ref_value(s, (size_t)(dash - s), f, low, high);
		b = ref_value(dash + 1, (size_t)(be - dash - 1), f, low, high);
		if (f == 4 && b == 0 && a > 0)
			b = 7;
		if (a < 0 || b < 0 || a > b)
			return false;
	} else {
		a = ref_value(s, (size_t)(be - s), f, low, high);
		if (a < 0)
			return false;
		b = slash ? high : a;
	}
	for (long v = a; v <= b; v += step)
		*bits |= UINT64_C(1) << v;
	return true;
}

static bool ref_field(const char *s, size_t len, int f, uint64_t *bits)
{
	static const int low[] = {0, 0, 1, 1, 0}, high[] = {59, 23, 31, 12, 7};
	const char *e = s + len;

	*bits = 0;
	if (len > 100)
		return false;
	for (const char *item = s;;) {
		const char *comma = memchr(item, ',', (size_t)(e - item)), *ie = comma ? comma : e;
		if (ie == item || !ref_item(item, ie, f, low[f], high[f], bits))
			return false;
		if (!comma)
			return true;
		item = comma + 1;
	}
}

/* The five fields of TEXT; false if refused. */
static bool ref_spec(const char *text, uint64_t bits[5], bool star[5])
{
	const char *p = text;
	int n = 0;

	for (;;) {
		const char *start;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			return n == 5;
		if (n == 5)
			return false;
		start = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		star[n] = *start == '*';
		if (!ref_field(start, (size_t)(p - start), n, &bits[n]))
			return false;
		n++;
	}
}

static bool ref_can_match(const uint64_t bits[5], const bool star[5])
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	if (!star[2] && !star[4])
		return true;
	for (int m = 1; m <= 12; m++)
		for (int d = 1; d <= mdays[m - 1]; d++)
			if ((bits[3] >> m & 1) && (bits[2] >> d & 1))
				return true;
	return false;
}

/* Whether second T (UTC) matches C by cron's rules. */
static bool slot_matches(const struct cronspec *c, int64_t t)
{
	int64_t day = civil_floor_div(t, CIVIL_DAY), sod = t - day * CIVIL_DAY;
	struct civil_date d = civil_date(day);

	return sod % 60 == 0 && (c->minutes >> (sod / 60 % 60) & 1) && (c->hours >> (sod / 3600) & 1) &&
	       (c->months >> d.month & 1) && cronspec_day_matches(c, day);
}

static void check_slots(const struct schedule *s)
{
	int64_t t1 = schedule_next(s, FROM), t2, p;

	FUZZ_CHECK(t1 > FROM, "next after %lld is %lld", (long long)FROM, (long long)t1);
	FUZZ_CHECK(t1 % 1000000 == 0, "a slot off the second: %lld", (long long)t1);
	if (s->every)
		FUZZ_CHECK(t1 / 1000000 % s->every_s == 0, "@every slot %lld", (long long)t1);
	else
		FUZZ_CHECK(slot_matches(&s->cron, t1 / 1000000), "slot %lld does not match", (long long)t1);
	t2 = schedule_next(s, t1);
	FUZZ_CHECK(t2 > t1 || t2 == -1, "next after %lld is %lld", (long long)t1, (long long)t2);
	FUZZ_CHECK(schedule_prev(s, t1) == t1, "prev of slot %lld is not it", (long long)t1);
	p = schedule_prev(s, t1 - 1);
	FUZZ_CHECK(p < t1, "prev before %lld is %lld", (long long)t1, (long long)p);
	if (p >= 0)
		FUZZ_CHECK(schedule_next(s, p) == t1, "next after prev %lld is not %lld", (long long)p, (long long)t1);
	if (t2 > 0)
		FUZZ_CHECK(schedule_count(s, FROM, t2, 10) == 2, "count up to the second slot");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstring(data, size), *err = fuzz_buffer(ERRLEN);
	struct schedule *s = malloc(sizeof(*s));
	uint64_t bits[5];
	bool star[5], ref = false, at = text[strspn(text, " \t")] == '@';
	int rc;

	if (!s)
		abort();
	if (!at)
		ref = ref_spec(text, bits, star) && ref_can_match(bits, star);
	rc = schedule_parse(s, text, NULL, FROM, err, ERRLEN);
	if (rc != 0) {
		FUZZ_CHECK(rc == SCHEDULE_BAD_SPEC, "'%s': schedule_parse returned %d", text, rc);
		FUZZ_CHECK(fuzz_terminated(err, ERRLEN) && err[0], "'%s' refused without a message", text);
		for (const char *q = err; *q; q++)
			FUZZ_CHECK(*q >= ' ' && *q < 0x7f, "'%s': the message has byte %d: %s", text, *q, err);
		FUZZ_CHECK(at || !ref, "'%s' refused, the reference accepts it: %s", text, err);
	} else {
		FUZZ_CHECK(at || ref, "'%s' accepted, the reference refuses it", text);
		if (!at) {
			const struct cronspec *c = &s->cron;
			FUZZ_CHECK(c->minutes == bits[0] && c->hours == bits[1] && c->doms == bits[2] &&
				       c->months == bits[3] && c->dows == ((bits[4] | bits[4] >> 7) & 0x7f),
				   "'%s': the fields differ from the reference's", text);
			FUZZ_CHECK(c->wild == (star[0] || star[1]) && c->dom_star == star[2] && c->dow_star == star[4],
				   "'%s': the '*' flags differ", text);
		}
		check_slots(s);
	}
	free(s);
	free(err);
	free(text);
	return 0;
}
