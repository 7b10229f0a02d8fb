/* The database thread. The C API blocks, and a hung socket must never delay
 * a kill, so every lease statement runs here, on this thread's own
 * connection, and the supervisor only ever waits on worker_fd() next to its
 * signals and timers. One request at a time. */
#ifndef LEADERRUN_WORKER_H
#define LEADERRUN_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include "db/db.h"
#include "lease/hint.h"
#include "lease/lease.h"

/* WORKER_ACQUIRE tries the compare-and-set first (a first attempt, or a
 * follower woken by the hint); WORKER_LOOK reads the row first and writes
 * only when it is free (a waiter's look: one statement while the lease is
 * held); WORKER_WAIT blocks on the wake-up hint; WORKER_CALL runs a
 * function on the connection (worker_submit_call). */
enum worker_op {
	WORKER_ACQUIRE,
	WORKER_LOOK,
	WORKER_RENEW,
	WORKER_RELEASE,
	WORKER_WAIT,
	WORKER_CALL,
	WORKER_STANDBY,
	WORKER_PREEMPT,
	WORKER_SPREAD,
	WORKER_PREPARE, /* prepares the release of a term on the server (lease_prepare_release) */
};

/* A function run on the worker's thread with its connection. */
typedef void worker_call_fn(void *arg, struct db *db);

struct worker_job {
	const char *name, *holder; /* borrowed; must outlive the worker */
	const struct lease_sql *sql;
	int64_t ttl_us;
	const char *fence_user; /* --fence-user: the account the fence lets fence; NULL: leaderrun's own */
	int64_t fence_us;	/* the longest an acquisition's fence move may take after its send: a renew interval */
	int64_t min_hold_us;	/* --min-hold, for the release */
	int64_t period_us;	/* --once-per; 0: off */
	int64_t sched_us;	/* --schedule: the slot this run is for; 0: none */
	int64_t rerun_until_us; /* --catch-up: the end of that slot's window; 0: no rerun */
	unsigned slots;		/* --slots */
	bool wake_hint;		/* use the GET_LOCK wake-up hint (see lease.h) */
	bool several_hosts;	/* the DSN names more than one host */
	/* The candidates' claims (lease/choose.h) in the acquisitions: this
	 * run's --priority, and how long a favourite has to take a free
	 * lease. CHOOSE_ASKED: the run named --priority, --preempt or
	 * --spread, and says when the database cannot hold them. */
	int priority;
	int64_t claim_us;
	bool choose_asked, spread;
};

struct worker_result {
	enum worker_op op;
	enum lease_outcome outcome;
	enum db_status status;
	int64_t sent_at; /* CLOCK_BOOTTIME us before the compare-and-set was sent */
	struct lease_info info;
	/* WORKER_WAIT: how the wait ended; an attempt that did not win:
	 * HINT_KEPT; any result: HINT_OFF once the hint is off; else
	 * HINT_NONE. */
	enum hint_wake wake;
	/* WORKER_ACQUIRE that a WORKER_WAIT sent on its wake-up: how it woke
	 * (HINT_LEADER_GONE, HINT_HANDED_ON); else HINT_NONE. */
	enum hint_wake woke;
	struct db_server server; /* the connection's server; name "" when none */
	/* An acquisition's fence (lease.h): FENCE_MOVED or FENCE_UNAVAILABLE
	 * (then ERR says why); FENCE_ENDED, the stale session it ended. */
	enum lease_fence fence;
	uint64_t fence_ended;
	/* The session that held this waiter's standby lock ended: its row
	 * is to be written again (worker_submit_standby). */
	bool standby_lost;
	/* WORKER_RENEW, revoked: why, and for whom. WORKER_PREEMPT: LEASE_OK when
	 * the holder's term was revoked, LEASE_BUSY when not (its priority
	 * is not below ours, or the term is over). WORKER_SPREAD: LEASE_OK when
	 * this host is the one to take the lease now (spread.h), else LEASE_BUSY. */
	struct lease_revoker handover;
	/* A failure: the server's error number (db_errno; 0 when it gave
	 * none), and its words for a message. */
	unsigned errnum;
	char err[384];
};

struct worker;

/* Starts the thread, which owns DB from now on (db_abort aside) and copies
 * JOB. Returns NULL on failure (DB is then still the caller's). */
