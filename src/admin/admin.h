/* The operator's modes: --status, --release and --check. Each makes one
 * connection, runs its statements, prints to stdout and returns. */
#ifndef LEADERRUN_ADMIN_H
#define LEADERRUN_ADMIN_H

#include "cli/options.h"
#include "run/outcome.h"

void admin_run(const struct options *o, struct outcome *out);

#endif
