/* The supervisor's own parts, shared by its files and no one else:
 *
 *   supervisor.c   the whole run in order
 *   sup_loop.c     the one poll(), the reaping, the watchdog, small helpers
 *   sup_wait.c     1. waiting for the lease
 *   sup_hold.c     2.-4. running the command under it, stopping, draining
 *   sup_end.c      5. giving it back: the end of every run
 *
 * hold.c decides what happens while the lease is held; sup_hold.c carries
 * it out and emits its events (event.h), which say it. */
#ifndef LEADERRUN_SUP_H
#define LEADERRUN_SUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "child.h"
#include "db/db.h"
#include "hold.h"
#include "report/event.h"
#include "supervisor.h"

/* What ended a sup_poll. */
enum { WOKE_SIGNAL = 1, WOKE_WORKER = 2, WOKE_TIMER = 4 };

struct sup {
	const struct options *o;
	struct worker *w;
	/* Where the run's events go, with the run's lease, term, slot and
	 * the command's exit status once known (event.h). */
	struct events ev;
	int64_t acquire_sent_at;
	int sigfd, timerfd;
	uint64_t rng;

	/* Signals read but not yet handled. */
	int sigs[32];
	int nsigs;

	/* The states of the lease and the command, once acquired. */
	struct hold hold;

	/* The command. */
	struct child child;
	int child_wstatus;

	bool waiting_on_hint; /* the worker is blocked in the hint's GET_LOCK */

	/* Whether the Galera timing of the server was checked. */
	bool galera_checked;

	/* systemd's watchdog (sup_keepalive): the health it is fed by. */
	bool leading;	      /* the lease is ours: health follows the renews */
	int64_t looked_at;    /* while waiting, the last look that got an answer; 0: none, or it failed */
	int64_t keepalive_at; /* the next WATCHDOG=1 is due */
};

/* sup_loop.c */
int sup_poll(struct sup *s, int64_t at);
int sup_take(struct sup *s, struct worker_result *r);
bool sup_reap(struct sup *s);
/* Handles signals while no command runs. Returns the signal that ends the
 * wait, or 0. */
int sup_signals_while_waiting(struct sup *s);
int64_t sup_jitter(struct sup *s, int64_t lo, int64_t hi);
int64_t sup_min64(int64_t a, int64_t b);

/* sup_wait.c: acquires the lease, waiting for it as the options say.
 * Returns true when held (s->ev.term, s->acquire_sent_at set); false with
 * OUT filled otherwise. */
bool sup_acquire(struct sup *s, struct outcome *out);

/* sup_hold.c: runs the loop until nothing is left of the command. */
void sup_hold(struct sup *s);

/* sup_end.c: the one end of every run, whatever ended it (not acquired,
 * not started, or the command's end): the last events, the release, the
 * run's history row. OUT as the run left it; the lost, timed-out and
 * finished outcomes are set here. */
void sup_end_run(struct sup *s, struct outcome *out);

#endif
