/* crontab(5)'s five fields, read as Vixie cron and cronie read them: a
 * field is a list of items, each '*', a number or a name, or a range, with
 * an optional /step; a field "is restricted" unless it begins with '*'.
 * Where they refuse what other crons accept, the reading here is the one
 * python3-croniter and the others share (N/S is N-high/S; cronie refuses
 * it); leaderrun(1)'s SCHEDULES lists each difference. */
#include "cronspec.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "civil.h"

#define FIELD_MAX 100 /* characters of one field, past which it is refused */

struct field_def {
	const char *name;
	int low, high;
	const char *const *names; /* names[i] is the value low + i; NULL: none */
	const char *allowed;	  /* for messages */
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
					  "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const dow_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

static const struct field_def field_defs[5] = {
    {"minute", 0, 59, NULL, "0-59"},
    {"hour", 0, 23, NULL, "0-23"},
    {"day-of-month", 1, 31, NULL, "1-31"},
    {"month", 1, 12, month_names, "1-12 or jan-dec"},
    {"day-of-week", 0, 7, dow_names, "0-7 or sun-sat (0 and 7 are Sunday)"},
};

enum item_fault { ITEM_OK, ITEM_SYNTAX, ITEM_RANGE, ITEM_BACKWARDS, ITEM_STEP };

/* One value at *P: digits, or one of the field's three-letter names
 * (case-insensitive). */
static enum item_fault take_value(const struct field_def *f, const char **p, int *out)
{
	const char *s = *p;
	long n = 0;

	if (*s >= '0' && *s <= '9') {
		for (; *s >= '0' && *s <= '9'; s++)
			if ((n = n * 10 + (*s - '0')) > 1000)
				return ITEM_RANGE;
		*p = s;
		*out = (int)n;
		return n < f->low || n > f->high ? ITEM_RANGE : ITEM_OK;
	}
	for (int i = 0; f->names && f->names[i]; i++)
		if (strncasecmp(s, f->names[i], 3) == 0 && !((s[3] | 0x20) >= 'a' && (s[3] | 0x20) <= 'z')) {
			*p = s + 3;
			*out = f->low + i;
			return ITEM_OK;
		}
	return ITEM_SYNTAX;
}

/* The /STEP after a range: 1 to 1000. */
static enum item_fault take_step(const struct field_def *f, const char **p, int *step)
{
	const char *s = *p;
	int n = 0;

	if (*s < '0' || *s > '9')
		return ITEM_SYNTAX;
	for (; *s >= '0' && *s <= '9'; s++)
		if ((n = n * 10 + (*s - '0')) > 1000)
			return ITEM_STEP;
	*p = s;
	*step = n;
	/* Any step from 1, as cronie and croniter take it (*\/90 in the
	 * minutes is minute 0). */
	return n < 1 ? ITEM_STEP : ITEM_OK;
}

/* One item of a list, from S to END, into BITS (bit v for value v). */
static enum item_fault parse_item(const struct field_def *f, const char *s, const char *end, uint64_t *bits)
{
	int lo = f->low, hi = f->high, step = 1;
	enum item_fault e;

