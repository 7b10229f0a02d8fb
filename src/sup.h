/* The supervisor's own parts, shared by its files and no one else:
 *
 *   supervisor.c   the whole run in order
 *   sup_loop.c     the one poll(), the reaping, the watchdog, small helpers
 *   sup_wait.c     1. waiting for the lease
 *   sup_hold.c     2.-4. running the command under it, stopping, draining
 *   sup_release.c  5. giving it back
 *
 * hold.c decides what happens while the lease is held; sup_hold.c carries
 * it out and reports it. */
#ifndef LEADERRUN_SUP_H
#define LEADERRUN_SUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "child.h"
#include "db.h"
#include "hold.h"
#include "supervisor.h"

enum { EV_SIGNAL = 1, EV_WORKER = 2, EV_TIMER = 4 };

struct sup {
	const struct options *o;
	struct worker *w;
	struct notify *n;
	struct metrics *m;
	struct history *h;
	struct sdnotify *sd;
	int64_t acquired_at, acquire_sent_at;
	int sigfd, timerfd;
	uint64_t rng;

	/* Signals read but not yet handled. */
	int sigs[32];
	int nsigs;

	/* The lease, once acquired: its term and slot (--slots; 0 when the
	 * lease has one), and the states of the lease and the command. */
	uint64_t term;
	unsigned slot;
	struct hold hold;

	/* The command. */
	struct child child;
	int child_wstatus;
	int exit_status; /* recorded by the release; -1: none */

	bool waiting_on_hint; /* the worker is blocked in the hint's GET_LOCK */
	bool lost_notified;   /* "lost" went to the receivers (once a run) */

	/* The database server of the last answer, and whether its Galera
	 * timing was checked. */
	char server[sizeof(((struct db_server *)0)->name)];
	bool galera_checked;

	/* systemd's watchdog (sup_keepalive): the health it is fed by. */
	bool leading;	      /* the lease is ours: health follows the renews */
	int64_t looked_at;    /* while waiting, the last look that got an answer; 0: none, or it failed */
	int64_t keepalive_at; /* the next WATCHDOG=1 is due */
	const char *cmd;      /* COMMAND's name, for the STATUS= lines */
};

/* sup_loop.c */
int sup_poll(struct sup *s, int64_t at);
int sup_take(struct sup *s, struct worker_result *r);
bool sup_reap(struct sup *s);
const char *sup_signame(int sig);
/* Handles signals while no command runs. Returns the signal that ends the
 * wait, or 0. */
int sup_signals_while_waiting(struct sup *s);
void sup_fmt_dur(char *buf, size_t len, int64_t us);
int64_t sup_jitter(struct sup *s, int64_t lo, int64_t hi);
int64_t sup_min64(int64_t a, int64_t b);

/* sup_wait.c: acquires the lease, waiting for it as the options say.
 * Returns true when held (s->term, s->acquire_sent_at set); false with
 * OUT filled otherwise. */
bool sup_acquire(struct sup *s, struct outcome *out);

/* sup_hold.c: runs the loop until nothing is left of the command. */
void sup_hold(struct sup *s);
void sup_sd_leading(struct sup *s, const char *how);

/* sup_release.c */
void sup_release(struct sup *s);
void sup_abandon_acquire(struct sup *s);

#endif
