/* Run history writes (schema 4): one row per run, inserted once the run
 * has lasted HISTORY_BEGIN_DELAY_US and closed when it ends; a run that
 * ends sooner is written whole at its end, one statement instead of two
 * (most of what a short run paid for its history).
 *
 * While the lease is held they go out on a thread and a connection of
 * their own, never through the database worker: the worker's every
 * statement then is a renew's or on the way to one, and a history table
 * that is locked, missing or not granted must never cost a renew any time.
 * A run's end waits for the release instead and rides in its transaction
 * on the lease's connection, which has nothing left to do: a short run's
 * whole row, a longer one's close (no connect of its own on the way to the
 * exit, no second writer beside a handover). Each write is bounded by HISTORY_TIMEOUT_S;
 * a failure is logged once (with the way to fix it), then its recovery,
 * counted in the metrics, and never touches the lease or the command. */
#ifndef LEADERRUN_HISTORY_H
#define LEADERRUN_HISTORY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/timing.h"
#include "db/db.h"
#include "lease/history_sql.h"
#include "metrics.h"

#define HISTORY_TIMEOUT_S 2u

/* How long a run goes unrecorded: long enough for a short command (a cron
 * line's `true`, a quick check) to end first, short enough that a run whose
 * leaderrun is SIGKILLed, or whose host dies, nearly always leaves its
 * open ("vanished") row. */
#define HISTORY_BEGIN_DELAY_US (100 * USEC_PER_MSEC)

/* One run in --history-keep / this many (by term) prunes the lease's old
 * runs: up to that fraction more are kept between prunings. */
#define HISTORY_PRUNE_SLACK 10u

struct history;

/* Whose runs the history keeps: LEASE's by HOLDER, in HISTORY_TABLE
 * beside LEASE_TABLE, KEEP of them per lease (0: no history). */
struct history_of {
	const char *history_table, *lease_table, *lease, *holder;
	unsigned keep;
};

/* Copies what it needs. CFG's timeouts are lowered to HISTORY_TIMEOUT_S.
 * NULL when OF->keep is 0. */
struct history *history_start(const struct db_config *cfg, const struct history_of *of, struct metrics *m);

/* The run of TERM began: the acquire was sent at ACQUIRED_AT
 * (CLOCK_BOOTTIME us). */
void history_begin(struct history *h, unsigned slot, uint64_t term, int64_t acquired_at);

/* When the start row falls due (CLOCK_BOOTTIME us), for the caller's
 * timer; 0: nothing waits for a time. At or after it, history_tick starts
 * the thread that writes it. Main thread only, like history_finish. */
int64_t history_due(struct history *h);
void history_tick(struct history *h, int64_t now);

/* The run ended: OUTCOME is one of HISTORY_*; EXIT_STATUS / SIG (-1:
 * none) what the command's wait status said. */
void history_end(struct history *h, const char *outcome, int exit_status, int sig);

/* After history_end: whether the run's end is still to be written (the
 * whole row, or the close of the row its start inserted), by the
 * release's transaction, history_write_parked or else history_finish. */
bool history_parked(struct history *h);

/* Writes the parked row (see history_parked) on DB, a live connection of
 * another thread's: the lease's, after its release, where it costs no
 * connect. Runs on the caller's thread, with DB's timeouts.
 * Writes nothing when nothing is parked or DB is not connected;
 * history_finish then writes it on the history's own connection. ARG is
 * the struct history. */
void history_write_parked(void *arg, struct db *db);

/* The parked row as statements (values in them, sqltext.h) for the
 * release's own transaction on the lease's connection: no statement or
 * commit of its own. Fills OUT (LEN bytes) and returns true, or
 * false when nothing is parked (or it does not fit). history_parked_done
 * then says how it went, on DB's thread: ERRNUM 0, written; else the
 * server's error and MSG, and the row is not tried again. ARG is the
 * struct history. */
bool history_parked_sql(void *arg, char *out, size_t len);
void history_parked_done(void *arg, struct db *db, unsigned errnum, const char *msg);

/* The close of the row inserted at the run's start, as history_parked_sql
 * gives it, but with its outcome, exit status and signal as '?'s (in that
 * order), for a release prepared while the command runs: KEPT NULL, before
 * the run has ended; else, once it has (parked), their values into KEPT.
 * False when the row is not in (or, KEPT given, not parked). */
bool history_close_kept(void *arg, char *out, size_t len, struct db_value kept[3]);

/* The run is over: the thread ends once nothing is left for it to write
 * (a parked row keeps it, for history_finish), without waiting for it. */
void history_quit(struct history *h);

/* Waits for the writes until UNTIL (CLOCK_BOOTTIME us), then stops.
 * Returns 0, or -1 if a write hung and its thread was left behind (then
 * the client library must stay up). */
int history_finish(struct history *h, int64_t until);

#endif
