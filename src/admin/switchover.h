/* leaderrun --release LEASE --to HOLDER: a planned switch-over to a named
 * standby (lease/choose.h). */
#ifndef LEADERRUN_SWITCHOVER_H
#define LEADERRUN_SWITCHOVER_H

#include "cli/options.h"
#include "db/db.h"
#include "lease/lease.h"
#include "run/outcome.h"

/* How long past the holder's expiry the named standby alone may take the
 * lease: it is woken by the release at once, or looks at its
 * --retry-interval; then anyone may. */
#define SWITCHOVER_WINDOW_US (10 * USEC_PER_SEC)

void switchover_run(const struct options *o, struct db *db, struct lease_sql *sql, struct outcome *out);

#endif
