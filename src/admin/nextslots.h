/* --schedule SPEC --next N: the schedule's next N slots, one a line. */
#ifndef LEADERRUN_NEXTSLOTS_H
#define LEADERRUN_NEXTSLOTS_H

#include "cli/options.h"
#include "run/outcome.h"

void nextslots_run(const struct options *o, struct outcome *out);

#endif