struct worker *worker_start(struct db *db, const struct worker_job *job);

/* Readable when a result is ready. */
int worker_fd(const struct worker *w);

/* Queues OP (TERM for renew and release, 0 otherwise; EXIT_STATUS, or -1,
 * for the release's record). An attempt that does not win gives the hint
 * back, unless the leader whose end woke this follower still holds the
 * row (HINT_KEPT, hint.h). Returns -1 if busy. */
int worker_submit(struct worker *w, enum worker_op op, uint64_t term, int exit_status);

/* A wait: up to TIMEOUT_US on SLOT's hint, if TERM's leader holds it;
 * or, BEHIND not NULL, behind the standby lock BEHIND (hint_wait_behind).
 * THEN_ACQUIRE (the hint only): woken by it, the worker goes on to the
 * acquisition at once, and its result comes as WORKER_ACQUIRE's (with
 * .woke), unless worker_wait_no_further came first. */
struct worker_wait {
	unsigned slot;
	uint64_t term;
	const char *behind;
	int64_t timeout_us;
	bool then_acquire;
};

/* Queues WORKER_WAIT for WAIT. Returns -1 if busy. */
int worker_submit_wait(struct worker *w, const struct worker_wait *wait);

/* Calls off the acquisition of the wait in progress (worker_submit_wait).
 * Returns true when it has gone out already: its result is to be taken,
 * and what it took given back. */
bool worker_wait_no_further(struct worker *w);

/* Queues WORKER_CALL: FN(ARG, db) on the worker's connection as it is,
 * without connecting (FN sees whether it is connected). Only once the
 * lease work is over: the connection stays open after the release for it,
 * until worker_quit. Returns -1 if busy. */
int worker_submit_call(struct worker *w, worker_call_fn *fn, void *arg);

/* Queues WORKER_STANDBY: this waiter's row and lock in the standbys'
 * table (standby.h), HEALTHY or not. Returns -1 if busy. */
int worker_submit_standby(struct worker *w, bool healthy);

/* Queues WORKER_PREEMPT: revokes TERM of HOLDER if its priority is below
 * this run's (choose_preempt). Returns -1 if busy. */
int worker_submit_preempt(struct worker *w, uint64_t term, const char *holder);

/* What goes into the release's own transaction (a short run's history
 * row, history_parked_sql): SQL(ARG, BUF, LEN) renders it, or returns
 * false for nothing; DONE(ARG, DB, ERRNUM, MSG) hears how it went (ERRNUM
 * 0: done), on the worker's thread. Where the release goes statement by
 * statement, neither is called: the run's end (sup_end_run) has the row
 * written on the same connection after it (worker_submit_call). */
struct worker_release_with {
	bool (*sql)(void *arg, char *buf, size_t len);
	void (*done)(void *arg, struct db *db, unsigned errnum, const char *msg);
	void *arg;
	/* The same statements with the values known only at the end as '?'s
	 * (history_close_kept): for the release that WORKER_PREPARE prepares
	 * while the command runs, and their values at its end. */
	bool (*kept)(void *arg, char *buf, size_t len, struct db_value vals[3]);
};
void worker_release_also(struct worker *w, const struct worker_release_with *also);

/* Waits until no request is queued or running (the release's follow-up
 * included), up to UNTIL (CLOCK_BOOTTIME us). Returns 0, or -1 at UNTIL.
 * Only once the caller takes no more results. */
int worker_wait_idle(struct worker *w, int64_t until);

int worker_busy(struct worker *w);

/* Takes the finished result. Returns 0, or -1 if none is ready. */
int worker_take(struct worker *w, struct worker_result *out);

/* Cuts the statement in progress short (its result reports an error). */
void worker_abort(struct worker *w);

/* Asks the thread to close its connection and end once the request in
 * progress (if any) is done and its result posted, without waiting:
 * worker_stop then finds it ending, or ended. The close (a COM_QUIT, so the
 * server counts no aborted connection) overlaps what the caller does next. */
void worker_quit(struct worker *w);

/* Stops the thread and frees it and its db. A worker stuck in a call is
 * left behind to free itself if the call ever returns: the process is about
 * to exit, and waiting for it is exactly what must never happen. Returns 0
 * if joined, -1 if left behind (then the client library must stay up). */
int worker_stop(struct worker *w);

#endif
