/* The supervisor's own parts, shared by its files and no one else (which
 * file does what: src/run/ in src/README.md). hold.c decides what happens
 * while the lease is held; sup_hold.c carries it out and emits its events
 * (event.h), which say it. */
#ifndef LEADERRUN_SUP_H
#define LEADERRUN_SUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "child.h"
#include "db/db.h"
#include "health.h"
#include "hold.h"
#include "report/event.h"
#include "supervisor.h"

/* What ended a sup_poll. */
enum { WOKE_SIGNAL = 1, WOKE_WORKER = 2, WOKE_TIMER = 4 };

/* --service (sup_service.c): the hook that runs, and where the term is. */
enum hook_kind { HOOK_NONE, HOOK_PROMOTE, HOOK_DEMOTE };
struct service {
	pid_t hook; /* the hook that runs (its group too); 0: none */
	enum hook_kind kind;
	int hook_wstatus;  /* once reaped; -1: not yet */
	bool leader;	   /* promoted, and no step-down began */
	bool demoting;	   /* a step-down began: --on-demote runs, or the service is stopped */
	bool demoted;	   /* the term ended in a clean demote: standing by again */
	bool killed;	   /* the demote failed or was late: the service was killed (76) */
	bool clearing;	   /* the demote exited 0: what the term's hooks left is being killed */
	int64_t demote_at; /* when the step-down began */
	/* --promote-timeout: a promote still running then is killed. */
	int64_t promote_until;
	/* What the term's hooks started (sup_service_clear): their groups
	 * (promote, demote), and when the first of them started (clock ticks
	 * after boot). A group is the term's while its number is pinned: by
	 * its anchor (child_anchor) or its leader, the hook, until both are
	 * reaped (sup_service_unpin); 0 after. */
	pid_t groups[2];
	pid_t anchors[2];    /* 0: reaped, or none could be made */
	bool hook_reaped[2]; /* the group's leader */
	unsigned long long since;

	/* Across terms: */
	int stop_sig;		  /* TERM, INT or QUIT asked leaderrun to stop */
	unsigned failed_promotes; /* in a row: the pause before competing again doubles */
};

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

	struct service svc;

	/* --health-cmd (sup_health.c). */
	struct health health;
	pid_t health_pid; /* the check that runs; 0: none */
	bool health_down; /* leading ended because the check failed */
	/* Standing by: the lease's holder and term as last seen, for the
	 * role's readers. */
	char seen_leader[LEASE_HOLDER_MAX + 1];
	uint64_t seen_term;
	/* This waiter's row in the standbys' table (standby.h): written once
	 * a wait, again after its session ended or its health changed;
	 * standby_off: no table to keep it in. */
	bool standby_written, standby_off;
	/* The term was revoked by a preemption or a switch-over (the worker
	 * asked why), for HANDOVER_BY; or an operator's --release. */
	enum lease_handover handover;
	char handover_by[LEASE_HOLDER_MAX + 1];
	char *const *environ_base; /* the environment COMMAND and the hooks start from */
	struct run_slot *slot;	   /* --schedule's slot; NULL: none */
	bool asked_to_stop;	   /* TERM, INT or QUIT went to the command while it ran */

	/* Whether the Galera timing of the server was checked. */
	bool galera_checked;

	/* systemd's watchdog (sup_keepalive): the health it is fed by. */
	bool leading;	      /* the lease is ours: health follows the renews */
	bool release_asked;   /* WORKER_PREPARE went for this term (sup_hold.c) */
	int64_t preparing_at; /* when it went, while it is in flight; 0: not */
	int64_t looked_at;    /* while waiting, the last look that got an answer; 0: none, or it failed */
	int64_t keepalive_at; /* the next WATCHDOG=1 is due */
};

/* sup_loop.c */
int sup_poll(struct sup *s, int64_t at);
int sup_take(struct sup *s, struct worker_result *r);
bool sup_reap(struct sup *s);
/* Handles signals while no command runs (or a service stands by). Returns
 * the signal that ends the wait, SIGCHLD when the service exited, or 0. */
