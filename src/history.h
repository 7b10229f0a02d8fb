/* Run history writes (schema 4): one row per run, inserted after the
 * acquisition and closed when the run ends.
 *
 * They go out on a thread and a connection of their own, never through the
 * database worker: the worker's every statement is a renew's or on the way
 * to one, and a history table that is locked, missing or not granted must
 * never cost a renew any time. Each write has a short timeout of its own
 * (HISTORY_TIMEOUT_S); a failure is logged once (with the way to fix it),
 * then its recovery, counted in the metrics, and never touches the lease or
 * the command. */
#ifndef LEADERRUN_HISTORY_H
#define LEADERRUN_HISTORY_H

#include <stdint.h>

#include "db.h"
#include "history_sql.h"
#include "metrics.h"

#define HISTORY_TIMEOUT_S 2u

struct history;

/* Copies what it needs. CFG's timeouts are lowered to HISTORY_TIMEOUT_S.
 * KEEP: runs kept per lease (0: no history, returns NULL). */
struct history *history_start(const struct db_config *cfg, const char *history_table, const char *lease_table,
			      const char *lease, const char *holder, unsigned keep, struct metrics *m);

/* The run of TERM began: the acquire was sent at ACQUIRED_AT
 * (CLOCK_BOOTTIME us). */
void history_begin(struct history *h, unsigned slot, uint64_t term, int64_t acquired_at);

/* The run ended: OUTCOME is one of HISTORY_*; EXIT_STATUS / SIG (-1:
 * none) what the command's wait status said. */
void history_end(struct history *h, const char *outcome, int exit_status, int sig);

/* Waits for the writes until UNTIL (CLOCK_BOOTTIME us), then stops.
 * Returns 0, or -1 if a write hung and its thread was left behind (then
 * the client library must stay up). */
int history_finish(struct history *h, int64_t until);

#endif
