/* The wake-up hint: a named lock (GET_LOCK) that the leader holds while it
 * leads, and on which followers block instead of polling. It is only a
 * hint: it is node- and session-local, dies with a connection, and means
 * nothing behind connection-multiplexing proxies or on Galera; every
 * decision is still the row's compare-and-set.
 *
 * Next to it the leader holds a mark named for its term, so that a
 * follower can tell whether the hint's holder is the leader of the term it
 * read from the row (IS_USED_LOCK gives the holder's connection id).
 * lease_hint_name (lease.h) derives the lock's name (<= 64 bytes with a
 * term) from the database, the table and the lease (GET_LOCK names are
 * server-wide); each slot has a hint of its own.
 *
 * A struct hint is the hint's state on one session, and belongs to the
 * thread that owns that session (the database worker): what it holds,
 * whether the hint still works here, and which leader's hint woke it.
 * The waiting code sees only enum hint_wake. */
#ifndef LEADERRUN_HINT_H
#define LEADERRUN_HINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "lease/lease.h"

/* What a follower's wait on the hint came to, as the waiting code acts on
 * it. HINT_NONE: no wait (a result of another kind). */
enum hint_wake {
	HINT_NONE,
	HINT_LEADER_GONE, /* the lock came free with the leader's session: try the row at once */
	HINT_HANDED_ON,	  /* another follower handed it on; the leader lives: try the row */
	HINT_TIMED_OUT,	  /* still held at the timeout: look again */
	HINT_POLL,	  /* nothing to block on (unheld, or not the term's leader's): poll */
	HINT_KEPT,	  /* this follower keeps a dead leader's hint to the row's expiry */
	HINT_OFF,	  /* the hint does not work here (refused, Galera, several hosts): poll */
	HINT_BEHIND_GONE, /* the candidate waited behind stopped waiting (hint_wait_behind): look */
};

struct hint {
	struct db *db;
	const struct lease_sql *sql;
	bool on;	     /* still worth trying */
	bool held;	     /* this session holds the hint's lock */
	uint64_t marked;     /* the term whose mark this session holds with it; 0: none */
	unsigned slot;	     /* the slot whose hint this session holds */
	unsigned woken_slot; /* the slot whose hint the last wait blocked on */
	uint64_t woken_for;  /* the term whose leader's end woke that wait; 0: none */
	/* A named lock of this session's that outlives the hint's release
	 * (the standby's, standby.h): taken again where all are let go of;
	 * keep_lost: a new session lost it. */
	char keep[48];
	bool keep_lost;
};

/* ON: the run asked for the hint (not --no-wake-hint, not -n). */
void hint_init(struct hint *h, struct db *db, const struct lease_sql *sql, bool on);

/* The session is new (a reconnect): nothing is held on it. GALERA: the
 * server is a Galera node, where the hint cannot work. */
void hint_new_session(struct hint *h, bool galera);

/* NAME is held on this session from now on, and kept (hint_drop). */
void hint_keep(struct hint *h, const char *name);

/* The leader of TERM in SLOT takes the slot's hint and the term's mark,
 * unless it holds them; a hint of another slot is given back first. */
void hint_take(struct hint *h, unsigned slot, uint64_t term);

/* The acquisition's block took them (slot 0): WITH says how it went. */
void hint_took(struct hint *h, const struct lease_with *with, uint64_t term);

/* Blocks up to TIMEOUT_US (milliseconds, rounded up) on SLOT's hint if
 * TERM's leader holds it. A woken follower holds the hint. */
enum hint_wake hint_wait(struct hint *h, unsigned slot, uint64_t term, int64_t timeout_us);

/* Blocks up to TIMEOUT_US on LOCK, the standby lock of the waiting
 * candidate just above this one in priority (lease_info's above): only the
 * top candidate blocks on the hint, so that a hand-over wakes the one that
 * may take the lease, not each of the others in turn. HINT_BEHIND_GONE when
 * that candidate's lock came free (it took the lease and ended, or died),
 * HINT_TIMED_OUT, or HINT_POLL when the statement failed. */
enum hint_wake hint_wait_behind(struct hint *h, const char *lock, int64_t timeout_us);

/* A switch-over chose another standby: the standby lock kept is let go of
 * and taken back (a second at most), which wakes the candidate waiting
 * behind this one (hint_wait_behind) to look in its turn, until the chosen
 * one does. */
void hint_nudge(struct hint *h);

/* After an attempt of this follower that did not win (OUTCOME, the row as
 * INFO): gives the hint back, unless the leader whose end woke it still
 * holds the row, unexpired: then that leader died with the lease, and the
 * follower keeps the hint to the expiry, so that the others stay blocked
 * behind it (exactly one wakes). Returns true when kept. */
bool hint_after_attempt(struct hint *h, enum lease_outcome outcome, const struct lease_info *info);

/* Lets go of the hint and the mark (all of the session's named locks). */
void hint_drop(struct hint *h);

/* The release's block let go of them (lease_release_with's drop_hints). */
void hint_dropped(struct hint *h);

/* The SQL expression of SLOT's hint name. */
void hint_sql(char *out, size_t len, const struct lease_sql *sql, unsigned slot);

#endif
