/* What worker.c (the queue, the thread's life) and worker_op.c (what the
 * thread does for each request) share; private to them. */
#ifndef LEADERRUN_WORKER_INT_H
#define LEADERRUN_WORKER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/bgthread.h"
#include "lease/hint.h"
#include "lease/lease.h"
#include "lease/standby.h"
#include "worker.h"

/* One request: what worker_queue copies in, and the thread out. */
struct worker_req {
	enum worker_op op;
	uint64_t term;
	int exit_status;
	unsigned hint;			   /* WORKER_WAIT: the slot whose hint to block on */
	int64_t wait_us;		   /* WORKER_WAIT: how long at most */
	bool healthy;			   /* WORKER_STANDBY */
	char holder[LEASE_HOLDER_MAX + 1]; /* WORKER_PREEMPT: the holder of TERM */
	char behind[48];		   /* WORKER_WAIT: a standby's lock to wait behind; "": the hint */
	bool then_acquire;		   /* WORKER_WAIT: woken by the hint, acquire (worker_submit_wait) */
};

struct worker {
	struct bgthread t;
	struct db *db;
	struct worker_job job; /* its strings and sql point at the copies below */
	struct lease_sql sql;
	char *name, *holder;
	struct hint hint;	     /* on this thread's session; only this thread touches it */
	unsigned slot;		     /* the slot this run holds, once acquired */
	int64_t slot_us;	     /* --once-per: the slot this run contends for, once known */
	int pipe[2];		     /* [0] polled by the supervisor, [1] written here */
	char lock[STANDBY_LOCK_MAX]; /* this run's standby lock (standby.h) */
	bool choose_said;	     /* the claims' absence was said */
	bool stray_said;	     /* a lease row of another count was said (lease_info's stray) */

	/* Guarded by t.lock (t.quit: end now; t.detached: abandoned by
	 * worker_stop, the thread frees it all). quit_after: worker_quit
	 * came while busy. */
	bool pending, running, done, quit_after;
	/* A wait's acquisition on its wake-up: called off by the supervisor
	 * (then_off), or gone out (then_sent). */
	bool then_off, then_sent;
	struct worker_req req;
	worker_call_fn *call;
	void *call_arg;
	struct worker_release_with also;
	struct worker_result result;
};

/* Runs request Q into R, on the worker's thread. */
void worker_run_op(struct worker *w, const struct worker_req *q, struct worker_result *r);

#endif
