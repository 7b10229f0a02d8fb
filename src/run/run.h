/* A run under the lease, from the precheck to the last thread's end: once
 * for a plain run, once a slot for a schedule (schedule.h), the checks, the
 * client library and the observers that outlive the slots set up once
 * around them. */
#ifndef LEADERRUN_RUN_H
#define LEADERRUN_RUN_H

#include <stdbool.h>

#include "cli/options.h"
#include "db/db.h"
#include "lease/lease.h"
#include "outcome.h"
#include "supervisor.h"

/* What the runs of one process share. */
struct run_base {
	struct db_config cfg;
	struct lease_sql sql;
	/* The role's board, pings and webhooks, the metrics file and systemd;
	 * the history's thread is each run's own (run_once). */
	struct observers obs;
	bool left; /* a thread stuck on a dead socket was left behind: the library stays */
};

/* The checks before the lease (COMMAND found, the role's board, the
 * client library), the signals blocked, and the shared observers. False,
 * with OUT filled and said, when the run must not begin. */
bool run_begin(const struct options *o, struct run_base *b, struct outcome *out);

/* One run: its connection, its database thread, its history; SLOT: the
 * scheduled slot it is for, or NULL. Fills OUT. */
void run_once(const struct options *o, struct run_base *b, struct run_slot *slot, struct outcome *out);

/* The shared observers' end, each with a bounded moment. */
void run_end(struct run_base *b);

/* A plain run: run_begin, run_once, run_end. */
void run_plain(const struct options *o, struct outcome *out);

#endif
