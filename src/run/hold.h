/* The lease loop's decisions while it holds the lease: which state the
 * lease and the command are in, and what to do next given that state and
 * the time. Pure: no clock, no signal, no database, no log. The supervisor
 * tells it what happened (a renew's answer, the command's exit, the time)
 * and carries out the actions it returns, then emits its events; the unit
 * tests (tests/unit/test_hold.c) drive it with made-up times.
 *
 * The events are the event table's own names (report/event_id.h), chosen
 * here to the variant (the first failed renew or a later one; late while
 * stopping or while killing), the command's exit among them: the supervisor
 * adds their details and emits them as they are. The one thing only it can
 * know, whether a signal found anything left of the command, hold_says
 * judges from its count.
 *
 * The transitions, beside tests/model/leaderrun.pml's HOLD phase:
 *
 *   lease  HELD --renew fails--> FAILING --renews again--> HELD
 *          HELD, FAILING --stop time passes--> LATE (renewing goes on)
 *          any --renew finds the row taken--> LOST (no more renewing)
 *          any but LOST --renew finds our term revoked--> REVOKED (idem)
 *
 *   command RUNNING --lease LATE or REVOKED, --max-runtime--> STOPPING
 *           RUNNING --the command exits--> DRAINING
 *           RUNNING, STOPPING, DRAINING --lease LOST, the deadline, the
 *                   grace after the kill signal--> KILLING
 *           any --nothing left of the command--> REAPED
 *
 * KILLING is not left until REAPED: SIGKILL goes again at every wake-up,
 * because a killed process orphans its children to leaderrun only once it
 * is dead, and one that forks meanwhile leaves a child no scan saw. */
#ifndef LEADERRUN_HOLD_H
#define LEADERRUN_HOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/duration.h"
#include "base/timing.h"
#include "report/event_id.h"

enum hold_lease {
	HOLD_HELD,    /* the last renew succeeded */
	HOLD_FAILING, /* renews fail; retried at short steps until the stop time */
	HOLD_LATE,    /* no renew by the stop time; renewing goes on, the command stops */
	HOLD_LOST,    /* a renew found the row someone else's */
	HOLD_REVOKED, /* --release revoked our term: released after the reap */
};

enum hold_cmd {
	CMD_RUNNING,  /* the command runs, not signalled */
	CMD_STOPPING, /* the kill signal went out; SIGKILL at the deadline or after the grace */
	CMD_DRAINING, /* the command exited; what it left got the kill signal, SIGKILL after the grace */
	CMD_KILLING,  /* SIGKILL went out, and goes again until nothing is left */
	CMD_REAPED,   /* nothing is left of the command: the loop ends */
};

/* The renew in flight, if any. */
enum hold_attempt {
	ATTEMPT_NONE, /* none: the next goes out at next_renew */
	ATTEMPT_SENT, /* on the worker; cut off after the attempt budget */
	ATTEMPT_CUT,  /* cut off (db_abort); its answer is still awaited */
};

/* What the supervisor must do now, in this order. */
enum hold_act {
	ACT_STOP = 1 << 0,     /* the kill signal to the group and every descendant */
	ACT_KILL = 1 << 1,     /* SIGKILL to the group and every descendant */
	ACT_DEADLINE = 1 << 2, /* move the watcher's deadline (a renew succeeded) */
	ACT_CUT = 1 << 3,      /* cut off the renew in flight (worker_abort) */
	ACT_RENEW = 1 << 4,    /* send a renew (then hold_renew_sent) */
};

struct hold {
	enum hold_lease lease;
	enum hold_cmd cmd;
	enum hold_attempt attempt;
	bool exited;	/* the command itself is reaped (what it left may not be) */
	bool timed_out; /* --max-runtime ran out: 124, unless the lease went too */
	unsigned failures;
	unsigned kill_rounds;
	int64_t sent_at;       /* send time of the last successful acquire or renew */
	int64_t next_renew;    /* when the next renew goes out (ATTEMPT_NONE) */
	int64_t attempt_at;    /* when the renew in flight went out */
	int64_t stop_sent_at;  /* CMD_STOPPING: when the kill signal went out */
	int64_t drain_kill_at; /* CMD_DRAINING: when SIGKILL is due */
	int64_t runtime_end;   /* the spawn + --max-runtime; 0: no limit */
};

/* What one step asks for: actions, and the events to emit after them, in
 * the order they happened. */
struct hold_step {
	unsigned acts;
	int nevents;
	enum event_id events[4];
};

/* The state at the spawn: the lease held from SENT_AT, the first renew due
 * a renew interval after it, and --max-runtime's end (0: none). */
void hold_start(struct hold *h, const struct timing *t, int64_t sent_at, int64_t runtime_end);

/* A renew's answer. OK: SENT_AT is when it went out. */
enum hold_renew { RENEW_OK, RENEW_FAILED, RENEW_REVOKED, RENEW_LOST };
void hold_on_renew(struct hold *h, const struct timing *t, enum hold_renew r, int64_t sent_at, int64_t now,
		   struct hold_step *out);

/* The command exited; NOW is when its exit was seen. EV_EXITED, then
 * EV_LEFT_BEHIND for what it left (the kill signal). */
void hold_on_exit(struct hold *h, const struct timing *t, int64_t now, struct hold_step *out);

/* --service: leading must end now, the lease still fine (a failed promote,
 * a failed health check, a stop asked of leaderrun): the stop a late
 * lease gets (ACT_STOP, which runs --on-demote; SIGKILL at the deadline or
 * after the grace), with EV_STEPPING_DOWN. Nothing when a stop began. */
void hold_step_down(struct hold *h, int64_t now, struct hold_step *out);

/* --service: --on-demote failed: SIGKILL now, and until nothing is left. */
void hold_kill(struct hold *h, struct hold_step *out);

/* The time is NOW: the deadlines that passed, and the renew schedule.
 * WORKER_BUSY: the worker has a call in flight. */
void hold_on_time(struct hold *h, const struct timing *t, int64_t now, bool worker_busy, struct hold_step *out);

/* A renew went out at NOW (after ACT_RENEW, when the worker took it). */
void hold_renew_sent(struct hold *h, int64_t now);

/* Nothing is left of the command. */
void hold_on_reaped(struct hold *h);

/* The next instant something is due, or 0 for none. */
int64_t hold_next_wake(const struct hold *h, const struct timing *t, int64_t now, bool worker_busy);

/* Whether renews still go out: the lease is neither lost nor revoked. */
bool hold_renewing(const struct hold *h);

/* Healthy enough to feed systemd's watchdog: the last renew succeeded and
 * nothing is stopping. */
bool hold_healthy(const struct hold *h, const struct timing *t, int64_t now);

/* The lease's local deadlines (timing.h), from the last successful send. */
int64_t hold_deadline(const struct hold *h, const struct timing *t);
int64_t hold_stop_at(const struct hold *h, const struct timing *t);

/* Whether a step's event ID is emitted, given how many processes the step's
 * kill signal (STOPPED) and SIGKILL (KILLED) reached: what the command
 * left is spoken of only when there was something to signal. */
bool hold_says(enum event_id id, int stopped, int killed);

/* Names, for logs and tests. */
const char *hold_lease_name(enum hold_lease s);
const char *hold_cmd_name(enum hold_cmd s);

#endif
