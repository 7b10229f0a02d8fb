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

/* A block's own statement: S->text, a statement of stmts.def (the
 * compare-and-set, or the release), with its S->np parameters S->p, for
 * slot S->slot of lease S->name. */
struct lease_block_stmt {
	const struct lease_sql *sql;
	const char *text;
	const struct db_value *p;
	unsigned np;
	const char *name;
	unsigned slot;
};

/* The compare-and-set S, then WITH's fence move and hint, committed
 * together. R as the compare-and-set's own would be: affected, and the
 * new term as insert_id. */
enum db_status lease_block_acquire(struct db *db, const struct lease_block_stmt *s, struct lease_with *with,
				   struct db_result *r, struct db_err *err);

/* Prepares on the server the block that lease_block_acquire would run
 * with the same arguments (S->p aside), unless it is already: a
 * waiter's, so that its acquisition, once woken, goes parsed. */
enum db_status lease_block_prepare_acquire(struct db *db, const struct lease_block_stmt *s,
					   const struct lease_with *with, struct db_err *err);

/* Prepares on the server the release that lease_block_release would send
 * for the same arguments once the command has ended: S->p[1] (the exit
 * status) and WITH's also_kept values left as '?'s. */
enum db_status lease_block_prepare_release(struct db *db, const struct lease_block_stmt *s,
					   const struct lease_release_with *with, struct db_err *err);

/* The release S (the exit status S->p[1]), WITH's statements before it in
 * its transaction; as the block prepared for it, when that is the one. R:
 * affected as the release's own. */
enum db_status lease_block_release(struct db *db, const struct lease_block_stmt *s, struct lease_release_with *with,
				   struct db_result *r, struct db_err *err);

#endif
