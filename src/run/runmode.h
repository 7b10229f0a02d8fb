/* A run of a command, and what the modes that connect share (admin/). */
#ifndef LEADERRUN_RUNMODE_H
#define LEADERRUN_RUNMODE_H

#include "cli/options.h"
#include "db/db.h"
#include "outcome.h"

/* The connection settings that O describes. */
void runmode_db_config(const struct options *o, struct db_config *c);

/* The connection settings of O into CFG, the client library loaded for
 * them, and the warning about an unverified networked host. -1, with OUT
 * filled and the reason logged, when the library cannot be loaded. */
int runmode_library(const struct options *o, struct db_config *cfg, struct outcome *out);

/* Initialises the client library and connects for a one-shot mode (--init,
 * --status, --release, --check). NULL, with OUT filled and the reason
 * logged, on failure. */
struct db *runmode_open(const struct options *o, struct outcome *out);
void runmode_close(struct db *db);

/* The outcome a database failure ends a mode with. */
enum outcome_kind runmode_outcome_of(enum db_status st);
/* The warning for a networked host with --ssl-mode DISABLED, if any. */
void runmode_warn_unverified(const struct options *o);

#endif