int sup_signals_while_waiting(struct sup *s);
int64_t sup_jitter(struct sup *s, int64_t lo, int64_t hi);
int64_t sup_min64(int64_t a, int64_t b);
/* True once the command's group is empty and no child is left to reap:
 * the watcher stopped first, or, where sup_keeps_watcher, the only child
 * left (child_only_watcher_left). What it reaps goes where sup_reap sends
 * it: a hook's status is sup_service_reaped's to judge next. */
bool sup_nothing_left(struct sup *s);
/* May the watcher outlive the proof that nothing is left, until the
 * release has gone? A job's, while the lease is held. */
bool sup_keeps_watcher(const struct sup *s);

/* sup_service.c: --service. The service runs from the start; each term of
 * the lease is a promote, the hold, a demote (sup_hold.c calls
 * sup_service_stop for ACT_STOP, sup_service_reaped for a hook's exit). */
void sup_serve(struct sup *s, struct outcome *out);
int sup_service_stop(struct sup *s, int64_t now);
void sup_service_reaped(struct sup *s, int64_t now);
void sup_service_killing(struct sup *s);
/* sup_reap, before it reaps PID: a hook's group whose last pin PID is
 * is forgotten, by the watcher first. */
void sup_service_unpin(struct sup *s, pid_t pid);
/* The hold loop's every pass: the term's end goes on while the demote's
 * leftovers are killed and reaped; when to look again (0: not clearing). */
int64_t sup_service_tick(struct sup *s, int64_t now);
bool sup_service_signal(struct sup *s, int sig, int64_t now);
/* --promote-timeout (sup_hold.c's loop): when the promote that runs is to
 * be killed, 0: none runs; at that time, its kill and the step-down. */
int64_t sup_service_at(const struct sup *s);
void sup_service_act(struct sup *s, int64_t now);

/* sup_health.c: --health-cmd. */
void sup_health_init(struct sup *s);
bool sup_health_ok(const struct sup *s);
int64_t sup_health_at(const struct sup *s, int64_t at);
void sup_health_tick(struct sup *s, int64_t now);
void sup_health_reaped(struct sup *s, pid_t pid, int wstatus, int64_t now);
void sup_health_act(struct sup *s, int64_t now);

/* sup_hold.c: carries out a step's actions and says its events (WHY: a
 * step-down's reason, or NULL); SIG to the command's group and every
 * descendant, how many it reached. */
void sup_apply_step(struct sup *s, const struct hold_step *st, int64_t now, const char *why);
int sup_signal_all(struct sup *s, int sig);

/* supervisor.c: the lease is ours (its states started, said); the role
 * this instance has now, told to the role's readers; --ready-file, there
 * while the command runs or the service leads. */
void sup_acquired(struct sup *s);
/* COMMAND started with the run's variables (the term, 0 for a service
 * standing by), the watcher killing it at DEADLINE; false, said, with OUT
 * filled when it could not be. */
bool sup_spawn(struct sup *s, int64_t deadline, struct outcome *out);
void sup_role(struct sup *s);
void sup_ready(struct sup *s);

/* sup_end.c, for the terms of a service: the release of a term that ended
 * in a clean demote, its history row. */
void sup_end_term(struct sup *s);

/* sup_wait.c: acquires the lease, waiting for it as the options say.
 * Returns true when held (s->ev.term, s->acquire_sent_at set); false with
 * OUT filled otherwise. */
bool sup_acquire(struct sup *s, struct outcome *out);

/* sup_hold.c: runs the loop until nothing is left of the command. */
void sup_hold(struct sup *s);

/* sup_end.c: a database error that no wait fixes (denied, untrusted, no
 * table or database): said, OUT filled; true. False for one a wait may
 * fix. */
bool sup_fatal(struct sup *s, const struct worker_result *r, struct outcome *out);
/* sup_end.c: a run that skips, the lease as INFO found it (busy, paused,
 * its slot used) after WAITED: says why in one line; OUT busy. */
void sup_skip(struct sup *s, const struct lease_info *info, enum event_skip skip, int64_t waited, struct outcome *out);

/* sup_end.c: the one end of every run, whatever ended it (not acquired,
 * not started, or the command's end): the last events, the release, the
 * run's history row. OUT as the run left it; the lost, timed-out and
 * finished outcomes are set here. */
void sup_end_run(struct sup *s, struct outcome *out);

#endif
