/* --schedule SPEC --next N [--from TIME]: prints the next N slots after
 * TIME, in UTC, and makes no connection: a SPEC checked before it is
 * deployed. */
#include "nextslots.h"

#include <stdio.h>

#include "report/log.h"
#include "schedule/schedule.h"

void nextslots_run(const struct options *o, struct outcome *out)
{
	int64_t t = o->from_us;
	char when[21];

	for (int i = 0; i < o->next_count; i++) {
		t = schedule_next(&o->schedule, t);
		if (t < 0) {
			/* A SPEC that matches at all matches within 28 years. */
			log_error("--next: no slot within the %d years after the last one printed", TZOFFSETS_YEARS);
			out->kind = OUTCOME_INTERNAL;
			return;
		}
		schedule_format(t, when);
		printf("%s\n", when);
	}
	out->kind = fflush(stdout) == 0 ? OUTCOME_INIT_DONE : OUTCOME_INTERNAL;
}
