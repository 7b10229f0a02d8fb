#include "galera.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

int64_t galera_parse_duration(const char *p, const char **end)
{
	/* Units after the 'T' and before it; 'M' means minutes after 'T'. */
	static const struct {
		char unit;
		bool time;
		int64_t us;
	} units[] = {
	    {'D', false, 86400000000},
	    {'H', true, 3600000000},
	    {'M', true, 60000000},
	    {'S', true, 1000000},
	};
	int64_t total = 0;
	bool in_time = false, any = false;
	size_t next = 0; /* units must come in order, each at most once */

	if (*p++ != 'P')
		return -1;
	for (;;) {
		int64_t whole = 0, frac = 0, scale = 1;
		bool digits = false;

		if (*p == 'T' && !in_time) {
			in_time = true;
			p++;
			continue;
		}
		for (; *p >= '0' && *p <= '9'; p++, digits = true)
			if ((whole = whole * 10 + (*p - '0')) > 100000000)
				return -1;
		if (*p == '.' || *p == ',') {
			for (p++; *p >= '0' && *p <= '9'; p++, digits = true)
				if (scale < 1000000) {
					frac = frac * 10 + (*p - '0');
					scale *= 10;
				}
		}
		if (!digits)
			break;
		while (next < sizeof(units) / sizeof(units[0]) &&
		       (units[next].unit != *p || units[next].time != in_time))
			next++;
		if (next == sizeof(units) / sizeof(units[0]))
			return -1;
		total += whole * units[next].us + frac * (units[next].us / scale);
		next++;
		p++;
		any = true;
	}
	if (!any)
		return -1;
	if (end)
		*end = p;
	return total;
}

int64_t galera_suspect_timeout_us(const char *opts)
{
	static const char key[] = "evs.suspect_timeout";
	const char *p = opts;

	while ((p = strstr(p, key))) {
		/* A whole key: at the start or after "; ". */
		bool starts = p == opts || p[-1] == ' ' || p[-1] == ';';
		const char *v = p + sizeof(key) - 1, *end;
		int64_t us;

		p = v;
		if (!starts)
			continue;
		while (*v == ' ')
			v++;
		if (*v++ != '=')
			continue;
		while (*v == ' ')
			v++;
		us = galera_parse_duration(v, &end);
		return us > 0 && (*end == ';' || *end == ' ' || *end == '\0') ? us : 0;
	}
	return 0;
}

const char *galera_state_name(int64_t state)
{
	switch (state) {
	case 1:
		return "1 Joining";
	case 2:
		return "2 Donor/Desynced";
	case 3:
		return "3 Joined";
	case GALERA_SYNCED:
		return "4 Synced";
	case 0:
		return "0 Initialized";
	default:
		return "unknown";
	}
}
