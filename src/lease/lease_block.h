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
				   struct lease_with *with, struct db_result *r, char *err, size_t errlen);

/* The release REL (with its NP parameters P), WITH's statements before it
 * in its transaction. R: affected as the release's own. */
enum db_status lease_block_release(struct db *db, const char *rel, const struct db_value *p, unsigned np,
				   struct lease_release_with *with, struct db_result *r, char *err, size_t errlen);

#endif
