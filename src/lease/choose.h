/* Choosing the leader: --priority, --preempt, --release --to and --spread,
 * on the standbys' table (standby.h), whose rows say who waits, with which
 * priority, and whom an operator chose.
 *
 * No coordinator decides: every acquisition carries the candidates'
 * claims in its own compare-and-set (choose_render puts them into the
 * lease statements), so the row's one writer is still the one that
 * matched. A free lease is not this candidate's to take while
 *   - another live standby is chosen (--release --to) for the term the
 *     lease row holds, until its chosen_until and at most CHOOSE_WINDOW_S
 *     past that term's end, unless this one is the chosen one;
 *   - another live, healthy standby has a higher priority (within
 *     --priority's range), and the lease came free (expires_at, by the
 *     server's clock) less than the claim (max(2 s, 2 x
 *     --retry-interval)) ago.
 * Whoever may write the standbys' table (sql/grants.sql) can hold a free
 * lease back for no longer: no column of a row stretches a claim.
 * A standby is live while its session holds its named lock: a dead or
 * cut-off favourite stops counting when its session ends, a frozen one
 * after the claim. Priority decides nothing about safety: the
 * compare-and-set on expires_at and term does, as ever. */
#ifndef LEADERRUN_CHOOSE_H
#define LEADERRUN_CHOOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "lease.h"

/* --priority's range (options.c): a row's priority outside it claims
 * nothing. */
#define CHOOSE_PRIORITY_MAX 1000000
/* How long past the end of the term it was made in a switch-over's choice
 * counts at most: the window --release --to gives it
 * (SWITCHOVER_WINDOW_US). */
#define CHOOSE_WINDOW_S 10

/* What a switch-over names: a standby of the lease, by holder id or by
 * host name. */
struct choose_target {
	char holder[LEASE_HOLDER_MAX + 1];
	char host[256];
	bool healthy;
	int matches; /* standbys the name matched (a host may have several) */
};

/* The claims into SQL's acquire and read statements, for this run: LOCK
 * its standby lock's name (standby_lock_name), PRIORITY, CLAIM_US. */
void choose_render(struct lease_sql *sql, const char *lock, int priority, int64_t claim_us);

/* No claims (no standbys' table of this build's, Galera): the statements
 * of before. */
void choose_off(struct lease_sql *sql);

/* Where a choice is made: the server, the lease's tables, the lease. */
struct choose_at {
	struct db *db;
	const struct lease_sql *sql;
	const char *lease;
};

/* A preemption: this candidate's standby LOCK, its PRIORITY, and the term
 * TERM of HOLDER that it would end. */
struct choose_preemption {
	const char *lock, *holder;
	uint64_t term;
	int priority;
};

/* --preempt: marks this candidate's row as preempting P->term, then
 * revokes it if the holder's priority (0 when it keeps no row) is below
 * P->priority. *REVOKED: it was. */
enum db_status choose_preempt(const struct choose_at *at, const struct choose_preemption *p, bool *revoked,
			      struct db_err *err);

/* A revoked holder of TERM: why, and for whom (OUT). */
enum db_status choose_why_revoked(const struct choose_at *at, uint64_t term, struct lease_revoker *out,
				  struct db_err *err);

/* --release --to: the live standby of the lease named NAME (holder first,
 * then host), not the lease's holder. */
enum db_status choose_find(const struct choose_at *at, const char *name, struct choose_target *t, struct db_err *err);

/* --release --to: chooses HOLDER until the lease's expiry plus WINDOW_US;
 * *CHOSEN false when its row is gone (it stopped waiting). */
enum db_status choose_set(const struct choose_at *at, const char *holder, int64_t window_us, bool *chosen,
			  struct db_err *err);

/* --spread: is this candidate's host (HOLDER's, spread.h) the one to take
 * the lease now? *MINE true also when nothing says otherwise. */
enum db_status choose_spread(const struct choose_at *at, const char *holder, bool *mine, struct db_err *err);

#endif
