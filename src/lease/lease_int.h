/* What the lease's files share (which file does what: src/lease/ in
 * src/README.md): the look at a lease's rows, a missing row's insert, the
 * refusal of what the table's schema cannot hold, and the fall-back to an
 * older table's statements. */
#ifndef LEADERRUN_LEASE_INT_H
#define LEADERRUN_LEASE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "db/db.h"
#include "lease.h"

/* What one look at a lease's rows found, for a contender with N slots. */
struct look {
	/* What to read: the lease NAME for a contender of N slots, into INFO;
	 * PERIOD_US > 0: --once-per's period. */
	const char *name;
	int64_t period_us;
	unsigned n;	/* the contender's slot count */
	int only;	/* >= 0: the operator modes' look at that slot alone */
	uint64_t pick;	/* spreads contenders over the free slots */
	unsigned rows;	/* rows of the slots 0..n-1 */
	unsigned nfree; /* of them, free: expired (a pause is the lease's) */
	unsigned min_slots, max_slots;
	unsigned count; /* the count in force: slot 0's */
	bool read_only, any;
	struct lease_info *info;
	struct lease_info busy; /* the held slot that expires first */
};

/* Reads the rows of L->name for a contender with L->n slots into L->info
 * (lease_look.c). */
enum lease_outcome lease_read(struct db *db, const struct lease_sql *sql, struct look *l, struct db_err *err);

/* A row of a lease: slot SLOT of NAME, of N slots. */
struct lease_rowid {
	const char *name;
	unsigned slot, n;
};

/* Creates the row ROW if it is missing. */
enum db_status lease_insert(struct db *db, const struct lease_sql *sql, const struct lease_rowid *row,
			    struct db_err *err);

/* True, with *ST and ERR set, when the table's schema is below NEEDS for
 * WHAT. */
bool lease_refuse(const struct lease_sql *sql, int needs, const char *what, struct db_err *err);

/* One try of a call on a lease: fills R (R->status, which it returns). */
typedef enum db_status lease_try_fn(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
				    struct lease_res *r, struct db_err *err);

/* TRY, and once more when it failed on a table older than this build,
 * with the statements rendered again for it (lease_schema.c). Returns
 * R->status. */
enum db_status lease_call(struct db *db, struct lease_sql *sql, lease_try_fn *try, const struct lease_req *q,
			  struct lease_res *r, struct db_err *err);

/* An acquisition's compare-and-set: its statement and parameters. */
struct lease_cas {
	unsigned id;
	const char *text;
	struct db_value p[9];
	unsigned np;
};

/* --schedule (lease_sched.c): the compare-and-set of Q's slot into CAS,
 * from ALL, the parameters of a plain acquire and --once-per's; and why a
 * failed one keeps Q out, as INFO's look found the row. */
void lease_sched_stmt(const struct lease_sql *sql, const struct lease_req *q, const struct lease_info *info,
		      const struct db_value all[7], struct lease_cas *cas);
enum lease_busy lease_sched_why(const struct lease_req *q, const struct lease_info *info);

#endif
