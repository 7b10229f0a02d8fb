/* A zone's UTC offsets, read from the C library rather than from the
 * TZif file: no new library, no parser of our own for a format with
 * three versions and a POSIX rule for the years past its table, and the
 * static (musl) binary reads the same files. The price is that the C
 * library reads the zone from TZ, which is process-wide: so TZ is set,
 * the offsets sampled with localtime_r over the whole span, and TZ
 * restored exactly (or unset) before anything else runs. This runs while
 * the options are parsed, before any thread exists, and COMMAND's
 * environment, made from environ later, never sees the change. */
#include "tzoffsets.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "civil.h"

#define SPAN_END INT64_C(253402300799) /* 9999-12-31T23:59:59Z */
/* Sampled once a week: a change and its undoing less than a week apart
 * would be missed, and no zone has such a pair in its rules from now on
 * (the closest, Morocco's around Ramadan, are a month apart). Daily
 * sampling cost 33 ms a start, weekly 5 ms (50 years of Europe/Berlin,
 * glibc 2.36). */
#define SAMPLE_STEP (7 * CIVIL_DAY)

/* An IANA name: letters, digits, '_', '+', '-', '/' between parts, no
 * part that climbs out of the zoneinfo folder. */
static bool zone_name_ok(const char *zone)
{
	size_t len = strlen(zone);

	if (len == 0 || len > 100 || zone[0] == '/' || zone[0] == '.' || strstr(zone, "/.") || strstr(zone, "//"))
		return false;
	return strspn(zone, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+-/.") == len;
}

/* The zone's file, in $TZDIR or the folders glibc and musl look in;
 * a TZif file, not a folder or anything else. */
static bool zone_file(const char *zone, char *path, size_t len)
{
	const char *dirs[] = {getenv("TZDIR"), "/usr/share/zoneinfo", "/share/zoneinfo", "/etc/zoneinfo"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char magic[4];
		int fd;
		bool tzif;

		if (!dirs[i] || dirs[i][0] != '/')
			continue;
		if ((size_t)snprintf(path, len, "%s/%s", dirs[i], zone) >= len)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		tzif = read(fd, magic, 4) == 4 && memcmp(magic, "TZif", 4) == 0;
		close(fd);
		if (tzif)
			return true;
	}
	return false;
}

static int32_t offset_at(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	return localtime_r(&tt, &tm) ? (int32_t)tm.tm_gmtoff : 0;
}

/* Sampled from lo to hi; a change between two samples found to the
 * second by bisection. TZ names the zone. */
static int sample(struct tzoffsets *z, char *err, size_t errlen)
{
	int64_t t = z->lo;
	int32_t off = offset_at(t);

	z->n = 1;
	z->change[0].at = t;
	z->change[0].off = off;
	while (t < z->hi) {
		int64_t u = t + SAMPLE_STEP < z->hi ? t + SAMPLE_STEP : z->hi, a = t;

		if (offset_at(u) == off) {
			t = u;
			continue;
		}
		/* offset_at(a) == off, offset_at(u) != off. */
		while (u - a > 1) {
			int64_t mid = a + (u - a) / 2;
			*(offset_at(mid) == off ? &a : &u) = mid;
		}
		if (z->n == TZOFFSETS_MAX) {
			snprintf(err, errlen, "the time zone changes its offset more than %d times in %d years",
				 TZOFFSETS_MAX, TZOFFSETS_YEARS);
			return -1;
		}
		off = offset_at(u);
		z->change[z->n].at = t = u;
		z->change[z->n++].off = off;
	}
	return 0;
}

int tzoffsets_load(struct tzoffsets *z, const char *zone, int64_t from, char *err, size_t errlen)
{
	char path[512], tz[520], *saved;
	const char *old;
	int rc;

	memset(z, 0, sizeof(*z));
	if (!zone || strcmp(zone, "UTC") == 0) {
		z->hi = SPAN_END;
		z->n = 1;
		return 0;
	}
	if (!zone_name_ok(zone) || !zone_file(zone, path, sizeof(path))) {
		snprintf(
		    err, errlen,
		    "unknown time zone \"%.100s\"; give an IANA name like Europe/Berlin or UTC (the system's are in "
		    "/usr/share/zoneinfo, package tzdata)",
		    zone_name_ok(zone) ? zone : "?");
		return -1;
	}
	z->lo = from - TZOFFSETS_BACK > 0 ? from - TZOFFSETS_BACK : 0;
	z->hi = from + TZOFFSETS_YEARS * 36525 * CIVIL_DAY / 100;
	if (z->hi > SPAN_END)
		z->hi = SPAN_END;
	old = getenv("TZ");
	saved = old ? strdup(old) : NULL;
	if (old && !saved) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* ":/path": the file itself, in glibc and in musl alike. */
	snprintf(tz, sizeof(tz), ":%s", path);
	setenv("TZ", tz, 1);
	tzset();
	rc = sample(z, err, errlen);
	if (saved)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	tzset();
	free(saved);
	return rc;
}

int tzoffsets_find(const struct tzoffsets *z, int64_t t)
{
	int lo = 0, hi = z->n - 1;

	/* The last change at or before T. */
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (z->change[mid].at <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}
