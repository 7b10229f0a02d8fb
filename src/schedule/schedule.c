/* A schedule's slots. A crontab time is matched in local time, and local
 * time is UTC plus the zone's offset, which tzoffsets.c read as a table:
 * between two changes the slots are the local matches less the offset.
 * At a change, cronie's rule (cron.c, "case 2" and "case 3" of its main
 * loop), which tells a "wildcard" job, whose minute or hour field begins
 * with '*', from a fixed-time one:
 *  - spring (the offset grows, local times are skipped): a wildcard job
 *    runs only the times that exist; a fixed-time job runs the skipped
 *    times at once, just after the change. Several skipped times make one
 *    slot, at the instant of the change.
 *  - autumn (the offset shrinks, local times repeat): a wildcard job runs
 *    by the clock, both times; a fixed-time job runs the first time only.
 * @every's slots ignore the zone: multiples of its period since the
 * epoch, as --once-per counts them. */
#include "schedule.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/duration.h"
#include "civil.h"

#define US INT64_C(1000000)

/* The first slot of a crontab time at or after second T. */
static int64_t cron_next(const struct schedule *s, int64_t t)
{
	const struct tzoffsets *z = &s->zone;

	if (t < z->lo)
		t = z->lo;
	for (int i = tzoffsets_find(z, t); i < z->n && t <= z->hi; i++) {
		int64_t a = z->change[i].at, b = i + 1 < z->n ? z->change[i + 1].at - 1 : z->hi;
		int64_t from = t > a ? t : a, local;
		int32_t off = z->change[i].off, before = i > 0 ? z->change[i - 1].off : off;

		if (from > b)
			continue;
		/* Spring: local [a + before, a + off) never comes. */
		if (off > before && !s->cron.wild && a >= t && cronspec_next(&s->cron, a + before, a + off - 1) >= 0)
			return a;
		local = cronspec_next(&s->cron, from + off, b + off);
		/* Autumn: local [a + off, a + before) comes again. */
		if (local >= 0 && off < before && !s->cron.wild && local < a + before)
			local = cronspec_next(&s->cron, a + before, b + off);
		if (local >= 0)
			return local - off;
	}
	return -1;
}

/* The latest slot of a crontab time at or before second T: the last of
 * the slots after T - W, for a window W that doubles until it holds one
 * (a slot found forwards is a slot by the same rules). */
static int64_t cron_prev(const struct schedule *s, int64_t t)
{
	const struct tzoffsets *z = &s->zone;

	if (t > z->hi)
		t = z->hi;
	for (int64_t w = 120;; w *= 2) {
		int64_t from = t - w > z->lo ? t - w : z->lo, last = -1;

		for (int64_t x = cron_next(s, from); x >= 0 && x <= t; x = cron_next(s, x + 1))
			last = x;
		if (last >= 0 || from == z->lo)
			return last;
	}
}

int64_t schedule_next(const struct schedule *s, int64_t after_us)
{
	/* The first whole second strictly after AFTER_US. */
	int64_t t = civil_floor_div(after_us, US) + 1, slot;

	if (s->every) {
		slot = (civil_floor_div(t - 1, s->every_s) + 1) * s->every_s;
		if (slot < 0)
			slot = 0;
		return slot <= s->zone.hi ? slot * US : -1;
	}
	slot = cron_next(s, t);
	return slot < 0 ? -1 : slot * US;
}

int64_t schedule_prev(const struct schedule *s, int64_t at_us)
{
	int64_t t = civil_floor_div(at_us, US), slot;

	if (t < s->zone.lo)
		return -1;
	if (s->every) {
		slot = civil_floor_div(t > s->zone.hi ? s->zone.hi : t, s->every_s) * s->every_s;
		return slot * US;
	}
	slot = cron_prev(s, t);
	return slot < 0 ? -1 : slot * US;
}

int64_t schedule_count(const struct schedule *s, int64_t after_us, int64_t upto_us, int64_t limit)
{
	int64_t n = 0;

	if (upto_us <= after_us || limit <= 0)
		return 0;
	if (s->every) {
		int64_t a = civil_floor_div(after_us, US), u = civil_floor_div(upto_us, US);
		if (a < -1)
			a = -1;
		if (u > s->zone.hi)
			u = s->zone.hi;
		n = u < 0 ? 0 : civil_floor_div(u, s->every_s) - civil_floor_div(a, s->every_s);
		return n < 0 ? 0 : n < limit ? n : limit;
	}
	for (int64_t t = schedule_next(s, after_us); n < limit && t >= 0 && t <= upto_us; t = schedule_next(s, t))
		n++;
	return n;
}

