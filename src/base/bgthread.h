/* A background thread and its lock, for the threads that must never delay
 * the supervisor: the database worker, the run history, the metrics file
 * and the notifications. Each keeps its own notion of work; what they
 * share is here: one mutex over the owner's state, a condition variable
 * that wakes the thread (work, or quit) and one that tells the owner it
 * went idle, waits on CLOCK_BOOTTIME deadlines, and leaving a thread stuck
 * in a call behind at exit (exiting is what must never wait).
 *
 * Signals: the thread starts with its creator's signal mask. Every one is
 * started after supervisor_block_signals (runmode.c), so the signals that
 * the supervisor reads from its signalfd stay blocked here, pending for
 * it, rather than taken by this thread (a SIGCHLD taken here is lost). */
#ifndef LEADERRUN_BGTHREAD_H
#define LEADERRUN_BGTHREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct bgthread {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake; /* to the thread: work came, or quit */
	pthread_cond_t idle; /* to the owner: a piece of work is done */
	bool started;	     /* the thread runs; only the owner's thread reads or sets it */

	/* Guarded by lock. */
	bool quit;     /* asked to end (bgthread_quit) */
	bool detached; /* left behind (bgthread_leave): the thread frees what it must */
};

/* Initialises the lock and the condition variables; no thread yet. */
void bgthread_init(struct bgthread *t);

/* Starts FN(ARG) on its own thread. Returns 0, or -1 (then no thread). */
int bgthread_start(struct bgthread *t, void *(*fn)(void *), void *arg);

void bgthread_lock(struct bgthread *t);
void bgthread_unlock(struct bgthread *t);

/* Lock held: wakes the thread (from bgthread_wait). */
void bgthread_wake(struct bgthread *t);

/* Lock held: asks the thread to end, and wakes it. */
void bgthread_quit(struct bgthread *t);

/* The thread, lock held: sleeps until woken, or until UNTIL (CLOCK_BOOTTIME
 * us; 0: no bound). Returns ETIMEDOUT once UNTIL has passed, else 0 (woken,
 * perhaps spuriously: the caller re-checks its state). */
int bgthread_wait(struct bgthread *t, int64_t until);

/* The thread, lock held: tells the owner's bgthread_wait_idle to look. */
void bgthread_idle(struct bgthread *t);

/* The owner, lock held: waits for the thread's next bgthread_idle, for a
 * short slice at most. Returns -1 once UNTIL (CLOCK_BOOTTIME us) has
 * passed, else 0: the caller re-checks whether the thread is done. */
int bgthread_wait_idle(struct bgthread *t, int64_t until);

/* The owner, lock held: leaves the thread behind, still running (detached:
 * no join); it sees t->detached when it ends. */
void bgthread_leave(struct bgthread *t);

/* The owner, lock not held: waits for the thread to end, if it was
 * started. */
void bgthread_join(struct bgthread *t);

/* Frees the lock and the condition variables; the thread is gone. */
void bgthread_destroy(struct bgthread *t);

#endif
