/* An acquisition and a release as one compound statement each (db_block):
 * what goes with them into their transaction (lease_with,
 * lease_release_with) without a round trip or a commit of its own. For
 * lease.c, which falls back to a statement at a time where this cannot
 * go. */
#ifndef LEADERRUN_LEASE_BLOCK_H
#define LEADERRUN_LEASE_BLOCK_H

#include "lease.h"

/* Can the statements of SQL go as blocks on DB's connection? */
bool lease_block_ok(struct db *db, const struct lease_sql *sql);

/* The compare-and-set CAS (a statement of stmts.def with NP parameters P)
 * of slot SLOT of NAME, then WITH's fence move and hint, committed
 * together. R as the compare-and-set's own would be: affected, and the
 * new term as insert_id. */
enum db_status lease_block_acquire(struct db *db, const struct lease_sql *sql, const char *cas,
				   const struct db_value *p, unsigned np, const char *name, unsigned slot,
				   struct lease_with *with, struct db_result *r, struct db_err *err);

/* Prepares on the server the block that lease_block_acquire would run
 * with the same arguments (and any P), unless it is already: a waiter's,
 * so that its acquisition, once woken, goes parsed. */
enum db_status lease_block_prepare_acquire(struct db *db, const struct lease_sql *sql, const char *cas,
					   const char *name, unsigned slot, const struct lease_with *with, struct db_err *err);

/* Prepares on the server the release that lease_block_release would send
 * for the same arguments once the command has ended: P[1] (the exit
 * status) and WITH's also_kept values left as '?'s. */
enum db_status lease_block_prepare_release(struct db *db, const char *rel, const struct db_value *p, unsigned np,
					   const struct lease_release_with *with, struct db_err *err);

/* The release REL (with its NP parameters P, the exit status P[1]), WITH's
 * statements before it in its transaction; as the block prepared for it,
 * when that is the one. R: affected as the release's own. */
enum db_status lease_block_release(struct db *db, const char *rel, const struct db_value *p, unsigned np,
				   struct lease_release_with *with, struct db_result *r, struct db_err *err);

#endif
