/* --init: the tables the lease needs, made or upgraded. */
#ifndef LEADERRUN_INIT_H
#define LEADERRUN_INIT_H

#include "cli/options.h"
#include "run/outcome.h"

void init_run(const struct options *o, struct outcome *out);

#endif