void schedule_format(int64_t us, char out[21])
{
	civil_format_iso(us, out);
}

int schedule_parse_time(const char *text, int64_t *out_us, char *err, size_t errlen)
{
	return civil_parse_iso(text, out_us, err, errlen);
}

/* The @ names: cronie's meaning of each, as the five fields it sets. */
static const char *const at_names[][2] = {
    {"hourly", "0 * * * *"},  {"daily", "0 0 * * *"},  {"midnight", "0 0 * * *"}, {"weekly", "0 0 * * 0"},
    {"monthly", "0 0 1 * *"}, {"yearly", "0 0 1 1 *"}, {"annually", "0 0 1 1 *"},
};

/* @every DURATION: whole seconds, 1 s to 366 days. duration.c's units
 * and days ("1d", "1.5d"), which no other option takes. */
static int parse_every(struct schedule *s, const char *text, char *err, size_t errlen)
{
	char d[64], why[160];
	size_t len;
	int64_t us, days;

	text += strspn(text, " \t");
	len = strcspn(text, " \t");
	/* Printable, so that duration.c's message, which quotes it, is one
	 * line of text (a byte past ASCII was found by fuzz_cronspec). */
	for (size_t i = 0; i < len && len < sizeof(d); i++)
		if (text[i] <= ' ' || text[i] >= 0x7f)
			len = sizeof(d);
	if (len >= sizeof(d) || text[len + strspn(text + len, " \t")] != '\0') {
		snprintf(err, errlen, "@every takes one DURATION, like @every 10m");
		return -1;
	}
	memcpy(d, text, len);
	d[len] = '\0';
	days = len > 1 && d[len - 1] == 'd' ? 24 : 1;
	if (days > 1)
		d[len - 1] = 'h';
	if (duration_parse(d, &us, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "@every: %s", days > 1 ? "expected a number of days, like 1d or 1.5d" : why);
		return -1;
	}
	if (days > 1)
		d[len - 1] = 'd';
	if (us > SCHEDULE_EVERY_MAX * US || (us *= days) < US || us > SCHEDULE_EVERY_MAX * US || us % US != 0) {
		snprintf(err, errlen, "@every %s is out of range; use whole seconds from 1s to 366d", d);
		return -1;
	}
	s->every = true;
	s->every_s = us / US;
	return 0;
}

/* SPEC's shape: @every, an @ name, or five fields. */
static int parse_spec(struct schedule *s, const char *spec, char *err, size_t errlen)
{
	const char *p = spec + strspn(spec, " \t");
	size_t len;

	if (*p != '@')
		return cronspec_parse(&s->cron, p, err, errlen);
	len = strcspn(p, " \t");
	if (len == 6 && strncasecmp(p, "@every", 6) == 0)
		return parse_every(s, p + 6, err, errlen);
	for (size_t i = 0; i < sizeof(at_names) / sizeof(at_names[0]); i++)
		if (len == strlen(at_names[i][0]) + 1 && strncasecmp(p + 1, at_names[i][0], len - 1) == 0 &&
		    p[len + strspn(p + len, " \t")] == '\0')
			return cronspec_parse(&s->cron, at_names[i][1], err, errlen);
	len = strspn(p, "@ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789");
	snprintf(err, errlen,
		 "\"%.*s\" is no schedule; use @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually, "
		 "@every DURATION or five fields",
		 (int)(len < 40 ? len : 40), p);
	return -1;
}

int schedule_parse(struct schedule *s, const char *spec, const char *tz, int64_t from_us, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	if (parse_spec(s, spec, err, errlen) < 0)
		return SCHEDULE_BAD_SPEC;
	if (!s->every && !cronspec_can_match(&s->cron)) {
		char shown[64];
		size_t i = 0;
		for (; spec[i] && i + 1 < sizeof(shown); i++)
			shown[i] = spec[i] >= ' ' && spec[i] < 0x7f ? spec[i] : '?';
		shown[i] = '\0';
		snprintf(err, errlen, "\"%s\" never matches: no month it names has a day of the month it names", shown);
		return SCHEDULE_BAD_SPEC;
	}
	if (tzoffsets_load(&s->zone, tz, civil_floor_div(from_us, US), err, errlen) < 0)
		return SCHEDULE_BAD_ZONE;
	/* @every counts from the epoch in UTC, whatever the zone (which had
	 * to exist all the same). */
	if (s->every)
		tzoffsets_load(&s->zone, NULL, 0, err, errlen);
	return 0;
}
