/* --schedule: COMMAND under the lease at every slot of the schedule, on
 * every instance that runs it, until a signal stops it. */
#ifndef LEADERRUN_CRON_H
#define LEADERRUN_CRON_H

#include "cli/options.h"
#include "outcome.h"

void cron_run(const struct options *o, struct outcome *out);

#endif
