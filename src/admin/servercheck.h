/* --check-server: connects to every host of the DSN, one after
 * the other, and says of each whether the assumptions of SAFETY and
 * REPLICATION (leaderrun-safety(7)) hold there, one line each
 * (db/promise.h words them); --json: one JSON array of them all. */
#ifndef LEADERRUN_SERVERCHECK_H
#define LEADERRUN_SERVERCHECK_H

#include "cli/options.h"
#include "run/outcome.h"

/* OUT: done (exit 0) when every assumption held on every host; "no" (1)
 * when one did not, or is unknown; a database failure's when no host
 * could be reached. */
void servercheck_run(const struct options *o, struct outcome *out);

#endif
