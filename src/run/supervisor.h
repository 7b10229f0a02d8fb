/* The lease loop: wait for the lease, run COMMAND under it, stop COMMAND
 * before the lease can lapse, reap everything, release. */
#ifndef LEADERRUN_SUPERVISOR_H
#define LEADERRUN_SUPERVISOR_H

#include <signal.h>

#include "cli/options.h"
#include "lease/lease.h"
#include "outcome.h"
#include "report/history.h"
#include "report/metrics.h"
#include "report/notify.h"
#include "report/sdnotify.h"
#include "worker.h"

/* Blocks the signals the supervisor takes synchronously. Call before any
 * thread starts, so that every thread inherits the mask and signals reach
 * the supervisor's signalfd only. */
void supervisor_block_signals(void);

/* What the run reports besides the log: notifications, the metrics file,
 * the run history and systemd. Each may be NULL; none can delay the loop. */
struct observers {
	struct notify *n;
	struct metrics *m;
	struct history *h;
	struct sdnotify *sd;
	struct role *role; /* --role-file, --role-http: always one, publishing nowhere without them */
};

/* --schedule: the slot that a run is for (schedule.c), and what the run
 * tells of it. */
struct run_slot {
	int64_t at_us;	  /* the slot's time, us since the epoch (UTC) */
	int64_t give_up;  /* CLOCK_BOOTTIME: the end of the wait for it */
	unsigned attempt; /* once acquired: 1 for the slot's first run */
	bool ended;	  /* the command ended by itself (whatever its status) */
	bool stop;	  /* TERM, INT or QUIT came: the schedule ends after this run */
	/* The lease's last slot as the run's last look read it (a later slot
	 * another instance started meanwhile); 0: not read. */
	int64_t last_slot_us;
	bool last_lost; /* its last attempt has no exit yet (lost, or running), and was not revoked */
	/* The wall clock as the release that the server took went out: the
	 * lease was the run's until then; 0: no such release. */
	int64_t released_us;
};

/* Runs O->command under the lease. W executes the statements. The
 * process's environment is the base of the command's (and the hooks').
 * SLOT: the scheduled slot the run is for, NULL for a run of its own.
 * Fills OUT. */
void supervisor_run(const struct options *o, struct worker *w, const struct observers *obs, struct run_slot *slot,
		    struct outcome *out);

#endif