	if (*s == '*') {
		s++;
	} else {
		if ((e = take_value(f, &s, &lo)) != ITEM_OK)
			return e;
		hi = lo;
		if (*s == '-') {
			s++;
			if ((e = take_value(f, &s, &hi)) != ITEM_OK)
				return e;
		} else if (*s == '/') {
			/* N/S: from N to the field's end, as croniter and
			 * most crons read it. */
			hi = f->high;
		}
		/* cronie's sat-sun (6-0): up to 7, the other Sunday. */
		if (f->high == 7 && hi == 0 && lo > 0)
			hi = 7;
		if (lo > hi)
			return ITEM_BACKWARDS;
	}
	if (*s == '/') {
		s++;
		if ((e = take_step(f, &s, &step)) != ITEM_OK)
			return e;
	}
	if (s != end)
		return ITEM_SYNTAX;
	for (int v = lo; v <= hi; v += step)
		*bits |= UINT64_C(1) << v;
	return ITEM_OK;
}

/* The field's text as a message may quote it: blanks and control
 * characters are not in a field, anything past printable ASCII shown as
 * '?'. */
static void field_shown(const char *text, char *out, size_t len)
{
	size_t i = 0;

	for (; text[i] && i + 1 < len; i++)
		out[i] = text[i] > ' ' && text[i] < 0x7f ? text[i] : '?';
	out[i] = '\0';
}

static void field_fault(const struct field_def *f, const char *text, enum item_fault e, char *err, size_t errlen)
{
	char shown[FIELD_MAX + 1];

	field_shown(text, shown, sizeof(shown));
	if (e == ITEM_RANGE)
		snprintf(err, errlen, "the %s field \"%s\" is out of range %s", f->name, shown, f->allowed);
	else if (e == ITEM_BACKWARDS)
		snprintf(err, errlen, "the %s field \"%s\" has a range that goes backwards; write it low-high (%s)",
			 f->name, shown, f->allowed);
	else if (e == ITEM_STEP)
		snprintf(err, errlen, "the %s field \"%s\" has a step out of range; a step is 1 to 1000", f->name,
			 shown);
	else
		snprintf(err, errlen,
			 "the %s field \"%s\" is not cron's; use %s, '*', lists (1,5), ranges (1-5) and steps (*/15, "
			 "1-30/5)",
			 f->name, shown, f->allowed);
}

/* One field, TEXT (LEN characters), into BITS. */
static int parse_field(const struct field_def *f, const char *text, size_t len, uint64_t *bits, char *err,
		       size_t errlen)
{
	char field[FIELD_MAX + 1];
	const char *item, *comma;
	enum item_fault e = ITEM_SYNTAX;

	if (len > FIELD_MAX) {
		snprintf(err, errlen, "the %s field is longer than %d characters", f->name, FIELD_MAX);
		return -1;
	}
	memcpy(field, text, len);
	field[len] = '\0';
	*bits = 0;
	for (item = field;; item = comma + 1) {
		comma = strchr(item, ',');
		if (!comma)
			comma = field + len;
		if (comma == item || (e = parse_item(f, item, comma, bits)) != ITEM_OK)
			break;
		if (!*comma)
			return 0;
	}
	field_fault(f, field, e, err, errlen);
	return -1;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

int cronspec_parse(struct cronspec *c, const char *text, char *err, size_t errlen)
{
	uint64_t bits[5];
	const char *p = text, *start[6];
	size_t len[6];
	int n = 0;

	while (*p) {
		while (is_blank(*p))
			p++;
		if (!*p)
			break;
		if (n == 6)
			break;
		start[n] = p;
		while (*p && !is_blank(*p))
			p++;
		len[n] = (size_t)(p - start[n]);
		n++;
	}
	if (n != 5) {
		snprintf(err, errlen,
			 "%s; cron's has five fields (minute hour day-of-month month day-of-week), or is @hourly, "
			 "@daily, @weekly, @monthly, @yearly or @every DURATION",
			 n < 5 ? "too few fields" : "too many fields");
		return -1;
	}
	for (int i = 0; i < 5; i++)
		if (parse_field(&field_defs[i], start[i], len[i], &bits[i], err, errlen) < 0)
			return -1;
	memset(c, 0, sizeof(*c));
	c->minutes = bits[0];
	c->hours = (uint32_t)bits[1];
	c->doms = (uint32_t)bits[2];
	c->months = (uint16_t)bits[3];
	/* 7 is Sunday too. */
	c->dows = (uint8_t)((bits[4] | bits[4] >> 7) & 0x7f);
	c->wild = *start[0] == '*' || *start[1] == '*';
	c->dom_star = *start[2] == '*';
	c->dow_star = *start[4] == '*';
	return 0;
}

bool cronspec_can_match(const struct cronspec *c)
{
	/* Either day field matches: every week has a day of the week named. */
	if (!c->dom_star && !c->dow_star)
		return true;
	/* Both must: a month named must have a day named (29 February in a
	 * leap year); the weekdays of a date cycle through all seven. */
	for (int m = 1; m <= 12; m++)
		for (int d = 1; d <= civil_month_days(2000, m); d++)
			if ((c->months >> m & 1) && (c->doms >> d & 1))
				return true;
	return false;
}

bool cronspec_day_matches(const struct cronspec *c, int64_t days)
{
	struct civil_date d = civil_date(days);
	bool dom = c->doms >> d.day & 1, dow = c->dows >> civil_weekday(days) & 1;

	return c->dom_star || c->dow_star ? dom && dow : dom || dow;
}

/* The lowest bit of BITS at FROM or above (up to 63), or -1. */
static int bit_from(uint64_t bits, int from)
{
	for (int i = from; i < 64; i++)
		if (bits >> i & 1)
			return i;
	return -1;
}

int64_t cronspec_next(const struct cronspec *c, int64_t from, int64_t upto)
{
	int64_t t = civil_floor_div(from + 59, 60) * 60;

	/* Each turn moves T to the next month, day, hour or minute that may
	 * match, so a year is at most a few hundred turns. */
	while (t <= upto) {
		int64_t days = civil_floor_div(t, CIVIL_DAY), sod = t - days * CIVIL_DAY;
		struct civil_date d = civil_date(days);
		int h = (int)(sod / 3600), m = (int)(sod / 60 % 60), h2, m2;

		if (!(c->months >> d.month & 1)) {
			t = civil_days(d.year + (d.month == 12), d.month % 12 + 1, 1) * CIVIL_DAY;
			continue;
		}
		if (!cronspec_day_matches(c, days) || (h2 = bit_from(c->hours, h)) < 0) {
			t = (days + 1) * CIVIL_DAY;
			continue;
		}
		if ((m2 = bit_from(c->minutes, h2 > h ? 0 : m)) < 0) {
			t = days * CIVIL_DAY + (h2 + 1) * 3600;
			continue;
		}
		t = days * CIVIL_DAY + h2 * 3600 + m2 * 60;
		return t <= upto ? t : -1;
	}
	return -1;
}
