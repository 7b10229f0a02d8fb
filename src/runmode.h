/* The two things leaderrun does: set the table up, or run a command. */
#ifndef LEADERRUN_RUNMODE_H
#define LEADERRUN_RUNMODE_H

#include "options.h"
#include "outcome.h"

void runmode_init(const struct options *o, struct outcome *out);
void runmode_run(const struct options *o, struct outcome *out);

#endif
